/*
 * twag esp — one IPsec ESP (RFC 4303) or AH (RFC 4302) packet in or out,
 * so scripts and other IPsec stacks can cross-check:
 *
 *   twag esp encrypt|decrypt --sa TRANSFORM:KEYHEX:SPI --seq N --packet HEX
 *            [--mode transport|tunnel] [--esn] [--nh N] [--iv HEX]
 *
 * TRANSFORM: aes-gcm-128, aes-gcm-256 (KEYHEX = AES key | 4-octet salt,
 * RFC 4106 §8.1), aes-cbc-128-hmac-sha1, aes-cbc-256-hmac-sha1,
 * aes-cbc-128-hmac-sha256, aes-cbc-256-hmac-sha256, aes-cbc-128-hmac-md5,
 * 3des-cbc-hmac-sha1, null-hmac-sha1, null-hmac-md5 (KEYHEX = encryption
 * key | integrity key), null (no protection: baseline only); and for AH
 * over IPv4: ah-hmac-sha1, ah-hmac-md5, ah-hmac-sha256 (KEYHEX = the
 * integrity key; --packet is the whole IPv4 packet). SPI: decimal or 0x hex.
 * --seq N is the packet's full sequence number (with --esn the high half
 * is in the ICV but not on the wire). encrypt: --packet is the payload
 * (transport, next header --nh, default 17) or the inner IP packet
 * (tunnel); --iv fixes the explicit IV (default: derived as the library
 * does). decrypt: --packet is the ESP/AH packet; exit 1 if it does not
 * verify. Output: packet=HEX (encrypt); payload=HEX next_header=N seq=N
 * (decrypt), or packet=HEX seq=N for AH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/esp.h"
#include "twag/hex.h"


enum { PKT_MAX = 65535, KEY_MAX = 64 };

static const struct {
	const char *name;
	uint32_t integ;
	size_t key_len;
} ah_transforms[] = {
	{ "ah-hmac-sha1", TW_ESP_AUTH_HMAC_SHA1_96, 20 },
	{ "ah-hmac-md5", TW_ESP_AUTH_HMAC_MD5_96, 16 },
	{ "ah-hmac-sha256", TW_ESP_AUTH_HMAC_SHA256_128, 32 },
};

/* --sa TRANSFORM:KEYHEX:SPI into cfg (key bytes into key[]); returns true
 * for an AH transform. */
static bool parse_sa(const struct cli *c, struct tw_esp_config *cfg,
		     uint8_t key[KEY_MAX])
{
	const char *sa = cli_need(c, "sa");
	const char *k = strchr(sa, ':');
	const char *s = k ? strchr(k + 1, ':') : NULL;
	char name[40];
	size_t klen = 0;
	bool ah = false;

	if (k == NULL || s == NULL || (size_t)(k - sa) >= sizeof(name))
		cli_usage_error(c, "sa", "expected TRANSFORM:KEYHEX:SPI");
	memcpy(name, sa, (size_t)(k - sa));
	name[k - sa] = '\0';
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < sizeof(ah_transforms) / sizeof(ah_transforms[0]); i++) {
		if (strcmp(name, ah_transforms[i].name) == 0) {
			cfg->integ = ah_transforms[i].integ;
			cfg->auth_key_len = ah_transforms[i].key_len;
			ah = true;
		}
	}
	if (!ah && tw_esp_transform(name, cfg) != TW_OK)
		cli_usage_error(c, "sa", "unknown transform '%s'", name);
	if (tw_hex_decode(key, KEY_MAX, &klen, k + 1, (size_t)(s - k - 1)) != TW_OK)
		cli_usage_error(c, "sa", "KEYHEX is not hex of at most %d bytes", KEY_MAX);
	if (klen != cfg->enc_key_len + cfg->auth_key_len)
		cli_usage_error(c, "sa", "%s takes a %zu-byte key, got %zu", name,
				cfg->enc_key_len + cfg->auth_key_len, klen);
	char *end = NULL;
	unsigned long spi = strtoul(s + 1, &end, 0);
	if (s[1] == '\0' || *end != '\0' || spi == 0 || spi > 0xffffffffUL)
		cli_usage_error(c, "sa", "SPI must be 1..4294967295");
	cfg->spi = (uint32_t)spi;
	cfg->enc_key = key;
	cfg->auth_key = key + cfg->enc_key_len;
	return ah;
}

