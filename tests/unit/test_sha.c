/*
 * Tests of SHA-1, SHA-256 (FIPS 180-2 examples, NIST SHAVS) and HMAC
 * (RFC 2202, RFC 4231), portable and SHA-NI, with cross-checks against
 * OpenSSL libcrypto on random inputs.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/hmac.h"
#include "twag/sha.h"
#include "../../src/crypto/sha_internal.h"

static uint8_t big[(1 << 20) + 77];

/* A message field: text = "..." (ASCII) or hex under hexkey. */
static size_t tv_msg(const struct tv_case *c, const char *hexkey, uint8_t *out,
		     size_t max)
{
	if (tv_has(c, "text")) {
		const char *t = tv_str(c, "text");
		size_t n = t ? strlen(t) : 0;

		if (!CHECK(n <= max))
			return 0;
		memcpy(out, t, n);
		return n;
	}
	return tv_hex(c, hexkey, out, max);
}

/* The value under key must differ from got (negative tests). */
static void expect_differs(const struct tv_case *c, const char *key,
			   const uint8_t *got, size_t len)
{
	uint8_t exp[256];
	size_t n = tv_hex(c, key, exp, sizeof(exp));

	CHECK(n == 0 || n != len || memcmp(exp, got, len) != 0);
}

static void sha_case(const struct tv_case *c)
{
	static uint8_t msg[512];
	const char *alg = tv_str(c, "alg");
	size_t n = tv_msg(c, "msg", msg, sizeof(msg));
	long repeat = tv_int(c, "repeat", 1);
	int is1 = alg && strcmp(alg, "sha1") == 0;
	size_t dl = is1 ? 20 : 32;
	uint8_t d[32];

	if (!CHECK(alg && (is1 || strcmp(alg, "sha256") == 0)))
		return;
	if (is1) {
		struct tw_sha1_ctx ctx;

		tw_sha1_init(&ctx);
		for (long i = 0; i < repeat; i++)
			tw_sha1_update(&ctx, msg, n);
		tw_sha1_final(&ctx, d);
	} else {
		struct tw_sha256_ctx ctx;

		tw_sha256_init(&ctx);
		for (long i = 0; i < repeat; i++)
			tw_sha256_update(&ctx, msg, n);
		tw_sha256_final(&ctx, d);
	}
	TV_EXPECT(c, "digest", d, dl);
	if (repeat != 1)
		return;
	/* One-shot, and byte-at-a-time streaming. */
	if (is1) {
		struct tw_sha1_ctx ctx;

		tw_sha1(d, msg, n);
		TV_EXPECT(c, "digest", d, dl);
		tw_sha1_init(&ctx);
		for (size_t i = 0; i < n; i++)
			tw_sha1_update(&ctx, msg + i, 1);
		tw_sha1_final(&ctx, d);
	} else {
		struct tw_sha256_ctx ctx;

		tw_sha256(d, msg, n);
		TV_EXPECT(c, "digest", d, dl);
		tw_sha256_init(&ctx);
		for (size_t i = 0; i < n; i++)
			tw_sha256_update(&ctx, msg + i, 1);
		tw_sha256_final(&ctx, d);
	}
	TV_EXPECT(c, "digest", d, dl);
	/* Negative: one flipped message bit (or one extra octet) must change
	 * the digest. */
	if (n > 0)
		msg[n / 2] ^= 0x10;
	else
		msg[n++] = 0;
	if (is1)
		tw_sha1(d, msg, n);
	else
		tw_sha256(d, msg, n);
	expect_differs(c, "digest", d, dl);
}

