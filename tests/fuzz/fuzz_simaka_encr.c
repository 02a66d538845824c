/*
 * Fuzz target: the AT_ENCR_DATA path with a fixed K_encr. The input's first
 * octet picks the method; the rest, cut to a multiple of 16, is the
 * plaintext: it is encrypted (OpenSSL AES-128-CBC) into an EAP message with
 * AT_IV/AT_ENCR_DATA, then decoded and decrypted by twag, so the nested
 * decoder sees fuzzer-chosen attributes. The raw input is also tried as an
 * outer packet. Invariants: no crash, decrypted plaintext equals the input,
 * views inside the plaintext, only nested-allowed attributes decoded; the
 * same verdict from tw_simaka_decode_inner on the plaintext; a refused
 * plaintext wiped; no room for it is TW_ERR_OVERFLOW. An accepted nested
 * message re-encrypted by the builder (tw_simaka_end_encr, and
 * _end_encr_later with tw_simaka_encrypt_many in a batch: the same octets)
 * decrypts to the same attributes. Once per process, the codec's documented
 * refusals, and its MACs (one pass, streamed, batched in lanes) against
 * OpenSSL's HMAC (contract).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/simaka.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t k_encr[16] = { 0x53, 0x6e, 0x5e, 0xbc, 0x44, 0x65, 0x58,
				    0x2a, 0xa6, 0xa8, 0xec, 0x99, 0x86, 0xeb,
				    0xb6, 0x20 };
static const uint8_t iv[16] = { 0x9e, 0x18, 0xb0, 0xc2, 0x9a, 0x65, 0x22,
				0x63, 0xc0, 0x6e, 0xfb, 0x54, 0xdd, 0x00,
				0xa8, 0x95 };

static void check_inner(const struct tw_simaka_msg *in, const uint8_t *plain,
			size_t n)
{
	const struct tw_simaka_attr *a[] = {
		&in->padding, &in->counter, &in->counter_too_small, &in->nonce_s,
		&in->next_pseudonym, &in->next_reauth_id,
	};
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (a[i]->val != NULL &&
		    (a[i]->val < plain || a[i]->val + a[i]->len > plain + n))
			abort();
	if (in->rand_.val || in->mac.val || in->iv.val || in->encr_data.val ||
	    in->identity.val)
		abort();
	if (in->padding.val != NULL && in->padding.len > 10)
		abort();
}

/*
 * The encrypting builder against the decoder: the nested attributes of
 * in put again between tw_simaka_begin_encr and tw_simaka_end_encr (which
 * pads and encrypts), the message decodes and decrypts to the same
 * attributes; closed with _end_encr_later and encrypted in a batch of
 * copies (tw_simaka_encrypt_many) it is the same octets.
 */
static void reencrypt(uint8_t method, const struct tw_simaka_msg *in)
{
	static uint8_t out[1200], later[5][1200], plain[1200];
	struct tw_simaka_builder b;
	struct tw_simaka_msg outer, inner;
	struct tw_simaka_encr_later e[5];
	size_t len = 0, len2 = 0;
	unsigned n = 1 + in->counter_value % 5;

	/* only padding and skipped attributes: nothing to encrypt, which
	 * the builder refuses (an empty AT_ENCR_DATA cannot be sent) */
	if (!in->counter.val && !in->counter_too_small.val && !in->nonce_s.val &&
	    !in->next_pseudonym.val && !in->next_reauth_id.val)
		return;

	for (unsigned k = 0; k <= n; k++) {
		uint8_t *buf = k == 0 ? out : later[k - 1];

		tw_simaka_build_init(&b, buf, sizeof(out), TW_EAP_REQUEST, 2, method,
				     TW_SIMAKA_REAUTH);
		tw_simaka_begin_encr(&b, iv);
		if (in->counter.val)
			tw_simaka_put_fixed(&b, TW_AT_COUNTER, in->counter_value, NULL, 0);
		if (in->counter_too_small.val)
			tw_simaka_put_fixed(&b, TW_AT_COUNTER_TOO_SMALL, 0, NULL, 0);
		if (in->nonce_s.val)
			tw_simaka_put_fixed(&b, TW_AT_NONCE_S, 0, in->nonce_s.val, in->nonce_s.len);
		if (in->next_pseudonym.val)
			tw_simaka_put_var(&b, TW_AT_NEXT_PSEUDONYM, in->next_pseudonym.val,
					  in->next_pseudonym.len);
		if (in->next_reauth_id.val)
			tw_simaka_put_var(&b, TW_AT_NEXT_REAUTH_ID, in->next_reauth_id.val,
					  in->next_reauth_id.len);
		if (k == 0)
			tw_simaka_end_encr(&b, k_encr);
		else
			tw_simaka_end_encr_later(&b, &e[k - 1]);
		if (tw_simaka_finish(&b, k == 0 ? &len : &len2) != TW_OK ||
		    (k != 0 && len2 != len))
			abort();
	}
	{
		uint8_t *bufs[5];
		const uint8_t *keys[5];

		for (unsigned k = 0; k < n; k++) {
			bufs[k] = later[k];
			keys[k] = k_encr;
		}
		tw_simaka_encrypt_many(bufs, e, keys, n);
		for (unsigned k = 0; k < n; k++)
			if (memcmp(later[k], out, len) != 0)
				abort();
	}
	if (tw_simaka_decode(&outer, out, len) != TW_OK ||
	    tw_simaka_decrypt(&inner, plain, sizeof(plain), &outer, k_encr) != TW_OK)
		abort();
	const struct tw_simaka_attr *a1[] = { &in->counter, &in->counter_too_small, &in->nonce_s,
					      &in->next_pseudonym, &in->next_reauth_id },
				    *a2[] = { &inner.counter, &inner.counter_too_small,
					      &inner.nonce_s, &inner.next_pseudonym,
					      &inner.next_reauth_id };
	for (size_t i = 0; i < sizeof(a1) / sizeof(a1[0]); i++)
		if ((a1[i]->val == NULL) != (a2[i]->val == NULL) ||
		    (a1[i]->val != NULL && (a1[i]->len != a2[i]->len ||
					    memcmp(a1[i]->val, a2[i]->val, a1[i]->len) != 0)))
			abort();
	if (in->counter.val && inner.counter_value != in->counter_value)
		abort();
}

