/* twagd configuration: flags, the config file and their precedence, bad
 * input naming the option or FILE:LINE; the client table (IPv4/IPv6
 * prefixes, longest match, IPv4-mapped sources); listen addresses; the
 * Prometheus text; log value quoting. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tw_test.h"

#include "twag/server.h"

static char tmpdir[] = "/tmp/twag-test-config-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

/* argv from a space-separated string (no quoting needed here). */
static int load(struct tw_srv_config *c, const char *args, char *err, size_t err_len)
{
	char buf[2048], *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", args);
	argv[argc++] = (char *)"twagd";
	for (char *t = strtok(buf, " "); t != NULL && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	tw_srv_config_defaults(c);
	return tw_srv_config_load(c, argc, argv, err, err_len);
}

static void test_flags(void)
{
	struct tw_srv_config c;
	char err[512];

	CHECK_OK(load(&c, "--listen 127.0.0.1:1812 --store sqlite:/tmp/x.db "
			  "--client 127.0.0.1=testing123 --network-name WLAN --threads 3 "
			  "--metrics 127.0.0.1:9812 --kek-file /k --max-sessions 1000 "
			  "--session-timeout=30 --no-fast-reauth --id-policy any "
			  "--methods sim,aka-prime --sim-fullauth-id-req --realm example.org",
		      err, sizeof(err)));
	CHECK(strcmp(c.store, "/tmp/x.db") == 0);
	CHECK(strcmp(c.listen, "127.0.0.1:1812") == 0);
	CHECK(strcmp(c.network_name, "WLAN") == 0);
	CHECK(c.threads == 3 && c.max_sessions == 1000 && c.session_timeout == 30);
	CHECK(!c.fast_reauth && c.pseudonyms && c.result_ind && c.sim_fullauth_id_req);
	CHECK(c.id_policy == TW_EAP_ID_ALWAYS_ANY);
	CHECK(c.n_methods == 2 && c.methods[0] == TW_SRV_M_SIM &&
	      c.methods[1] == TW_SRV_M_AKA_PRIME);
	CHECK(strcmp(c.realm, "example.org") == 0 && strcmp(c.kek_file, "/k") == 0);
	CHECK(c.clients.n == 1 && c.clients.v[0].key.len == 10 &&
	      memcmp(c.clients.v[0].key.secret, "testing123", 10) == 0);
	CHECK(c.reply_session_timeout == 3600 && c.reauth_limit == 16); /* defaults */
	CHECK(c.rx_coalesce_us == 1000 && c.udp_gso && c.udp_gro && !c.spread_by_id);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --no-udp-gso", err, sizeof(err)));
	CHECK(!c.udp_gso && c.udp_gro);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --no-udp-gro", err, sizeof(err)));
	CHECK(c.udp_gso && !c.udp_gro);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --spread-by-identifier", err,
		      sizeof(err)));
	CHECK(c.spread_by_id && c.udp_gro && !c.volatile_ids);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --volatile-identities", err,
		      sizeof(err)));
	CHECK(c.volatile_ids && !c.spread_by_id);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --rx-coalesce-us 0", err,
		      sizeof(err)));
	CHECK(c.rx_coalesce_us == 0);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --rx-coalesce-us=10000", err,
		      sizeof(err)));
	CHECK(c.rx_coalesce_us == 10000);
	tw_srv_config_free(&c);

	/* the store's knobs: 0 (its defaults) unless given */
	CHECK(c.sqn_block == 0 && c.resync_max == 0 && c.resync_window == 0 &&
	      c.resync_bad_max == 0 && c.reauth_ttl == 0 && c.identity_cache == 0 &&
	      c.identity_flush_ms == 0 && c.subscriber_cache == 0 && c.pseudonym_ttl == 0);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s --sqn-block 32 --resync-max 5 "
			  "--resync-window=120 --resync-bad-max 20 --reauth-ttl 3600 "
			  "--identity-cache 1024 --identity-flush-ms 250 --subscriber-cache 100000 "
			  "--pseudonym-ttl 7200",
		      err, sizeof(err)));
	CHECK(c.sqn_block == 32 && c.resync_max == 5 && c.resync_window == 120 &&
	      c.resync_bad_max == 20 && c.reauth_ttl == 3600 && c.identity_cache == 1024 &&
	      c.identity_flush_ms == 250 && c.subscriber_cache == 100000 &&
	      c.pseudonym_ttl == 7200);
	tw_srv_config_free(&c);
	CHECK_OK(load(&c, "--store sqlite:/x --client 127.0.0.1=s", err, sizeof(err)));
	tw_srv_config_free(&c);

	/* a store path without the scheme is a path */
	CHECK_OK(load(&c, "--store /var/lib/twag.db --client 10.0.0.0/8=s", err, sizeof(err)));
	CHECK(strcmp(c.store, "/var/lib/twag.db") == 0);
	tw_srv_config_free(&c);

	/* bad input: TW_ERR_INVAL and one line naming the option */
	static const struct {
		const char *args, *needle;
	} bad[] = {
		{ "--store sqlite:/x --client 127.0.0.1=s --threads 0", "--threads" },
		{ "--store sqlite:/x --client 127.0.0.1=s --threads 65", "--threads" },
		{ "--store sqlite:/x --client 127.0.0.1=s --threads 2x", "--threads" },
		{ "--store sqlite:/x --client 127.0.0.1", "--client" },
		{ "--store sqlite:/x --client 300.0.0.1=s", "--client" },
		{ "--store sqlite:/x --client 10.0.0.0/33=s", "--client" },
		{ "--store sqlite:/x --client ::1/129=s", "--client" },
		{ "--store sqlite:/x --client 127.0.0.1=", "--client" },
		{ "--store sqlite:/x", "--client" },
		{ "--client 127.0.0.1=s", "--store" },
		{ "--store mysql://h/db --client 127.0.0.1=s", "--store" },
		{ "--store sqlite:/x --client 127.0.0.1=s --listen 127.0.0.1:99999", "--listen" },
		{ "--store sqlite:/x --client 127.0.0.1=s --listen nohost:1", "--listen" },
		{ "--store sqlite:/x --client 127.0.0.1=s --methods aka,aka", "--methods" },
		{ "--store sqlite:/x --client 127.0.0.1=s --methods peap", "--methods" },
		{ "--store sqlite:/x --client 127.0.0.1=s --methods aka,", "--methods" },
		{ "--store sqlite:/x --client 127.0.0.1=s --id-policy maybe", "--id-policy" },
		{ "--store sqlite:/x --client 127.0.0.1=s --log-level loud", "--log-level" },
		{ "--store sqlite:/x --client 127.0.0.1=s --frobnicate", "--frobnicate" },
		{ "--store sqlite:/x --client 127.0.0.1=s --no-pseudonyms=yes", "--no-pseudonyms" },
		{ "--store sqlite:/x --client 127.0.0.1=s --realm", "--realm" },
		{ "--store sqlite:/x --client 127.0.0.1=s extra", "unexpected argument 5" },
		{ "--store sqlite:/x --client 127.0.0.1=s --max-sessions 15", "--max-sessions" },
		{ "--store sqlite:/x --client 127.0.0.1=s --reauth-limit 65535", "--reauth-limit" },
		{ "--store sqlite:/x --client 127.0.0.1=s --config /nonexistent/f", "--config" },
		{ "--store sqlite:/x --client 127.0.0.1=s --sqn-block 0", "--sqn-block" },
		{ "--store sqlite:/x --client 127.0.0.1=s --resync-bad-max 1001", "--resync-bad-max" },
		{ "--store sqlite:/x --client 127.0.0.1=s --reauth-ttl 0", "--reauth-ttl" },
		{ "--store sqlite:/x --client 127.0.0.1=s --pseudonym-ttl 59", "--pseudonym-ttl" },
		{ "--store sqlite:/x --client 127.0.0.1=s --pseudonym-ttl 31536001", "--pseudonym-ttl" },
		{ "--store sqlite:/x --client 127.0.0.1=s --identity-cache 15", "--identity-cache" },
		{ "--store sqlite:/x --client 127.0.0.1=s --identity-flush-ms 99", "--identity-flush-ms" },
		{ "--store sqlite:/x --client 127.0.0.1=s --identity-flush-ms 60001",
		  "--identity-flush-ms" },
		{ "--store sqlite:/x --client 127.0.0.1=s --identity-flush-ms 1s",
		  "--identity-flush-ms" },
		{ "--store sqlite:/x --client 127.0.0.1=s --subscriber-cache 15", "--subscriber-cache" },
		{ "--store sqlite:/x --client 127.0.0.1=s --subscriber-cache 67108865",
		  "--subscriber-cache" },
		{ "--store sqlite:/x --client 127.0.0.1=s --rx-coalesce-us 10001", "--rx-coalesce-us" },
		{ "--store sqlite:/x --client 127.0.0.1=s --rx-coalesce-us -1", "--rx-coalesce-us" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (!CHECK_ERR(load(&c, bad[i].args, err, sizeof(err)), TW_ERR_INVAL) ||
		    !CHECK(strstr(err, bad[i].needle) != NULL && strchr(err, '\n') == NULL))
			tw_note("case %zu: '%s' -> '%s'", i, bad[i].args, err);
		tw_srv_config_free(&c);
	}
	/* a secret of 129 octets */
	{
		char args[400];

		memset(err, 0, sizeof(err));
		snprintf(args, sizeof(args), "--store /x --client 127.0.0.1=%0129d", 0);
		CHECK_ERR(load(&c, args, err, sizeof(err)), TW_ERR_INVAL);
		tw_srv_config_free(&c);
	}
	CHECK_OK(load(&c, "--help", err, sizeof(err)));
	CHECK(c.help);
	tw_srv_config_free(&c);
}

