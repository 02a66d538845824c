/*
 * twag — 802.11 MPDU protection (IEEE Std 802.11-2020 §12.5.3 CCMP,
 * §12.5.5 GCMP): MAC header parsing, AAD and nonce construction, the
 * 8-octet CCMP/GCMP header, PN assignment and per-TID replay detection.
 * The cipher work is tw_ccm_* (AES-CCM, M = 8 or 16, L = 2) and tw_gcm_*.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/ccm.h"
#include "twag/ccmp.h"

/* Frame Control bits (§9.2.4.1), little-endian 16-bit field. */
enum {
	FC_TYPE_MASK = 0x000c,
	FC_TYPE_MGMT = 0x0000,
	FC_TYPE_DATA = 0x0008,
	FC_SUBTYPE_B456 = 0x0070, /* subtype bits b4..b6 */
	FC_SUBTYPE_QOS = 0x0080,  /* b7: QoS subtypes of data frames */
	FC_TO_DS = 0x0100,
	FC_FROM_DS = 0x0200,
	FC_RETRY = 0x0800,
	FC_PWR_MGT = 0x1000,
	FC_MORE_DATA = 0x2000,
	FC_PROTECTED = 0x4000,
	FC_ORDER = 0x8000, /* +HTC in QoS data and management frames */
};

enum { EXT_IV = 0x20 };

size_t tw_ccmp_mic_len(const struct tw_ccmp_key *key)
{
	return key->cipher == TW_CCMP_128 ? 8 : 16;
}

static bool is_gcmp(const struct tw_ccmp_key *key)
{
	return key->cipher == TW_GCMP_128 || key->cipher == TW_GCMP_256;
}

int tw_ccmp_key_init(struct tw_ccmp_key *key, enum tw_ccmp_cipher cipher,
		     const uint8_t *tk, size_t tk_len, unsigned key_id)
{
	int err;

	if (key == NULL || tk == NULL || key_id > 3)
		return TW_ERR_INVAL;
	memset(key, 0, sizeof(*key));
	switch (cipher) {
	case TW_CCMP_128:
	case TW_GCMP_128:
		if (tk_len != 16)
			return TW_ERR_LENGTH;
		break;
	case TW_CCMP_256:
	case TW_GCMP_256:
		if (tk_len != 32)
			return TW_ERR_LENGTH;
		break;
	default:
		return TW_ERR_INVAL;
	}
	key->cipher = cipher;
	key->key_id = key_id;
	if (cipher == TW_GCMP_128 || cipher == TW_GCMP_256)
		err = tw_gcm_init(&key->k.gcm, tk, tk_len);
	else
		err = tw_aes_init_enc(&key->k.aes, tk, tk_len);
	if (err != TW_OK)
		tw_ccmp_key_wipe(key);
	return err;
}

void tw_ccmp_key_wipe(struct tw_ccmp_key *key)
{
	tw_wipe(key, sizeof(*key));
}

void tw_ccmp_rx_init(struct tw_ccmp_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
}

/*
 * §9.3: the MAC header of data and management frames. Returns its length
 * and the replay counter index (TID of QoS data, 0 for other data,
 * TW_CCMP_RC_MGMT), or 0 if frame cannot hold it or is not a frame CCMP
 * protects (control and extension frames, protocol version != 0).
 */
static size_t parse_hdr(const uint8_t *f, size_t len, uint32_t *rc)
{
	if (len < 24)
		return 0;
	uint16_t fc = (uint16_t)(f[0] | f[1] << 8);
	size_t hl = 24;

	if ((fc & 0x0003) != 0)
		return 0;
	if ((fc & FC_TYPE_MASK) == FC_TYPE_MGMT) {
		*rc = TW_CCMP_RC_MGMT;
		hl += (fc & FC_ORDER) ? 4 : 0;
	} else if ((fc & FC_TYPE_MASK) == FC_TYPE_DATA) {
		*rc = 0;
		if ((fc & (FC_TO_DS | FC_FROM_DS)) == (FC_TO_DS | FC_FROM_DS))
			hl += 6;
		if (fc & FC_SUBTYPE_QOS) {
			if (len < hl + 2)
				return 0;
			*rc = f[hl] & 0x0f;
			hl += 2 + ((fc & FC_ORDER) ? 4 : 0);
		}
	} else {
		return 0;
	}
	return len < hl ? 0 : hl;
}

