/*
 * twag subscriber — a subscriber record from text (sub_text.h). SQN: TS
 * 33.102 V17.0.0 Annex C.1.1; OPc: TS 35.206 §4.1; TOPc: TS 35.231 §6.1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sub_text.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/milenage.h"
#include "twag/sqn.h"
#include "twag/tuak.h"

static const struct {
	const char *name;
	enum tw_sub_alg alg;
} algs[] = {
	{ "milenage", TW_SUB_MILENAGE },   { "tuak", TW_SUB_TUAK },
	{ "comp128v1", TW_SUB_COMP128V1 }, { "comp128v2", TW_SUB_COMP128V2 },
	{ "comp128v3", TW_SUB_COMP128V3 },
};

const char *sub_alg_name(enum tw_sub_alg a)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == a)
			return algs[i].name;
	return "unknown";
}

/* Exactly len octets of hex. */
static bool hex_exact(const char *v, uint8_t *out, size_t len)
{
	size_t got = 0;

	return strlen(v) == 2 * len && tw_hex_decode(out, len, &got, v, 2 * len) == TW_OK &&
	       got == len;
}

static bool dec(const char *v, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end = NULL;

	if (*v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoul(v, &end, 10);
	return errno == 0 && *end == '\0' && *out >= min && *out <= max;
}

#define BAD(field, ...)                                   \
	do {                                              \
		*bad = (field);                           \
		snprintf(err, err_len, __VA_ARGS__);      \
		rc = TW_ERR_INVAL;                        \
		goto out;                                 \
	} while (0)

int sub_from_text(const struct sub_text *t, struct tw_subscriber *s, const char **bad,
		  char *err, size_t err_len)
{
	struct tw_sub_keys kk;
	struct tw_tuak_params p;
	enum tw_sub_alg alg = 0;
	uint8_t k[32], opc[16], op[16], top[32], amf[2] = { 0, 0 }, sqn[6] = { 0 };
	unsigned long x;
	int rc = TW_OK;

	memset(&kk, 0, sizeof(kk));
	memset(&p, 0, sizeof(p));
	*bad = NULL;
	if (t->imsi == NULL)
		BAD("imsi", "missing (required)");
	{
		size_t n = strlen(t->imsi);

		if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN ||
		    strspn(t->imsi, "0123456789") != n)
			BAD("imsi", "expected 5 to 15 decimal digits");
	}
	if (t->algo == NULL)
		BAD("algo", "missing (required: milenage, tuak, comp128v1, comp128v2, comp128v3)");
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strcmp(t->algo, algs[i].name) == 0)
			alg = algs[i].alg;
	if (alg == 0)
		BAD("algo", "'%s' is not milenage, tuak, comp128v1, comp128v2 or comp128v3",
		    t->algo);
	if (t->ki == NULL)
		BAD("ki", "missing (required)");

	/* options another algorithm's keys would need are mistakes here */
	{
		const struct {
			const char *name, *val;
			bool milenage, tuak;
		} extra[] = {
			{ "opc", t->opc, true, false },      { "op", t->op, true, false },
			{ "topc", t->topc, false, true },    { "top", t->top, false, true },
			{ "amf", t->amf, true, true },       { "sqn", t->sqn, true, true },
			{ "mac-bits", t->mac_bits, false, true },
			{ "res-bits", t->res_bits, false, true },
			{ "iterations", t->iterations, false, true },
		};

		for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
			bool ok = alg == TW_SUB_MILENAGE ? extra[i].milenage
				  : alg == TW_SUB_TUAK   ? extra[i].tuak
							 : false;

			if (extra[i].val != NULL && !ok)
				BAD(extra[i].name, "not used with --algo %s", t->algo);
		}
	}
	if (alg == TW_SUB_MILENAGE || alg == TW_SUB_TUAK) {
		if (t->amf == NULL)
			BAD("amf", "missing (required)");
		if (!hex_exact(t->amf, amf, 2))
			BAD("amf", "expected 4 hex digits");
		if (t->sqn == NULL)
			BAD("sqn", "missing (required)");
		if (!hex_exact(t->sqn, sqn, 6))
			BAD("sqn", "expected 12 hex digits");
	}
	switch (alg) {
	case TW_SUB_MILENAGE:
		if (!hex_exact(t->ki, k, 16))
			BAD("ki", "expected 32 hex digits");
		if (t->opc != NULL && t->op != NULL)
			BAD("op", "give either --op or --opc, not both");
		if (t->opc == NULL && t->op == NULL)
			BAD("opc", "missing (required: --op or --opc)");
		if (t->opc != NULL) {
			if (!hex_exact(t->opc, opc, 16))
				BAD("opc", "expected 32 hex digits");
		} else {
			if (!hex_exact(t->op, op, 16))
				BAD("op", "expected 32 hex digits");
			/* TS 35.206 §4.1: OPc = OP ^ E_K(OP) */
			rc = tw_milenage_opc(opc, k, op);
			if (rc != TW_OK)
				BAD("op", "cannot derive OPc");
		}
		rc = tw_sub_keys_milenage(&kk, k, opc, NULL);
		break;
	case TW_SUB_TUAK:
		if (hex_exact(t->ki, p.k, 16))
			p.k_len = 16;
		else if (hex_exact(t->ki, p.k, 32))
			p.k_len = 32;
		else
			BAD("ki", "expected 32 or 64 hex digits");
		p.mac_bits = 64;
		p.res_bits = 64;
		p.ck_bits = 128;
		p.ik_bits = 128;
		p.iterations = 1;
		/* TS 33.102 §6.3.7: AKA carries a 64-bit MAC and RES <= 128 bits */
		if (t->mac_bits != NULL && (!dec(t->mac_bits, 64, 64, &x)))
			BAD("mac-bits", "AKA needs 64");
		if (t->res_bits != NULL) {
			if (!dec(t->res_bits, 32, 128, &x) || (x != 32 && x != 64 && x != 128))
				BAD("res-bits", "expected 32, 64 or 128");
			p.res_bits = (uint16_t)x;
		}
		if (t->iterations != NULL) {
			if (!dec(t->iterations, 1, 65535, &x))
				BAD("iterations", "expected 1..65535");
			p.iterations = (uint16_t)x;
		}
		if (t->topc != NULL && t->top != NULL)
			BAD("top", "give either --top or --topc, not both");
		if (t->topc == NULL && t->top == NULL)
			BAD("topc", "missing (required: --top or --topc)");
		if (t->topc != NULL) {
			if (!hex_exact(t->topc, p.topc, 32))
				BAD("topc", "expected 64 hex digits");
		} else {
			if (!hex_exact(t->top, top, 32))
				BAD("top", "expected 64 hex digits");
			/* TS 35.231 §6.1: TOPc from TOP and K */
			rc = tw_tuak_topc(p.topc, top, p.k, p.k_len, p.iterations);
			if (rc != TW_OK)
				BAD("top", "cannot derive TOPc");
		}
		rc = tw_sub_keys_tuak(&kk, &p);
		break;
	default:
		if (!hex_exact(t->ki, k, 16))
			BAD("ki", "expected 32 hex digits");
		rc = tw_sub_keys_comp128(&kk, (unsigned)(alg - TW_SUB_COMP128V1 + 1), k);
		break;
	}
	if (rc != TW_OK)
		BAD("ki", "keys refused: %s", tw_strerror(rc));
	rc = tw_subscriber_init(s, t->imsi, &kk, amf);
	if (rc != TW_OK)
		BAD("imsi", "refused: %s", tw_strerror(rc));
	/* Annex C.1.1: SQN = SEQ || IND (5 bits); SEQ_HE is the last SEQ used */
	rc = tw_sqn_he_init(&s->sqn, TW_SQN_IND_BITS_DEFAULT, 0, 1,
			    tw_load_be48(sqn) >> TW_SQN_IND_BITS_DEFAULT);
	if (rc != TW_OK)
		BAD("sqn", "out of range");
out:
	tw_wipe(&kk, sizeof(kk));
	tw_wipe(&p, sizeof(p));
	tw_wipe(k, sizeof(k));
	tw_wipe(opc, sizeof(opc));
	tw_wipe(op, sizeof(op));
	tw_wipe(top, sizeof(top));
	if (rc != TW_OK)
		tw_wipe(s, sizeof(*s));
	return rc;
}

#undef BAD

