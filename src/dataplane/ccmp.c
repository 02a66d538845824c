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

/* Inlined on the packet path: one compare, not a call per frame. */
static inline size_t mic_len(const struct tw_ccmp_key *key)
{
	return key->cipher == TW_CCMP_128 ? 8 : 16;
}

size_t tw_ccmp_mic_len(const struct tw_ccmp_key *key)
{
	return mic_len(key);
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

/* The header of an MPDU being encapsulated (p: where the cipher reads
 * the plaintext). Overlapping buffers: the header has moved to out (Protected set, which
 * the AAD sets anyway) and may be gone from in. */
static const uint8_t *hdr_src(const struct tw_ccmp_mpdu *m, const uint8_t *p)
{
	return p == m->in + m->hdr_len ? m->in : m->out;
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
	size_t mic = mic_len(m->key);
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
	/* The AAD and nonce octets only where the cipher wants them
	 * (aad_nonce(m, hdr_src(m, *p_in))): the register paths build their
	 * blocks from the header itself. */
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
	size_t mic = mic_len(m->key);
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
	size_t mic = mic_len(m->key);

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

/*
 * B_0, Ctr_0 and the two encoded-AAD blocks of a checked CCMP MPDU
 * (encap_prep done) from its header f, in registers.
 */
static inline __attribute__((always_inline, target("aes,sse4.1"))) void
head_blocks(const struct tw_ccmp_mpdu *m, const uint8_t *f, __m128i *b0, __m128i *a0,
	    __m128i *h1, __m128i *h2)
{
	uint16_t fc = (uint16_t)(f[0] | f[1] << 8);
	bool data = (fc & FC_TYPE_MASK) == FC_TYPE_DATA;
	bool qos = data && (fc & FC_SUBTYPE_QOS);
	bool a4 = data && (fc & (FC_TO_DS | FC_FROM_DS)) == (FC_TO_DS | FC_FROM_DS);
	uint16_t afc = fc & ~(FC_RETRY | FC_PWR_MGT | FC_MORE_DATA);
	size_t mic = mic_len(m->key), len = m->body_len;
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
	*b0 = _mm_set_epi64x((long long)__builtin_bswap64(m->pn << 16 | len),
			     (long long)(lo | flags));
	*a0 = _mm_set_epi64x((long long)__builtin_bswap64(m->pn << 16), (long long)(lo | 1));
	/* [a]_16 || FC || A1 || A2, then A3 || SC || [A4] || [QC] || pad. */
	*h1 = _mm_insert_epi32(_mm_loadu_si128((const __m128i *)f),
			       (int)(al >> 8 | (al & 0xff) << 8 | (uint32_t)afc << 16), 0);
	if (a4)
		mhi = 0x0000ffffffffffffu;
	if (qos)
		mhi |= (uint64_t)(m->key->spp_amsdu ? 0x8f : 0x0f) << (a4 ? 48 : 0);
	*h2 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(f + 16)),
			    _mm_set_epi64x((long long)mhi, 0x000fffffffffffff));
}

