/*
 * twag — EAP method key derivation: EAP-AKA' PRF' and keys (RFC 9048,
 * which obsoletes RFC 5448 and keeps its §3.3/§3.4 derivations), EAP-AKA
 * (RFC 4187) and EAP-SIM (RFC 4186) master keys, and the FIPS 186-2 change
 * notice 1 PRF of RFC 4186 Appendix B.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../crypto/sha_internal.h"
#include "twag/bytes.h"
#include "twag/hmac.h"
#include "twag/kdf.h"
#include "twag/sha.h"

static int check_pieces(const struct tw_kdf_param *s, size_t n)
{
	if (s == NULL && n != 0)
		return TW_ERR_INVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i].p == NULL && s[i].len != 0)
			return TW_ERR_INVAL;
	return TW_OK;
}

/*
 * RFC 9048 §3.4: PRF'(K, S) = T1 | T2 | T3 | T4 | ...
 *   T1 = HMAC-SHA-256(K, S | 0x01), Tn = HMAC-SHA-256(K, Tn-1 | S | n).
 * One keyed context serves every Tn: each costs the S blocks plus one
 * outer block, never a re-keying.
 */
static void prf_prime_keyed(uint8_t *out, size_t out_len,
			    struct tw_hmac_sha256_ctx *k,
			    const struct tw_kdf_param *s, size_t n_s)
{
	uint8_t t[32];
	size_t t_len = 0;

	for (unsigned n = 1; out_len != 0; n++) {
		uint8_t octet = (uint8_t)n;
		size_t take = out_len < 32 ? out_len : 32;

		tw_hmac_sha256_update(k, t, t_len);
		for (size_t i = 0; i < n_s; i++)
			tw_hmac_sha256_update(k, s[i].p, s[i].len);
		tw_hmac_sha256_update(k, &octet, 1);
		tw_hmac_sha256_final(k, t);
		t_len = 32;
		memcpy(out, t, take);
		out += take;
		out_len -= take;
	}
	tw_wipe(t, sizeof(t));
}

int tw_prf_prime(uint8_t *out, size_t out_len, const uint8_t *key,
		 size_t key_len, const struct tw_kdf_param *s, size_t n_s)
{
	struct tw_hmac_sha256_ctx k;
	int err;

	if (out == NULL || (key == NULL && key_len != 0))
		return TW_ERR_INVAL;
	/* §3.4: the block counter n is a single octet */
	if (out_len == 0 || out_len > TW_PRF_PRIME_MAX_LEN)
		return TW_ERR_LENGTH;
	err = check_pieces(s, n_s);
	if (err != TW_OK)
		return err;
	tw_hmac_sha256_init(&k, key, key_len);
	prf_prime_keyed(out, out_len, &k, s, n_s);
	tw_hmac_sha256_wipe(&k);
	return TW_OK;
}

/*
 * RFC 9048 §3.4 PRF' for the key expansion of §3.3, on pre-padded
 * messages: S = "EAP-AKA'" | Identity is laid out once, with its SHA-256
 * padding, for T1 (S | 0x01) and for every later Tn (Tn-1 | S | n); each
 * block then only rewrites Tn-1 and n, so a Tn costs its compressions and
 * nothing else. Returns false when Identity is too long for the buffers
 * (the caller then takes the generic tw_prf_prime()).
 */
enum { PRF_BUF = 5 * 64 }; /* Tn-1 | S | n | padding, Identity <= 270 */

/* Lays out m1 = S | 0x01 and mn = (Tn-1) | S | n, S = "EAP-AKA'" |
 * Identity, each padded after the key; false when they do not fit. */
