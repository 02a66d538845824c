/*
 * Constant-time check under valgrind (the "ctgrind" method): every secret
 * input is marked undefined with a Memcheck client request, then the
 * primitive runs. Memcheck reports any conditional jump or memory address
 * that depends on undefined data, i.e. on a secret. Each primitive passes
 * when it adds no Memcheck error and its verifiers return what they must.
 * Outside valgrind the program says so and checks nothing.
 *
 * Primitives: AES, SHA/HMAC, Milenage, TUAK, the KDFs, GCM/CCM encryption,
 * CMAC, 3DES (one-block and bitsliced), key wrap, COMP128 v1 and 3DES on
 * AVX2; and every MAC/tag/ICV
 * verification: GCM and CCM decryption (one and batch), CMAC verify, key
 * unwrap (RFC 3394 ICV; RFC 5649 AIV, MLI, padding), RADIUS
 * Message-Authenticator and Response Authenticator (one, prepared secret,
 * batch), EAP-SIM/AKA/AKA' AT_MAC and AT_CHECKCODE (and the AT_ENCR_DATA
 * that follows), ERP tags, CCMP/GCMP decapsulation, the EAPOL-Key MIC of
 * each AKM, ESP decapsulation on every keyed transform, AH, the USIM's
 * AUTN check, the HE's AUTS check, and the EAP-AKA/AKA' server's check of
 * a challenge response (AT_MAC, then RES against XRES).
 *
 * A verifier runs with its key secret and the message and received tag
 * public (built with the key in the clear, as the sender would), once
 * with a valid tag and once with an altered one, so both outcomes run.
 * The accept/reject verdict is public by nature: tw_ct_eq() and
 * tw_ct_is_zero() mark their one-bit result defined, the compared bytes
 * stay secret. What a protocol makes public once verified (an ESP
 * trailer, the SQN of a verified AUTN, AT_ENCR_DATA plaintext, an
 * accepted RFC 5649 MLI) is declassified at that point in the library
 * (tw_ct_declassify, bytes.h). This program marks public (PUBLIC) only
 * what a side holding secrets sends (the EAP-AKA server's challenge,
 * before the peer reads it) and, at the end, the statuses in sink.
 *
 * Run: TWAG_CPU=avx2 valgrind -q build/tests/ct_check  (tests/run.sh does).
 * Covered: the portable paths, the AES-NI/PCLMUL/SHA-NI paths valgrind
 * can execute (the 4-lane CCM, CLMUL GCM), and on AVX2 COMP128 v1, the
 * 8-lane MD5 of RADIUS batches and the 256-lane bitsliced 3DES. Not
 * covered: AVX-512/VAES kernels (valgrind 3.19 cannot run them: the VAES
 * GCM/CCM kernels, 16-lane SHA-256 and MD5, the 512-lane bitsliced 3DES
 * (the 256-lane kernel's source at another width), COMP128 v1 on AVX-512
 * VBMI, whose memory addresses and
 * branches depend on nothing but the RAND count, by reading), COMP128's
 * table code (table-driven by design, see src/auth/comp128.c), and
 * OpenSSL's curve code behind SUCI (so not SUCI's MAC tag either: its key
 * comes from that ECDH). ESP's "null" transform has no key to check.
 *
 * Two canaries must be flagged, else the check is blind and fails:
 * COMP128's table code, and a tag check written with memcmp.
 */
#include <stdio.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "twag/aes.h"
#include "twag/aka.h"
#include "twag/bytes.h"
#include "twag/ccm.h"
#include "twag/ccmp.h"
#include "twag/comp128.h"
#include "twag/cmac.h"
#include "twag/cpu.h"
#include "twag/des.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/eap_method.h"
#include "twag/erp.h"
#include "twag/esp.h"
#include "twag/gcm.h"
#include "twag/gsm.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/keywrap.h"
#include "twag/milenage.h"
#include "twag/radius.h"
#include "twag/sha.h"
#include "twag/simaka.h"
#include "twag/tuak.h"
#include "twag/usim.h"
#include "twag/vecsrc.h"
#include "twag/wlan_keys.h"

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

/*
 * 3DES with key and data secret: the one-block code (ECB, CBC encryption,
 * a one-block CBC decryption) and the bitsliced kernel at every width the
 * level offers (CBC decryption of 32 and 300 blocks: 64 lanes, then 256
 * on AVX2; three CBC chains side by side).
 */
static void ct_des3(void)
{
	static uint8_t big[300 * 8];
	struct tw_des3_ctx d;
	struct tw_des3_cbc_chain ch[3];
	uint8_t iv[8] = { 0 }, ivs[3][8] = { { 0 } };

	memcpy(big, msg, sizeof(msg));
	SECRET(big, sizeof(big));
	sink |= tw_des3_init(&d, key, 24);
	tw_des3_encrypt(&d, out, msg);
	tw_des3_decrypt(&d, out + 8, msg);
	sink |= tw_des3_cbc_encrypt(&d, iv, out, msg, 64);
	sink |= tw_des3_cbc_decrypt(&d, iv, out, msg, 8);
	sink |= tw_des3_cbc_decrypt(&d, iv, out, msg, sizeof(msg));
	sink |= tw_des3_cbc_decrypt(&d, iv, big, big, sizeof(big));
	for (int i = 0; i < 3; i++)
		ch[i] = (struct tw_des3_cbc_chain){ .iv = ivs[i], .out = out + 128 * i,
						    .in = msg + 64 * i, .len = 8 + 56 * (size_t)i };
	sink |= tw_des3_cbc_encrypt_multi(&d, ch, 3);
	tw_des3_wipe(&d);
}

