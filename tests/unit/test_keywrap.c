/*
 * Tests of AES key wrap (RFC 3394) and key wrap with padding (RFC 5649):
 * the RFC vectors on every AES implementation, tampering and length abuse,
 * RFC 5649 AIV/MLI/padding checks on crafted inputs, and OpenSSL EVP's
 * id-aes*-wrap / -wrap-pad on random KEKs and key lengths.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/err.h"
#include "twag/keywrap.h"

static uint32_t impl_mask[2];
static int n_impl;

typedef int (*wrap_fn)(uint8_t *, size_t, size_t *, const uint8_t *, size_t,
		       const uint8_t *, size_t);

/* ---- OpenSSL EVP reference ---- */

static const EVP_CIPHER *evp_wrap(size_t klen, bool pad)
{
	if (pad)
		return klen == 16 ? EVP_aes_128_wrap_pad()
		       : klen == 24 ? EVP_aes_192_wrap_pad()
				    : EVP_aes_256_wrap_pad();
	return klen == 16 ? EVP_aes_128_wrap() : klen == 24 ? EVP_aes_192_wrap()
							    : EVP_aes_256_wrap();
}

/* Wraps (enc = 1) or unwraps with EVP; iv NULL for the RFC default, or an
 * explicit 8-byte IV (4-byte for -pad). Returns the output length or -1. */