__attribute__((target("aes,sse4.1"))) static void encap_pre(const struct tw_ccmp_mpdu *m,
							      const uint8_t *p, uint8_t *c)
{
	size_t mic = mic_len(m->key), len = m->body_len;
	__m128i b0, a0, h1, h2;

	head_blocks(m, hdr_src(m, p), &b0, &a0, &h1, &h2);
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

/*
 * Batched CCMP encapsulation on VAES + AVX-512: up to sixteen MPDUs of one
 * key size per tw_ccm_vaes_group() call, their lanes (B_0, Ctr_0, the two
 * encoded-AAD blocks, §12.5.3.3.3-4 and SP 800-38C A.2) built straight
 * from each MAC header in registers by head_blocks() and stored once into
 * the group: no tw_ccm_op, no AAD or nonce octets, no second pass. The
 * keys are the stations' own expanded schedules (tw_ccmp_key_init, once
 * per rekey); only their round keys are copied into the lane layout.
 */
#define GROUP_FEATURES (TW_CPU_AESNI | TW_CPU_SSE41 | TW_CPU_AVX2 | TW_CPU_VAES | TW_CPU_AVX512)
enum { GMIN = 5 };

static bool group_ok(const struct tw_ccmp_mpdu *m)
{
	return (m->key->cipher == TW_CCMP_128 || m->key->cipher == TW_CCMP_256) &&
	       m->in_len >= 32 && m->body_len <= 0xffff &&
	       m->key->k.aes.impl == TW_AES_IMPL_AESNI;
}

__attribute__((target("aes,sse4.1"))) static void lane_fill(struct tw_ccm_group *g, unsigned l,
							      const struct tw_ccmp_mpdu *m,
							      const uint8_t *p, uint8_t *c,
							      unsigned nr)
{
	__m128i b0, a0, h1, h2;

	head_blocks(m, hdr_src(m, p), &b0, &a0, &h1, &h2);
	_mm_store_si128((__m128i *)g->head[0][l], b0);
	_mm_store_si128((__m128i *)g->head[1][l], h1);
	_mm_store_si128((__m128i *)g->head[2][l], h2);
	_mm_store_si128((__m128i *)g->a0[l], a0);
	g->nh[l] = 3;
	g->len[l] = (uint32_t)m->body_len;
	g->in[l] = p;
	g->out[l] = c;
	for (unsigned r = 0; r <= nr; r++)
		_mm_store_si128((__m128i *)g->rk[r][l],
				_mm_load_si128((const __m128i *)m->key->k.aes.rk.ni[0][r]));
}

/*
 * Runs the k (GMIN <= k <= 16) MPDUs e[0..k) of nr rounds as one group,
 * spare lanes repeating e[0]; writes each MIC (§6.1 step 9: MSB_M(T ^
 * S_0)) after its ciphertext.
 */
__attribute__((target("aes,sse4.1"))) static void run_group(struct tw_ccm_group *g,
							      struct tw_ccmp_mpdu *const *e,
							      const uint8_t *const *p,
							      uint8_t *const *c, unsigned k,
							      unsigned nr)
{
	for (unsigned l = 0; l < TW_CCM_MAX_LANES; l++) {
		unsigned i = l < k ? l : 0;

		lane_fill(g, l, e[i], p[i], c[i], nr);
	}
	tw_ccm_vaes_group(g, nr);
	for (unsigned l = 0; l < k; l++) {
		__m128i tag = _mm_load_si128((const __m128i *)g->t[l]);
		uint8_t *mic = c[l] + e[l]->body_len;

		if (e[l]->key->cipher == TW_CCMP_128)
			_mm_storel_epi64((__m128i *)mic, tag);
		else
			_mm_storeu_si128((__m128i *)mic, tag);
		e[l]->status = TW_OK;
	}
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
	if (err == TW_OK) {
		aad_nonce(&m, hdr_src(&m, p));
		err = crypt_one(&m, 0, NULL, p, c);
	}
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

/* Where an MPDU of a chunk went: its prep failed, the generic CCM or GCM
 * batch (index in cops / gops), or a VAES group (done in place). */
enum { VIA_NONE, VIA_CCM, VIA_GCM, VIA_GROUP };

#if defined(__x86_64__)
/*
 * The group-eligible MPDUs e[0..ne) of one key size (nr rounds), sorted
 * by body length so that a group's lanes end together, in groups of
 * sixteen; a group that would idle for more than a quarter of its work,
 * and one of fewer than GMIN frames, goes back to the caller (returned
 * count, moved to the front of e) for the generic CCM batch.
 */
static size_t encap_groups(struct tw_ccmp_mpdu **e, const uint8_t **p, uint8_t **c,
			   size_t ne, unsigned nr)
{
	struct tw_ccm_group g;
	size_t back = 0;
	bool used = false;

	/* Insertion sort by length: linear on frames of one size. */
	for (size_t i = 1; i < ne; i++) {
		struct tw_ccmp_mpdu *x = e[i];
		const uint8_t *xp = p[i];
		uint8_t *xc = c[i];
		size_t k = i;

		for (; k > 0 && e[k - 1]->body_len > x->body_len; k--) {
			e[k] = e[k - 1];
			p[k] = p[k - 1];
			c[k] = c[k - 1];
		}
		e[k] = x;
		p[k] = xp;
		c[k] = xc;
	}
	for (size_t i = 0; i < ne; i += TW_CCM_MAX_LANES) {
		size_t k = ne - i < TW_CCM_MAX_LANES ? ne - i : TW_CCM_MAX_LANES;
		size_t sum = 0, max = e[i + k - 1]->body_len / 16 + 1; /* sorted */

		for (size_t l = 0; l < k; l++)
			sum += e[i + l]->body_len / 16 + 1;
		if (k < GMIN || k * max - sum > sum / 4 + 2 * k) {
			for (size_t l = 0; l < k; l++, back++) {
				e[back] = e[i + l];
				p[back] = p[i + l];
				c[back] = c[i + l];
			}
			continue;
		}
		run_group(&g, e + i, p + i, c + i, (unsigned)k, nr);
		used = true;
	}
	if (used)
		tw_wipe(&g, sizeof(g));
	return back;
}
#endif

static int batch(struct tw_ccmp_mpdu *mp, size_t n, int dec)
{
	int first = TW_OK;
#if defined(__x86_64__)
	bool grp = !dec && tw_cpu_has(GROUP_FEATURES);
#endif

	if (n > 0 && mp == NULL)
		return TW_ERR_INVAL;
	for (size_t base = 0; base < n; base += CHUNK) {
		struct tw_ccm_op cops[CHUNK];
		struct tw_gcm_op gops[CHUNK];
		uint8_t mics[CHUNK][16];
		uint8_t via[CHUNK], idx[CHUNK];
		size_t nc = 0, ng = 0, cnt = n - base < CHUNK ? n - base : CHUNK;
#if defined(__x86_64__)
		/* Group candidates: [0] CCMP-128 (10 rounds), [1] CCMP-256. */
		struct tw_ccmp_mpdu *e[2][CHUNK];
		const uint8_t *ep[2][CHUNK];
		uint8_t *ec[2][CHUNK];
		size_t ne[2] = { 0, 0 };
#endif

		for (size_t i = 0; i < cnt; i++) {
			struct tw_ccmp_mpdu *m = &mp[base + i];
			const uint8_t *src = NULL;
			uint8_t *body = NULL;

			via[i] = VIA_NONE;
			m->status = dec ? decap_prep(m, mics[i], &src, &body)
					: encap_prep(m, &src, &body);
			if (m->status != TW_OK)
				continue;
#if defined(__x86_64__)
			if (grp && group_ok(m)) {
				size_t w = m->key->cipher == TW_CCMP_256;

				via[i] = VIA_GROUP;
				e[w][ne[w]] = m;
				ep[w][ne[w]] = src;
				ec[w][ne[w]++] = body;
				continue;
			}
#endif
			uint8_t *tag = dec ? mics[i] : body + m->body_len;
			size_t mic = mic_len(m->key);

			if (!dec)
				aad_nonce(m, hdr_src(m, src));

			if (is_gcmp(m->key)) {
				via[i] = VIA_GCM;
				idx[i] = (uint8_t)ng;
				gops[ng++] = (struct tw_gcm_op){
					.ctx = &m->key->k.gcm, .iv = m->nonce + 1,
					.aad = m->aad, .aad_len = m->aad_len,
					.in = src, .out = body, .len = m->body_len,
					.tag = tag, .tag_len = mic };
			} else {
				via[i] = VIA_CCM;
				idx[i] = (uint8_t)nc;
				cops[nc++] = (struct tw_ccm_op){
					.aes = &m->key->k.aes, .nonce = m->nonce,
					.nonce_len = 13, .aad = m->aad,
					.aad_len = m->aad_len, .in = src, .out = body,
					.len = m->body_len, .tag = tag, .tag_len = mic };
			}
		}
#if defined(__x86_64__)
		for (unsigned w = 0; w < 2; w++) {
			size_t back = ne[w] > 0 ? encap_groups(e[w], ep[w], ec[w], ne[w],
								w ? 14 : 10) : 0;

			/* Frames a group would not take: the generic CCM batch,
			 * which needs the AAD and nonce octets after all. */
			for (size_t b = 0; b < back; b++) {
				struct tw_ccmp_mpdu *m = e[w][b];

				aad_nonce(m, hdr_src(m, ep[w][b]));
				via[m - &mp[base]] = VIA_CCM;
				idx[m - &mp[base]] = (uint8_t)nc;
				cops[nc++] = (struct tw_ccm_op){
					.aes = &m->key->k.aes, .nonce = m->nonce,
					.nonce_len = 13, .aad = m->aad,
					.aad_len = m->aad_len, .in = ep[w][b], .out = ec[w][b],
					.len = m->body_len, .tag = ec[w][b] + m->body_len,
					.tag_len = mic_len(m->key) };
			}
		}
#endif
		/* Per-op statuses carry the results; the totals add nothing. */
		int e1 = dec ? tw_ccm_decrypt_batch(cops, nc) : tw_ccm_encrypt_batch(cops, nc);
		int e2 = dec ? tw_gcm_decrypt_batch(gops, ng) : tw_gcm_encrypt_batch(gops, ng);
		(void)e1;
		(void)e2;
		for (size_t i = 0; i < cnt; i++) {
			struct tw_ccmp_mpdu *m = &mp[base + i];

			if (via[i] == VIA_CCM)
				m->status = cops[idx[i]].status;
			else if (via[i] == VIA_GCM)
				m->status = gops[idx[i]].status;
			if (dec && via[i] != VIA_NONE)
				m->status = decap_post(m, m->status);
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