static void ct_des_keywrap(void)
{
	size_t n = 0;

	ct_des3();
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

/*
 * RADIUS, the shared secret marked secret: Message-Authenticator (HMAC-MD5,
 * RFC 3579 §3.2) of an Access-Request, and of an Access-Challenge with
 * its Response Authenticator (MD5, RFC 2865 §3), each altered on its
 * own; with the secret as given, prepared (the _ctx forms), and in
 * batches of four (multi-buffer MD5 on AVX2, where run with it). Secrets
 * of 23 octets and of 70 (hashed to the HMAC key).
 */
static void ct_radius(void)
{
	static const uint8_t req_auth[16] = { 0x11, 0x22, 0x33, 0x44, 5, 6, 7, 8, 9 };
	static const char user[] = "0001010000000001@wlan.mnc001.mcc001.3gppnetwork.org";
	static const size_t slen[2] = { 23, 70 };
	struct tw_radius_builder b;
	struct tw_radius_pkt p[4];
	struct tw_radius_secret ps;
	struct tw_radius_verify_job vj[4];
	struct tw_radius_verify_resp_job rj[4];
	uint8_t s[70], req[300], rsp[300], q[4][300];
	size_t rl = 0, al = 0;

	for (size_t i = 0; i < 2; i++) {
		size_t sl = slen[i];

		known(s, sl, 70 + (unsigned)i);
		tw_radius_build_init(&b, req, sizeof(req), TW_RADIUS_ACCESS_REQUEST, 7, req_auth,
				     true);
		tw_radius_add(&b, TW_RADIUS_USER_NAME, user, sizeof(user) - 1);
		tw_radius_add_eap(&b, pub, 60);
		sink |= tw_radius_finish_request(&b, s, sl, &rl);
		tw_radius_build_init(&b, rsp, sizeof(rsp), TW_RADIUS_ACCESS_CHALLENGE, 7, req_auth,
				     true);
		tw_radius_add(&b, TW_RADIUS_STATE, pub + 100, 16);
		tw_radius_add_eap(&b, pub + 200, 40);
		sink |= tw_radius_finish_response(&b, s, sl, &al);
		SECRET(s, sl);
		sink |= tw_radius_secret_init(&ps, s, sl);
		/* valid; Message-Authenticator altered (its value follows the
		 * header: it is the first attribute) */
		for (int bad = 0; bad < 2; bad++) {
			int want = bad ? TW_ERR_AUTH : TW_OK;

			memcpy(q[0], req, rl);
			q[0][TW_RADIUS_HDR_LEN + 2 + 5] ^= (uint8_t)bad;
			sink |= tw_radius_decode(&p[0], q[0], rl);
			expect(tw_radius_verify_request(&p[0], s, sl), want,
			       "tw_radius_verify_request");
			expect(tw_radius_verify_request_ctx(&p[0], &ps), want,
			       "tw_radius_verify_request_ctx");
		}
		/* valid; Response Authenticator altered; Message-Authenticator
		 * altered */
		for (int bad = 0; bad < 3; bad++) {
			int want = bad ? TW_ERR_AUTH : TW_OK;

			memcpy(q[0], rsp, al);
			if (bad == 1)
				q[0][4 + 15] ^= 0x80;
			if (bad == 2)
				q[0][TW_RADIUS_HDR_LEN + 2] ^= 0x01;
			sink |= tw_radius_decode(&p[0], q[0], al);
			expect(tw_radius_verify_response(&p[0], req_auth, s, sl, true), want,
			       "tw_radius_verify_response");
			expect(tw_radius_verify_response_ctx(&p[0], req_auth, &ps, true), want,
			       "tw_radius_verify_response_ctx");
		}
		/* batches of four, the second and fourth altered */
		for (size_t j = 0; j < 4; j++) {
			memcpy(q[j], req, rl);
			q[j][TW_RADIUS_HDR_LEN + 2 + 15] ^= (uint8_t)(j % 2);
			sink |= tw_radius_decode(&p[j], q[j], rl);
			vj[j] = (struct tw_radius_verify_job){ .p = &p[j], .s = &ps };
		}
		tw_radius_verify_requests_ctx(vj, 4);
		for (size_t j = 0; j < 4; j++)
			expect(vj[j].rc, j % 2 ? TW_ERR_AUTH : TW_OK,
			       "tw_radius_verify_requests_ctx");
		for (size_t j = 0; j < 4; j++) {
			memcpy(q[j], rsp, al);
			q[j][4 + j] ^= (uint8_t)(j % 2);
			sink |= tw_radius_decode(&p[j], q[j], al);
			rj[j] = (struct tw_radius_verify_resp_job){ .p = &p[j], .req_auth = req_auth,
								    .s = &ps,
								    .require_msg_auth = true };
		}
		tw_radius_verify_responses_ctx(rj, 4);
		for (size_t j = 0; j < 4; j++)
			expect(rj[j].rc, j % 2 ? TW_ERR_AUTH : TW_OK,
			       "tw_radius_verify_responses_ctx");
		tw_radius_secret_wipe(&ps);
	}
}

/* One EAP-SIM/AKA/AKA' message with AT_MAC, built with k_aut in the
 * clear; its length. Requests carry AT_RAND (and AT_AUTN), AT_ENCR_DATA
 * with a next pseudonym under k_encr and, for AKA/AKA', AT_CHECKCODE cc
 * (n_cc octets); responses AT_RES (AKA/AKA') or nothing else (SIM). */
static size_t simaka_msg(uint8_t *buf, size_t max, uint8_t method, bool request,
			 const uint8_t *k_aut, size_t kl, const uint8_t *k_encr,
			 const uint8_t *cc, size_t n_cc, const uint8_t *extra, size_t extra_len)
{
	static const uint8_t iv[16] = { 0x1f, 0x2e, 0x3d };
	static const char pseudonym[] = "2s7ah6n9q3";
	struct tw_simaka_builder b;
	struct tw_simaka_mac_ctx mac;
	bool sim = method == TW_EAP_TYPE_SIM;
	size_t len = 0;

	sink |= tw_simaka_mac_init(&mac, method, k_aut, kl);
	tw_simaka_build_init(&b, buf, max, request ? TW_EAP_REQUEST : TW_EAP_RESPONSE, 3, method,
			     sim ? TW_SIMAKA_SIM_CHALLENGE : TW_SIMAKA_CHALLENGE);
	if (request) {
		tw_simaka_put_fixed(&b, TW_AT_RAND, 0, pub, sim ? 32 : 16);
		if (!sim)
			tw_simaka_put_fixed(&b, TW_AT_AUTN, 0, pub + 32, 16);
		tw_simaka_begin_encr(&b, iv);
		tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, (const uint8_t *)pseudonym,
				  sizeof(pseudonym) - 1);
		tw_simaka_end_encr(&b, k_encr);
		if (!sim)
			tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, cc, n_cc);
	} else if (!sim) {
		tw_simaka_put_res(&b, pub + 64, 64);
	}
	tw_simaka_put_mac(&b);
	sink |= tw_simaka_finish_mac(&b, &mac, extra, extra_len, &len);
	tw_simaka_mac_wipe(&mac);
	return len;
}

