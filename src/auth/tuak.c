/*
 * twag — TUAK: TOPc, f1, f1*, f2345, f5*.
 *
 * Spec: 3GPP TS 35.231 V17.0.0 (Release 17) §5 and §6; the permutation Π is
 * Keccak-f[1600] (Annex C, see src/crypto/keccak.c).
 *
 * Bit order, the part that is easy to get wrong (§4.2.2, §6): 3GPP numbers
 * the bits of a value from 0 = most significant, while IN and OUT are
 * Keccak bit strings whose bit i lives in bit (i mod 8) of state octet i/8
 * (the Keccak "little-endian" convention). The spec fills IN with every
 * field reversed, e.g. IN[0] .. IN[255] = TOP[255] .. TOP[0], so the last
 * (least significant) bit of TOP becomes IN[0]. Worked through for octets:
 * state octet j receives TOP octet 31 - j *unchanged* (its LSB, TOP[8(31-j)+7],
 * is IN[8j]). So each input field is copied into the state octet-reversed,
 * and each output field is read back octet-reversed; no bit swapping is
 * needed anywhere. The same holds for the INSTANCE octet: IN[256..263] =
 * INSTANCE[7] .. INSTANCE[0] means the octet value is INSTANCE[0] * 128 + ...
 * + INSTANCE[7] * 1.
 *
 * State layout (octet offsets), common to all functions:
 *   0..31    TOP or TOPc            (reversed)
 *   32       INSTANCE
 *   33..39   ALGONAME "TUAK1.0"     (reversed)
 *   40..55   RAND                   (reversed; zero for TOPc)
 *   56..57   AMF                    (reversed; f1/f1* only, else zero)
 *   58..63   SQN                    (reversed; f1/f1* only, else zero)
 *   64..95   K                      (reversed; a 128-bit K fills 64..79)
 *   96       0x1f   IN[768..772] = 1 (padding and domain bits, §6.1)
 *   135      0x80   IN[1087] = 1
 * Outputs: MAC-A/MAC-S/RES from octet 0, CK from 32, IK from 64, AK from 96
 * (OUT[0..], OUT[256..], OUT[512..], OUT[768..815]), each reversed.
 */
#include "twag/tuak.h"

#include <string.h>

#include "twag/bytes.h"
#include "twag/keccak.h"

/* §5.3: ALGONAME is the 56-bit ASCII string "TUAK1.0". */
static const uint8_t tuak_algoname[7] = { 'T', 'U', 'A', 'K', '1', '.', '0' };

enum {
	OFF_TOP = 0, OFF_INSTANCE = 32, OFF_ALGONAME = 33, OFF_RAND = 40,
	OFF_AMF = 56, OFF_SQN = 58, OFF_K = 64, OFF_PAD_LO = 96, OFF_PAD_HI = 135,
	OFF_CK = 32, OFF_IK = 64, OFF_AK = 96,
};

/* INSTANCE bits as octet values: INSTANCE[i] has weight 2^(7-i). */
enum {
	INST_F1STAR = 0x80,   /* INSTANCE[0] = 1: f1* (§6.3) and f5* (§6.5) */
	INST_F2345 = 0x40,    /* INSTANCE[1] = 1: f2345 (§6.4) and f5* */
	INST_K256 = 0x01,     /* INSTANCE[7] = 1: K is 256 bits */
};

static void put_reversed(uint8_t *dst, const uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = src[len - 1 - i];
}

static bool k_len_ok(size_t k_len)
{
	return k_len == 16 || k_len == 32;
}

/* §6.2 INSTANCE[2..4] for the MAC length: 0,0,1 / 0,1,0 / 1,0,0. */
static int mac_bits_code(unsigned bits, uint8_t *code)
{
	switch (bits) {
	case 64: *code = 0x08; return TW_OK;
	case 128: *code = 0x10; return TW_OK;
	case 256: *code = 0x20; return TW_OK;
	default: return TW_ERR_LENGTH;
	}
}

/* §6.4 INSTANCE[2..4] for the RES length: 0,0,0 / 0,0,1 / 0,1,0 / 1,0,0. */
static int res_bits_code(unsigned bits, uint8_t *code)
{
	switch (bits) {
	case 32: *code = 0x00; return TW_OK;
	case 64: *code = 0x08; return TW_OK;
	case 128: *code = 0x10; return TW_OK;
	case 256: *code = 0x20; return TW_OK;
	default: return TW_ERR_LENGTH;
	}
}

