/*
 * twag-tunnel — security associations: parsed from "spi=,xform=,key="
 * specifications, or derived from an EAP MSK.
 *
 * Keys from an MSK (the trusted-WLAN case: the EAP-AKA' exchange that
 * admitted the device gave both ends the same MSK, RFC 5448 §3.3):
 *   KEYMAT = prf+(MSK, "twag-tunnel ESP" | SPI_i2r | SPI_r2i)
 * with prf+ of RFC 7296 §2.13 over HMAC-SHA-256, the SPIs as 4 octets in
 * network order; as IKEv2 orders CHILD_SA keys (RFC 7296 §2.17), the
 * initiator-to-responder SA takes its encryption then integrity key first,
 * the responder-to-initiator SA the next ones.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunnel.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/hmac.h"

/* AH transforms (the library's ESP table has the ESP ones). */
static int ah_transform(const char *name, struct tw_esp_config *c)
{
	static const struct {
		const char *name;
		uint32_t integ;
		size_t key_len;
	} t[] = {
		{ "ah-hmac-sha1", TW_ESP_AUTH_HMAC_SHA1_96, 20 },
		{ "ah-hmac-sha256", TW_ESP_AUTH_HMAC_SHA256_128, 32 },
		{ "ah-hmac-md5", TW_ESP_AUTH_HMAC_MD5_96, 16 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (strcmp(name, t[i].name) == 0) {
			c->integ = t[i].integ;
			c->auth_key_len = t[i].key_len;
			return 0;
		}
	}
	return -1;
}

/* Prepares sa from a transform name, SPI and the concatenated key. */
static int sa_make(struct tun_sa *sa, const char *xform, uint32_t spi,
		   const uint8_t *key, size_t key_len, bool esn, uint32_t window,
		   bool allow_null, char *err, size_t err_len)
{
	struct tw_esp_config c;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(sa, 0, sizeof(*sa));
	sa->ah = ah_transform(xform, &c) == 0;
	if (!sa->ah && tw_esp_transform(xform, &c) != TW_OK) {
		snprintf(err, err_len, "unknown transform '%s'", xform);
		return -1;
	}
	if (c.enc_key_len + c.auth_key_len != key_len) {
		snprintf(err, err_len, "transform %s takes a key of %zu octets (%zu hex digits), not %zu",
			 xform, c.enc_key_len + c.auth_key_len,
			 2 * (c.enc_key_len + c.auth_key_len), key_len);
		return -1;
	}
	if (c.cipher == TW_ESP_ENC_NULL && c.integ == TW_ESP_AUTH_NONE && !allow_null) {
		snprintf(err, err_len, "transform null has neither confidentiality nor integrity "
			 "(RFC 4303 §3.2): only with --allow-null, as a baseline");
		return -1;
	}
	c.spi = spi;
	c.mode = TW_ESP_TUNNEL;
	c.enc_key = key;
	c.auth_key = key + c.enc_key_len;
	c.esn = esn;
	c.replay_window = window;
	c.allow_null_null = allow_null;
	rc = sa->ah ? tw_ah_sa_init(&sa->ahsa, &c) : tw_esp_sa_init(&sa->esp, &c);
	if (rc != TW_OK) {
		snprintf(err, err_len, "transform %s: %s%s", xform, tw_strerror(rc),
			 rc == TW_ERR_RANGE ? " (replay window 32..4096)" : "");
		return -1;
	}
	sa->spi = spi;
	snprintf(sa->xform, sizeof(sa->xform), "%s", xform);
	pthread_mutex_init(&sa->lock, NULL);
	return 0;
}

static int parse_u32(const char *s, int base, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (*s == '\0')
		return -1;
	v = strtoul(s, &end, base);
	if (*end != '\0' || v > 0xffffffffUL)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int tun_sa_parse(struct tun_sa *sa, const char *spec, bool allow_null,
		 char *err, size_t err_len)
{
	char buf[512], xform[40] = "";
	uint8_t key[128];
	size_t key_len = 0;
	uint32_t spi = 0, window = 0;
	bool esn = false, have_spi = false;
	char *save = NULL;
	int rc = -1;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, err_len, "SA specification too long");
		return -1;
	}
	memcpy(buf, spec, strlen(spec) + 1);
	for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *v = eq != NULL ? eq + 1 : "";

		if (eq != NULL)
			*eq = '\0';
		if (strcmp(tok, "spi") == 0) {
			if (strncmp(v, "0x", 2) == 0 || strncmp(v, "0X", 2) == 0)
				v += 2;
			if (parse_u32(v, 16, &spi) != 0 || spi == 0) {
				snprintf(err, err_len, "spi: 1 to 8 hex digits, not 0 (RFC 4303 §2.1)");
				goto out;
			}
			have_spi = true;
		} else if (strcmp(tok, "xform") == 0) {
			snprintf(xform, sizeof(xform), "%s", v);
		} else if (strcmp(tok, "key") == 0) {
			if (tw_hex_decode(key, sizeof(key), &key_len, v, strlen(v)) != TW_OK) {
				snprintf(err, err_len, "key: not hex or longer than %zu octets", sizeof(key));
				goto out;
			}
		} else if (strcmp(tok, "esn") == 0 && eq == NULL) {
			esn = true;
		} else if (strcmp(tok, "window") == 0) {
			if (parse_u32(v, 10, &window) != 0) {
				snprintf(err, err_len, "window: a number 32..4096");
				goto out;
			}
		} else {
			snprintf(err, err_len, "unknown SA field '%s' (spi=, xform=, key=, esn, window=)", tok);
			goto out;
		}
	}
	if (!have_spi || xform[0] == '\0') {
		snprintf(err, err_len, "an SA needs spi= and xform=");
		goto out;
	}
	rc = sa_make(sa, xform, spi, key, key_len, esn, window, allow_null, err, err_len);