/*
 * EAP-SIM, EAP-AKA and EAP-AKA' AT_MAC (HMAC-SHA1-128 / HMAC-SHA-256-128
 * under K_aut) of a Challenge request and its response; the SIM
 * response's MAC also covers n*SRES (secret, RFC 4186 §9.4), the request's
 * NONCE_MT. AT_CHECKCODE (AKA, AKA'; RFC 4187 §10.13) against a running
 * hash of the identity round: no key there, but the hash state is marked
 * secret so that a comparison that is not constant time would show.
 * AT_ENCR_DATA decrypted with K_encr (after AT_MAC verified).
 */
static void ct_simaka(void)
{
	static const uint8_t methods[3] = { TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					    TW_EAP_TYPE_AKA_PRIME };
	struct tw_simaka_mac_ctx mac;
	struct tw_simaka_checkcode_ctx cc, ccs;
	struct tw_simaka_msg m, in;
	uint8_t k_aut[32], k_encr[16], sres[8], buf[2][256], cv[32], plain[64];
	size_t len[2];

	for (size_t i = 0; i < 3; i++) {
		uint8_t method = methods[i];
		bool sim = method == TW_EAP_TYPE_SIM;
		size_t kl = method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16, n_cc = 0;
		/* SIM: the request's MAC covers NONCE_MT, the response's n*SRES */
		const uint8_t *x[2] = { sim ? pub + 80 : NULL, sim ? sres : NULL };
		size_t xl[2] = { sim ? 16 : 0, sim ? 8 : 0 };

		known(k_aut, kl, 90 + (unsigned)i);
		known(k_encr, 16, 95 + (unsigned)i);
		known(sres, 8, 99);
		if (!sim) {
			sink |= tw_simaka_checkcode_init(&cc, method);
			tw_simaka_checkcode_add(&cc, pub + 300, 24);
			tw_simaka_checkcode_add(&cc, pub + 340, 40);
			n_cc = tw_simaka_checkcode_value(&cc, cv);
		}
		for (int r = 0; r < 2; r++)
			len[r] = simaka_msg(buf[r], sizeof(buf[r]), method, r == 0, k_aut, kl,
					    k_encr, cv, n_cc, x[r], xl[r]);
		SECRET(k_aut, kl);
		SECRET(k_encr, 16);
		SECRET(sres, 8);
		sink |= tw_simaka_mac_init(&mac, method, k_aut, kl);
		for (int r = 0; r < 2; r++) {
			for (int bad = 0; bad < 2; bad++) {
				int want = bad ? TW_ERR_AUTH : TW_OK;

				sink |= tw_simaka_decode(&m, buf[r], len[r]);
				buf[r][m.mac.val - buf[r] + 9] ^= (uint8_t)bad;
				expect(tw_simaka_mac_verify(&mac, &m, x[r], xl[r]), want,
				       "tw_simaka_mac_verify");
				buf[r][m.mac.val - buf[r] + 9] ^= (uint8_t)bad;
				if (r == 0 && !bad)
					expect(tw_simaka_decrypt(&in, plain, sizeof(plain), &m, k_encr),
					       TW_OK, "tw_simaka_decrypt");
				if (r == 0 && !sim) {
					/* the chaining value and the partial block;
					 * the octet count is public */
					ccs = cc;
					if (method == TW_EAP_TYPE_AKA) {
						SECRET(ccs.h.sha1.h, sizeof(ccs.h.sha1.h));
						SECRET(ccs.h.sha1.buf, sizeof(ccs.h.sha1.buf));
					} else {
						SECRET(ccs.h.sha256.h, sizeof(ccs.h.sha256.h));
						SECRET(ccs.h.sha256.buf, sizeof(ccs.h.sha256.buf));
					}
					buf[r][m.checkcode.val - buf[r] + 3] ^= (uint8_t)(bad << 1);
					expect(tw_simaka_checkcode_verify(&ccs, &m), want,
					       "tw_simaka_checkcode_verify");
					buf[r][m.checkcode.val - buf[r] + 3] ^= (uint8_t)(bad << 1);
				}
			}
		}
		tw_simaka_mac_wipe(&mac);
	}
}

