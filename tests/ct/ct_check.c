/*
 * Constant-time check under valgrind (the "ctgrind" method): every secret
 * input is marked undefined with a Memcheck client request, then the
 * primitive runs. Memcheck reports any conditional jump or memory address
 * that depends on undefined data, i.e. on a secret. Each primitive passes
 * when it adds no Memcheck error. Outside valgrind the program says so and
 * checks nothing.
 *
 * Run: TWAG_CPU=avx2 valgrind -q build/tests/ct_check  (tests/run.sh does).
 * Covered: the portable paths, the AES-NI/PCLMUL/SHA-NI paths valgrind
 * can execute, and COMP128 v1 on AVX2. Not covered: AVX-512/VAES kernels (valgrind 3.19 cannot run
 * them; among them COMP128 v1 on AVX-512 VBMI, whose memory addresses and
 * branches depend on nothing but the RAND count, by reading), COMP128's
 * table code (table-driven by design, see src/auth/comp128.c), and
 * OpenSSL's curve code behind SUCI.
 */
#include <stdio.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "twag/aes.h"
#include "twag/ccm.h"
#include "twag/comp128.h"
#include "twag/cmac.h"
#include "twag/cpu.h"
#include "twag/des.h"
#include "twag/gcm.h"
#include "twag/gsm.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/keywrap.h"
#include "twag/milenage.h"
#include "twag/sha.h"
#include "twag/tuak.h"

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
/* Results become public once computed (they are sent or compared). */
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

static unsigned passed, failed, wrong;
static int sink; /* keeps statuses alive without branching on secrets */

static void run(const char *name, void (*fn)(void))
{
	unsigned long before = VALGRIND_COUNT_ERRORS;
	unsigned wrong_before = wrong;

	fn();
	if (VALGRIND_COUNT_ERRORS == before && wrong == wrong_before) {
		passed++;
	} else {
		failed++;
		if (VALGRIND_COUNT_ERRORS != before)
			printf("FAIL ct: %s [cpu %s] depends on a secret (see Memcheck above)\n",
			       name, tw_cpu_level_name());
		else
			printf("FAIL ct: %s [cpu %s] gave a wrong result\n", name,
			       tw_cpu_level_name());
	}
}

/*
 * A verifier's status: the accept/reject decision is public, so it is
 * branched on here. A status still derived from a secret (not through
 * tw_ct_eq or a declassification point) is reported by Memcheck at this
 * branch; a wrong one (an altered tag accepted) counts as a failure.
 */
static void expect(int rc, int want, const char *what)
{
	if (rc != want) {
		wrong++;
		printf("FAIL ct: %s returned %d, expected %d\n", what, rc, want);
	}
}

static uint8_t key[32], msg[256], out[512], tag[16];
/* Public data for the verifiers: messages, AAD, received packets. */
static uint8_t pub[512];

static void fill(void)
{
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x3c ^ (i * 7));
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13 + 5);
	for (size_t i = 0; i < sizeof(pub); i++)
		pub[i] = (uint8_t)(i * 29 + 11);
	SECRET(key, sizeof(key));
	SECRET(msg, sizeof(msg));
}

/*
 * Key material of the verifiers: the received input (packet, tag) is
 * built with the key in the clear, as its sender would, so that input is
 * public; only then is the key marked secret and given to the verifier.
 */
static void known(uint8_t *k, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		k[i] = (uint8_t)(seed * 37 + i * 11 + 3);
}

static void ct_aes(void)
{
	struct tw_aes_ctx a;
	uint8_t iv[16] = { 0 };

	for (size_t kl = 16; kl <= 32; kl += 16) {
		sink |= tw_aes_init(&a, key, kl);
		tw_aes_encrypt(&a, out, msg);
		tw_aes_decrypt(&a, out + 16, msg);
		tw_aes_encrypt_blocks(&a, out + 32, msg, 9);
		tw_aes_ctr(&a, iv, out + 256, msg, 77);
		tw_aes_wipe(&a);
	}
}