static void test_file(void)
{
	struct tw_srv_config c;
	struct tw_srv_clients re;
	char err[512], args[512];
	const char *p;

	p = write_file("ok.conf",
		       "# twagd test config\n"
		       "\n"
		       "listen = 127.0.0.1:11812\n"
		       "store = sqlite:/tmp/file.db\n"
		       "  network-name =  WLAN  \n"
		       "client = 127.0.0.1 file-secret\n"
		       "client = 10.1.0.0/16 secret with spaces\n"
		       "client = ::1=v6secret\n"
		       "threads = 4\n"
		       "no-pseudonyms\n"
		       "no-result-ind = no\n"
		       "no-udp-gso = yes\n"
		       "log-level = debug\n"
		       "methods = aka,sim\n");
	CHECK(p != NULL);
	snprintf(args, sizeof(args), "--config %s --threads 2 --client 127.0.0.1=cmdline", p);
	CHECK_OK(load(&c, args, err, sizeof(err)));
	/* the command line overrides the file */
	CHECK(c.threads == 2);
	CHECK(strcmp(c.listen, "127.0.0.1:11812") == 0 && strcmp(c.store, "/tmp/file.db") == 0);
	CHECK(strcmp(c.network_name, "WLAN") == 0);
	CHECK(!c.pseudonyms && c.result_ind && c.log_level == TW_LOG_DEBUG && !c.udp_gso);
	CHECK(c.n_methods == 2 && c.methods[0] == TW_SRV_M_AKA);
	CHECK(c.clients.n == 3);
	{
		struct tw_srv_addr a;
		const struct tw_srv_client *cl;
		unsigned pf;

		CHECK_OK(tw_srv_addr_parse(&a, &pf, "127.0.0.1"));
		cl = tw_srv_clients_find(&c.clients, &a);
		CHECK(cl != NULL && cl->from_cmdline && cl->key.len == 7 &&
		      memcmp(cl->key.secret, "cmdline", 7) == 0);
		CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.1.200.3"));
		cl = tw_srv_clients_find(&c.clients, &a);
		CHECK(cl != NULL && cl->key.len == 18 &&
		      memcmp(cl->key.secret, "secret with spaces", 18) == 0);
		CHECK_OK(tw_srv_addr_parse(&a, &pf, "::1"));
		cl = tw_srv_clients_find(&c.clients, &a);
		CHECK(cl != NULL && cl->key.len == 8);
	}

	/* SIGHUP: the file's clients re-read, the command line's kept */
	p = write_file("ok.conf",
		       "store = sqlite:/tmp/file.db\n"
		       "client = 192.0.2.0/24 new-secret\n");
	CHECK_OK(tw_srv_config_reload_clients(&c, &re, err, sizeof(err)));
	CHECK(re.n == 2);
	{
		struct tw_srv_addr a;
		unsigned pf;

		CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.1.200.3"));
		CHECK(tw_srv_clients_find(&re, &a) == NULL);
		CHECK_OK(tw_srv_addr_parse(&a, &pf, "192.0.2.77"));
		CHECK(tw_srv_clients_find(&re, &a) != NULL);
		CHECK_OK(tw_srv_addr_parse(&a, &pf, "127.0.0.1"));
		CHECK(tw_srv_clients_find(&re, &a) != NULL);
	}
	tw_srv_clients_free(&re);
	/* a broken file on reload: an error, nothing returned */
	p = write_file("ok.conf", "client = 192.0.2.0/24\n");
	err[0] = 0;
	CHECK_ERR(tw_srv_config_reload_clients(&c, &re, err, sizeof(err)), TW_ERR_INVAL);
	CHECK(strstr(err, "ok.conf:1") != NULL);
	tw_srv_config_free(&c);

	/* bad lines: FILE:LINE and what is wrong */
	static const struct {
		const char *text, *needle;
	} bad[] = {
		{ "store = /x\nclient = 127.0.0.1 s\nthreads = many\n", "bad.conf:3" },
		{ "store = /x\nfoo = bar\n", "bad.conf:2: unknown key 'foo'" },
		{ "store = /x\nlisten\n", "bad.conf:2: listen needs a value" },
		{ "store = /x\nclient = 127.0.0.1\n", "bad.conf:2" },
		{ "store = /x\nclient = 1.2.3.4.5 s\n", "bad.conf:2" },
		{ "store = /x\nno-pseudonyms = perhaps\n", "bad.conf:2" },
		{ "config = /other\n", "bad.conf:1: unknown key 'config'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = write_file("bad.conf", bad[i].text);
		snprintf(args, sizeof(args), "--config %s", p);
		err[0] = 0;
		if (!CHECK_ERR(load(&c, args, err, sizeof(err)), TW_ERR_INVAL) ||
		    !CHECK(strstr(err, bad[i].needle) != NULL))
			tw_note("file case %zu -> '%s'", i, err);
		tw_srv_config_free(&c);
	}
	/* mistakes around a secret never put the secret into the message
	 * (SIGHUP writes a reload error into the log): a client line
	 * without '=', the address and secret swapped, a stray word on the
	 * command line */
	{
		static const char *const leaky[] = {
			"store = /x\nclient 10.0.0.1 Sup3rSecretValue\n",
			"store = /x\nclient\tSup3rSecretValue\n",
			"store = /x\nclient = Sup3rSecretValue 10.0.0.1\n",
			"store = /x\nclient = Sup3rSecretValue/8=x\n",
		};

		for (size_t i = 0; i < sizeof(leaky) / sizeof(leaky[0]); i++) {
			p = write_file("bad.conf", leaky[i]);
			snprintf(args, sizeof(args), "--config %s", p);
			err[0] = 0;
			CHECK_ERR(load(&c, args, err, sizeof(err)), TW_ERR_INVAL);
			CHECK(strstr(err, "bad.conf:2") != NULL);
			if (!CHECK(strstr(err, "Sup3r") == NULL))
				tw_note("leaky case %zu -> '%s'", i, err);
			tw_srv_config_free(&c);
			/* and through a SIGHUP reload */
			memset(&c, 0, sizeof(c));
			snprintf(c.config_file, sizeof(c.config_file), "%s", p);
			err[0] = 0;
			CHECK_ERR(tw_srv_config_reload_clients(&c, &re, err, sizeof(err)),
				  TW_ERR_INVAL);
			CHECK(strstr(err, "Sup3r") == NULL);
		}
		err[0] = 0;
		CHECK_ERR(load(&c, "--store /x --client=10.0.0.1 Sup3rSecretValue", err,
			       sizeof(err)), TW_ERR_INVAL);
		CHECK(strstr(err, "Sup3r") == NULL && strstr(err, "unexpected argument") != NULL);
		tw_srv_config_free(&c);
		/* an address-looking mistake is still echoed to help */
		p = write_file("bad.conf", "store = /x\nclient = 10.0.0.300 s\n");
		snprintf(args, sizeof(args), "--config %s", p);
		CHECK_ERR(load(&c, args, err, sizeof(err)), TW_ERR_INVAL);
		CHECK(strstr(err, "10.0.0.300") != NULL);
		tw_srv_config_free(&c);
	}
	/* an over-long line */
	{
		static char longline[4000];

		memset(longline, 'a', sizeof(longline) - 2);
		longline[sizeof(longline) - 2] = '\n';
		p = write_file("bad.conf", longline);
		snprintf(args, sizeof(args), "--config %s", p);
		CHECK_ERR(load(&c, args, err, sizeof(err)), TW_ERR_INVAL);
		CHECK(strstr(err, "too long") != NULL);
		tw_srv_config_free(&c);
	}
}

/* The first bits of a and b agree (the definition of a prefix match). */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	for (unsigned i = 0; i < bits; i++)
		if (((a[i / 8] >> (7 - i % 8)) & 1) != ((b[i / 8] >> (7 - i % 8)) & 1))
			return false;
	return true;
}

