/*
 * twag — IPsec ESP (RFC 4303, December 2005) with AES-GCM (RFC 4106,
 * June 2005), AES-CBC (RFC 3602), 3DES-CBC (RFC 2451), NULL (RFC 2410),
 * HMAC-SHA1-96 (RFC 2404), HMAC-SHA-256-128 (RFC 4868), HMAC-MD5-96
 * (RFC 2403); single packets and batches. See twag/esp.h.
 */
#include <string.h>

#include "esp_internal.h"
#include "twag/bytes.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "twag/cpu.h"
#endif

/* ---- integrity transforms, shared with AH ---- */

int tw_ipsec_auth_init(union tw_ipsec_auth *a, uint32_t integ,
		       const uint8_t *key, size_t key_len, uint32_t *icv_len)
{
	switch (integ) {
	case TW_ESP_AUTH_HMAC_SHA1_96:
		/* RFC 2404 §3: 160-bit key; §2: ICV = first 96 bits */
		if (key_len != 20)
			return TW_ERR_LENGTH;
		tw_hmac_sha1_init(&a->sha1, key, key_len);
		*icv_len = 12;
		return TW_OK;
	case TW_ESP_AUTH_HMAC_SHA256_128:
		/* RFC 4868 §2.1.1: 256-bit key; §2.3: first 128 bits */
		if (key_len != 32)
			return TW_ERR_LENGTH;
		tw_hmac_sha256_init(&a->sha256, key, key_len);
		*icv_len = 16;
		return TW_OK;
	case TW_ESP_AUTH_HMAC_MD5_96:
		/* RFC 2403 §3: 128-bit key; §2: first 96 bits */
		if (key_len != 16)
			return TW_ERR_LENGTH;
		tw_hmac_md5_init(&a->md5, key, key_len);
		*icv_len = 12;
		return TW_OK;
	default:
		return TW_ERR_INVAL;
	}
}

void tw_ipsec_auth_mac(union tw_ipsec_auth *a, uint32_t integ,
		       const uint8_t *p1, size_t l1, const uint8_t *p2,
		       size_t l2, const uint8_t *p3, size_t l3, uint8_t mac[32])
{
	switch (integ) {
	case TW_ESP_AUTH_HMAC_SHA1_96:
		tw_hmac_sha1_update(&a->sha1, p1, l1);
		tw_hmac_sha1_update(&a->sha1, p2, l2);
		tw_hmac_sha1_update(&a->sha1, p3, l3);
		tw_hmac_sha1_final(&a->sha1, mac);
		break;
	case TW_ESP_AUTH_HMAC_SHA256_128:
		tw_hmac_sha256_update(&a->sha256, p1, l1);
		tw_hmac_sha256_update(&a->sha256, p2, l2);
		tw_hmac_sha256_update(&a->sha256, p3, l3);
		tw_hmac_sha256_final(&a->sha256, mac);
		break;
	case TW_ESP_AUTH_HMAC_MD5_96:
		tw_hmac_md5_update(&a->md5, p1, l1);
		tw_hmac_md5_update(&a->md5, p2, l2);
		tw_hmac_md5_update(&a->md5, p3, l3);
		tw_hmac_md5_final(&a->md5, mac);
		break;
	default:
		memset(mac, 0, 32);
		break;
	}
}

void tw_ipsec_auth_wipe(union tw_ipsec_auth *a)
{
	tw_wipe(a, sizeof(*a));
}

void tw_ipsec_count(struct tw_esp_stats *st, int err)
{
	switch (err) {
	case TW_ERR_LENGTH: st->bad_length++; break;
	case TW_ERR_NOTFOUND: st->bad_spi++; break;
	case TW_ERR_REPLAY: st->replayed++; break;
	case TW_ERR_RANGE: st->too_old++; break;
	case TW_ERR_AUTH: st->bad_icv++; break;
	case TW_ERR_DECODE: st->bad_padding++; break;
	case TW_ERR_UNSUPPORTED: st->bad_next_header++; break;
	default: break;
	}
}

/* ---- transform table ---- */

static const struct {
	const char *name;
	uint32_t cipher, integ;
	uint8_t enc_len, auth_len;
} transforms[] = {
	{ "aes-gcm-128", TW_ESP_ENC_AES_GCM, TW_ESP_AUTH_NONE, 20, 0 },
	{ "aes-gcm-256", TW_ESP_ENC_AES_GCM, TW_ESP_AUTH_NONE, 36, 0 },
	{ "aes-cbc-128-hmac-sha1", TW_ESP_ENC_AES_CBC, TW_ESP_AUTH_HMAC_SHA1_96, 16, 20 },
	{ "aes-cbc-256-hmac-sha1", TW_ESP_ENC_AES_CBC, TW_ESP_AUTH_HMAC_SHA1_96, 32, 20 },
	{ "aes-cbc-128-hmac-sha256", TW_ESP_ENC_AES_CBC, TW_ESP_AUTH_HMAC_SHA256_128, 16, 32 },
	{ "aes-cbc-256-hmac-sha256", TW_ESP_ENC_AES_CBC, TW_ESP_AUTH_HMAC_SHA256_128, 32, 32 },
	{ "aes-cbc-128-hmac-md5", TW_ESP_ENC_AES_CBC, TW_ESP_AUTH_HMAC_MD5_96, 16, 16 },
	{ "3des-cbc-hmac-sha1", TW_ESP_ENC_3DES_CBC, TW_ESP_AUTH_HMAC_SHA1_96, 24, 20 },
	{ "null-hmac-sha1", TW_ESP_ENC_NULL, TW_ESP_AUTH_HMAC_SHA1_96, 0, 20 },
	{ "null-hmac-md5", TW_ESP_ENC_NULL, TW_ESP_AUTH_HMAC_MD5_96, 0, 16 },
	{ "null", TW_ESP_ENC_NULL, TW_ESP_AUTH_NONE, 0, 0 },
};

