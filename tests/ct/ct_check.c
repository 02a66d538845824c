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

static unsigned passed, failed;
static int sink; /* keeps statuses alive without branching on secrets */

static void run(const char *name, void (*fn)(void))
{
	unsigned long before = VALGRIND_COUNT_ERRORS;

	fn();
	if (VALGRIND_COUNT_ERRORS == before) {
		passed++;
	} else {
		failed++;
		printf("FAIL ct: %s [cpu %s] depends on a secret (see Memcheck above)\n",
		       name, tw_cpu_level_name());
	}
}

static uint8_t key[32], msg[256], out[512], tag[16];

static void fill(void)
{
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x3c ^ (i * 7));
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13 + 5);
	SECRET(key, sizeof(key));
	SECRET(msg, sizeof(msg));
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
