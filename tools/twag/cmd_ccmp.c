/*
 * twag ccmp — IEEE 802.11-2020 §12.5.3 CCMP / §12.5.5 GCMP protection of
 * one MPDU (MAC header || body, no FCS), printed as frame=hex.
 *   encrypt: PN = --pn (1 .. 2^48-1); prints frame= and pn=.
 *   decrypt: the PN comes from the frame; --pn, if given, is the
 *            receiver's last accepted PN (a frame with PN <= it is a
 *            replay and fails); prints frame= (header || plaintext), pn=.
 * A bad MIC, wrong Key ID or replay exits 1.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/ccmp.h"

/* The longest MPDU (11454 octets, the largest Maximum MPDU Length a VHT
 * station can advertise in IEEE 802.11-2020); decrypt takes it with its CCMP/GCMP header and MIC. */
enum { FRAME_MAX = 11454 };

int cmd_ccmp(int argc, char **argv)
{
	static const char *const valued[] = { "tk", "pn", "frame", "cipher", "key-id", NULL };
	static const size_t tk_lens[] = { 16, 32, 0 };
	static uint8_t frame[FRAME_MAX], out[FRAME_MAX + TW_CCMP_OVERHEAD_MAX];
	struct cli c;
	struct tw_ccmp_key key;
	uint8_t tk[32];
	size_t tk_len, frame_len, out_len = 0;
	enum tw_ccmp_cipher cipher = TW_CCMP_128;
	uint64_t pn = 0;
	int err;

	if (argc < 1 || (strcmp(argv[0], "encrypt") != 0 && strcmp(argv[0], "decrypt") != 0)) {
		fprintf(stderr, "twag ccmp: expected 'encrypt' or 'decrypt'\n");
		return CLI_EXIT_USAGE;
	}
	bool enc = strcmp(argv[0], "encrypt") == 0;
	cli_parse(&c, enc ? "ccmp encrypt" : "ccmp decrypt", argc - 1, argv + 1, valued, NULL);
	const char *cn = cli_get(&c, "cipher");
	if (cn == NULL || strcmp(cn, "ccmp-128") == 0)
		cipher = TW_CCMP_128;
	else if (strcmp(cn, "ccmp-256") == 0)
		cipher = TW_CCMP_256;
	else if (strcmp(cn, "gcmp-128") == 0)
		cipher = TW_GCMP_128;
	else if (strcmp(cn, "gcmp-256") == 0)
		cipher = TW_GCMP_256;
	else
		cli_usage_error(&c, "cipher", "expected ccmp-128, ccmp-256, gcmp-128 or gcmp-256");
	tk_len = cli_hex_oneof(&c, "tk", tk, tk_lens);
	if (tk_len != ((cipher == TW_CCMP_128 || cipher == TW_GCMP_128) ? 16u : 32u))
		cli_usage_error(&c, "tk", "%s needs a %d-octet TK", cn ? cn : "ccmp-128",
				(cipher == TW_CCMP_128 || cipher == TW_GCMP_128) ? 16 : 32);
	unsigned key_id = (unsigned)cli_uint(&c, "key-id", 0, 3, 0);
	if (enc)
		pn = cli_uint(&c, "pn", 1, TW_CCMP_PN_MAX, 0);
	else
		pn = cli_uint(&c, "pn", 0, TW_CCMP_PN_MAX, 0);
	if (enc && cli_get(&c, "pn") == NULL)
		cli_usage_error(&c, "pn", "missing (required)");
	frame_len = cli_hex_range(&c, "frame", frame, 1, FRAME_MAX, 1);
	err = tw_ccmp_key_init(&key, cipher, tk, tk_len, key_id);
	tw_wipe(tk, sizeof(tk));
	if (err != TW_OK)
		cli_fail(&c, "key", err);
	if (enc) {
		struct tw_ccmp_tx tx = { pn - 1 };

		err = tw_ccmp_encap(&key, &tx, frame, frame_len, out, sizeof(out), &out_len);
	} else {
		struct tw_ccmp_rx rx;

		tw_ccmp_rx_init(&rx);
		for (unsigned i = 0; i < TW_CCMP_NUM_RC; i++)
			rx.pn[i] = pn;
		err = tw_ccmp_decap(&key, &rx, frame, frame_len, out, sizeof(out), &out_len, &pn);
	}
	tw_ccmp_key_wipe(&key);
	if (err != TW_OK)
		cli_fail(&c, enc ? "encapsulation" : "decapsulation", err);
	cli_print_hex("frame", out, out_len);
	printf("pn=%llu\n", (unsigned long long)pn);
	tw_wipe(out, sizeof(out));
	return 0;
}
