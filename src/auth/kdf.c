/*
 * twag — 3GPP key derivation: the generic KDF of TS 33.220 (Rel-17)
 * Annex B.2, CK'/IK' of TS 33.402 Annex A.2 (TS 33.501 Annex A.3 in 5G),
 * the 5G key hierarchy of TS 33.501 Annex A, and the ANSI X9.63 KDF of
 * SEC 1 v2.0 §3.6.1 used by SUCI ECIES.
 */
#include <string.h>

#include "../crypto/sha_internal.h"
#include "twag/bytes.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/sha.h"

static int check_params(const struct tw_kdf_param *params, size_t n)
{
	if (params == NULL && n != 0)
		return TW_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		if (params[i].p == NULL && params[i].len != 0)
			return TW_ERR_INVAL;
		/* B.2.0: Li is the length of Pi in two octets */
		if (params[i].len > TW_KDF_PARAM_MAX)
			return TW_ERR_LENGTH;
	}
	return TW_OK;
}

int tw_kdf_3gpp_keyed(uint8_t out[static 32], struct tw_hmac_sha256_ctx *key_ctx,
		      uint8_t fc, const struct tw_kdf_param *params,
		      size_t n_params)
{
	int err = check_params(params, n_params);

	if (err != TW_OK) {
		memset(out, 0, TW_KDF_OUT_LEN);
		return err;
	}
	/* B.2.0: S = FC || P0 || L0 || P1 || L1 || ... ; key = HMAC(Key, S) */
	tw_hmac_sha256_reset(key_ctx);
	tw_hmac_sha256_update(key_ctx, &fc, 1);
	for (size_t i = 0; i < n_params; i++) {
		uint8_t l[2];

		tw_store_be16(l, (uint16_t)params[i].len);
		tw_hmac_sha256_update(key_ctx, params[i].p, params[i].len);
		tw_hmac_sha256_update(key_ctx, l, 2);
	}
	tw_hmac_sha256_final(key_ctx, out);
	return TW_OK;
}

int tw_kdf_3gpp(uint8_t out[static 32], const uint8_t *key, size_t key_len,
		uint8_t fc, const struct tw_kdf_param *params, size_t n_params)
{
	struct tw_hmac_sha256_ctx ctx;
	int err;

	if (key == NULL && key_len != 0) {
		memset(out, 0, TW_KDF_OUT_LEN);
		return TW_ERR_INVAL;
	}
	tw_hmac_sha256_init(&ctx, key, key_len);
	err = tw_kdf_3gpp_keyed(out, &ctx, fc, params, n_params);
	tw_hmac_sha256_wipe(&ctx);
	return err;
}

/* Network names (access network identity, serving network name) must be
 * present: an empty P0 would silently bind the keys to no network. */
static int check_name(const uint8_t *name, size_t len)
{
	if (len == 0 || len > TW_KDF_ACCESS_NET_MAX)
		return TW_ERR_LENGTH;
	if (name == NULL)
		return TW_ERR_INVAL;
	return TW_OK;
}

/* KDF keyed with CK || IK (TS 33.402 A.2, TS 33.501 A.2/A.3/A.4). */
static int kdf_ck_ik(uint8_t out[static 32], const uint8_t ck[static 16],
		     const uint8_t ik[static 16], uint8_t fc,
		     const struct tw_kdf_param *params, size_t n)
{
	uint8_t key[32];
	int err;

	memcpy(key, ck, 16);
	memcpy(key + 16, ik, 16);
	err = tw_kdf_3gpp(out, key, sizeof(key), fc, params, n);
	tw_wipe(key, sizeof(key));
	return err;
}

