/*
 * Fuzz target: what twagd's logs make of data it does not control
 * (src/server/debug.c, log.c): the per-request debug dump of any datagram
 * (RADIUS attributes, the EAP packet joined from them, EAP-SIM/AKA/AKA'
 * attributes) and the JSON form of any text line.
 *
 * Input: one octet choosing the part, then its data:
 *   sel % 3 == 0  the data as a datagram, dumped with tw_srv_debug_dump;
 *   sel % 3 == 1  the data as a text log line, turned into JSON into an
 *                 output of (sel / 3) * 8 + 3 octets (small ones too);
 *   sel % 3 == 2  the data as NUL-separated operations on a set of debug
 *                 conditions ("a", "d" or "m": add, delete or match; then
 *                 "i" or "c": an IMSI or a client; then the text).
 *
 * Checked against the contract in srv.h and server.h, not the code:
 *   - the conditions against a model kept here: an IMSI is accepted when
 *     it is 6 to 15 digits, a client when tw_srv_addr_parse takes it; one
 *     already there is accepted and not added twice; a 17th is refused;
 *     deleting finds exactly what the model holds; a match is what a
 *     bit-by-bit prefix comparison says (or the IMSI is one of the set);
 *     the text names every IMSI masked;
 *   - the dump is whole log lines only ("ts=" ... "\n"), each at most
 *     1024 octets, with no control character and no octet above 0x7e;
 *     when the datagram decodes (tw_radius_decode), the value of every
 *     attribute that must be elided (User-Password, CHAP-Password,
 *     Tunnel-Password, Message-Authenticator; a Vendor-Specific after its
 *     vendor id and type) leaves no trace: the same datagram with that
 *     value changed gives the same dump, timestamps aside;
 *   - the JSON is one line "{...}\n" within the output's size, or nothing
 *     when the output cannot hold "{}\n"; its strings are closed (the
 *     quotes that are not escaped are even in number) and it holds no
 *     control character but the last newline.
 * Seeds (tests/fuzz/corpus/debug/) were written by hand: an Access-Request
 * with a User-Name, a User-Password, an MS-MPPE key, an AKA'-Challenge
 * EAP-Message and a Message-Authenticator; one with its EAP attribute
 * running past its packet; log lines with quoted values, bare words,
 * numbers and backslashes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../src/server/srv.h"
#include "twag/nai.h"
#include "fuzz_must.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct tw_log_buf lb;

/* The dump in lb with every "ts=...Z " dropped (the clock's part). */
static size_t untimed(char *out, size_t max)
{
	size_t o = 0;

	for (size_t i = 0; i < lb.len && o < max; i++) {
		if ((i == 0 || lb.buf[i - 1] == '\n') && memcmp(lb.buf + i, "ts=", 3) == 0) {
			while (i < lb.len && lb.buf[i] != ' ')
				i++;
			continue;
		}
		out[o++] = lb.buf[i];
	}
	return o;
}

static void dump_checked(const uint8_t *d, size_t n)
{
	size_t start = 0;

	lb.len = 0;
	tw_srv_debug_dump(&lb, "in", "192.0.2.1", d, n);
	MUST(lb.len < sizeof(lb.buf));
	for (size_t i = 0; i < lb.len; i++) {
		unsigned char c = (unsigned char)lb.buf[i];

		if (c == '\n') {
			MUST(i - start < 1024);
			MUST(memcmp(lb.buf + start, "ts=", 3) == 0);
			start = i + 1;
			continue;
		}
		MUST(c >= 0x20 && c < 0x7f);
	}
	MUST(start == lb.len);
}

