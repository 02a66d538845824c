/*
 * twag — identity privacy state of the subscriber store: pseudonyms and
 * fast re-authentication contexts (RFC 4187 §4.1.1.7, §5; RFC 4186 §4.2,
 * §5; RFC 9048 §3.3), behind struct tw_eap_identity_ops (eap_method.h).
 *
 * A bounded table in memory (allocated at open; an exhausted table evicts
 * the oldest entries already written, never unwritten ones) is written
 * behind to SQLite by a thread, in one transaction per round: every
 * ident_flush_ms (tw_store_opts, 1 s by default), or sooner when
 * flush_at entries (a quarter of the table, at most STORE_FLUSH_BATCH)
 * are pending, and on close. The thread itself wakes every
 * STORE_FLUSH_MS for its other work. Rounds far apart cost less per
 * row: the rows of a round that share a B-tree page are one page write
 * (to the WAL, then the checkpoint's), and at scale nearly every row has
 * a page of its own, so a round per 100 ms wrote about a page per row.
 * A round sorts its entries by row (sort_batch), so an IMSI's entries of
 * the round are one row write and the rows go in B-tree order.
 * A miss falls back to the database. A removed re-auth id is a tombstone
 * until its row is deleted, so a lookup never finds it again in the
 * database meanwhile.
 *
 * The packet path never waits for SQLite work of the write-behind thread:
 * a round takes the pending entries under the table lock in O(1) (a list
 * splice), writes them with that lock released (the entries being written
 * are not changed meanwhile: a change goes to a copy, see struct
 * ident_ent), and a miss reads through a second connection (st->rd) that
 * a write transaction does not block (WAL). An SQN reservation, a write
 * itself, waits for the one writing connection only until the round
 * commits what it has so far (yield_db), not for the round. Checkpoints
 * run on a third connection from the write-behind thread, so no commit on
 * the packet path copies the WAL back. No allocation on the packet path:
 * the table is one array, chained by index.
 *
 * Re-auth contexts hold K_encr, K_aut, MK / K_re: in memory and on disk
 * they exist only sealed under keys from the KEK (AES-256-CTR and
 * HMAC-SHA-256, seal_state; fixed serialisation below); they are opened per lookup
 * into the caller's struct.
 *
 * Pseudonyms are one-time (§4.1.1.7): the newest two per IMSI are kept (the
 * peer may not have received the newest one), older ones are pruned. So
 * are re-auth ids (RFC 4187 §5.4: the peer uses the last next_reauth_id
 * it received; the one before covers a lost message): every full
 * authentication stores a fresh one. On disk (schema 3) an IMSI's four
 * ids are one row of table ident, keyed by the IMSI: the ids this store
 * mints carry their IMSI encrypted (mint_body), so a miss finds its row by
 * that key, and a write-behind round reads and writes one row per
 * attach, with no other index to keep (schema 2 kept a row per id with
 * three indexes: about three times the SQLite work per attach).
 *
 * With st->ident_volatile none of it reaches the database: a pseudonym is
 * not stored at all (its lookup decrypts it: it carries its IMSI), a
 * re-auth context goes into the table as a clean entry (put_memory),
 * which no round writes and which is dropped, oldest first, when the
 * table needs room; a lookup that misses memory misses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "../common/oa_index.h"
#include "store_internal.h"

#include "twag/bytes.h"
#include "twag/hmac.h"
#include "twag/mem.h"

/*
 * Re-auth state serialisation (format 2, 129 octets, then sealed: seal_state):
 *   0 format(2) | 1 method | 2 imsi_len | 3..17 imsi (zero-padded) |
 *   18..19 counter (be16) | 20..35 k_encr | 36 k_aut_len | 37..68 k_aut |
 *   69..88 mk | 89..120 k_re | 121..128 gen (be64)
 * gen is the subscriber row's generation when the state was stored: a
 * replace (a new card, new keys) changes it, and the old card's fast
 * re-authentication chain ends there (inside the wrap: not forgeable).
 */
enum { SER_FORMAT = 2, RND_BUF = 4096, RND_DIRECT = 64 };
/* minted ids (mint_body): octet 9 flag, the mint minute's range, and how
 * far ahead of the clock a mint time may be (the clock set back) */
enum { ID_TIMED = 0x80, ID_MINUTE_MASK = 0xffffff, ID_SKEW_MIN = 10 };

/* Wall-clock µs for identity stamps and the re-auth TTL (seconds): the
 * coarse clock (a few ms, one memory read; stamp() keeps stamps strictly
 * increasing), as every full authentication stamps two identities. */
static int64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void ser(const struct tw_eap_reauth_state *s, int64_t gen,
		uint8_t b[static STORE_REAUTH_SER_LEN])
{
	memset(b, 0, STORE_REAUTH_SER_LEN);
	b[0] = SER_FORMAT;
	b[1] = s->method;
	b[2] = (uint8_t)s->imsi_len;
	memcpy(b + 3, s->imsi, s->imsi_len);
	tw_store_be16(b + 18, s->counter);
	memcpy(b + 20, s->k_encr, 16);
	b[36] = (uint8_t)s->k_aut_len;
	memcpy(b + 37, s->k_aut, 32);
	memcpy(b + 69, s->mk, 20);
	memcpy(b + 89, s->k_re, 32);
	tw_store_be64(b + 121, (uint64_t)gen);
}

static bool digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool state_ok(const struct tw_eap_reauth_state *s)
{
	return (s->method == 18 || s->method == 23 || s->method == 50) &&
	       s->imsi_len >= TW_IMSI_MIN_LEN && s->imsi_len <= TW_IMSI_MAX_LEN &&
	       digits(s->imsi, s->imsi_len) && (s->k_aut_len == 16 || s->k_aut_len == 32);
}

static int deser(const uint8_t b[static STORE_REAUTH_SER_LEN], struct tw_eap_reauth_state *s,
		 int64_t *gen)
{
	memset(s, 0, sizeof(*s));
	*gen = (int64_t)tw_load_be64(b + 121);
	if (b[0] != SER_FORMAT || b[2] > TW_IMSI_MAX_LEN)
		return TW_ERR_DECODE;
	s->method = b[1];
	s->imsi_len = b[2];
	memcpy(s->imsi, b + 3, s->imsi_len);
	s->counter = tw_load_be16(b + 18);
	memcpy(s->k_encr, b + 20, 16);
	s->k_aut_len = b[36];
	memcpy(s->k_aut, b + 37, 32);
	memcpy(s->mk, b + 69, 20);
	memcpy(s->k_re, b + 89, 32);
	if (!state_ok(s)) {
		tw_eap_reauth_state_wipe(s);
		return TW_ERR_DECODE;
	}
	return TW_OK;
}


static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- minted ids: the IMSI inside, encrypted (schema 3) ------------------- */

/*
 * The body of every id this store mints (ops->mint_body, between the
 * leading digit and the realm) is one AES-128 block under st->id_key in
 * 26 characters [0-9a-v] (5 bits each, most significant first; the 2 bits
 * left over are zero):
 *   0 IMSI length | 1..8 IMSI digits, two per octet, high nibble first,
 *   0xf fill (BCD) | 9 the id's leading digit (ASCII) | 0x80 | 10..12
 *   the minute it was minted (Unix minutes, big-endian, mod 2^24: a
 *   period of 31 years) | 13..15 a per-store counter (mod 2^24) from a
 *   random start, drawn again in a forked child
 * (Ids minted by earlier versions hold the bare digit, or 0 before the
 * digit was bound, in octet 9 and random octets 10..15: no mint time.)
 * So a look-up that misses memory finds the id's row by the IMSI it
 * decrypts to (the one key of table ident), and compares the id with
 * those the row holds: the encryption names the row, it proves nothing.
 * (With ident_volatile there is no row: a pseudonym that decrypts to a
 * well-formed IMSI under its own leading digit is taken as that IMSI's
 * for pseudonym_ttl seconds after its mint time; one without a mint time
 * is not taken. It only selects the subscriber a full authentication then
 * challenges.)
 * The block cipher makes every id of an IMSI look unrelated to the others
 * (RFC 4187 §4.1.1.7: pseudonyms must not be linkable); ids of two IMSIs
 * never collide (a permutation), nor do two of one IMSI from one store
 * within 2^24 mints of a minute (the counter: 3 random octets would
 * repeat once in about 4,000 mints). Two stores on one KEK start their
 * counters at random points. This is the scheme of 3GPP TS
 * 33.234 §6.1.1.1 (an encrypted IMSI as the temporary identity), with a
 * random fill in the block instead of ECB over the bare IMSI.
 */
static const char b32_alphabet[] = "0123456789abcdefghijklmnopqrstuv";

/* Base32 digit values plus one (0: not a digit of this alphabet): a table,
 * not branches, so that decoding random ids does not mispredict */
static const uint8_t b32_tab[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13,
	['d'] = 14, ['e'] = 15, ['f'] = 16, ['g'] = 17, ['h'] = 18, ['i'] = 19,
	['j'] = 20, ['k'] = 21, ['l'] = 22, ['m'] = 23, ['n'] = 24, ['o'] = 25,
	['p'] = 26, ['q'] = 27, ['r'] = 28, ['s'] = 29, ['t'] = 30, ['u'] = 31,
	['v'] = 32
};

static void b32_enc(const uint8_t in[16], uint8_t out[STORE_ID_BODY_LEN])
{
	unsigned acc = 0, bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < 16; i++) {
		acc = (acc << 8 | in[i]) & 0xfff;
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = (uint8_t)b32_alphabet[(acc >> bits) & 31];
		}
	}
	out[o] = (uint8_t)b32_alphabet[(acc << (5 - bits)) & 31]; /* bits == 3 */
}