static void ct_sha_hmac(void)
{
	struct tw_hmac_sha256_ctx h;

	tw_sha1(out, msg, 200);
	tw_sha256(out + 32, msg, 200);
	tw_hmac_sha256(out + 64, key, 32, msg, 100);
	tw_hmac_sha1(out + 96, key, 16, msg, 100);
	tw_hmac_sha256_init(&h, key, 32);
	tw_hmac_sha256_update(&h, msg, 64);
	tw_hmac_sha256_final(&h, out + 128);
	tw_hmac_sha256_wipe(&h);
}

static void ct_milenage(void)
{
	struct tw_milenage_out o;
	struct tw_milenage_vec v;
	uint8_t opc[16];

	sink |= tw_milenage_opc(opc, key, msg);
	sink |= tw_milenage_all(key, opc, msg + 16, msg + 32, msg + 38, NULL, &o);
	sink |= tw_milenage_generate(key, opc, msg + 16, msg + 32, msg + 38, NULL, &v);
}

static void ct_tuak(void)
{
	struct tw_tuak_params p;
	uint8_t res[8], ck[16], ik[16], ak[6];

	memset(&p, 0, sizeof(p));
	p.k_len = 16;
	p.mac_bits = 64;
	p.res_bits = 64;
	p.ck_bits = p.ik_bits = 128;
	p.iterations = 1;
	memcpy(p.k, key, 32);
	memcpy(p.topc, msg, 32);
	sink |= tw_tuak_f2345(&p, msg + 32, res, ck, ik, ak);
	sink |= tw_tuak_f1(&p, msg + 32, msg + 48, msg + 54, out);
}

static void ct_kdf(void)
{
	struct tw_eap_aka_prime_keys ak;
	struct tw_eap_sim_keys sk;
	static const uint8_t id[] = "6001010000000001@wlan";
	uint8_t ckp[16], ikp[16], kc[3][8], vl[2] = { 0, 1 };

	sink |= tw_kdf_ck_ik_prime(ckp, ikp, key, key + 16, (const uint8_t *)"WLAN", 4, msg);
	sink |= tw_eap_aka_prime_derive(&ak, ikp, ckp, id, sizeof(id) - 1);
	sink |= tw_eap_aka_derive(&sk, id, sizeof(id) - 1, key, key + 16);
	memcpy(kc, msg, sizeof(kc));
	sink |= tw_eap_sim_derive(&sk, id, sizeof(id) - 1, (const uint8_t(*)[8])kc, 3,
				  msg + 32, vl, 2, 1);
	sink |= tw_kdf_kausf(out, key, key + 16, (const uint8_t *)"5G:x", 4, msg);
	sink |= tw_gsm_c2(out + 64, msg, 8);
	tw_gsm_c3(out + 72, key, key + 16);
}

static void ct_gcm_ccm_cmac(void)
{
	struct tw_gcm_ctx g;
	struct tw_aes_ctx a;
	uint8_t nonce[13] = { 1, 2, 3 };

	sink |= tw_gcm_init(&g, key, 16);
	sink |= tw_gcm_encrypt(&g, nonce, msg, 20, msg + 32, out, 200, tag, 16);
	tw_gcm_wipe(&g);
	sink |= tw_aes_init(&a, key, 16);
	sink |= tw_ccm_encrypt(&a, nonce, 13, msg, 22, msg + 32, out, 150, tag, 8);
	tw_aes_wipe(&a);
	sink |= tw_cmac(tag, key, 16, msg, 100);
}

static void ct_des_keywrap(void)
{
	struct tw_des3_ctx d;
	uint8_t iv[8] = { 0 };
	size_t n = 0;

	sink |= tw_des3_init(&d, key, 24);
	sink |= tw_des3_cbc_encrypt(&d, iv, out, msg, 64);
	tw_des3_wipe(&d);
	sink |= tw_keywrap_wrap(out, sizeof(out), &n, key, 16, msg, 32);
	sink |= tw_keywrap_wrap_pad(out, sizeof(out), &n, key, 32, msg, 21);
}

/* ---- verifiers: every tag is checked valid and altered ---- */

/* AES-GCM decryption (SP 800-38D §7.2): the tag comparison and the wipe of
 * a rejected plaintext, 16- and 8-octet tags, one call and a batch. */