/* Prefix matching at every prefix length, IPv4 and IPv6, against the
 * bit-by-bit definition: one entry, random addresses near it. */
static void test_client_prefixes(void)
{
	for (unsigned fam = 4; fam <= 6; fam += 2) {
		unsigned max = fam == 4 ? 32 : 128, len = fam == 4 ? 4 : 16;

		for (unsigned pf = 0; pf <= max; pf++) {
			struct tw_srv_clients t;
			struct tw_srv_addr net, a;
			char spec[80], text[64], err[128];
			unsigned got_pf;

			memset(&t, 0, sizeof(t));
			memset(&net, 0, sizeof(net));
			net.family = (uint8_t)fam;
			tw_test_random(net.a, len);
			tw_srv_addr_text(&net, text, sizeof(text));
			snprintf(spec, sizeof(spec), "%s/%u", text, pf);
			if (!CHECK_OK(tw_srv_clients_add(&t, spec, (const uint8_t *)"s", 1, false, err,
							 sizeof(err))))
				continue;
			for (int k = 0; k < 40; k++) {
				bool in;

				a = net;
				/* flip one random bit (inside or outside the prefix) */
				if (k > 0) {
					unsigned bit = tw_test_random_u32() % (8 * len);

					a.a[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
				}
				in = same_prefix(a.a, net.a, pf);
				if (!CHECK((tw_srv_clients_find(&t, &a) != NULL) == in))
					tw_note("prefix %s vs %u/%d", spec, pf, k);
			}
			/* the other family never matches */
			memset(&a, 0, sizeof(a));
			a.family = fam == 4 ? 6 : 4;
			CHECK(tw_srv_clients_find(&t, &a) == NULL);
			CHECK_OK(tw_srv_addr_parse(&a, &got_pf, spec));
			CHECK(got_pf == pf);
			tw_srv_clients_free(&t);
		}
	}
}

/*
 * A table of thousands of clients (IPv4 and IPv6 hosts, some inside the
 * networks, networks of random prefixes, some entries given twice with
 * another secret, and AP subnets as a deployment lists them: hundreds of
 * networks of a few prefix lengths in one block, nested and repeated)
 * against a model: the longest matching prefix by the bit-by-bit
 * definition over the model's own list, for each entry's address,
 * addresses near the networks and random ones.
 */
enum {
	CT_HOST4 = 1500, CT_HOST6 = 400, CT_NET4 = 30, CT_NET6 = 15,
	CT_SUB4 = 600, CT_SUB6 = 200, CT_LOOKUPS = 8000
};

struct ct_model {
	struct tw_srv_addr net;
	unsigned prefix;
	uint8_t secret;  /* which add it came from: the last wins */
};

static void ct_random_addr(struct tw_srv_addr *a, unsigned fam)
{
	memset(a, 0, sizeof(*a));
	a->family = (uint8_t)fam;
	tw_test_random(a->a, fam == 4 ? 4 : 16);
}

/* a with the bits after the first `keep` taken from random */
static void ct_near(struct tw_srv_addr *a, const struct tw_srv_addr *net, unsigned keep)
{
	unsigned len = net->family == 4 ? 4 : 16;
	uint8_t r[16];

	*a = *net;
	tw_test_random(r, len);
	for (unsigned i = keep; i < 8 * len; i++) {
		uint8_t bit = (uint8_t)(0x80 >> (i % 8));

		a->a[i / 8] = (uint8_t)((a->a[i / 8] & ~bit) | (r[i / 8] & bit));
	}
}

static void test_client_table(void)
{
	static struct ct_model m[CT_HOST4 + CT_HOST6 + CT_NET4 + CT_NET6 + CT_SUB4 + CT_SUB6];
	struct tw_srv_clients t;
	size_t nm = 0, wrong = 0;
	char spec[80], text[64], err[128];
	bool added = true;

	memset(&t, 0, sizeof(t));
	/* the networks first (hosts are placed inside some) */
	for (int i = 0; i < CT_NET4 + CT_NET6; i++) {
		unsigned fam = i < CT_NET4 ? 4 : 6, max = fam == 4 ? 32 : 128;

		ct_random_addr(&m[nm].net, fam);
		m[nm].prefix = 1 + tw_test_random_u32() % (max - 1);
		/* some networks nested in an earlier one */
		if (i % 3 == 1 && m[nm - 1].net.family == fam && m[nm - 1].prefix < max - 1)
			ct_near(&m[nm].net, &m[nm - 1].net, m[nm - 1].prefix);
		nm++;
	}
	for (int i = 0; i < CT_HOST4 + CT_HOST6; i++) {
		unsigned fam = i < CT_HOST4 ? 4 : 6;

		if (i % 4 == 0) { /* inside a network of its family */
			const struct ct_model *n = &m[fam == 4 ? (size_t)i % CT_NET4 :
						      CT_NET4 + (size_t)i % CT_NET6];
			ct_near(&m[nm].net, &n->net, n->prefix);
		} else {
			ct_random_addr(&m[nm].net, fam);
		}
		m[nm].prefix = fam == 4 ? 32 : 128;
		nm++;
	}
	/* AP subnets: 10.0-3.0-31.x in /16, /24, /26 and /28, and
	 * 2001:db8:(0-7):xxxx:: in /48, /56 and /64 (many land in or on
	 * one another) */
	for (int i = 0; i < CT_SUB4 + CT_SUB6; i++) {
		static const unsigned len4[] = { 16, 24, 26, 28 }, len6[] = { 48, 56, 64 };
		uint32_t r = tw_test_random_u32();
		struct tw_srv_addr *a = &m[nm].net;

		memset(a, 0, sizeof(*a));
		if (i < CT_SUB4) {
			a->family = 4;
			a->a[0] = 10;
			a->a[1] = (uint8_t)(r & 3);
			a->a[2] = (uint8_t)((r >> 2) & 31);
			a->a[3] = (uint8_t)(r >> 8);
			m[nm].prefix = len4[(r >> 16) % 4];
		} else {
			static const uint8_t db8[4] = { 0x20, 0x01, 0x0d, 0xb8 };

			a->family = 6;
			memcpy(a->a, db8, 4);
			a->a[5] = (uint8_t)(r & 7);
			a->a[6] = (uint8_t)(r >> 3);
			a->a[7] = (uint8_t)(r >> 11);
			m[nm].prefix = len6[(r >> 20) % 3];
		}
		nm++;
	}
	/* the model: a network twice keeps the later secret, one entry */
	for (size_t i = 0; i < nm; i++) {
		m[i].secret = (uint8_t)(1 + i % 200);
		for (size_t j = 0; j < i; j++)
			if (m[j].prefix == m[i].prefix && m[j].secret != 0 &&
			    same_prefix(m[j].net.a, m[i].net.a, m[i].prefix) &&
			    m[j].net.family == m[i].net.family)
				m[j].secret = 0; /* replaced by i */
	}
	for (size_t i = 0; i < nm && added; i++) {
		uint8_t sec[2] = { 'k', (uint8_t)(1 + i % 200) };

		tw_srv_addr_text(&m[i].net, text, sizeof(text));
		snprintf(spec, sizeof(spec), "%s/%u", text, m[i].prefix);
		added = CHECK_OK(tw_srv_clients_add(&t, spec, sec, 2, false, err, sizeof(err)));
	}
	/* a few again, each with its secret: replaced in place */
	for (size_t i = 0; i < nm && added; i += 97) {
		uint8_t sec[2] = { 'k', m[i].secret != 0 ? m[i].secret : 0 };

		if (m[i].secret == 0)
			continue;
		tw_srv_addr_text(&m[i].net, text, sizeof(text));
		snprintf(spec, sizeof(spec), "%s/%u", text, m[i].prefix);
		added = CHECK_OK(tw_srv_clients_add(&t, spec, sec, 2, false, err, sizeof(err)));
	}
	/* one entry per distinct network: a repeat replaced its first */
	{
		size_t distinct = 0;

		for (size_t i = 0; i < nm; i++)
			distinct += m[i].secret != 0;
		CHECK(!added || t.n == distinct);
	}
	for (int k = 0; added && k < CT_LOOKUPS; k++) {
		struct tw_srv_addr a;
		const struct tw_srv_client *got;
		const struct ct_model *want = NULL;
		const struct ct_model *e = &m[tw_test_random_u32() % nm];

		switch (k % 4) {
		case 0: a = e->net; break;                                  /* an entry */
		case 1: ct_near(&a, &e->net, e->prefix); break;             /* inside it */
		case 2: ct_near(&a, &e->net, e->prefix / 2); break;         /* nearby */
		default: ct_random_addr(&a, k % 8 < 4 ? 4 : 6); break;
		}
		for (size_t i = 0; i < nm; i++)
			if (m[i].secret != 0 && m[i].net.family == a.family &&
			    same_prefix(a.a, m[i].net.a, m[i].prefix) &&
			    (want == NULL || m[i].prefix > want->prefix))
				want = &m[i];
		got = tw_srv_clients_find(&t, &a);
		if (want == NULL ? got != NULL :
				   got == NULL || got->prefix != want->prefix ||
					   got->key.len != 2 || got->key.secret[1] != want->secret ||
					   !same_prefix(got->net.a, want->net.a, want->prefix))
			wrong++;
	}
	CHECK(added && wrong == 0);
	/* an IPv4 address is its first 4 octets, whatever follows */
	for (size_t i = CT_NET4 + CT_NET6; added && i < CT_NET4 + CT_NET6 + 50; i++) {
		struct tw_srv_addr a = m[i].net;
		const struct tw_srv_client *got;

		if (m[i].secret == 0)
			continue;
		tw_test_random(a.a + 4, 12);
		got = tw_srv_clients_find(&t, &a);
		CHECK(got != NULL && got->prefix == 32 && got->key.secret[1] == m[i].secret);
	}
	tw_srv_clients_free(&t);
}

static void test_clients(void)
{
	struct tw_srv_clients t;
	struct tw_srv_addr a;
	const struct tw_srv_client *c;
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	char err[200], text[64];
	unsigned pf;
	uint16_t port;

	memset(&t, 0, sizeof(t));
	CHECK_OK(tw_srv_clients_add(&t, "10.0.0.0/8", (const uint8_t *)"wide", 4, false, err,
				    sizeof(err)));
	CHECK_OK(tw_srv_clients_add(&t, "10.1.2.0/24", (const uint8_t *)"narrow", 6, false, err,
				    sizeof(err)));
	CHECK_OK(tw_srv_clients_add(&t, "10.1.2.3/32", (const uint8_t *)"host", 4, false, err,
				    sizeof(err)));
	CHECK_OK(tw_srv_clients_add(&t, "2001:db8::/32", (const uint8_t *)"six", 3, false, err,
				    sizeof(err)));
	/* host bits below the prefix are cleared: the same network replaces */
	CHECK_OK(tw_srv_clients_add(&t, "10.255.255.255/8", (const uint8_t *)"wide2", 5, false,
				    err, sizeof(err)));
	CHECK(t.n == 4);
	CHECK(strcmp(t.v[0].name, "10.0.0.0/8") == 0);
	CHECK(tw_srv_clients_add(&t, "10.0.0.0/8", (const uint8_t *)"", 0, false, err,
				 sizeof(err)) == TW_ERR_LENGTH);

	CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.1.2.3"));
	c = tw_srv_clients_find(&t, &a);
	CHECK(c != NULL && c->key.len == 4 && memcmp(c->key.secret, "host", 4) == 0);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.1.2.4"));
	c = tw_srv_clients_find(&t, &a);
	CHECK(c != NULL && c->key.len == 6);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.200.0.1"));
	c = tw_srv_clients_find(&t, &a);
	CHECK(c != NULL && c->key.len == 5);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "11.0.0.1"));
	CHECK(tw_srv_clients_find(&t, &a) == NULL);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "2001:db8:1::5"));
	c = tw_srv_clients_find(&t, &a);
	CHECK(c != NULL && c->key.len == 3);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "2001:db9::5"));
	CHECK(tw_srv_clients_find(&t, &a) == NULL);

	/* an IPv4-mapped source on a dual-stack socket matches the IPv4 entry */
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons(4242);
	CHECK(inet_pton(AF_INET6, "::ffff:10.1.2.3", &s6.sin6_addr) == 1);
	CHECK_OK(tw_srv_addr_from_sockaddr(&a, &port, (struct sockaddr *)&s6));
	CHECK(a.family == 4 && port == 4242);
	c = tw_srv_clients_find(&t, &a);
	CHECK(c != NULL && c->key.len == 4);
	tw_srv_addr_text(&a, text, sizeof(text));
	CHECK(strcmp(text, "10.1.2.3") == 0);
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = htons(1);
	s4.sin_addr.s_addr = htonl(0x0a010203);
	CHECK_OK(tw_srv_addr_from_sockaddr(&a, &port, (struct sockaddr *)&s4));
	CHECK(tw_srv_clients_find(&t, &a) == c);

	CHECK_ERR(tw_srv_addr_parse(&a, &pf, "10.0.0.1/"), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_addr_parse(&a, &pf, "10.0.0.1/x"), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_addr_parse(&a, &pf, "/8"), TW_ERR_DECODE);
	CHECK_OK(tw_srv_addr_parse(&a, &pf, "10.0.0.1/0"));
	CHECK(pf == 0 && a.a[0] == 0);
	tw_srv_clients_free(&t);
	CHECK(t.n == 0 && t.v == NULL);
}

