/*
 * twag — helpers shared by ESP (RFC 4303) and AH (RFC 4302) in
 * src/dataplane (not a public header).
 */
#ifndef TWAG_ESP_INTERNAL_H
#define TWAG_ESP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "twag/esp.h"

/* Keys an integrity transform (RFC 2404 / 4868 / 2403 key lengths) and
 * gives its ICV length. TW_ERR_LENGTH / TW_ERR_INVAL. */
int tw_ipsec_auth_init(union tw_ipsec_auth *a, uint32_t integ,
		       const uint8_t *key, size_t key_len, uint32_t *icv_len);

/* The full HMAC of p1 | p2 | p3 (any may be empty) into mac (up to 32
 * octets; the ICV is its leading icv_len octets, RFC 2104 §5). */
void tw_ipsec_auth_mac(union tw_ipsec_auth *a, uint32_t integ,
		       const uint8_t *p1, size_t l1, const uint8_t *p2,
		       size_t l2, const uint8_t *p3, size_t l3, uint8_t mac[32]);

void tw_ipsec_auth_wipe(union tw_ipsec_auth *a);

/* Counts a failed inbound status in the matching counter. */
void tw_ipsec_count(struct tw_esp_stats *st, int err);

/* AES-CBC (SP 800-38A §6.2, RFC 3602) in place over len octets, a
 * multiple of 16, from the given IV. Exposed for the RFC 3602 tests. */
void tw_esp_cbc_encrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[16],
			uint8_t *buf, size_t len);
void tw_esp_cbc_decrypt(const struct tw_aes_ctx *ctx, const uint8_t iv[16],
			uint8_t *buf, size_t len);

#endif