static bool prf_prime_layout(uint8_t m1[PRF_BUF], uint8_t mn[PRF_BUF], size_t *n1,
			     size_t *nn, size_t *s_len, const uint8_t *identity,
			     size_t identity_len)
{
	static const uint8_t label[8] = "EAP-AKA'";

	*s_len = sizeof(label) + identity_len;
	if (32 + *s_len + 1 + 9 > PRF_BUF)
		return false;
	memcpy(m1, label, sizeof(label));
	if (identity_len != 0) /* identity may be NULL when empty */
		memcpy(m1 + sizeof(label), identity, identity_len);
	m1[*s_len] = 1;
	*n1 = tw_sha256_pad_after_key(m1, *s_len + 1, PRF_BUF);
	memcpy(mn + 32, m1, *s_len);
	*nn = tw_sha256_pad_after_key(mn, 32 + *s_len + 1, PRF_BUF);
	return *n1 != 0 && *nn != 0;
}

static bool prf_prime_mk(uint8_t mk[7 * 32], const struct tw_hmac_sha256_ctx *k,
			 const uint8_t *identity, size_t identity_len)
{
	uint8_t m1[PRF_BUF], mn[PRF_BUF];
	size_t n1, nn, s_len;

	if (!prf_prime_layout(m1, mn, &n1, &nn, &s_len, identity, identity_len))
		return false;
	/* T1 = HMAC(K, S | 0x01); Tn = HMAC(K, Tn-1 | S | n) */
	tw_hmac_sha256_padded(k, m1, n1, mk);
	for (unsigned n = 2; n <= 7; n++) {
		memcpy(mn, mk + 32 * (n - 2), 32);
		mn[32 + s_len] = (uint8_t)n;
		tw_hmac_sha256_padded(k, mn, nn, mk + 32 * (n - 1));
	}
	tw_wipe(mn, 32);
	return true;
}

/* K_encr = MK[0..127]; K_aut = MK[128..383]; K_re = MK[384..639];
 * MSK = MK[640..1151]; EMSK = MK[1152..1663] (RFC 9048 §3.3) */
static void aka_prime_split(struct tw_eap_aka_prime_keys *keys, const uint8_t mk[208])
{
	memcpy(keys->k_encr, mk, 16);
	memcpy(keys->k_aut, mk + 16, 32);
	memcpy(keys->k_re, mk + 48, 32);
	memcpy(keys->msk, mk + 80, 64);
	memcpy(keys->emsk, mk + 144, 64);
}

int tw_eap_aka_prime_derive(struct tw_eap_aka_prime_keys *keys,
			    const uint8_t ik_prime[static 16],
			    const uint8_t ck_prime[static 16],
			    const uint8_t *identity, size_t identity_len)
{
	static const uint8_t label[8] = "EAP-AKA'";
	struct tw_hmac_sha256_ctx k;
	uint8_t key[32], mk[7 * 32]; /* 208 octets used: T7 is cut */
	int err = TW_OK;

	if (identity == NULL && identity_len != 0) {
		err = TW_ERR_INVAL;
		goto out;
	}
	/* RFC 9048 §3.3: MK = PRF'(IK'|CK', "EAP-AKA'"|Identity) -- the key
	 * is IK' first. */
	memcpy(key, ik_prime, 16);
	memcpy(key + 16, ck_prime, 16);
	tw_hmac_sha256_init(&k, key, sizeof(key));
	if (!prf_prime_mk(mk, &k, identity, identity_len)) {
		const struct tw_kdf_param s[2] = {
			{ label, sizeof(label) },
			{ identity, identity_len },
		};
		err = tw_prf_prime(mk, 208, key, sizeof(key), s, 2);
		if (err != TW_OK)
			goto out;
	}
	aka_prime_split(keys, mk);
out:
	if (err != TW_OK)
		tw_wipe(keys, sizeof(*keys));
	tw_hmac_sha256_wipe(&k);
	tw_wipe(key, sizeof(key));
	tw_wipe(mk, sizeof(mk));
	return err;
}