static void ct_gcm_decrypt(void)
{
	static const uint8_t iv[12] = { 0xca, 0xfe, 0xba, 0xbe, 1, 2, 3, 4 };
	static const size_t lens[4] = { 150, 64, 17, 1 };
	struct tw_gcm_ctx g;
	struct tw_gcm_op ops[4];
	uint8_t k[32], ct[4][150], pt[4][150], t[4][16], r[16];

	for (size_t kl = 16; kl <= 32; kl += 16) {
		known(k, kl, (unsigned)kl);
		sink |= tw_gcm_init(&g, k, kl);
		for (size_t i = 0; i < 4; i++)
			sink |= tw_gcm_encrypt(&g, iv, pub, 20, pub + 32, ct[i], lens[i], t[i], 16);
		tw_gcm_wipe(&g);
		SECRET(k, kl);
		sink |= tw_gcm_init(&g, k, kl);
		for (int bad = 0; bad < 2; bad++) {
			for (size_t tl = 16; tl >= 8; tl -= 8) {
				memcpy(r, t[0], 16);
				r[tl - 1] ^= (uint8_t)(bad << 3);
				expect(tw_gcm_decrypt(&g, iv, pub, 20, ct[0], pt[0], lens[0], r, tl),
				       bad ? TW_ERR_AUTH : TW_OK, "tw_gcm_decrypt");
			}
		}
		t[1][0] ^= 1;
		t[3][15] ^= 0x80;
		for (size_t i = 0; i < 4; i++)
			ops[i] = (struct tw_gcm_op){ .ctx = &g, .iv = iv, .aad = pub,
						     .aad_len = 20, .in = ct[i], .out = pt[i],
						     .len = lens[i], .tag = t[i], .tag_len = 16 };
		expect(tw_gcm_decrypt_batch(ops, 4), TW_ERR_AUTH, "tw_gcm_decrypt_batch");
		for (size_t i = 0; i < 4; i++)
			expect(ops[i].status, i % 2 ? TW_ERR_AUTH : TW_OK,
			       "tw_gcm_decrypt_batch (status)");
		tw_gcm_wipe(&g);
	}
}

/* AES-CCM decryption (SP 800-38C §6.2): one frame, and a batch of AES-128
 * and AES-256 frames (the AES-NI lanes at that level). */