static void check_dump(const uint8_t *d, size_t n)
{
	static struct tw_radius_pkt p;
	static uint8_t copy[TW_RADIUS_MAX_LEN + 64];
	static char a_text[sizeof(lb.buf)], b_text[sizeof(lb.buf)];
	size_t a_len;

	dump_checked(d, n);
	if (n > sizeof(copy) || tw_radius_decode(&p, d, n) != TW_OK)
		return;
	a_len = untimed(a_text, sizeof(a_text));
	/* what is elided leaves no trace: the dump of the datagram with
	 * such a value changed is the same text */
	for (unsigned i = 0; i < p.n_attrs; i++) {
		const struct tw_radius_attr *a = &p.attrs[i];
		size_t off = (size_t)(tw_radius_value(&p, a) - d), skip = 0;

		if (a->type == 26)
			skip = 6; /* vendor id and type are shown */
		else if (a->type != 2 && a->type != 3 && a->type != 69 && a->type != 80)
			continue;
		if (a->len <= skip)
			continue;
		memcpy(copy, d, n);
		for (size_t k = skip; k < a->len; k++)
			copy[off + k] ^= 0xa5;
		dump_checked(copy, n);
		MUST(untimed(b_text, sizeof(b_text)) == a_len && memcmp(a_text, b_text, a_len) == 0);
	}
}

static void check_json(const uint8_t *d, size_t n, size_t max)
{
	static char out[2048 + 8];
	size_t k;
	unsigned quotes = 0;

	k = tw_log_text_to_json(out, max, (const char *)d, n);
	if (max < 4) {
		MUST(k == 0);
		return;
	}
	MUST(k >= 3 && k <= max);
	MUST(out[0] == '{' && out[k - 2] == '}' && out[k - 1] == '\n');
	for (size_t i = 0; i + 1 < k; i++) {
		unsigned char c = (unsigned char)out[i];

		MUST(c >= 0x20);
		if (c == '\\') {
			i++; /* the escaped one */
			continue;
		}
		if (c == '"')
			quotes++;
	}
	MUST(quotes % 2 == 0);
}

/* ---- the conditions: a model of the set ---------------------------------- */

struct model {
	unsigned n_imsi, n_net;
	char imsi[TW_SRV_DEBUG_MAX][16];
	struct tw_srv_addr net[TW_SRV_DEBUG_MAX];
	unsigned prefix[TW_SRV_DEBUG_MAX];
};

static bool model_imsi_ok(const char *t)
{
	size_t n = strlen(t);

	if (n < 6 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t[i] < '0' || t[i] > '9')
			return false;
	return true;
}

/* bit by bit: a is in net/prefix */
static bool model_in(const struct tw_srv_addr *a, const struct tw_srv_addr *net, unsigned prefix)
{
	if (a->family != net->family)
		return false;
	for (unsigned b = 0; b < prefix; b++)
		if (((a->a[b / 8] >> (7 - b % 8)) ^ (net->a[b / 8] >> (7 - b % 8))) & 1)
			return false;
	return true;
}

/* Each NUL-separated word: "a"/"d"/"m" (add, delete, match), then "i"
 * or "c" (IMSI or client), then the text. */