/* One job the scalar way (the lanes' fallback and reference). */
static void aka_prime_one(struct tw_eap_aka_prime_job *j, const uint8_t *net_name,
			  size_t net_name_len)
{
	uint8_t ck_p[16], ik_p[16];

	j->rc = TW_ERR_INVAL;
	if (j->ck != NULL && j->ik != NULL && j->sqn_xor_ak != NULL)
		j->rc = tw_kdf_ck_ik_prime(ck_p, ik_p, j->ck, j->ik, net_name,
					   net_name_len, j->sqn_xor_ak);
	if (j->rc == TW_OK)
		j->rc = tw_eap_aka_prime_derive(&j->keys, ik_p, ck_p, j->identity,
						j->identity_len);
	if (j->rc == TW_OK)
		tw_hmac_sha256_init(&j->k_aut, j->keys.k_aut, 32);
	else
	{
		tw_wipe(&j->keys, sizeof(j->keys));
		tw_wipe(&j->k_aut, sizeof(j->k_aut));
	}
	tw_wipe(ck_p, sizeof(ck_p));
	tw_wipe(ik_p, sizeof(ik_p));
}

/* The lanes' scratch: every message of one group of sixteen jobs. */
struct aka_prime_lanes {
	struct tw_hmac_sha256_x16 k;
	uint8_t key[TW_SHA256_X16][32];
	uint8_t s[TW_SHA256_X16][64];        /* the CK'/IK' S, padded */
	uint8_t ck_ik[TW_SHA256_X16][32];    /* CK' | IK' */
	uint8_t m1[TW_SHA256_X16][PRF_BUF];
	uint8_t mn[TW_SHA256_X16][PRF_BUF];
	uint8_t mk[TW_SHA256_X16][7 * 32];
	size_t n1[TW_SHA256_X16], nn[TW_SHA256_X16], s_len[TW_SHA256_X16];
};

/*
 * Up to sixteen jobs whose inputs passed the checks, in lanes 0..n-1: the
 * same steps as aka_prime_one() with every HMAC of the chain run for all
 * lanes at once. The S of CK'/IK' fits one block (checked by the caller).
 */
static void aka_prime_lanes(struct aka_prime_lanes *l, struct tw_eap_aka_prime_job *const *jobs,
			    unsigned n, const uint8_t *net_name, size_t net_name_len)
{
	const uint8_t *key[TW_SHA256_X16], *msg[TW_SHA256_X16];
	uint8_t *out[TW_SHA256_X16];
	size_t one[TW_SHA256_X16];
	uint16_t live = (uint16_t)((1u << n) - 1);

	for (unsigned j = 0; j < TW_SHA256_X16; j++) {
		key[j] = l->key[j];
		msg[j] = l->s[j];
		out[j] = l->ck_ik[j];
		one[j] = 1;
	}
	/* TS 33.402 A.2: CK' | IK' = HMAC-SHA-256(CK | IK, 0x20 | P0 | L0 |
	 * SQN ^ AK | 0x00 0x06), as tw_kdf_ck_ik_prime() */
	for (unsigned j = 0; j < n; j++) {
		uint8_t *b = l->s[j];
		size_t m = 0;

		memcpy(l->key[j], jobs[j]->ck, 16);
		memcpy(l->key[j] + 16, jobs[j]->ik, 16);
		b[m++] = TW_FC_CK_IK_PRIME;
		memcpy(b + m, net_name, net_name_len);
		m += net_name_len;
		tw_store_be16(b + m, (uint16_t)net_name_len);
		m += 2;
		memcpy(b + m, jobs[j]->sqn_xor_ak, 6);
		m += 6;
		tw_store_be16(b + m, 6);
		m += 2;
		(void)tw_sha256_pad_after_key(b, m, 64);
	}
	tw_hmac_sha256_x16_init(&l->k, key, 32, live);
	tw_hmac_sha256_x16_padded(&l->k, msg, one, out, live);

	/* RFC 9048 §3.3: MK = PRF'(IK' | CK', "EAP-AKA'" | Identity) */
	for (unsigned j = 0; j < n; j++) {
		memcpy(l->key[j], l->ck_ik[j] + 16, 16);
		memcpy(l->key[j] + 16, l->ck_ik[j], 16);
		(void)prf_prime_layout(l->m1[j], l->mn[j], &l->n1[j], &l->nn[j], &l->s_len[j],
				       jobs[j]->identity, jobs[j]->identity_len);
	}
	tw_hmac_sha256_x16_init(&l->k, key, 32, live);
	for (unsigned j = 0; j < TW_SHA256_X16; j++) {
		msg[j] = l->m1[j];
		out[j] = l->mk[j];
	}
	tw_hmac_sha256_x16_padded(&l->k, msg, l->n1, out, live);
	for (unsigned t = 2; t <= 7; t++) {
		for (unsigned j = 0; j < n; j++) {
			memcpy(l->mn[j], l->mk[j] + 32 * (t - 2), 32);
			l->mn[j][32 + l->s_len[j]] = (uint8_t)t;
			msg[j] = l->mn[j];
			out[j] = l->mk[j] + 32 * (t - 1);
		}
		tw_hmac_sha256_x16_padded(&l->k, msg, l->nn, out, live);
	}
	for (unsigned j = 0; j < n; j++) {
		aka_prime_split(&jobs[j]->keys, l->mk[j]);
		key[j] = jobs[j]->keys.k_aut;
	}
	/* the AT_MAC key (RFC 9048 §3.4.1), keyed in the same lanes */
	tw_hmac_sha256_x16_init(&l->k, key, 32, live);
	for (unsigned j = 0; j < n; j++) {
		tw_hmac_sha256_x16_ctx(&l->k, j, &jobs[j]->k_aut);
		jobs[j]->rc = TW_OK;
	}
}