/*
 * §12.5.3.3.3 AAD: FC with subtype b4..b6 masked (data frames), Retry,
 * PwrMgt and MoreData masked, Protected set, Order masked in QoS data;
 * A1 A2 A3; SC with the sequence number masked, the fragment number kept;
 * A4 if present; QC with only the TID (and A-MSDU Present when both STAs
 * are SPP A-MSDU capable). §12.5.3.3.4 nonce: flags (priority b0..b3 =
 * TID of QoS data, Management b4) || A2 || PN5..PN0; the GCMP nonce
 * (§12.5.5.3.4) is A2 || PN, i.e. the same octets without the flags.
 */
static void aad_nonce(struct tw_ccmp_mpdu *m, const uint8_t *f)
{
	uint16_t fc = (uint16_t)(f[0] | f[1] << 8);
	bool data = (fc & FC_TYPE_MASK) == FC_TYPE_DATA;
	bool qos = data && (fc & FC_SUBTYPE_QOS);
	uint16_t afc = fc & ~(FC_RETRY | FC_PWR_MGT | FC_MORE_DATA);
	size_t al = 0;

	if (data)
		afc &= ~FC_SUBTYPE_B456;
	if (qos)
		afc &= ~FC_ORDER;
	afc |= FC_PROTECTED;
	m->aad[al++] = (uint8_t)afc;
	m->aad[al++] = (uint8_t)(afc >> 8);
	memcpy(m->aad + al, f + 4, 18); /* A1 A2 A3 */
	al += 18;
	m->aad[al++] = f[22] & 0x0f;    /* SC: fragment number only */
	m->aad[al++] = 0;
	size_t qo = 24;
	if (data && (fc & (FC_TO_DS | FC_FROM_DS)) == (FC_TO_DS | FC_FROM_DS)) {
		memcpy(m->aad + al, f + 24, 6);
		al += 6;
		qo += 6;
	}
	if (qos) {
		m->aad[al++] = f[qo] & (m->key->spp_amsdu ? 0x8f : 0x0f);
		m->aad[al++] = 0;
	}
	m->aad_len = al;
	m->nonce[0] = (uint8_t)(qos ? (f[qo] & 0x0f) : 0) | (data ? 0 : 0x10);
	memcpy(m->nonce + 1, f + 10, 6);
	tw_store_be48(m->nonce + 7, m->pn);
}

/* True if [a, a+al) and [b, b+bl) share no octet. */
static bool disjoint(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x + al <= y || y + bl <= x;
}

/* The MAC header, 24..36 octets, without a variable-length libc call. */
static void copy_hdr(uint8_t *d, const uint8_t *f, size_t hl)
{
	memcpy(d, f, 24);
	for (size_t i = 24; i < hl; i++)
		d[i] = f[i];
}

/*
 * Everything of encapsulation but the cipher: checks, PN, layout. The
 * AAD and nonce come from the input header (the output header differs
 * only in the Protected bit, which the AAD sets anyway). When out and the
 * frame are disjoint the cipher reads the plaintext where it lies and
 * writes the ciphertext 8 octets further on (*p_in, *c_out): only the
 * header is copied. Otherwise (in place) the body moves up by 8 first.
 */
