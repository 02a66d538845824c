/*
 * Fuzz target: the EAP-AKA / EAP-AKA' server engine (RFC 4187, RFC 9048)
 * fed arbitrary EAP responses in each state. Input: one mode octet (bit 0:
 * AKA or AKA'; bits 1-2: the state to reach first: initial, after
 * EAP-Request/Identity, at the challenge, at an AKA-Identity round; bits
 * 3, 4, 5: no pseudonyms, no fast re-authentication, no result
 * indications; bit 6: a store that knows every pseudonym and re-auth id;
 * bit 7: a re-auth limit of 3, and without bit 6 no store at all), then
 * packets, each as a 2-octet length and its octets. A vector request is
 * answered with a fixed vector. Invariants: no crash or overread, outputs
 * within the buffer, and never TW_EAP_ACCEPT (random input cannot carry
 * a valid AT_MAC and RES).
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/eap.h"
#include "twag/eap_aka.h"
#include "twag/vecsrc.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int f_random(void *arg, uint8_t *out, size_t len)
{
	(void)arg;
	memset(out, 0x5a, len);
	return TW_OK;
}

static int f_notfound(void *arg, const uint8_t *p, size_t len, char imsi[16],
		      size_t *imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_ERR_NOTFOUND;
}

static int f_ra_notfound(void *arg, const uint8_t *id, size_t len,
			 struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_ERR_NOTFOUND;
}

static int f_store_ps(void *arg, const uint8_t *p, size_t len, const char *imsi,
		      size_t imsi_len)
{
	(void)arg, (void)p, (void)len, (void)imsi, (void)imsi_len;
	return TW_OK;
}

static int f_store_ra(void *arg, const uint8_t *id, size_t len,
		      const struct tw_eap_reauth_state *st)
{
	(void)arg, (void)id, (void)len, (void)st;
	return TW_OK;
}

static const struct tw_eap_identity_ops ops = {
	.pseudonym_lookup = f_notfound, .pseudonym_store = f_store_ps,
	.reauth_lookup = f_ra_notfound, .reauth_store = f_store_ra,
	.random = f_random,
};

/* A store that knows every identity: any pseudonym is one IMSI's, any
 * re-auth id has a state for the method the server runs (fixed keys,
 * the counter from the id's last octet). */
static uint8_t ra_method;

static int f_found(void *arg, const uint8_t *p, size_t len, char imsi[16], size_t *imsi_len)
{
	(void)arg, (void)p, (void)len;
	memcpy(imsi, "001010123456789", 16);
	*imsi_len = 15;
	return TW_OK;
}

static int f_ra_found(void *arg, const uint8_t *id, size_t len, struct tw_eap_reauth_state *st)
{
	(void)arg;
	memset(st, 0, sizeof(*st));
	st->method = ra_method;
	memcpy(st->imsi, "001010123456789", 16);
	st->imsi_len = 15;
	st->counter = len ? id[len - 1] % 20 : 1;
	memset(st->k_encr, 0x21, sizeof(st->k_encr));
	memset(st->k_aut, 0x22, sizeof(st->k_aut));
	st->k_aut_len = ra_method == TW_EAP_TYPE_AKA_PRIME ? 32 : 16;
	memset(st->mk, 0x23, sizeof(st->mk));
	memset(st->k_re, 0x24, sizeof(st->k_re));
	return TW_OK;
}

static const struct tw_eap_identity_ops ops_found = {
	.pseudonym_lookup = f_found, .pseudonym_store = f_store_ps,
	.reauth_lookup = f_ra_found, .reauth_store = f_store_ra,
	.random = f_random,
};

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const char ident[] = "6001010123456789@wlan.example";
	struct tw_eap_server_cfg cfg;
	struct tw_aka_server_ctx s;
	struct tw_eap_aka_vec v;
	uint8_t out[1024], pkt[64];
	size_t out_len, len;
	int a;

	if (size < 1)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.network_name = (const uint8_t *)"WLAN";
	cfg.network_name_len = 4;
	cfg.enable_aka = cfg.enable_aka_prime = true;
	cfg.pseudonyms = cfg.fast_reauth = cfg.result_ind = true;
	cfg.realm = "wlan.example";
	cfg.realm_len = 12;
	cfg.ops = &ops;
	uint8_t mode = data[0];
	uint8_t method = (mode & 1) ? TW_EAP_TYPE_AKA_PRIME : TW_EAP_TYPE_AKA;
	unsigned st = (mode >> 1) & 3;
	if (st == 3)
		cfg.id_policy = TW_EAP_ID_ALWAYS_ANY;
	/* bits 3-7: the server's settings and what its store knows */
	cfg.pseudonyms = !(mode & 8);
	cfg.fast_reauth = !(mode & 16);
	cfg.result_ind = !(mode & 32);
	ra_method = method;
	if (mode & 64)
		cfg.ops = &ops_found;
	if (mode & 128) {
		cfg.reauth_limit = 3;
		if (!(mode & 64))
			cfg.ops = NULL;
	}
	memset(&v, 0x11, sizeof(v));
	v.autn[6] = 0x80;
	v.xres_len = 8;
	if (tw_aka_server_init(&s, &cfg, method, 7) != TW_OK)
		abort();
	a = TW_EAP_SEND;
	if (st == 1 && tw_aka_server_start(&s, out, sizeof(out), &out_len) != TW_EAP_SEND)
		abort();
	if (st >= 2) {
		if (tw_eap_encode(pkt, sizeof(pkt), &len, TW_EAP_RESPONSE, 7,
				  TW_EAP_TYPE_IDENTITY, (const uint8_t *)ident,
				  strlen(ident)) != TW_OK)
			abort();
		a = tw_aka_server_input(&s, pkt, len, out, sizeof(out), &out_len);
	}
	data++, size--;
	for (int round = 0; round < 6; round++) {
		if (a == TW_EAP_NEED_VECTOR) {
			a = tw_aka_server_vector(&s, &v, out, sizeof(out), &out_len);
			continue;
		}
		if (size < 2)
			break;
		size_t n = tw_load_be16(data);
		data += 2, size -= 2;
		if (n > size)
			n = size;
		a = tw_aka_server_input(&s, data, n, out, sizeof(out), &out_len);
		data += n, size -= n;
		if (a == TW_EAP_ACCEPT || out_len > sizeof(out))
			abort();
		if (a < 0 && a != TW_ERR_STATE)
			abort();
	}
	tw_aka_server_wipe(&s);
	return 0;
}