/* A group of jobs that passed the checks: in lanes when there are enough
 * of them, else one by one. True when the lanes ran. */
static bool aka_prime_group(struct aka_prime_lanes *l, struct tw_eap_aka_prime_job *const *jobs,
			    unsigned n, const uint8_t *net_name, size_t net_name_len)
{
	if (tw_sha256_x16_worth(n)) {
		aka_prime_lanes(l, jobs, n, net_name, net_name_len);
		return true;
	}
	for (unsigned k = 0; k < n; k++)
		aka_prime_one(jobs[k], net_name, net_name_len);
	return false;
}

void tw_eap_aka_prime_derive_many(struct tw_eap_aka_prime_job *jobs, size_t n,
				  const uint8_t *net_name, size_t net_name_len)
{
	struct tw_eap_aka_prime_job *lane[TW_SHA256_X16];
	struct aka_prime_lanes l;
	unsigned used = 0;
	bool lanes_used = false;
	/* the lanes take the usual shapes; anything else goes the scalar way
	 * (which also reports the errors) */
	bool lanes_ok = tw_sha256_x16_worth(n) && net_name != NULL && net_name_len != 0 &&
			11 + net_name_len + 9 <= 64;

	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		struct tw_eap_aka_prime_job *j = &jobs[i];

		if (!lanes_ok || j->ck == NULL || j->ik == NULL || j->sqn_xor_ak == NULL ||
		    (j->identity == NULL && j->identity_len != 0) ||
		    32 + 8 + j->identity_len + 1 + 9 > PRF_BUF) {
			aka_prime_one(j, net_name, net_name_len);
			continue;
		}
		lane[used++] = j;
		if (used == TW_SHA256_X16) {
			lanes_used |= aka_prime_group(&l, lane, used, net_name, net_name_len);
			used = 0;
		}
	}
	if (used > 0)
		lanes_used |= aka_prime_group(&l, lane, used, net_name, net_name_len);
	if (lanes_used) {
		/* the secrets; m1 and the rest of mn hold only S (public) */
		tw_wipe(&l.k, sizeof(l.k));
		tw_wipe(l.key, sizeof(l.key));
		tw_wipe(l.ck_ik, sizeof(l.ck_ik));
		tw_wipe(l.mk, sizeof(l.mk));
		for (unsigned j = 0; j < TW_SHA256_X16; j++)
			tw_wipe(l.mn[j], 32);
	}
}