/* ERP (RFC 6696 §5.3.2): the EAP-Initiate/Re-auth tag, HMAC-SHA-256
 * truncated to 64, 128 or 256 bits under rIK, with the key derived from
 * a secret EMSK (rRK, rIK: RFC 6696 §4.1, §4.3). */
static void ct_erp(void)
{
	static const char realm[] = "wlan.example";
	struct tw_erp_key_ctx peer, srv;
	struct tw_erp_msg m;
	uint8_t emsk[64], sid[65], pkt[2][300];
	size_t pl = 0;

	known(sid, sizeof(sid), 101);
	sid[0] = TW_EAP_TYPE_AKA_PRIME; /* RFC 5247: Type-Code | RAND | AUTN */
	for (uint8_t cs = TW_ERP_CS_HMAC_SHA256_64; cs <= TW_ERP_CS_HMAC_SHA256_256; cs++) {
		known(emsk, sizeof(emsk), 100 + cs);
		sink |= tw_erp_key_init(&peer, emsk, sid, sizeof(sid), realm, sizeof(realm) - 1, cs);
		sink |= tw_erp_peer_build_reauth(&peer, pkt[0], sizeof(pkt[0]), &pl, 9,
						 TW_ERP_FLAG_B);
		memcpy(pkt[1], pkt[0], pl);
		pkt[1][pl - 1] ^= 0x20; /* the last octet of the tag */
		SECRET(emsk, sizeof(emsk));
		sink |= tw_erp_key_init(&srv, emsk, sid, sizeof(sid), realm, sizeof(realm) - 1, cs);
		for (int bad = 0; bad < 2; bad++) {
			sink |= tw_erp_decode_suite(&m, pkt[bad], pl, cs);
			expect(tw_erp_verify_tag(&srv, pkt[bad], &m), bad ? TW_ERR_AUTH : TW_OK,
			       "tw_erp_verify_tag");
		}
		tw_erp_key_wipe(&peer);
		tw_erp_key_wipe(&srv);
	}
}

/* 802.11 decapsulation (IEEE 802.11-2020 §12.5.3.4, §12.5.5.4) of a QoS
 * data MPDU, CCMP-128/256 and GCMP-128/256, the MIC valid and altered,
 * one frame and a batch, with the TK secret. */
static void ct_ccmp(void)
{
	static const uint8_t hdr[26] = {
		0x88, 0x01, 0x00, 0x00,             /* QoS Data, To DS; Duration */
		0x02, 0x11, 0x22, 0x33, 0x44, 0x55, /* A1 */
		0x02, 0x66, 0x77, 0x88, 0x99, 0xaa, /* A2 */
		0x02, 0x11, 0x22, 0x33, 0x44, 0x55, /* A3 */
		0x30, 0x00, 0x05, 0x00,             /* Sequence Control; QoS Control TID 5 */
	};
	struct tw_ccmp_key tkey;
	struct tw_ccmp_tx tx;
	struct tw_ccmp_rx rx;
	struct tw_ccmp_mpdu mp[4];
	uint8_t tk[32], frame[160], enc[4][200], dec[4][200];
	size_t el[4], ol = 0;
	uint64_t pn = 0;

	memcpy(frame, hdr, sizeof(hdr));
	memcpy(frame + sizeof(hdr), pub, 120);
	for (uint32_t c = TW_CCMP_128; c <= TW_GCMP_256; c++) {
		size_t tl = c == TW_CCMP_128 || c == TW_GCMP_128 ? 16 : 32;

		known(tk, tl, 110 + c);
		sink |= tw_ccmp_key_init(&tkey, c, tk, tl, 1);
		tw_ccmp_tx_init(&tx);
		for (size_t i = 0; i < 4; i++)
			sink |= tw_ccmp_encap(&tkey, &tx, frame, sizeof(hdr) + 120 - 13 * i, enc[i],
					      sizeof(enc[i]), &el[i]);
		tw_ccmp_key_wipe(&tkey);
		SECRET(tk, tl);
		sink |= tw_ccmp_key_init(&tkey, c, tk, tl, 1);
		for (int bad = 0; bad < 2; bad++) {
			tw_ccmp_rx_init(&rx);
			enc[0][el[0] - 1] ^= (uint8_t)bad;
			expect(tw_ccmp_decap(&tkey, &rx, enc[0], el[0], dec[0], sizeof(dec[0]), &ol, &pn),
			       bad ? TW_ERR_AUTH : TW_OK, "tw_ccmp_decap");
			enc[0][el[0] - 1] ^= (uint8_t)bad;
		}
		enc[2][el[2] - 3] ^= 0x40;
		enc[3][el[3] - 16] ^= 0x01;
		for (size_t i = 0; i < 4; i++)
			mp[i] = (struct tw_ccmp_mpdu){ .key = &tkey, .in = enc[i], .in_len = el[i],
						       .out = dec[i], .out_cap = sizeof(dec[i]) };
		expect(tw_ccmp_decap_batch(mp, 4), TW_ERR_AUTH, "tw_ccmp_decap_batch");
		for (size_t i = 0; i < 4; i++)
			expect(mp[i].status, i < 2 ? TW_OK : TW_ERR_AUTH,
			       "tw_ccmp_decap_batch (status)");
		tw_ccmp_key_wipe(&tkey);
	}
}

