/*
 * twag — EAP-SIM/AKA/AKA' message crypto: AT_MAC (RFC 4186, January 2006,
 * §10.14; RFC 4187, January 2006, §10.15; RFC 9048, October 2021, §3.4.1),
 * AT_ENCR_DATA / AT_IV / AT_PADDING (RFC 4187 §10.12, RFC 4186 §10.12) and
 * AT_CHECKCODE (RFC 4187 §10.13, RFC 9048 §3.4.2).
 */
#include <string.h>

#include "../crypto/sha_internal.h"
#include "twag/aes.h"
#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"

/* ---- AT_MAC ---------------------------------------------------------- */

int tw_simaka_mac_init(struct tw_simaka_mac_ctx *ctx, uint8_t method,
		       const uint8_t *k_aut, size_t k_aut_len)
{
	if (ctx == NULL || k_aut == NULL)
		return TW_ERR_INVAL;
	memset(ctx, 0, sizeof(*ctx));
	switch (method) {
	case TW_EAP_TYPE_SIM:
	case TW_EAP_TYPE_AKA:
		/* RFC 4186 §7 / RFC 4187 §7: K_aut is 128 bits. */
		if (k_aut_len != TW_SIMAKA_SIM_K_AUT_LEN)
			return TW_ERR_LENGTH;
		tw_hmac_sha1_init(&ctx->h.sha1, k_aut, k_aut_len);
		break;
	case TW_EAP_TYPE_AKA_PRIME:
		/* RFC 9048 §3.3: K_aut is 256 bits. */
		if (k_aut_len != TW_SIMAKA_AKA_PRIME_K_AUT_LEN)
			return TW_ERR_LENGTH;
		tw_hmac_sha256_init(&ctx->h.sha256, k_aut, k_aut_len);
		break;
	default:
		return TW_ERR_INVAL;
	}
	ctx->method = method;
	return TW_OK;
}

void tw_simaka_mac_wipe(struct tw_simaka_mac_ctx *ctx)
{
	tw_wipe(ctx, sizeof(*ctx));
}

void tw_simaka_mac_init_keyed(struct tw_simaka_mac_ctx *ctx,
			      const struct tw_hmac_sha256_ctx *k_aut)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->h.sha256 = *k_aut;
	tw_hmac_sha256_reset(&ctx->h.sha256);
	ctx->method = TW_EAP_TYPE_AKA_PRIME;
}

int tw_simaka_mac_compute(struct tw_simaka_mac_ctx *ctx, uint8_t mac[static 16],
			  const uint8_t *pkt, size_t pkt_len, size_t mac_val_off,
			  const uint8_t *extra, size_t extra_len)
{
	static const uint8_t zero[TW_SIMAKA_MAC_LEN];
	uint8_t full[32], blk[5 * 64];
	int err = TW_OK;

	if (ctx == NULL || pkt == NULL || (extra == NULL && extra_len != 0))
		return TW_ERR_INVAL;
	if (mac_val_off > pkt_len || pkt_len - mac_val_off < TW_SIMAKA_MAC_LEN)
		return TW_ERR_RANGE;
	size_t tail = mac_val_off + TW_SIMAKA_MAC_LEN;

	/* RFC 4187 §10.15: MAC = HMAC-SHA1-128(K_aut, EAP packet with the
	 * MAC field zeroed | message-specific data); RFC 9048 §3.4.1: the
	 * same with HMAC-SHA-256-128. The zero field is hashed in place of
	 * the received MAC, so the caller's packet stays untouched. */
	switch (ctx->method) {
	case TW_EAP_TYPE_SIM:
	case TW_EAP_TYPE_AKA:
		tw_hmac_sha1_update(&ctx->h.sha1, pkt, mac_val_off);
		tw_hmac_sha1_update(&ctx->h.sha1, zero, sizeof(zero));
		tw_hmac_sha1_update(&ctx->h.sha1, pkt + tail, pkt_len - tail);
		tw_hmac_sha1_update(&ctx->h.sha1, extra, extra_len);
		tw_hmac_sha1_final(&ctx->h.sha1, full);
		break;
	case TW_EAP_TYPE_AKA_PRIME:
		if (pkt_len + extra_len + 9 <= sizeof(blk)) {
			/* the usual case in one pass: the message laid out
			 * once with its padding (the key block counted in the
			 * bit length), then the keyed states; no buffering */
			memcpy(blk, pkt, pkt_len);
			memset(blk + mac_val_off, 0, TW_SIMAKA_MAC_LEN);
			if (extra_len != 0)
				memcpy(blk + pkt_len, extra, extra_len);
			size_t n = tw_sha256_pad_after_key(blk, pkt_len + extra_len,
							   sizeof(blk));
			tw_hmac_sha256_padded(&ctx->h.sha256, blk, n, full);
			/* the packet is public; extra (NONCE_S) was encrypted */
			if (extra_len != 0)
				tw_wipe(blk + pkt_len, extra_len);
			break;
		}
		tw_hmac_sha256_update(&ctx->h.sha256, pkt, mac_val_off);
		tw_hmac_sha256_update(&ctx->h.sha256, zero, sizeof(zero));
		tw_hmac_sha256_update(&ctx->h.sha256, pkt + tail, pkt_len - tail);
		tw_hmac_sha256_update(&ctx->h.sha256, extra, extra_len);
		tw_hmac_sha256_final(&ctx->h.sha256, full);
		break;
	default:
		err = TW_ERR_INVAL;
		goto out;
	}
	memcpy(mac, full, TW_SIMAKA_MAC_LEN);
out:
	tw_wipe(full, sizeof(full));
	return err;
}

