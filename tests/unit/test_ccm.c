/*
 * Tests of AES-CCM (NIST SP 800-38C, RFC 3610): the RFC 3610 packet
 * vectors and SP 800-38C examples on every implementation (portable,
 * AES-NI single frame, AES-NI 4-lane and VAES 16-lane batches), in place
 * and out of place; OpenSSL EVP aes-128-ccm / aes-256-ccm on random
 * inputs of every length 0..600 plus 1500 and 4096; batches of mixed
 * frames against single-frame results; and the bad-input cases.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/ccm.h"
#include "twag/cpu.h"
#include "twag/err.h"

/* CPU masks selecting each path: portable, AES-NI (single frame and 4
 * lanes), everything (VAES 16 lanes where present). */
static uint32_t masks[3];
static int n_masks;

static void masks_setup(void)
{
	masks[0] = 0;
	n_masks = 1;
	if (tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41))
		masks[n_masks++] = TW_CPU_AESNI | TW_CPU_SSE41 | TW_CPU_PCLMUL;
	if (tw_cpu_has(TW_CPU_VAES | TW_CPU_AVX512))
		masks[n_masks++] = UINT32_MAX;
}

enum { BIG = 4096 + 64 };

/* Encrypts with the batch API: the frame plus `extra` independent copies,
 * so the lane kernels (4 or 16 lanes) run with all lanes busy. */
static int batch_enc(const struct tw_aes_ctx *aes, const uint8_t *nonce, size_t nl,
		     const uint8_t *aad, size_t al, const uint8_t *in, uint8_t *out,
		     size_t len, uint8_t *tag, size_t tl, int copies)
{
	static uint8_t bufs[16][BIG];
	static uint8_t tags[16][16];
	struct tw_ccm_op ops[16];
	int err;

	for (int i = 0; i < copies; i++) {
		memcpy(bufs[i], in, len);
		ops[i] = (struct tw_ccm_op){ aes, nonce, nl, aad, al, bufs[i], bufs[i], len,
					     tags[i], tl, 0 };
	}
	err = tw_ccm_encrypt_batch(ops, (size_t)copies);
	memcpy(out, bufs[0], len);
	memcpy(tag, tags[0], tl);
	for (int i = 1; i < copies; i++) {
		CHECK_MEM(bufs[i], bufs[0], len);
		CHECK_MEM(tags[i], tags[0], tl);
	}
	return err;
}