/* EAPOL-Key MIC (IEEE 802.11-2020 §12.7.2) for every AKM: HMAC-SHA1-128
 * (AKM 1, 2), AES-128-CMAC (AKM 5, 6, 8), under a KCK derived from a
 * secret PMK (§12.7.1.3: PRF-SHA-1 or KDF-SHA-256). */
static void ct_eapol_mic(void)
{
	static const unsigned akms[5] = { TW_WLAN_AKM_8021X, TW_WLAN_AKM_PSK,
					  TW_WLAN_AKM_8021X_SHA256, TW_WLAN_AKM_PSK_SHA256,
					  TW_WLAN_AKM_SAE };
	static const uint8_t aa[6] = { 0x02, 1, 2, 3, 4, 5 }, spa[6] = { 0x02, 6, 7, 8, 9, 10 };
	struct tw_wlan_ptk ptk;
	uint8_t pmk[32], f[TW_EAPOL_KEY_MIN_LEN + 22];
	size_t body = sizeof(f) - TW_EAPOL_HDR_LEN;

	for (size_t i = 0; i < 5; i++) {
		unsigned ver = akms[i] <= TW_WLAN_AKM_PSK ? 2 : akms[i] == TW_WLAN_AKM_SAE ? 0 : 3;

		/* message 2 of the 4-way handshake: the SNonce and an RSNE */
		memcpy(f, pub + 10, sizeof(f));
		f[0] = 2;
		f[1] = TW_EAPOL_TYPE_KEY;
		tw_store_be16(f + 2, (uint16_t)body);
		f[4] = TW_EAPOL_KEY_DESC_RSN;
		tw_store_be16(f + 5, (uint16_t)(ver | TW_EAPOL_KEY_INFO_PAIRWISE |
						 TW_EAPOL_KEY_INFO_MIC));
		tw_store_be16(f + 7, 0);
		tw_store_be16(f + TW_EAPOL_KEY_MIC_OFF + 16, 22);
		known(pmk, sizeof(pmk), 120 + (unsigned)i);
		sink |= tw_wlan_ptk_derive(&ptk, akms[i], TW_WLAN_CIPHER_CCMP_128, pmk, aa, spa,
					   pub + 100, pub + 140);
		sink |= tw_wlan_eapol_mic_set(akms[i], ptk.kck, ptk.kck_len, f, sizeof(f));
		tw_wlan_ptk_wipe(&ptk);
		SECRET(pmk, sizeof(pmk));
		sink |= tw_wlan_ptk_derive(&ptk, akms[i], TW_WLAN_CIPHER_CCMP_128, pmk, aa, spa,
					   pub + 100, pub + 140);
		for (int bad = 0; bad < 2; bad++) {
			f[TW_EAPOL_KEY_MIC_OFF + 7] ^= (uint8_t)bad;
			expect(tw_wlan_eapol_mic_verify(akms[i], ptk.kck, ptk.kck_len, f, sizeof(f)),
			       bad ? TW_ERR_AUTH : TW_OK, "tw_wlan_eapol_mic_verify");
			f[TW_EAPOL_KEY_MIC_OFF + 7] ^= (uint8_t)bad;
		}
		tw_wlan_ptk_wipe(&ptk);
	}
}

/*
 * ESP inbound (RFC 4303 §3.4) on every keyed transform: the ICV (HMAC
 * before CBC decryption, or the GCM tag as it decrypts), then the trailer
 * of the verified plaintext; transport and tunnel mode, one packet and a
 * batch, the ICV valid and altered, with the SA's keys secret.
 */