static void test_sockaddr(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

	CHECK_OK(tw_srv_sockaddr_parse(&ss, &len, "127.0.0.1:1812", 1));
	CHECK(in->sin_family == AF_INET && ntohs(in->sin_port) == 1812 &&
	      len == sizeof(*in));
	CHECK_OK(tw_srv_sockaddr_parse(&ss, &len, "127.0.0.1", 1813));
	CHECK(ntohs(in->sin_port) == 1813);
	CHECK_OK(tw_srv_sockaddr_parse(&ss, &len, "[::1]:1812", 1));
	CHECK(in6->sin6_family == AF_INET6 && ntohs(in6->sin6_port) == 1812);
	CHECK_OK(tw_srv_sockaddr_parse(&ss, &len, "::", 7));
	CHECK(in6->sin6_family == AF_INET6 && ntohs(in6->sin6_port) == 7);
	CHECK_OK(tw_srv_sockaddr_parse(&ss, &len, "0.0.0.0:0", 7));
	CHECK(ntohs(in->sin_port) == 0);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "127.0.0.1:", 1), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "127.0.0.1:65536", 1), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "127.0.0.1:-1", 1), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "[::1", 1), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "[::1]x", 1), TW_ERR_DECODE);
	CHECK_ERR(tw_srv_sockaddr_parse(&ss, &len, "example.com:1", 1), TW_ERR_DECODE);
}

