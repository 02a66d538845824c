/*
 * twag subscriber — a subscriber record from text: the options of
 * `twag subscriber add` and the fields of a CSV line of `import` name the
 * same things, and both become a struct tw_subscriber here.
 *
 * SQN (--sqn, the CSV sqn column) is the 48-bit SQN last used, SEQ || IND
 * (3GPP TS 33.102 V17.0.0 Annex C.1.1, IND of 5 bits): the record keeps
 * SEQ_HE = SQN >> 5.
 */
#ifndef TWAG_SUB_TEXT_H
#define TWAG_SUB_TEXT_H

#include <stddef.h>

#include "twag/err.h"
#include "twag/vecsrc.h"

/* A subscriber as text, from options or CSV fields (NULL: absent). */
struct sub_text {
	const char *imsi, *algo, *ki, *opc, *op, *topc, *top, *amf, *sqn;
	const char *mac_bits, *res_bits, *iterations;
};

/*
 * Builds s from t: IMSI of 5..15 digits; algo milenage (ki, opc or op,
 * amf, sqn), tuak (ki of 16 or 32 octets, topc or top, amf, sqn, optional
 * mac-bits 64, res-bits 32/64/128, iterations 1..65535) or comp128v1..3
 * (ki only); hex of exactly the keys' lengths. OPc and TOPc are derived
 * from OP and TOP (TS 35.206 §4.1, TS 35.231 §6.1). On bad input returns
 * TW_ERR_INVAL with *bad = the option at fault (its long name) and a
 * message in err; s is then wiped. Every key copy of its own is wiped
 * before it returns.
 */
TW_MUST_CHECK int sub_from_text(const struct sub_text *t, struct tw_subscriber *s,
				const char **bad, char *err, size_t err_len);

/* "milenage", "tuak", "comp128v1".."comp128v3", or "unknown". */
const char *sub_alg_name(enum tw_sub_alg a);

#endif