static void hmac_case(const struct tv_case *c)
{
	static uint8_t key[256], msg[512];
	const char *alg = tv_str(c, "alg");
	size_t kl = tv_hex(c, "key", key, sizeof(key));
	size_t n = tv_msg(c, "data", msg, sizeof(msg));
	int is1 = alg && strcmp(alg, "sha1") == 0;
	size_t ml = (size_t)tv_int(c, "truncate", is1 ? 20 : 32);
	uint8_t d[32];

	if (!CHECK(alg && (is1 || strcmp(alg, "sha256") == 0)))
		return;
	if (is1) {
		struct tw_hmac_sha1_ctx ctx;

		tw_hmac_sha1(d, key, kl, msg, n);
		TV_EXPECT(c, "mac", d, ml);
		if (tv_has(c, "mac_96"))
			TV_EXPECT(c, "mac_96", d, 12);
		/* Streaming in uneven pieces, twice on one keyed context. */
		tw_hmac_sha1_init(&ctx, key, kl);
		for (int round = 0; round < 2; round++) {
			memset(d, 0, sizeof(d));
			for (size_t i = 0; i < n; i += 7)
				tw_hmac_sha1_update(&ctx, msg + i, n - i < 7 ? n - i : 7);
			tw_hmac_sha1_final(&ctx, d);
			TV_EXPECT(c, "mac", d, ml);
		}
		/* A discarded partial message leaves the key intact. */
		tw_hmac_sha1_update(&ctx, "junk", 4);
		tw_hmac_sha1_reset(&ctx);
		tw_hmac_sha1_update(&ctx, msg, n);
		tw_hmac_sha1_final(&ctx, d);
		TV_EXPECT(c, "mac", d, ml);
		tw_hmac_sha1_wipe(&ctx);
		CHECK(tw_ct_is_zero(&ctx, sizeof(ctx)));
		/* Negative: a flipped key bit. */
		key[kl - 1] ^= 0x01;
		tw_hmac_sha1(d, key, kl, msg, n);
		expect_differs(c, "mac", d, ml);
	} else {
		struct tw_hmac_sha256_ctx ctx;

		tw_hmac_sha256(d, key, kl, msg, n);
		TV_EXPECT(c, "mac", d, ml);
		tw_hmac_sha256_init(&ctx, key, kl);
		for (int round = 0; round < 2; round++) {
			memset(d, 0, sizeof(d));
			for (size_t i = 0; i < n; i += 13)
				tw_hmac_sha256_update(&ctx, msg + i, n - i < 13 ? n - i : 13);
			tw_hmac_sha256_final(&ctx, d);
			TV_EXPECT(c, "mac", d, ml);
		}
		tw_hmac_sha256_update(&ctx, "junk", 4);
		tw_hmac_sha256_reset(&ctx);
		tw_hmac_sha256_update(&ctx, msg, n);
		tw_hmac_sha256_final(&ctx, d);
		TV_EXPECT(c, "mac", d, ml);
		tw_hmac_sha256_wipe(&ctx);
		CHECK(tw_ct_is_zero(&ctx, sizeof(ctx)));
		/* Negative: a flipped message bit. */
		msg[0] ^= 0x80;
		tw_hmac_sha256(d, key, kl, msg, n);
		expect_differs(c, "mac", d, ml);
	}
}

static void ossl_digest(const EVP_MD *md, uint8_t *out, const uint8_t *m, size_t n)
{
	unsigned int ol = 0;

	CHECK(EVP_Digest(m, n, out, &ol, md, NULL) == 1);
}

/* Streams msg into our hash in random-sized pieces. */
static void sha_chunked(int is1, uint8_t *out, const uint8_t *m, size_t n)
{
	struct tw_sha1_ctx c1;
	struct tw_sha256_ctx c2;
	size_t off = 0;

	tw_sha1_init(&c1);
	tw_sha256_init(&c2);
	while (off < n) {
		size_t take = tw_test_random_u32() % 150;

		if (take > n - off)
			take = n - off;
		if (is1)
			tw_sha1_update(&c1, m + off, take);
		else
			tw_sha256_update(&c2, m + off, take);
		off += take;
	}
	if (is1)
		tw_sha1_final(&c1, out);
	else
		tw_sha256_final(&c2, out);
}

/* Every length 0..300 and a few large ones, one-shot and chunked, against
 * OpenSSL's EVP digests. */