int tw_kdf_ck_ik_prime(uint8_t ck_prime[static 16], uint8_t ik_prime[static 16],
		       const uint8_t ck[static 16], const uint8_t ik[static 16],
		       const uint8_t *net_name, size_t net_name_len,
		       const uint8_t sqn_xor_ak[static 6])
{
	uint8_t out[32];
	int err = check_name(net_name, net_name_len);

	if (err != TW_OK)
		goto out;
	/* TS 33.402 A.2: FC = 0x20, P0 = access network identity,
	 * P1 = SQN ^ AK; CK' || IK' = KDF(CK || IK, S). RFC 9048 §3.3 names
	 * the first 128 bits CK' and the last 128 bits IK'. */
	const struct tw_kdf_param p[2] = {
		{ net_name, net_name_len },
		{ sqn_xor_ak, 6 },
	};
	if (11 + net_name_len + 9 <= 64) {
		/* the usual short name: S = FC | P0 | L0 | P1 | L1 fits one
		 * padded block, hashed without the generic buffering */
		struct tw_hmac_sha256_ctx k;
		uint8_t key[32], blk[64];
		size_t n = 0;

		memcpy(key, ck, 16);
		memcpy(key + 16, ik, 16);
		tw_hmac_sha256_init(&k, key, sizeof(key));
		blk[n++] = TW_FC_CK_IK_PRIME;
		memcpy(blk + n, net_name, net_name_len);
		n += net_name_len;
		tw_store_be16(blk + n, (uint16_t)net_name_len);
		n += 2;
		memcpy(blk + n, sqn_xor_ak, 6);
		n += 6;
		tw_store_be16(blk + n, 6);
		n += 2;
		(void)tw_sha256_pad_after_key(blk, n, sizeof(blk));
		tw_hmac_sha256_padded(&k, blk, 1, out);
		tw_hmac_sha256_wipe(&k);
		tw_wipe(key, sizeof(key));
	} else {
		err = kdf_ck_ik(out, ck, ik, TW_FC_CK_IK_PRIME, p, 2);
		if (err != TW_OK)
			goto out;
	}
	memcpy(ck_prime, out, 16);
	memcpy(ik_prime, out + 16, 16);
out:
	if (err != TW_OK) {
		memset(ck_prime, 0, 16);
		memset(ik_prime, 0, 16);
	}
	tw_wipe(out, sizeof(out));
	return err;
}

int tw_kdf_kausf(uint8_t kausf[static 32], const uint8_t ck[static 16],
		 const uint8_t ik[static 16], const uint8_t *snn, size_t snn_len,
		 const uint8_t sqn_xor_ak[static 6])
{
	int err = check_name(snn, snn_len);

	if (err != TW_OK) {
		memset(kausf, 0, TW_KAUSF_LEN);
		return err;
	}
	/* TS 33.501 A.2: FC = 0x6A, P0 = SN name, P1 = SQN ^ AK, key CK || IK */
	const struct tw_kdf_param p[2] = {
		{ snn, snn_len },
		{ sqn_xor_ak, 6 },
	};
	return kdf_ck_ik(kausf, ck, ik, TW_FC_KAUSF, p, 2);
}

int tw_kdf_res_star(uint8_t res_star[static 16], const uint8_t ck[static 16],
		    const uint8_t ik[static 16], const uint8_t *snn,
		    size_t snn_len, const uint8_t rand_[static 16],
		    const uint8_t *res, size_t res_len)
{
	uint8_t out[32];
	int err = check_name(snn, snn_len);

	if (err != TW_OK)
		goto out;
	if (res_len < TW_RES_MIN_LEN || res_len > TW_RES_MAX_LEN) {
		err = TW_ERR_LENGTH;
		goto out;
	}
	if (res == NULL) {
		err = TW_ERR_INVAL;
		goto out;
	}
	/* TS 33.501 A.4: FC = 0x6B, P0 = SN name, P1 = RAND, P2 = RES;
	 * (X)RES* = the 128 least significant bits of the KDF output. */
	const struct tw_kdf_param p[3] = {
		{ snn, snn_len },
		{ rand_, 16 },
		{ res, res_len },
	};
	err = kdf_ck_ik(out, ck, ik, TW_FC_RES_STAR, p, 3);
	if (err == TW_OK)
		memcpy(res_star, out + 16, 16);
out:
	if (err != TW_OK)
		memset(res_star, 0, TW_RES_STAR_LEN);
	tw_wipe(out, sizeof(out));
	return err;
}

void tw_kdf_hres_star(uint8_t hres_star[static 16], const uint8_t rand_[static 16],
		      const uint8_t res_star[static 16])
{
	struct tw_sha256_ctx ctx;
	uint8_t h[32];

	/* TS 33.501 A.5: S = RAND || RES*; HRES* = 128 LSB of SHA-256(S) */
	tw_sha256_init(&ctx);
	tw_sha256_update(&ctx, rand_, 16);
	tw_sha256_update(&ctx, res_star, 16);
	tw_sha256_final(&ctx, h);
	memcpy(hres_star, h + 16, 16);
	tw_wipe(h, sizeof(h));
}

