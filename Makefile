# twag — one non-recursive GNU Makefile.
#
#   make            build libtwag.a, the twag CLI and the tests
#   make test       install missing Debian packages, build, run every test
#   make run        the main job: twagd on 127.0.0.1:1812 with a demo store
#   make demo       CLI help and a worked Milenage example
#   make bench      the benchmark
#   make SANITIZER=address|undefined test
#   make fuzz FUZZ_TIME=S   every libFuzzer target S seconds (clang; default 10)
#   make fuzz-cov   branch coverage of each decoder by its corpus: tests/fuzz/COVERAGE.md
#   make install [PREFIX=/usr/local] [DESTDIR=...]; make uninstall (below)
#
# Sanitizer builds go to their own directory so objects never mix.

SANITIZER ?=
BUILD := build$(if $(SANITIZER),-$(SANITIZER))

CC ?= cc
OPT ?= -O2
WARN := -Wall -Wextra -Wshadow -Wvla -Werror
HARDEN := -fstack-protector-strong -D_FORTIFY_SOURCE=2
CPPFLAGS := -Iinclude -D_DEFAULT_SOURCE -MMD -MP
CFLAGS := -std=c11 $(OPT) -g $(WARN) $(HARDEN) -fPIC
# full RELRO, symbols bound at load: no writable GOT, and no lazy-binding
# resolver running on the packet path, which saves every vector register
# (the lanes' keys among them) to the caller's stack
LDFLAGS := -Wl,-z,relro,-z,now
LDLIBS := -lsqlite3 -lssl -lcrypto -lpthread

ifneq ($(SANITIZER),)
CFLAGS += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZER)
endif

# libosmocore is an independent oracle for tests and a reference for the
# benchmark; scripts/deps.sh installs it before tests are built.
OSMO_CFLAGS := $(shell pkg-config --cflags libosmogsm 2>/dev/null)
OSMO_LIBS := $(shell pkg-config --libs libosmogsm libosmocore 2>/dev/null)
ifneq ($(OSMO_LIBS),)
OSMO_CFLAGS += -DTW_HAVE_OSMO=1
endif