static void cross_sha(void)
{
	uint8_t a[32], b[32];
	bool ok1 = true, ok256 = true;
	static const size_t large[] = { 4095, 4096, 65537, 100003, sizeof(big) };

	tw_test_random(big, sizeof(big));
	for (size_t n = 0; n <= 300; n++) {
		ossl_digest(EVP_sha1(), a, big + n, n);
		tw_sha1(b, big + n, n);
		ok1 &= memcmp(a, b, 20) == 0;
		sha_chunked(1, b, big + n, n);
		ok1 &= memcmp(a, b, 20) == 0;
		ossl_digest(EVP_sha256(), a, big + n, n);
		tw_sha256(b, big + n, n);
		ok256 &= memcmp(a, b, 32) == 0;
		sha_chunked(0, b, big + n, n);
		ok256 &= memcmp(a, b, 32) == 0;
	}
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		size_t n = large[i];

		ossl_digest(EVP_sha1(), a, big, n);
		sha_chunked(1, b, big, n);
		ok1 &= memcmp(a, b, 20) == 0;
		tw_sha1(b, big, n);
		ok1 &= memcmp(a, b, 20) == 0;
		ossl_digest(EVP_sha256(), a, big, n);
		sha_chunked(0, b, big, n);
		ok256 &= memcmp(a, b, 32) == 0;
		tw_sha256(b, big, n);
		ok256 &= memcmp(a, b, 32) == 0;
	}
	CHECK(ok1);
	CHECK(ok256);
}

/* Key lengths 0..150 (short, block-sized, hashed-down) and message lengths
 * 0..300 against OpenSSL's HMAC(). */
static void cross_hmac(void)
{
	uint8_t a[32], b[32], key[160];
	unsigned int al;
	bool ok1 = true, ok256 = true;

	for (size_t n = 0; n <= 300; n++) {
		size_t kl = n <= 150 ? n : tw_test_random_u32() % 151;
		const uint8_t *m = big + 1000 + n;

		tw_test_random(key, sizeof(key));
		al = 0;
		HMAC(EVP_sha1(), key, (int)kl, m, n, a, &al);
		tw_hmac_sha1(b, key, kl, m, n);
		ok1 &= al == 20 && memcmp(a, b, 20) == 0;
		al = 0;
		HMAC(EVP_sha256(), key, (int)kl, m, n, a, &al);
		tw_hmac_sha256(b, key, kl, m, n);
		ok256 &= al == 32 && memcmp(a, b, 32) == 0;
	}
	/* A large message, and one keyed context reused for 50 messages. */
	struct tw_hmac_sha256_ctx ctx;

	tw_test_random(key, sizeof(key));
	HMAC(EVP_sha256(), key, 32, big, 100003, a, &al);
	tw_hmac_sha256(b, key, 32, big, 100003);
	ok256 &= memcmp(a, b, 32) == 0;
	tw_hmac_sha256_init(&ctx, key, 32);
	for (size_t i = 0; i < 50; i++) {
		size_t n = tw_test_random_u32() % 200;

		HMAC(EVP_sha256(), key, 32, big + i, n, a, &al);
		tw_hmac_sha256_update(&ctx, big + i, n);
		tw_hmac_sha256_final(&ctx, b);
		ok256 &= memcmp(a, b, 32) == 0;
	}
	tw_hmac_sha256_wipe(&ctx);
	CHECK(ok1);
	CHECK(ok256);
}

/* Portable vs SHA-NI in one process: the raw compression on random
 * chaining values and 1..8 blocks, and whole hashes/HMACs. */