static int encap_prep(struct tw_ccmp_mpdu *m, const uint8_t **p_in, uint8_t **c_out)
{
	if (m->key == NULL || m->tx == NULL || m->in == NULL || m->out == NULL)
		return TW_ERR_INVAL;
	size_t mic = tw_ccmp_mic_len(m->key);
	size_t hl = parse_hdr(m->in, m->in_len, &m->rc);

	if (hl == 0)
		return TW_ERR_DECODE;
	/* §12.5.3.4.4: a PN is never reused; 2^48 - 1 ends the key. */
	if (m->tx->pn >= TW_CCMP_PN_MAX)
		return TW_ERR_RANGE;
	if (m->out_cap < m->in_len || m->out_cap - m->in_len < TW_CCMP_HDR_LEN + mic)
		return TW_ERR_OVERFLOW;
	m->hdr_len = hl;
	m->body_len = m->in_len - hl;
	m->pn = ++m->tx->pn;
	m->out_len = m->in_len + TW_CCMP_HDR_LEN + mic;
	aad_nonce(m, m->in);
	*c_out = m->out + hl + TW_CCMP_HDR_LEN;
	if (disjoint(m->in, m->in_len, m->out, m->out_len)) {
		*p_in = m->in + hl;
		copy_hdr(m->out, m->in, hl);
	} else {
		*p_in = *c_out;
		memmove(*c_out, m->in + hl, m->body_len);
		memmove(m->out, m->in, hl);
	}
	m->out[1] |= FC_PROTECTED >> 8;
	/* §12.5.3.2: PN0 PN1 Rsvd (Rsvd | ExtIV | KeyID<<6) PN2 PN3 PN4 PN5. */
	uint8_t *h = m->out + hl;
	h[0] = (uint8_t)m->pn;
	h[1] = (uint8_t)(m->pn >> 8);
	h[2] = 0;
	h[3] = (uint8_t)(EXT_IV | m->key->key_id << 6);
	h[4] = (uint8_t)(m->pn >> 16);
	h[5] = (uint8_t)(m->pn >> 24);
	h[6] = (uint8_t)(m->pn >> 32);
	h[7] = (uint8_t)(m->pn >> 40);
	return TW_OK;
}

/* Everything of decapsulation before the cipher: parse, key id, replay.
 * As in encap_prep, disjoint buffers are decrypted from where the
 * ciphertext lies (*c_in) into the output body (*p_out). */