int tw_esp_transform(const char *name, struct tw_esp_config *cfg)
{
	if (name == NULL || cfg == NULL)
		return TW_ERR_INVAL;
	for (size_t i = 0; i < sizeof(transforms) / sizeof(transforms[0]); i++) {
		if (strcmp(name, transforms[i].name) != 0)
			continue;
		cfg->cipher = transforms[i].cipher;
		cfg->integ = transforms[i].integ;
		cfg->enc_key_len = transforms[i].enc_len;
		cfg->auth_key_len = transforms[i].auth_len;
		cfg->allow_null_null = transforms[i].cipher == TW_ESP_ENC_NULL &&
				       transforms[i].integ == TW_ESP_AUTH_NONE;
		return TW_OK;
	}
	return TW_ERR_NOTFOUND;
}

/* ---- SA ---- */

int tw_esp_sa_init(struct tw_esp_sa *sa, const struct tw_esp_config *cfg)
{
	int err;

	if (sa == NULL || cfg == NULL)
		return TW_ERR_INVAL;
	memset(sa, 0, sizeof(*sa));
	/* RFC 4303 §2.1: SPI 0 is reserved for local use, never sent. */
	if (cfg->spi == 0 || cfg->mode > TW_ESP_TUNNEL)
		return TW_ERR_INVAL;
	if ((cfg->enc_key_len != 0 && cfg->enc_key == NULL) ||
	    (cfg->auth_key_len != 0 && cfg->auth_key == NULL))
		return TW_ERR_INVAL;
	/* §2.2.1: the high 32 bits of an ESN are never sent; the receiver
	 * infers them (Appendix A2) and only the ICV confirms the guess.
	 * Without integrity a wrong guess is taken, and one packet from
	 * before the window moves it 2^32 ahead of every later one. (The
	 * NULL/NULL baseline, allow_null_null, is never for the wire.) */
	if (cfg->esn && cfg->integ == TW_ESP_AUTH_NONE &&
	    (cfg->cipher == TW_ESP_ENC_AES_CBC || cfg->cipher == TW_ESP_ENC_3DES_CBC))
		return TW_ERR_INVAL;
	sa->spi = cfg->spi;
	sa->cipher = cfg->cipher;
	sa->integ = cfg->integ;
	sa->mode = cfg->mode;
	sa->esn = cfg->esn;
	err = tw_replay_init(&sa->replay, cfg->replay_window ? cfg->replay_window
							     : TW_REPLAY_WINDOW_DEFAULT);
	if (err != TW_OK)
		goto out;

	switch (cfg->cipher) {
	case TW_ESP_ENC_NULL:
		/* RFC 4303 §3.2: NULL encryption and no integrity MUST NOT
		 * both be selected; the baseline asks for it by name. */
		err = TW_ERR_INVAL;
		if (cfg->integ == TW_ESP_AUTH_NONE && !cfg->allow_null_null)
			goto out;
		err = TW_ERR_LENGTH;
		if (cfg->enc_key_len != 0)
			goto out;
		sa->iv_len = 0;
		sa->align = 4; /* §2.4: 4-octet alignment */
		break;
	case TW_ESP_ENC_AES_CBC:
		/* RFC 3602 §2.4/§3: 16-octet block and explicit IV */
		err = tw_aes_init(&sa->enc.aes, cfg->enc_key, cfg->enc_key_len);
		if (err != TW_OK)
			goto out;
		sa->iv_len = sa->align = 16;
		break;
	case TW_ESP_ENC_3DES_CBC:
		/* RFC 2451 §2.1/§3: 8-octet block and explicit IV */
		err = tw_des3_init(&sa->enc.des3, cfg->enc_key, cfg->enc_key_len);
		if (err != TW_OK)
			goto out;
		sa->iv_len = sa->align = 8;
		break;
	case TW_ESP_ENC_AES_GCM:
		/* RFC 4106 §8.1: KEYMAT = AES key | 4-octet salt; §3.1:
		 * 8-octet explicit IV; §3.2: 4-octet alignment; §5: no
		 * separate integrity transform. */
		err = TW_ERR_INVAL;
		if (cfg->integ != TW_ESP_AUTH_NONE)
			goto out;
		err = TW_ERR_LENGTH;
		if (cfg->enc_key_len != 20 && cfg->enc_key_len != 36)
			goto out;
		if (cfg->icv_len != 0 && cfg->icv_len != 8 && cfg->icv_len != 12 &&
		    cfg->icv_len != 16)
			goto out;
		err = tw_gcm_init(&sa->enc.gcm, cfg->enc_key, cfg->enc_key_len - 4);
		if (err != TW_OK)
			goto out;
		memcpy(sa->salt, cfg->enc_key + cfg->enc_key_len - 4, 4);
		sa->iv_len = 8;
		sa->align = 4;
		sa->icv_len = cfg->icv_len ? cfg->icv_len : 16;
		break;
	default:
		err = TW_ERR_INVAL;
		goto out;
	}
	if (cfg->cipher != TW_ESP_ENC_AES_GCM && cfg->integ != TW_ESP_AUTH_NONE) {
		err = tw_ipsec_auth_init(&sa->auth, cfg->integ, cfg->auth_key,
					 cfg->auth_key_len, &sa->icv_len);
		if (err != TW_OK)
			goto out;
	} else if (cfg->auth_key_len != 0) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	err = TW_OK;
out:
	if (err != TW_OK)
		tw_esp_sa_wipe(sa);
	return err;
}