static int evp_kw(bool pad, int enc, const uint8_t *kek, size_t klen,
		  const uint8_t *iv, uint8_t *out, const uint8_t *in, size_t len)
{
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0, ret = -1;

	if (x == NULL)
		return -1;
	EVP_CIPHER_CTX_set_flags(x, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (EVP_CipherInit_ex(x, evp_wrap(klen, pad), NULL, kek, iv, enc) == 1 &&
	    EVP_CipherUpdate(x, out, &l1, in, (int)len) == 1 && l1 >= 0 &&
	    EVP_CipherFinal_ex(x, out + l1, &l2) == 1)
		ret = l1 + l2;
	EVP_CIPHER_CTX_free(x);
	return ret;
}

/* ---- vectors ---- */

static void run_vector(const struct tv_case *c)
{
	uint8_t kek[32], key[64], wrapped[72], out[80], buf[80];
	size_t kl = tv_hex(c, "kek", kek, sizeof(kek));
	size_t n = tv_hex(c, "key", key, sizeof(key));
	size_t wl = tv_hex(c, "wrapped", wrapped, sizeof(wrapped));
	const char *v = tv_str(c, "variant");
	bool pad = v != NULL && strcmp(v, "kwp") == 0;
	wrap_fn wrap = pad ? tw_keywrap_wrap_pad : tw_keywrap_wrap;
	wrap_fn unwrap = pad ? tw_keywrap_unwrap_pad : tw_keywrap_unwrap;
	size_t got;

	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		got = 0;
		CHECK_OK(wrap(out, sizeof(out), &got, kek, kl, key, n));
		CHECK(got == wl);
		TV_EXPECT(c, "wrapped", out, got);
		got = 0;
		CHECK_OK(unwrap(out, sizeof(out), &got, kek, kl, wrapped, wl));
		CHECK(got == n);
		TV_EXPECT(c, "key", out, got);

		/* In place, and with exactly the room needed. */
		memcpy(buf, key, n);
		size_t need = pad ? ((n + 7) & ~(size_t)7) + 8 : n + 8;
		CHECK_OK(wrap(buf, need, &got, kek, kl, buf, n));
		TV_EXPECT(c, "wrapped", buf, got);
		CHECK_OK(unwrap(buf, wl - 8, &got, kek, kl, buf, wl));
		TV_EXPECT(c, "key", buf, got);

		/* One byte too little room: overflow, before any work. */
		CHECK_ERR(wrap(out, need - 1, &got, kek, kl, key, n), TW_ERR_OVERFLOW);
		CHECK(got == 0);
		CHECK_ERR(unwrap(out, wl - 9, &got, kek, kl, wrapped, wl),
			  TW_ERR_OVERFLOW);

		/* With an expanded KEK. */
		struct tw_aes_ctx ctx;
		if (CHECK_OK(tw_aes_init_any(&ctx, kek, kl))) {
			CHECK_OK(pad ? tw_keywrap_wrap_pad_ctx(&ctx, out, sizeof(out), &got, key, n)
				     : tw_keywrap_wrap_ctx(&ctx, out, sizeof(out), &got, key, n));
			TV_EXPECT(c, "wrapped", out, got);
			CHECK_OK(pad ? tw_keywrap_unwrap_pad_ctx(&ctx, out, sizeof(out), &got, wrapped, wl)
				     : tw_keywrap_unwrap_ctx(&ctx, out, sizeof(out), &got, wrapped, wl));
			TV_EXPECT(c, "key", out, got);
			tw_aes_wipe(&ctx);
		}

		/* Every single-bit flip of the wrapped key is caught, and the
		 * output is zeroed. */
		bool all_auth = true, all_zero = true;
		for (size_t bit = 0; bit < 8 * wl; bit++) {
			memcpy(buf, wrapped, wl);
			buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			memset(out, 0x55, sizeof(out));
			got = 99;
			all_auth &= unwrap(out, sizeof(out), &got, kek, kl, buf, wl) ==
				    TW_ERR_AUTH && got == 0;
			all_zero &= tw_ct_is_zero(out, wl - 8) && out[wl - 8] == 0x55;
		}
		CHECK(all_auth);
		CHECK(all_zero);
		/* A wrong KEK is caught too. */
		kek[0] ^= 0x80;
		CHECK_ERR(unwrap(out, sizeof(out), &got, kek, kl, wrapped, wl), TW_ERR_AUTH);
		kek[0] ^= 0x80;
		/* The other variant's unwrap rejects it (different IV). */
		if (wl >= 24)
			CHECK_ERR((pad ? tw_keywrap_unwrap : tw_keywrap_unwrap_pad)(
					  out, sizeof(out), &got, kek, kl, wrapped, wl),
				  TW_ERR_AUTH);
		/* Truncations: not a multiple of 8, or one semiblock short. */
		for (size_t cut = 1; cut <= 8; cut++) {
			int e = unwrap(out, sizeof(out), &got, kek, kl, wrapped, wl - cut);
			CHECK(e == ((wl - cut) % 8 != 0 || wl - cut < (pad ? 16u : 24u)
					    ? TW_ERR_LENGTH : TW_ERR_AUTH));
		}
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- lengths and arguments ---- */

static void test_lengths(void)
{
	uint8_t kek[32] = { 1 }, key[40] = { 2 }, out[64];
	size_t got;

	for (size_t kl = 0; kl <= 33; kl++) {
		if (kl == 16 || kl == 24 || kl == 32)
			continue;
		CHECK_ERR(tw_keywrap_wrap(out, sizeof(out), &got, kek, kl, key, 16),
			  TW_ERR_LENGTH);
		CHECK_ERR(tw_keywrap_unwrap(out, sizeof(out), &got, kek, kl, key, 24),
			  TW_ERR_LENGTH);
		CHECK_ERR(tw_keywrap_wrap_pad(out, sizeof(out), &got, kek, kl, key, 5),
			  TW_ERR_LENGTH);
		CHECK_ERR(tw_keywrap_unwrap_pad(out, sizeof(out), &got, kek, kl, key, 16),
			  TW_ERR_LENGTH);
	}
	/* RFC 3394: n >= 2 semiblocks of key, whole semiblocks only. */
	static const size_t bad_kw[] = { 0, 1, 7, 8, 9, 15, 17, 23, 33 };
	for (size_t i = 0; i < sizeof(bad_kw) / sizeof(bad_kw[0]); i++)
		CHECK_ERR(tw_keywrap_wrap(out, sizeof(out), &got, kek, 16, key, bad_kw[i]),
			  TW_ERR_LENGTH);
	static const size_t bad_unkw[] = { 0, 8, 16, 23, 25, 31, 33 };
	for (size_t i = 0; i < sizeof(bad_unkw) / sizeof(bad_unkw[0]); i++)
		CHECK_ERR(tw_keywrap_unwrap(out, sizeof(out), &got, kek, 16, key, bad_unkw[i]),
			  TW_ERR_LENGTH);
	/* RFC 5649: key 1..2^32-1 octets; wrapped >= 16, whole semiblocks. */
	CHECK_ERR(tw_keywrap_wrap_pad(out, sizeof(out), &got, kek, 16, key, 0),
		  TW_ERR_LENGTH);
	static const size_t bad_unkwp[] = { 0, 8, 15, 17, 23, 39 };
	for (size_t i = 0; i < sizeof(bad_unkwp) / sizeof(bad_unkwp[0]); i++)
		CHECK_ERR(tw_keywrap_unwrap_pad(out, sizeof(out), &got, kek, 16, key,
						bad_unkwp[i]),
			  TW_ERR_LENGTH);
	/* A wrapped length no 32-bit MLI can describe is rejected up front
	 * (the pointer is never read for it). */
	CHECK_ERR(tw_keywrap_unwrap_pad(out, sizeof(out), &got, kek, 16, key,
					((size_t)1 << 32) + 16),
		  TW_ERR_LENGTH);
	/* Output room: 0 and 7 bytes. */
	CHECK_ERR(tw_keywrap_wrap(out, 0, &got, kek, 16, key, 16), TW_ERR_OVERFLOW);
	CHECK_ERR(tw_keywrap_wrap_pad(out, 7, &got, kek, 16, key, 1), TW_ERR_OVERFLOW);
	CHECK_ERR(tw_keywrap_wrap_pad(out, 15, &got, kek, 16, key, 1), TW_ERR_OVERFLOW);
	CHECK_ERR(tw_keywrap_unwrap_pad(out, 7, &got, kek, 16, key, 16), TW_ERR_OVERFLOW);
	/* NULL pointers. */
	CHECK_ERR(tw_keywrap_wrap(NULL, 64, &got, kek, 16, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_keywrap_wrap(out, 64, NULL, kek, 16, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_keywrap_wrap(out, 64, &got, NULL, 16, key, 16), TW_ERR_INVAL);
	CHECK_ERR(tw_keywrap_unwrap_pad(out, 64, &got, kek, 16, NULL, 16), TW_ERR_INVAL);
}

/* ---- RFC 5649 §3 checks on crafted inputs ---- */

/*
 * Builds a KWP-shaped ciphertext with a chosen AIV and padded plaintext,
 * using OpenSSL (its RFC 3394 wrap with an explicit IV for n >= 2, ECB for
 * n = 1), so that only our unwrap_pad's checks decide.
 */
static int craft(const uint8_t *kek, uint8_t *out, const uint8_t aiv[8],
		 const uint8_t *p, size_t plen)
{
	if (plen == 8) {
		uint8_t blk[16];
		EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
		int l = 0, ok;

		memcpy(blk, aiv, 8);
		memcpy(blk + 8, p, 8);
		ok = x != NULL &&
		     EVP_EncryptInit_ex(x, EVP_aes_128_ecb(), NULL, kek, NULL) == 1 &&
		     EVP_CIPHER_CTX_set_padding(x, 0) == 1 &&
		     EVP_EncryptUpdate(x, out, &l, blk, 16) == 1 && l == 16;
		EVP_CIPHER_CTX_free(x);
		return ok ? 16 : -1;
	}
	return evp_kw(false, 1, kek, 16, aiv, out, p, plen);
}

static void test_kwp_checks(void)
{
	uint8_t kek[16], p[24], aiv[8], c[40], out[40];
	size_t got;

	tw_test_random(kek, sizeof(kek));
	for (size_t plen = 8; plen <= 24; plen += 16) {
		size_t n = plen / 8;
		struct {
			uint32_t mli;
			int pad_byte; /* index into p to make non-zero, or -1 */
			uint32_t cst;
			int want;
		} t[] = {
			/* boundaries that must pass: MLI = 8n, 8(n-1)+1 */
			{ (uint32_t)(8 * n), -1, 0xa65959a6, TW_OK },
			{ (uint32_t)(8 * (n - 1) + 1), -1, 0xa65959a6, TW_OK },
			/* MLI out of range */
			{ 0, -1, 0xa65959a6, TW_ERR_AUTH },
			{ (uint32_t)(8 * (n - 1)), -1, 0xa65959a6, TW_ERR_AUTH },
			{ (uint32_t)(8 * n + 1), -1, 0xa65959a6, TW_ERR_AUTH },
			{ 0xffffffffu, -1, 0xa65959a6, TW_ERR_AUTH },
			/* non-zero padding: first and last pad octet */
			{ (uint32_t)(8 * (n - 1) + 1), (int)(8 * (n - 1) + 1),
			  0xa65959a6, TW_ERR_AUTH },
			{ (uint32_t)(8 * (n - 1) + 3), (int)(8 * n - 1),
			  0xa65959a6, TW_ERR_AUTH },
			/* data octet just below MLI may be anything */
			{ (uint32_t)(8 * (n - 1) + 3), (int)(8 * (n - 1) + 2),
			  0xa65959a6, TW_OK },
			/* wrong constant half of the AIV; RFC 3394's IV */
			{ (uint32_t)(8 * n), -1, 0xa65959a7, TW_ERR_AUTH },
			{ 0xa6a6a6a6u, -1, 0xa6a6a6a6, TW_ERR_AUTH },
		};
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			tw_test_random(p, plen);
			/* zero padding after MLI unless the case says otherwise */
			for (size_t k = t[i].mli; k < plen; k++)
				p[k] = 0;
			if (t[i].pad_byte >= 0)
				p[t[i].pad_byte] = 0x01;
			tw_store_be32(aiv, t[i].cst);
			tw_store_be32(aiv + 4, t[i].mli);
			int cl = craft(kek, c, aiv, p, plen);
			if (!CHECK(cl == (int)plen + 8))
				continue;
			for (int m = 0; m < n_impl; m++) {
				tw_cpu_restrict(impl_mask[m]);
				memset(out, 0x55, sizeof(out));
				int e = tw_keywrap_unwrap_pad(out, sizeof(out), &got, kek, 16, c,
							      (size_t)cl);
				CHECK(e == t[i].want);
				if (e == TW_OK)
					CHECK(got == t[i].mli && memcmp(out, p, got) == 0);
				else
					CHECK(got == 0 && tw_ct_is_zero(out, plen));
			}
			tw_cpu_restrict(UINT32_MAX);
		}
	}
}

/* ---- OpenSSL EVP cross-checks on random inputs ---- */

static void test_evp(void)
{
	static const size_t kls[] = { 16, 24, 32 };
	uint8_t kek[32], key[300], ours[320], ref[320], back[320];
	bool evp_ok = true, kw_same = true, kwp_same = true, round = true;
	size_t got;

	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		for (int iter = 0; iter < 150; iter++) {
			size_t kl = kls[iter % 3];

			tw_test_random(kek, kl);
			/* RFC 3394: 16..296 octets in whole semiblocks */
			size_t n = 8 * (2 + tw_test_random_u32() % 36);
			tw_test_random(key, n);
			int rl = evp_kw(false, 1, kek, kl, NULL, ref, key, n);
			evp_ok &= rl == (int)n + 8;
			kw_same &= tw_keywrap_wrap(ours, sizeof(ours), &got, kek, kl, key, n) ==
					   TW_OK &&
				   got == n + 8 && memcmp(ours, ref, got) == 0;
			round &= tw_keywrap_unwrap(back, sizeof(back), &got, kek, kl, ref,
						   n + 8) == TW_OK &&
				 got == n && memcmp(back, key, n) == 0;
			/* RFC 5649: any 1..300 octets */
			n = 1 + tw_test_random_u32() % 300;
			if (iter % 10 == 0)
				n = 1 + tw_test_random_u32() % 8; /* the one-block path */
			tw_test_random(key, n);
			rl = evp_kw(true, 1, kek, kl, NULL, ref, key, n);
			evp_ok &= rl == (int)(((n + 7) & ~(size_t)7) + 8);
			kwp_same &= tw_keywrap_wrap_pad(ours, sizeof(ours), &got, kek, kl, key,
							n) == TW_OK &&
				    got == (size_t)rl && memcmp(ours, ref, got) == 0;
			round &= rl > 0 &&
				 tw_keywrap_unwrap_pad(back, sizeof(back), &got, kek, kl, ref,
						       (size_t)rl) == TW_OK &&
				 got == n && memcmp(back, key, n) == 0;
			/* and OpenSSL unwraps ours */
			round &= evp_kw(true, 0, kek, kl, NULL, back, ours, (size_t)rl) ==
					 (int)n &&
				 memcmp(back, key, n) == 0;
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(evp_ok);
	CHECK(kw_same);
	CHECK(kwp_same);
	CHECK(round);
}

/*
 * tw_keywrap_unwrap2_ctx against OpenSSL: pairs wrapped by EVP (equal and
 * different lengths, AES-128/192/256 KEKs), one or the other or both
 * tampered (each reports its own TW_ERR_AUTH and wipes its output, the
 * other is unaffected), on every implementation here.
 */
static void test_unwrap2(void)
{
	static const size_t kls[] = { 16, 24, 32 };
	uint8_t kek[32], k1[64], k2[64], w1[80], w2[80], o1[80], o2[80];
	bool ok = true;

	for (int m = 0; m < n_impl; m++) {
		tw_cpu_restrict(impl_mask[m]);
		for (int iter = 0; iter < 120; iter++) {
			struct tw_aes_ctx ctx;
			size_t kl = kls[iter % 3], l1 = 8 * (2 + tw_test_random_u32() % 5),
			       l2 = iter % 4 == 0 ? 8 * (2 + tw_test_random_u32() % 5) : l1, n1 = 0,
			       n2 = 0;
			int bad = iter % 5, rc2 = 99, rc;

			tw_test_random(kek, kl);
			tw_test_random(k1, l1);
			tw_test_random(k2, l2);
			ok &= evp_kw(false, 1, kek, kl, NULL, w1, k1, l1) == (int)l1 + 8 &&
			      evp_kw(false, 1, kek, kl, NULL, w2, k2, l2) == (int)l2 + 8;
			if (bad == 1 || bad == 3)
				w1[tw_test_random_u32() % (l1 + 8)] ^= 0x10;
			if (bad == 2 || bad == 3)
				w2[tw_test_random_u32() % (l2 + 8)] ^= 0x01;
			if (!CHECK_OK(tw_aes_init_any(&ctx, kek, kl)))
				return;
			rc = tw_keywrap_unwrap2_ctx(&ctx, o1, sizeof(o1), &n1, w1, l1 + 8, o2,
						    sizeof(o2), &n2, w2, l2 + 8, &rc2);
			if (bad == 1 || bad == 3)
				ok &= rc == TW_ERR_AUTH && n1 == 0;
			else
				ok &= rc == TW_OK && n1 == l1 && memcmp(o1, k1, l1) == 0;
			if (bad == 2 || bad == 3)
				ok &= rc2 == TW_ERR_AUTH && n2 == 0;
			else
				ok &= rc2 == TW_OK && n2 == l2 && memcmp(o2, k2, l2) == 0;
			tw_aes_wipe(&ctx);
		}
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(ok);
}

void test_main(void)
{
	impl_mask[0] = 0;
	n_impl = 1;
	if (tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41))
		impl_mask[n_impl++] = UINT32_MAX;
	CHECK(tv_run_file("keywrap.vec", run_vector) == 8);
	test_lengths();
	test_kwp_checks();
	test_evp();
	test_unwrap2();
}