int tw_simaka_mac_verify(struct tw_simaka_mac_ctx *ctx,
			 const struct tw_simaka_msg *m, const uint8_t *extra,
			 size_t extra_len)
{
	uint8_t mac[TW_SIMAKA_MAC_LEN];
	int err;

	if (ctx == NULL || m == NULL)
		return TW_ERR_INVAL;
	if (ctx->method != m->method)
		return TW_ERR_INVAL;
	/* RFC 4187 §9.3 etc.: a message that must carry AT_MAC and does not
	 * fails exactly like one whose MAC is wrong. */
	if (!tw_simaka_has(&m->mac) || m->mac.len != TW_SIMAKA_MAC_LEN)
		return TW_ERR_AUTH;
	err = tw_simaka_mac_compute(ctx, mac, m->pkt, m->pkt_len,
				    (size_t)(m->mac.val - m->pkt), extra,
				    extra_len);
	if (err != TW_OK)
		goto out;
	if (!tw_ct_eq(mac, m->mac.val, TW_SIMAKA_MAC_LEN))
		err = TW_ERR_AUTH;
out:
	tw_wipe(mac, sizeof(mac));
	return err;
}

enum { MAC_LANE_BUF = 5 * 64 };

/* Up to sixteen EAP-AKA' messages that fit MAC_LANE_BUF, in lanes. */
static void mac_lanes(struct tw_simaka_mac_ctx *const *ctx, uint8_t *const *pkt,
		      const size_t *len, const size_t *off, const size_t *idx, unsigned n)
{
	uint8_t blk[TW_SHA256_X16][MAC_LANE_BUF]; /* public: the messages */
	struct tw_hmac_sha256_x16 k;
	uint8_t full[TW_SHA256_X16][32];
	const uint8_t *msg[TW_SHA256_X16] = { NULL };
	uint8_t *out[TW_SHA256_X16] = { NULL };
	size_t nblk[TW_SHA256_X16] = { 0 };

	memset(&k, 0, sizeof(k)); /* the idle lanes' states are not used */
	for (unsigned j = 0; j < n; j++) {
		const struct tw_hmac_sha256_ctx *h = &ctx[idx[j]]->h.sha256;

		for (int i = 0; i < 8; i++) {
			k.ist[i][j] = h->istate[i];
			k.ost[i][j] = h->ostate[i];
		}
		/* RFC 9048 §3.4.1 over the message as sent, MAC value zero */
		memcpy(blk[j], pkt[idx[j]], len[idx[j]]);
		memset(blk[j] + off[idx[j]], 0, TW_SIMAKA_MAC_LEN);
		nblk[j] = tw_sha256_pad_after_key(blk[j], len[idx[j]], MAC_LANE_BUF);
		msg[j] = blk[j];
		out[j] = full[j];
	}
	tw_hmac_sha256_x16_padded(&k, msg, nblk, out, (uint16_t)((1u << n) - 1));
	for (unsigned j = 0; j < n; j++)
		memcpy(pkt[idx[j]] + off[idx[j]], full[j], TW_SIMAKA_MAC_LEN);
	tw_wipe(&k, sizeof(k));
	tw_wipe(full, sizeof(full));
}