static bool b32_dec(const uint8_t in[STORE_ID_BODY_LEN], uint8_t out[16])
{
	unsigned acc = 0, bits = 0, bad = 0;
	size_t o = 0;

	for (size_t i = 0; i < STORE_ID_BODY_LEN; i++) {
		unsigned v = b32_tab[in[i]];

		bad |= v == 0;
		acc = (acc << 5 | ((v - 1) & 31)) & 0x1fff;
		bits += 5;
		if (bits >= 8 && o < 16) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* one spelling per block: the 2 bits past the 128 are zero */
	return !bad && o == 16 && bits == 2 && (acc & 3) == 0;
}

/* The keys of schema 3 from the KEK, each HMAC-SHA-256(KEK, its label):
 * minted ids (AES-128, the first 16 octets), re-auth state (AES-256-CTR)
 * and its tags (HMAC-SHA-256). */
static const char label_id[] = "twag store: key of minted identities (schema 3)";
static const char label_state[] = "twag store: key of re-auth state (schema 3)";
static const char label_state_mac[] = "twag store: MAC key of re-auth state (schema 3)";

int store_ident_key(struct tw_store *st, const uint8_t *kek, size_t kek_len)
{
	uint8_t k[32];
	int rc;

	tw_hmac_sha256(k, kek, kek_len, (const uint8_t *)label_id, sizeof(label_id) - 1);
	rc = tw_aes_init(&st->id_key, k, 16);
	tw_hmac_sha256(k, kek, kek_len, (const uint8_t *)label_state, sizeof(label_state) - 1);
	if (rc == TW_OK)
		rc = tw_aes_init(&st->state_key, k, 32);
	tw_hmac_sha256(k, kek, kek_len, (const uint8_t *)label_state_mac,
		       sizeof(label_state_mac) - 1);
	tw_hmac_sha256_init(&st->state_mac_key, k, 32);
	tw_wipe(k, sizeof(k));
	return rc;
}

static int random_cb(void *arg, uint8_t *out, size_t len);
static _Atomic unsigned fork_gen;

/* The next value of octets 13..15 (the counter seeded at the first mint
 * of this store in this process) */
static int mint_counter(struct tw_store *st, uint32_t *v)
{
	unsigned gen = atomic_load(&fork_gen);

	if (atomic_load(&st->mint_gen) != gen) {
		uint8_t r[4];
		int rc = random_cb(st, r, sizeof(r));

		if (rc != TW_OK)
			return rc;
		atomic_store(&st->mint_ctr, (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 |
						    (uint32_t)r[2] << 8 | r[3]);
		atomic_store(&st->mint_gen, gen);
		tw_wipe(r, sizeof(r));
	}
	*v = atomic_fetch_add(&st->mint_ctr, 1);
	return TW_OK;
}

static int mint_body(void *arg, char digit, const char *imsi, size_t imsi_len, uint8_t *out,
		     size_t max, size_t *out_len)
{
	struct tw_store *st = arg;
	uint8_t b[16], c[16];
	uint32_t ctr = 0;
	int rc;

	if (st == NULL || imsi == NULL || out == NULL || out_len == NULL ||
	    imsi_len < TW_IMSI_MIN_LEN || imsi_len > TW_IMSI_MAX_LEN || !digits(imsi, imsi_len) ||
	    digit < '0' || digit > '9')
		return TW_ERR_INVAL;
	if (max < STORE_ID_BODY_LEN)
		return TW_ERR_OVERFLOW;
	memset(b, 0xff, 9);
	b[0] = (uint8_t)imsi_len;
	for (size_t i = 0; i < imsi_len; i++) {
		unsigned d = (unsigned)(imsi[i] - '0');

		b[1 + i / 2] = (uint8_t)(i % 2 ? (b[1 + i / 2] & 0xf0) | d : d << 4 | 0x0f);
	}
	uint32_t minute = (uint32_t)(wall_us() / 60000000) & ID_MINUTE_MASK;

	b[9] = (uint8_t)digit | ID_TIMED;
	b[10] = (uint8_t)(minute >> 16);
	b[11] = (uint8_t)(minute >> 8);
	b[12] = (uint8_t)minute;
	rc = mint_counter(st, &ctr);
	b[13] = (uint8_t)(ctr >> 16);
	b[14] = (uint8_t)(ctr >> 8);
	b[15] = (uint8_t)ctr;
	if (rc == TW_OK) {
		tw_aes_encrypt(&st->id_key, c, b);
		b32_enc(c, out);
		*out_len = STORE_ID_BODY_LEN;
	}
	tw_wipe(b, sizeof(b));
	return rc;
}

/* The IMSI an id minted here carries (its leading digit, the body, then
 * nothing or "@realm"); false for any other id, and for one whose leading
 * digit is not the one minted into it (an id minted before the digit was
 * bound has 0 there: accepted unless ident_volatile, where no row keeps
 * the exact id). *minute: its mint time (Unix minutes mod 2^24), -1 for an
 * id minted without one. */
static bool id_open(const struct tw_store *st, const uint8_t *id, size_t len,
		    char imsi[TW_IMSI_MAX_LEN + 1], size_t *imsi_len, int32_t *minute)
{
	uint8_t c[16], b[16];
	bool ok;
	size_t n;

	if (len < 1 + STORE_ID_BODY_LEN ||
	    (len > 1 + STORE_ID_BODY_LEN && id[1 + STORE_ID_BODY_LEN] != '@') ||
	    !b32_dec(id + 1, c))
		return false;
	tw_aes_decrypt(&st->id_key, b, c);
	n = b[0];
	ok = n >= TW_IMSI_MIN_LEN && n <= TW_IMSI_MAX_LEN &&
	     (b[9] == (id[0] | ID_TIMED) || b[9] == id[0] || (b[9] == 0 && !st->ident_volatile));
	*minute = ok && b[9] == (id[0] | ID_TIMED)
			  ? (int32_t)((uint32_t)b[10] << 16 | (uint32_t)b[11] << 8 | b[12])
			  : -1;
	for (size_t i = 0; ok && i < 16; i++) {
		unsigned d = i % 2 ? b[1 + i / 2] & 15 : b[1 + i / 2] >> 4;

		if (i < n) {
			ok = d <= 9;
			imsi[i] = (char)('0' + d);
		} else {
			ok = d == 15;
		}
	}
	if (ok) {
		imsi[n] = '\0';
		*imsi_len = n;
	}
	tw_wipe(b, sizeof(b));
	return ok;
}

static bool id_imsi(const struct tw_store *st, const uint8_t *id, size_t len,
		    char imsi[TW_IMSI_MAX_LEN + 1], size_t *imsi_len)
{
	int32_t minute;

	return id_open(st, id, len, imsi, imsi_len, &minute);
}

/* ident_volatile: the IMSI of a pseudonym minted here no longer ago than
 * pseudonym_ttl (and not more than ID_SKEW_MIN minutes ahead: a clock set
 * back); an id without a mint time never expired, so it is not taken. */
static bool id_imsi_fresh(const struct tw_store *st, const uint8_t *id, size_t len,
			  char imsi[TW_IMSI_MAX_LEN + 1], size_t *imsi_len)
{
	int32_t minute;

	if (!id_open(st, id, len, imsi, imsi_len, &minute) || minute < 0)
		return false;
	uint32_t now = (uint32_t)(wall_us() / 60000000) & ID_MINUTE_MASK;
	uint32_t age = (now - (uint32_t)minute) & ID_MINUTE_MASK;

	return age <= st->pseudonym_ttl / 60 || age >= ID_MINUTE_MASK + 1 - ID_SKEW_MIN;
}

/* The id was minted here for exactly this IMSI. */
static bool id_is_of(const struct tw_store *st, const uint8_t *id, size_t len, const char *imsi,
		     size_t imsi_len)
{
	char got[TW_IMSI_MAX_LEN + 1];
	size_t n = 0;

	return id_imsi(st, id, len, got, &n) && n == imsi_len && memcmp(got, imsi, n) == 0;
}

/*
 * Re-auth state at rest (schema 3), encrypt-then-MAC: AES-256-CTR under
 * one key from the KEK with a random 128-bit initial counter block, then
 * HMAC-SHA-256 under another over len(id) | id | IV | ciphertext. Stored:
 * IV | ciphertext | tag (STORE_REAUTH_WRAP_LEN). A random 128-bit IV lets
 * a gateway seal far more states under one KEK than the 2^32 that 96-bit
 * GCM IVs allow (SP 800-38D §8.3), and a repeated IV would not weaken the
 * tag. The id is authenticated: a state moved to another id does not
 * open. This replaces the RFC 5649 wrap of schema 2, which took 102
 * dependent AES block operations per state on the packet path.
 */
static void state_tag(struct tw_store *st, const uint8_t *id, size_t id_len,
		      const uint8_t sealed[STORE_REAUTH_WRAP_LEN], uint8_t tag[32])
{
	struct tw_hmac_sha256_ctx h = st->state_mac_key;
	uint8_t n = (uint8_t)id_len;

	tw_hmac_sha256_update(&h, &n, 1);
	tw_hmac_sha256_update(&h, id, id_len);
	tw_hmac_sha256_update(&h, sealed, 16 + STORE_REAUTH_SER_LEN);
	tw_hmac_sha256_final(&h, tag);
	tw_hmac_sha256_wipe(&h);
}

static int seal_state(struct tw_store *st, const uint8_t *id, size_t id_len,
		      const uint8_t plain[STORE_REAUTH_SER_LEN],
		      uint8_t out[STORE_REAUTH_WRAP_LEN])
{
	int rc = random_cb(st, out, 16);

	if (rc != TW_OK)
		return rc;
	tw_aes_ctr(&st->state_key, out, out + 16, plain, STORE_REAUTH_SER_LEN);
	state_tag(st, id, id_len, out, out + 16 + STORE_REAUTH_SER_LEN);
	return TW_OK;
}

/* TW_ERR_AUTH when the tag does not verify (another KEK, another id, a
 * changed octet): nothing is decrypted then. */
static int open_state(struct tw_store *st, const uint8_t *id, size_t id_len,
		      const uint8_t in[STORE_REAUTH_WRAP_LEN],
		      uint8_t plain[STORE_REAUTH_SER_LEN])
{
	uint8_t tag[32];
	bool ok;

	state_tag(st, id, id_len, in, tag);
	ok = tw_ct_eq(tag, in + 16 + STORE_REAUTH_SER_LEN, 32);
	tw_wipe(tag, sizeof(tag));
	if (!ok)
		return TW_ERR_AUTH;
	tw_aes_ctr(&st->state_key, in, plain, in + 16, STORE_REAUTH_SER_LEN);
	return TW_OK;
}

/* ---- rows of table ident (one per IMSI) ---------------------------------- */

/* A row in memory: slot 0 the newest; len 0 an empty slot. */
struct ident_row {
	struct {
		uint8_t id[TW_EAP_ID_MAX];
		size_t len;
	} p[STORE_PSEUDONYMS_KEPT];
	struct {
		uint8_t id[TW_EAP_ID_MAX];
		size_t len;
		uint8_t state[STORE_REAUTH_WRAP_LEN];
		int64_t t;
	} r[STORE_REAUTH_KEPT];
};

/*
 * Row value (schema 4), one blob: octet 0 the format (1); then for each
 * pseudonym slot its id's length (0: empty) and the id; then for each
 * re-auth slot its id's length and the id and, when not empty, the sealed
 * state (STORE_REAUTH_WRAP_LEN) and when it was stored (wall µs, be64).
 * One integer key and one value make a write-behind round about half the
 * SQLite work of schema 3's text key and eight columns.
 */
enum {
	ROW_FORMAT = 1,
	ROW_MAX = 1 + STORE_PSEUDONYMS_KEPT * (1 + TW_EAP_ID_MAX) +
		  STORE_REAUTH_KEPT * (1 + TW_EAP_ID_MAX + STORE_REAUTH_WRAP_LEN + 8),
};

int64_t store_ident_row_key(const char *imsi, size_t n)
{
	int64_t v = 0;

	if (n < TW_IMSI_MIN_LEN || n > TW_IMSI_MAX_LEN || !digits(imsi, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (imsi[i] - '0');
	/* the length in front keeps leading zeros apart (001.. and 01..) */
	return (int64_t)n * 1000000000000000LL + v;
}

static size_t row_enc(const struct ident_row *row, uint8_t b[static ROW_MAX])
{
	size_t o = 0;

	b[o++] = ROW_FORMAT;
	for (int i = 0; i < STORE_PSEUDONYMS_KEPT; i++) {
		b[o++] = (uint8_t)row->p[i].len;
		memcpy(b + o, row->p[i].id, row->p[i].len);
		o += row->p[i].len;
	}
	for (int i = 0; i < STORE_REAUTH_KEPT; i++) {
		b[o++] = (uint8_t)row->r[i].len;
		if (row->r[i].len == 0)
			continue;
		memcpy(b + o, row->r[i].id, row->r[i].len);
		o += row->r[i].len;
		memcpy(b + o, row->r[i].state, STORE_REAUTH_WRAP_LEN);
		o += STORE_REAUTH_WRAP_LEN;
		tw_store_be64(b + o, (uint64_t)row->r[i].t);
		o += 8;
	}
	return o;
}

/* A value not of this layout (another format, a length past the end or
 * over TW_EAP_ID_MAX, octets left over) decodes as a row with every slot
 * empty: its ids are not found, their peers authenticate fully. */
static bool row_dec(const uint8_t *b, size_t n, struct ident_row *row)
{
	size_t o = 1;

	memset(row, 0, sizeof(*row));
	if (b == NULL || n < 1 || b[0] != ROW_FORMAT)
		return false;
	for (int i = 0; i < STORE_PSEUDONYMS_KEPT; i++) {
		size_t len;

		if (o >= n || (len = b[o]) > TW_EAP_ID_MAX || n - o - 1 < len)
			goto bad;
		memcpy(row->p[i].id, b + o + 1, len);
		row->p[i].len = len;
		o += 1 + len;
	}
	for (int i = 0; i < STORE_REAUTH_KEPT; i++) {
		size_t len;

		if (o >= n || (len = b[o]) > TW_EAP_ID_MAX)
			goto bad;
		o++;
		if (len == 0)
			continue;
		if (n - o < len + STORE_REAUTH_WRAP_LEN + 8)
			goto bad;
		memcpy(row->r[i].id, b + o, len);
		row->r[i].len = len;
		o += len;
		memcpy(row->r[i].state, b + o, STORE_REAUTH_WRAP_LEN);
		o += STORE_REAUTH_WRAP_LEN;
		row->r[i].t = (int64_t)tw_load_be64(b + o);
		o += 8;
	}
	if (o == n)
		return true;
bad:
	tw_wipe(row, sizeof(*row));
	return false;
}

int store_ident_check_row(struct tw_store *st, int64_t key, const uint8_t *b, size_t n,
			  char *why, size_t why_len)
{
	struct ident_row row;
	uint8_t plain[STORE_REAUTH_SER_LEN];
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t len = key > 0 ? (size_t)(key / 1000000000000000LL) : 0;
	int64_t v = key > 0 ? key % 1000000000000000LL : 0;
	int rc = TW_OK;

	why[0] = '\0';
	if (len < TW_IMSI_MIN_LEN || len > TW_IMSI_MAX_LEN) {
		snprintf(why, why_len, "row key %lld names no IMSI", (long long)key);
		return TW_ERR_DECODE;
	}
	for (size_t i = len; i-- > 0; v /= 10)
		imsi[i] = (char)('0' + v % 10);
	imsi[len] = '\0';
	if (v != 0 || store_ident_row_key(imsi, len) != key) {
		snprintf(why, why_len, "row key %lld names no IMSI", (long long)key);
		return TW_ERR_DECODE;
	}
	if (!row_dec(b, n, &row)) {
		snprintf(why, why_len, "identity row of %.5s... does not decode (%zu octets)", imsi, n);
		return TW_ERR_DECODE;
	}
	for (int i = 0; i < STORE_PSEUDONYMS_KEPT && rc == TW_OK; i++)
		if (row.p[i].len != 0 && !id_is_of(st, row.p[i].id, row.p[i].len, imsi, len)) {
			snprintf(why, why_len, "identity row of %.5s...: pseudonym %d not minted "
				 "for it under this KEK", imsi, i);
			rc = TW_ERR_AUTH;
		}
	for (int i = 0; i < STORE_REAUTH_KEPT && rc == TW_OK; i++) {
		if (row.r[i].len == 0)
			continue;
		if (!id_is_of(st, row.r[i].id, row.r[i].len, imsi, len) ||
		    open_state(st, row.r[i].id, row.r[i].len, row.r[i].state, plain) != TW_OK) {
			snprintf(why, why_len, "identity row of %.5s...: re-auth state %d does not "
				 "open under this KEK", imsi, i);
			rc = TW_ERR_AUTH;
		}
	}
	tw_wipe(plain, sizeof(plain));
	tw_wipe(&row, sizeof(row));
	return rc;
}

/* The row of key through q (a "SELECT v FROM ident WHERE k = ?1"
 * statement) into *row, all slots empty when there is none. */
static int row_load(sqlite3_stmt *q, int64_t key, struct ident_row *row)
{
	int rc;

	memset(row, 0, sizeof(*row));
	sqlite3_bind_int64(q, 1, key);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		const uint8_t *b = sqlite3_column_blob(q, 0); /* before _bytes */

		row_dec(b, (size_t)sqlite3_column_bytes(q, 0), row);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(q);
	return rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
}

/* The row back (db_lock held, in the round's transaction); deleted when
 * every slot is empty. */
static int row_save(struct tw_store *st, int64_t key, const struct ident_row *row)
{
	sqlite3_stmt *q = st->id_q.put;
	uint8_t b[ROW_MAX];
	size_t n = 0;
	bool any = false;
	int rc;

	for (int i = 0; i < 2; i++)
		any = any || row->p[i].len || row->r[i].len;
	if (!any)
		q = st->id_q.del;
	sqlite3_bind_int64(q, 1, key);
	if (any) {
		n = row_enc(row, b);
		sqlite3_bind_blob(q, 2, b, (int)n, SQLITE_STATIC);
	}
	rc = sqlite3_step(q);
	sqlite3_reset(q);
	tw_wipe(b, n);
	return rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
}

/* One id column of a schema 3 row (NULL or out of range: empty). */
static void col_id3(sqlite3_stmt *q, int c, uint8_t *id, size_t *len)
{
	const void *b = sqlite3_column_blob(q, c);
	size_t n = (size_t)sqlite3_column_bytes(q, c);

	*len = 0;
	if (b != NULL && n > 0 && n <= TW_EAP_ID_MAX) {
		memcpy(id, b, n);
		*len = n;
	}
}

int store_ident_migrate_3(struct tw_store *st, char *errbuf, size_t errbuf_len)
{
	sqlite3_stmt *q = NULL, *w = NULL;
	struct ident_row row;
	uint8_t b[ROW_MAX];
	int rc;

	rc = sqlite3_prepare_v2(st->db,
				"SELECT imsi, p0, p1, r0, r0_state, r0_t, r1, r1_state, r1_t"
				" FROM ident_3", -1, &q, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(st->db, "INSERT INTO ident (k, v) VALUES (?1, ?2)", -1,
					&w, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *imsi = (const char *)sqlite3_column_text(q, 0);
		int64_t k = imsi != NULL
			? store_ident_row_key(imsi, (size_t)sqlite3_column_bytes(q, 0)) : -1;
		bool any = false;
		size_t n;

		rc = SQLITE_OK;
		if (k < 0)
			continue; /* no IMSI of ours: no id of ours names it */
		memset(&row, 0, sizeof(row));
		for (int i = 0; i < 2; i++) {
			col_id3(q, 1 + i, row.p[i].id, &row.p[i].len);
			col_id3(q, 3 + 3 * i, row.r[i].id, &row.r[i].len);
			if (sqlite3_column_bytes(q, 4 + 3 * i) == STORE_REAUTH_WRAP_LEN &&
			    sqlite3_column_blob(q, 4 + 3 * i) != NULL)
				memcpy(row.r[i].state, sqlite3_column_blob(q, 4 + 3 * i),
				       STORE_REAUTH_WRAP_LEN);
			else
				row.r[i].len = 0; /* no state of ours: the slot goes */
			row.r[i].t = sqlite3_column_int64(q, 5 + 3 * i);
			any = any || row.p[i].len || row.r[i].len;
		}
		if (!any)
			continue;
		n = row_enc(&row, b);
		sqlite3_bind_int64(w, 1, k);
		sqlite3_bind_blob(w, 2, b, (int)n, SQLITE_STATIC);
		rc = sqlite3_step(w) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(w);
		tw_wipe(b, n);
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	tw_wipe(&row, sizeof(row));
	if (rc != SQLITE_OK)
		store_say(errbuf, errbuf_len, "migrating the identity table: %s",
		    sqlite3_errmsg(st->db));
	sqlite3_finalize(q);
	sqlite3_finalize(w);
	if (rc == SQLITE_OK && sqlite3_exec(st->db, "DROP TABLE ident_3", NULL, NULL, NULL) !=
	    SQLITE_OK) {
		store_say(errbuf, errbuf_len, "migrating the identity table: %s",
		    sqlite3_errmsg(st->db));
		rc = SQLITE_ERROR;
	}
	return rc == SQLITE_OK ? TW_OK : TW_ERR_IO;
}

static bool slot_is(const uint8_t *id, size_t len, const uint8_t *key, size_t key_len)
{
	return len != 0 && len == key_len && memcmp(id, key, len) == 0;
}

/* ---- the table (t->lock held) ---------------------------------------------- */

static struct ident_table *tab(struct tw_store *st)
{
	return &st->id;
}

static uint64_t hash_of(const struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len)
{
	return store_hash(st, kind, key, len);
}

/* The index: open addressing over t->slots (oa_index.h). */
static uint32_t home_of(const struct ident_table *t, uint64_t h)
{
	return tw_oa_home(h, t->nslots - 1);
}

static void list_push(struct ident_table *t, struct ident_list *l, int32_t i)
{
	struct ident_link *e = &t->link[i];

	e->lnext = -1;
	e->lprev = l->tail;
	if (l->tail >= 0)
		t->link[l->tail].lnext = i;
	else
		l->head = i;
	l->tail = i;
	l->n++;
}

static void list_del(struct ident_table *t, struct ident_list *l, int32_t i)
{
	struct ident_link *e = &t->link[i];

	if (e->lprev >= 0)
		t->link[e->lprev].lnext = e->lnext;
	else
		l->head = e->lnext;
	if (e->lnext >= 0)
		t->link[e->lnext].lprev = e->lprev;
	else
		l->tail = e->lprev;
	e->lprev = e->lnext = -1;
	l->n--;
}

/* Appends all of src to dst and empties src: O(1). */
static void list_splice(struct ident_table *t, struct ident_list *dst, struct ident_list *src)
{
	if (src->head < 0)
		return;
	if (dst->tail >= 0) {
		t->link[dst->tail].lnext = src->head;
		t->link[src->head].lprev = dst->tail;
	} else {
		dst->head = src->head;
	}
	dst->tail = src->tail;
	dst->n += src->n;
	src->head = src->tail = -1;
	src->n = 0;
}

static int32_t find(const struct ident_table *t, uint64_t h, uint8_t kind, const uint8_t *key,
		    size_t len)
{
	const uint32_t mask = t->nslots - 1;
	const uint64_t hb = tw_oa_tag(h);
	uint64_t v;

	for (uint32_t s = home_of(t, h); (v = t->slots[s]) != 0; s = (s + 1) & mask) {
		const struct ident_ent *e;

		if (tw_oa_tag(v) != hb)
			continue;
		e = &t->ent[tw_oa_entry(v)];
		if (e->kind == kind && e->key_len == len && memcmp(e->key, key, len) == 0)
			return (int32_t)tw_oa_entry(v);
	}
	return -1;
}

static void hash_link(struct ident_table *t, int32_t i, uint64_t h)
{
	t->link[i].home = tw_oa_put(t->slots, t->nslots - 1, h, (uint32_t)i) + 1;
	t->ent[i].linked = 1;
}

static void hash_unlink(struct ident_table *t, int32_t i)
{
	/* home 0: not indexed (cannot be for a linked entry) */
	if (t->link[i].home != 0)
		(void)tw_oa_del(t->slots, t->nslots - 1, t->link[i].home - 1, (uint32_t)i);
	t->link[i].home = 0;
	t->ent[i].linked = 0;
}

static bool is_pending(const struct ident_table *t, const struct ident_ent *e)
{
	return e->batch == t->seq;
}

static bool is_clean(const struct ident_table *t, const struct ident_ent *e)
{
	return e->batch <= t->durable;
}

/* The octets of an entry's value its kind uses (the rest stays zero). */
static size_t val_size(uint8_t kind)
{
	return kind == IDENT_REAUTH ? sizeof(((struct ident_ent *)0)->v.r)
				    : sizeof(((struct ident_ent *)0)->v.p);
}

/* An entry back to all zero, writing only what its kind and key use (a
 * whole entry is 8 cache lines; a pseudonym's uses 2 or 3): entries are
 * zero when never used, and each use writes within these bounds. */
static void ent_wipe(struct ident_ent *e)
{
	tw_wipe(e->key, e->key_len);
	tw_wipe(&e->v, val_size(e->kind));
	e->kind = e->tomb = e->linked = e->key_len = 0;
	e->batch = 0;
	e->created = 0;
}

/* Frees clean entry i. A tombstone leaving memory makes rows read before
 * unusable for caching (its row is gone; see lookup). */
static void drop_clean(struct ident_table *t, int32_t i)
{
	struct ident_ent *e = &t->ent[i];

	list_del(t, &t->clean, i);
	if (e->linked)
		hash_unlink(t, i);
	if (e->tomb)
		t->gone++;
	ent_wipe(e);
	list_push(t, &t->free, i);
}

/* A free entry, off every list and out of the index: from the free list,
 * else one never used (the table's pages are touched as it fills), else
 * the oldest clean one. -1 when every entry is waiting to be written. */
static int32_t alloc_ent(struct ident_table *t)
{
	int32_t i = t->free.head;

	if (i < 0 && t->fresh < t->cap) {
		i = (int32_t)t->fresh++;
		t->link[i].lprev = t->link[i].lnext = -1; /* home 0: zero at start */
		return i;
	}
	if (i < 0) {
		i = t->clean.head;
		if (i < 0)
			return -1;
		drop_clean(t, i);
	}
	list_del(t, &t->free, i);
	return i;
}

/* A new entry for (kind, key), in the index; not on a list. */
static int32_t new_ent(struct ident_table *t, uint64_t h, uint8_t kind, const uint8_t *key,
		       size_t len)
{
	int32_t i = alloc_ent(t);
	struct ident_ent *e;

	if (i < 0)
		return -1;
	e = &t->ent[i];
	e->kind = kind;
	e->key_len = (uint8_t)len;
	memcpy(e->key, key, len);
	hash_link(t, i, h);
	return i;
}

/* Strictly increasing creation stamps (µs): ties would make "the newest two
 * pseudonyms" ambiguous. */
static int64_t stamp(void)
{
	static _Atomic int64_t last;
	int64_t now = wall_us(), prev = atomic_load(&last);

	for (;;) {
		int64_t want = now > prev ? now : prev + 1;

		if (atomic_compare_exchange_weak(&last, &prev, want))
			return want;
	}
}

static int flush_round(struct tw_store *st, bool partial, bool take);

/* A round ended (flush_lock held): wakes the stores waiting for room. */
static void round_ended(struct ident_table *t)
{
	pthread_mutex_lock(&t->lock);
	t->rounds_ended++;
	if (atomic_load(&t->room_waiters) > 0)
		pthread_cond_broadcast(&t->room);
	pthread_mutex_unlock(&t->lock);
}

static bool has_room(const struct ident_table *t)
{
	return t->free.head >= 0 || t->fresh < t->cap || t->clean.head >= 0;
}

/*
 * Every entry is waiting to be written (t->lock held; released on
 * return). With no round running, runs a partial one itself (the first
 * IDENT_PARTIAL entries: room, not the whole backlog). Else waits for room
 * only: the round sees room_waiters and commits what it has written so
 * far, which makes those entries clean (evictable), instead of making
 * this store wait for the rest of the round; or for the round's end
 * (room or not), bounded. TW_OK (try again) or TW_ERR_IO.
 */
static int wait_room(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	uint64_t ended = t->rounds_ended;
	struct timespec ts;
	int rc = 0;

	atomic_fetch_add(&t->n_full, 1);
	if (pthread_mutex_trylock(&t->flush_lock) == 0) {
		pthread_mutex_unlock(&t->lock);
		rc = flush_round(st, true, true);
		round_ended(t);
		pthread_mutex_unlock(&t->flush_lock);
		return rc == TW_OK ? TW_OK : TW_ERR_IO;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 1;
	atomic_fetch_add(&t->room_waiters, 1);
	while (!has_room(t) && t->rounds_ended == ended && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&t->room, &t->lock, &ts);
	atomic_fetch_sub(&t->room_waiters, 1);
	pthread_mutex_unlock(&t->lock);
	return TW_OK;
}

/* The index against the entries (store_internal.h). */
bool store_ident_index_sound(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	const uint32_t mask = t->nslots - 1;
	uint32_t linked = 0, used = 0;
	bool ok = true;

	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; ok && i < t->fresh; i++) {
		const struct ident_ent *e = &t->ent[i];
		uint64_t h, want;
		uint32_t s;

		if (!e->linked) {
			ok = t->link[i].home == 0;
			continue;
		}
		linked++;
		h = hash_of(st, e->kind, e->key, e->key_len);
		want = tw_oa_tag(h) | ((uint64_t)i + 1);
		ok = t->link[i].home == home_of(t, h) + 1;
		/* reachable from its home without crossing an empty slot */
		for (s = home_of(t, h); ok && t->slots[s] != 0 && t->slots[s] != want;
		     s = (s + 1) & mask)
			;
		ok = ok && t->slots[s] == want;
	}
	for (uint32_t s = 0; ok && s < t->nslots; s++) {
		uint64_t v = t->slots[s];

		if (v == 0)
			continue;
		used++;
		ok = (v & TW_OA_IDX_MASK) != 0 && tw_oa_entry(v) < t->fresh &&
		     t->ent[tw_oa_entry(v)].linked;
	}
	/* every slot names a linked entry and each of those is found: with
	 * as many slots as linked entries, each is named exactly once */
	ok = ok && used == linked;
	pthread_mutex_unlock(&t->lock);
	return ok;
}

/* The hash of (kind, key), its home slot on its way into the cache: the
 * callers compute it before their own work (checking the id, sealing the
 * state), so that put finds the line there (no lock needed: slots and
 * nslots do not move). */
static uint64_t hash_early(const struct tw_store *st, uint8_t kind, const uint8_t *key,
			   size_t len)
{
	const struct ident_table *t = &st->id;
	uint64_t h = hash_of(st, kind, key, len);

	if (t->slots != NULL)
		__builtin_prefetch(&t->slots[home_of(t, h)]);
	return h;
}

/*
 * Sets the entry for (kind, key), of hash h (hash_of), to (tomb, val) and
 * makes it pending: in place when it is pending or clean, in a new entry
 * when it is being written (the old one leaves the index; its round still
 * writes it, and the next round the new value). When every entry is
 * waiting to be written, waits for room (wait_room) and retries, twice.
 * TW_OK, TW_ERR_NOMEM (still full), TW_ERR_IO.
 */
static int64_t ent_key(const struct tw_store *st, const struct ident_ent *e);

static int put(struct tw_store *st, uint64_t h, uint8_t kind, const uint8_t *key, size_t len,
	       bool tomb, const void *val, size_t val_len)
{
	struct ident_table *t = tab(st);

	for (int attempt = 0; attempt < 3; attempt++) {
		struct ident_ent *e;
		bool pushed = true;
		int32_t idx;

		pthread_mutex_lock(&t->lock);
		idx = find(t, h, kind, key, len);
		if (idx >= 0 && is_pending(t, &t->ent[idx])) {
			pushed = false; /* changed in place */
		} else if (idx >= 0 && is_clean(t, &t->ent[idx])) {
			list_del(t, &t->clean, idx);
			list_push(t, &t->pending, idx);
		} else {
			int32_t n = new_ent(t, h, kind, key, len);

			if (n < 0) {
				if (attempt == 2) {
					pthread_mutex_unlock(&t->lock);
					break;
				}
				if (wait_room(st) != TW_OK)
					return TW_ERR_IO;
				continue;
			}
			if (idx >= 0)
				hash_unlink(t, idx); /* superseded: n is linked */
			list_push(t, &t->pending, n);
			idx = n;
		}
		e = &t->ent[idx];
		e->tomb = tomb ? 1 : 0;
		if (val_len < val_size(kind))
			memset(&e->v, 0, val_size(kind));
		if (val_len > 0)
			memcpy(&e->v, val, val_len);
		e->created = stamp();
		e->batch = t->seq;
		/* the key of its row for the round's sort, made here while the
		 * entry is hot; 0 (never a row's key): made by the round (a
		 * tombstone's takes decrypting its id) */
		if (t->rowkey != NULL)
			t->rowkey[idx] = tomb ? 0 : ent_key(st, e);
		/* once per crossing: the thread is not woken per entry */
		if (pushed && t->pending.n == t->flush_at)
			pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
		return TW_OK;
	}
	return TW_ERR_NOMEM;
}

static void track_imsi(struct tw_store *st, int32_t idx);

/*
 * ident_volatile: (kind, key) set to val as a clean entry, which no round
 * writes and the table drops, oldest first, when it needs room (a lookup
 * then misses: the peer authenticates fully); a re-auth context is its
 * IMSI's newest, and the third newest goes (track_imsi). TW_OK or
 * TW_ERR_NOMEM (no entry free or clean: cannot be, none is ever pending).
 */
static int put_memory(struct tw_store *st, uint64_t h, uint8_t kind, const uint8_t *key,
		      size_t len, const void *val, size_t val_len)
{
	struct ident_table *t = tab(st);
	struct ident_ent *e;
	int32_t idx;

	pthread_mutex_lock(&t->lock);
	idx = find(t, h, kind, key, len);
	if (idx >= 0) {
		list_del(t, &t->clean, idx); /* to the back: the newest */
	} else if ((idx = new_ent(t, h, kind, key, len)) < 0) {
		pthread_mutex_unlock(&t->lock);
		return TW_ERR_NOMEM;
	}
	list_push(t, &t->clean, idx);
	e = &t->ent[idx];
	e->tomb = 0;
	memset(&e->v, 0, val_size(kind));
	memcpy(&e->v, val, val_len < val_size(kind) ? val_len : val_size(kind));
	e->created = stamp();
	e->batch = 0; /* clean */
	if (kind == IDENT_REAUTH)
		track_imsi(st, idx);
	pthread_mutex_unlock(&t->lock);
	return TW_OK;
}

/* Whether slot reference (j, stamp) is still re-auth entry j as tracked
 * for e's IMSI (not dropped or reused since: the stamps never repeat). */
static bool tracked_live(const struct ident_table *t, int32_t j, int64_t stamp,
			 const struct ident_ent *e)
{
	const struct ident_ent *x;

	if (j < 0 || (uint32_t)j >= t->fresh)
		return false;
	x = &t->ent[j];
	return x->linked && x->kind == IDENT_REAUTH && x->created == stamp &&
	       x->v.r.imsi_len == e->v.r.imsi_len &&
	       memcmp(x->v.r.imsi, e->v.r.imsi, e->v.r.imsi_len) == 0;
}

/*
 * ident_volatile, t->lock held: re-auth entry idx (just put) becomes its
 * IMSI's newest; of the ones tracked before, the newer stays valid (the
 * peer may have missed the newest, RFC 4187 §5.4) and an older one is
 * dropped, as the written-behind row keeps two. Tracked per IMSI hash in
 * a direct-mapped array: two IMSIs on one slot track only the later
 * (fewer drops, never a wrong one: tracked_live checks the IMSI).
 */
static void track_imsi(struct tw_store *st, int32_t idx)
{
	struct ident_table *t = tab(st);
	const struct ident_ent *e = &t->ent[idx];
	struct ident_imsi_slot *s;
	int32_t keep = -1;
	int64_t keep_stamp = 0;

	if (t->imsi_slot == NULL)
		return;
	s = &t->imsi_slot[store_hash(st, IDENT_REAUTH, (const uint8_t *)e->v.r.imsi,
				     e->v.r.imsi_len) & (t->n_imsi_slot - 1)];
	for (int k = 0; k < 2; k++) {
		int32_t j = s->i[k];

		if (j == idx || !tracked_live(t, j, s->stamp[k], e))
			continue;
		if (keep < 0) {
			keep = j;
			keep_stamp = s->stamp[k];
		} else {
			drop_clean(t, j); /* the third */
		}
	}
	__atomic_store_n(&s->i[0], idx, __ATOMIC_RELAXED);
	s->stamp[0] = e->created;
	__atomic_store_n(&s->i[1], keep, __ATOMIC_RELAXED);
	s->stamp[1] = keep_stamp;
}

/*
 * ident_volatile: what track_imsi will read for imsi, on its way: its
 * slot (track_slot prefetches it and says which, as early as possible),
 * then the two entries the slot names (track_prefetch, once the slot is
 * likely in: their header and IMSI lines). Without the table lock: a
 * hint only, whatever it reads (the slot's entry numbers are stored
 * atomically by track_imsi for this).
 */
static const struct ident_imsi_slot *track_slot(struct tw_store *st, const char *imsi,
						size_t len)
{
	struct ident_table *t = tab(st);
	const struct ident_imsi_slot *s;

	if (t->imsi_slot == NULL)
		return NULL;
	s = &t->imsi_slot[store_hash(st, IDENT_REAUTH, (const uint8_t *)imsi, len) &
			  (t->n_imsi_slot - 1)];
	__builtin_prefetch(s);
	return s;
}

static void track_prefetch(const struct ident_table *t, const struct ident_imsi_slot *s)
{
	for (int k = 0; k < 2; k++) {
		int32_t j = __atomic_load_n(&s->i[k], __ATOMIC_RELAXED);

		if (j >= 0 && (uint32_t)j < t->cap) {
			__builtin_prefetch(&t->ent[j]);
			__builtin_prefetch(&t->ent[j].v.r.imsi);
		}
	}
}

/* ident_volatile: (kind, key) out of memory, if there. */
static void forget_memory(struct tw_store *st, uint64_t h, uint8_t kind, const uint8_t *key,
			  size_t len)
{
	struct ident_table *t = tab(st);
	int32_t idx;

	pthread_mutex_lock(&t->lock);
	idx = find(t, h, kind, key, len);
	if (idx >= 0)
		drop_clean(t, idx);
	pthread_mutex_unlock(&t->lock);
}

/* ---- the callbacks ---------------------------------------------------- */

static int pseudonym_store(void *arg, const uint8_t *pseudonym, size_t len, const char *imsi,
			   size_t imsi_len)
{
	struct tw_store *st = arg;
	struct {
		char imsi[TW_IMSI_MAX_LEN + 1];
		uint8_t imsi_len;
	} v;
	uint64_t h;

	if (st == NULL || pseudonym == NULL || len == 0 || len > TW_EAP_ID_MAX || imsi == NULL ||
	    imsi_len < TW_IMSI_MIN_LEN || imsi_len > TW_IMSI_MAX_LEN || !digits(imsi, imsi_len))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	if (st->ident_volatile) /* resolved by decrypting it (pseudonym_lookup) */
		return id_is_of(st, pseudonym, len, imsi, imsi_len) ? TW_OK : TW_ERR_INVAL;
	h = hash_early(st, IDENT_PSEUDONYM, pseudonym, len);
	if (!id_is_of(st, pseudonym, len, imsi, imsi_len))
		return TW_ERR_INVAL; /* not minted here for this IMSI */
	memset(&v, 0, sizeof(v));
	memcpy(v.imsi, imsi, imsi_len);
	v.imsi_len = (uint8_t)imsi_len;
	return put(st, h, IDENT_PSEUDONYM, pseudonym, len, false, &v, sizeof(v));
}

/* The row of (kind, key) through the reading connection into *row (kind 0
 * when there is none): the row of the IMSI the id carries, if it holds
 * the id. An id not minted here has no row. TW_OK or TW_ERR_IO. */
static int row_get(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len,
		   struct ident_ent *row)
{
	struct ident_row r;
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t n = 0;
	int rc;

	memset(row, 0, sizeof(*row));
	if (!id_imsi(st, key, len, imsi, &n))
		return TW_OK;
	pthread_mutex_lock(&st->rd_lock);
	rc = row_load(st->rq_i_get, store_ident_row_key(imsi, n), &r);
	pthread_mutex_unlock(&st->rd_lock);
	if (rc != TW_OK)
		return store_io(st, rc);
	for (int i = 0; i < 2; i++) {
		if (kind == IDENT_PSEUDONYM && slot_is(r.p[i].id, r.p[i].len, key, len)) {
			memcpy(row->v.p.imsi, imsi, n);
			row->v.p.imsi_len = (uint8_t)n;
			row->created = wall_us();
			row->kind = kind;
		} else if (kind == IDENT_REAUTH && slot_is(r.r[i].id, r.r[i].len, key, len)) {
			memcpy(row->v.r.wrapped, r.r[i].state, STORE_REAUTH_WRAP_LEN);
			memcpy(row->v.r.imsi, imsi, n);
			row->v.r.imsi_len = (uint8_t)n;
			row->created = r.r[i].t;
			row->kind = kind;
		}
	}
	tw_wipe(&r, sizeof(r));
	if (row->kind != 0) {
		row->key_len = (uint8_t)len;
		memcpy(row->key, key, len);
	}
	return TW_OK;
}

/*
 * Memory first; on a miss the row (reading connection, no table lock held),
 * then the table again: an entry made meanwhile is newer and wins. The row
 * is cached as a clean entry unless an entry whose row was deleted (a
 * written tombstone, a pruned or forgotten pseudonym) left memory since
 * the miss: the row may predate that deletion.
 */
static int lookup(struct tw_store *st, uint8_t kind, const uint8_t *key, size_t len,
		  struct ident_ent *copy)
{
	struct ident_table *t = tab(st);
	struct ident_ent row;
	uint64_t h, gone;
	int32_t idx;
	int rc;

	if (len == 0 || len > TW_EAP_ID_MAX)
		return TW_ERR_NOTFOUND;
	h = hash_of(st, kind, key, len);
	pthread_mutex_lock(&t->lock);
	idx = find(t, h, kind, key, len);
	if (idx >= 0) {
		*copy = t->ent[idx];
		pthread_mutex_unlock(&t->lock);
		return copy->tomb ? TW_ERR_NOTFOUND : TW_OK;
	}
	gone = t->gone;
	pthread_mutex_unlock(&t->lock);
	if (st->ident_volatile)
		return TW_ERR_NOTFOUND; /* memory is all there is */

	rc = row_get(st, kind, key, len, &row);
	if (rc == TW_OK) {
		pthread_mutex_lock(&t->lock);
		idx = find(t, h, kind, key, len);
		if (idx >= 0) {
			*copy = t->ent[idx];
			rc = copy->tomb ? TW_ERR_NOTFOUND : TW_OK;
		} else if (row.kind != 0) {
			if (t->gone == gone && (idx = new_ent(t, h, kind, key, len)) >= 0) {
				/* in the database already: clean */
				memcpy(&t->ent[idx].v, &row.v, sizeof(row.v));
				t->ent[idx].created = row.created;
				t->ent[idx].batch = 0;
				list_push(t, &t->clean, idx);
			}
			*copy = row;
		} else {
			rc = TW_ERR_NOTFOUND;
		}
		pthread_mutex_unlock(&t->lock);
	}
	tw_wipe(&row, sizeof(row));
	return rc;
}

static int pseudonym_lookup(void *arg, const uint8_t *pseudonym, size_t len, char imsi[16],
			    size_t *imsi_len)
{
	struct tw_store *st = arg;
	struct ident_ent e;
	int rc;

	if (st == NULL || pseudonym == NULL || imsi == NULL || imsi_len == NULL)
		return TW_ERR_INVAL;
	if (st->ident_volatile)
		return len <= TW_EAP_ID_MAX && id_imsi_fresh(st, pseudonym, len, imsi, imsi_len)
			       ? TW_OK
			       : TW_ERR_NOTFOUND;
	rc = lookup(st, IDENT_PSEUDONYM, pseudonym, len, &e);
	if (rc != TW_OK)
		return rc;
	memcpy(imsi, e.v.p.imsi, e.v.p.imsi_len);
	imsi[e.v.p.imsi_len] = '\0';
	*imsi_len = e.v.p.imsi_len;
	return TW_OK;
}

static int reauth_store(void *arg, const uint8_t *id, size_t len,
			const struct tw_eap_reauth_state *s)
{
	struct tw_store *st = arg;
	uint8_t plain[STORE_REAUTH_SER_LEN];
	union ident_val v;
	char imsi[TW_IMSI_MAX_LEN + 1];
	const struct ident_imsi_slot *slot;
	int64_t gen;
	uint64_t h;
	int rc;

	if (st == NULL || id == NULL || len == 0 || len > TW_EAP_ID_MAX || s == NULL ||
	    !state_ok(s))
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	h = hash_early(st, IDENT_REAUTH, id, len);
	if (!id_is_of(st, id, len, s->imsi, s->imsi_len))
		return TW_ERR_INVAL; /* not minted here for this IMSI */
	memcpy(imsi, s->imsi, s->imsi_len);
	imsi[s->imsi_len] = '\0';
	/* track_imsi's cold lines on their way while we work */
	slot = st->ident_volatile ? track_slot(st, imsi, s->imsi_len) : NULL;
	/* an unknown subscriber: stored, but never found again (gen -1) */
	rc = store_sub_gen(st, imsi, &gen);
	if (rc != TW_OK && rc != TW_ERR_NOTFOUND)
		return rc;
	ser(s, gen, plain);
	/* sealed at once; the plain form lives only here */
	memset(&v, 0, sizeof(v));
	rc = seal_state(st, id, len, plain, v.r.wrapped);
	memcpy(v.r.imsi, s->imsi, s->imsi_len);
	v.r.imsi_len = (uint8_t)s->imsi_len;
	if (slot != NULL)
		track_prefetch(tab(st), slot);
	if (rc == TW_OK)
		rc = st->ident_volatile ? put_memory(st, h, IDENT_REAUTH, id, len, &v, sizeof(v))
					: put(st, h, IDENT_REAUTH, id, len, false, &v, sizeof(v));
	tw_wipe(plain, sizeof(plain));
	tw_wipe(&v, sizeof(v));
	return rc;
}

static int reauth_remove(void *arg, const uint8_t *id, size_t len)
{
	struct tw_store *st = arg;

	if (st == NULL || id == NULL || len == 0 || len > TW_EAP_ID_MAX)
		return TW_ERR_INVAL;
	if (st->read_only)
		return TW_ERR_STATE;
	if (st->ident_volatile) {
		forget_memory(st, hash_of(st, IDENT_REAUTH, id, len), IDENT_REAUTH, id, len);
		return TW_OK;
	}
	/* a tombstone, whether or not the id is in memory: the row (if any)
	 * is deleted by the next write-behind round */
	return put(st, hash_of(st, IDENT_REAUTH, id, len), IDENT_REAUTH, id, len, true, NULL, 0);
}

static int reauth_lookup(void *arg, const uint8_t *id, size_t len,
			 struct tw_eap_reauth_state *s)
{
	struct tw_store *st = arg;
	struct ident_ent e;
	uint8_t plain[STORE_REAUTH_SER_LEN];
	char imsi[TW_IMSI_MAX_LEN + 1];
	int64_t gen = -1, now_gen = -1;
	int rc;

	if (st == NULL || id == NULL || s == NULL)
		return TW_ERR_INVAL;
	memset(s, 0, sizeof(*s));
	rc = lookup(st, IDENT_REAUTH, id, len, &e);
	if (rc != TW_OK)
		goto out;
	/* unused for longer than the TTL: forgotten */
	if (wall_us() - e.created > (int64_t)st->reauth_ttl * 1000000) {
		rc = TW_ERR_NOTFOUND;
		if (!st->read_only)
			(void)reauth_remove(st, id, len);
		goto out;
	}
	rc = open_state(st, id, len, e.v.r.wrapped, plain);
	if (rc == TW_OK)
		rc = deser(plain, s, &gen);
	if (rc != TW_OK) {
		rc = store_io(st, TW_ERR_IO); /* a row we did not write */
		goto out;
	}
	/* a subscriber deleted or replaced (a new card) since the full
	 * authentication gets no fast re-authentication either */
	memcpy(imsi, s->imsi, s->imsi_len);
	imsi[s->imsi_len] = '\0';
	rc = store_sub_gen(st, imsi, &now_gen);
	if (rc == TW_OK && now_gen != gen)
		rc = TW_ERR_NOTFOUND;
	if (rc == TW_ERR_NOTFOUND && !st->read_only)
		(void)reauth_remove(st, id, len);
out:
	tw_wipe(plain, sizeof(plain));
	tw_wipe(&e, sizeof(e));
	if (rc != TW_OK)
		tw_eap_reauth_state_wipe(s);
	return rc;
}

/*
 * ops->random: output of OpenSSL's private DRBG (a per-thread NIST SP
 * 800-90A CTR_DRBG seeded and reseeded from the kernel; several times
 * cheaper than getrandom(2) here), buffered per thread. A call costs
 * about 1.9 µs on the bench VM whatever its size up to 512 octets (the
 * DRBG's fork check is a getpid(2), then locks and parameter look-ups) and
 * 2.4 µs for 4096: with an attach taking about 50 octets (an IV, a
 * pseudonym, a re-auth id), 4096 makes one call in about eighty attaches.
 * Each octet is handed out once and wiped from the buffer; a child of
 * fork() never hands out its parent's octets (fork_gen). The octets not
 * handed out are wiped when the thread ends (a thread-specific key's
 * destructor, registered at the first fill) and, for the thread that
 * closes the store (exit() runs no such destructor), by tw_store_close.
 * Without the key (pthread_key_create failed) nothing is buffered.
 */
static _Atomic unsigned fork_gen = 1; /* declared above mint_counter */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static _Thread_local struct rnd_buf {
	uint8_t b[RND_BUF];
	size_t pos;
	unsigned gen;
	bool registered;
} rnd;
static pthread_once_t rnd_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t rnd_key;
static bool rnd_key_ok;

static void rnd_thread_exit(void *p)
{
	tw_wipe(p, sizeof(struct rnd_buf));
}

static void rnd_key_init(void)
{
	rnd_key_ok = pthread_key_create(&rnd_key, rnd_thread_exit) == 0;
}

void store_ident_random_wipe(void)
{
	bool registered = rnd.registered;

	tw_wipe(&rnd, sizeof(rnd));
	rnd.registered = registered;
}

const uint8_t *store_ident_random_unused(size_t *len)
{
	*len = rnd.registered ? RND_BUF - rnd.pos : 0;
	return rnd.b + rnd.pos;
}

static void on_fork_child(void)
{
	atomic_fetch_add(&fork_gen, 1);
}

static void fork_hook(void)
{
	(void)pthread_atfork(NULL, NULL, on_fork_child);
}

static int random_cb(void *arg, uint8_t *out, size_t len)
{
	unsigned gen = atomic_load(&fork_gen);

	(void)arg;
	if (out == NULL && len > 0)
		return TW_ERR_INVAL;
	if (!rnd.registered) {
		(void)pthread_once(&rnd_key_once, rnd_key_init);
		rnd.registered = rnd_key_ok && pthread_setspecific(rnd_key, &rnd) == 0;
	}
	if (len > RND_DIRECT || !rnd.registered)
		return RAND_priv_bytes(out, (int)len) == 1 ? TW_OK : TW_ERR_IO;
	if (rnd.gen != gen || RND_BUF - rnd.pos < len) {
		if (RAND_priv_bytes(rnd.b, RND_BUF) != 1) {
			store_ident_random_wipe();
			return TW_ERR_IO;
		}
		rnd.pos = 0;
		rnd.gen = gen;
	}
	memcpy(out, rnd.b + rnd.pos, len);
	tw_wipe(rnd.b + rnd.pos, len);
	rnd.pos += len;
	return TW_OK;
}

/* ---- write-behind (flush_lock held) ----------------------------------------- */

/* Remembers an id a pseudonym or re-auth write deletes, packed (a
 * round's ids are read back in order: dense, not one id slot of
 * TW_EAP_ID_MAX each); grown by doubling (the write-behind thread, or a
 * caller whose table is full anyway), the old block wiped when it moves
 * (the ids name subscribers). */
static void pruned_add(struct ident_table *t, uint8_t kind, const void *id, size_t n)
{
	if (n > TW_EAP_ID_MAX)
		return; /* not an id of ours */
	if (t->pruned_cap - t->npruned < 2 + n) {
		size_t nc = t->pruned_cap ? 2 * t->pruned_cap : 16384;
		uint8_t *p = malloc(nc);

		if (p == NULL)
			return; /* the row stays until the next prune of its IMSI */
		if (t->pruned != NULL) {
			memcpy(p, t->pruned, t->npruned);
			tw_wipe(t->pruned, t->pruned_cap);
			free(t->pruned);
		}
		t->pruned = p;
		t->pruned_cap = nc;
	}
	t->pruned[t->npruned] = kind;
	t->pruned[t->npruned + 1] = (uint8_t)n;
	memcpy(t->pruned + t->npruned + 2, id, n);
	t->npruned += 2 + n;
}

/* The IMSI whose row an entry changes (false: none, e.g. a tombstone of
 * an id not minted here). */
static bool ent_imsi(const struct tw_store *st, const struct ident_ent *e,
		     char imsi[TW_IMSI_MAX_LEN + 1], size_t *n)
{
	if (e->tomb)
		return id_imsi(st, e->key, e->key_len, imsi, n);
	*n = e->kind == IDENT_PSEUDONYM ? e->v.p.imsi_len : e->v.r.imsi_len;
	memcpy(imsi, e->kind == IDENT_PSEUDONYM ? e->v.p.imsi : e->v.r.imsi, *n);
	imsi[*n] = '\0';
	return *n != 0;
}

/* The key of the row an entry changes, or -1 (ent_imsi false, or not an
 * IMSI store_ident_row_key takes). */
static int64_t ent_key(const struct tw_store *st, const struct ident_ent *e)
{
	char imsi[TW_IMSI_MAX_LEN + 1];
	size_t n = 0;

	return ent_imsi(st, e, imsi, &n) ? store_ident_row_key(imsi, n) : -1;
}

/* The entries of one row a round is writing, in order: an attach stores a
 * pseudonym and a re-auth id of one IMSI one after the other, and both go
 * into one write of the row (live: entries taken, not written yet). */
enum { IDENT_GROUP_MAX = 32 };

struct row_cursor {
	bool live;
	int64_t key;               /* the row's (store_ident_row_key) */
	const struct ident_ent *e[IDENT_GROUP_MAX];
	size_t ne;
};

/* e's change to a row in memory (§4.1.1.7: the newest
 * STORE_PSEUDONYMS_KEPT pseudonyms and STORE_REAUTH_KEPT re-auth ids per
 * IMSI are kept): a new id goes to slot 0, the one there moves to slot 1,
 * and the one in slot 1 goes (dropped from memory after the commit); the
 * same id again changes its slot in place; a tombstone empties its slot.
 * Whether the row changed. */
static bool apply(struct ident_table *t, const struct ident_ent *e, struct ident_row *row)
{
	bool changed = false;

	if (e->kind == IDENT_PSEUDONYM) {
		if (e->tomb) {
			for (int i = 0; i < 2; i++)
				if (slot_is(row->p[i].id, row->p[i].len, e->key, e->key_len)) {
					row->p[i].len = 0;
					changed = true;
				}
		} else if (!slot_is(row->p[0].id, row->p[0].len, e->key, e->key_len)) {
			/* an empty slot 0 (its id removed) is filled, slot 1
			 * stays; else slot 0 moves down over slot 1 */
			if (row->p[0].len != 0 ||
			    slot_is(row->p[1].id, row->p[1].len, e->key, e->key_len)) {
				if (row->p[1].len &&
				    !slot_is(row->p[1].id, row->p[1].len, e->key, e->key_len))
					pruned_add(t, IDENT_PSEUDONYM, row->p[1].id,
						   row->p[1].len);
				row->p[1] = row->p[0];
			}
			memcpy(row->p[0].id, e->key, e->key_len);
			row->p[0].len = e->key_len;
			changed = true;
		}
		return changed;
	}
	if (e->tomb) {
		for (int i = 0; i < 2; i++)
			if (slot_is(row->r[i].id, row->r[i].len, e->key, e->key_len)) {
				row->r[i].len = 0;
				changed = true;
			}
		return changed;
	}
	if (!slot_is(row->r[0].id, row->r[0].len, e->key, e->key_len)) {
		/* as for pseudonyms: a removed id's empty slot 0 is filled (the
		 * re-auth flow removes the id used, then stores the next) */
		if (row->r[0].len != 0 ||
		    slot_is(row->r[1].id, row->r[1].len, e->key, e->key_len)) {
			if (row->r[1].len &&
			    !slot_is(row->r[1].id, row->r[1].len, e->key, e->key_len))
				pruned_add(t, IDENT_REAUTH, row->r[1].id, row->r[1].len);
			row->r[1] = row->r[0];
		}
		memcpy(row->r[0].id, e->key, e->key_len);
		row->r[0].len = e->key_len;
	}
	memcpy(row->r[0].state, e->v.r.wrapped, STORE_REAUTH_WRAP_LEN);
	row->r[0].t = e->created;
	return true;
}

/*
 * A row's write is an UPDATE (id_q.merge_upd) whose value is
 * twag_ident_merge(old value, group), this function: the old row decoded,
 * the group's entries applied in order (apply: the ids they push out are
 * noted for mark_written), encoded again. So an existing row is found and
 * written in one B-tree search, with no SELECT of its own. When the
 * UPDATE changed no row (a subscriber's first ids), the UPSERT
 * (id_q.merge) makes it: SQLite computes its VALUES expression (merge
 * into NULL) before it finds a conflict, then the DO UPDATE one (merge
 * into the old value), so each call first drops the ids the one before
 * noted, and those of the value stored are noted once. The UPDATE alone
 * was half the merges of the UPSERT alone, which computes both whenever
 * the row exists, as it does in the steady state. A group of tombstones
 * only updates a row that exists, never makes one. A row left with no id
 * stays until the sweep deletes it.
 */
struct ident_group {
	struct tw_store *st;
	const struct ident_ent *const *e;
	size_t n;
	size_t pruned_base;        /* t->npruned before the statement */
};

static const char group_ptr[] = "twag-ident-group";

static void merge_fn(sqlite3_context *cx, int argc, sqlite3_value **v)
{
	const struct ident_group *g = argc == 2 ? sqlite3_value_pointer(v[1], group_ptr) : NULL;
	struct ident_row row;
	uint8_t b[ROW_MAX];
	size_t n;
	const uint8_t *old;

	if (g == NULL) {
		sqlite3_result_error(cx, "twag_ident_merge: not a write-behind group", -1);
		return;
	}
	tab(g->st)->npruned = g->pruned_base;
	old = sqlite3_value_blob(v[0]); /* before _bytes (SQLite's order) */
	row_dec(old, (size_t)sqlite3_value_bytes(v[0]), &row);
	for (size_t i = 0; i < g->n; i++)
		(void)apply(tab(g->st), g->e[i], &row);
	n = row_enc(&row, b);
	sqlite3_result_blob(cx, b, (int)n, SQLITE_TRANSIENT);
	tw_wipe(&row, sizeof(row));
	tw_wipe(b, n);
}

/* The cursor's group into its row (db_lock held, in the round's
 * transaction); the cursor is empty after. */
static int write_group(struct tw_store *st, struct row_cursor *c)
{
	struct ident_group g = { st, c->e, c->ne, tab(st)->npruned };
	bool tombs = true;
	sqlite3_stmt *q;
	int rc;

	for (size_t i = 0; i < c->ne; i++)
		tombs &= c->e[i]->tomb;
	/* the UPDATE first (tombstones alone never make a row), the UPSERT
	 * when it changed no row */
	q = st->id_q.merge_upd;
	for (int pass = 0; pass < 2; pass++) {
		sqlite3_bind_int64(q, 1, c->key);
		sqlite3_bind_pointer(q, 2, &g, group_ptr, NULL);
		rc = sqlite3_step(q);
		sqlite3_reset(q);
		sqlite3_bind_null(q, 2); /* g goes out of scope */
		if (rc != SQLITE_DONE || tombs || sqlite3_changes(st->db) > 0)
			break;
		q = st->id_q.merge;
	}
	c->live = false;
	c->ne = 0;
	if (rc != SQLITE_DONE)
		return store_sqlite_err(rc);
	atomic_fetch_add(&tab(st)->n_row_writes, 1);
	return TW_OK;
}

/*
 * One entry of the batch, of row key (ent_key), into the open transaction:
 * taken into the cursor's group, written with it unless the next entry
 * (next_key: its row, -1 when none) changes the same row. A row is found
 * by its key: no other index to keep.
 */
static int write_ent(struct tw_store *st, struct row_cursor *c, const struct ident_ent *e,
		     int64_t key, int64_t next_key)
{
	int rc;

	if (key < 0)
		return TW_OK; /* not an id of ours, or not an IMSI: no row has it */
	if (c->live && c->key != key) {
		rc = write_group(st, c); /* another row's group first */
		if (rc != TW_OK)
			return rc;
	}
	c->live = true;
	c->key = key;
	c->e[c->ne++] = e;
	if (c->ne < IDENT_GROUP_MAX && next_key == key)
		return TW_OK; /* the same row next */
	return write_group(st, c);
}

/*
 * Expired re-auth slots: the next STORE_SWEEP_ROWS rows after the last
 * sweep's (along the key; from the start again at the end), those with a
 * slot older than the TTL emptied, a row left empty deleted. *n: how many
 * rows were looked at; a full batch makes the next round go on (bounded
 * work per round, a pass over all rows per sweep period and as many
 * rounds as it takes: about a millisecond per 1024 rows). A sweep that
 * fails leaves the cursor where it was, and so does the round when its
 * commit fails (flush_round).
 */
static int sweep(struct tw_store *st, int64_t now, int *n)
{
	struct ident_table *t = tab(st);
	sqlite3_stmt *q = st->id_q.sweep_sel;
	int64_t cutoff = now - (int64_t)st->reauth_ttl * 1000000, from = t->sweep_after, *hit;
	struct ident_row row;
	size_t nhit = 0;
	int rows = 0, rc;

	*n = 0;
	hit = malloc(STORE_SWEEP_ROWS * sizeof(*hit));
	if (hit == NULL)
		return TW_OK; /* at the next sweep */
	sqlite3_bind_int64(q, 1, from);
	sqlite3_bind_int(q, 2, STORE_SWEEP_ROWS);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(q, 0);
		const uint8_t *b = sqlite3_column_blob(q, 1); /* before _bytes */
		bool old = false;

		rows++;
		row_dec(b, (size_t)sqlite3_column_bytes(q, 1), &row);
		for (int i = 0; i < STORE_REAUTH_KEPT; i++)
			old = old || (row.r[i].len != 0 && row.r[i].t < cutoff);
		/* a row whose ids all went (write_group leaves it) */
		old = old || (row.p[0].len == 0 && row.p[1].len == 0 && row.r[0].len == 0 &&
			      row.r[1].len == 0);
		hit[nhit] = k;
		nhit += old;
		t->sweep_after = k;
	}
	sqlite3_reset(q);
	rc = rc == SQLITE_DONE ? TW_OK : store_sqlite_err(rc);
	if (rc == TW_OK && rows < STORE_SWEEP_ROWS)
		t->sweep_after = 0; /* the end: from the start next time */
	/* each old slot emptied; a row left with no id at all goes */
	for (size_t i = 0; rc == TW_OK && i < nhit; i++) {
		rc = row_load(st->id_q.get, hit[i], &row);
		for (int j = 0; rc == TW_OK && j < STORE_REAUTH_KEPT; j++)
			if (row.r[j].len != 0 && row.r[j].t < cutoff)
				row.r[j].len = 0;
		if (rc == TW_OK)
			rc = row_save(st, hit[i], &row);
	}
	tw_wipe(&row, sizeof(row));
	free(hit);
	*n = rows;
	if (rc != TW_OK)
		t->sweep_after = from; /* the same rows next time */
	return rc;
}

static void max_store(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

/* The entries of the batch before stop are in the database (stop -1:
 * all, and every batch up to upto): clean; then the ids pruned with
 * them leave memory. The table lock is taken for O(1) work or for a chunk
 * of IDENT_CHUNK entries at a time, so a store never waits long for it. */
enum { IDENT_CHUNK = 64, IDENT_PARTIAL = 64 };

static uint32_t mark_written(struct tw_store *st, int32_t stop, uint64_t upto)
{
	struct ident_table *t = tab(st);
	uint32_t n = 0;
	uint64_t h[IDENT_CHUNK];

	pthread_mutex_lock(&t->lock);
	if (stop < 0) {
		t->durable = upto;
		n = t->batch.n;
		list_splice(t, &t->clean, &t->batch);
	}
	while (t->batch.head >= 0 && t->batch.head != stop) {
		int32_t i = t->batch.head;

		list_del(t, &t->batch, i);
		t->ent[i].batch = 0; /* <= t->durable: clean */
		list_push(t, &t->clean, i);
		if (++n % IDENT_CHUNK == 0) {
			pthread_mutex_unlock(&t->lock);
			pthread_mutex_lock(&t->lock);
		}
	}
	if (atomic_load(&t->room_waiters) > 0)
		pthread_cond_broadcast(&t->room); /* evictable now */
	pthread_mutex_unlock(&t->lock);
	for (size_t off = 0; off < t->npruned;) {
		const uint8_t *id[IDENT_CHUNK];
		size_t m = 0;

		for (; m < IDENT_CHUNK && off < t->npruned; m++) {
			const uint8_t *p = t->pruned + off;

			id[m] = p;
			off += 2 + (size_t)p[1];
			h[m] = hash_of(st, p[0], p + 2, p[1]);
			__builtin_prefetch(&t->slots[home_of(t, h[m])]);
		}
		pthread_mutex_lock(&t->lock);
		/* the chunk's home slots, then the entries they name, on their
		 * way together: these ids are old, their lines cold */
		for (size_t k = 0; k < m; k++) {
			uint64_t v = t->slots[home_of(t, h[k])];

			if (v != 0 && tw_oa_tag(v) == tw_oa_tag(h[k])) {
				/* the header and the id (a re-auth NAI runs
				 * into the second line) */
				const char *e = (const char *)&t->ent[tw_oa_entry(v)];

				__builtin_prefetch(e);
				__builtin_prefetch(e + 64);
			}
		}
		for (size_t k = 0; k < m; k++) {
			const uint8_t *p = id[k];
			int32_t idx = find(t, h[k], p[0], p + 2, p[1]);

			if (idx >= 0 && is_clean(t, &t->ent[idx])) {
				drop_clean(t, idx);
				t->gone++;
			}
		}
		pthread_mutex_unlock(&t->lock);
	}
	if (t->npruned > 0) {
		/* a look-up that read a row before this commit must not cache
		 * an id the commit pruned (lookup checks gone) */
		pthread_mutex_lock(&t->lock);
		t->gone++;
		pthread_mutex_unlock(&t->lock);
	}
	t->npruned = 0;
	return n;
}

/* BEGIN of a write-behind transaction (db_lock held). Pseudonyms and
 * re-auth state are not safety-critical like the SQN: losing the last
 * rounds in a power cut costs those peers a full authentication (an
 * identity round), nothing more, and the write-behind loses its pending
 * entries in a crash anyway. So no fsync per round: WAL with
 * synchronous=NORMAL stays consistent and is durable at the next sync. The
 * SQN reservation commits with FULL, which syncs the WAL and with it every
 * frame before. sync_full makes reserve() restore FULL itself should
 * end_tx() fail to. */
static int begin_tx(struct tw_store *st)
{
	st->sync_full = false;
	(void)sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	return store_begin(st);
}

static void end_tx(struct tw_store *st)
{
	if (sqlite3_exec(st->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) == SQLITE_OK)
		st->sync_full = true;
}

/*
 * A writer waits for db_lock (an SQN reservation: the packet path): commit
 * what the round has written, let it in, and go on with the rest (next) in
 * a new transaction. The writer waits for that commit only, not for the
 * round. pthread mutexes are not fair: wait (bounded) until it got the lock.
 */
static int yield_db(struct tw_store *st, int32_t next, uint32_t *n)
{
	struct ident_table *t = tab(st);
	struct timespec pause = { 0, 50000 };
	int rc = store_commit(st);

	end_tx(st);
	pthread_mutex_unlock(&st->db_lock);
	if (rc != TW_OK)
		return rc;
	*n += mark_written(st, next, 0);
	atomic_fetch_add(&t->n_yields, 1);
	for (int i = 0; i < 200 && atomic_load(&st->db_waiters) > 0; i++)
		nanosleep(&pause, NULL);
	pthread_mutex_lock(&st->db_lock);
	rc = begin_tx(st);
	if (rc != TW_OK)
		pthread_mutex_unlock(&st->db_lock);
	return rc;
}

/*
 * A store waits for room in a full table (wait_room): commit what the
 * round has written, which makes it evictable (mark_written wakes the
 * store), and go on with the rest (next) in a new transaction, keeping
 * db_lock. The store waits for that commit only, not for the round.
 */
static int yield_room(struct tw_store *st, int32_t next, uint32_t *n)
{
	struct ident_table *t = tab(st);
	int rc = store_commit(st);

	if (rc != TW_OK)
		return rc;
	*n += mark_written(st, next, 0);
	atomic_fetch_add(&t->n_yields, 1);
	return store_begin(st);
}

/*
 * The batch in row-key order (t->rowkey, set for each of its entries):
 * a row's entries, from attaches all over the round, become one group
 * (write_ent: one read and one write of the row), and the rows are
 * visited along the table's B-tree, each page once. Stable, so a row's
 * entries keep their order (the newest last, as apply() needs); a bottom-
 * up merge sort of the list by its next links, the prev links made whole
 * after. Flusher only, without the table lock (the batch list is the
 * round's: flush_round).
 */
static void sort_batch(struct ident_table *t)
{
	int32_t head = t->batch.head, prev = -1;

	for (uint32_t width = 1;; width *= 2) {
		int32_t p = head, tail = -1;
		uint32_t merges = 0;

		head = -1;
		while (p >= 0) {
			int32_t q = p;
			uint32_t np = 0, nq = width;

			merges++;
			while (np < width && q >= 0) {
				np++;
				q = t->link[q].lnext;
			}
			while (np > 0 || (nq > 0 && q >= 0)) {
				int32_t e;

				if (np > 0 && (nq == 0 || q < 0 || t->rowkey[p] <= t->rowkey[q])) {
					e = p;
					p = t->link[p].lnext;
					np--;
				} else {
					e = q;
					q = t->link[q].lnext;
					nq--;
				}
				if (tail >= 0)
					t->link[tail].lnext = e;
				else
					head = e;
				tail = e;
			}
			p = q;
		}
		if (tail >= 0)
			t->link[tail].lnext = -1;
		if (merges <= 1)
			break;
	}
	for (int32_t i = head; i >= 0; i = t->link[i].lnext) {
		t->link[i].lprev = prev;
		prev = i;
	}
	t->batch.head = head;
	t->batch.tail = prev;
}

/*
 * One round (flush_lock held): take the pending list (O(1), table lock),
 * write it (after a failed round's batch) in ONE transaction with the
 * table lock released, then mark it written (O(1) plus the pruned ids).
 * A writer waiting for db_lock splits the transaction (yield_db), so does
 * a store waiting for room (yield_room). On failure what is not committed
 * stays taken and the next round writes it again first; so does the rest
 * of a partial round (a store that found the table full and no round
 * running: it writes the first IDENT_PARTIAL entries only, no sweep).
 * Without take, the pending list stays (a round for the sweep: a failed
 * round's batch, if any, is written again with it).
 */
static int flush_round(struct tw_store *st, bool partial, bool take)
{
	struct ident_table *t = tab(st);
	int64_t now = wall_us(), t0, key, sweep_from = 0;
	uint64_t upto, ns;
	uint32_t n = 0, k = 0, kp = 0;
	int32_t stop = -1;
	struct row_cursor cur;
	int swept = 0;
	bool do_sweep, locked = true, sorted;
	int rc;

	pthread_mutex_lock(&t->lock);
	if (take) {
		list_splice(t, &t->batch, &t->pending);
		upto = t->seq++; /* from here on, changes to the batch go to copies */
	} else {
		/* the pending entries (batch == seq) stay pending; a kept
		 * batch (older numbers) becomes clean once written */
		upto = t->seq - 1;
	}
	if (!partial)
		t->rest_left = false;
	pthread_mutex_unlock(&t->lock);
	do_sweep = !partial && (t->sweep_more || now - t->last_expiry >= (int64_t)st->sweep_ms * 1000);
	if (t->batch.n == 0 && !do_sweep)
		return TW_OK;

	t->npruned = 0;
	cur.live = false;
	cur.ne = 0;
	t0 = mono_ns();
	/* the batch list changes only here (and in mark_written): walked
	 * and sorted without the table lock. Each entry's row key was made
	 * by put() (entries of the batch are not changed in place: a change
	 * makes a copy), but a tombstone's (0): made here, decrypting its
	 * id; a full round sorts the batch by it (not a partial one: the
	 * packet path runs those) */
	sorted = !partial && t->rowkey != NULL && t->batch.n > 1;
	if (sorted) {
		for (int32_t i = t->batch.head; i >= 0; i = t->link[i].lnext)
			if (t->rowkey[i] == 0)
				t->rowkey[i] = ent_key(st, &t->ent[i]);
		sort_batch(t);
	}
	pthread_mutex_lock(&st->db_lock);
	rc = begin_tx(st);
	/* unsorted: each key made as the next entry's, then carried on */
	key = t->batch.head < 0 ? -1
	      : sorted	        ? t->rowkey[t->batch.head]
				: ent_key(st, &t->ent[t->batch.head]);
	for (int32_t i = t->batch.head; rc == TW_OK && i >= 0;) {
		int32_t next = t->link[i].lnext;
		int64_t next_key = next < 0 ? -1
				   : sorted ? t->rowkey[next]
					    : ent_key(st, &t->ent[next]);

		/* the next entry's lines on their way while this one is
		 * written: apply() reads its id and value (perf on this
		 * thread: merge_fn's cold misses 0.25 -> 0.04 µs per EAP-SIM
		 * authentication) */
		if (next >= 0)
			for (size_t o = 0; o < sizeof(t->ent[next]); o += 64)
				__builtin_prefetch((const char *)&t->ent[next] + o);

		rc = write_ent(st, &cur, &t->ent[i], key, next_key);
		/* a commit or a stop between two entries of one group: never
		 * (a row's group split at IDENT_GROUP_MAX is two writes, the
		 * second reading what the first wrote) */
		if (rc == TW_OK && ++k >= 16 && !cur.live && next >= 0 &&
		    atomic_load(&st->db_waiters) > 0) {
			k = 0;
			rc = yield_db(st, next, &n);
			locked = rc == TW_OK;
		} else if (rc == TW_OK && k >= 16 && !cur.live && next >= 0 &&
			   atomic_load(&t->room_waiters) > 0) {
			k = 0;
			rc = yield_room(st, next, &n);
		}
		if (rc == TW_OK && partial && ++kp >= IDENT_PARTIAL && !cur.live && next >= 0) {
			stop = next; /* the rest stays taken for the next round */
			break;
		}
		i = next;
		key = next_key;
	}
	tw_wipe(&cur, sizeof(cur));
	if (rc == TW_OK && do_sweep) {
		sweep_from = t->sweep_after; /* under db_lock, as sweep() moves it */
		rc = sweep(st, now, &swept);
	}
	if (rc == TW_OK) {
		rc = store_commit(st);
		if (rc != TW_OK && do_sweep)
			t->sweep_after = sweep_from; /* rolled back: the same rows next time */
	} else if (locked) {
		store_rollback(st);
	}
	if (locked) {
		end_tx(st);
		pthread_mutex_unlock(&st->db_lock);
	}
	ns = (uint64_t)(mono_ns() - t0);
	if (rc != TW_OK) {
		t->npruned = 0;
		return store_io(st, rc);
	}
	if (do_sweep) {
		t->last_expiry = now;
		t->sweep_more = swept >= STORE_SWEEP_ROWS;
	}
	n += mark_written(st, stop, upto);
	if (stop >= 0) {
		/* the write-behind thread writes the rest now, not at its
		 * next period */
		pthread_mutex_lock(&t->lock);
		t->rest_left = true;
		pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
	}
	atomic_fetch_add(&t->n_rounds, 1);
	atomic_fetch_add(&t->n_written, n);
	atomic_fetch_add(&t->n_ns, ns);
	max_store(&t->n_max_ns, ns);
	return TW_OK;
}

/* A full round (not partial), flush_lock taken here; take: the pending
 * entries too (else the sweep, and a failed round's batch, alone). */
static int full_round(struct tw_store *st, bool take)
{
	struct ident_table *t = tab(st);
	int rc;

	if (st->read_only || t->ent == NULL)
		return TW_OK;
	pthread_mutex_lock(&t->flush_lock);
	rc = flush_round(st, false, take);
	round_ended(t);
	pthread_mutex_unlock(&t->flush_lock);
	return rc;
}

int store_ident_populate(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	int rc;

	if (t->ent == NULL)
		return TW_OK; /* no table (never opened for it) */
	rc = tw_table_populate(t->ent, t->cap, sizeof(*t->ent));
	if (rc == TW_OK)
		rc = tw_table_populate(t->link, t->cap, sizeof(*t->link));
	if (rc == TW_OK)
		rc = tw_table_populate(t->slots, t->nslots, sizeof(*t->slots));
	if (rc == TW_OK && t->rowkey != NULL)
		rc = tw_table_populate(t->rowkey, t->cap, sizeof(*t->rowkey));
	if (rc == TW_OK && t->imsi_slot != NULL)
		rc = tw_table_populate(t->imsi_slot, t->n_imsi_slot, sizeof(*t->imsi_slot));
	return rc;
}

int store_ident_flush(struct tw_store *st)
{
	return full_round(st, true);
}

/* A round for the expiry sweep alone (the flusher, between identity
 * rounds): the pending entries wait for their period (a sweep of a large
 * table goes on at every wake-up, STORE_SWEEP_ROWS rows at a time). */
static int ident_sweep_round(struct tw_store *st)
{
	return full_round(st, false);
}

/*
 * Copies WAL frames back into the database file (PASSIVE: never waits for
 * and never blocks the other connections) once the WAL has grown, on a
 * connection of its own, with no lock held. The writing connection runs
 * without auto-checkpoint (store.c), so a commit on the packet path never
 * does this work.
 */
static void checkpoint(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	int64_t t0;
	int nlog = 0, nckpt = 0;

	if (t->ck == NULL || atomic_load(&st->wal_frames) < STORE_CKPT_PAGES)
		return;
	t0 = mono_ns();
	if (sqlite3_wal_checkpoint_v2(t->ck, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt) ==
	    SQLITE_OK && nckpt == nlog)
		atomic_store(&st->wal_frames, 0); /* the next commit restarts the WAL */
	atomic_fetch_add(&t->n_ckpt_ns, (uint64_t)(mono_ns() - t0));
}

void store_ident_forget_imsi(struct tw_store *st, const char *imsi, size_t imsi_len)
{
	struct ident_table *t = tab(st);

	if (t->ent == NULL)
		return;
	/* a scan of the entries in use: rare (a subscriber deleted). No
	 * round runs (flush_lock), so no entry is being read without the lock:
	 * one not written yet becomes a tombstone (its row, if any, was
	 * deleted with the subscriber) */
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < t->fresh; i++) {
		struct ident_ent *e = &t->ent[i];

		if (e->kind != IDENT_PSEUDONYM || e->v.p.imsi_len != imsi_len ||
		    memcmp(e->v.p.imsi, imsi, imsi_len) != 0)
			continue;
		if (is_clean(t, e))
			drop_clean(t, (int32_t)i);
		else
			e->tomb = 1; /* its row key stays: the id names that row */
	}
	t->gone++;
	pthread_mutex_unlock(&t->lock);
}

static void *flusher(void *arg)
{
	struct tw_store *st = arg;
	struct ident_table *t = tab(st);
	int64_t ident_due = mono_ns() + (int64_t)st->ident_flush_ms * 1000000;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct timespec ts;
		bool rows, sweep;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += STORE_FLUSH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		/* a round per period, or sooner once flush_at entries are
		 * pending (put signals that crossing, not every entry) or a
		 * store's partial round left the rest of its batch */
		while (!t->stop && t->pending.n < t->flush_at && !t->rest_left &&
		       !store_ahead_pending(st) &&
		       pthread_cond_timedwait(&t->cond, &t->lock, &ts) != ETIMEDOUT)
			;
		if (t->stop)
			break;
		/* an identity round: its period over, enough pending, or the
		 * rest of a partial round; else one for the expiry sweep alone
		 * when that is due (t->sweep_more and t->last_expiry change
		 * only in rounds this thread runs, or after it stopped) */
		rows = t->pending.n >= t->flush_at || t->rest_left || mono_ns() >= ident_due;
		sweep = !rows && (t->sweep_more ||
				  wall_us() - t->last_expiry >= (int64_t)st->sweep_ms * 1000);
		pthread_mutex_unlock(&t->lock);
		/* SQN reserve-ahead first: a vector path may soon wait for it */
		store_ahead_run(st);
		if (rows) {
			ident_due = mono_ns() + (int64_t)st->ident_flush_ms * 1000000;
			if (store_ident_flush(st) != TW_OK) {
				/* counted in io_errors; the batch stays taken
				 * and the next round writes it again */
			}
		} else if (sweep && ident_sweep_round(st) != TW_OK) {
			/* counted in io_errors; the sweep cursor stays */
		}
		/* subscribers deleted/replaced by another process (store.c) */
		store_poll_changes(st);
		store_ahead_run(st); /* those that came during the round */
		checkpoint(st);
		pthread_mutex_lock(&t->lock);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int store_ident_init(struct tw_store *st, unsigned cap, char *errbuf, size_t errbuf_len)
{
	struct ident_table *t = tab(st);
	pthread_condattr_t ca;
	int rc;

	if (cap < 16)
		cap = 16;
	if (cap > (1u << 24))
		cap = 1u << 24;
	(void)pthread_once(&fork_once, fork_hook);
	t->cap = cap;
	t->nslots = 32;
	while (t->nslots < 2 * cap)
		t->nslots <<= 1;
	t->flush_at = cap / 4 < STORE_FLUSH_BATCH ? cap / 4 : STORE_FLUSH_BATCH;
	t->ent = tw_table_alloc(cap, sizeof(*t->ent));
	t->link = tw_table_alloc(cap, sizeof(*t->link));
	t->slots = tw_table_alloc(t->nslots, sizeof(*t->slots));
	/* without it, rounds write in arrival order */
	t->rowkey = st->ident_volatile || st->read_only ? NULL
							 : tw_table_alloc(cap, sizeof(*t->rowkey));
	if (st->ident_volatile) {
		t->n_imsi_slot = t->nslots;
		t->imsi_slot = tw_table_alloc(t->n_imsi_slot, sizeof(*t->imsi_slot));
		for (uint32_t i = 0; t->imsi_slot != NULL && i < t->n_imsi_slot; i++)
			t->imsi_slot[i].i[0] = t->imsi_slot[i].i[1] = -1;
	}
	if (t->ent == NULL || t->link == NULL || t->slots == NULL ||
	    (st->ident_volatile && t->imsi_slot == NULL)) {
		tw_table_free(t->imsi_slot, t->n_imsi_slot, sizeof(*t->imsi_slot));
		t->imsi_slot = NULL;
		tw_table_free(t->ent, cap, sizeof(*t->ent));
		tw_table_free(t->link, cap, sizeof(*t->link));
		tw_table_free(t->slots, t->nslots, sizeof(*t->slots));
		tw_table_free(t->rowkey, cap, sizeof(*t->rowkey));
		t->ent = NULL;
		t->link = NULL;
		t->slots = NULL;
		t->rowkey = NULL;
		return TW_ERR_NOMEM;
	}
	t->free.head = t->free.tail = -1;
	t->clean = t->pending = t->batch = t->free;
	t->fresh = 0;
	t->seq = 1;
	t->durable = 0;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->flush_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_cond_init(&t->room, &ca);
	pthread_condattr_destroy(&ca);
	t->last_expiry = wall_us(); /* first sweep after a minute */

	st->ops.arg = st;
	st->ops.pseudonym_lookup = pseudonym_lookup;
	st->ops.pseudonym_store = pseudonym_store;
	st->ops.reauth_lookup = reauth_lookup;
	st->ops.reauth_store = reauth_store;
	st->ops.reauth_remove = reauth_remove;
	st->ops.random = random_cb;

	st->ops.mint_body = mint_body;

	/* look-ups on the reading connection, writes on the writing one */
	rc = store_prepare(st->rd, &st->rq_i_get, "SELECT v FROM ident WHERE k = ?1", errbuf,
			   errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.get, "SELECT v FROM ident WHERE k = ?1",
				   errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.put,
				   "INSERT OR REPLACE INTO ident (k, v) VALUES (?1, ?2)", errbuf,
				   errbuf_len);
	if (rc == TW_OK && !st->read_only &&
	    sqlite3_create_function_v2(st->db, "twag_ident_merge", 2,
				       SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, merge_fn, NULL, NULL,
				       NULL) != SQLITE_OK) {
		store_say(errbuf, errbuf_len, "database: %s", sqlite3_errmsg(st->db));
		rc = TW_ERR_IO;
	}
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.merge,
				   "INSERT INTO ident (k, v) VALUES (?1, twag_ident_merge(NULL, ?2))"
				   " ON CONFLICT (k) DO UPDATE SET v = twag_ident_merge(v, ?2)",
				   errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.merge_upd,
				   "UPDATE ident SET v = twag_ident_merge(v, ?2) WHERE k = ?1", errbuf,
				   errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.del, "DELETE FROM ident WHERE k = ?1",
				   errbuf, errbuf_len);
	if (rc == TW_OK && !st->read_only)
		rc = store_prepare(st->db, &st->id_q.sweep_sel,
				   "SELECT k, v FROM ident WHERE k > ?1 ORDER BY k LIMIT ?2", errbuf,
				   errbuf_len);
	if (rc != TW_OK)
		return rc;
	if (!st->read_only) {
		/* the checkpoint connection (flusher only); a first read makes
		 * it see the WAL (before, a checkpoint on it does nothing).
		 * Without it, SQLite's own auto-checkpoint is back on. */
		const char *path = sqlite3_db_filename(st->db, "main");

		if (path == NULL ||
		    sqlite3_open_v2(path, &t->ck, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
				    NULL) != SQLITE_OK ||
		    sqlite3_exec(t->ck, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) !=
			    SQLITE_OK) {
			sqlite3_close_v2(t->ck);
			t->ck = NULL;
			(void)sqlite3_wal_autocheckpoint(st->db, 1000);
		}
		if (pthread_create(&t->thread, NULL, flusher, st) != 0) {
			if (errbuf != NULL && errbuf_len > 0)
				snprintf(errbuf, errbuf_len, "cannot start the write-behind thread");
			return TW_ERR_NOMEM;
		}
		t->thread_started = true;
		(void)pthread_setname_np(t->thread, "twag-store-wb"); /* top -H, perf */
	}
	return TW_OK;
}

void store_ident_stop(struct tw_store *st)
{
	struct ident_table *t = tab(st);

	if (t->ent == NULL)
		return;
	if (t->thread_started) {
		pthread_mutex_lock(&t->lock);
		t->stop = true;
		pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
		t->thread_started = false;
	}
	if (!st->read_only && st->db != NULL && store_ident_flush(st) != TW_OK) {
		/* counted; what was not written is lost like after a crash:
		 * pseudonyms and re-auth ids fall back to full authentication */
	}
}

void store_ident_free(struct tw_store *st)
{
	struct ident_table *t = tab(st);
	sqlite3_stmt **qs[] = { &st->rq_i_get, &st->id_q.get, &st->id_q.put, &st->id_q.merge,
				&st->id_q.merge_upd, &st->id_q.del, &st->id_q.sweep_sel };

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		sqlite3_finalize(*qs[i]);
		*qs[i] = NULL;
	}
	if (t->ck != NULL) {
		sqlite3_close_v2(t->ck);
		t->ck = NULL;
	}
	if (t->ent == NULL)
		return;
	tw_wipe(t->ent, (size_t)t->fresh * sizeof(*t->ent));
	tw_table_free(t->ent, t->cap, sizeof(*t->ent));
	tw_table_free(t->link, t->cap, sizeof(*t->link));
	tw_table_free(t->slots, t->nslots, sizeof(*t->slots));
	tw_table_free(t->imsi_slot, t->n_imsi_slot, sizeof(*t->imsi_slot));
	t->imsi_slot = NULL;
	if (t->rowkey != NULL) /* row keys give the IMSIs back */
		tw_wipe(t->rowkey, (size_t)t->fresh * sizeof(*t->rowkey));
	tw_table_free(t->rowkey, t->cap, sizeof(*t->rowkey));
	t->rowkey = NULL;
	if (t->pruned != NULL)
		tw_wipe(t->pruned, t->pruned_cap);
	free(t->pruned);
	t->ent = NULL;
	t->link = NULL;
	t->slots = NULL;
	t->pruned = NULL;
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->flush_lock);
	pthread_cond_destroy(&t->cond);
	pthread_cond_destroy(&t->room);
}