static int decap_prep(struct tw_ccmp_mpdu *m, uint8_t mic_out[16], const uint8_t **c_in,
		      uint8_t **p_out)
{
	if (m->key == NULL || m->in == NULL || m->out == NULL)
		return TW_ERR_INVAL;
	size_t mic = tw_ccmp_mic_len(m->key);
	size_t hl = parse_hdr(m->in, m->in_len, &m->rc);
	const uint8_t *h = m->in + hl;

	if (hl == 0 || m->in_len - hl < TW_CCMP_HDR_LEN + mic || !(h[3] & EXT_IV)) {
		if (m->rx != NULL)
			m->rx->decode_errors++;
		return TW_ERR_DECODE;
	}
	if ((uint32_t)(h[3] >> 6) != m->key->key_id) {
		if (m->rx != NULL)
			m->rx->bad_key_id++;
		return TW_ERR_NOTFOUND;
	}
	m->pn = (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[4] << 16 |
		(uint64_t)h[5] << 24 | (uint64_t)h[6] << 32 | (uint64_t)h[7] << 40;
	/* §12.5.3.4.4: PN must exceed the TID's replay counter. */
	if (m->rx != NULL && m->pn <= m->rx->pn[m->rc]) {
		m->rx->replays++;
		return TW_ERR_REPLAY;
	}
	m->hdr_len = hl;
	m->body_len = m->in_len - hl - TW_CCMP_HDR_LEN - mic;
	if (m->out_cap < hl + m->body_len)
		return TW_ERR_OVERFLOW;
	aad_nonce(m, m->in);
	memcpy(mic_out, m->in + m->in_len - mic, mic);
	m->out_len = hl + m->body_len;
	*p_out = m->out + hl;
	if (disjoint(m->in, m->in_len, m->out, m->out_len)) {
		*c_in = m->in + hl + TW_CCMP_HDR_LEN;
		copy_hdr(m->out, m->in, hl);
	} else {
		*c_in = *p_out;
		memmove(m->out, m->in, hl);
		memmove(*p_out, m->in + hl + TW_CCMP_HDR_LEN, m->body_len);
	}
	return TW_OK;
}

/* After the MIC: replay check again (an earlier frame of the same batch
 * may have moved the counter) and only then the counter update. */
static int decap_post(struct tw_ccmp_mpdu *m, int err)
{
	if (m->rx == NULL)
		return err;
	if (err == TW_ERR_AUTH) {
		m->rx->mic_failures++;
	} else if (err == TW_OK) {
		if (m->pn <= m->rx->pn[m->rc]) {
			tw_wipe(m->out + m->hdr_len, m->body_len);
			m->rx->replays++;
			return TW_ERR_REPLAY;
		}
		m->rx->pn[m->rc] = m->pn;
	}
	return err;
}

/* in: the body the cipher reads; body: where it writes (the output). */
static int crypt_one(struct tw_ccmp_mpdu *m, int dec, const uint8_t *mic_in,
		     const uint8_t *in, uint8_t *body)
{
	size_t mic = tw_ccmp_mic_len(m->key);

	if (is_gcmp(m->key))
		return dec ? tw_gcm_decrypt(&m->key->k.gcm, m->nonce + 1, m->aad, m->aad_len,
					    in, body, m->body_len, mic_in, mic)
			   : tw_gcm_encrypt(&m->key->k.gcm, m->nonce + 1, m->aad, m->aad_len,
					    in, body, m->body_len, body + m->body_len, mic);
	return dec ? tw_ccm_decrypt(&m->key->k.aes, m->nonce, 13, m->aad, m->aad_len, in,
				    body, m->body_len, mic_in, mic)
		   : tw_ccm_encrypt(&m->key->k.aes, m->nonce, 13, m->aad, m->aad_len, in,
				    body, m->body_len, body + m->body_len, mic);
}

#if defined(__x86_64__)
#include <immintrin.h>

#include "twag/cpu.h"

/*
 * CCMP on AES-NI, one frame: B_0, Ctr_0 and the two encoded-AAD blocks
 * (§12.5.3.3.3 AAD of 22..30 octets, SP 800-38C A.2.2: [a]_16 || AAD ||
 * pad, always 32 octets) made in registers from the frame's own header,
 * with the same masking as aad_nonce(). Going through memory just written
 * would make the CBC-MAC chain's first block wait for the previous
 * frame's chain to retire (a store-forwarding miss); in registers, the
 * head of this frame overlaps the tail of the last. Needs 32 readable
 * octets of frame (two 16-octet header loads; octets past the AAD fields,
 * e.g. the CCMP header written in place, are masked off).
 */
static bool pre_ok(const struct tw_ccmp_mpdu *m)
{
	return !is_gcmp(m->key) && m->in_len >= 32 && m->body_len <= 0xffff &&
	       m->key->k.aes.impl == TW_AES_IMPL_AESNI &&
	       tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41);
}