void tw_esp_sa_wipe(struct tw_esp_sa *sa)
{
	tw_wipe(sa, sizeof(*sa));
}

size_t tw_esp_hdr_len(const struct tw_esp_sa *sa)
{
	return TW_ESP_HDR_LEN + sa->iv_len;
}

/* RFC 4303 §2.4: payload | pad | pad length | next header fills a whole
 * number of `align` octets, with the fewest pad octets. */
static size_t pad_len(const struct tw_esp_sa *sa, size_t len)
{
	return (sa->align - (len + 2) % sa->align) % sa->align;
}

size_t tw_esp_encap_len(const struct tw_esp_sa *sa, size_t len)
{
	return tw_esp_hdr_len(sa) + len + pad_len(sa, len) + 2 + sa->icv_len;
}

/* ---- AES-CBC (RFC 3602 / SP 800-38A §6.2) ---- */

#if defined(__x86_64__)
/* C_j = E_K(P_j ^ C_{j-1}): one serial chain, so one block at a time with
 * the round keys held in registers (no call per block). */
__attribute__((target("aes,sse4.1"))) static void
cbc_enc_ni(const struct tw_aes_ctx *ctx, const uint8_t iv[16], uint8_t *buf,
	   size_t nblocks)
{
	const __m128i *rk = (const __m128i *)(const void *)ctx->rk.ni[0];
	__m128i k[TW_AES_MAX_ROUNDS + 1];
	__m128i c = _mm_loadu_si128((const __m128i *)(const void *)iv);
	unsigned nr = ctx->nr;

	for (unsigned i = 0; i <= nr; i++)
		k[i] = _mm_load_si128(rk + i);
	for (size_t j = 0; j < nblocks; j++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(buf + 16 * j));

		x = _mm_xor_si128(_mm_xor_si128(x, c), k[0]);
		for (unsigned i = 1; i < nr; i++)
			x = _mm_aesenc_si128(x, k[i]);
		c = _mm_aesenclast_si128(x, k[nr]);
		_mm_storeu_si128((__m128i *)(void *)(buf + 16 * j), c);
	}
	for (unsigned i = 0; i <= nr; i++)
		k[i] = _mm_setzero_si128();
}
#endif

void tw_esp_cbc_encrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[16],
			uint8_t *buf, size_t len)
{
	uint8_t c[16];

#if defined(__x86_64__)
	if (ctx->impl == TW_AES_IMPL_AESNI && tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41)) {
		cbc_enc_ni(ctx, iv, buf, len / 16);
		return;
	}
#endif
	memcpy(c, iv, 16);
	for (size_t i = 0; i < len; i += 16) {
		tw_xor(buf + i, buf + i, c, 16);
		tw_aes_encrypt(ctx, buf + i, buf + i);
		memcpy(c, buf + i, 16);
	}
}

#if defined(__x86_64__)
/* P_j = D_K(C_j) ^ C_{j-1}: independent blocks, 8 in flight, with the
 * equivalent inverse cipher's round keys (FIPS 197 §5.3.5, rk.ni[1]). */