/* A group of EAP-AKA' messages: in lanes when there are enough of them,
 * else one by one. */
static void mac_group(struct tw_simaka_mac_ctx *const *ctx, uint8_t *const *pkt,
		      const size_t *len, const size_t *off, int *rc, const size_t *idx,
		      unsigned n)
{
	if (tw_sha256_x16_worth(n)) {
		mac_lanes(ctx, pkt, len, off, idx, n);
		return;
	}
	for (unsigned j = 0; j < n; j++) {
		size_t i = idx[j];

		rc[i] = tw_simaka_mac_compute(ctx[i], pkt[i] + off[i], pkt[i], len[i], off[i],
					      NULL, 0);
	}
}

void tw_simaka_mac_fill_many(struct tw_simaka_mac_ctx *const *ctx, uint8_t *const *pkt,
			     const size_t *len, const size_t *mac_val_off, int *rc,
			     size_t n)
{
	size_t idx[TW_SHA256_X16];
	unsigned used = 0;

	if (ctx == NULL || pkt == NULL || len == NULL || mac_val_off == NULL || rc == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		if (ctx[i] != NULL && pkt[i] != NULL && ctx[i]->method == TW_EAP_TYPE_AKA_PRIME &&
		    mac_val_off[i] <= len[i] && len[i] - mac_val_off[i] >= TW_SIMAKA_MAC_LEN &&
		    len[i] + 9 <= MAC_LANE_BUF) {
			rc[i] = TW_OK;
			idx[used++] = i;
			if (used == TW_SHA256_X16) {
				mac_group(ctx, pkt, len, mac_val_off, rc, idx, used);
				used = 0;
			}
			continue;
		}
		rc[i] = pkt[i] == NULL ? TW_ERR_INVAL
				       : tw_simaka_mac_compute(ctx[i], pkt[i] + mac_val_off[i],
							       pkt[i], len[i], mac_val_off[i],
							       NULL, 0);
	}
	if (used > 0)
		mac_group(ctx, pkt, len, mac_val_off, rc, idx, used);
}

/* ---- AES-128-CBC for AT_ENCR_DATA --------------------------------------- */


/* SP 800-38A §6.2: P_j = D_K(C_j) ^ C_{j-1}. All blocks are independent, so
 * they go through the multi-block kernel first. out must not overlap in. */
static void cbc_decrypt(const struct tw_aes_ctx *k, const uint8_t iv[16],
			uint8_t *out, const uint8_t *in, size_t len)
{
	tw_aes_decrypt_blocks(k, out, in, len / 16);
	for (size_t i = 0; i < len; i += 16)
		tw_xor(out + i, out + i, i == 0 ? iv : in + i - 16, 16);
}

int tw_simaka_decrypt(struct tw_simaka_msg *inner, uint8_t *plain,
		      size_t plain_max, const struct tw_simaka_msg *outer,
		      const uint8_t k_encr[static 16])
{
	struct tw_aes_ctx aes;
	int err;

	if (inner == NULL || plain == NULL || outer == NULL || k_encr == NULL)
		return TW_ERR_INVAL;
	memset(inner, 0, sizeof(*inner));
	if (!tw_simaka_has(&outer->encr_data) || !tw_simaka_has(&outer->iv))
		return TW_ERR_STATE;
	size_t n = outer->encr_data.len;
	if (n == 0 || n % 16 != 0)
		return TW_ERR_DECODE;
	if (n > plain_max)
		return TW_ERR_OVERFLOW;
	if (plain < outer->encr_data.val + n && outer->encr_data.val < plain + n)
		return TW_ERR_INVAL; /* overlapping buffers */

	err = tw_aes_init(&aes, k_encr, TW_SIMAKA_K_ENCR_LEN);
	if (err != TW_OK)
		goto out;
	cbc_decrypt(&aes, outer->iv.val, plain, outer->encr_data.val, n);
	/* AT_MAC of outer verified first (the callers'): the plaintext is
	 * the receiver's to parse and act on (RFC 4187 §10.12). */
	tw_ct_declassify(plain, n);
	err = tw_simaka_decode_inner(inner, outer->method, plain, n);
	if (err != TW_OK)
		tw_wipe(plain, n);
out:
	tw_aes_wipe(&aes);
	return err;
}

