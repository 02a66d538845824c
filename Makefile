# twag — one non-recursive GNU Makefile.
#
#   make            build libtwag.a, the twag CLI and the tests
#   make test       install missing Debian packages, build, run every test
#   make run        the main job (for now: CLI help and a worked example)
#   make bench      the benchmark
#   make SANITIZER=address|undefined test
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
LDFLAGS :=
LDLIBS := -lcrypto -lpthread

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

BENCH_SRC := $(sort $(wildcard tools/bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
BENCH := $(BUILD)/twag-bench

HARNESS_OBJ := $(BUILD)/tests/harness/tw_test.o
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
LEVELS := $(BUILD)/tests/cpu_levels

.SECONDARY:
.PHONY: all test test-run run bench deps clean check-build
all: $(LIB) $(TWAG) $(TEST_BIN) $(LEVELS)

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

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(LIB) $(OSMO_LIBS) $(LDLIBS) -lm

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(HARNESS_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(OSMO_LIBS) $(LDLIBS)

$(LEVELS): $(BUILD)/tests/harness/cpu_levels.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The test command CI runs: packages first (idempotent), then a fresh make
# so pkg-config sees what was just installed.
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory test-run

test-run: all
	@tests/run.sh $(BUILD)

run:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory $(TWAG)
	@scripts/demo.sh $(BUILD)

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(BENCH)
	@$(BENCH)

deps:
	@scripts/deps.sh test

clean:
	rm -rf build build-*

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
