/*
 * A store of one pseudonym and one re-auth id for the fuzz targets that
 * run twag's EAP peer against twag's server: what the server mints it
 * keeps, so the next conversation of the same input can use it; every
 * pseudonym names FUZZ_STORE1_IMSI (15 digits, defined by the includer).
 * A deterministic random source (x_random) goes with it.
 */
#ifndef FUZZ_STORE1_H
#define FUZZ_STORE1_H

#include <stdint.h>
#include <string.h>

#include "twag/eap.h"
#include "twag/err.h"

static struct {
	uint8_t ps[TW_EAP_PSEUDONYM_MAX], ra[TW_EAP_ID_MAX];
	size_t ps_len, ra_len;
	struct tw_eap_reauth_state st;
	unsigned rnd;
} db;

static int x_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
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
	if (len > sizeof(db.ra))
		return TW_ERR_LENGTH;
	memcpy(db.ra, id, len);
	db.ra_len = len;
	db.st = *st;
	return TW_OK;
}

#endif