/* §6.4 INSTANCE[5] (CK) and INSTANCE[6] (IK): 0 = 128 bits, 1 = 256 bits. */
static int key_bits_code(unsigned bits, uint8_t one, uint8_t *code)
{
	switch (bits) {
	case 128: *code = 0; return TW_OK;
	case 256: *code = one; return TW_OK;
	default: return TW_ERR_LENGTH;
	}
}

int tw_tuak_params_check(const struct tw_tuak_params *p)
{
	uint8_t code;
	int err;

	if (p == NULL)
		return TW_ERR_INVAL;
	if (!k_len_ok(p->k_len))
		return TW_ERR_LENGTH;
	if ((err = mac_bits_code(p->mac_bits, &code)) != TW_OK ||
	    (err = res_bits_code(p->res_bits, &code)) != TW_OK ||
	    (err = key_bits_code(p->ck_bits, 1, &code)) != TW_OK ||
	    (err = key_bits_code(p->ik_bits, 1, &code)) != TW_OK)
		return err;
	if (p->iterations == 0)
		return TW_ERR_RANGE;
	return TW_OK;
}

/*
 * Builds IN (§6.1-§6.5, layout in the file header) in st, applies Π
 * `iterations` times, and leaves OUT in out[200]. rand_/sqn/amf may be NULL
 * (their bits are zero). The caller wipes out.
 */
static void tuak_core(uint8_t out[static TW_KECCAK_STATE_LEN],
		      const uint8_t top[static 32], uint8_t instance,
		      const uint8_t *rand_, const uint8_t *amf, const uint8_t *sqn,
		      const uint8_t *k, size_t k_len, unsigned iterations)
{
	uint64_t st[TW_KECCAK_LANES];

	memset(out, 0, TW_KECCAK_STATE_LEN);
	put_reversed(out + OFF_TOP, top, 32);
	out[OFF_INSTANCE] = instance;
	put_reversed(out + OFF_ALGONAME, tuak_algoname, sizeof(tuak_algoname));
	if (rand_ != NULL)
		put_reversed(out + OFF_RAND, rand_, 16);
	if (amf != NULL)
		put_reversed(out + OFF_AMF, amf, 2);
	if (sqn != NULL)
		put_reversed(out + OFF_SQN, sqn, 6);
	put_reversed(out + OFF_K, k, k_len);
	/* IN[768..772] = 1, IN[1087] = 1 (sponge padding with domain bits). */
	out[OFF_PAD_LO] = 0x1f;
	out[OFF_PAD_HI] = 0x80;

	for (unsigned i = 0; i < TW_KECCAK_LANES; i++)
		st[i] = tw_load_le64(out + 8 * i);
	/* §5.2: Π is applied `iterations` times (TS 35.233 set 6 uses 2). */
	for (unsigned it = 0; it < iterations; it++)
		tw_keccak_f1600(st);
	for (unsigned i = 0; i < TW_KECCAK_LANES; i++)
		tw_store_le64(out + 8 * i, st[i]);

	tw_wipe(st, sizeof(st));
}

int tw_tuak_topc(uint8_t topc[static 32], const uint8_t top[static 32],
		 const uint8_t *k, size_t k_len, unsigned iterations)
{
	uint8_t out[TW_KECCAK_STATE_LEN];
	int err;

	if (k == NULL)
		return TW_ERR_INVAL;
	if (!k_len_ok(k_len))
		return TW_ERR_LENGTH;
	if (iterations == 0 || iterations > UINT16_MAX)
		return TW_ERR_RANGE;

	/* §6.1: INSTANCE = 0,0,0,0,0,0,0,(K is 256 bits); RAND/AMF/SQN bits 0;
	 * TOPc[0..255] = OUT[255..0]. */
	tuak_core(out, top, k_len == 32 ? INST_K256 : 0, NULL, NULL, NULL, k,
		  k_len, iterations);
	put_reversed(topc, out, 32);
	err = TW_OK;

	tw_wipe(out, sizeof(out));
	return err;
}