__attribute__((target("aes,sse4.1"))) static void encap_pre(const struct tw_ccmp_mpdu *m,
							      const uint8_t *p, uint8_t *c)
{
	/* Overlapping buffers: the header has moved to out (Protected set,
	 * which the AAD sets anyway) and may be gone from in. */
	const uint8_t *f = p == m->in + m->hdr_len ? m->in : m->out;
	uint16_t fc = (uint16_t)(f[0] | f[1] << 8);
	bool data = (fc & FC_TYPE_MASK) == FC_TYPE_DATA;
	bool qos = data && (fc & FC_SUBTYPE_QOS);
	bool a4 = data && (fc & (FC_TO_DS | FC_FROM_DS)) == (FC_TO_DS | FC_FROM_DS);
	uint16_t afc = fc & ~(FC_RETRY | FC_PWR_MGT | FC_MORE_DATA);
	size_t mic = tw_ccmp_mic_len(m->key), len = m->body_len;
	uint32_t al = 22 + (a4 ? 6 : 0) + (qos ? 2 : 0);
	uint8_t qc = qos ? f[a4 ? 30 : 24] : 0;
	uint64_t a2, mhi = 0;

	if (data)
		afc &= ~FC_SUBTYPE_B456;
	if (qos)
		afc &= ~FC_ORDER;
	afc |= FC_PROTECTED;
	/* Nonce: flags (TID, Management) || A2 || PN5..PN0 (§12.5.3.3.4). */
	memcpy(&a2, f + 8, 8);
	a2 = (a2 >> 16) << 16; /* little-endian: A2 in octets 2..7 */
	uint64_t lo = a2 | (uint64_t)((qc & 0x0f) | (data ? 0 : 0x10)) << 8;
	uint64_t flags = 0x40 | ((mic - 2) / 2) << 3 | 1; /* Adata, M, L - 1 */
	__m128i b0 = _mm_set_epi64x((long long)__builtin_bswap64(m->pn << 16 | len),
				    (long long)(lo | flags));
	__m128i a0 = _mm_set_epi64x((long long)__builtin_bswap64(m->pn << 16),
				    (long long)(lo | 1));
	/* [a]_16 || FC || A1 || A2, then A3 || SC || [A4] || [QC] || pad. */
	__m128i h1 = _mm_insert_epi32(_mm_loadu_si128((const __m128i *)f),
				      (int)(al >> 8 | (al & 0xff) << 8 | (uint32_t)afc << 16), 0);
	if (a4)
		mhi = 0x0000ffffffffffffu;
	if (qos)
		mhi |= (uint64_t)(m->key->spp_amsdu ? 0x8f : 0x0f) << (a4 ? 48 : 0);
	__m128i h2 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(f + 16)),
				   _mm_set_epi64x((long long)mhi, 0x000fffffffffffff));
	uint8_t t[16], s0[16];

	tw_ccm_ni_one_pre(&m->key->k.aes, b0, a0, h1, h2, p, c, len, 0, t, s0);
	/* §6.1 step 9 (SP 800-38C): MIC = MSB_M(T ^ S_0). */
	__m128i tag = _mm_xor_si128(_mm_loadu_si128((const __m128i *)t),
				    _mm_loadu_si128((const __m128i *)s0));
	if (mic == 8)
		_mm_storel_epi64((__m128i *)(c + len), tag);
	else
		_mm_storeu_si128((__m128i *)(c + len), tag);
	tw_wipe(t, sizeof(t));
	tw_wipe(s0, sizeof(s0));
}
#endif

int tw_ccmp_encap(const struct tw_ccmp_key *key, struct tw_ccmp_tx *tx,
		  const uint8_t *frame, size_t frame_len, uint8_t *out,
		  size_t out_cap, size_t *out_len)
{
	struct tw_ccmp_mpdu m = { .key = key, .tx = tx, .in = frame, .in_len = frame_len,
				  .out = out, .out_cap = out_cap };
	const uint8_t *p = NULL;
	uint8_t *c = NULL;
	int err;

	if (out_len == NULL)
		return TW_ERR_INVAL;
	err = encap_prep(&m, &p, &c);
#if defined(__x86_64__)
	if (err == TW_OK && pre_ok(&m))
		encap_pre(&m, p, c);
	else
#endif
	if (err == TW_OK)
		err = crypt_one(&m, 0, NULL, p, c);
	if (err == TW_OK)
		*out_len = m.out_len;
	tw_wipe(&m, sizeof(m));
	return err;
}

