/*
 * A store of one pseudonym and one re-auth id for the fuzz targets that
 * run twag's EAP peer against twag's server: what the server mints it
 * keeps, so the next conversation of the same input can use it; every
 * pseudonym names FUZZ_STORE1_IMSI (15 digits, defined by the includer).
 * A deterministic random source (x_random) goes with it, which fails
 * at its db.fail_at-th call of the input when that is set (a DRBG that
 * fails amid an exchange); with db.freeze the re-auth state keeps the
 * counter it was first stored with (a store that lost an update: the
 * server then offers a counter the peer has seen, RFC 4187 §5.2); the
 * bits of db.fail_store make writes fail: 1 pseudonym stores, 2 re-auth
 * stores, 4 removals (TW_ERR_IO), 8 removals of an id not found.
 * fuzz_remac() re-signs a peer's packet that a plan altered, so the
 * server's checks behind AT_MAC are reached.
 */
#ifndef FUZZ_STORE1_H
#define FUZZ_STORE1_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "twag/eap.h"
#include "twag/err.h"
#include "twag/simaka.h"

static struct {
	uint8_t ps[TW_EAP_PSEUDONYM_MAX], ra[TW_EAP_ID_MAX];
	size_t ps_len, ra_len;
	struct tw_eap_reauth_state st;
	unsigned rnd, fail_at, fail_store;
	bool freeze, have_st;
} db;

static int x_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	if (db.fail_at != 0 && db.rnd + 1 == db.fail_at) {
		db.rnd++;
		return TW_ERR_CRYPTO;
	}
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(db.rnd * 131 + i * 7 + 1);
	db.rnd++;
	return TW_OK;
}

static int x_ps_lookup(void *arg, const uint8_t *p, size_t len, char imsi[16], size_t *imsi_len)
{
	(void)arg;
	if (db.ps_len == 0 || len != db.ps_len || memcmp(p, db.ps, len) != 0)
		return TW_ERR_NOTFOUND;
	memcpy(imsi, FUZZ_STORE1_IMSI, 16);
	*imsi_len = 15;
	return TW_OK;
}

static int x_ps_store(void *arg, const uint8_t *p, size_t len, const char *imsi,
		      size_t imsi_len)
{
	(void)arg, (void)imsi, (void)imsi_len;
	if (db.fail_store & 1)
		return TW_ERR_IO;
	if (len > sizeof(db.ps))
		return TW_ERR_LENGTH;
	memcpy(db.ps, p, len);
	db.ps_len = len;
	return TW_OK;
}

static int x_ra_lookup(void *arg, const uint8_t *id, size_t len, struct tw_eap_reauth_state *st)
{
	(void)arg;
	if (db.ra_len == 0 || len != db.ra_len || memcmp(id, db.ra, len) != 0)
		return TW_ERR_NOTFOUND;
	*st = db.st;
	return TW_OK;
}

static int x_ra_store(void *arg, const uint8_t *id, size_t len,
		      const struct tw_eap_reauth_state *st)
{
	(void)arg;
	if (db.fail_store & 2)
		return TW_ERR_IO;
	if (len > sizeof(db.ra))
		return TW_ERR_LENGTH;
	memcpy(db.ra, id, len);
	db.ra_len = len;
	if (db.freeze && db.have_st) {
		uint16_t kept = db.st.counter;

		db.st = *st;
		db.st.counter = kept;
	} else
		db.st = *st;
	db.have_st = true;
	return TW_OK;
}

static int x_ra_remove(void *arg, const uint8_t *id, size_t len)
{
	(void)arg;
	if (db.fail_store & 4)
		return TW_ERR_IO;
	if (db.fail_store & 8)
		return TW_ERR_NOTFOUND;
	if (len == db.ra_len && memcmp(id, db.ra, len) == 0)
		db.ra_len = 0;
	return TW_OK;
}

/* A packet with an AT_MAC, altered after it was signed, signed again
 * with mac over it | extra (RFC 4186 §10.14, RFC 4187 §10.15); packets
 * that no longer decode or carry no AT_MAC are left as they are. */
static void fuzz_remac(struct tw_simaka_mac_ctx *mac, uint8_t *pkt, size_t len,
		       const uint8_t *extra, size_t extra_len)
{
	struct tw_simaka_msg m;
	uint8_t v[16];

	if (tw_simaka_decode(&m, pkt, len) != TW_OK || !tw_simaka_has(&m.mac))
		return;
	size_t off = (size_t)(m.mac.val - pkt);

	if (tw_simaka_mac_compute(mac, v, pkt, len, off, extra, extra_len) == TW_OK)
		memcpy(pkt + off, v, 16);
}

#endif
