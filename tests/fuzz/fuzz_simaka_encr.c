/*
 * Fuzz target: the AT_ENCR_DATA path with a fixed K_encr. The input's first
 * octet picks the method; the rest, cut to a multiple of 16, is the
 * plaintext: it is encrypted (OpenSSL AES-128-CBC) into an EAP message with
 * AT_IV/AT_ENCR_DATA, then decoded and decrypted by twag, so the nested
 * decoder sees fuzzer-chosen attributes. The raw input is also tried as an
 * outer packet. Invariants: no crash, decrypted plaintext equals the input,
 * views inside the plaintext, only nested-allowed attributes decoded.
 */
#include <openssl/evp.h>
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

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const uint8_t methods[3] = { TW_EAP_TYPE_SIM, TW_EAP_TYPE_AKA,
					    TW_EAP_TYPE_AKA_PRIME };
	uint8_t pkt[8 + 20 + 4 + 1024], plain[1024];
	struct tw_simaka_msg outer, inner;

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
	if (err == TW_OK) {
		if (memcmp(plain, data + 1, n) != 0)
			abort();
		check_inner(&inner, plain, n);
	} else if (err != TW_ERR_DECODE) {
		abort();
	}
	return 0;
}