__attribute__((target("aes,sse4.1"))) static void
cbc_dec_ni(const struct tw_aes_ctx *ctx, const uint8_t iv[16], uint8_t *buf,
	   size_t nblocks)
{
	/* The round keys stay in memory (one load per round serves 8 blocks)
	 * and the ciphertext is re-read for the chaining XOR, so the 8
	 * blocks in flight fit the 16 XMM registers without spilling. */
	const __m128i *rk = (const __m128i *)(const void *)ctx->rk.ni[1];
	__m128i prev = _mm_loadu_si128((const __m128i *)(const void *)iv);
	unsigned nr = ctx->nr;
	size_t j = 0;

	for (; j + 8 <= nblocks; j += 8) {
		__m128i *p = (__m128i *)(void *)(buf + 16 * j);
		__m128i k = _mm_load_si128(rk), x[8];

#pragma GCC unroll 8
		for (int b = 0; b < 8; b++)
			x[b] = _mm_xor_si128(_mm_loadu_si128(p + b), k);
		for (unsigned i = 1; i < nr; i++) {
			k = _mm_load_si128(rk + i);
#pragma GCC unroll 8
			for (int b = 0; b < 8; b++)
				x[b] = _mm_aesdec_si128(x[b], k);
		}
		k = _mm_load_si128(rk + nr);
#pragma GCC unroll 8
		for (int b = 0; b < 8; b++)
			x[b] = _mm_aesdeclast_si128(x[b], k);
		__m128i next = _mm_loadu_si128(p + 7);
		/* descending, so C_{b-1} is read before P_{b-1} overwrites it */
#pragma GCC unroll 8
		for (int b = 7; b >= 1; b--)
			_mm_storeu_si128(p + b, _mm_xor_si128(x[b], _mm_loadu_si128(p + b - 1)));
		_mm_storeu_si128(p, _mm_xor_si128(x[0], prev));
		prev = next;
	}
	for (; j < nblocks; j++) {
		__m128i *p = (__m128i *)(void *)(buf + 16 * j);
		__m128i cj = _mm_loadu_si128(p);
		__m128i y = _mm_xor_si128(cj, _mm_load_si128(rk));

		for (unsigned i = 1; i < nr; i++)
			y = _mm_aesdec_si128(y, _mm_load_si128(rk + i));
		y = _mm_aesdeclast_si128(y, _mm_load_si128(rk + nr));
		_mm_storeu_si128(p, _mm_xor_si128(y, prev));
		prev = cj;
	}
}
#endif

/* P_j = D_K(C_j) ^ C_{j-1}: the blocks are independent, so up to 8 are
 * deciphered together (tw_aes_decrypt_blocks), keeping a copy of their
 * ciphertext for the chaining XOR. */
void tw_esp_cbc_decrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[16],
			uint8_t *buf, size_t len)
{
	uint8_t prev[16], save[8 * 16];

#if defined(__x86_64__)
	if (ctx->impl == TW_AES_IMPL_AESNI && ctx->has_dec &&
	    tw_cpu_has(TW_CPU_AESNI | TW_CPU_SSE41)) {
		cbc_dec_ni(ctx, iv, buf, len / 16);
		return;
	}
#endif

	memcpy(prev, iv, 16);
	for (size_t i = 0; i < len;) {
		size_t n = len - i < sizeof(save) ? len - i : sizeof(save);

		if (n < 16)
			break; /* callers pass whole blocks */

		memcpy(save, buf + i, n);
		tw_aes_decrypt_blocks(ctx, buf + i, buf + i, n / 16);
		tw_xor(buf + i, buf + i, prev, 16);
		tw_xor(buf + i + 16, buf + i + 16, save, n - 16);
		memcpy(prev, save + n - 16, 16);
		i += n;
	}
}

/* ---- outbound ---- */

/*
 * §3.3.1-3.3.3 framing common to both paths: the next sequence number,
 * header, IV, payload moved into place, padding, trailer. Leaves the
 * plaintext to protect in out[hdr .. hdr + *ct_len). With des_nonce, a
 * generated 3DES IV is left as its nonce (the batch encrypts it as the
 * first block of the packet's CBC chain, see tw_esp_encap_batch).
 */
static int encap_frame(struct tw_esp_sa *sa, uint8_t nh, const uint8_t *iv,
		       const uint8_t *payload, size_t len, uint8_t *out,
		       size_t out_max, size_t *ct_len, uint64_t *seq, bool des_nonce)
{
	size_t hdr = tw_esp_hdr_len(sa), pad = pad_len(sa, len);

	if (sa->mode == TW_ESP_TUNNEL) {
		/* §2.5: the inner packet's version says 4 or 41 */
		uint8_t v = len > 0 ? payload[0] >> 4 : 0;
		uint8_t want = v == 4 ? TW_ESP_NH_IPV4 : v == 6 ? TW_ESP_NH_IPV6 : 0;

		if (want == 0 || (nh != 0 && nh != want))
			return TW_ERR_INVAL;
		nh = want;
	}
	if (len > SIZE_MAX / 2 || tw_esp_encap_len(sa, len) > out_max)
		return TW_ERR_OVERFLOW;
	/* §3.3.3: without ESN the 32-bit counter must not cycle; with ESN
	 * the 64-bit one. The SA is then exhausted and must be rekeyed. */
	if (sa->seq_out == (sa->esn ? UINT64_MAX : (uint64_t)UINT32_MAX)) {
		sa->stats.seq_exhausted++;
		return TW_ERR_STATE;
	}
	*seq = sa->seq_out + 1;
	memmove(out + hdr, payload, len);
	tw_store_be32(out, sa->spi);
	/* §2.2 / §2.2.1: only the low 32 bits are sent */
	tw_store_be32(out + 4, (uint32_t)*seq);
	for (size_t i = 0; i < pad; i++)
		out[hdr + len + i] = (uint8_t)(i + 1);
	out[hdr + len + pad] = (uint8_t)pad;
	out[hdr + len + pad + 1] = nh;
	*ct_len = len + pad + 2;
	if (sa->iv_len == 0)
		return TW_OK;
	if (iv != NULL) {
		memcpy(out + TW_ESP_HDR_LEN, iv, sa->iv_len);
	} else if (sa->cipher == TW_ESP_ENC_AES_GCM) {
		/* RFC 4106 §3.1: the IV may be a counter; the sequence
		 * number is unique per key. */
		tw_store_be64(out + TW_ESP_HDR_LEN, *seq);
	} else {
		/* SP 800-38A Appendix C: IV = CIPH_K(nonce), the nonce
		 * unique per message under K: SPI | seq for AES, seq for
		 * 3DES. Unpredictable to anyone without K. */
		uint8_t n[16] = { 0 };

		if (sa->cipher == TW_ESP_ENC_AES_CBC) {
			tw_store_be32(n, sa->spi);
			tw_store_be64(n + 8, *seq);
			tw_aes_encrypt(&sa->enc.aes, out + TW_ESP_HDR_LEN, n);
		} else if (des_nonce) {
			tw_store_be64(out + TW_ESP_HDR_LEN, *seq);
		} else {
			tw_store_be64(n, *seq);
			tw_des3_encrypt(&sa->enc.des3, out + TW_ESP_HDR_LEN, n);
		}
	}
	return TW_OK;
}