/* Closes AT_ENCR_DATA with its AT_PADDING; e gets what to encrypt. */
static void close_encr(struct tw_simaka_builder *b, struct tw_simaka_encr_later *e)
{
	if (b->err != TW_OK)
		return;
	if (b->encr_off == 0) {
		b->err = TW_ERR_STATE;
		return;
	}
	size_t start = b->encr_off + 4;
	size_t plen = b->len - start;
	/* RFC 4187 §10.12: AT_PADDING (4, 8 or 12 octets) makes the
	 * plaintext a multiple of 16; attributes are already 4-aligned. */
	size_t pad = (16 - plen % 16) % 16;
	if (plen == 0) {
		b->err = TW_ERR_INVAL; /* nothing to encrypt */
		return;
	}
	if (pad != 0) {
		static const uint8_t zero[12];

		b->encr_off = 0; /* AT_PADDING is written as a plain attribute */
		tw_simaka_put_fixed(b, TW_AT_PADDING, 0, zero, pad - 4);
		b->encr_off = start - 4;
		if (b->err != TW_OK)
			return;
		plen += pad;
	}
	if (4 + plen > TW_SIMAKA_ATTR_MAX) {
		b->err = TW_ERR_LENGTH;
		return;
	}
	b->buf[b->encr_off + 1] = (uint8_t)((4 + plen) / 4);
	e->iv_off = b->iv_val_off;
	e->off = start;
	e->len = plen;
	b->encr_off = 0;
	b->iv_val_off = 0;
}

void tw_simaka_end_encr(struct tw_simaka_builder *b,
			const uint8_t k_encr[static 16])
{
	struct tw_simaka_encr_later e;
	struct tw_aes_ctx aes;

	if (b->err == TW_OK && k_encr == NULL)
		b->err = TW_ERR_STATE;
	close_encr(b, &e);
	if (b->err != TW_OK)
		return;
	b->err = tw_aes_init_enc(&aes, k_encr, TW_SIMAKA_K_ENCR_LEN);
	if (b->err == TW_OK)
		tw_aes_cbc_encrypt(&aes, b->buf + e.iv_off, b->buf + e.off, e.len);
	tw_aes_wipe(&aes);
}

void tw_simaka_end_encr_later(struct tw_simaka_builder *b,
			      struct tw_simaka_encr_later *e)
{
	if (b->err == TW_OK && e == NULL)
		b->err = TW_ERR_INVAL;
	close_encr(b, e);
}

void tw_simaka_encrypt_many(uint8_t *const *buf, const struct tw_simaka_encr_later *e,
			    const uint8_t *const *k_encr, size_t n)
{
	enum { G = 8 };
	struct tw_aes_ctx aes[G];
	const struct tw_aes_ctx *kp[G];
	const uint8_t *iv[G];
	uint8_t *p[G];
	size_t len[G];

	for (size_t i = 0; i < n; i += G) {
		size_t m = n - i < G ? n - i : G;

		for (size_t j = 0; j < m; j++) {
			kp[j] = &aes[j];
			iv[j] = buf[i + j] + e[i + j].iv_off;
			p[j] = buf[i + j] + e[i + j].off;
			len[j] = e[i + j].len;
			/* a 16-octet key is never refused; were it, the
			 * plaintext (identities) must not go out */
			if (tw_aes_init_enc(&aes[j], k_encr[i + j], TW_SIMAKA_K_ENCR_LEN) != TW_OK) {
				memset(p[j], 0, len[j]);
				len[j] = 0;
				memset(&aes[j], 0, sizeof(aes[j])); /* no rounds run on it */
			}
		}
		tw_aes_cbc_encrypt_many(kp, iv, p, len, m);
		for (size_t j = 0; j < m; j++)
			tw_aes_wipe(&aes[j]);
	}
}