static void run_vector(const struct tv_case *c)
{
	uint8_t key[32], nonce[16], aad[64], pt[64], ct[64], tag[16], got[64], gtag[16];
	size_t kl = tv_hex(c, "key", key, sizeof(key));
	size_t nl = tv_hex(c, "nonce", nonce, sizeof(nonce));
	size_t al = tv_has(c, "aad") ? tv_hex(c, "aad", aad, sizeof(aad)) : 0;
	size_t pl = tv_hex(c, "plaintext", pt, sizeof(pt));
	size_t cl = tv_hex(c, "ciphertext", ct, sizeof(ct));
	size_t tl = tv_hex(c, "tag", tag, sizeof(tag));

	CHECK(pl == cl);
	for (int m = 0; m < n_masks; m++) {
		struct tw_aes_ctx aes;

		tw_cpu_restrict(masks[m]);
		if (!CHECK_OK(tw_aes_init_enc(&aes, key, kl)))
			continue;
		/* Out of place, then in place. */
		CHECK_OK(tw_ccm_encrypt(&aes, nonce, nl, aad, al, pt, got, pl, gtag, tl));
		TV_EXPECT(c, "ciphertext", got, pl);
		TV_EXPECT(c, "tag", gtag, tl);
		memcpy(got, pt, pl);
		CHECK_OK(tw_ccm_encrypt(&aes, nonce, nl, aad, al, got, got, pl, gtag, tl));
		TV_EXPECT(c, "ciphertext", got, pl);
		CHECK_OK(tw_ccm_decrypt(&aes, nonce, nl, aad, al, ct, got, cl, tag, tl));
		TV_EXPECT(c, "plaintext", got, pl);
		memcpy(got, ct, cl);
		CHECK_OK(tw_ccm_decrypt(&aes, nonce, nl, aad, al, got, got, cl, tag, tl));
		TV_EXPECT(c, "plaintext", got, pl);
		/* Batches: 1, 4 and 16 copies reach every kernel. */
		for (int copies = 1; copies <= 16; copies *= 4) {
			memset(got, 0, sizeof(got));
			CHECK_OK(batch_enc(&aes, nonce, nl, aad, al, pt, got, pl, gtag, tl, copies));
			TV_EXPECT(c, "ciphertext", got, pl);
			TV_EXPECT(c, "tag", gtag, tl);
		}
		/* A flipped tag, ciphertext, aad or nonce bit: TW_ERR_AUTH and
		 * nothing of the plaintext released. */
		for (int what = 0; what < 4; what++) {
			uint8_t t2[16], c2[64], a2[64], n2[16];

			memcpy(t2, tag, tl);
			memcpy(c2, ct, cl);
			memcpy(a2, aad, al);
			memcpy(n2, nonce, nl);
			if (what == 0)
				t2[tl - 1] ^= 0x01;
			else if (what == 1)
				c2[cl / 2] ^= 0x80;
			else if (what == 2)
				a2[0] ^= 0x04;
			else
				n2[nl - 1] ^= 0x10;
			memset(got, 0xa5, sizeof(got));
			CHECK_ERR(tw_ccm_decrypt(&aes, n2, nl, a2, al, c2, got, cl, t2, tl),
				  TW_ERR_AUTH);
			CHECK(tw_ct_is_zero(got, cl));
		}
		tw_aes_wipe(&aes);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* SP 800-38C C.4: 65536 octets of aad (bytes 00..ff repeated) reach the
 * 0xfffe || [a]_32 encoding of A.2.2. */
static void test_sp800_38c_c4(void)
{
	static uint8_t aad[65536];
	uint8_t key[16], nonce[13], pt[32], exp_ct[32], exp_tag[14], got[32], tag[14];

	for (size_t i = 0; i < sizeof(aad); i++)
		aad[i] = (uint8_t)i;
	tw_test_hex(key, sizeof(key), "404142434445464748494a4b4c4d4e4f");
	tw_test_hex(nonce, sizeof(nonce), "101112131415161718191a1b1c");
	tw_test_hex(pt, sizeof(pt), "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f");
	/* source: NIST SP 800-38C (2004) Appendix C.4, Example 4 */
	tw_test_hex(exp_ct, sizeof(exp_ct), "69915dad1e84c6376a68c2967e4dab615ae0fd1faec44cc484828529463ccf72");
	tw_test_hex(exp_tag, sizeof(exp_tag), "b4ac6bec93e8598e7f0dadbcea5b");
	for (int m = 0; m < n_masks; m++) {
		struct tw_aes_ctx aes;

		tw_cpu_restrict(masks[m]);
		CHECK_OK(tw_aes_init_enc(&aes, key, 16));
		CHECK_OK(tw_ccm_encrypt(&aes, nonce, 13, aad, sizeof(aad), pt, got, 32, tag, 14));
		CHECK_MEM(got, exp_ct, 32);
		CHECK_MEM(tag, exp_tag, 14);
		CHECK_OK(tw_ccm_decrypt(&aes, nonce, 13, aad, sizeof(aad), exp_ct, got, 32, exp_tag, 14));
		CHECK_MEM(got, pt, 32);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- OpenSSL cross-check ---- */

static bool evp_ccm(const uint8_t *key, size_t kl, const uint8_t *nonce, size_t nl,
		    const uint8_t *aad, size_t al, const uint8_t *in, uint8_t *out,
		    size_t len, uint8_t *tag, size_t tl)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t dummy[1];
	int ol;
	bool ok = c != NULL &&
		  EVP_EncryptInit_ex(c, kl == 16 ? EVP_aes_128_ccm() : EVP_aes_256_ccm(),
				     NULL, NULL, NULL) &&
		  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)nl, NULL) &&
		  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tl, NULL) &&
		  EVP_EncryptInit_ex(c, NULL, NULL, key, nonce) &&
		  EVP_EncryptUpdate(c, NULL, &ol, NULL, (int)len) &&
		  (al == 0 || EVP_EncryptUpdate(c, NULL, &ol, aad, (int)al)) &&
		  EVP_EncryptUpdate(c, len ? out : dummy, &ol, len ? in : dummy, (int)len) &&
		  EVP_EncryptFinal_ex(c, dummy, &ol) &&
		  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)tl, tag);

	EVP_CIPHER_CTX_free(c);
	return ok;
}

struct rnd_frame {
	uint8_t key[32], nonce[13], aad[320], tag[16];
	size_t kl, nl, al, tl;
};