/* RFC 4106 §4 nonce = salt | explicit IV; §5 AAD = SPI | seq (32-bit) or
 * SPI | seq high | seq low (ESN). Returns the AAD length. */
static size_t gcm_nonce_aad(const struct tw_esp_sa *sa, const uint8_t *pkt,
			    uint64_t seq, uint8_t nonce[12], uint8_t aad[12])
{
	memcpy(nonce, sa->salt, 4);
	memcpy(nonce + 4, pkt + TW_ESP_HDR_LEN, 8);
	tw_store_be32(aad, sa->spi);
	if (!sa->esn) {
		tw_store_be32(aad + 4, (uint32_t)seq);
		return 8;
	}
	tw_store_be32(aad + 4, (uint32_t)(seq >> 32));
	tw_store_be32(aad + 8, (uint32_t)seq);
	return 12;
}

static void encap_icv(struct tw_esp_sa *sa, uint8_t *out, size_t ct_len, uint64_t seq);

/* Encryption and ICV of the non-GCM transforms (and GCM singly). */
static int encap_seal(struct tw_esp_sa *sa, uint8_t *out, size_t ct_len,
		      uint64_t seq)
{
	size_t hdr = tw_esp_hdr_len(sa);
	uint8_t *ct = out + hdr, *icv = out + hdr + ct_len;
	uint8_t iv[8];
	int err;

	switch (sa->cipher) {
	case TW_ESP_ENC_AES_GCM: {
		uint8_t nonce[12], aad[12];
		size_t al = gcm_nonce_aad(sa, out, seq, nonce, aad);

		return tw_gcm_encrypt(&sa->enc.gcm, nonce, aad, al, ct, ct, ct_len,
				      icv, sa->icv_len);
	}
	case TW_ESP_ENC_AES_CBC:
		tw_esp_cbc_encrypt(&sa->enc.aes, out + TW_ESP_HDR_LEN, ct, ct_len);
		break;
	case TW_ESP_ENC_3DES_CBC:
		memcpy(iv, out + TW_ESP_HDR_LEN, 8);
		err = tw_des3_cbc_encrypt(&sa->enc.des3, iv, ct, ct, ct_len);
		if (err != TW_OK)
			return err;
		break;
	default:
		break;
	}
	encap_icv(sa, out, ct_len, seq);
	return TW_OK;
}

/* §2.8 / §3.3.4: ICV over SPI | Seq | IV | ciphertext; §2.2.1 with ESN,
 * the high 32 bits follow implicitly (not sent). */
static void encap_icv(struct tw_esp_sa *sa, uint8_t *out, size_t ct_len, uint64_t seq)
{
	size_t hdr = tw_esp_hdr_len(sa);
	uint8_t mac[32], hi[4];

	if (sa->integ == TW_ESP_AUTH_NONE)
		return;
	tw_store_be32(hi, (uint32_t)(seq >> 32));
	tw_ipsec_auth_mac(&sa->auth, sa->integ, out, hdr + ct_len, hi,
			  sa->esn ? 4 : 0, NULL, 0, mac);
	memcpy(out + hdr + ct_len, mac, sa->icv_len);
	tw_wipe(mac, sizeof(mac));
}

int tw_esp_encap_iv(struct tw_esp_sa *sa, uint8_t next_header, const uint8_t *iv,
		    const uint8_t *payload, size_t len, uint8_t *out,
		    size_t out_max, size_t *out_len)
{
	size_t ct_len = 0;
	uint64_t seq = 0;
	int err;

	if (sa == NULL || out == NULL || out_len == NULL || (payload == NULL && len))
		return TW_ERR_INVAL;
	err = encap_frame(sa, next_header, iv, payload, len, out, out_max,
			  &ct_len, &seq, false);
	if (err != TW_OK)
		return err;
	err = encap_seal(sa, out, ct_len, seq);
	if (err != TW_OK)
		return err;
	sa->seq_out = seq;
	sa->stats.out_ok++;
	*out_len = tw_esp_hdr_len(sa) + ct_len + sa->icv_len;
	return TW_OK;
}