static void check_conditions(const uint8_t *d, size_t n)
{
	static struct tw_srv_debug g;
	static bool g_ready;
	struct tw_srv_debug_set set;
	struct model m;
	char word[128], err[128], text[2048];
	size_t i = 0;

	if (!g_ready) {
		tw_srv_debug_init(&g);
		g_ready = true;
	}
	memset(&set, 0, sizeof(set));
	memset(&m, 0, sizeof(m));
	while (i < n) {
		size_t k = 0;

		while (i < n && d[i] != 0 && k + 1 < sizeof(word))
			word[k++] = (char)d[i++];
		word[k] = 0;
		while (i < n && d[i] != 0)
			i++;
		i++;
		if (k < 2)
			continue;
		bool imsi = word[1] == 'i';
		const char *t = word + 2;

		if (word[0] == 'a') {
			struct tw_srv_addr a;
			unsigned pl;
			bool ok = imsi ? model_imsi_ok(t) : tw_srv_addr_parse(&a, &pl, t) == TW_OK;
			bool there = false;
			int rc = tw_srv_debug_add(&set, imsi, t, err, sizeof(err));

			for (unsigned j = 0; ok && j < (imsi ? m.n_imsi : m.n_net); j++)
				there |= imsi ? strcmp(m.imsi[j], t) == 0
					      : m.prefix[j] == pl && tw_srv_addr_eq(&m.net[j], &a);
			if (!ok) {
				MUST(rc == TW_ERR_INVAL && err[0] != 0);
			} else if (there) {
				MUST(rc == TW_OK);
			} else if ((imsi ? m.n_imsi : m.n_net) == TW_SRV_DEBUG_MAX) {
				MUST(rc == TW_ERR_RANGE && err[0] != 0);
			} else {
				MUST(rc == TW_OK);
				if (imsi) {
					memcpy(m.imsi[m.n_imsi++], t, strlen(t) + 1);
				} else {
					m.net[m.n_net] = a;
					m.prefix[m.n_net++] = pl;
				}
			}
		} else if (word[0] == 'd') {
			int rc = tw_srv_debug_del(&set, imsi, t);
			struct tw_srv_addr a;
			unsigned pl, j;
			bool parsed = imsi || tw_srv_addr_parse(&a, &pl, t) == TW_OK;

			for (j = 0; parsed && j < (imsi ? m.n_imsi : m.n_net); j++)
				if (imsi ? strcmp(m.imsi[j], t) == 0
					 : m.prefix[j] == pl && tw_srv_addr_eq(&m.net[j], &a))
					break;
			if (!parsed) {
				MUST(rc == TW_ERR_INVAL);
			} else if (j == (imsi ? m.n_imsi : m.n_net)) {
				MUST(rc == TW_ERR_NOTFOUND);
			} else {
				MUST(rc == TW_OK);
				if (imsi) {
					memmove(m.imsi[j], m.imsi[j + 1], (m.n_imsi - j - 1) * 16);
					m.n_imsi--;
				} else {
					memmove(&m.net[j], &m.net[j + 1], (m.n_net - j - 1) * sizeof(m.net[0]));
					memmove(&m.prefix[j], &m.prefix[j + 1],
						(m.n_net - j - 1) * sizeof(m.prefix[0]));
					m.n_net--;
				}
			}
		} else if (word[0] == 'm') {
			struct tw_srv_addr a;
			unsigned pl;
			bool want = false;

			tw_srv_debug_publish(&g, &set);
			if (imsi) {
				for (unsigned j = 0; j < m.n_imsi; j++)
					want |= strcmp(m.imsi[j], t) == 0;
				MUST(tw_srv_debug_match(&g, NULL, t, strlen(t)) == want);
			} else if (tw_srv_addr_parse(&a, &pl, t) == TW_OK) {
				for (unsigned j = 0; j < m.n_net; j++)
					want |= model_in(&a, &m.net[j], m.prefix[j]);
				MUST(tw_srv_debug_match(&g, &a, NULL, 0) == want);
			}
		}
		MUST(set.n_imsi == m.n_imsi && set.n_net == m.n_net);
	}
	/* the text names every entry, IMSIs masked (never 6 digits after
	 * the first 6) */
	tw_srv_debug_text(&set, text, sizeof(text));
	for (unsigned j = 0; j < m.n_imsi; j++) {
		char masked[TW_NAI_MASK_MAX], want[40];

		MUST(tw_nai_mask_imsi(masked, sizeof(masked), m.imsi[j], strlen(m.imsi[j])) == TW_OK);
		snprintf(want, sizeof(want), "imsi=%s", masked);
		MUST(strstr(text, want) != NULL);
	}
	MUST(tw_srv_debug_set_eq(&set, &set));
	if (set.n_net + set.n_imsi > 0) {
		struct tw_srv_debug_set e;

		memset(&e, 0, sizeof(e));
		MUST(!tw_srv_debug_set_eq(&set, &e));
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	if (sel % 3 == 0) {
		check_dump(data, size);
	} else if (sel % 3 == 2) {
		check_conditions(data, size);
	} else {
		/* a text line holds no control characters but its newline
		 * (format_line); any octets are fed all the same */
		if (size > 1024)
			size = 1024;
		check_json(data, size, (size_t)(sel / 3) * 8 + 3);
	}
	return 0;
}