/* Each sample line of the exposition must be "name[{labels}] value". */
static bool valid_exposition(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[512];
		size_t n;

		if (nl == NULL)
			return false; /* every line ends with \n */
		n = (size_t)(nl - p);
		if (n >= sizeof(line))
			return false;
		memcpy(line, p, n);
		line[n] = 0;
		if (strncmp(line, "# HELP ", 7) != 0 && strncmp(line, "# TYPE ", 7) != 0) {
			char *sp = strrchr(line, ' ');
			char *e;

			if (sp == NULL || line[0] < 'a' || line[0] > 'z')
				return false;
			strtod(sp + 1, &e);
			if (*e != 0 || e == sp + 1)
				return false;
		}
		p = nl + 1;
	}
	return true;
}

static void test_metrics(void)
{
	static struct tw_srv_counters c1, c2;
	struct tw_srv_counters *cs[2] = { &c1, &c2 };
	struct tw_srv_metrics m;
	static char buf[65536];
	size_t len = 0;

	memset(&m, 0, sizeof(m));
	tw_srv_count(&c1, TW_C_REQUESTS, 5);
	tw_srv_count(&c2, TW_C_REQUESTS, 7);
	tw_srv_count(&c2, TW_C_ATTACH_FULL + TW_SRV_M_AKA_PRIME, 3);
	tw_srv_count(&c1, TW_C_ATTACH_REAUTH + TW_SRV_M_SIM, 2);
	tw_srv_count(&c1, TW_C_STORE_LAT_NS, 1500000);
	tw_srv_count(&c1, TW_C_STORE_LAT_COUNT, 3);
	tw_srv_count(&c2, TW_C_AUTH_FAIL + TW_SRV_M_AKA, 1);
	tw_srv_metrics_sum(&m, cs, 2);
	m.sessions.active = 9;
	m.sessions.max = 65536;
	m.threads = 2;
	m.store_reservations_sync = 4;
	m.store_reservations_ahead = 7;
	m.store_reservations_batched = 11;
	m.store_reservation_batch_commits = 2;
	m.store_ident_rounds = 5;
	m.store_ident_write_ns = 2500000;
	m.store_ident_write_max_ns = 1000000;
	m.store_checkpoint_ns = 30000;
	m.store_ident_row_writes = 13;
	CHECK_OK(tw_srv_metrics_format(&m, buf, sizeof(buf), &len));
	buf[len] = 0;
	CHECK(strstr(buf, "\ntwag_radius_access_requests_total 12\n") != NULL);
	CHECK(strstr(buf, "\ntwag_worker_requests_total{worker=\"0\"} 5\n") != NULL);
	CHECK(strstr(buf, "\ntwag_worker_requests_total{worker=\"1\"} 7\n") != NULL);
	CHECK(strstr(buf, "worker=\"2\"") == NULL);
	CHECK(strstr(buf, "# TYPE twag_radius_access_requests_total counter\n") != NULL);
	CHECK(strstr(buf, "twag_attaches_total{method=\"aka-prime\",kind=\"full\"} 3\n") != NULL);
	CHECK(strstr(buf, "twag_attaches_total{method=\"sim\",kind=\"reauth\"} 2\n") != NULL);
	CHECK(strstr(buf, "twag_attaches_total{method=\"aka\",kind=\"full\"} 0\n") != NULL);
	CHECK(strstr(buf, "twag_auth_failures_total{method=\"aka\"} 1\n") != NULL);
	CHECK(strstr(buf, "twag_store_latency_seconds_sum 0.001500000\n") != NULL);
	CHECK(strstr(buf, "twag_store_latency_seconds_count 3\n") != NULL);
	CHECK(strstr(buf, "twag_sessions_active 9\n") != NULL);
	CHECK(strstr(buf, "# TYPE twag_sessions_active gauge\n") != NULL);
	CHECK(strstr(buf, "twag_sessions_max 65536\n") != NULL);
	/* every name of the interface is there */
	static const char *const names[] = {
		"twag_radius_access_requests_total", "twag_radius_access_accepts_total",
		"twag_radius_access_rejects_total", "twag_radius_access_challenges_total",
		"twag_radius_malformed_packets_total", "twag_radius_bad_authenticators_total",
		"twag_radius_packets_dropped_total", "twag_radius_duplicate_requests_total",
		"twag_radius_unknown_clients_total", "twag_radius_status_server_total",
		"twag_resyncs_total", "twag_resyncs_refused_total", "twag_store_vectors_total",
		"twag_store_errors_total", "twag_sessions_evicted_total",
		"twag_sessions_expired_total", "twag_store_identity_rows_written_total",
		"twag_store_identity_table_full_total", "twag_aka_batched_challenges_total",
		"twag_rx_batches_total", "twag_rx_coalesce_waits_total",
		"twag_tx_gso_sends_total", "twag_tx_gso_replies_total",
		"twag_tx_gso_fallbacks_total", "twag_udp_gso_workers", "twag_rx_gro_datagrams_total",
		"twag_store_identity_rounds_total", "twag_store_identity_round_yields_total",
		"twag_store_identity_write_seconds_total", "twag_store_identity_write_max_seconds",
		"twag_store_checkpoint_seconds_total", "twag_store_identity_row_writes_total",
	};
	CHECK(strstr(buf, "\ntwag_store_reservations_sync_total 4\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_reservations_ahead_total 7\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_reservations_batched_total 11\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_reservation_batch_commits_total 2\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_identity_rounds_total 5\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_identity_row_writes_total 13\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_identity_write_seconds_total 0.002500000\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_identity_write_max_seconds 0.001000000\n") != NULL);
	CHECK(strstr(buf, "\ntwag_store_checkpoint_seconds_total 0.000030000\n") != NULL);
	CHECK(strstr(buf, "# TYPE twag_store_identity_write_max_seconds gauge\n") != NULL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char want[128];

		snprintf(want, sizeof(want), "\n%s ", names[i]);
		if (!CHECK(strstr(buf, want) != NULL))
			tw_note("missing %s", names[i]);
	}
	CHECK(valid_exposition(buf, len));
	/* too small a buffer: an error, not a truncated exposition */
	CHECK_ERR(tw_srv_metrics_format(&m, buf, 100, &len), TW_ERR_OVERFLOW);
}