int tw_eap_aka_prime_reauth(uint8_t msk[static 64], uint8_t emsk[static 64],
			    const uint8_t k_re[static 32],
			    const uint8_t *identity, size_t identity_len,
			    uint16_t counter, const uint8_t nonce_s[static 16])
{
	static const uint8_t label[16] = "EAP-AKA' re-auth";
	uint8_t mk[128], c[2];
	int err = TW_OK;

	if (identity == NULL && identity_len != 0) {
		err = TW_ERR_INVAL;
		goto out;
	}
	/* RFC 9048 §3.3: MK = PRF'(K_re, "EAP-AKA' re-auth" | Identity |
	 * counter | NONCE_S); MSK = MK[0..511], EMSK = MK[512..1023] */
	tw_store_be16(c, counter);
	const struct tw_kdf_param s[4] = {
		{ label, sizeof(label) },
		{ identity, identity_len },
		{ c, 2 },
		{ nonce_s, 16 },
	};
	err = tw_prf_prime(mk, sizeof(mk), k_re, 32, s, 4);
	if (err != TW_OK)
		goto out;
	memcpy(msk, mk, 64);
	memcpy(emsk, mk + 64, 64);
out:
	if (err != TW_OK) {
		tw_wipe(msk, 64);
		tw_wipe(emsk, 64);
	}
	tw_wipe(mk, sizeof(mk));
	return err;
}

void tw_fips186_2_prf(uint8_t *out, size_t out_len, const uint8_t xkey_in[static 20])
{
	uint8_t blk[64], w[20];
	uint32_t xkey[5], h[5]; /* 160-bit numbers, most significant word first */

	for (int i = 0; i < 5; i++)
		xkey[i] = tw_load_be32(xkey_in + 4 * i);
	memset(blk, 0, sizeof(blk));
	while (out_len != 0) {
		size_t take = out_len < 20 ? out_len : 20;
		uint64_t carry = 1;

		/* RFC 4186 App. B: XSEED_j = 0, so XVAL = XKEY; w_i = G(t, XVAL),
		 * the SHA-1 compression of XVAL zero-padded to 512 bits (no
		 * SHA-1 length padding), t = the SHA-1 initial value. */
		for (int i = 0; i < 5; i++)
			tw_store_be32(blk + 4 * i, xkey[i]);
		memcpy(h, tw_sha1_iv, sizeof(h));
		tw_sha1_blocks(h, blk, 1);
		/* XKEY = (1 + XKEY + w_i) mod 2^160, word by word from the
		 * least significant */
		for (int i = 4; i >= 0; i--) {
			carry += (uint64_t)xkey[i] + h[i];
			xkey[i] = (uint32_t)carry;
			carry >>= 32;
		}
		/* x_j = w_0 | w_1: consecutive w_i are the output stream */
		for (int i = 0; i < 5; i++)
			tw_store_be32(w + 4 * i, h[i]);
		memcpy(out, w, take);
		out += take;
		out_len -= take;
	}
	tw_wipe(xkey, sizeof(xkey));
	tw_wipe(blk, sizeof(blk));
	tw_wipe(w, sizeof(w));
	tw_wipe(h, sizeof(h));
}

/* RFC 4186 §7 / RFC 4187 §7: K_encr | K_aut | MSK | EMSK = PRF(MK) */
static void split_sim_keys(struct tw_eap_sim_keys *keys)
{
	uint8_t x[160];

	tw_fips186_2_prf(x, sizeof(x), keys->mk);
	memcpy(keys->k_encr, x, 16);
	memcpy(keys->k_aut, x + 16, 16);
	memcpy(keys->msk, x + 32, 64);
	memcpy(keys->emsk, x + 96, 64);
	tw_wipe(x, sizeof(x));
}

