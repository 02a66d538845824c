/*
 * twag — the bitsliced Triple DES (des_bs.c) as des.c uses it; not a
 * public header. Many blocks under one key at a time: 64 per pass on any
 * CPU, 256 with AVX2, 512 with AVX-512 (FIPS 46-3; SP 800-67 Rev. 2;
 * CBC per SP 800-38A §6.2).
 */
#ifndef TWAG_DES_BS_H
#define TWAG_DES_BS_H

#include <stddef.h>
#include <stdint.h>

#include "twag/des.h"

/* Fills ctx->bsk from ctx->ks: one octet 0 or 1 per key bit. */
void tw_des3_bs_keys(struct tw_des3_ctx *ctx);

/* CBC decryption of nblocks blocks (SP 800-38A §6.2), many per pass;
 * out may equal in; iv as in tw_des3_cbc_decrypt. */
void tw_des3_bs_cbc_decrypt(const struct tw_des3_ctx *ctx, uint8_t iv[8],
			    uint8_t *out, const uint8_t *in, size_t nblocks);

#endif