int tw_ccmp_decap(const struct tw_ccmp_key *key, struct tw_ccmp_rx *rx,
		  const uint8_t *frame, size_t frame_len, uint8_t *out,
		  size_t out_cap, size_t *out_len, uint64_t *pn)
{
	struct tw_ccmp_mpdu m = { .key = key, .rx = rx, .in = frame, .in_len = frame_len,
				  .out = out, .out_cap = out_cap };
	uint8_t mic[16];
	const uint8_t *c = NULL;
	uint8_t *p = NULL;
	int err;

	if (out_len == NULL)
		return TW_ERR_INVAL;
	err = decap_prep(&m, mic, &c, &p);
	if (err == TW_OK)
		err = decap_post(&m, crypt_one(&m, 1, mic, c, p));
	if (err == TW_OK) {
		*out_len = m.out_len;
		if (pn != NULL)
			*pn = m.pn;
	}
	tw_wipe(&m, sizeof(m));
	tw_wipe(mic, sizeof(mic));
	return err;
}

/* ---- batches ---- */

enum { CHUNK = 32 };

static int batch(struct tw_ccmp_mpdu *mp, size_t n, int dec)
{
	int first = TW_OK;

	if (n > 0 && mp == NULL)
		return TW_ERR_INVAL;
	for (size_t base = 0; base < n; base += CHUNK) {
		struct tw_ccm_op cops[CHUNK];
		struct tw_gcm_op gops[CHUNK];
		uint8_t mics[CHUNK][16];
		size_t nc = 0, ng = 0, cnt = n - base < CHUNK ? n - base : CHUNK;

		for (size_t i = 0; i < cnt; i++) {
			struct tw_ccmp_mpdu *m = &mp[base + i];

			const uint8_t *src = NULL;
			uint8_t *body = NULL;

			m->status = dec ? decap_prep(m, mics[i], &src, &body)
					: encap_prep(m, &src, &body);
			if (m->status != TW_OK)
				continue;
			uint8_t *tag = dec ? mics[i] : body + m->body_len;
			size_t mic = tw_ccmp_mic_len(m->key);

			if (is_gcmp(m->key))
				gops[ng++] = (struct tw_gcm_op){
					.ctx = &m->key->k.gcm, .iv = m->nonce + 1,
					.aad = m->aad, .aad_len = m->aad_len,
					.in = src, .out = body, .len = m->body_len,
					.tag = tag, .tag_len = mic };
			else
				cops[nc++] = (struct tw_ccm_op){
					.aes = &m->key->k.aes, .nonce = m->nonce,
					.nonce_len = 13, .aad = m->aad,
					.aad_len = m->aad_len, .in = src, .out = body,
					.len = m->body_len, .tag = tag, .tag_len = mic };
		}
		/* Per-op statuses carry the results; the totals add nothing. */
		int e1 = dec ? tw_ccm_decrypt_batch(cops, nc) : tw_ccm_encrypt_batch(cops, nc);
		int e2 = dec ? tw_gcm_decrypt_batch(gops, ng) : tw_gcm_encrypt_batch(gops, ng);
		(void)e1;
		(void)e2;
		nc = ng = 0;
		for (size_t i = 0; i < cnt; i++) {
			struct tw_ccmp_mpdu *m = &mp[base + i];

			if (m->status == TW_OK) {
				m->status = is_gcmp(m->key) ? gops[ng++].status
							    : cops[nc++].status;
				if (dec)
					m->status = decap_post(m, m->status);
			}
			if (first == TW_OK)
				first = m->status;
		}
		if (dec) /* encapsulation leaves mics unused */
			tw_wipe(mics, sizeof(mics));
	}
	return first;
}

int tw_ccmp_encap_batch(struct tw_ccmp_mpdu *mpdu, size_t n)
{
	return batch(mpdu, n, 0);
}

int tw_ccmp_decap_batch(struct tw_ccmp_mpdu *mpdu, size_t n)
{
	return batch(mpdu, n, 1);
}