int tw_eap_aka_derive(struct tw_eap_sim_keys *keys, const uint8_t *identity,
		      size_t identity_len, const uint8_t ik[static 16],
		      const uint8_t ck[static 16])
{
	struct tw_sha1_ctx h;

	if (identity == NULL && identity_len != 0) {
		tw_wipe(keys, sizeof(*keys));
		return TW_ERR_INVAL;
	}
	/* RFC 4187 §7: MK = SHA1(Identity|IK|CK) */
	tw_sha1_init(&h);
	tw_sha1_update(&h, identity, identity_len);
	tw_sha1_update(&h, ik, 16);
	tw_sha1_update(&h, ck, 16);
	tw_sha1_final(&h, keys->mk);
	split_sim_keys(keys);
	return TW_OK;
}

int tw_eap_sim_derive(struct tw_eap_sim_keys *keys, const uint8_t *identity,
		      size_t identity_len, const uint8_t (*kc)[8], size_t n_kc,
		      const uint8_t nonce_mt[static 16],
		      const uint8_t *version_list, size_t version_list_len,
		      uint16_t selected_version)
{
	struct tw_sha1_ctx h;
	uint8_t sv[2];

	/* RFC 4186 §9.3: two or three RANDs, hence Kcs; §10.2: the version
	 * list holds 2-octet versions, at least one. */
	if (n_kc < 2 || n_kc > 3 || version_list_len < 2 ||
	    (version_list_len & 1) != 0) {
		tw_wipe(keys, sizeof(*keys));
		return TW_ERR_LENGTH;
	}
	if (kc == NULL || version_list == NULL ||
	    (identity == NULL && identity_len != 0)) {
		tw_wipe(keys, sizeof(*keys));
		return TW_ERR_INVAL;
	}
	/* RFC 4186 §7: MK = SHA1(Identity|n*Kc| NONCE_MT| Version List|
	 * Selected Version) */
	tw_store_be16(sv, selected_version);
	tw_sha1_init(&h);
	tw_sha1_update(&h, identity, identity_len);
	for (size_t i = 0; i < n_kc; i++)
		tw_sha1_update(&h, kc[i], 8);
	tw_sha1_update(&h, nonce_mt, 16);
	tw_sha1_update(&h, version_list, version_list_len);
	tw_sha1_update(&h, sv, 2);
	tw_sha1_final(&h, keys->mk);
	split_sim_keys(keys);
	return TW_OK;
}

int tw_eap_sim_reauth(uint8_t msk[static 64], uint8_t emsk[static 64],
		      const uint8_t mk[static 20], const uint8_t *identity,
		      size_t identity_len, uint16_t counter,
		      const uint8_t nonce_s[static 16])
{
	struct tw_sha1_ctx h;
	uint8_t xkey[20], x[128], c[2];

	if (identity == NULL && identity_len != 0) {
		tw_wipe(msk, 64);
		tw_wipe(emsk, 64);
		return TW_ERR_INVAL;
	}
	/* RFC 4186 §7 / RFC 4187 §7: XKEY' = SHA1(Identity|counter|NONCE_S|MK);
	 * MSK and EMSK are the first 128 octets of PRF(XKEY'). */
	tw_store_be16(c, counter);
	tw_sha1_init(&h);
	tw_sha1_update(&h, identity, identity_len);
	tw_sha1_update(&h, c, 2);
	tw_sha1_update(&h, nonce_s, 16);
	tw_sha1_update(&h, mk, 20);
	tw_sha1_final(&h, xkey);
	tw_fips186_2_prf(x, sizeof(x), xkey);
	memcpy(msk, x, 64);
	memcpy(emsk, x + 64, 64);
	tw_wipe(xkey, sizeof(xkey));
	tw_wipe(x, sizeof(x));
	return TW_OK;
}
