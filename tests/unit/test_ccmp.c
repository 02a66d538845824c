/*
 * Tests of 802.11 CCMP/GCMP MPDU protection (IEEE 802.11-2020 §12.5.3,
 * §12.5.5): the published CCMP test MPDUs through the MPDU layer (or the
 * CCM core for the pre-802.11n QoS+Order frames), CCMP-256 and GCMP
 * against OpenSSL using the published AAD and nonce of the same frames,
 * header shapes (A4, QoS, +HTC, management), every bad input (truncated
 * frame, wrong Key ID, ExtIV clear, bad MIC, replayed PN, PN exhaustion,
 * small buffer), per-TID replay rules, and batches against single calls.
 */
#include <openssl/evp.h>

#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/ccm.h"
#include "twag/ccmp.h"
#include "twag/cpu.h"
#include "twag/err.h"

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

/* The published aad/nonce of the first two test MPDUs, kept for the
 * OpenSSL cross-checks of CCMP-256 and GCMP. */
struct pub {
	uint8_t frame[128], enc[160], aad[32], nonce[13];
	size_t frame_len, enc_len, aad_len, hdr_len;
	uint64_t pn;
	unsigned key_id;
};
static struct pub pubs[4];
static int n_pubs;

static void run_vector(const struct tv_case *c)
{
	uint8_t tk[16], pnb[6], kid[1], hdr[40], pt[64], frame[128], enc[160], out[160];
	uint8_t nonce[13], aad[32], mic[8], got[64], gmic[8];
	size_t hl = tv_hex(c, "header", hdr, sizeof(hdr));
	size_t pl = tv_hex(c, "plaintext", pt, sizeof(pt));
	size_t el = tv_hex(c, "encrypted_mpdu", enc, sizeof(enc));
	size_t al = tv_hex(c, "aad", aad, sizeof(aad));
	uint16_t fc;
	uint64_t pn;

	tv_hex(c, "tk", tk, sizeof(tk));
	tv_hex(c, "pn", pnb, sizeof(pnb));
	tv_hex(c, "key_id", kid, sizeof(kid));
	tv_hex(c, "nonce", nonce, sizeof(nonce));
	tv_hex(c, "mic", mic, sizeof(mic));
	pn = tw_load_be48(pnb);
	fc = (uint16_t)(hdr[0] | hdr[1] << 8);
	memcpy(frame, hdr, hl);
	memcpy(frame + hl, pt, pl);
	for (int m = 0; m < n_masks; m++) {
		struct tw_ccmp_key key;
		struct tw_aes_ctx aes;
		struct tw_ccmp_tx tx;
		struct tw_ccmp_rx rx;
		size_t ol = 0;
		uint64_t rpn = 0;

		tw_cpu_restrict(masks[m]);
		/* The CCM core with the published nonce and aad. */
		CHECK_OK(tw_aes_init_enc(&aes, tk, 16));
		CHECK_OK(tw_ccm_encrypt(&aes, nonce, 13, aad, al, pt, got, pl, gmic, 8));
		TV_EXPECT(c, "ciphertext", got, pl);
		TV_EXPECT(c, "mic", gmic, 8);
		/* QoS Data with Order set: P802.11i/D7.0 kept Order in the AAD
		 * and had no HT Control field; 802.11-2020 differs (see file). */
		if ((fc & 0x008c) == 0x0088 && (fc & 0x8000))
			continue;
		CHECK_OK(tw_ccmp_key_init(&key, TW_CCMP_128, tk, 16, kid[0]));
		tx.pn = pn - 1;
		CHECK_OK(tw_ccmp_encap(&key, &tx, frame, hl + pl, out, sizeof(out), &ol));
		CHECK(ol == el && tx.pn == pn);
		TV_EXPECT(c, "encrypted_mpdu", out, ol);
		/* In place. */
		memcpy(out, frame, hl + pl);
		tx.pn = pn - 1;
		CHECK_OK(tw_ccmp_encap(&key, &tx, out, hl + pl, out, sizeof(out), &ol));
		TV_EXPECT(c, "encrypted_mpdu", out, ol);
		/* Decapsulation, in place, then the replay. */
		tw_ccmp_rx_init(&rx);
		CHECK_OK(tw_ccmp_decap(&key, &rx, out, el, out, sizeof(out), &ol, &rpn));
		CHECK(ol == hl + pl && rpn == pn);
		CHECK_MEM(out, frame, hl + pl);
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, el, out, sizeof(out), &ol, NULL), TW_ERR_REPLAY);
		CHECK(rx.replays == 1);
		/* Bad MIC: AUTH, no plaintext, counter unmoved. */
		tw_ccmp_rx_init(&rx);
		enc[el - 1] ^= 0x01;
		memset(out, 0x55, sizeof(out));
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, el, out, sizeof(out), &ol, NULL), TW_ERR_AUTH);
		CHECK(tw_ct_is_zero(out + hl, pl) && rx.mic_failures == 1 && rx.pn[0] == 0);
		enc[el - 1] ^= 0x01;
		/* A bit of the masked header (Retry) does not matter; one of A2 does. */
		enc[1] ^= 0x08;
		CHECK_OK(tw_ccmp_decap(&key, NULL, enc, el, out, sizeof(out), &ol, NULL));
		enc[1] ^= 0x08;
		enc[10] ^= 0x01;
		CHECK_ERR(tw_ccmp_decap(&key, NULL, enc, el, out, sizeof(out), &ol, NULL), TW_ERR_AUTH);
		enc[10] ^= 0x01;
		/* Wrong Key ID, ExtIV clear, truncations, small buffer. */
		enc[hl + 3] ^= 0x40;
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, el, out, sizeof(out), &ol, NULL), TW_ERR_NOTFOUND);
		enc[hl + 3] ^= 0x40;
		CHECK(rx.bad_key_id == 1);
		enc[hl + 3] ^= 0x20;
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, el, out, sizeof(out), &ol, NULL), TW_ERR_DECODE);
		enc[hl + 3] ^= 0x20;
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, hl + 8 + 7, out, sizeof(out), &ol, NULL), TW_ERR_DECODE);
		CHECK_ERR(tw_ccmp_decap(&key, NULL, enc, hl + 8 + 8, out, sizeof(out), &ol, NULL), TW_ERR_AUTH);
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, 23, out, sizeof(out), &ol, NULL), TW_ERR_DECODE);
		CHECK_ERR(tw_ccmp_decap(&key, &rx, enc, el, out, hl + pl - 1, &ol, NULL), TW_ERR_OVERFLOW);
		CHECK_ERR(tw_ccmp_encap(&key, &tx, frame, hl + pl, out, hl + pl + 15, &ol), TW_ERR_OVERFLOW);
		CHECK_ERR(tw_ccmp_encap(&key, &tx, frame, 23, out, sizeof(out), &ol), TW_ERR_DECODE);
		tw_ccmp_key_wipe(&key);
		if (m == 0 && n_pubs < 4) {
			struct pub *p = &pubs[n_pubs++];

			memcpy(p->frame, frame, hl + pl);
			p->frame_len = hl + pl;
			memcpy(p->enc, enc, el);
			p->enc_len = el;
			memcpy(p->aad, aad, al);
			p->aad_len = al;
			memcpy(p->nonce, nonce, 13);
			p->hdr_len = hl;
			p->pn = pn;
			p->key_id = kid[0];
		}
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* OpenSSL AEAD with the published aad and nonce (GCMP: A2 || PN). */
static bool evp_aead(int gcm, const uint8_t *key, size_t kl, const uint8_t *iv, size_t ivl,
		     const uint8_t *aad, size_t al, const uint8_t *in, uint8_t *out,
		     size_t len, uint8_t *tag, size_t tl)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *ci = gcm ? (kl == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm())
				   : (kl == 16 ? EVP_aes_128_ccm() : EVP_aes_256_ccm());
	uint8_t d[1];
	int ol;
	bool ok = c && EVP_EncryptInit_ex(c, ci, NULL, NULL, NULL) &&
		  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, (int)ivl, NULL) &&
		  (gcm || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, (int)tl, NULL)) &&
		  EVP_EncryptInit_ex(c, NULL, NULL, key, iv) &&
		  (gcm || EVP_EncryptUpdate(c, NULL, &ol, NULL, (int)len)) &&
		  EVP_EncryptUpdate(c, NULL, &ol, aad, (int)al) &&
		  EVP_EncryptUpdate(c, out, &ol, in, (int)len) && EVP_EncryptFinal_ex(c, d, &ol) &&
		  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)tl, tag);

	EVP_CIPHER_CTX_free(c);
	return ok;
}