int tw_esp_encap(struct tw_esp_sa *sa, uint8_t next_header,
		 const uint8_t *payload, size_t len, uint8_t *out,
		 size_t out_max, size_t *out_len)
{
	return tw_esp_encap_iv(sa, next_header, NULL, payload, len, out, out_max,
			       out_len);
}

/* ---- inbound ---- */

/* §3.4.1-3.4.3 up to the ICV: length, SPI, sequence number (ESN
 * inferred, Appendix A2), replay pre-check. No state change. */
static int decap_open(const struct tw_esp_sa *sa, const uint8_t *pkt,
		      size_t len, uint64_t *seq, size_t *ct_len)
{
	size_t hdr = tw_esp_hdr_len(sa);
	size_t blk = sa->cipher == TW_ESP_ENC_AES_CBC ? 16
		     : sa->cipher == TW_ESP_ENC_3DES_CBC ? 8 : 1;
	uint32_t lo;
	int err;

	if (len < hdr + 2 + sa->icv_len)
		return TW_ERR_LENGTH;
	*ct_len = len - hdr - sa->icv_len;
	if (*ct_len % blk != 0)
		return TW_ERR_LENGTH;
	if (tw_load_be32(pkt) != sa->spi)
		return TW_ERR_NOTFOUND;
	lo = tw_load_be32(pkt + 4);
	if (sa->esn) {
		err = tw_replay_esn_infer(&sa->replay, lo, seq);
		if (err != TW_OK)
			return err;
	} else {
		*seq = lo;
	}
	return tw_replay_check(&sa->replay, *seq);
}

/* §3.4.4 for the separate integrity transforms: ICV before decrypting. */
static int decap_verify(struct tw_esp_sa *sa, const uint8_t *pkt, size_t ct_len,
			uint64_t seq)
{
	size_t hdr = tw_esp_hdr_len(sa);
	uint8_t mac[32], hi[4];
	bool ok;

	if (sa->integ == TW_ESP_AUTH_NONE)
		return TW_OK;
	tw_store_be32(hi, (uint32_t)(seq >> 32));
	tw_ipsec_auth_mac(&sa->auth, sa->integ, pkt, hdr + ct_len, hi,
			  sa->esn ? 4 : 0, NULL, 0, mac);
	ok = tw_ct_eq(mac, pkt + hdr + ct_len, sa->icv_len);
	tw_wipe(mac, sizeof(mac));
	return ok ? TW_OK : TW_ERR_AUTH;
}

static void decap_decrypt(struct tw_esp_sa *sa, uint8_t *pkt, size_t ct_len)
{
	uint8_t *ct = pkt + tw_esp_hdr_len(sa);
	uint8_t iv[8];

	if (sa->cipher == TW_ESP_ENC_AES_CBC) {
		tw_esp_cbc_decrypt(&sa->enc.aes, pkt + TW_ESP_HDR_LEN, ct, ct_len);
	} else if (sa->cipher == TW_ESP_ENC_3DES_CBC) {
		memcpy(iv, pkt + TW_ESP_HDR_LEN, 8);
		/* ct_len is a multiple of 8 (decap_open) */
		if (tw_des3_cbc_decrypt(&sa->enc.des3, iv, ct, ct, ct_len) != TW_OK)
			tw_wipe(ct, ct_len);
	}
}

/* After the ICV verified and the data is plaintext: window update
 * (§3.4.3), then the trailer (§2.4 padding, §2.6 next header). */
static int decap_finish(struct tw_esp_sa *sa, uint8_t *pkt, size_t ct_len,
			uint64_t seq, struct tw_esp_view *view)
{
	size_t hdr = tw_esp_hdr_len(sa);
	uint8_t *pt = pkt + hdr;
	size_t padl, plen;
	uint8_t nh, diff = 0;
	int err;

	err = tw_replay_update(&sa->replay, seq);
	if (err != TW_OK)
		goto out;
	/* The ICV verified (or the SA has none and nothing was encrypted):
	 * the receiver acts on the trailer, so it is public from here; the
	 * payload is not declassified. */
	tw_ct_declassify(pt + ct_len - 2, 2);
	padl = pt[ct_len - 2];
	nh = pt[ct_len - 1];
	err = TW_ERR_DECODE;
	if (padl + 2 > ct_len)
		goto out;
	plen = ct_len - 2 - padl;
	tw_ct_declassify(pt + plen, padl);
	/* §2.4: "the receiver SHOULD inspect the Padding field" for the
	 * default 1, 2, 3, ... contents */
	for (size_t i = 0; i < padl; i++)
		diff |= (uint8_t)(pt[plen + i] ^ (uint8_t)(i + 1));
	if (diff != 0)
		goto out;
	if (sa->mode == TW_ESP_TUNNEL && nh != TW_ESP_NH_NONE) {
		/* the inner version, public as the trailer: it is routed on */
		tw_ct_declassify(pt, plen > 0 ? 1 : 0);
		uint8_t v = plen > 0 ? pt[0] >> 4 : 0;

		err = TW_ERR_UNSUPPORTED;
		if (!((nh == TW_ESP_NH_IPV4 && v == 4) || (nh == TW_ESP_NH_IPV6 && v == 6)))
			goto out;
	}
	view->off = hdr;
	view->len = plen;
	view->next_header = nh;
	view->seq = seq;
	err = TW_OK;
out:
	if (err != TW_OK)
		tw_wipe(pt, ct_len); /* nothing of the plaintext leaves */
	return err;
}

