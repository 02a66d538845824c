/*
 * twag wlan — the IEEE 802.11-2020 pairwise key hierarchy (§12.7.1.3) and
 * EAPOL-Key MICs (§12.7.2):
 *   twag wlan ptk (--msk HEX128 | --pmk HEX64) --aa MAC --spa MAC
 *                 --anonce HEX64 --snonce HEX64 --akm 1|2|5|6|8
 *                 [--cipher ccmp-128|ccmp-256|gcmp-128|gcmp-256]
 *       -> pmk kck kek tk
 *   twag wlan mic --kck HEX32 --akm 1|2|5|6|8 --frame HEX [--verify]
 *       -> mic frame (the frame with its MIC field set); with --verify the
 *          frame's own MIC is checked instead (exit 1 if it does not verify)
 * MAC addresses are 12 hex digits or six colon/dash-separated octets.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/hex.h"
#include "twag/wlan_keys.h"

int cmd_wlan(int argc, char **argv);

enum { FRAME_MAX = 2048 };

static void parse_mac(const struct cli *c, const char *name, uint8_t mac[6])
{
	const char *s = cli_need(c, name);
	char hex[13];
	size_t n = 0, len = strlen(s);

	if (len == 17) {
		/* aa:bb:cc:dd:ee:ff or aa-bb-cc-dd-ee-ff */
		for (size_t i = 0; i < len; i++) {
			if (i % 3 == 2) {
				if (s[i] != ':' && s[i] != '-')
					cli_usage_error(c, name, "expected six octets aa:bb:cc:dd:ee:ff");
				continue;
			}
			hex[n++] = s[i];
		}
	} else if (len == 12) {
		memcpy(hex, s, 12);
		n = 12;
	} else {
		cli_usage_error(c, name, "expected a MAC address (12 hex digits or aa:bb:cc:dd:ee:ff)");
	}
	hex[n] = '\0';
	if (tw_hex_decode(mac, 6, NULL, hex, 12) != TW_OK)
		cli_usage_error(c, name, "not a MAC address");
}

static unsigned parse_akm(const struct cli *c)
{
	unsigned akm = (unsigned)cli_uint(c, "akm", 0, 255, 0);

	if (cli_get(c, "akm") == NULL)
		cli_usage_error(c, "akm", "missing (required: 1, 2, 5, 6 or 8)");
	if (!tw_wlan_akm_is_supported(akm))
		cli_usage_error(c, "akm", "unsupported AKM %u (1, 2, 5, 6 or 8)", akm);
	return akm;
}

static unsigned parse_cipher(const struct cli *c)
{
	static const struct {
		const char *name;
		unsigned suite;
	} names[] = {
		{ "ccmp-128", TW_WLAN_CIPHER_CCMP_128 }, { "ccmp", TW_WLAN_CIPHER_CCMP_128 },
		{ "ccmp-256", TW_WLAN_CIPHER_CCMP_256 }, { "gcmp-128", TW_WLAN_CIPHER_GCMP_128 },
		{ "gcmp", TW_WLAN_CIPHER_GCMP_128 },     { "gcmp-256", TW_WLAN_CIPHER_GCMP_256 },
	};
	const char *s = cli_get(c, "cipher");

	if (s == NULL)
		return TW_WLAN_CIPHER_CCMP_128;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].suite;
	cli_usage_error(c, "cipher", "expected ccmp-128, ccmp-256, gcmp-128 or gcmp-256");
}