static void test_log_quote(void)
{
	char out[64];

	tw_log_quote(out, sizeof(out), "plain");
	CHECK(strcmp(out, "plain") == 0);
	tw_log_quote(out, sizeof(out), "two words");
	CHECK(strcmp(out, "\"two words\"") == 0);
	tw_log_quote(out, sizeof(out), "a\"b\nc=d");
	CHECK(strcmp(out, "\"a?b?c=d\"") == 0);
	tw_log_quote(out, sizeof(out), "");
	CHECK(strcmp(out, "\"\"") == 0);
	tw_log_quote(out, 8, "a b c d e f g");
	CHECK(strlen(out) == 7 && out[0] == '"' && out[6] == '"');
}

/* One log line: "ts=<RFC 3339 UTC with ms>Z level=<l> event=<e> k=v",
 * whole, newline-terminated; the date agrees with the C library's
 * gmtime of the same moment; the level filter; a long line truncated to
 * one line. */
static time_t realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

static void test_log_line(void)
{
	char path[256], line[2048];
	struct tw_log_buf *b = calloc(1, sizeof(*b));
	FILE *f;
	time_t t0, t1;

	snprintf(path, sizeof(path), "%s/log.txt", tmpdir);
	if (!CHECK(b != NULL) || !CHECK_OK(tw_log_open(path))) {
		free(b);
		return;
	}
	tw_log_set_level(TW_LOG_INFO);
	/* the logger's clock (CLOCK_REALTIME): time() reads the coarse one,
	 * which may still show the previous second when the log's stamp
	 * already shows the next */
	t0 = realtime_s();
	tw_logf(NULL, TW_LOG_INFO, "accept", "method=%s n=%d", "aka-prime", 7);
	tw_logf(NULL, TW_LOG_DEBUG, "drop", "reason=x");   /* filtered */
	tw_log_always(b, TW_LOG_DEBUG, "ready", "x=%d", 1); /* buffered */
	tw_logf(b, TW_LOG_WARN, "store-error", "op=y");
	{
		static char big[3000];

		memset(big, 'a', sizeof(big) - 1);
		tw_logf(b, TW_LOG_ERROR, "internal-error", "v=%s", big);
	}
	tw_log_flush(b);
	t1 = realtime_s();
	tw_log_close();
	f = fopen(path, "r");
	if (!CHECK(f != NULL)) {
		free(b);
		return;
	}
	for (int i = 0; i < 4; i++) {
		static const char *const want[] = {
			" level=info event=accept method=aka-prime n=7\n",
			" level=debug event=ready x=1\n",
			" level=warn event=store-error op=y\n",
			" level=error event=internal-error v=aaaa",
		};
		struct tm tm0, tm1;
		char d0[32], d1[32];

		if (!CHECK(fgets(line, sizeof(line), f) != NULL))
			break;
		gmtime_r(&t0, &tm0);
		gmtime_r(&t1, &tm1);
		strftime(d0, sizeof(d0), "ts=%Y-%m-%dT%H:%M:%S.", &tm0);
		strftime(d1, sizeof(d1), "ts=%Y-%m-%dT%H:%M:%S.", &tm1);
		CHECK(strncmp(line, d0, 23) == 0 || strncmp(line, d1, 23) == 0);
		CHECK(line[23] >= '0' && line[23] <= '9' && line[24] >= '0' && line[24] <= '9' &&
		      line[25] >= '0' && line[25] <= '9' && line[26] == 'Z');
		CHECK(strncmp(line + 27, want[i], strlen(want[i])) == 0);
		if (i == 3)
			CHECK(strlen(line) <= 1024 && line[strlen(line) - 1] == '\n');
	}
	CHECK(fgets(line, sizeof(line), f) == NULL);
	fclose(f);
	unlink(path);
	free(b);
}

void test_main(void)
{
	if (mkdtemp(tmpdir) == NULL) {
		CHECK(0);
		return;
	}
	test_flags();
	test_file();
	test_clients();
	test_client_prefixes();
	test_client_table();
	test_sockaddr();
	test_metrics();
	test_log_quote();
	test_log_line();
	unlink(write_file("ok.conf", ""));
	unlink(write_file("bad.conf", ""));
	rmdir(tmpdir);
}
