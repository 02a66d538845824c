/*
 * twag-load — clock, random octets and the latency histogram.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "load.h"

const char *const load_cause_names[CAUSE_COUNT] = {
	[CAUSE_REJECT] = "reject",
	[CAUSE_TIMEOUT] = "timeout",
	[CAUSE_BAD_AUTH] = "bad_authenticator",
	[CAUSE_MPPE] = "mppe_mismatch",
	[CAUSE_SYNC] = "sync_failure",
	[CAUSE_PEER] = "peer_refused",
	[CAUSE_OTHER] = "other",
};

uint64_t load_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Request Authenticators must be unpredictable (RFC 2865 §3) and NONCE_MT /
 * AT_IV fresh (RFC 4186 §4.2.5, RFC 4187 §10.12): OpenSSL's DRBG (seeded
 * from the kernel, several times cheaper than getrandom(2) here), read in
 * 4 KiB batches per thread so the packet path makes one call per ~100
 * attaches. A DRBG that fails ends the run: nothing sensible can follow.
 */
static _Thread_local uint8_t rnd_buf[4096];
static _Thread_local size_t rnd_pos = sizeof(rnd_buf);

void load_random(void *out, size_t len)
{
	uint8_t *o = out;

	while (len > 0) {
		if (rnd_pos == sizeof(rnd_buf)) {
			if (RAND_bytes(rnd_buf, (int)sizeof(rnd_buf)) != 1) {
				fprintf(stderr, "twag-load: no random octets (OpenSSL RAND_bytes)\n");
				exit(1);
			}
			rnd_pos = 0;
		}
		size_t n = sizeof(rnd_buf) - rnd_pos;
		if (n > len)
			n = len;
		memcpy(o, rnd_buf + rnd_pos, n);
		/* used octets do not stay behind in the buffer */
		memset(rnd_buf + rnd_pos, 0, n);
		rnd_pos += n;
		o += n;
		len -= n;
	}
}

/* ---- histogram --------------------------------------------------------- */

static unsigned hist_index(uint64_t v)
{
	if (v < (1u << HIST_SUB))
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v); /* floor(log2 v) >= HIST_SUB */
	unsigned oct = e - HIST_SUB + 1;
	if (oct > HIST_OCTAVES)
		return HIST_N - 1;
	return (oct << HIST_SUB) + (unsigned)((v >> (e - HIST_SUB)) & ((1u << HIST_SUB) - 1));
}

/* The largest value that falls into bucket i. */
static uint64_t hist_upper(unsigned i)
{
	unsigned oct = i >> HIST_SUB, sub = i & ((1u << HIST_SUB) - 1);

	if (oct == 0)
		return sub;
	unsigned shift = oct - 1;
	uint64_t lower = ((uint64_t)(1u << HIST_SUB) + sub) << shift;
	return lower + ((uint64_t)1 << shift) - 1;
}

void load_hist_add(struct load_hist *h, uint64_t v)
{
	h->n[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void load_hist_merge(struct load_hist *into, const struct load_hist *h)
{
	for (unsigned i = 0; i < HIST_N; i++)
		into->n[i] += h->n[i];
	into->count += h->count;
	into->sum += h->sum;
	if (h->max > into->max)
		into->max = h->max;
}

uint64_t load_hist_percentile(const struct load_hist *h, unsigned p_10000)
{
	if (h->count == 0)
		return 0;
	/* nearest rank: the smallest value with at least p of the values <= it */
	uint64_t rank = (h->count * p_10000 + 9999) / 10000;
	uint64_t seen = 0;

	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < HIST_N; i++) {
		seen += h->n[i];
		if (seen >= rank) {
			uint64_t u = hist_upper(i);
			return u < h->max ? u : h->max;
		}
	}
	return h->max;
}
