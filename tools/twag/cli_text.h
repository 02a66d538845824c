/*
 * twag CLI — the parsing of option text (argv, hex values, "@FILE"
 * contents, decimal numbers) apart from the process: each function returns
 * TW_OK or an error with one message in err instead of exiting, so the
 * commands (through cli.c) and the fuzz target tests/fuzz/fuzz_hex.c run
 * the same code. A message is what follows "twag CMD: " on stderr; the
 * value parsers leave out the "--OPT: " that cli.c puts before theirs.
 */
#ifndef TWAG_CLI_TEXT_H
#define TWAG_CLI_TEXT_H

#include <stdio.h>

#include "cli.h"
#include "twag/err.h"

/* Room for a value parser's message (the option name is not in it). */
enum { CLI_TEXT_ERR_MAX = 160 };

/*
 * Parses argv[0..argc) as options into c (see cli_parse). Returns TW_OK,
 * or TW_ERR_INVAL with the message in err for an unexpected argument, an
 * unknown, repeated or value-less option, a value given to a flag, or more
 * than CLI_MAX_OPTS options. c's names and values point into argv.
 */
TW_MUST_CHECK int cli_text_args(struct cli *c, const char *cmd, int argc, char **argv,
				const char *const *valued, const char *const *flags,
				char *err, size_t err_len);

/*
 * Reads the one hex value of an "@FILE" stream: white space (space, tab,
 * CR, LF) around it is skipped and at most cap - 1 characters are kept in
 * buf (NUL-terminated, *len of them): a caller sizes cap one past the
 * longest value it accepts, to tell "too long". Returns TW_OK, TW_ERR_IO
 * (a read error) or TW_ERR_DECODE (a second word follows), with the
 * message in err.
 */
TW_MUST_CHECK int cli_text_hex_read(FILE *f, char *buf, size_t cap, size_t *len,
				    char *err, size_t err_len);

/*
 * The hex text v[0..n) (n as cli_text_hex_read reports it, or the
 * argument's length) decoded into out: exactly len octets (_exact), a
 * length in [min, max] that is a multiple of step when step > 1 (_range),
 * or one of lens[] (0-terminated, _oneof). _range and _oneof put the
 * length in *out_len. Either case of hex is accepted. Returns TW_OK or
 * TW_ERR_INVAL with the message in err; out is then unspecified.
 */
TW_MUST_CHECK int cli_text_hex_exact(const char *v, size_t n, uint8_t *out, size_t len,
				     char *err, size_t err_len);
TW_MUST_CHECK int cli_text_hex_range(const char *v, size_t n, uint8_t *out, size_t min,
				     size_t max, size_t step, size_t *out_len, char *err,
				     size_t err_len);
TW_MUST_CHECK int cli_text_hex_oneof(const char *v, size_t n, uint8_t *out,
				     const size_t *lens, size_t *out_len, char *err,
				     size_t err_len);

/* A decimal number in [min, max]: digits only (no sign, no space), no
 * overflow. TW_OK or TW_ERR_INVAL with the message in err. */
TW_MUST_CHECK int cli_text_uint(const char *v, unsigned long min, unsigned long max,
				unsigned long *out, char *err, size_t err_len);

/* Makes msg one line, as the CLI's contract promises: a control character
 * (an argument quoted in it may hold a newline) becomes '?'. */
void cli_text_oneline(char *msg);

#endif