static void ct_ccm_decrypt(void)
{
	static const uint8_t nonce[13] = { 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	static const size_t lens[4] = { 100, 32, 7, 61 }, tls[4] = { 8, 16, 8, 16 };
	struct tw_aes_ctx a[2];
	struct tw_ccm_op ops[4];
	uint8_t k[2][32], ct[4][100], pt[4][100], t[4][16], r[16];

	for (size_t i = 0; i < 2; i++) {
		known(k[i], 16 + 16 * i, 40 + (unsigned)i);
		sink |= tw_aes_init(&a[i], k[i], 16 + 16 * i);
	}
	for (size_t i = 0; i < 4; i++)
		sink |= tw_ccm_encrypt(&a[i / 2], nonce, 13, pub, 22, pub + 40, ct[i], lens[i],
				       t[i], tls[i]);
	for (size_t i = 0; i < 2; i++) {
		tw_aes_wipe(&a[i]);
		SECRET(k[i], 16 + 16 * i);
		sink |= tw_aes_init(&a[i], k[i], 16 + 16 * i);
	}
	for (int bad = 0; bad < 2; bad++) {
		for (size_t i = 0; i < 4; i += 3) {
			memcpy(r, t[i], tls[i]);
			r[0] ^= (uint8_t)bad;
			expect(tw_ccm_decrypt(&a[i / 2], nonce, 13, pub, 22, ct[i], pt[i], lens[i],
					      r, tls[i]),
			       bad ? TW_ERR_AUTH : TW_OK, "tw_ccm_decrypt");
		}
	}
	t[1][5] ^= 0x10;
	t[2][7] ^= 0x01;
	for (size_t i = 0; i < 4; i++)
		ops[i] = (struct tw_ccm_op){ .aes = &a[i / 2], .nonce = nonce, .nonce_len = 13,
					     .aad = pub, .aad_len = 22, .in = ct[i],
					     .out = pt[i], .len = lens[i], .tag = t[i],
					     .tag_len = tls[i] };
	expect(tw_ccm_decrypt_batch(ops, 4), TW_ERR_AUTH, "tw_ccm_decrypt_batch");
	for (size_t i = 0; i < 4; i++)
		expect(ops[i].status, i == 1 || i == 2 ? TW_ERR_AUTH : TW_OK,
		       "tw_ccm_decrypt_batch (status)");
	tw_aes_wipe(&a[0]);
	tw_aes_wipe(&a[1]);
}

/* AES-CMAC Verify_MAC (RFC 4493 §2.5), full and truncated tags. */
static void ct_cmac_verify(void)
{
	struct tw_cmac_ctx c;
	uint8_t k[32], t[16], r[16];

	for (size_t kl = 16; kl <= 32; kl += 16) {
		known(k, kl, 50 + (unsigned)kl);
		sink |= tw_cmac(t, k, kl, pub, 100);
		SECRET(k, kl);
		sink |= tw_cmac_init(&c, k, kl);
		for (int bad = 0; bad < 2; bad++) {
			for (size_t tl = 16; tl >= 8; tl -= 8) {
				memcpy(r, t, 16);
				r[tl / 2] ^= (uint8_t)(bad << 6);
				expect(tw_cmac_verify(&c, r, tl, pub, 100),
				       bad ? TW_ERR_AUTH : TW_OK, "tw_cmac_verify");
			}
		}
		tw_cmac_wipe(&c);
	}
}

/* Key unwrap: RFC 3394 §2.2.3 integrity check value (also two keys under
 * one KEK, as the store unwraps K and OPc), RFC 5649 §3 AIV, MLI and
 * padding checks, on both branches of §4.2 (one semiblock, several). */
static void ct_keywrap_unwrap(void)
{
	static const size_t pad_lens[3] = { 21, 5, 16 };
	struct tw_aes_ctx kc;
	uint8_t kek[32], w[40], wp[3][40], c[40], u[40], u2[40];
	size_t wl = 0, wpl[3] = { 0 }, n = 0, n2 = 0;
	int rc2 = 0;

	for (size_t kl = 16; kl <= 32; kl += 16) {
		known(kek, kl, 60 + (unsigned)kl);
		sink |= tw_keywrap_wrap(w, sizeof(w), &wl, kek, kl, pub, 32);
		for (size_t i = 0; i < 3; i++)
			sink |= tw_keywrap_wrap_pad(wp[i], sizeof(wp[i]), &wpl[i], kek, kl,
						    pub + 64, pad_lens[i]);
		SECRET(kek, kl);
		sink |= tw_aes_init(&kc, kek, kl);
		/* valid; the first octet of the AIV altered; a key octet altered */
		for (int bad = 0; bad < 3; bad++) {
			memcpy(c, w, wl);
			c[bad == 1 ? 0 : 20] ^= (uint8_t)(bad != 0);
			expect(tw_keywrap_unwrap(u, sizeof(u), &n, kek, kl, c, wl),
			       bad ? TW_ERR_AUTH : TW_OK, "tw_keywrap_unwrap");
			expect((int)n, bad ? 0 : 32, "tw_keywrap_unwrap (length)");
			expect(tw_keywrap_unwrap2_ctx(&kc, u, sizeof(u), &n, w, wl, u2, sizeof(u2),
						      &n2, c, wl, &rc2),
			       TW_OK, "tw_keywrap_unwrap2_ctx");
			expect(rc2, bad ? TW_ERR_AUTH : TW_OK, "tw_keywrap_unwrap2_ctx (second)");
			for (size_t i = 0; i < 3; i++) {
				memcpy(c, wp[i], wpl[i]);
				c[bad == 1 ? 0 : wpl[i] - 1] ^= (uint8_t)(bad != 0);
				expect(tw_keywrap_unwrap_pad(u, sizeof(u), &n, kek, kl, c, wpl[i]),
				       bad ? TW_ERR_AUTH : TW_OK, "tw_keywrap_unwrap_pad");
				expect((int)n, bad ? 0 : (int)pad_lens[i],
				       "tw_keywrap_unwrap_pad (length)");
			}
		}
		tw_aes_wipe(&kc);
	}
}

/* COMP128 v1 on AVX2 (run with that path on, below): the look-ups are
 * byte shuffles over every piece of each table. 1, 2, 3 RANDs in one pass
 * and 4 in two, every instance count of the kernel. */
static void ct_comp128_avx2(void)
{
	uint8_t sres[4][4], kc[4][8];

	for (unsigned n = 1; n <= 4; n++)
		sink |= tw_comp128_many(1, key, n, (const uint8_t(*)[16])msg, sres, kc);
}

/* The canary: COMP128 indexes tables with Ki-derived values by design, so
 * Memcheck must flag it; if it does not, the method itself is broken. */
static void ct_canary_comp128(void)
{
	uint8_t sres[4], kc[8];

	/* the table code, whatever TWAG_CPU says */
	tw_cpu_restrict(~(uint32_t)(TW_CPU_VBMI | TW_CPU_AVX2));
	sink |= tw_comp128(1, key, msg, sres, kc);
	tw_cpu_restrict(UINT32_MAX);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} prims[] = {
		{ "AES key schedule, block, ECB, CTR", ct_aes },
		{ "SHA-1, SHA-256, HMAC", ct_sha_hmac },
		{ "Milenage OPc, f1-f5*, generate", ct_milenage },
		{ "TUAK f1, f2345 (Keccak-f[1600])", ct_tuak },
		{ "KDFs: CK'/IK', AKA', AKA, SIM (FIPS 186-2), KAUSF, c2/c3", ct_kdf },
		{ "AES-GCM, AES-CCM encrypt, AES-CMAC", ct_gcm_ccm_cmac },
		{ "3DES-CBC, key wrap (RFC 3394/5649)", ct_des_keywrap },
		{ "AES-GCM decrypt, one and batch: tag check", ct_gcm_decrypt },
		{ "AES-CCM decrypt, one and batch: tag check", ct_ccm_decrypt },
		{ "AES-CMAC verify", ct_cmac_verify },
		{ "key unwrap (RFC 3394 ICV, RFC 5649 AIV/MLI/padding)", ct_keywrap_unwrap },
	};
	/* Paths valgrind runs: portable, then AES-NI/PCLMUL/SHA-NI. */
	static const uint32_t levels[] = {
		0, TW_CPU_AESNI | TW_CPU_PCLMUL | TW_CPU_SHANI | TW_CPU_SSE41,
	};

	if (!RUNNING_ON_VALGRIND) {
		printf("ct_check: not under valgrind, nothing checked\n");
		printf("ct_check: 0 passed, 0 failed\n");
		return 0;
	}
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		tw_cpu_restrict(levels[l]);
		if (l > 0 && tw_cpu_features() == 0)
			break; /* no accelerated path on this CPU */
		for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++) {
			fill();
			run(prims[i].name, prims[i].fn);
		}
	}
	/* AVX2 code valgrind runs (TWAG_CPU=avx2 caps the level there) */
	tw_cpu_restrict(TW_CPU_AVX2 | TW_CPU_SSE41);
	if (tw_cpu_has(TW_CPU_AVX2)) {
		fill();
		run("COMP128 v1 on AVX2", ct_comp128_avx2);
	}
	tw_cpu_restrict(UINT32_MAX);
	/* The canary must be caught (its errors are expected, not counted). */
	fill();
	unsigned long before = VALGRIND_COUNT_ERRORS;
	ct_canary_comp128();
	if (VALGRIND_COUNT_ERRORS > before) {
		passed++;
	} else {
		failed++;
		printf("FAIL ct: the COMP128 canary was not flagged: the check is blind\n");
	}
	PUBLIC(&sink, sizeof(sink));
	printf("ct_check: %u passed, %u failed\n", passed, failed);
	return failed == 0 && sink == 0 ? 0 : 1;
}