static void portable_vs_shani(void)
{
	uint32_t hw = tw_cpu_features_hw();

	if (!(hw & TW_CPU_SHANI)) {
		tw_note("no SHA-NI on this CPU: portable-vs-SHA-NI comparison skipped");
		return;
	}
	if (!tw_cpu_has(TW_CPU_SHANI)) {
		tw_note("SHA-NI disabled by TWAG_CPU=%s: comparison skipped",
			tw_cpu_level_name());
		return;
	}
	bool same = true;

	for (int i = 0; i < 200; i++) {
		uint32_t h1[8], h2[8], g1[5], g2[5];
		uint8_t blocks[8 * 64], a[32], b[32], a1[20], b1[20], key[80];
		size_t nb = 1 + tw_test_random_u32() % 8;
		size_t n = tw_test_random_u32() % 600;

		tw_test_random(h1, sizeof(h1));
		tw_test_random(g1, sizeof(g1));
		tw_test_random(blocks, sizeof(blocks));
		tw_test_random(key, sizeof(key));
		memcpy(h2, h1, sizeof(h1));
		memcpy(g2, g1, sizeof(g1));

		tw_cpu_restrict(0);
		tw_sha256_blocks(h1, blocks, nb);
		tw_sha1_blocks(g1, blocks, nb);
		tw_hmac_sha256(a, key, i % 80, big + i, n);
		tw_hmac_sha1(a1, key, i % 80, big + i, n);
		tw_cpu_restrict(UINT32_MAX);
		tw_sha256_blocks(h2, blocks, nb);
		tw_sha1_blocks(g2, blocks, nb);
		tw_hmac_sha256(b, key, i % 80, big + i, n);
		tw_hmac_sha1(b1, key, i % 80, big + i, n);
		same &= memcmp(h1, h2, sizeof(h1)) == 0;
		same &= memcmp(g1, g2, sizeof(g1)) == 0;
		same &= memcmp(a, b, sizeof(a)) == 0;
		same &= memcmp(a1, b1, sizeof(a1)) == 0;
	}
	CHECK(same);
	/* The comparison must be able to fail: a different block count. */
	uint32_t h1[8], h2[8];
	uint8_t blocks[128] = { 0 };

	memcpy(h1, tw_sha256_iv, sizeof(h1));
	memcpy(h2, tw_sha256_iv, sizeof(h2));
	tw_cpu_restrict(0);
	tw_sha256_blocks(h1, blocks, 1);
	tw_cpu_restrict(UINT32_MAX);
	tw_sha256_blocks(h2, blocks, 2);
	CHECK(memcmp(h1, h2, sizeof(h1)) != 0);
}

/*
 * Multi-buffer SHA-256 (tw_sha256_mb): batches of 1..40 messages of random
 * lengths (so both the lane path and the one-by-one path run), each padded
 * here (FIPS 180-4 §5.1.1) and split into up to four segments at random
 * block boundaries, run from the initial value; every digest equals
 * OpenSSL's SHA-256 of its message. A job with no blocks keeps its h.
 */
static void multi_buffer(void)
{
	enum { MAXN = 40, MAXLEN = 700 };
	static uint8_t msg[MAXN][MAXLEN + 128], spread[MAXN][MAXLEN + 128 + 4 * 64];
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	struct tw_sha256_job jobs[MAXN + 1];
	size_t len[MAXN];
	unsigned bad = 0, runs = 0;

	for (int round = 0; round < 200; round++) {
		size_t n = 1 + tw_test_random_u32() % MAXN;

		for (size_t i = 0; i < n; i++) {
			len[i] = tw_test_random_u32() % MAXLEN;
			tw_test_md_padded(msg[i], len[i], 1, spread[i], jobs[i].seg, jobs[i].nblk);
			memcpy(jobs[i].h, iv, sizeof(iv));
		}
		memcpy(jobs[n].h, iv, sizeof(iv));
		memset(jobs[n].nblk, 0, sizeof(jobs[n].nblk));
		tw_sha256_mb(jobs, n + 1);
		bad += memcmp(jobs[n].h, iv, sizeof(iv)) != 0;
		for (size_t i = 0; i < n; i++, runs++) {
			uint8_t a[32], b[32];
			unsigned bl = 0;

			for (int w = 0; w < 8; w++)
				tw_store_be32(a + 4 * w, jobs[i].h[w]);
			if (EVP_Digest(msg[i], len[i], b, &bl, EVP_sha256(), NULL) != 1 || bl != 32)
				bad++;
			bad += memcmp(a, b, 32) != 0;
		}
	}
	tw_sha256_mb(NULL, 3);
	CHECK(runs > 1000);
	CHECK(bad == 0);
}