static int wlan_ptk(int argc, char **argv)
{
	static const char *const valued[] = { "msk", "pmk", "aa", "spa", "anonce",
					      "snonce", "akm", "cipher", NULL };
	struct cli c;
	uint8_t msk[64], pmk[32], aa[6], spa[6], anonce[32], snonce[32];
	struct tw_wlan_ptk ptk;
	int err;

	cli_parse(&c, "wlan ptk", argc, argv, valued, NULL);
	if (cli_get(&c, "msk") != NULL && cli_get(&c, "pmk") != NULL)
		cli_usage_error(&c, "pmk", "give either --msk or --pmk, not both");
	if (cli_get(&c, "pmk") != NULL) {
		cli_hex(&c, "pmk", pmk, sizeof(pmk));
	} else {
		if (cli_get(&c, "msk") == NULL)
			cli_usage_error(&c, "msk", "missing (required: --msk or --pmk)");
		cli_hex(&c, "msk", msk, sizeof(msk));
		err = tw_wlan_pmk_from_msk(pmk, msk, sizeof(msk));
		tw_wipe(msk, sizeof(msk));
		if (err != TW_OK)
			cli_fail(&c, "PMK", err);
	}
	parse_mac(&c, "aa", aa);
	parse_mac(&c, "spa", spa);
	cli_hex(&c, "anonce", anonce, sizeof(anonce));
	cli_hex(&c, "snonce", snonce, sizeof(snonce));
	unsigned akm = parse_akm(&c);
	unsigned cipher = parse_cipher(&c);

	err = tw_wlan_ptk_derive(&ptk, akm, cipher, pmk, aa, spa, anonce, snonce);
	if (err != TW_OK) {
		tw_wipe(pmk, sizeof(pmk));
		cli_fail(&c, "PTK", err);
	}
	cli_print_hex("pmk", pmk, sizeof(pmk));
	cli_print_hex("kck", ptk.kck, ptk.kck_len);
	cli_print_hex("kek", ptk.kek, ptk.kek_len);
	cli_print_hex("tk", ptk.tk, ptk.tk_len);
	tw_wipe(pmk, sizeof(pmk));
	tw_wlan_ptk_wipe(&ptk);
	return 0;
}

/* A frame that does not decode as an EAPOL-Key frame with a MIC field, or
 * whose descriptor version does not match the AKM, is bad input. */
static _Noreturn void bad_frame(const struct cli *c, int err)
{
	cli_usage_error(c, "frame", "not an EAPOL-Key frame with a %d-octet MIC "
			"for this AKM (%d..%d octets, lengths consistent): %s",
			TW_WLAN_MIC_LEN, TW_EAPOL_KEY_MIN_LEN, FRAME_MAX,
			tw_strerror(err));
}

static int wlan_mic(int argc, char **argv)
{
	static const char *const valued[] = { "kck", "akm", "frame", NULL };
	static const char *const flags[] = { "verify", NULL };
	static uint8_t frame[FRAME_MAX];
	struct cli c;
	uint8_t kck[16], mic[16];
	size_t len;
	int err;

	cli_parse(&c, "wlan mic", argc, argv, valued, flags);
	cli_hex(&c, "kck", kck, sizeof(kck));
	unsigned akm = parse_akm(&c);

	len = cli_hex_range(&c, "frame", frame, 1, FRAME_MAX, 1);
	if (cli_flag(&c, "verify")) {
		err = tw_wlan_eapol_mic_verify(akm, kck, sizeof(kck), frame, len);
		tw_wipe(kck, sizeof(kck));
		if (err != TW_OK && err != TW_ERR_AUTH)
			bad_frame(&c, err);
		if (err != TW_OK)
			cli_fail(&c, "MIC check", err);
		cli_print_hex("mic", frame + TW_EAPOL_KEY_MIC_OFF, TW_WLAN_MIC_LEN);
		return 0;
	}
	err = tw_wlan_eapol_mic(mic, akm, kck, sizeof(kck), frame, len);
	tw_wipe(kck, sizeof(kck));
	if (err != TW_OK)
		bad_frame(&c, err);
	memcpy(frame + TW_EAPOL_KEY_MIC_OFF, mic, TW_WLAN_MIC_LEN);
	cli_print_hex("mic", mic, sizeof(mic));
	cli_print_hex("frame", frame, len);
	return 0;
}

int cmd_wlan(int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "ptk") == 0)
		return wlan_ptk(argc - 1, argv + 1);
	if (argc >= 1 && strcmp(argv[0], "mic") == 0)
		return wlan_mic(argc - 1, argv + 1);
	fprintf(stderr, "twag wlan: expected 'ptk' or 'mic'\n");
	return CLI_EXIT_USAGE;
}