static void ct_esp(void)
{
	static const char *const names[] = {
		"aes-gcm-128", "aes-gcm-256", "aes-cbc-128-hmac-sha1", "aes-cbc-256-hmac-sha1",
		"aes-cbc-128-hmac-sha256", "aes-cbc-256-hmac-sha256", "3des-cbc-hmac-sha1",
		"aes-cbc-128-hmac-md5", "null-hmac-sha1", "null-hmac-md5",
	};
	struct tw_esp_config cfg;
	struct tw_esp_sa tx, rx;
	struct tw_esp_view v;
	struct tw_esp_pkt bp[2];
	uint8_t ek[36], ak[32], inner[80], pkt[4][160];
	size_t pl[4];

	/* the tunnel mode payload: an IPv4 packet */
	memcpy(inner, pub, sizeof(inner));
	inner[0] = 0x45;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool tunnel = i % 2 == 1;

		memset(&cfg, 0, sizeof(cfg));
		sink |= tw_esp_transform(names[i], &cfg);
		cfg.spi = 0x1000 + (uint32_t)i;
		cfg.mode = tunnel ? TW_ESP_TUNNEL : TW_ESP_TRANSPORT;
		known(ek, cfg.enc_key_len, 130 + (unsigned)i);
		known(ak, cfg.auth_key_len, 140 + (unsigned)i);
		cfg.enc_key = cfg.enc_key_len ? ek : NULL;
		cfg.auth_key = cfg.auth_key_len ? ak : NULL;
		sink |= tw_esp_sa_init(&tx, &cfg);
		for (size_t j = 0; j < 4; j++)
			sink |= tw_esp_encap(&tx, tunnel ? TW_ESP_NH_IPV4 : 17, inner,
					     sizeof(inner) - 7 * j, pkt[j], sizeof(pkt[j]), &pl[j]);
		tw_esp_sa_wipe(&tx);
		SECRET(ek, cfg.enc_key_len);
		SECRET(ak, cfg.auth_key_len);
		sink |= tw_esp_sa_init(&rx, &cfg);
		/* packet 1 altered first (rejected, the window stays), then as sent */
		for (int bad = 1; bad >= 0; bad--) {
			uint8_t c[160];

			memcpy(c, pkt[0], pl[0]);
			c[pl[0] - 1] ^= (uint8_t)bad;
			expect(tw_esp_decap(&rx, c, pl[0], &v), bad ? TW_ERR_AUTH : TW_OK,
			       "tw_esp_decap");
		}
		pkt[2][pl[2] - 5] ^= 0x08;
		for (size_t j = 0; j < 2; j++)
			bp[j] = (struct tw_esp_pkt){ .sa = &rx, .buf = pkt[1 + j], .len = pl[1 + j],
						     .cap = sizeof(pkt[1 + j]) };
		expect(tw_esp_decap_batch(bp, 2), TW_ERR_AUTH, "tw_esp_decap_batch");
		expect(bp[0].status, TW_OK, "tw_esp_decap_batch (status)");
		expect(bp[1].status, TW_ERR_AUTH, "tw_esp_decap_batch (status)");
		tw_esp_sa_wipe(&rx);
	}
}

/* AH inbound (RFC 4302 §3.4.4), IPv4 transport mode, each integrity
 * transform, the ICV valid and altered, with the key secret. */
static void ct_ah(void)
{
	static const uint32_t integ[3] = { TW_ESP_AUTH_HMAC_SHA1_96, TW_ESP_AUTH_HMAC_SHA256_128,
					   TW_ESP_AUTH_HMAC_MD5_96 };
	static const size_t kls[3] = { 20, 32, 16 };
	struct tw_esp_config cfg;
	struct tw_ah_sa tx, rx;
	uint8_t ak[32], ip[100], pkt[160], c[160];
	size_t pl = 0, ol = 0;
	uint64_t seq = 0;

	memcpy(ip, pub, sizeof(ip));
	ip[0] = 0x45;
	tw_store_be16(ip + 2, sizeof(ip));
	tw_store_be16(ip + 6, 0x4000); /* DF, no fragment */
	ip[9] = 17;
	for (size_t i = 0; i < 3; i++) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.spi = 0x2000 + (uint32_t)i;
		cfg.integ = integ[i];
		known(ak, kls[i], 150 + (unsigned)i);
		cfg.auth_key = ak;
		cfg.auth_key_len = kls[i];
		sink |= tw_ah_sa_init(&tx, &cfg);
		sink |= tw_ah_encap(&tx, ip, sizeof(ip), pkt, sizeof(pkt), &pl);
		tw_ah_sa_wipe(&tx);
		SECRET(ak, kls[i]);
		sink |= tw_ah_sa_init(&rx, &cfg);
		for (int bad = 1; bad >= 0; bad--) {
			memcpy(c, pkt, pl);
			c[TW_IPV4_HDR_LEN + TW_AH_HDR_LEN + 3] ^= (uint8_t)bad;
			expect(tw_ah_decap(&rx, c, pl, &ol, &seq), bad ? TW_ERR_AUTH : TW_OK,
			       "tw_ah_decap");
		}
		tw_ah_sa_wipe(&rx);
	}
}

/* A USIM's keys: Milenage K, OPc (16 octets each) or TUAK K, TOPc (32). */
static int usim_keys(struct tw_sub_keys *kk, bool tuak, const uint8_t k[static 32],
		     const uint8_t opc[static 32])
{
	struct tw_tuak_params tp;
	int rc;

	if (!tuak)
		return tw_sub_keys_milenage(kk, k, opc, NULL);
	memset(&tp, 0, sizeof(tp));
	memcpy(tp.k, k, 32);
	tp.k_len = 32;
	memcpy(tp.topc, opc, 32);
	tp.mac_bits = 64;
	tp.res_bits = 128;
	tp.ck_bits = tp.ik_bits = 128;
	tp.iterations = 1;
	rc = tw_sub_keys_tuak(kk, &tp);
	tw_wipe(&tp, sizeof(tp));
	return rc;
}

/*
 * USIM AUTHENTICATE (TS 33.102 §6.3.3): MAC-A against XMAC-A = f1 under
 * a secret K/OPc (Milenage) or K/TOPc (TUAK), then the Annex C.2 SQN
 * check: a valid AUTN (RES), an altered one (reject), the same AUTN again
 * (SQN not fresh: AUTS). And the HE's AUTS check (§6.3.5): MAC-S against
 * XMAC-S = f1*, valid and altered.
 */
