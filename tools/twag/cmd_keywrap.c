/* twag keywrap — AES key wrap (RFC 3394) and with padding (RFC 5649). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "twag/bytes.h"
#include "twag/keywrap.h"

/* Longest key taken or given back: 4096 octets (512 64-bit blocks). */
enum { KW_MAX = 4096 };

int cmd_keywrap(int argc, char **argv)
{
	static const char *const valued[] = { "kek", "key", "wrapped", NULL };
	static const char *const flags[] = { "pad", NULL };
	static const size_t kek_lens[] = { 16, 24, 32, 0 }; /* AES-128/192/256 */
	struct cli c;
	uint8_t kek[32], in[KW_MAX + 8], out[KW_MAX + 16];
	size_t kek_len, in_len, out_len = 0;
	int err;

	if (argc < 1 || (strcmp(argv[0], "wrap") != 0 && strcmp(argv[0], "unwrap") != 0)) {
		fprintf(stderr, "twag keywrap: expected 'wrap' or 'unwrap'\n");
		return CLI_EXIT_USAGE;
	}
	bool wrap = strcmp(argv[0], "wrap") == 0;
	cli_parse(&c, wrap ? "keywrap wrap" : "keywrap unwrap", argc - 1,
		  argv + 1, valued, flags);
	bool pad = cli_flag(&c, "pad");
	kek_len = cli_hex_oneof(&c, "kek", kek, kek_lens);
	if (wrap) {
		if (cli_get(&c, "wrapped") != NULL)
			cli_usage_error(&c, "wrapped", "not an option of wrap (use --key)");
		/* RFC 3394 §2: n >= 2 64-bit blocks; RFC 5649 §3: any length >= 1. */
		in_len = pad ? cli_hex_range(&c, "key", in, 1, KW_MAX, 1)
			     : cli_hex_range(&c, "key", in, 16, KW_MAX, 8);
		err = pad ? tw_keywrap_wrap_pad(out, sizeof(out), &out_len, kek,
						kek_len, in, in_len)
			  : tw_keywrap_wrap(out, sizeof(out), &out_len, kek,
					    kek_len, in, in_len);
	} else {
		if (cli_get(&c, "key") != NULL)
			cli_usage_error(&c, "key", "not an option of unwrap (use --wrapped)");
		/* a wrapped key is 8 octets longer than the key */
		in_len = cli_hex_range(&c, "wrapped", in, pad ? 16 : 24,
				       KW_MAX + 8, 8);
		err = pad ? tw_keywrap_unwrap_pad(out, sizeof(out), &out_len,
						  kek, kek_len, in, in_len)
			  : tw_keywrap_unwrap(out, sizeof(out), &out_len, kek,
					      kek_len, in, in_len);
	}
	tw_wipe(kek, sizeof(kek));
	if (err != TW_OK) {
		tw_wipe(in, sizeof(in));
		cli_fail(&c, wrap ? "wrap" : "unwrap (integrity check)", err);
	}
	cli_print_hex(wrap ? "wrapped" : "key", out, out_len);
	tw_wipe(in, sizeof(in));
	tw_wipe(out, sizeof(out));
	return 0;
}