#include "fuzz_simaka_shared.h"
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const uint8_t methods[3] = { TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					    TW_EAP_TYPE_AKA_PRIME };
	uint8_t pkt[8 + 20 + 4 + 1024], plain[1024];
	struct tw_simaka_msg outer, inner;

	contract();
	/* The raw input as an outer message. */
	if (tw_simaka_decode(&outer, data, size) == TW_OK &&
	    outer.encr_data.val != NULL &&
	    tw_simaka_decrypt(&inner, plain, sizeof(plain), &outer, k_encr) == TW_OK)
		check_inner(&inner, plain, outer.encr_data.len);

	if (size < 1)
		return 0;
	uint8_t method = methods[data[0] % 3];
	size_t n = (size - 1) & ~(size_t)15;
	if (n > 1008)
		n = 1008;
	if (n == 0)
		return 0;

	/* EAP header, AT_IV, AT_ENCR_DATA(ciphertext of data[1..1+n)). */
	size_t len = 8 + 20 + 4 + n;
	pkt[0] = TW_EAP_REQUEST;
	pkt[1] = 1;
	tw_store_be16(pkt + 2, (uint16_t)len);
	pkt[4] = method;
	pkt[5] = TW_SIMAKA_REAUTH;
	pkt[6] = pkt[7] = 0;
	pkt[8] = TW_AT_IV;
	pkt[9] = 5;
	pkt[10] = pkt[11] = 0;
	memcpy(pkt + 12, iv, 16);
	pkt[28] = TW_AT_ENCR_DATA;
	pkt[29] = (uint8_t)((4 + n) / 4);
	pkt[30] = pkt[31] = 0;
	int ol = 0;
	EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
	if (x == NULL)
		abort();
	if (EVP_EncryptInit_ex(x, EVP_aes_128_cbc(), NULL, k_encr, iv) != 1 ||
	    EVP_CIPHER_CTX_set_padding(x, 0) != 1 ||
	    EVP_EncryptUpdate(x, pkt + 32, &ol, data + 1, (int)n) != 1 ||
	    (size_t)ol != n)
		abort();
	EVP_CIPHER_CTX_free(x);

	if (tw_simaka_decode(&outer, pkt, len) != TW_OK)
		abort(); /* the outer part is always well formed */
	int err = tw_simaka_decrypt(&inner, plain, sizeof(plain), &outer, k_encr);
	struct tw_simaka_msg direct;
	int derr = tw_simaka_decode_inner(&direct, method, data + 1, n);

	/* decrypting then decoding, or decoding the plaintext: one verdict */
	if ((err == TW_OK) != (derr == TW_OK))
		abort();
	if (err == TW_OK) {
		if (memcmp(plain, data + 1, n) != 0)
			abort();
		check_inner(&inner, plain, n);
		reencrypt(method, &inner);
	} else if (err != TW_ERR_DECODE) {
		abort();
	} else {
		/* a refused plaintext is wiped (simaka.h) */
		for (size_t i = 0; i < n; i++)
			if (plain[i] != 0)
				abort();
	}
	/* no room for the plaintext */
	if (tw_simaka_decrypt(&inner, plain, n - 16, &outer, k_encr) != TW_ERR_OVERFLOW)
		abort();
	return 0;
}