static void ct_usim_auts(void)
{
	static const uint8_t sqn[6] = { 0, 0, 0, 0, 0x01, 0x21 }, amf[2] = { 0x80, 0 };
	static const uint8_t sqn_ms[6] = { 0, 0, 0, 0, 0x03, 0x41 };
	struct tw_sub_keys kk;
	struct tw_aka_vector av;
	struct tw_usim u;
	uint8_t k[32], opc[32], autn[16], auts[14], ras[14], res[16], ck[16], ik[16], sq[6];
	size_t res_len = 0;

	for (int tuak = 0; tuak < 2; tuak++) {
		/* the network's side, keys in the clear: AUTN and AUTS */
		known(k, 32, 160 + (unsigned)tuak);
		known(opc, 32, 170 + (unsigned)tuak);
		sink |= usim_keys(&kk, tuak, k, opc);
		sink |= tw_aka_generate(&kk.aka, pub, sqn, amf, &av);
		memcpy(autn, av.autn, 16);
		sink |= tw_aka_auts_build(&kk.aka, pub, sqn_ms, auts);
		tw_wipe(&av, sizeof(av));
		SECRET(k, 32);
		SECRET(opc, 32);
		sink |= usim_keys(&kk, tuak, k, opc);
		sink |= tw_usim_init(&u, "001010000000001", &kk);
		for (int bad = 1; bad >= 0; bad--) {
			autn[15] ^= (uint8_t)bad;
			expect(tw_usim_authenticate(&u, pub, autn, res, &res_len, ck, ik, ras),
			       bad ? TW_ERR_AUTH : TW_OK, "tw_usim_authenticate");
			autn[15] ^= (uint8_t)bad;
		}
		expect(tw_usim_authenticate(&u, pub, autn, res, &res_len, ck, ik, ras), TW_ERR_SYNC,
		       "tw_usim_authenticate (replayed)");
		for (int bad = 0; bad < 2; bad++) {
			auts[13] ^= (uint8_t)(bad << 7);
			expect(tw_aka_auts_verify(&kk.aka, pub, auts, sq), bad ? TW_ERR_AUTH : TW_OK,
			       "tw_aka_auts_verify");
			auts[13] ^= (uint8_t)(bad << 7);
		}
		tw_wipe(&u, sizeof(u));
		tw_wipe(&kk, sizeof(kk));
	}
}

static int peer_random(void *arg, uint8_t *buf, size_t len)
{
	(void)arg;
	memset(buf, 0x6b, len);
	return TW_OK;
}

/*
 * One EAP-AKA/AKA' exchange up to the peer's AKA-Challenge response in
 * rsp: the server gets its vector with XRES, CK and IK secret; what it
 * sends is public on the air and marked so before the peer (keys in the
 * clear) reads it. Returns the server's action on the challenge.
 */
static int aka_exchange(struct tw_aka_server_ctx *s, struct tw_aka_peer_ctx *p,
			const struct tw_eap_server_cfg *cfg, struct tw_subscriber *sub,
			uint8_t method, unsigned round, uint8_t *rsp, size_t *rsp_len)
{
	struct tw_eap_aka_vec v;
	uint8_t a[1024];
	size_t al = 0;
	int act;

	sink |= tw_aka_server_init(s, cfg, method, 1);
	act = tw_aka_server_start(s, a, sizeof(a), &al);
	for (int i = 0; i < 4 && act == TW_EAP_SEND; i++) {
		act = tw_aka_peer_input(p, a, al, rsp, 1024, rsp_len);
		if (act != TW_EAP_SEND)
			break;
		act = tw_aka_server_input(s, rsp, *rsp_len, a, sizeof(a), &al);
	}
	expect(act, TW_EAP_NEED_VECTOR, "tw_aka_server_input (identity)");
	sink |= method == TW_EAP_TYPE_AKA_PRIME ? tw_vecsrc_aka_prime(sub, pub + 16 * round, &v)
						: tw_vecsrc_aka(sub, pub + 16 * round, &v);
	SECRET(v.xres, sizeof(v.xres));
	SECRET(v.ck, sizeof(v.ck));
	SECRET(v.ik, sizeof(v.ik));
	act = tw_aka_server_vector(s, &v, a, sizeof(a), &al);
	expect(act, TW_EAP_SEND, "tw_aka_server_vector");
	tw_wipe(&v, sizeof(v));
	PUBLIC(a, al);
	return tw_aka_peer_input(p, a, al, rsp, 1024, rsp_len);
}

/*
 * The EAP-AKA and EAP-AKA' server's check of the AKA-Challenge response
 * (RFC 4187 §9.4, RFC 9048): AT_MAC under K_aut, then AT_RES against XRES
 * (both from the secret vector), then AT_CHECKCODE. Valid; AT_MAC
 * altered; AT_RES altered under a valid AT_MAC (made with the peer's
 * K_aut, as a peer with a wrong RES would): accept, then a failure
 * notification for each.
 */