static int run_ah(const struct cli *c, const struct tw_esp_config *cfg, bool enc,
		  uint64_t seq, uint8_t *pkt, size_t len)
{
	static uint8_t out[PKT_MAX + 64];
	struct tw_ah_sa sa;
	size_t n = 0;
	uint64_t got = 0;
	int err = tw_ah_sa_init(&sa, cfg);

	if (err != TW_OK)
		cli_fail(c, "SA", err);
	if (enc) {
		sa.seq_out = seq - 1;
		err = tw_ah_encap(&sa, pkt, len, out, sizeof(out), &n);
		if (err != TW_OK)
			cli_fail(c, "encrypt", err);
		cli_print_hex("packet", out, n);
	} else {
		sa.replay.top = seq - 1;
		err = tw_ah_decap(&sa, pkt, len, &n, &got);
		if (err != TW_OK)
			cli_fail(c, "decrypt", err);
		cli_print_hex("packet", pkt, n);
		printf("seq=%llu\n", (unsigned long long)got);
	}
	tw_ah_sa_wipe(&sa);
	return 0;
}

int cmd_esp(int argc, char **argv)
{
	static const char *const valued[] = { "sa", "seq", "packet", "mode", "nh", "iv", NULL };
	static const char *const flags[] = { "esn", NULL };
	static uint8_t pkt[PKT_MAX], out[PKT_MAX + 128];
	struct tw_esp_config cfg;
	struct tw_esp_sa sa;
	struct tw_esp_view v;
	uint8_t key[KEY_MAX], iv[TW_ESP_MAX_IV_LEN];
	size_t len, n = 0, ivl = 0;
	int err;

	if (argc < 1 || (strcmp(argv[0], "encrypt") != 0 && strcmp(argv[0], "decrypt") != 0)) {
		fprintf(stderr, "twag esp: expected 'encrypt' or 'decrypt'\n");
		return CLI_EXIT_USAGE;
	}
	bool enc = strcmp(argv[0], "encrypt") == 0;
	struct cli c;
	cli_parse(&c, enc ? "esp encrypt" : "esp decrypt", argc - 1, argv + 1, valued, flags);
	bool ah = parse_sa(&c, &cfg, key);
	cfg.esn = cli_flag(&c, "esn");
	uint64_t seq = cli_uint(&c, "seq", 1, cfg.esn ? UINT64_MAX : 0xffffffffUL, 0);
	if (seq == 0)
		cli_usage_error(&c, "seq", "missing (required: the packet's sequence number, >= 1)");
	const char *mode = cli_get(&c, "mode");
	if (mode == NULL || strcmp(mode, "transport") == 0)
		cfg.mode = TW_ESP_TRANSPORT;
	else if (strcmp(mode, "tunnel") == 0)
		cfg.mode = TW_ESP_TUNNEL;
	else
		cli_usage_error(&c, "mode", "expected transport or tunnel");
	len = cli_hex_range(&c, "packet", pkt, 0, PKT_MAX, 1);
	if (ah) {
		if (cfg.mode != TW_ESP_TRANSPORT || cli_get(&c, "iv") || cli_get(&c, "nh"))
			cli_usage_error(&c, "sa", "AH takes an IPv4 packet in transport mode only");
		return run_ah(&c, &cfg, enc, seq, pkt, len);
	}
	err = tw_esp_sa_init(&sa, &cfg);
	tw_wipe(key, sizeof(key));
	if (err != TW_OK)
		cli_fail(&c, "SA", err);
	if (enc) {
		unsigned long nh = cli_uint(&c, "nh", 0, 255, cfg.mode == TW_ESP_TUNNEL ? 0 : 17);
		if (cli_get(&c, "iv") != NULL) {
			if (sa.iv_len == 0)
				cli_usage_error(&c, "iv", "this transform has no IV");
			ivl = cli_hex_range(&c, "iv", iv, sa.iv_len, sa.iv_len, 1);
		}
		sa.seq_out = seq - 1;
		err = tw_esp_encap_iv(&sa, (uint8_t)nh, ivl ? iv : NULL, pkt, len, out,
				      sizeof(out), &n);
		if (err != TW_OK)
			cli_fail(&c, "encrypt", err);
		cli_print_hex("packet", out, n);
	} else {
		if (cli_get(&c, "iv") || cli_get(&c, "nh"))
			cli_usage_error(&c, cli_get(&c, "iv") ? "iv" : "nh",
					"not an option of decrypt");
		/* The receiver expects exactly this number next: the window's
		 * top is seq - 1 (with ESN it supplies the high half). */
		sa.replay.top = seq - 1;
		err = tw_esp_decap(&sa, pkt, len, &v);
		if (err != TW_OK)
			cli_fail(&c, "decrypt", err);
		cli_print_hex("payload", pkt + v.off, v.len);
		printf("next_header=%u\nseq=%llu\n", v.next_header, (unsigned long long)v.seq);
	}
	tw_esp_sa_wipe(&sa);
	return 0;
}