/* §6.2 (f1) and §6.3 (f1*): identical but for INSTANCE[0]. */
static int tuak_f1_common(const struct tw_tuak_params *p, uint8_t first_bit,
			  const uint8_t rand_[static 16], const uint8_t sqn[static 6],
			  const uint8_t amf[static 2], uint8_t *mac)
{
	uint8_t out[TW_KECCAK_STATE_LEN];
	uint8_t code = 0;
	int err;

	if ((err = tw_tuak_params_check(p)) != TW_OK)
		return err;
	if (mac == NULL)
		return TW_ERR_INVAL;
	(void)mac_bits_code(p->mac_bits, &code); /* checked above */

	/* INSTANCE = first_bit,0, MAC length code, 0,0, K length. */
	tuak_core(out, p->topc,
		  (uint8_t)(first_bit | code | (p->k_len == 32 ? INST_K256 : 0)),
		  rand_, amf, sqn, p->k, p->k_len, p->iterations);
	/* MAC[0 .. n-1] = OUT[n-1 .. 0]. */
	put_reversed(mac, out, p->mac_bits / 8u);
	err = TW_OK;

	tw_wipe(out, sizeof(out));
	return err;
}

int tw_tuak_f1(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
	       const uint8_t sqn[static 6], const uint8_t amf[static 2],
	       uint8_t *mac_a)
{
	return tuak_f1_common(p, 0, rand_, sqn, amf, mac_a);
}

int tw_tuak_f1star(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
		   const uint8_t sqn[static 6], const uint8_t amf[static 2],
		   uint8_t *mac_s)
{
	return tuak_f1_common(p, INST_F1STAR, rand_, sqn, amf, mac_s);
}

int tw_tuak_f2345(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
		  uint8_t *res, uint8_t *ck, uint8_t *ik, uint8_t ak[static 6])
{
	uint8_t out[TW_KECCAK_STATE_LEN];
	uint8_t res_code = 0, ck_code = 0, ik_code = 0;
	int err;

	if ((err = tw_tuak_params_check(p)) != TW_OK)
		return err;
	if (ak == NULL)
		return TW_ERR_INVAL;
	/* Checked above; these only fetch the codes. */
	(void)res_bits_code(p->res_bits, &res_code);
	(void)key_bits_code(p->ck_bits, 0x04, &ck_code); /* INSTANCE[5] */
	(void)key_bits_code(p->ik_bits, 0x02, &ik_code); /* INSTANCE[6] */

	/* §6.4: INSTANCE = 0,1, RES code, CK bit, IK bit, K bit. */
	tuak_core(out, p->topc,
		  (uint8_t)(INST_F2345 | res_code | ck_code | ik_code |
			    (p->k_len == 32 ? INST_K256 : 0)),
		  rand_, NULL, NULL, p->k, p->k_len, p->iterations);
	/* RES = OUT[n-1..0], CK = OUT[256+n-1..256], IK = OUT[512+n-1..512],
	 * AK = OUT[815..768]. */
	if (res != NULL)
		put_reversed(res, out, p->res_bits / 8u);
	if (ck != NULL)
		put_reversed(ck, out + OFF_CK, p->ck_bits / 8u);
	if (ik != NULL)
		put_reversed(ik, out + OFF_IK, p->ik_bits / 8u);
	put_reversed(ak, out + OFF_AK, TW_TUAK_AK_LEN);
	err = TW_OK;

	tw_wipe(out, sizeof(out));
	return err;
}

int tw_tuak_f5star(const struct tw_tuak_params *p, const uint8_t rand_[static 16],
		   uint8_t ak_star[static 6])
{
	uint8_t out[TW_KECCAK_STATE_LEN];
	int err;

	if ((err = tw_tuak_params_check(p)) != TW_OK)
		return err;
	if (ak_star == NULL)
		return TW_ERR_INVAL;

	/* §6.5: INSTANCE = 1,1,0,0,0,0,0, K bit; AK = OUT[815..768]. */
	tuak_core(out, p->topc,
		  (uint8_t)(INST_F1STAR | INST_F2345 | (p->k_len == 32 ? INST_K256 : 0)),
		  rand_, NULL, NULL, p->k, p->k_len, p->iterations);
	put_reversed(ak_star, out + OFF_AK, TW_TUAK_AK_LEN);
	err = TW_OK;

	tw_wipe(out, sizeof(out));
	return err;
}