static void ct_aka_server(void)
{
	static const char imsi[] = "001010000000007";
	static const uint8_t amf[2] = { 0x90, 0x01 };
	struct tw_eap_server_cfg cfg;
	struct tw_eap_peer_cfg pc;
	struct tw_eap_peer_ids ids;
	struct tw_sub_keys kk;
	struct tw_subscriber sub;
	struct tw_usim u;
	struct tw_aka_server_ctx s;
	struct tw_aka_peer_ctx p;
	struct tw_simaka_builder b;
	struct tw_simaka_msg m;
	uint8_t k[16], opc[16], rsp[1024], q[256], res[16], ans[1024];
	size_t rl = 0, ql = 0, ol = 0;
	unsigned round = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.network_name = (const uint8_t *)"WLAN";
	cfg.network_name_len = 4;
	cfg.enable_aka = cfg.enable_aka_prime = true;
	memset(&pc, 0, sizeof(pc));
	pc.imsi = imsi;
	pc.imsi_len = sizeof(imsi) - 1;
	pc.random = peer_random;
	known(k, 16, 190);
	known(opc, 16, 191);
	sink |= tw_sub_keys_milenage(&kk, k, opc, NULL);
	sink |= tw_subscriber_init(&sub, imsi, &kk, amf);
	sink |= tw_usim_init_from_subscriber(&u, &sub);
	for (int i = 0; i < 2; i++) {
		uint8_t method = i ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;

		/* an AKA' peer would take the AKA challenge's AT_BIDDING for
		 * a bidding-down attack (RFC 9048 §4) */
		pc.support_aka_prime = i == 1;
		for (int bad = 0; bad < 3; bad++, round++) {
			memset(&ids, 0, sizeof(ids));
			sink |= tw_aka_peer_init(&p, &pc, &u, &ids);
			int act = aka_exchange(&s, &p, &cfg, &sub, method, round, rsp, &rl);

			expect(act, TW_EAP_SEND, "tw_aka_peer_input (challenge)");
			if (act != TW_EAP_SEND || tw_simaka_decode(&m, rsp, rl) != TW_OK ||
			    m.subtype != TW_SIMAKA_CHALLENGE || !tw_simaka_has(&m.mac) ||
			    !tw_simaka_has(&m.res)) {
				wrong++;
				break;
			}
			if (bad == 1)
				rsp[m.mac.val - rsp + 2] ^= 0x01;
			if (bad == 2) {
				/* the same response with RES altered, AT_MAC valid */
				memcpy(res, m.res.val, m.res.len);
				res[0] ^= 0x80;
				tw_simaka_build_init(&b, q, sizeof(q), TW_EAP_RESPONSE, m.id, method,
						     TW_SIMAKA_CHALLENGE);
				tw_simaka_put_res(&b, res, m.res_bits);
				if (tw_simaka_has(&m.checkcode))
					tw_simaka_put_fixed(&b, TW_AT_CHECKCODE, 0, m.checkcode.val,
							    m.checkcode.len);
				tw_simaka_put_mac(&b);
				sink |= tw_simaka_finish_mac(&b, &p.mac, NULL, 0, &ql);
				memcpy(rsp, q, ql);
				rl = ql;
			}
			expect(tw_aka_server_input(&s, rsp, rl, ans, sizeof(ans), &ol),
			       bad ? TW_EAP_SEND : TW_EAP_ACCEPT, "tw_aka_server_input (challenge)");
			tw_aka_server_wipe(&s);
			tw_aka_peer_wipe(&p);
		}
	}
	tw_wipe(&u, sizeof(u));
	tw_wipe(&sub, sizeof(sub));
	tw_wipe(&kk, sizeof(kk));
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

/*
 * The negative control: a tag check written the wrong way, an
 * HMAC-SHA-256 under a secret key compared with the received tag by
 * memcmp (variable time) and a branch on the result. Memcheck must flag
 * it; if it does not, the verifiers above prove nothing.
 */
static void ct_canary_memcmp(void)
{
	uint8_t k[32], t[32], mac[32];
	int rejected = 0;

	known(k, sizeof(k), 180);
	tw_hmac_sha256(t, k, sizeof(k), pub, 64);
	SECRET(k, sizeof(k));
	tw_hmac_sha256(mac, k, sizeof(k), pub, 64);
	for (int bad = 0; bad < 2; bad++) {
		t[31] ^= (uint8_t)bad;
		if (memcmp(mac, t, sizeof(t)) != 0)
			rejected++;
	}
	sink |= rejected != 1;
}

/* A canary passes when Memcheck flags it (its errors are expected, not
 * counted); unflagged, the check is blind. */
static void canary(const char *name, void (*fn)(void))
{
	unsigned long before;

	fill();
	before = VALGRIND_COUNT_ERRORS;
	fn();
	if (VALGRIND_COUNT_ERRORS > before) {
		passed++;
	} else {
		failed++;
		printf("FAIL ct: %s was not flagged: the check is blind\n", name);
	}
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
		{ "RADIUS Message-/Response Authenticator, one and batch", ct_radius },
		{ "EAP-SIM/AKA/AKA' AT_MAC, AT_CHECKCODE, AT_ENCR_DATA", ct_simaka },
		{ "ERP Re-auth tag (HMAC-SHA-256-64/128/256)", ct_erp },
		{ "802.11 CCMP-128/256, GCMP-128/256 decap, one and batch", ct_ccmp },
		{ "EAPOL-Key MIC verify, AKM 1, 2, 5, 6, 8", ct_eapol_mic },
		{ "ESP decap, every keyed transform, one and batch", ct_esp },
		{ "AH decap, HMAC-SHA1-96/SHA-256-128/MD5-96", ct_ah },
		{ "USIM AUTN (MAC-A, SQN), HE AUTS (MAC-S)", ct_usim_auts },
		{ "EAP-AKA/AKA' server: AT_MAC, RES vs XRES", ct_aka_server },
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
		fill();
		run("RADIUS authenticators on AVX2 (MD5 x8 batches)", ct_radius);
		fill();
		run("3DES on AVX2 (256-lane bitsliced kernel)", ct_des3);
	}
	tw_cpu_restrict(UINT32_MAX);
	canary("the COMP128 canary", ct_canary_comp128);
	canary("the memcmp tag check (negative control)", ct_canary_memcmp);
	PUBLIC(&sink, sizeof(sink));
	printf("ct_check: %u passed, %u failed\n", passed, failed);
	return failed == 0 && sink == 0 ? 0 : 1;
}