/*
 * The lockstep HMAC (sha_internal.h) against OpenSSL HMAC(): random lane
 * masks, keys of 0..64 octets (32 takes the AVX-512 register path),
 * messages of 1..5 padded blocks per lane; idle lanes' outputs are not
 * written; each lane's keyed context equals tw_hmac_sha256_init's. Runs
 * on the lanes or on their one-by-one fallback as the CPU level says.
 */
static void x16_hmac(void)
{
	static uint8_t keys[16][64], msg[16][5 * 64], out[16][32];
	bool ok = true;

	for (int it = 0; it < 200; it++) {
		struct tw_hmac_sha256_x16 k;
		const uint8_t *kp[16], *mp[16];
		uint8_t *op[16];
		size_t nb[16], len[16];
		uint16_t live = (uint16_t)tw_test_random_u32();
		size_t kl = it % 3 == 0 ? 32 : tw_test_random_u32() % 65;

		if (it == 0)
			live = 0xffff;
		tw_test_random(keys, sizeof(keys));
		memset(out, 0xee, sizeof(out));
		for (int j = 0; j < 16; j++) {
			len[j] = tw_test_random_u32() % (5 * 64 - 9 + 1);
			tw_test_random(msg[j], len[j]);
			nb[j] = tw_sha256_pad_after_key(msg[j], len[j], sizeof(msg[j]));
			kp[j] = keys[j];
			mp[j] = msg[j];
			op[j] = out[j];
		}
		tw_hmac_sha256_x16_init(&k, kp, kl, live);
		tw_hmac_sha256_x16_padded(&k, mp, nb, op, live);
		for (int j = 0; j < 16; j++) {
			uint8_t ref[32];
			unsigned int rl = 0;

			if (!((live >> j) & 1)) {
				for (int b = 0; b < 32; b++)
					ok &= out[j][b] == 0xee;
				continue;
			}
			struct tw_hmac_sha256_ctx a, b;

			HMAC(EVP_sha256(), keys[j], (int)kl, msg[j], len[j], ref, &rl);
			ok &= rl == 32 && memcmp(out[j], ref, 32) == 0;
			tw_hmac_sha256_x16_ctx(&k, (unsigned)j, &a);
			tw_hmac_sha256_init(&b, keys[j], kl);
			ok &= memcmp(a.istate, b.istate, 32) == 0 && memcmp(a.ostate, b.ostate, 32) == 0;
		}
	}
	if (!CHECK(ok))
		tw_note("lockstep HMAC differs from OpenSSL (cpu %s)", tw_cpu_level_name());
}

/*
 * The lockstep HMAC leaves no key and no digest on the stack (its AVX-512
 * code spills registers: the spilled copies must be wiped). Sixteen lanes
 * keyed with the same key of 0xA5 octets, so a K0 ^ ipad register is 64
 * octets of 0x93 (0xF9 for opad) whatever the lane order; the stack the
 * calls used is then scanned for those and for the digest
 * (tw_test_stack_copies).
 */
static uint8_t x16_digest[32];

/* Sixteen lanes keyed alike (32 octets of 0xA5), each with one padded
 * block of an empty message after the key, digests into o. */
static void x16_inputs(uint8_t kk[32], uint8_t m[64], const uint8_t *key[16],
		       const uint8_t *blk[16], size_t nb[16], uint8_t *out[16], uint8_t o[16][32])
{
	memset(kk, 0xA5, 32);
	memset(m, 0, 64);
	(void)tw_sha256_pad_after_key(m, 10, 64);
	for (int j = 0; j < 16; j++) {
		key[j] = kk;
		blk[j] = m;
		nb[j] = 1;
		out[j] = o[j];
	}
}

static __attribute__((noinline)) void x16_secret_calls(bool padded)
{
	struct tw_hmac_sha256_x16 k;
	const uint8_t *key[16], *blk[16];
	uint8_t *out[16], kk[32], m[64], o[16][32];
	size_t nb[16];

	x16_inputs(kk, m, key, blk, nb, out, o);
	tw_hmac_sha256_x16_init(&k, key, 32, 0xffff);
	if (padded) {
		tw_hmac_sha256_x16_padded(&k, blk, nb, out, 0xffff);
		memcpy(x16_digest, o[0], 32);
	}
	tw_wipe(&k, sizeof(k));
	tw_wipe(kk, sizeof(kk));
	tw_wipe(o, sizeof(o));
}