static void test_other_ciphers(void)
{
	static const enum tw_ccmp_cipher ciphers[3] = { TW_CCMP_256, TW_GCMP_128, TW_GCMP_256 };

	CHECK(n_pubs == 2);
	for (int pi = 0; pi < n_pubs; pi++) {
		const struct pub *p = &pubs[pi];
		size_t bl = p->frame_len - p->hdr_len;

		for (int ci = 0; ci < 3; ci++) {
			uint8_t tk[32], ref[64], rtag[16], out[200];
			size_t kl = ciphers[ci] == TW_GCMP_128 ? 16 : 32;
			int gcm = ciphers[ci] != TW_CCMP_256;

			tw_test_random(tk, sizeof(tk));
			CHECK(evp_aead(gcm, tk, kl, gcm ? p->nonce + 1 : p->nonce, gcm ? 12 : 13,
				       p->aad, p->aad_len, p->frame + p->hdr_len, ref, bl, rtag, 16));
			for (int m = 0; m < n_masks; m++) {
				struct tw_ccmp_key key;
				struct tw_ccmp_tx tx = { p->pn - 1 };
				struct tw_ccmp_rx rx;
				size_t ol = 0;

				tw_cpu_restrict(masks[m]);
				CHECK_OK(tw_ccmp_key_init(&key, ciphers[ci], tk, kl, p->key_id));
				CHECK(tw_ccmp_mic_len(&key) == 16);
				CHECK_OK(tw_ccmp_encap(&key, &tx, p->frame, p->frame_len, out, sizeof(out), &ol));
				CHECK(ol == p->frame_len + 24);
				/* Header and CCMP header as in the CCMP-128 frame. */
				CHECK_MEM(out, p->enc, p->hdr_len + 8);
				CHECK_MEM(out + p->hdr_len + 8, ref, bl);
				CHECK_MEM(out + p->hdr_len + 8 + bl, rtag, 16);
				tw_ccmp_rx_init(&rx);
				CHECK_OK(tw_ccmp_decap(&key, &rx, out, ol, out, sizeof(out), &ol, NULL));
				CHECK_MEM(out, p->frame, p->frame_len);
				tw_ccmp_key_wipe(&key);
			}
		}
	}
	tw_cpu_restrict(UINT32_MAX);
}