static int decap_fail(struct tw_esp_sa *sa, int err)
{
	tw_ipsec_count(&sa->stats, err);
	return err;
}

int tw_esp_decap(struct tw_esp_sa *sa, uint8_t *pkt, size_t len,
		 struct tw_esp_view *view)
{
	size_t ct_len = 0;
	uint64_t seq = 0;
	int err;

	if (sa == NULL || pkt == NULL || view == NULL)
		return TW_ERR_INVAL;
	err = decap_open(sa, pkt, len, &seq, &ct_len);
	if (err != TW_OK)
		return decap_fail(sa, err);
	if (sa->cipher == TW_ESP_ENC_AES_GCM) {
		uint8_t nonce[12], aad[12];
		size_t al = gcm_nonce_aad(sa, pkt, seq, nonce, aad);
		size_t hdr = tw_esp_hdr_len(sa);

		/* RFC 4106 §3: combined mode, the tag checked as it decrypts
		 * (TW_ERR_AUTH wipes the output). */
		err = tw_gcm_decrypt(&sa->enc.gcm, nonce, aad, al, pkt + hdr,
				     pkt + hdr, ct_len, pkt + hdr + ct_len,
				     sa->icv_len);
	} else {
		err = decap_verify(sa, pkt, ct_len, seq);
		if (err == TW_OK)
			decap_decrypt(sa, pkt, ct_len);
	}
	if (err != TW_OK)
		return decap_fail(sa, err);
	err = decap_finish(sa, pkt, ct_len, seq, view);
	if (err != TW_OK)
		return decap_fail(sa, err);
	sa->stats.in_ok++;
	return TW_OK;
}

/* ---- batches ---- */

enum { BATCH_CHUNK = 32 };

/* Per-packet GCM state kept between the framing and the batched GCM call. */
struct gcm_slot {
	uint8_t nonce[12], aad[12];
	uint64_t seq;
	size_t ct_len;
	size_t idx;
};

/* A 3DES packet of a batch between framing and its chain's encryption. */
struct des_slot {
	size_t idx, ct_len;
	uint64_t seq;
	bool done;
};

/*
 * The 3DES packets of a chunk: those of one SA run as CBC chains side by
 * side (tw_des3_cbc_encrypt_multi), then get their ICVs. Each chain is
 * the packet's IV slot, holding the nonce seq (encap_frame), and its
 * ciphertext, under a zero IV: its first block comes out as CIPH_K(seq),
 * the IV encap_frame would have made (SP 800-38A Appendix C), and the
 * rest is CBC under that IV, as tw_esp_encap does it.
 */
static void encap_des_chains(struct tw_esp_pkt *pkts, struct des_slot *ds, size_t nd)
{
	struct tw_des3_cbc_chain ch[BATCH_CHUNK];
	uint8_t zero_iv[BATCH_CHUNK][8];
	size_t member[BATCH_CHUNK];

	for (size_t a = 0; a < nd; a++) {
		if (ds[a].done)
			continue;
		struct tw_esp_sa *sa = pkts[ds[a].idx].sa;
		size_t nc = 0;

		for (size_t b = a; b < nd; b++) {
			struct tw_esp_pkt *p = &pkts[ds[b].idx];

			if (ds[b].done || p->sa != sa)
				continue;
			ds[b].done = true;
			memset(zero_iv[nc], 0, 8);
			ch[nc] = (struct tw_des3_cbc_chain){
				.iv = zero_iv[nc], .out = p->buf + TW_ESP_HDR_LEN,
				.in = p->buf + TW_ESP_HDR_LEN, .len = 8 + ds[b].ct_len,
			};
			member[nc++] = b;
		}
		int err = tw_des3_cbc_encrypt_multi(&sa->enc.des3, ch, nc);

		for (size_t c = 0; c < nc; c++) {
			struct des_slot *d = &ds[member[c]];

			pkts[d->idx].status = err;
			if (err == TW_OK)
				encap_icv(sa, pkts[d->idx].buf, d->ct_len, d->seq);
		}
	}
}