static void x16_no_stack_residue(void)
{
	int hits;

	uint8_t ipad[64], opad[64];

	memset(ipad, 0x93, sizeof(ipad)); /* 0xA5 ^ 0x36 */
	memset(opad, 0xf9, sizeof(opad)); /* 0xA5 ^ 0x5c */
	/* the keying alone, then with a message (which reuses that stack) */
	x16_secret_calls(false);
	hits = tw_test_stack_copies(ipad, sizeof(ipad));
	x16_secret_calls(false);
	hits += tw_test_stack_copies(opad, sizeof(opad));
	x16_secret_calls(true);
	hits += tw_test_stack_copies(ipad, sizeof(ipad));
	x16_secret_calls(true);
	hits += tw_test_stack_copies(x16_digest, 16);
	if (!CHECK(hits == 0))
		tw_note("lockstep HMAC: %d copies of a key or digest left on the stack", hits);
}

/*
 * What the AVX-512 lanes leave in the vector registers: after the
 * lockstep HMAC's keying, after a message through it, and after
 * tw_sha256_mb over 16 jobs, none of the registers may hold a word of a
 * keyed state (every lane keyed alike here, so a register of chaining
 * words holds each sixteen times), of K0 ^ ipad / opad (key octets 0xA5:
 * words 0x93939393, 0xF9F9F9F9), of a digest or of a job's result.
 * Only where the kernels run (AVX-512 and no lower TWAG_CPU level): the
 * fallback is C over the lanes' arrays, whose compiled loops may keep
 * words in vector registers as any C code handling keys may (an ASan
 * build's do); its SHA-NI and portable block functions are checked by
 * one_stream_no_reg_residue.
 */
static void x16_no_reg_residue(void)
{
	struct tw_hmac_sha256_x16 k;
	struct tw_sha256_job jobs[16];
	const uint8_t *key[16], *blk[16];
	uint8_t *out[16], kk[32], m[64], o[16][32], regs[32][64], sm[64];
	uint32_t w[8 + 8 + 2];
	size_t nb[16];
	int hits = 0, nreg;

	if (!tw_cpu_has(TW_CPU_AVX512))
		return;
	x16_inputs(kk, m, key, blk, nb, out, o);
	tw_hmac_sha256_x16_init(&k, key, 32, 0xffff);
	nreg = tw_test_vec_regs(regs);
	for (int i = 0; i < 8; i++) {
		w[i] = k.ist[i][0];
		w[8 + i] = k.ost[i][0];
	}
	w[16] = 0x93939393u;
	w[17] = 0xf9f9f9f9u;
	hits += tw_test_regs_words(regs, w, 18);
	tw_hmac_sha256_x16_padded(&k, blk, nb, out, 0xffff);
	(void)tw_test_vec_regs(regs);
	hits += tw_test_regs_words(regs, w, 18);
	for (int i = 0; i < 8; i++)
		w[i] = tw_load_be32(o[0] + 4 * i);
	hits += tw_test_regs_words(regs, w, 8);
	/* the general multi-buffer entry: one block of 0xA5 octets each */
	memset(sm, 0xA5, sizeof(sm));
	for (int j = 0; j < 16; j++) {
		for (int i = 0; i < 8; i++)
			jobs[j].h[i] = tw_sha256_iv[i];
		memset(jobs[j].nblk, 0, sizeof(jobs[j].nblk));
		jobs[j].seg[0] = sm;
		jobs[j].nblk[0] = 1;
	}
	tw_sha256_mb(jobs, 16);
	(void)tw_test_vec_regs(regs);
	hits += tw_test_regs_words(regs, jobs[0].h, 8);
	if (!CHECK(hits == 0))
		tw_note("lockstep SHA-256: %d words of keyed states, keys or digests left in the "
			"%d vector registers", hits, nreg);
	tw_wipe(&k, sizeof(k));
	tw_wipe(o, sizeof(o));
	tw_wipe(regs, sizeof(regs));
}