static void rnd_frame(struct rnd_frame *f, size_t len)
{
	tw_test_random(f->key, sizeof(f->key));
	tw_test_random(f->nonce, sizeof(f->nonce));
	tw_test_random(f->aad, sizeof(f->aad));
	f->kl = tw_test_random_u32() % 2 ? 32 : 16;
	f->tl = 4 + 2 * (tw_test_random_u32() % 7);
	f->nl = 7 + tw_test_random_u32() % 7;
	/* q = 15 - n octets must hold len. */
	while (f->nl > 13 || (15 - f->nl < 8 && (uint64_t)len >> (8 * (15 - f->nl)) != 0))
		f->nl--;
	uint32_t r = tw_test_random_u32() % 8;
	f->al = r == 0 ? 0 : r == 1 ? 300 + tw_test_random_u32() % 20 : tw_test_random_u32() % 40;
}

static void test_openssl(void)
{
	static uint8_t pt[BIG], ref[BIG], got[BIG];
	bool all = true, evp_ok = true;
	unsigned cases = 0;

	for (size_t len = 0; len <= 4096; len = len < 600 ? len + 1 : len < 1500 ? 1500 : 4096) {
		struct rnd_frame f;
		uint8_t rtag[16], gtag[16];

		rnd_frame(&f, len);
		tw_test_random(pt, len);
		evp_ok &= evp_ccm(f.key, f.kl, f.nonce, f.nl, f.aad, f.al, pt, ref, len, rtag, f.tl);
		for (int m = 0; m < n_masks; m++) {
			struct tw_aes_ctx aes;

			tw_cpu_restrict(masks[m]);
			all &= tw_aes_init_enc(&aes, f.key, f.kl) == TW_OK;
			all &= tw_ccm_encrypt(&aes, f.nonce, f.nl, f.aad, f.al, pt, got, len,
					      gtag, f.tl) == TW_OK;
			all &= memcmp(got, ref, len) == 0 && memcmp(gtag, rtag, f.tl) == 0;
			all &= tw_ccm_decrypt(&aes, f.nonce, f.nl, f.aad, f.al, got, got, len,
					      gtag, f.tl) == TW_OK;
			all &= memcmp(got, pt, len) == 0;
			all &= batch_enc(&aes, f.nonce, f.nl, f.aad, f.al, pt, got, len, gtag,
					 f.tl, 16) == TW_OK;
			all &= memcmp(got, ref, len) == 0 && memcmp(gtag, rtag, f.tl) == 0;
			if (!all) {
				tw_note("ccm vs OpenSSL: len %zu nonce %zu aad %zu tag %zu key %zu mask %x",
					len, f.nl, f.al, f.tl, f.kl, masks[m]);
				break;
			}
		}
		cases++;
		if (!all || len == 4096)
			break;
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK(evp_ok);
	CHECK(all);
	CHECK(cases == 603);
}

/* ---- batches of mixed frames ---- */

enum { NB = 53 };

static void test_batch_mixed(void)
{
	static uint8_t pt[NB][1600], ct[NB][1600], buf[NB][1600];
	static struct rnd_frame f[NB];
	static size_t len[NB];
	static uint8_t rtag[NB][16];
	struct tw_aes_ctx aes[NB];
	struct tw_ccm_op ops[NB];

	for (int i = 0; i < NB; i++) {
		/* Mostly short frames, some long, some empty. */
		uint32_t r = tw_test_random_u32();
		len[i] = r % 5 == 0 ? 1500 + r % 90 : r % 7 == 0 ? 0 : r % 200;
		rnd_frame(&f[i], len[i]);
		tw_test_random(pt[i], len[i]);
		CHECK(evp_ccm(f[i].key, f[i].kl, f[i].nonce, f[i].nl, f[i].aad, f[i].al, pt[i],
			      ct[i], len[i], rtag[i], f[i].tl));
	}
	for (int m = 0; m < n_masks; m++) {
		bool enc_ok = true, dec_ok = true;

		tw_cpu_restrict(masks[m]);
		for (int i = 0; i < NB; i++) {
			/* Every fifth key is made on the portable path: the batch
			 * must route it to the single-frame code. */
			if (i % 5 == 4)
				tw_cpu_restrict(0);
			CHECK_OK(tw_aes_init_enc(&aes[i], f[i].key, f[i].kl));
			tw_cpu_restrict(masks[m]);
			memcpy(buf[i], pt[i], len[i]);
			ops[i] = (struct tw_ccm_op){ &aes[i], f[i].nonce, f[i].nl, f[i].aad, f[i].al,
						     buf[i], buf[i], len[i], f[i].tag, f[i].tl, 99 };
		}
		CHECK_OK(tw_ccm_encrypt_batch(ops, NB));
		for (int i = 0; i < NB; i++) {
			enc_ok &= ops[i].status == TW_OK;
			enc_ok &= memcmp(buf[i], ct[i], len[i]) == 0;
			enc_ok &= memcmp(f[i].tag, rtag[i], f[i].tl) == 0;
		}
		CHECK(enc_ok);
		/* Decrypt in place with frames 3 and 40 forged. */
		f[3].tag[0] ^= 1;
		buf[40][len[40] > 0 ? len[40] - 1 : 0] ^= 2;
		if (len[40] == 0)
			f[40].tag[1] ^= 1;
		CHECK_ERR(tw_ccm_decrypt_batch(ops, NB), TW_ERR_AUTH);
		for (int i = 0; i < NB; i++) {
			if (i == 3 || i == 40) {
				dec_ok &= ops[i].status == TW_ERR_AUTH;
				dec_ok &= tw_ct_is_zero(buf[i], len[i]);
			} else {
				dec_ok &= ops[i].status == TW_OK;
				dec_ok &= memcmp(buf[i], pt[i], len[i]) == 0;
			}
		}
		CHECK(dec_ok);
		f[3].tag[0] ^= 1;
		if (len[40] == 0)
			f[40].tag[1] ^= 1;
		/* Out of place, decrypting the reference ciphertexts. */
		for (int i = 0; i < NB; i++) {
			memset(buf[i], 0, sizeof(buf[i]));
			ops[i].in = ct[i];
		}
		CHECK_OK(tw_ccm_decrypt_batch(ops, NB));
		dec_ok = true;
		for (int i = 0; i < NB; i++)
			dec_ok &= memcmp(buf[i], pt[i], len[i]) == 0;
		CHECK(dec_ok);
	}
	tw_cpu_restrict(UINT32_MAX);
}

/*
 * Groups of the VAES encryption path (tw_ccm_vaes_enc16): frames of
 * nearly equal length (so they run as sixteen-lane groups rather than
 * through the refilling scheduler), every aad length 0..46 (one to three
 * encoded blocks, every tail of each), nonce 7..13, tag 4..16, AES-128
 * and AES-256 keys mixed, ragged tails (lanes ending in different
 * blocks), in place and out of place, against OpenSSL EVP.
 */
enum { NG = 40 };

static void test_groups(void)
{
	enum { GL = 4400 };
	static uint8_t pt[NG][GL], ct[NG][GL], buf[NG][GL], got[NG][GL];
	static struct rnd_frame f[NG];
	static uint8_t rtag[NG][16], gtag[NG][16];
	struct tw_aes_ctx aes[NG];
	struct tw_ccm_op ops[NG];
	static const size_t counts[] = { 5, 16, 17, 23, 40 };
	bool evp_ok = true, ok = true;

	/*
	 * Rounds 12..15 are the counter's carry edge of the VAES group: up to
	 * 255 blocks per lane (4065..4080 octets) the kernel increments only
	 * the counter's last octet; 4081..4096 and longer mixes (up to 4399)
	 * take the byte-swapping form, where Ctr_256 carries into octet 14.
	 */
	static const size_t edge[4][2] = { { 4065, 16 }, { 4081, 16 }, { 4000, 400 }, { 4080, 1 } };

	for (unsigned round = 0; round < 16; round++) {
		size_t base = round < 4 ? 16 * round : round < 12 ? 1300 + 20 * round
							     : edge[round - 12][0];
		size_t span = round < 4 ? 17 : round < 12 ? 60 : edge[round - 12][1];

		for (int i = 0; i < NG; i++) {
			size_t len = base + tw_test_random_u32() % span;

			rnd_frame(&f[i], len);
			f[i].al = (size_t)(i + round) % 47;
			f[i].tl = 4 + 2 * ((size_t)(i + round) % 7);
			tw_test_random(pt[i], len);
			evp_ok &= evp_ccm(f[i].key, f[i].kl, f[i].nonce, f[i].nl, f[i].aad, f[i].al,
					  pt[i], ct[i], len, rtag[i], f[i].tl);
			CHECK_OK(tw_aes_init_enc(&aes[i], f[i].key, f[i].kl));
			ops[i] = (struct tw_ccm_op){ &aes[i], f[i].nonce, f[i].nl, f[i].aad, f[i].al,
						     pt[i], got[i], len, gtag[i], f[i].tl, 99 };
		}
		size_t n = counts[round % 5];
		bool inplace = round % 2;

		for (size_t i = 0; i < n; i++) {
			memset(got[i], 0xee, sizeof(got[i]));
			if (inplace) {
				memcpy(buf[i], pt[i], ops[i].len);
				ops[i].in = ops[i].out = buf[i];
			}
		}
		ok &= tw_ccm_encrypt_batch(ops, n) == TW_OK;
		for (size_t i = 0; i < n; i++) {
			const uint8_t *o = inplace ? buf[i] : got[i];

			ok &= ops[i].status == TW_OK;
			ok &= memcmp(o, ct[i], ops[i].len) == 0;
			ok &= memcmp(gtag[i], rtag[i], f[i].tl) == 0;
			/* Nothing written past the frame's end. */
			ok &= inplace || got[i][ops[i].len] == 0xee;
		}
		if (!ok) {
			tw_note("group round %u (n %zu, base %zu) differs from OpenSSL", round, n, base);
			break;
		}
	}
	for (int i = 0; i < NG; i++)
		tw_aes_wipe(&aes[i]);
	CHECK(evp_ok);
	CHECK(ok);
}

static void test_bad_input(void)
{
	static uint8_t big[65536 + 16];
	uint8_t key[16] = { 0 }, nonce[13] = { 0 }, tag[16], buf[32] = { 0 };
	struct tw_aes_ctx aes;
	struct tw_ccm_op op;

	CHECK_OK(tw_aes_init_enc(&aes, key, 16));
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 6, NULL, 0, buf, buf, 16, tag, 8), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 14, NULL, 0, buf, buf, 16, tag, 8), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, buf, buf, 16, tag, 3), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, buf, buf, 16, tag, 5), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, buf, buf, 16, tag, 18), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccm_decrypt(&aes, nonce, 13, NULL, 0, buf, buf, 16, tag, 2), TW_ERR_LENGTH);
	/* q = 2: a 65536-octet payload does not fit the length field. */
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, big, big, 65536, tag, 8), TW_ERR_LENGTH);
	CHECK_OK(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, big, big, 65535, tag, 8));
	CHECK_OK(tw_ccm_encrypt(&aes, nonce, 12, NULL, 0, big, big, 65536, tag, 8));
	CHECK_ERR(tw_ccm_encrypt(NULL, nonce, 13, NULL, 0, buf, buf, 16, tag, 8), TW_ERR_INVAL);
	CHECK_ERR(tw_ccm_encrypt(&aes, NULL, 13, NULL, 0, buf, buf, 16, tag, 8), TW_ERR_INVAL);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 4, buf, buf, 16, tag, 8), TW_ERR_INVAL);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, NULL, buf, 16, tag, 8), TW_ERR_INVAL);
	CHECK_ERR(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, buf, buf, 16, NULL, 8), TW_ERR_INVAL);
	CHECK_OK(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, NULL, NULL, 0, tag, 8));
	CHECK_ERR(tw_ccm_encrypt_batch(NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_ccm_encrypt_batch(NULL, 0));
	op = (struct tw_ccm_op){ &aes, nonce, 5, NULL, 0, buf, buf, 16, tag, 8, 0 };
	CHECK_ERR(tw_ccm_encrypt_batch(&op, 1), TW_ERR_LENGTH);
	CHECK(op.status == TW_ERR_LENGTH);
	/* The tag checked at another valid length does not verify. */
	CHECK_OK(tw_ccm_encrypt(&aes, nonce, 13, NULL, 0, buf, buf, 32, tag, 8));
	CHECK_ERR(tw_ccm_decrypt(&aes, nonce, 13, NULL, 0, buf, buf, 32, tag, 10), TW_ERR_AUTH);
	CHECK(tw_ct_is_zero(buf, 32));
}

void test_main(void)
{
	masks_setup();
	CHECK(tv_run_file("ccm_rfc3610.vec", run_vector) == 27);
	test_sp800_38c_c4();
	test_openssl();
	test_batch_mixed();
	test_groups();
	test_bad_input();
}