/* ---- synthetic frames ---- */

/* A data frame: QoS (tid >= 0) or not, A4 if a4, +HTC if htc. */
static size_t mk_frame(uint8_t *f, int tid, bool a4, bool htc, size_t body)
{
	size_t hl = 24;

	tw_test_random(f, 40 + body);
	f[0] = tid >= 0 ? 0x88 : 0x08;
	f[1] = (uint8_t)((a4 ? 0x03 : 0x01) | (htc && tid >= 0 ? 0x80 : 0) | (f[1] & 0x38));
	if (a4)
		hl += 6;
	if (tid >= 0) {
		f[hl] = (uint8_t)((f[hl] & 0xf0) | tid);
		hl += 2 + (htc ? 4 : 0);
	}
	return hl + body;
}

static void test_replay_rules(void)
{
	uint8_t tk[16], f[200], enc[8][240], out[240];
	struct tw_ccmp_key key, key2;
	struct tw_ccmp_tx tx;
	struct tw_ccmp_rx rx;
	size_t fl[8], el[8], ol;

	tw_test_random(tk, sizeof(tk));
	CHECK_OK(tw_ccmp_key_init(&key, TW_CCMP_128, tk, 16, 1));
	/* PN 10 TID 1, PN 5 TID 2, PN 7 TID 1, PN 20 non-QoS, PN 3 mgmt,
	 * PN 8 TID 0, PN 100 TID 1 (to be forged), PN 11 TID 1. */
	static const int tids[8] = { 1, 2, 1, -1, -2, 0, 1, 1 };
	static const uint64_t pns[8] = { 10, 5, 7, 20, 3, 8, 100, 11 };
	for (int i = 0; i < 8; i++) {
		if (tids[i] == -2) {
			/* Deauthentication (management, subtype 12): robust
			 * management frames use the management counter. */
			tw_test_random(f, 40);
			f[0] = 0xc0;
			f[1] = 0x00;
			fl[i] = 24 + 2;
		} else {
			fl[i] = mk_frame(f, tids[i], false, false, 40);
		}
		tx.pn = pns[i] - 1;
		CHECK_OK(tw_ccmp_encap(&key, &tx, f, fl[i], enc[i], sizeof(enc[i]), &el[i]));
	}
	enc[6][el[6] - 3] ^= 0x10;
	tw_ccmp_rx_init(&rx);
	CHECK_OK(tw_ccmp_decap(&key, &rx, enc[0], el[0], out, sizeof(out), &ol, NULL));
	CHECK_OK(tw_ccmp_decap(&key, &rx, enc[1], el[1], out, sizeof(out), &ol, NULL));
	CHECK_ERR(tw_ccmp_decap(&key, &rx, enc[2], el[2], out, sizeof(out), &ol, NULL), TW_ERR_REPLAY);
	CHECK_OK(tw_ccmp_decap(&key, &rx, enc[3], el[3], out, sizeof(out), &ol, NULL));
	CHECK(rx.pn[0] == 20 && rx.pn[1] == 10 && rx.pn[2] == 5);
	CHECK_OK(tw_ccmp_decap(&key, &rx, enc[4], el[4], out, sizeof(out), &ol, NULL));
	CHECK(rx.pn[TW_CCMP_RC_MGMT] == 3);
	/* Non-QoS data and TID 0 share a counter: PN 8 < 20. */
	CHECK_ERR(tw_ccmp_decap(&key, &rx, enc[5], el[5], out, sizeof(out), &ol, NULL), TW_ERR_REPLAY);
	/* A forged high PN never moves the counter. */
	CHECK_ERR(tw_ccmp_decap(&key, &rx, enc[6], el[6], out, sizeof(out), &ol, NULL), TW_ERR_AUTH);
	CHECK(rx.pn[1] == 10);
	CHECK_OK(tw_ccmp_decap(&key, &rx, enc[7], el[7], out, sizeof(out), &ol, NULL));
	CHECK(rx.pn[1] == 11 && rx.replays == 2 && rx.mic_failures == 1);
	/* Rekey: the receiver's counters stay; PN 10 of TID 1 under the new
	 * key is still a replay. */
	tk[0] ^= 1;
	CHECK_OK(tw_ccmp_key_init(&key2, TW_CCMP_128, tk, 16, 1));
	fl[0] = mk_frame(f, 1, false, false, 16);
	tx.pn = 9;
	CHECK_OK(tw_ccmp_encap(&key2, &tx, f, fl[0], enc[0], sizeof(enc[0]), &el[0]));
	CHECK_ERR(tw_ccmp_decap(&key2, &rx, enc[0], el[0], out, sizeof(out), &ol, NULL), TW_ERR_REPLAY);
	/* PN exhaustion: the last PN is 2^48 - 1, then the sender stops. */
	tx.pn = TW_CCMP_PN_MAX - 1;
	CHECK_OK(tw_ccmp_encap(&key2, &tx, f, fl[0], enc[0], sizeof(enc[0]), &el[0]));
	CHECK(tx.pn == TW_CCMP_PN_MAX);
	CHECK_ERR(tw_ccmp_encap(&key2, &tx, f, fl[0], enc[0], sizeof(enc[0]), &el[0]), TW_ERR_RANGE);
	CHECK_OK(tw_ccmp_decap(&key2, &rx, enc[0], el[0], out, sizeof(out), &ol, NULL));
	CHECK(rx.pn[1] == TW_CCMP_PN_MAX);
	/* Key init arguments. */
	CHECK_ERR(tw_ccmp_key_init(&key2, TW_CCMP_128, tk, 32, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccmp_key_init(&key2, TW_GCMP_256, tk, 16, 0), TW_ERR_LENGTH);
	CHECK_ERR(tw_ccmp_key_init(&key2, TW_CCMP_128, tk, 16, 4), TW_ERR_INVAL);
	CHECK_ERR(tw_ccmp_key_init(&key2, (enum tw_ccmp_cipher)9, tk, 16, 0), TW_ERR_INVAL);
	tw_ccmp_key_wipe(&key);
	tw_ccmp_key_wipe(&key2);
}

static void test_headers(void)
{
	uint8_t tk[32], f[300], enc[340], out[340];
	struct tw_ccmp_key key;
	struct tw_ccmp_tx tx = { 0 };
	size_t fl, el, ol;

	tw_test_random(tk, sizeof(tk));
	CHECK_OK(tw_ccmp_key_init(&key, TW_CCMP_256, tk, 32, 2));
	/* Every header shape round-trips and keeps its header octets. */
	for (int shape = 0; shape < 8; shape++) {
		fl = mk_frame(f, shape & 1 ? 5 : -1, shape & 2, shape & 4, 100 + shape);
		CHECK_OK(tw_ccmp_encap(&key, &tx, f, fl, enc, sizeof(enc), &el));
		CHECK(el == fl + 24);
		CHECK_OK(tw_ccmp_decap(&key, NULL, enc, el, out, sizeof(out), &ol, NULL));
		CHECK(ol == fl);
		f[1] |= 0x40;
		CHECK_MEM(out, f, fl);
	}
	/* Control frames (type 1), extension (type 3), version 1: rejected. */
	fl = mk_frame(f, -1, false, false, 10);
	f[0] = 0xb4;
	CHECK_ERR(tw_ccmp_encap(&key, &tx, f, fl, enc, sizeof(enc), &el), TW_ERR_DECODE);
	f[0] = 0x0c;
	CHECK_ERR(tw_ccmp_encap(&key, &tx, f, fl, enc, sizeof(enc), &el), TW_ERR_DECODE);
	f[0] = 0x09;
	CHECK_ERR(tw_ccmp_encap(&key, &tx, f, fl, enc, sizeof(enc), &el), TW_ERR_DECODE);
	/* A QoS header cut inside the QoS Control field. */
	fl = mk_frame(f, 3, true, false, 0);
	CHECK_ERR(tw_ccmp_encap(&key, &tx, f, fl - 1, enc, sizeof(enc), &el), TW_ERR_DECODE);
	CHECK_ERR(tw_ccmp_encap(NULL, &tx, f, fl, enc, sizeof(enc), &el), TW_ERR_INVAL);
	CHECK_ERR(tw_ccmp_encap(&key, &tx, f, fl, enc, sizeof(enc), NULL), TW_ERR_INVAL);
	tw_ccmp_key_wipe(&key);
}

enum { NB = 45 };

static void test_batch(void)
{
	static uint8_t frames[NB][1700], single[NB][1750], outb[NB][1750], dec[NB][1750];
	static struct tw_ccmp_key keys[4];
	static struct tw_ccmp_mpdu mp[NB];
	struct tw_ccmp_tx tx[4], tx2[4];
	struct tw_ccmp_rx rx;
	size_t fl[NB], sl[NB];
	static const enum tw_ccmp_cipher ciphers[4] = { TW_CCMP_128, TW_CCMP_256, TW_GCMP_128,
							TW_GCMP_256 };

	for (int m = 0; m < n_masks; m++) {
		bool ok = true;

		tw_cpu_restrict(masks[m]);
		for (int k = 0; k < 4; k++) {
			uint8_t tk[32];

			tw_test_random(tk, sizeof(tk));
			CHECK_OK(tw_ccmp_key_init(&keys[k], ciphers[k], tk, k % 2 ? 32 : 16, 0));
			tx[k].pn = tx2[k].pn = 1000 * (uint64_t)k;
		}
		for (int i = 0; i < NB; i++) {
			uint32_t r = tw_test_random_u32();
			int k = i % 3 == 0 ? (int)(r % 4) : 0;

			fl[i] = mk_frame(frames[i], (int)(r % 17) - 1, r & 0x100, r & 0x200,
					 r & 0x400 ? 1500 + r % 100 : r % 300);
			CHECK_OK(tw_ccmp_encap(&keys[k], &tx[k], frames[i], fl[i], single[i],
					       sizeof(single[i]), &sl[i]));
			mp[i] = (struct tw_ccmp_mpdu){ .key = &keys[k], .tx = &tx2[k], .in = frames[i],
						       .in_len = fl[i], .out = outb[i],
						       .out_cap = sizeof(outb[i]) };
		}
		CHECK_OK(tw_ccmp_encap_batch(mp, NB));
		for (int i = 0; i < NB; i++)
			ok &= mp[i].status == TW_OK && mp[i].out_len == sl[i] &&
			      memcmp(outb[i], single[i], sl[i]) == 0;
		CHECK(ok);
		/* Decap in one batch (no replay state), frame 7 forged. */
		outb[7][sl[7] - 1] ^= 0x01;
		for (int i = 0; i < NB; i++) {
			mp[i].in = outb[i];
			mp[i].in_len = sl[i];
			mp[i].out = dec[i];
			mp[i].rx = NULL;
		}
		CHECK_ERR(tw_ccmp_decap_batch(mp, NB), TW_ERR_AUTH);
		ok = true;
		for (int i = 0; i < NB; i++) {
			if (i == 7) {
				ok &= mp[i].status == TW_ERR_AUTH;
				continue;
			}
			frames[i][1] |= 0x40;
			ok &= mp[i].status == TW_OK && mp[i].out_len == fl[i] &&
			      memcmp(dec[i], frames[i], fl[i]) == 0;
		}
		CHECK(ok);
		/* The same frame twice in one batch for one receiver: the
		 * second is a replay even though both pass the early check. */
		tw_ccmp_rx_init(&rx);
		mp[0].rx = mp[1].rx = &rx;
		mp[1].key = mp[0].key;
		mp[1].in = outb[0];
		mp[1].in_len = sl[0];
		CHECK_ERR(tw_ccmp_decap_batch(mp, 2), TW_ERR_REPLAY);
		CHECK(mp[0].status == TW_OK && mp[1].status == TW_ERR_REPLAY);
		CHECK(rx.replays == 1);
		for (int k = 0; k < 4; k++)
			tw_ccmp_key_wipe(&keys[k]);
	}
	tw_cpu_restrict(UINT32_MAX);
	CHECK_ERR(tw_ccmp_encap_batch(NULL, 1), TW_ERR_INVAL);
	CHECK_OK(tw_ccmp_encap_batch(NULL, 0));
}

/*
 * The VAES group path of tw_ccmp_encap_batch (lanes built from the MAC
 * headers): batches of CCMP-128 and CCMP-256 MPDUs of every header shape
 * (QoS or not, A4, +HTC, management, SPP A-MSDU) in length bands that
 * fill groups (short tails, 1500-octet frames, and 4000..4400 octets
 * across the counter's carry at 255 blocks), each compared with the
 * portable single-frame encapsulation (checked against the published
 * MPDUs and OpenSSL above), with guard octets after every output.
 */
static void test_batch_groups(void)
{
	enum { NGB = 37, FMAX = 4500, CAP = FMAX + 24 + 16 };
	static uint8_t frames[NGB][FMAX + 64], ref[NGB][CAP], outb[NGB][CAP];
	static struct tw_ccmp_mpdu mp[NGB];
	static const size_t band[4][2] = { { 0, 15 }, { 1480, 40 }, { 4000, 400 }, { 20, 300 } };
	struct tw_ccmp_key keys[6];
	struct tw_ccmp_tx tx[6], tx2[6];
	size_t fl[NGB], rl[NGB];
	bool ok = true;

	for (int round = 0; round < 8; round++) {
		for (int k = 0; k < 6; k++) {
			uint8_t tk[32];
			enum tw_ccmp_cipher c = k % 2 ? TW_CCMP_256 : TW_CCMP_128;

			tw_test_random(tk, sizeof(tk));
			CHECK_OK(tw_ccmp_key_init(&keys[k], c, tk, c == TW_CCMP_256 ? 32 : 16,
						  (unsigned)k % 4));
			keys[k].spp_amsdu = k == 4;
			tx[k].pn = tx2[k].pn = 77 * (uint64_t)k + (uint64_t)round;
		}
		tw_cpu_restrict(0);
		for (int i = 0; i < NGB; i++) {
			uint32_t r = tw_test_random_u32();
			int k = (int)(r % 6);
			size_t body = band[round % 4][0] + tw_test_random_u32() % band[round % 4][1];

			fl[i] = mk_frame(frames[i], (int)(r >> 8) % 17 - 1, r & 0x10000, r & 0x20000,
					 body);
			if ((r & 0x1c0000) == 0x1c0000) /* a management frame (Action) */
				frames[i][0] = 0xd0;
			CHECK_OK(tw_ccmp_encap(&keys[k], &tx[k], frames[i], fl[i], ref[i],
					       sizeof(ref[i]), &rl[i]));
			memset(outb[i], 0xa5, sizeof(outb[i]));
			mp[i] = (struct tw_ccmp_mpdu){ .key = &keys[k], .tx = &tx2[k], .in = frames[i],
						       .in_len = fl[i], .out = outb[i],
						       .out_cap = sizeof(outb[i]) };
		}
		tw_cpu_restrict(UINT32_MAX);
		size_t n = round < 4 ? NGB : 16 + (size_t)round;

		ok &= tw_ccmp_encap_batch(mp, n) == TW_OK;
		for (size_t i = 0; i < n; i++) {
			ok &= mp[i].status == TW_OK && mp[i].out_len == rl[i] &&
			      memcmp(outb[i], ref[i], rl[i]) == 0;
			for (size_t j = rl[i]; j < sizeof(outb[i]); j++)
				ok &= outb[i][j] == 0xa5;
		}
		if (!ok) {
			tw_note("batch group round %d differs from the portable single path", round);
			break;
		}
		for (int k = 0; k < 6; k++)
			tw_ccmp_key_wipe(&keys[k]);
	}
	CHECK(ok);
	tw_cpu_restrict(UINT32_MAX);
}

/*
 * Buffer placement: in place, out of place, and partly overlapping (the
 * output 3 bytes above, 5 below, 40 above the input), for all four ciphers,
 * single calls and batches. Every placement must give the bytes a fresh
 * out-of-place encapsulation gives, and decapsulate back; a forged MIC in
 * the batch fails alone.
 */
static void test_overlap(void)
{
	enum { NOV = 24, CAP = 1900 };
	static const enum tw_ccmp_cipher ciph[4] = { TW_CCMP_128, TW_CCMP_256,
						     TW_GCMP_128, TW_GCMP_256 };
	static const int shifts[5] = { 0, 3, -5, 40, 1000 /* disjoint */ };
	static uint8_t fr[NOV][1800], ref[NOV][1800], buf[NOV][CAP + 128], dis[NOV][CAP];
	static struct tw_ccmp_mpdu mp[NOV];
	struct tw_ccmp_key keys[4];
	struct tw_ccmp_tx tx[NOV];
	size_t fl[NOV], rl[NOV];
	int sh[NOV], kk[NOV];
	bool ok = true;

	for (int k = 0; k < 4; k++) {
		uint8_t tk[32];

		tw_test_random(tk, sizeof(tk));
		ok &= tw_ccmp_key_init(&keys[k], ciph[k], tk, k % 2 ? 32 : 16,
				       (unsigned)k) == TW_OK;
	}
	for (int i = 0; i < NOV; i++) {
		struct tw_ccmp_tx t = { .pn = 100 + (uint64_t)i };
		size_t bl = tw_test_random_u32() % 4 ? 1400 + tw_test_random_u32() % 200
						     : tw_test_random_u32() % 64;
		size_t hl;

		kk[i] = (int)(tw_test_random_u32() % 4);
		tw_test_random(fr[i], 36);
		fr[i][0] = 0x88; /* QoS Data */
		fr[i][1] = (tw_test_random_u32() & 1) ? 0x03 : 0x01; /* A4 or not */
		hl = (fr[i][1] & 3) == 3 ? 32 : 26;
		tw_test_random(fr[i] + hl, bl);
		fl[i] = hl + bl;
		ok &= tw_ccmp_encap(&keys[kk[i]], &t, fr[i], fl[i], ref[i],
				    sizeof(ref[i]), &rl[i]) == TW_OK;
		sh[i] = shifts[tw_test_random_u32() % 5];
		uint8_t *in = buf[i] + 64;
		uint8_t *out = sh[i] == 1000 ? dis[i] : in + sh[i];
		memcpy(in, fr[i], fl[i]);
		tx[i].pn = 100 + (uint64_t)i;
		mp[i] = (struct tw_ccmp_mpdu){ .key = &keys[kk[i]], .tx = &tx[i],
					       .in = in, .in_len = fl[i], .out = out,
					       .out_cap = CAP - 64 - 40 };
	}
	CHECK_OK(tw_ccmp_encap_batch(mp, NOV));
	for (int i = 0; i < NOV; i++)
		ok &= mp[i].out_len == rl[i] && memcmp(mp[i].out, ref[i], rl[i]) == 0;
	CHECK(ok);
	/* Decapsulation, batch, with the MPDU 5 forged. */
	for (int i = 0; i < NOV; i++) {
		uint8_t *in = buf[i] + 64;
		uint8_t *out = sh[i] == 1000 ? dis[i] : in - sh[i] / 2;

		memcpy(in, ref[i], rl[i]);
		if (i == 5)
			in[rl[i] - 1] ^= 1;
		mp[i] = (struct tw_ccmp_mpdu){ .key = &keys[kk[i]], .in = in,
					       .in_len = rl[i], .out = out,
					       .out_cap = CAP - 64 - 40 };
	}
	/* One MPDU is forged: the batch reports it; each status is checked. */
	CHECK_ERR(tw_ccmp_decap_batch(mp, NOV), TW_ERR_AUTH);
	ok = true;
	for (int i = 0; i < NOV; i++) {
		uint8_t x[1800];

		if (i == 5) {
			CHECK_ERR(mp[i].status, TW_ERR_AUTH);
			continue;
		}
		memcpy(x, fr[i], fl[i]);
		x[1] |= 0x40; /* the Protected bit stays set in the output */
		ok &= mp[i].status == TW_OK && mp[i].out_len == fl[i] &&
		      memcmp(mp[i].out, x, fl[i]) == 0;
	}
	CHECK(ok);
	/* The single-frame calls with the same placements. */
	ok = true;
	for (int i = 0; i < NOV; i++) {
		struct tw_ccmp_tx t = { .pn = 100 + (uint64_t)i };
		uint8_t *in = buf[i] + 64, x[1800];
		uint8_t *out = sh[i] == 1000 ? dis[i] : in + sh[i];
		size_t ol = 0;

		memcpy(in, fr[i], fl[i]);
		ok &= tw_ccmp_encap(&keys[kk[i]], &t, in, fl[i], out, CAP - 64 - 40, &ol) ==
			      TW_OK && ol == rl[i] && memcmp(out, ref[i], ol) == 0;
		memcpy(in, ref[i], rl[i]);
		out = sh[i] == 1000 ? dis[i] : in - sh[i] / 2;
		memcpy(x, fr[i], fl[i]);
		x[1] |= 0x40;
		ok &= tw_ccmp_decap(&keys[kk[i]], NULL, in, rl[i], out, CAP - 64 - 40, &ol,
				    NULL) == TW_OK && ol == fl[i] && memcmp(out, x, ol) == 0;
	}
	CHECK(ok);
	for (int k = 0; k < 4; k++)
		tw_ccmp_key_wipe(&keys[k]);
}

void test_main(void)
{
	masks_setup();
	test_overlap();
	CHECK(tv_run_file("ccmp.vec", run_vector) == 4);
	test_other_ciphers();
	test_replay_rules();
	test_headers();
	test_batch();
	test_batch_groups();
}