/* FIPS 180-4 §6.2.2 step 1: the message schedule of one block. */
static void sha256_schedule(const uint8_t blk[64], uint32_t w[64])
{
#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
	for (int t = 0; t < 16; t++)
		w[t] = tw_load_be32(blk + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ROTR(w[t - 15], 7) ^ ROTR(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ROTR(w[t - 2], 17) ^ ROTR(w[t - 2], 19) ^ (w[t - 2] >> 10);

		w[t] = s1 + w[t - 7] + s0 + w[t - 16];
	}
#undef ROTR
}

/* The block below, hashed by tw_sha256_blocks, from a frame of its own
 * (so that the caller's scan sees the stack the call used). */
static __attribute__((noinline)) void sha256_secret_block(const uint8_t blk[64])
{
	uint32_t h[8];

	memcpy(h, tw_sha256_iv, sizeof(h));
	tw_sha256_blocks(h, blk, 1);
	tw_wipe(h, sizeof(h));
}

/*
 * The one-message kernels (SHA-NI where the CPU has it and TWAG_CPU
 * allows, else portable): after a block of a secret message, neither its
 * words nor the resulting chaining value may be left in the vector
 * registers. (The block is not a memset pattern: libc's memset leaves its
 * fill value in a vector register of its own.)
 */
static void one_stream_no_reg_residue(void)
{
	uint8_t blk[64], regs[32][64];
	uint32_t h1[5], h2[8], w[16 + 8];
	int hits, nreg;

	for (int i = 0; i < 64; i++)
		blk[i] = (uint8_t)(0xA5 ^ (i * 7));
	for (int i = 0; i < 16; i++)
		w[8 + i] = tw_load_be32(blk + 4 * i);
	memcpy(h2, tw_sha256_iv, sizeof(h2));
	tw_sha256_blocks(h2, blk, 1);
	nreg = tw_test_vec_regs(regs);
	memcpy(w, h2, sizeof(h2));
	hits = tw_test_regs_words(regs, w, 24);
	h1[0] = 0x67452301u; /* FIPS 180-4 §5.3.1 */
	h1[1] = 0xefcdab89u;
	h1[2] = 0x98badcfeu;
	h1[3] = 0x10325476u;
	h1[4] = 0xc3d2e1f0u;
	tw_sha1_blocks(h1, blk, 1);
	(void)tw_test_vec_regs(regs);
	memcpy(w + 3, h1, sizeof(h1)); /* w[8..23]: the message words still */
	hits += tw_test_regs_words(regs, w + 3, 21);
	if (!CHECK(hits == 0))
		tw_note("SHA-1/SHA-256 blocks: %d words of a message or chaining value left in the "
			"%d vector registers", hits, nreg);
	tw_wipe(regs, sizeof(regs));
	{
		/* nor on the stack: the last schedule words (W[48..63] give
		 * back the whole block, run backwards), four at a time as a
		 * vector register holds them */
		uint32_t sch[64];
		uint8_t pat[16];

		sha256_schedule(blk, sch);
		sha256_secret_block(blk);
		hits = 0;
		for (int q = 48; q < 64; q += 4) {
			for (int i = 0; i < 4; i++)
				tw_store_le32(pat + 4 * i, sch[q + i]);
			hits += tw_test_stack_copies(pat, sizeof(pat));
		}
		if (!CHECK(hits == 0))
			tw_note("SHA-256 blocks: %d runs of four schedule words left on the stack",
				hits);
		tw_wipe(sch, sizeof(sch));
	}
}

void test_main(void)
{
	CHECK(tv_run_file("sha.vec", sha_case) >= 10);
	CHECK(tv_run_file("hmac.vec", hmac_case) >= 14);
	cross_sha();
	cross_hmac();
	portable_vs_shani();
	multi_buffer();
	x16_hmac();
	x16_no_stack_residue();
	x16_no_reg_residue();
	one_stream_no_reg_residue();
}