out:
	tw_wipe(buf, sizeof(buf));
	tw_wipe(key, sizeof(key));
	return rc;
}

int tun_prf_plus(uint8_t *out, size_t out_len, const uint8_t *key,
		 size_t key_len, const uint8_t *seed, size_t seed_len)
{
	struct tw_hmac_sha256_ctx h;
	uint8_t t[32];
	size_t have = 0;

	if (out_len > 255 * 32)
		return -1;
	tw_hmac_sha256_init(&h, key, key_len);
	/* T1 = prf(K, S | 0x01), Tn = prf(K, Tn-1 | S | n) */
	for (unsigned n = 1; have < out_len; n++) {
		uint8_t c = (uint8_t)n;
		size_t take;

		tw_hmac_sha256_reset(&h);
		if (n > 1)
			tw_hmac_sha256_update(&h, t, sizeof(t));
		tw_hmac_sha256_update(&h, seed, seed_len);
		tw_hmac_sha256_update(&h, &c, 1);
		tw_hmac_sha256_final(&h, t);
		take = out_len - have < 32 ? out_len - have : 32;
		memcpy(out + have, t, take);
		have += take;
	}
	tw_hmac_sha256_wipe(&h);
	tw_wipe(t, sizeof(t));
	return 0;
}

int tun_sa_from_msk(struct tun_sa *out, struct tun_sa *in, const uint8_t *msk,
		    size_t msk_len, const char *xform, uint32_t spi_out,
		    uint32_t spi_in, bool initiator, bool esn, bool allow_null,
		    char *err, size_t err_len)
{
	static const char label[] = "twag-tunnel ESP";
	struct tw_esp_config c;
	uint8_t seed[sizeof(label) - 1 + 8], keymat[2 * 128];
	uint32_t i2r = initiator ? spi_out : spi_in, r2i = initiator ? spi_in : spi_out;
	size_t klen;
	int rc = -1;

	memset(&c, 0, sizeof(c));
	if (ah_transform(xform, &c) != 0 && tw_esp_transform(xform, &c) != TW_OK) {
		snprintf(err, err_len, "unknown transform '%s'", xform);
		return -1;
	}
	if (spi_out == 0 || spi_in == 0) {
		snprintf(err, err_len, "--spi-out and --spi-in are needed (not 0) with --msk");
		return -1;
	}
	klen = c.enc_key_len + c.auth_key_len;
	memcpy(seed, label, sizeof(label) - 1);
	tw_store_be32(seed + sizeof(label) - 1, i2r);
	tw_store_be32(seed + sizeof(label) + 3, r2i);
	if (tun_prf_plus(keymat, 2 * klen, msk, msk_len, seed, sizeof(seed)) != 0)
		goto out;
	/* keymat: i2r keys, then r2i keys */
	if (sa_make(out, xform, spi_out, keymat + (initiator ? 0 : klen), klen, esn, 0,
		    allow_null, err, err_len) != 0 ||
	    sa_make(in, xform, spi_in, keymat + (initiator ? klen : 0), klen, esn, 0,
		    allow_null, err, err_len) != 0)
		goto out;
	rc = 0;
out:
	tw_wipe(keymat, sizeof(keymat));
	return rc;
}

void tun_sa_wipe(struct tun_sa *sa)
{
	if (sa->ah)
		tw_ah_sa_wipe(&sa->ahsa);
	else
		tw_esp_sa_wipe(&sa->esp);
}

size_t tun_sa_wire_len(const struct tun_sa *sa, size_t len, int family,
		       enum tun_encap encap)
{
	size_t ip = family == AF_INET6 ? 40 : 20;

	if (sa->ah) /* outer IPv4 | AH | inner */
		return 20 + tw_ah_len(&sa->ahsa) + len;
	return ip + (encap == TUN_ENCAP_UDP ? 8 : 0) + tw_esp_encap_len(&sa->esp, len);
}
