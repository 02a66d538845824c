/*
 * twag-bench — twagd's RADIUS client look-up, made twice per datagram (the
 * source address to its client and shared secret, RFC 2865 §3): a table
 * of 20,000 host clients (an access point each) and eight networks, and
 * addresses of configured clients looked up in turn (tw_srv_clients_find).
 * One op = one look-up. Before the table was indexed this was a scan of
 * every client: 82 µs at this size on the machine of bench/RESULTS.md
 * (22 ns indexed).
 *
 * radius-client-find-nets: the clients are AP subnets instead, 5,000
 * networks of /24, /26 and /28 (nested in part) beside 1,000 hosts, and
 * the addresses looked up are inside them. Networks were a scan, longest
 * prefix first, until they were indexed like hosts: 2.63 µs per look-up
 * at this size on the Zen 5 VM of bench/RESULTS.md, 16 ns indexed.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "twag/server.h"

enum { NCLIENT = 20000, NADDR = 4096 };

struct cl_state {
	struct tw_srv_clients t;
	struct tw_srv_addr addr[NADDR];
	unsigned next;
	/* what a look-up must find: an entry of a prefix in [pmin, pmax]
	 * whose first `same` octets are the address's */
	unsigned pmin, pmax, same;
};

static void cl_teardown(void *p)
{
	struct cl_state *s = p;

	tw_srv_clients_free(&s->t);
}

/* One client into the table (0), or the reason written (BENCH_UNAVAILABLE). */
static int add(struct cl_state *s, const struct bench_thread *t, const char *spec,
	       const uint8_t secret[16])
{
	char err[128];

	if (tw_srv_clients_add(&s->t, spec, secret, 16, false, err, sizeof(err)) == TW_OK)
		return 0;
	return bench_unavailable(t, "client table: %s", err);
}

static int cl_setup(void *p, const struct bench_thread *t)
{
	struct cl_state *s = p;
	uint64_t seed = t->seed;
	char spec[64];
	uint8_t secret[16];

	memset(s, 0, sizeof(*s));
	bench_fill(&seed, secret, sizeof(secret));
	for (unsigned i = 0; i < 8; i++) {
		snprintf(spec, sizeof(spec), "172.%u.0.0/16", 16 + i);
		if (add(s, t, spec, secret) != 0)
			return BENCH_UNAVAILABLE;
	}
	for (unsigned i = 0; i < NCLIENT; i++) {
		snprintf(spec, sizeof(spec), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
		if (add(s, t, spec, secret) != 0)
			return BENCH_UNAVAILABLE;
	}
	/* a configured host: its own entry */
	s->pmin = s->pmax = 32;
	s->same = 4;
	for (unsigned i = 0; i < NADDR; i++) {
		uint8_t r[4];
		unsigned k;

		bench_fill(&seed, r, sizeof(r));
		k = (unsigned)(r[0] | r[1] << 8 | r[2] << 16) % NCLIENT;
		s->addr[i].family = 4;
		s->addr[i].a[0] = 10;
		s->addr[i].a[1] = (uint8_t)(k >> 16);
		s->addr[i].a[2] = (uint8_t)(k >> 8);
		s->addr[i].a[3] = (uint8_t)k;
	}
	return 0;
}

static int cl_run(void *p, uint64_t n)
{
	struct cl_state *s = p;

	for (uint64_t i = 0; i < n; i++) {
		const struct tw_srv_addr *a = &s->addr[s->next++ % NADDR];
		const struct tw_srv_client *c = tw_srv_clients_find(&s->t, a);

		if (c == NULL || c->prefix < s->pmin || c->prefix > s->pmax ||
		    memcmp(c->net.a, a->a, s->same) != 0)
			return -1;
	}
	return 0;
}

static const struct bench_scenario sc_clients = {
	.name = "radius-client-find",
	.impl = "twag",
	.what = "RADIUS client look-up by source address among 20,000 hosts and 8 networks",
	.granule = 64,
	.state_size = sizeof(struct cl_state),
	.setup = cl_setup,
	.run = cl_run,
	.teardown = cl_teardown,
};
BENCH_REGISTER(sc_clients)

enum { NNET = 5000, NNET_HOST = 1000 };

/* Subnet i: 10.(i / 256).(i % 256).0 with a length by i % 3 (/24, /26,
 * /28); every fourth one instead a /28 further up the subnet of the one
 * before (inside it when that one is a /24). */
static void net_spec(unsigned i, char *spec, size_t n)
{
	static const unsigned len[3] = { 24, 26, 28 };

	if (i % 4 == 3)
		snprintf(spec, n, "10.%u.%u.%u/28", (i - 1) >> 8, (i - 1) & 255, 16 * (i % 16));
	else
		snprintf(spec, n, "10.%u.%u.0/%u", i >> 8, i & 255, len[i % 3]);
}

static int cn_setup(void *p, const struct bench_thread *t)
{
	struct cl_state *s = p;
	uint64_t seed = t->seed;
	char spec[64];
	uint8_t secret[16];

	memset(s, 0, sizeof(*s));
	bench_fill(&seed, secret, sizeof(secret));
	for (unsigned i = 0; i < NNET; i++) {
		net_spec(i, spec, sizeof(spec));
		if (add(s, t, spec, secret) != 0)
			return BENCH_UNAVAILABLE;
	}
	for (unsigned i = 0; i < NNET_HOST; i++) {
		snprintf(spec, sizeof(spec), "172.16.%u.%u", i >> 8, i & 255);
		if (add(s, t, spec, secret) != 0)
			return BENCH_UNAVAILABLE;
	}
	/* an address in the first 16 of each subnet (inside a /28 too): a
	 * network entry holding it */
	s->pmin = 24;
	s->pmax = 28;
	s->same = 3;
	for (unsigned i = 0; i < NADDR; i++) {
		uint8_t r[4];
		unsigned k;

		bench_fill(&seed, r, sizeof(r));
		k = (unsigned)(r[0] | r[1] << 8) % NNET;
		if (k % 4 == 3)
			k--;
		s->addr[i].family = 4;
		s->addr[i].a[0] = 10;
		s->addr[i].a[1] = (uint8_t)(k >> 8);
		s->addr[i].a[2] = (uint8_t)k;
		s->addr[i].a[3] = (uint8_t)(r[2] % 16);
	}
	return 0;
}

static const struct bench_scenario sc_clients_nets = {
	.name = "radius-client-find-nets",
	.impl = "twag",
	.what = "RADIUS client look-up by source address among 5,000 AP subnets (/24, /26, /28) and 1,000 hosts",
	.granule = 64,
	.state_size = sizeof(struct cl_state),
	.setup = cn_setup,
	.run = cl_run,
	.teardown = cl_teardown,
};
BENCH_REGISTER(sc_clients_nets)