LIB_SRC := $(sort $(wildcard src/*/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB := $(BUILD)/libtwag.a

TWAG_SRC := $(sort $(wildcard tools/twag/*.c))
TWAG_OBJ := $(TWAG_SRC:%.c=$(BUILD)/%.o)
TWAG := $(BUILD)/twag

TWAGD_SRC := $(sort $(wildcard tools/twagd/*.c))
TWAGD_OBJ := $(TWAGD_SRC:%.c=$(BUILD)/%.o)
TWAGD := $(BUILD)/twagd

LOAD_SRC := $(sort $(wildcard tools/load/*.c))
LOAD_OBJ := $(LOAD_SRC:%.c=$(BUILD)/%.o)
LOAD := $(BUILD)/twag-load

TUNNEL_SRC := $(sort $(wildcard tools/tunnel/*.c))
TUNNEL_OBJ := $(TUNNEL_SRC:%.c=$(BUILD)/%.o)
TUNNEL := $(BUILD)/twag-tunnel

BENCH_SRC := $(sort $(wildcard tools/bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
BENCH := $(BUILD)/twag-bench

HARNESS_OBJ := $(BUILD)/tests/harness/tw_test.o $(BUILD)/tests/harness/fault_vfs.o \
	$(BUILD)/tests/harness/srv_flow.o
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LEVELS := $(BUILD)/tests/cpu_levels
CT_CHECK := $(BUILD)/tests/ct_check
# Fuzz targets: each tests/fuzz/fuzz_<name>.c builds as a plain reader of
# its committed corpus (tests/fuzz/corpus/<name>/) in every build, and as a
# libFuzzer program with `make fuzz CC=clang`.
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_BIN := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)
# make fuzz FUZZ_TIME=S: each libFuzzer target runs S seconds (default 10);
# FUZZ_SECONDS is the older name, and FUZZ_TIME wins when both are given.
FUZZ_SECONDS ?= 10
FUZZ_TIME ?= $(FUZZ_SECONDS)
FUZZ_DIR ?= build-fuzz

# Naming the objects in an explicit rule keeps make from treating them as
# intermediate (deleted after linking, and then not rebuilt when missing).
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o) $(HARNESS_OBJ) $(BUILD)/tests/harness/cpu_levels.o \
	$(FUZZ_SRC:%.c=$(BUILD)/%.o) $(BUILD)/tests/fuzz/driver.o $(BUILD)/tests/ct/ct_check.o

.PHONY: all test test-run run demo bench bench-gateway bench-tunnel deps clean objs fuzz fuzz-cov
all: $(LIB) $(TWAG) $(if $(TWAGD_SRC),$(TWAGD)) $(if $(LOAD_SRC),$(LOAD)) $(TUNNEL) $(BENCH) $(TEST_BIN) $(LEVELS) $(FUZZ_BIN) $(CT_CHECK)
objs: $(TEST_OBJ)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%.o: CPPFLAGS += -Itests/harness $(OSMO_CFLAGS) -DTW_VEC_DIR='"$(CURDIR)/tests/vectors"' -DTW_BUILD_DIR='"$(CURDIR)/$(BUILD)"'
$(BUILD)/tools/bench/%.o: CPPFLAGS += $(OSMO_CFLAGS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(TWAG): $(TWAG_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TWAG_OBJ) $(LIB) $(LDLIBS)

$(TWAGD): $(TWAGD_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TWAGD_OBJ) $(LIB) $(LDLIBS)

$(LOAD): $(LOAD_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(LOAD_OBJ) $(LIB) $(LDLIBS) -lm

$(TUNNEL): $(TUNNEL_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TUNNEL_OBJ) $(LIB) $(LDLIBS)

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(LIB) $(OSMO_LIBS) $(LDLIBS) -lm

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(HARNESS_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(OSMO_LIBS) $(LDLIBS)

# test_faults makes the n-th allocation of the library fail by wrapping the
# allocator (SQLite's and OpenSSL's are set at run time)
$(BUILD)/tests/test_faults: override LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=free

# test_udp_gso fills a send buffer by wrapping sendmmsg (loopback frees a
# datagram's buffer space at once)
$(BUILD)/tests/test_udp_gso: override LDFLAGS += -Wl,--wrap=sendmmsg

$(BUILD)/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/driver.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS)

# The libFuzzer program of a target (what `make fuzz` builds in FUZZ_DIR).
$(BUILD)/lf_%: $(BUILD)/tests/fuzz/fuzz_%.o $(LIB)
	$(CC) -fsanitize=fuzzer $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(LDLIBS)

# Targets of the CLI's parsers link the CLI objects that hold them.
$(BUILD)/fuzz/fuzz_hex $(BUILD)/lf_hex: $(BUILD)/tools/twag/cli_text.o
$(BUILD)/fuzz/fuzz_csv $(BUILD)/lf_csv: $(BUILD)/tools/twag/csv.o $(BUILD)/tools/twag/sub_text.o
# twag-tunnel's segmentation and joining
$(BUILD)/fuzz/fuzz_tunseg $(BUILD)/lf_tunseg: $(BUILD)/tools/tunnel/seg.o

# Inputs longer than 512 octets, for targets whose limits lie beyond it.
# config: docs/twagd.conf.example whole (5 KB), a line longer than twagd.conf
# lines may be (2047 characters);
# csv: a line of more than CSV_LINE_MAX (1024) characters, more records
# than the first allocation (64)
FUZZ_MAXLEN := config=8192 csv=4096

# libFuzzer builds (clang): own directory, ASan+UBSan, each run for
# FUZZ_TIME s over a scratch copy of its seed corpus (new findings are not
# committed blindly).
fuzz:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_DIR) CC=clang \
		CFLAGS='-std=c11 -O1 -g $(WARN) -fPIC -fsanitize=fuzzer-no-link,address,undefined' \
		LDFLAGS='-fsanitize=address,undefined' $(FUZZ_NAMES:%=$(FUZZ_DIR)/lf_%)
	@set -e; for n in $(FUZZ_NAMES); do \
		ml=512; for p in $(FUZZ_MAXLEN); do [ "$${p%%=*}" != $$n ] || ml=$${p#*=}; done; \
		rm -rf $(FUZZ_DIR)/corpus_$$n; cp -r tests/fuzz/corpus/$$n $(FUZZ_DIR)/corpus_$$n; \
		echo "fuzz $$n: $(FUZZ_TIME) s"; \
		$(FUZZ_DIR)/lf_$$n -max_total_time=$(FUZZ_TIME) -max_len=$$ml \
			-print_final_stats=0 $(FUZZ_DIR)/corpus_$$n 2>$(FUZZ_DIR)/lf_$$n.log \
			|| { tail -40 $(FUZZ_DIR)/lf_$$n.log; exit 1; }; \
		grep -E '^#[0-9]+.*DONE' $(FUZZ_DIR)/lf_$$n.log | tail -1; \
	done

# Branch coverage of each decoder by its committed corpus: the plain
# readers built with clang's source-based coverage (no sanitizers) in
# COV_DIR, run and reported by tests/fuzz/coverage.sh into
# tests/fuzz/COVERAGE.md (needs llvm-profdata-14 and llvm-cov-14).
COV_DIR ?= build-cov
fuzz-cov:
	@$(MAKE) --no-print-directory BUILD=$(COV_DIR) CC=clang \
		CFLAGS='-std=c11 -O1 -g $(WARN) -fPIC -fprofile-instr-generate -fcoverage-mapping' \
		LDFLAGS='-fprofile-instr-generate' $(FUZZ_NAMES:%=$(COV_DIR)/fuzz/fuzz_%) \
		$(COV_DIR)/tests/cpu_levels
	@tests/fuzz/coverage.sh $(COV_DIR) tests/fuzz/COVERAGE.md

$(CT_CHECK): $(BUILD)/tests/ct/ct_check.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LEVELS): $(BUILD)/tests/harness/cpu_levels.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The test command CI runs: packages first (idempotent), then a fresh make
# so pkg-config sees what was just installed.
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory test-run

test-run: all
	@TWAG_SANITIZER=$(SANITIZER) tests/run.sh $(BUILD)

run:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory $(TWAG) $(TWAGD)
	@scripts/run-gateway.sh $(BUILD)

# The worked CLI example (help text and TS 35.208 set 1 through the CLI).
demo:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory $(TWAG)
	@scripts/demo.sh $(BUILD)

# twagd vs FreeRADIUS (EAP-SIM, radeapclient) and twagd EAP-AKA' under
# twag-load: bench/GATEWAY.md.
bench-gateway:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(TWAG) $(TWAGD) $(LOAD)
	@bench/gateway.sh $(BUILD)

# the tunnel sizing study (bench/TUNNEL.md); as root. `all` brings
# twag-tunnel where the tree has it: the script skips the rows of a missing one
bench-tunnel:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory all
	@bench/tunnel.sh $(BUILD) $(BENCH_TUNNEL_ARGS)

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(BENCH)
	@$(BENCH) $(BENCH_ARGS)

deps:
	@scripts/deps.sh test

# ---- make install / uninstall ------------------------------------------------
# The version comes from one place, the VERSION file (MAJOR.MINOR.PATCH): the
# library's tw_version() (so `twagd --version`, `twag --version`), the shared
# library's SONAME (libtwag.so.MAJOR) and twag.pc.
#
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]
#
# twagd goes to sbin, the other programs to bin: FHS 3.0 §4.10 keeps in sbin
# what only the administrator runs (daemons among them: sshd, hostapd,
# freeradius), while twag (every algorithm; provisioning), twag-load and
# twag-bench are for any user. Configuration: $(SYSCONFDIR)/twag/twagd.conf,
# installed from docs/twagd.conf.example only when none is there (it listens
# and trusts 127.0.0.1 only, so nothing outside the host reaches it until it
# is edited); the example itself also goes to $(DOCDIR).
TWAG_VERSION := $(shell cat VERSION)
TWAG_MAJOR := $(firstword $(subst ., ,$(TWAG_VERSION)))
SHLIB := $(BUILD)/libtwag.so.$(TWAG_VERSION)

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/twag
# /etc for PREFIX=/usr (a distribution's layout), else PREFIX/etc (GNU's)
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
# systemd reads units and sysusers.d from /usr/local/lib too
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
MAN1 := docs/man/twag.1 docs/man/twag-load.1 docs/man/twag-bench.1
MAN8 := docs/man/twagd.8 docs/man/twag-tunnel.8

$(BUILD)/src/common/version.o: CPPFLAGS += -DTW_VERSION='"$(TWAG_VERSION)"'
$(BUILD)/src/common/version.o: VERSION

# The shared library from the same -fPIC objects as libtwag.a.
$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libtwag.so.$(TWAG_MAJOR) $(LDFLAGS) -o $@ $^ $(LDLIBS)

all: $(SHLIB)

.PHONY: install uninstall
install: $(TWAG) $(TWAGD) $(LOAD) $(TUNNEL) $(BENCH) $(LIB) $(SHLIB)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/twag $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/twag
	install -m 0755 $(TWAG) $(LOAD) $(BENCH) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(TWAGD) $(TUNNEL) $(DESTDIR)$(SBINDIR)/
	install -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libtwag.so.$(TWAG_VERSION) $(DESTDIR)$(LIBDIR)/libtwag.so.$(TWAG_MAJOR)
	ln -sf libtwag.so.$(TWAG_MAJOR) $(DESTDIR)$(LIBDIR)/libtwag.so
	install -m 0644 include/twag/*.h $(DESTDIR)$(INCLUDEDIR)/twag/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(TWAG_VERSION)|g' \
		dist/twag.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/twag.pc
	for m in $(MAN1) $(MAN8); do \
		s=$${m##*.}; sed 's|@VERSION@|$(TWAG_VERSION)|g' $$m >$(DESTDIR)$(MANDIR)/man$$s/$${m##*/} && \
		chmod 0644 $(DESTDIR)$(MANDIR)/man$$s/$${m##*/} || exit 1; \
	done
	install -m 0644 docs/twagd.conf.example docs/twagd.md docs/twag-load.md $(DESTDIR)$(DOCDIR)/
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		dist/twagd.service.in >$(DESTDIR)$(UNITDIR)/twagd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/twagd.service $(DESTDIR)$(PKGCONFIGDIR)/twag.pc
	install -m 0644 dist/twag.sysusers $(DESTDIR)$(SYSUSERSDIR)/twag.conf
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/twag/twagd.conf ]; then \
		echo "install: kept the existing $(DESTDIR)$(SYSCONFDIR)/twag/twagd.conf"; \
	else \
		install -m 0640 docs/twagd.conf.example $(DESTDIR)$(SYSCONFDIR)/twag/twagd.conf; \
	fi
	@scripts/post-install.sh "$(DESTDIR)" "$(SYSUSERSDIR)" "$(SYSCONFDIR)" "$(LIBDIR)"

# Removes what install put there, except the configuration (edited by the
# operator) and the store (/var/lib/twag).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/twag $(DESTDIR)$(BINDIR)/twag-load $(DESTDIR)$(BINDIR)/twag-bench \
		$(DESTDIR)$(SBINDIR)/twagd $(DESTDIR)$(SBINDIR)/twag-tunnel $(DESTDIR)$(LIBDIR)/libtwag.a \
		$(DESTDIR)$(LIBDIR)/libtwag.so $(DESTDIR)$(LIBDIR)/libtwag.so.$(TWAG_MAJOR) \
		$(DESTDIR)$(LIBDIR)/libtwag.so.$(TWAG_VERSION) $(DESTDIR)$(PKGCONFIGDIR)/twag.pc \
		$(MAN1:docs/man/%=$(DESTDIR)$(MANDIR)/man1/%) $(MAN8:docs/man/%=$(DESTDIR)$(MANDIR)/man8/%) \
		$(DESTDIR)$(UNITDIR)/twagd.service $(DESTDIR)$(SYSUSERSDIR)/twag.conf \
		$(DESTDIR)$(DOCDIR)/twagd.conf.example $(DESTDIR)$(DOCDIR)/twagd.md \
		$(DESTDIR)$(DOCDIR)/twag-load.md
	rm -rf $(DESTDIR)$(INCLUDEDIR)/twag
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf build build-*

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