int tw_kdf_kseaf(uint8_t kseaf[static 32], const uint8_t kausf[static 32],
		 const uint8_t *snn, size_t snn_len)
{
	int err = check_name(snn, snn_len);

	if (err != TW_OK) {
		memset(kseaf, 0, TW_KSEAF_LEN);
		return err;
	}
	/* TS 33.501 A.6: FC = 0x6C, P0 = SN name, key KAUSF */
	const struct tw_kdf_param p[1] = { { snn, snn_len } };
	return tw_kdf_3gpp(kseaf, kausf, TW_KAUSF_LEN, TW_FC_KSEAF, p, 1);
}

int tw_kdf_kamf(uint8_t kamf[static 32], const uint8_t kseaf[static 32],
		const uint8_t *supi, size_t supi_len, const uint8_t *abba,
		size_t abba_len)
{
	int err = check_name(supi, supi_len);

	if (err == TW_OK && (abba_len < TW_ABBA_MIN_LEN || abba_len > TW_KDF_PARAM_MAX))
		err = TW_ERR_LENGTH;
	if (err == TW_OK && abba == NULL)
		err = TW_ERR_INVAL;
	if (err != TW_OK) {
		memset(kamf, 0, TW_KAMF_LEN);
		return err;
	}
	/* TS 33.501 A.7.1: FC = 0x6D, P0 = SUPI, P1 = ABBA, key KSEAF */
	const struct tw_kdf_param p[2] = {
		{ supi, supi_len },
		{ abba, abba_len },
	};
	return tw_kdf_3gpp(kamf, kseaf, TW_KSEAF_LEN, TW_FC_KAMF, p, 2);
}

int tw_kdf_kamf_imsi(uint8_t kamf[static 32], const uint8_t kseaf[static 32],
		     const char *imsi, size_t imsi_len, const uint8_t *abba,
		     size_t abba_len)
{
	/* TS 23.003 §2.2: IMSI = MCC (3) | MNC (2-3) | MSIN, at most 15 digits */
	if (imsi == NULL || imsi_len < 6 || imsi_len > 15) {
		memset(kamf, 0, TW_KAMF_LEN);
		return imsi == NULL ? TW_ERR_INVAL : TW_ERR_LENGTH;
	}
	for (size_t i = 0; i < imsi_len; i++) {
		if (imsi[i] < '0' || imsi[i] > '9') {
			memset(kamf, 0, TW_KAMF_LEN);
			return TW_ERR_DECODE;
		}
	}
	/* A.7.0: for an IMSI the SUPI in P0 is its digits as a character
	 * string (one octet per digit), not the BCD encoding. */
	return tw_kdf_kamf(kamf, kseaf, (const uint8_t *)imsi, imsi_len, abba,
			   abba_len);
}

int tw_x963_kdf_sha256(uint8_t *out, size_t out_len, const uint8_t *z,
		       size_t z_len, const uint8_t *shared_info, size_t info_len)
{
	struct tw_sha256_ctx base, ctx;
	uint8_t blk[32];
	int err = TW_OK;

	if (out == NULL || (z == NULL && z_len != 0) ||
	    (shared_info == NULL && info_len != 0))
		return TW_ERR_INVAL;
	/* SEC 1 §3.6.1 step 1: keydatalen < hashlen * (2^32 - 1) */
	if (out_len == 0 || (uint64_t)out_len / 32 >= 0xffffffffull)
		return TW_ERR_LENGTH;

	/* Z is the same prefix of every block: hash it once, fork per block. */
	tw_sha256_init(&base);
	tw_sha256_update(&base, z, z_len);
	for (uint32_t counter = 1; out_len != 0; counter++) {
		uint8_t c[4];
		size_t take = out_len < 32 ? out_len : 32;

		/* §3.6.1 step 4: Ki = Hash(Z || Counter || SharedInfo) */
		tw_store_be32(c, counter);
		ctx = base;
		tw_sha256_update(&ctx, c, 4);
		tw_sha256_update(&ctx, shared_info, info_len);
		tw_sha256_final(&ctx, blk);
		memcpy(out, blk, take);
		out += take;
		out_len -= take;
	}
	tw_wipe(&base, sizeof(base));
	tw_wipe(&ctx, sizeof(ctx));
	tw_wipe(blk, sizeof(blk));
	return err;
}