int tw_esp_encap_batch(struct tw_esp_pkt *pkts, size_t n)
{
	struct tw_gcm_op ops[BATCH_CHUNK];
	struct gcm_slot slots[BATCH_CHUNK];
	struct des_slot ds[BATCH_CHUNK];
	int first = TW_OK;

	if (pkts == NULL && n > 0)
		return TW_ERR_INVAL;
	for (size_t base = 0; base < n; base += BATCH_CHUNK) {
		size_t end = n - base < BATCH_CHUNK ? n : base + BATCH_CHUNK;
		size_t ng = 0, nd = 0;

		for (size_t i = base; i < end; i++) {
			struct tw_esp_pkt *p = &pkts[i];
			struct tw_esp_sa *sa = p->sa;
			size_t ct_len = 0;
			uint64_t seq = 0;

			if (sa == NULL || p->buf == NULL) {
				p->status = TW_ERR_INVAL;
				continue;
			}
			bool des = sa->cipher == TW_ESP_ENC_3DES_CBC;

			p->status = encap_frame(sa, p->next_header, NULL,
						p->buf + tw_esp_hdr_len(sa), p->len,
						p->buf, p->cap, &ct_len, &seq, des);
			if (p->status != TW_OK)
				continue;
			/* The number is spent even if sealing fails later. */
			sa->seq_out = seq;
			p->len = tw_esp_hdr_len(sa) + ct_len + sa->icv_len;
			if (des) {
				ds[nd++] = (struct des_slot){ .idx = i, .ct_len = ct_len,
							      .seq = seq };
				continue;
			}
			if (sa->cipher != TW_ESP_ENC_AES_GCM) {
				p->status = encap_seal(sa, p->buf, ct_len, seq);
				continue;
			}
			struct gcm_slot *s = &slots[ng];
			size_t hdr = tw_esp_hdr_len(sa);
			s->idx = i;
			ops[ng] = (struct tw_gcm_op){
				.ctx = &sa->enc.gcm, .iv = s->nonce, .aad = s->aad,
				.aad_len = gcm_nonce_aad(sa, p->buf, seq, s->nonce, s->aad),
				.in = p->buf + hdr, .out = p->buf + hdr, .len = ct_len,
				.tag = p->buf + hdr + ct_len, .tag_len = sa->icv_len,
			};
			ng++;
		}
		if (ng > 0 && tw_gcm_encrypt_batch(ops, ng) != TW_OK) {
			for (size_t j = 0; j < ng; j++)
				pkts[slots[j].idx].status = ops[j].status;
		}
		if (nd > 0)
			encap_des_chains(pkts, ds, nd);
		for (size_t i = base; i < end; i++) {
			if (pkts[i].status == TW_OK)
				pkts[i].sa->stats.out_ok++;
			else if (first == TW_OK)
				first = pkts[i].status;
		}
	}
	return first;
}

int tw_esp_decap_batch(struct tw_esp_pkt *pkts, size_t n)
{
	struct tw_gcm_op ops[BATCH_CHUNK];
	struct gcm_slot slots[BATCH_CHUNK];
	uint64_t seqs[BATCH_CHUNK];
	size_t cts[BATCH_CHUNK];
	int first = TW_OK;

	if (pkts == NULL && n > 0)
		return TW_ERR_INVAL;
	for (size_t base = 0; base < n; base += BATCH_CHUNK) {
		size_t end = n - base < BATCH_CHUNK ? n : base + BATCH_CHUNK;
		size_t ng = 0;

		/* Pass 1: checks that change nothing, ICV + decryption of the
		 * CBC/NULL packets, GCM packets queued. */
		for (size_t i = base; i < end; i++) {
			struct tw_esp_pkt *p = &pkts[i];
			struct tw_esp_sa *sa = p->sa;
			size_t k = i - base;

			if (sa == NULL || p->buf == NULL) {
				p->status = TW_ERR_INVAL;
				continue;
			}
			p->status = decap_open(sa, p->buf, p->len, &seqs[k], &cts[k]);
			if (p->status != TW_OK)
				continue;
			if (sa->cipher != TW_ESP_ENC_AES_GCM) {
				p->status = decap_verify(sa, p->buf, cts[k], seqs[k]);
				if (p->status == TW_OK)
					decap_decrypt(sa, p->buf, cts[k]);
				continue;
			}
			struct gcm_slot *s = &slots[ng];
			size_t hdr = tw_esp_hdr_len(sa);
			s->idx = i;
			ops[ng] = (struct tw_gcm_op){
				.ctx = &sa->enc.gcm, .iv = s->nonce, .aad = s->aad,
				.aad_len = gcm_nonce_aad(sa, p->buf, seqs[k], s->nonce, s->aad),
				.in = p->buf + hdr, .out = p->buf + hdr, .len = cts[k],
				.tag = p->buf + hdr + cts[k], .tag_len = sa->icv_len,
			};
			ng++;
		}
		if (ng > 0 && tw_gcm_decrypt_batch(ops, ng) != TW_OK) {
			for (size_t j = 0; j < ng; j++)
				pkts[slots[j].idx].status = ops[j].status;
		}
		/* Pass 2, in array order: window updates and trailers. */
		for (size_t i = base; i < end; i++) {
			struct tw_esp_pkt *p = &pkts[i];
			size_t k = i - base;

			if (p->status == TW_OK)
				p->status = decap_finish(p->sa, p->buf, cts[k],
							 seqs[k], &p->view);
			if (p->status == TW_OK) {
				p->next_header = p->view.next_header;
				p->sa->stats.in_ok++;
			} else {
				if (p->sa != NULL)
					tw_ipsec_count(&p->sa->stats, p->status);
				if (first == TW_OK)
					first = p->status;
			}
		}
	}
	return first;
}