int tw_simaka_finish_mac_later(struct tw_simaka_builder *b, size_t *len,
			       size_t *mac_val_off)
{
	int err;

	if (b == NULL || len == NULL || mac_val_off == NULL)
		return TW_ERR_INVAL;
	*len = 0;
	*mac_val_off = b->mac_val_off;
	if (b->err == TW_OK && *mac_val_off == 0)
		b->err = TW_ERR_STATE;
	b->mac_val_off = 0;
	err = tw_simaka_finish(b, len);
	b->mac_val_off = *mac_val_off;
	return err;
}

int tw_simaka_finish_mac(struct tw_simaka_builder *b,
			 struct tw_simaka_mac_ctx *mac, const uint8_t *extra,
			 size_t extra_len, size_t *len)
{
	size_t mac_val_off;
	int err;

	if (b == NULL || mac == NULL || len == NULL)
		return TW_ERR_INVAL;
	*len = 0;
	if (b->err == TW_OK && mac->method != b->method)
		b->err = TW_ERR_STATE;
	err = tw_simaka_finish_mac_later(b, len, &mac_val_off);
	if (err != TW_OK)
		return err;
	err = tw_simaka_mac_compute(mac, b->buf + mac_val_off, b->buf, *len,
				    mac_val_off, extra, extra_len);
	if (err != TW_OK) {
		tw_wipe(b->buf, *len);
		*len = 0;
		b->err = err;
	}
	return err;
}

/* ---- AT_CHECKCODE ---------------------------------------------------- */

int tw_simaka_checkcode_init(struct tw_simaka_checkcode_ctx *ctx, uint8_t method)
{
	if (ctx == NULL)
		return TW_ERR_INVAL;
	memset(ctx, 0, sizeof(*ctx));
	if (method == TW_EAP_TYPE_AKA)
		tw_sha1_init(&ctx->h.sha1);
	else if (method == TW_EAP_TYPE_AKA_PRIME)
		tw_sha256_init(&ctx->h.sha256);
	else
		return TW_ERR_INVAL; /* EAP-SIM has no AT_CHECKCODE */
	ctx->method = method;
	return TW_OK;
}

void tw_simaka_checkcode_add(struct tw_simaka_checkcode_ctx *ctx,
			     const uint8_t *pkt, size_t len)
{
	if (ctx->method == TW_EAP_TYPE_AKA)
		tw_sha1_update(&ctx->h.sha1, pkt, len);
	else if (ctx->method == TW_EAP_TYPE_AKA_PRIME)
		tw_sha256_update(&ctx->h.sha256, pkt, len);
	else
		return;
	ctx->n_msgs++;
}

size_t tw_simaka_checkcode_value(const struct tw_simaka_checkcode_ctx *ctx,
				 uint8_t out[static 32])
{
	struct tw_simaka_checkcode_ctx copy;
	size_t n = 0;

	/* RFC 4187 §10.13: no AKA-Identity messages, empty AT_CHECKCODE. */
	if (ctx->n_msgs == 0)
		return 0;
	copy = *ctx; /* finalising wipes the hash state; keep ctx usable */
	if (ctx->method == TW_EAP_TYPE_AKA) {
		tw_sha1_final(&copy.h.sha1, out);
		n = TW_SIMAKA_CHECKCODE_SHA1_LEN;
	} else if (ctx->method == TW_EAP_TYPE_AKA_PRIME) {
		tw_sha256_final(&copy.h.sha256, out);
		n = TW_SIMAKA_CHECKCODE_SHA256_LEN;
	}
	tw_wipe(&copy, sizeof(copy));
	return n;
}

int tw_simaka_checkcode_verify(const struct tw_simaka_checkcode_ctx *ctx,
			       const struct tw_simaka_msg *m)
{
	uint8_t want[32];
	int err = TW_ERR_AUTH;

	if (ctx == NULL || m == NULL)
		return TW_ERR_INVAL;
	size_t n = tw_simaka_checkcode_value(ctx, want);
	/* RFC 4187 §10.13: a receiver that saw no identity round accepts an
	 * absent or empty checkcode; otherwise it must match exactly. */
	if (n == 0) {
		if (!tw_simaka_has(&m->checkcode) || m->checkcode.len == 0)
			err = TW_OK;
		goto out;
	}
	if (!tw_simaka_has(&m->checkcode) || m->checkcode.len != n ||
	    m->method != ctx->method)
		goto out;
	if (tw_ct_eq(want, m->checkcode.val, n))
		err = TW_OK;
out:
	tw_wipe(want, sizeof(want));
	return err;
}
