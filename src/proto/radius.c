/*
 * twag — RADIUS codec for EAP (RFC 2865, June 2000; RFC 2869, June 2000;
 * RFC 3579, September 2003; RFC 2548, March 1999; RFC 5997, August 2010).
 *
 * The decoder is strict and checks every length before it is used; it
 * returns views into the caller's datagram. The builder writes into a
 * caller buffer with a sticky error, so a chain of _add calls needs one
 * check at _finish. The two authenticators are computed over the packet in
 * pieces (header, substituted authenticator, attributes with the
 * Message-Authenticator value read as zeros), so a received datagram is
 * never modified and never copied.
 *
 * Every function that takes a secret has a _ctx twin taking a prepared
 * struct tw_radius_secret (the keyed HMAC-MD5 states computed once, RFC
 * 2104 §4); the plain ones prepare the key on the stack, per call, and
 * then run the same code.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/md5.h"
#include "twag/radius.h"

enum {
	ATTR_HDR = 2,           /* Type, Length (RFC 2865 §5) */
	VSA_HDR = 6,            /* Type, Length, Vendor-Id (RFC 2865 §5.26) */
	MPPE_SALT_LEN = 2,
	MPPE_PLAIN_LEN = 48,    /* 1 + 32, padded to a multiple of 16 */
	MPPE_PLAIN_MAX = 240,   /* 253 - 4 (vendor id) - 2 - 2 (salt), rounded */
};

static const uint8_t zero16[16];

static bool secret_ok(const uint8_t *secret, size_t secret_len)
{
	return secret != NULL || secret_len == 0;
}

/* What the authenticators need of a shared secret: HMAC-MD5 keyed with it
 * (Message-Authenticator), MD5 having absorbed it (MPPE key streams), and
 * its octets (Response Authenticator). Views into a tw_radius_secret or
 * into a struct tmp_key on the caller's stack. */
struct key {
	const struct tw_hmac_md5_ctx *hmac;
	const struct tw_md5_ctx *md5;
	const uint8_t *secret;
	size_t len;
};

/* The states of an unprepared secret (any length), for the plain API. */
struct tmp_key {
	struct tw_hmac_md5_ctx hmac;
	struct tw_md5_ctx md5;
};

static void states_init(struct tw_hmac_md5_ctx *hmac, struct tw_md5_ctx *md5,
			const uint8_t *secret, size_t len)
{
	/* RFC 2104 §2 steps (1)-(2) and the opad block: done once per key */
	tw_hmac_md5_init(hmac, secret, len);
	tw_md5_init(md5);
	tw_md5_update(md5, secret, len);
}

static struct key tmp_key_init(struct tmp_key *t, const uint8_t *secret, size_t len)
{
	struct key k = { &t->hmac, &t->md5, secret, len };

	states_init(&t->hmac, &t->md5, secret, len);
	return k;
}

static void tmp_key_wipe(struct tmp_key *t)
{
	tw_wipe(t, sizeof(*t));
}

static struct key key_of(const struct tw_radius_secret *s)
{
	struct key k = { &s->hmac, &s->md5, s->secret, s->len };

	return k;
}

int tw_radius_secret_init(struct tw_radius_secret *s, const uint8_t *secret, size_t len)
{
	if (s == NULL)
		return TW_ERR_INVAL;
	tw_wipe(s, sizeof(*s));
	if (!secret_ok(secret, len))
		return TW_ERR_INVAL;
	if (len > TW_RADIUS_SECRET_MAX)
		return TW_ERR_LENGTH;
	if (len != 0)
		memcpy(s->secret, secret, len);
	s->len = len;
	states_init(&s->hmac, &s->md5, secret, len);
	return TW_OK;
}

void tw_radius_secret_wipe(struct tw_radius_secret *s)
{
	if (s != NULL)
		tw_wipe(s, sizeof(*s));
}

/* ---- decoding ---------------------------------------------------------- */

int tw_radius_decode(struct tw_radius_pkt *p, const uint8_t *buf, size_t len)
{
	size_t plen, off;
	int last_type = -1;

	if (p == NULL || (buf == NULL && len != 0))
		return TW_ERR_INVAL;
	p->n_attrs = 0;
	p->msg_auth = -1;
	p->n_eap = 0;
	p->eap_len = 0;
	/* RFC 2865 §3: a packet shorter than the minimum, or whose Length
	 * exceeds the octets received, is silently discarded; the maximum
	 * Length is 4096. */
	if (len < TW_RADIUS_MIN_LEN)
		return TW_ERR_DECODE;
	plen = tw_load_be16(buf + 2);
	if (plen < TW_RADIUS_MIN_LEN || plen > TW_RADIUS_MAX_LEN || plen > len)
		return TW_ERR_DECODE;

	off = TW_RADIUS_HDR_LEN;
	while (off < plen) {
		size_t alen;
		uint8_t type;

		/* RFC 2865 §5: Length covers Type, Length and Value, so it is at
		 * least 2; an attribute that runs past Length invalidates the
		 * whole packet. Both checked before anything is subtracted. */
		if (plen - off < ATTR_HDR)
			return TW_ERR_DECODE;
		type = buf[off];
		alen = buf[off + 1];
		if (alen < ATTR_HDR || alen > plen - off)
			return TW_ERR_DECODE;
		/* Type 0 is not assigned (IANA RADIUS registry, RFC 3575). */
		if (type == 0)
			return TW_ERR_DECODE;
		if (p->n_attrs >= TW_RADIUS_MAX_ATTRS)
			return TW_ERR_DECODE;
		if (type == TW_RADIUS_MESSAGE_AUTHENTICATOR) {
			/* RFC 2869 §5.14: Length = 18; RFC 3579 §3.2: at most one. */
			if (alen != ATTR_HDR + TW_RADIUS_MSG_AUTH_LEN || p->msg_auth >= 0)
				return TW_ERR_DECODE;
			p->msg_auth = (int)p->n_attrs;
		}
		if (type == TW_RADIUS_EAP_MESSAGE) {
			/* RFC 3579 §3.1: multiple EAP-Message attributes MUST be
			 * consecutive; anything between them breaks the join. */
			if (p->n_eap != 0 && last_type != TW_RADIUS_EAP_MESSAGE)
				return TW_ERR_DECODE;
			p->n_eap++;
			p->eap_len += alen - ATTR_HDR;
		}
		p->attrs[p->n_attrs].type = type;
		p->attrs[p->n_attrs].len = (uint8_t)(alen - ATTR_HDR);
		p->attrs[p->n_attrs].off = (uint16_t)(off + ATTR_HDR);
		p->n_attrs++;
		last_type = type;
		off += alen;
	}
	/* RFC 2865 §3: octets beyond Length are padding, ignored. */
	p->buf = buf;
	p->len = plen;
	p->code = buf[0];
	p->id = buf[1];
	p->authenticator = buf + 4;
	return TW_OK;
}

const struct tw_radius_attr *tw_radius_find(const struct tw_radius_pkt *p,
					    uint8_t type)
{
	for (unsigned i = 0; i < p->n_attrs; i++)
		if (p->attrs[i].type == type)
			return &p->attrs[i];
	return NULL;
}

int tw_radius_eap_join(const struct tw_radius_pkt *p, uint8_t *out, size_t max,
		       size_t *out_len)
{
	size_t n = 0;
	unsigned i;

	if (p == NULL || out_len == NULL || (out == NULL && max != 0))
		return TW_ERR_INVAL;
	if (p->n_eap == 0)
		return TW_ERR_NOTFOUND;
	if (p->eap_len > max)
		return TW_ERR_OVERFLOW;
	for (i = 0; i < p->n_attrs; i++)
		if (p->attrs[i].type == TW_RADIUS_EAP_MESSAGE)
			break;
	/* The decoder guarantees the n_eap attributes are consecutive. */
	for (unsigned k = 0; k < p->n_eap; k++, i++) {
		const struct tw_radius_attr *a = &p->attrs[i];

		if (a->len != 0)
			memcpy(out + n, p->buf + a->off, a->len);
		n += a->len;
	}
	/* RFC 3579 §2.1: an EAP-Message of length 2 (no data) is EAP-Start;
	 * it joins to nothing and has no EAP Length to check. */
	if (n == 0 && p->n_eap == 1) {
		*out_len = 0;
		return TW_OK;
	}
	/* RFC 3748 §4: Code, Identifier, Length (2); the Length field must
	 * equal what the attributes carried (RFC 3579 §3.1 reassembly). */
	if (n < 4 || tw_load_be16(out + 2) != n)
		return TW_ERR_DECODE;
	*out_len = n;
	return TW_OK;
}

/* ---- authenticators ---------------------------------------------------- */

/*
 * RFC 3579 §3.2 / RFC 2869 §5.14: Message-Authenticator =
 * HMAC-MD5(secret, Type | Identifier | Length | auth | Attributes) with the
 * Message-Authenticator value taken as 16 zero octets; auth is the
 * Request Authenticator (for requests, and for responses the one of the
 * request they answer).
 */
static void msg_auth_compute(uint8_t mac[static 16], const uint8_t *pkt,
			     size_t len, const uint8_t auth[static 16],
			     size_t ma_off, const struct key *k)
{
	/* a copy of the keyed context: the key's blocks are not redone */
	struct tw_hmac_md5_ctx h = *k->hmac;

	tw_hmac_md5_update(&h, pkt, 4);
	tw_hmac_md5_update(&h, auth, TW_RADIUS_AUTH_LEN);
	tw_hmac_md5_update(&h, pkt + TW_RADIUS_HDR_LEN, ma_off - TW_RADIUS_HDR_LEN);
	tw_hmac_md5_update(&h, zero16, TW_RADIUS_MSG_AUTH_LEN);
	tw_hmac_md5_update(&h, pkt + ma_off + TW_RADIUS_MSG_AUTH_LEN,
			   len - ma_off - TW_RADIUS_MSG_AUTH_LEN);
	tw_hmac_md5_final(&h, mac);
	tw_hmac_md5_wipe(&h);
}

/* RFC 2865 §3: Response Authenticator =
 * MD5(Code | ID | Length | RequestAuth | Attributes | Secret). */
static void resp_auth_compute(uint8_t out[static 16], const uint8_t *pkt,
			      size_t len, const uint8_t req_auth[static 16],
			      const uint8_t *secret, size_t secret_len)
{
	struct tw_md5_ctx m;

	tw_md5_init(&m);
	tw_md5_update(&m, pkt, 4);
	tw_md5_update(&m, req_auth, TW_RADIUS_AUTH_LEN);
	tw_md5_update(&m, pkt + TW_RADIUS_HDR_LEN, len - TW_RADIUS_HDR_LEN);
	tw_md5_update(&m, secret, secret_len);
	tw_md5_final(&m, out);
}

static int verify_request(const struct tw_radius_pkt *p, const struct key *k)
{
	uint8_t mac[16];
	int ret = TW_ERR_AUTH;

	if (p->code != TW_RADIUS_ACCESS_REQUEST && p->code != TW_RADIUS_STATUS_SERVER)
		return TW_ERR_AUTH;
	if (p->msg_auth < 0) {
		/* RFC 3579 §3.2: an Access-Request with EAP-Message and no
		 * Message-Authenticator MUST be silently discarded; RFC 5997
		 * §3: so must a Status-Server without one. A plain
		 * Access-Request (no EAP) has nothing to check here. */
		if (p->n_eap != 0 || p->code == TW_RADIUS_STATUS_SERVER)
			return TW_ERR_AUTH;
		return TW_OK;
	}
	size_t ma_off = p->attrs[p->msg_auth].off;

	/* In a request the header already holds the Request Authenticator. */
	msg_auth_compute(mac, p->buf, p->len, p->buf + 4, ma_off, k);
	if (tw_ct_eq(mac, p->buf + ma_off, TW_RADIUS_MSG_AUTH_LEN))
		ret = TW_OK;
	tw_wipe(mac, sizeof(mac));
	return ret;
}

int tw_radius_verify_request(const struct tw_radius_pkt *p,
			     const uint8_t *secret, size_t secret_len)
{
	struct tmp_key t;
	struct key k;
	int ret;

	if (p == NULL || !secret_ok(secret, secret_len))
		return TW_ERR_INVAL;
	k = tmp_key_init(&t, secret, secret_len);
	ret = verify_request(p, &k);
	tmp_key_wipe(&t);
	return ret;
}

int tw_radius_verify_request_ctx(const struct tw_radius_pkt *p,
				 const struct tw_radius_secret *s)
{
	struct key k;

	if (p == NULL || s == NULL)
		return TW_ERR_INVAL;
	k = key_of(s);
	return verify_request(p, &k);
}

static int verify_response(const struct tw_radius_pkt *p, const uint8_t req_auth[static 16],
			   const struct key *k, bool require_msg_auth)
{
	uint8_t ra[16], mac[16];
	bool ok;

	resp_auth_compute(ra, p->buf, p->len, req_auth, k->secret, k->len);
	ok = tw_ct_eq(ra, p->authenticator, TW_RADIUS_AUTH_LEN);
	if (p->msg_auth >= 0) {
		size_t ma_off = p->attrs[p->msg_auth].off;

		/* RFC 3579 §3.2: in a response the Message-Authenticator is
		 * computed with the Request Authenticator in the header. */
		msg_auth_compute(mac, p->buf, p->len, req_auth, ma_off, k);
		ok &= tw_ct_eq(mac, p->buf + ma_off, TW_RADIUS_MSG_AUTH_LEN);
	} else if (require_msg_auth || p->n_eap != 0) {
		/* RFC 3579 §3.2: Access-Challenge/-Accept/-Reject carrying
		 * EAP-Message MUST carry Message-Authenticator. */
		ok = false;
	}
	tw_wipe(ra, sizeof(ra));
	tw_wipe(mac, sizeof(mac));
	return ok ? TW_OK : TW_ERR_AUTH;
}

int tw_radius_verify_response(const struct tw_radius_pkt *p,
			      const uint8_t req_auth[static 16],
			      const uint8_t *secret, size_t secret_len,
			      bool require_msg_auth)
{
	struct tmp_key t;
	struct key k;
	int ret;

	if (p == NULL || req_auth == NULL || !secret_ok(secret, secret_len))
		return TW_ERR_INVAL;
	k = tmp_key_init(&t, secret, secret_len);
	ret = verify_response(p, req_auth, &k, require_msg_auth);
	tmp_key_wipe(&t);
	return ret;
}

int tw_radius_verify_response_ctx(const struct tw_radius_pkt *p,
				  const uint8_t req_auth[static 16],
				  const struct tw_radius_secret *s, bool require_msg_auth)
{
	struct key k;

	if (p == NULL || req_auth == NULL || s == NULL)
		return TW_ERR_INVAL;
	k = key_of(s);
	return verify_response(p, req_auth, &k, require_msg_auth);
}

/* ---- building ---------------------------------------------------------- */

static void fail(struct tw_radius_builder *b, int err)
{
	if (b->err == TW_OK)
		b->err = err;
}

/* Reserves an attribute of value length vlen; NULL (sticky error) if it
 * does not fit. */
static uint8_t *put_attr(struct tw_radius_builder *b, uint8_t type, size_t vlen)
{
	uint8_t *a;

	if (b->err != TW_OK)
		return NULL;
	if (vlen > TW_RADIUS_ATTR_MAX_VALUE) {
		fail(b, TW_ERR_LENGTH);
		return NULL;
	}
	if (b->max - b->len < ATTR_HDR + vlen) {
		fail(b, TW_ERR_OVERFLOW);
		return NULL;
	}
	a = b->buf + b->len;
	a[0] = type;
	a[1] = (uint8_t)(ATTR_HDR + vlen);
	b->len += ATTR_HDR + vlen;
	return a + ATTR_HDR;
}

void tw_radius_build_init(struct tw_radius_builder *b, uint8_t *buf, size_t max,
			  uint8_t code, uint8_t id,
			  const uint8_t authenticator[static 16], bool with_msg_auth)
{
	b->buf = buf;
	b->max = max < TW_RADIUS_MAX_LEN ? max : TW_RADIUS_MAX_LEN;
	b->len = 0;
	b->err = TW_OK;
	b->msg_auth_off = 0;
	b->mppe_n = 0;
	if (buf == NULL || authenticator == NULL) {
		b->max = 0;
		fail(b, TW_ERR_INVAL);
		return;
	}
	if (b->max < TW_RADIUS_HDR_LEN) {
		fail(b, TW_ERR_OVERFLOW);
		return;
	}
	/* RFC 2865 §3: Code, Identifier, Length (written by _finish),
	 * Authenticator. */
	buf[0] = code;
	buf[1] = id;
	tw_store_be16(buf + 2, TW_RADIUS_HDR_LEN);
	memmove(buf + 4, authenticator, TW_RADIUS_AUTH_LEN);
	b->len = TW_RADIUS_HDR_LEN;
	if (with_msg_auth) {
		/* Blast-RADIUS hardening: Message-Authenticator first, so no
		 * chosen attribute can precede it in the MD5 input. */
		uint8_t *v = put_attr(b, TW_RADIUS_MESSAGE_AUTHENTICATOR,
				      TW_RADIUS_MSG_AUTH_LEN);
		if (v != NULL) {
			memset(v, 0, TW_RADIUS_MSG_AUTH_LEN);
			b->msg_auth_off = (size_t)(v - buf);
		}
	}
}

void tw_radius_add(struct tw_radius_builder *b, uint8_t type, const void *val,
		   size_t len)
{
	uint8_t *v;

	if (b->err != TW_OK)
		return;
	/* Type 0 is unassigned; a second Message-Authenticator would make
	 * the packet invalid (RFC 3579 §3.2): use with_msg_auth instead. */
	if (type == 0 || type == TW_RADIUS_MESSAGE_AUTHENTICATOR ||
	    (val == NULL && len != 0)) {
		fail(b, TW_ERR_INVAL);
		return;
	}
	v = put_attr(b, type, len);
	if (v != NULL && len != 0)
		memcpy(v, val, len);
}

void tw_radius_add_u32(struct tw_radius_builder *b, uint8_t type, uint32_t v)
{
	uint8_t be[4];

	/* RFC 2865 §5: integer is 32 bits, big endian. */
	tw_store_be32(be, v);
	tw_radius_add(b, type, be, sizeof(be));
}

void tw_radius_add_eap(struct tw_radius_builder *b, const uint8_t *eap, size_t len)
{
	size_t off = 0;

	if (b->err != TW_OK)
		return;
	if (eap == NULL && len != 0) {
		fail(b, TW_ERR_INVAL);
		return;
	}
	/* RFC 3579 §3.1: an EAP packet longer than 253 octets is split over
	 * consecutive EAP-Message attributes of at most 253 octets; an empty
	 * one (length 2) is EAP-Start (§2.1). */
	do {
		size_t n = len - off;

		if (n > TW_RADIUS_ATTR_MAX_VALUE)
			n = TW_RADIUS_ATTR_MAX_VALUE;
		tw_radius_add(b, TW_RADIUS_EAP_MESSAGE, n ? eap + off : NULL, n);
		off += n;
	} while (off < len && b->err == TW_OK);
}

/*
 * RFC 2548 §2.4.2: the String field is the key length octet, the key and
 * zero padding to a multiple of 16 (P = p(1)..p(i)), encrypted as
 *   b(1) = MD5(S + R + A), c(1) = p(1) xor b(1),
 *   b(i) = MD5(S + c(i-1)), c(i) = p(i) xor b(i),
 * S the shared secret, R the Request Authenticator, A the salt. The same
 * walk decrypts when given the ciphertext as chaining input.
 */
static void mppe_crypt(uint8_t *out, const uint8_t *in, size_t len, bool decrypt,
		       const struct key *k, const uint8_t req_auth[static 16],
		       const uint8_t salt[static 2])
{
	struct tw_md5_ctx m;
	uint8_t bi[16], prev_c[16];

	for (size_t i = 0; i < len; i += 16) {
		/* MD5(S | ...): S is already absorbed in k->md5 */
		m = *k->md5;
		if (i == 0) {
			tw_md5_update(&m, req_auth, TW_RADIUS_AUTH_LEN);
			tw_md5_update(&m, salt, MPPE_SALT_LEN);
		} else {
			tw_md5_update(&m, prev_c, 16);
		}
		tw_md5_final(&m, bi);
		/* c(i) chains: take it from the input when decrypting, from
		 * the output when encrypting (out may alias in). */
		if (decrypt)
			memcpy(prev_c, in + i, 16);
		tw_xor(out + i, in + i, bi, 16);
		if (!decrypt)
			memcpy(prev_c, out + i, 16);
	}
	tw_wipe(bi, sizeof(bi));
	tw_wipe(prev_c, sizeof(prev_c));
	tw_wipe(&m, sizeof(m));
}

/* One MS-MPPE-*-Key Vendor-Specific attribute (RFC 2548 §2.4.2, §2.4.3)
 * with its String in the clear: p = key length (32) | key | zeros to 48.
 * Returns where the Salt is (the String follows), NULL on error. */
static uint8_t *put_mppe_plain(struct tw_radius_builder *b, uint8_t vendor_type,
			       const uint8_t key[static 32], uint16_t salt)
{
	uint8_t *v = put_attr(b, TW_RADIUS_VENDOR_SPECIFIC,
			      4 + 2 + TW_RADIUS_MPPE_ATTR_LEN);

	if (v == NULL)
		return NULL;
	/* RFC 2865 §5.26: Vendor-Id; RFC 2548 §2.4.2: Vendor-Type,
	 * Vendor-Length (Vendor-Type + Vendor-Length + Salt + String), Salt. */
	tw_store_be32(v, TW_RADIUS_VENDOR_MICROSOFT);
	v[4] = vendor_type;
	v[5] = (uint8_t)(2 + TW_RADIUS_MPPE_ATTR_LEN);
	tw_store_be16(v + 6, salt);
	v[8] = TW_RADIUS_MPPE_KEY_LEN;
	memcpy(v + 9, key, TW_RADIUS_MPPE_KEY_LEN);
	memset(v + 9 + TW_RADIUS_MPPE_KEY_LEN, 0, MPPE_PLAIN_LEN - 1 - TW_RADIUS_MPPE_KEY_LEN);
	return v + 6;
}

static void add_mppe_key(struct tw_radius_builder *b, uint8_t vendor_type,
			 const struct key *k, const uint8_t req_auth[static 16],
			 const uint8_t key[static 32], uint16_t salt)
{
	uint8_t *sv = put_mppe_plain(b, vendor_type, key, salt);

	if (sv != NULL)
		mppe_crypt(sv + MPPE_SALT_LEN, sv + MPPE_SALT_LEN, MPPE_PLAIN_LEN, false, k,
			   req_auth, sv);
}

/* The salts of the two keys (RFC 2548 §2.4.2: the most significant bit
 * set, unique within the packet: seed and seed + 1 always differ in their
 * low bit). */
static uint16_t recv_salt_of(uint16_t seed)
{
	return (uint16_t)(seed | 0x8000);
}

static uint16_t send_salt_of(uint16_t seed)
{
	return (uint16_t)((uint16_t)(seed + 1) | 0x8000);
}

static void add_mppe_keys(struct tw_radius_builder *b, const struct key *k,
			  const uint8_t req_auth[static 16], const uint8_t msk[static 64],
			  uint16_t salt_seed)
{
	uint16_t recv_salt = recv_salt_of(salt_seed), send_salt = send_salt_of(salt_seed);

	/* RFC 5247 §3 / RFC 3748 convention: Recv-Key = MSK[0..31],
	 * Send-Key = MSK[32..63]. */
	add_mppe_key(b, TW_RADIUS_MS_MPPE_RECV_KEY, k, req_auth, msk, recv_salt);
	add_mppe_key(b, TW_RADIUS_MS_MPPE_SEND_KEY, k, req_auth, msk + 32, send_salt);
}

void tw_radius_add_mppe_keys(struct tw_radius_builder *b, const uint8_t *secret,
			     size_t secret_len, const uint8_t req_auth[static 16],
			     const uint8_t msk[static 64], uint16_t salt_seed)
{
	struct tmp_key t;
	struct key k;

	if (b->err != TW_OK)
		return;
	if (!secret_ok(secret, secret_len) || req_auth == NULL || msk == NULL) {
		fail(b, TW_ERR_INVAL);
		return;
	}
	k = tmp_key_init(&t, secret, secret_len);
	add_mppe_keys(b, &k, req_auth, msk, salt_seed);
	tmp_key_wipe(&t);
}

void tw_radius_add_mppe_keys_ctx(struct tw_radius_builder *b,
				 const struct tw_radius_secret *s,
				 const uint8_t req_auth[static 16],
				 const uint8_t msk[static 64], uint16_t salt_seed)
{
	struct key k;

	if (b->err != TW_OK)
		return;
	if (s == NULL || req_auth == NULL || msk == NULL) {
		fail(b, TW_ERR_INVAL);
		return;
	}
	k = key_of(s);
	add_mppe_keys(b, &k, req_auth, msk, salt_seed);
}

void tw_radius_add_mppe_keys_later(struct tw_radius_builder *b,
				   const uint8_t msk[static 64], uint16_t salt_seed)
{
	uint8_t *r, *t;

	if (b->err != TW_OK)
		return;
	if (msk == NULL || b->mppe_n != 0) {
		fail(b, TW_ERR_INVAL);
		return;
	}
	/* RFC 5247 §3: Recv-Key = MSK[0..31], Send-Key = MSK[32..63] */
	r = put_mppe_plain(b, TW_RADIUS_MS_MPPE_RECV_KEY, msk, recv_salt_of(salt_seed));
	t = r != NULL ? put_mppe_plain(b, TW_RADIUS_MS_MPPE_SEND_KEY, msk + 32,
				       send_salt_of(salt_seed))
		      : NULL;
	if (r != NULL)
		b->mppe_off[b->mppe_n++] = (size_t)(r - b->buf);
	if (t != NULL)
		b->mppe_off[b->mppe_n++] = (size_t)(t - b->buf);
}

/* The keys of tw_radius_add_mppe_keys_later, encrypted one by one with
 * the header's authenticator. */
static void mppe_pending(struct tw_radius_builder *b, const struct key *k)
{
	for (unsigned i = 0; i < b->mppe_n; i++) {
		uint8_t *sv = b->buf + b->mppe_off[i];

		mppe_crypt(sv + MPPE_SALT_LEN, sv + MPPE_SALT_LEN, MPPE_PLAIN_LEN, false, k,
			   b->buf + 4, sv);
	}
	b->mppe_n = 0;
}

static int mppe_decrypt(const uint8_t *val, size_t len, const struct key *k,
			const uint8_t req_auth[static 16], uint8_t key[static 32])
{
	uint8_t plain[MPPE_PLAIN_MAX];
	size_t clen;
	int ret = TW_ERR_DECODE;

	/* Salt (2) then a String that is a non-empty multiple of 16. */
	if (len < MPPE_SALT_LEN + 16)
		return TW_ERR_DECODE;
	clen = len - MPPE_SALT_LEN;
	if (clen % 16 != 0 || clen > MPPE_PLAIN_MAX)
		return TW_ERR_DECODE;
	/* RFC 2548 §2.4.2: the salt's most significant bit MUST be set. */
	if ((val[0] & 0x80) == 0)
		return TW_ERR_DECODE;
	mppe_crypt(plain, val + MPPE_SALT_LEN, clen, true, k, req_auth, val);
	/* The Key-Length octet: our keys are 32 octets and must fit. */
	if (plain[0] != TW_RADIUS_MPPE_KEY_LEN || plain[0] > clen - 1)
		goto out;
	memcpy(key, plain + 1, TW_RADIUS_MPPE_KEY_LEN);
	ret = TW_OK;
out:
	tw_wipe(plain, sizeof(plain));
	return ret;
}

int tw_radius_mppe_decrypt(const uint8_t *val, size_t len, const uint8_t *secret,
			   size_t secret_len, const uint8_t req_auth[static 16],
			   uint8_t key[static 32])
{
	struct tmp_key t;
	struct key k;
	int ret;

	if (val == NULL || req_auth == NULL || key == NULL ||
	    !secret_ok(secret, secret_len))
		return TW_ERR_INVAL;
	k = tmp_key_init(&t, secret, secret_len);
	ret = mppe_decrypt(val, len, &k, req_auth, key);
	tmp_key_wipe(&t);
	return ret;
}

int tw_radius_mppe_decrypt_ctx(const uint8_t *val, size_t len,
			       const struct tw_radius_secret *s,
			       const uint8_t req_auth[static 16], uint8_t key[static 32])
{
	struct key k;

	if (val == NULL || req_auth == NULL || key == NULL || s == NULL)
		return TW_ERR_INVAL;
	k = key_of(s);
	return mppe_decrypt(val, len, &k, req_auth, key);
}

static int get_mppe_keys(const struct tw_radius_pkt *p, const struct key *k,
			 const uint8_t req_auth[static 16], uint8_t msk[static 64])
{
	bool have_recv = false, have_send = false;
	int ret = TW_ERR_NOTFOUND;

	for (unsigned i = 0; i < p->n_attrs; i++) {
		const struct tw_radius_attr *a = &p->attrs[i];
		const uint8_t *v = p->buf + a->off;
		size_t off = 4;

		if (a->type != TW_RADIUS_VENDOR_SPECIFIC || a->len < 4 ||
		    tw_load_be32(v) != TW_RADIUS_VENDOR_MICROSOFT)
			continue;
		/* RFC 2548 §2: Vendor-Type, Vendor-Length (>= 2, covering
		 * itself), value; checked before any subtraction. */
		while (off < a->len) {
			size_t vlen;
			uint8_t vtype;
			uint8_t *dst;
			bool *have;

			if (a->len - off < 2) {
				ret = TW_ERR_DECODE;
				goto out;
			}
			vtype = v[off];
			vlen = v[off + 1];
			if (vlen < 2 || vlen > a->len - off) {
				ret = TW_ERR_DECODE;
				goto out;
			}
			if (vtype == TW_RADIUS_MS_MPPE_RECV_KEY) {
				dst = msk;
				have = &have_recv;
			} else if (vtype == TW_RADIUS_MS_MPPE_SEND_KEY) {
				dst = msk + 32;
				have = &have_send;
			} else {
				off += vlen;
				continue;
			}
			/* A second copy of a key is ambiguous: refuse. */
			if (*have) {
				ret = TW_ERR_DECODE;
				goto out;
			}
			ret = mppe_decrypt(v + off + 2, vlen - 2, k, req_auth, dst);
			if (ret != TW_OK)
				goto out;
			*have = true;
			off += vlen;
		}
	}
	ret = have_recv && have_send ? TW_OK : TW_ERR_NOTFOUND;
out:
	if (ret != TW_OK)
		tw_wipe(msk, 64);
	return ret;
}

int tw_radius_get_mppe_keys(const struct tw_radius_pkt *p, const uint8_t *secret,
			    size_t secret_len, const uint8_t req_auth[static 16],
			    uint8_t msk[static 64])
{
	struct tmp_key t;
	struct key k;
	int ret;

	if (p == NULL || msk == NULL || req_auth == NULL ||
	    !secret_ok(secret, secret_len))
		return TW_ERR_INVAL;
	k = tmp_key_init(&t, secret, secret_len);
	ret = get_mppe_keys(p, &k, req_auth, msk);
	tmp_key_wipe(&t);
	return ret;
}

int tw_radius_get_mppe_keys_ctx(const struct tw_radius_pkt *p,
				const struct tw_radius_secret *s,
				const uint8_t req_auth[static 16], uint8_t msk[static 64])
{
	struct key k;

	if (p == NULL || msk == NULL || req_auth == NULL || s == NULL)
		return TW_ERR_INVAL;
	k = key_of(s);
	return get_mppe_keys(p, &k, req_auth, msk);
}

/* ---- finishing --------------------------------------------------------- */

/* key_ok: the caller's secret argument is usable. */
static int finish_common(struct tw_radius_builder *b, bool key_ok, size_t *out_len)
{
	if (b == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	if (b->err == TW_OK && !key_ok)
		fail(b, TW_ERR_INVAL);
	if (b->err != TW_OK) {
		/* never leave keys in the clear in a reply that is not sent */
		for (unsigned i = 0; i < b->mppe_n; i++)
			tw_wipe(b->buf + b->mppe_off[i] + MPPE_SALT_LEN, MPPE_PLAIN_LEN);
		b->mppe_n = 0;
		return b->err;
	}
	tw_store_be16(b->buf + 2, (uint16_t)b->len);
	return TW_OK;
}

static int finish_response(struct tw_radius_builder *b, const struct key *k,
			   size_t *out_len)
{
	uint8_t req_auth[16];

	/* The header still holds the request's authenticator (see _init). */
	mppe_pending(b, k);
	memcpy(req_auth, b->buf + 4, TW_RADIUS_AUTH_LEN);
	if (b->msg_auth_off != 0) {
		/* RFC 3579 §3.2: computed with the Request Authenticator in
		 * the header, before the Response Authenticator replaces it. */
		msg_auth_compute(b->buf + b->msg_auth_off, b->buf, b->len, req_auth,
				 b->msg_auth_off, k);
	}
	/* RFC 2865 §3: Response Authenticator over the final attributes. */
	resp_auth_compute(b->buf + 4, b->buf, b->len, req_auth, k->secret, k->len);
	*out_len = b->len;
	/* Finishing twice would sign over the Response Authenticator. */
	b->err = TW_ERR_STATE;
	return TW_OK;
}

static int finish_request(struct tw_radius_builder *b, const struct key *k,
			  size_t *out_len)
{
	mppe_pending(b, k); /* not for requests, but never in the clear */
	if (b->msg_auth_off != 0)
		msg_auth_compute(b->buf + b->msg_auth_off, b->buf, b->len,
				 b->buf + 4, b->msg_auth_off, k);
	*out_len = b->len;
	b->err = TW_ERR_STATE;
	return TW_OK;
}

int tw_radius_finish_response(struct tw_radius_builder *b, const uint8_t *secret,
			      size_t secret_len, size_t *out_len)
{
	struct tmp_key t;
	struct key k;
	int err = finish_common(b, secret_ok(secret, secret_len), out_len);

	if (err != TW_OK)
		return err;
	k = tmp_key_init(&t, secret, secret_len);
	err = finish_response(b, &k, out_len);
	tmp_key_wipe(&t);
	return err;
}

int tw_radius_finish_response_ctx(struct tw_radius_builder *b,
				  const struct tw_radius_secret *s, size_t *out_len)
{
	struct key k;
	int err = finish_common(b, s != NULL, out_len);

	if (err != TW_OK)
		return err;
	k = key_of(s);
	return finish_response(b, &k, out_len);
}

int tw_radius_finish_v11(struct tw_radius_builder *b, const uint8_t token[static 4],
			 size_t *out_len)
{
	size_t in, out, old_len;
	int err;

	if (token == NULL)
		return TW_ERR_INVAL;
	err = finish_common(b, true, out_len);
	if (err != TW_OK)
		return err;
	/* the attributes again, in place (they only shrink): no
	 * Message-Authenticator, the MS-MPPE keys left in the clear by
	 * _later as plain strings of their 32 octets */
	old_len = b->len;
	for (in = out = TW_RADIUS_HDR_LEN; in + 2 <= old_len;) {
		size_t alen = b->buf[in + 1];
		bool mppe = false;

		if (alen < 2 || in + alen > old_len)
			break; /* not reached: the builder wrote them */
		if (b->msg_auth_off != 0 && in + 2 == b->msg_auth_off) {
			in += alen;
			continue;
		}
		for (unsigned i = 0; i < b->mppe_n; i++)
			mppe = mppe || b->mppe_off[i] == in + 8;
		if (mppe) {
			uint8_t *a = b->buf + out;

			/* Type, Length, Vendor-Id, Vendor-Type as they are */
			memmove(a, b->buf + in, 2 + 4 + 1);
			a[1] = (uint8_t)(2 + 4 + 2 + TW_RADIUS_MPPE_KEY_LEN);
			a[7] = (uint8_t)(2 + TW_RADIUS_MPPE_KEY_LEN);
			memmove(a + 8, b->buf + in + 8 + MPPE_SALT_LEN + 1, TW_RADIUS_MPPE_KEY_LEN);
			out += 2 + 4 + 2 + TW_RADIUS_MPPE_KEY_LEN;
			in += alen;
			continue;
		}
		memmove(b->buf + out, b->buf + in, alen);
		out += alen;
		in += alen;
	}
	/* what is left behind the new end held keys */
	tw_wipe(b->buf + out, old_len - out);
	b->mppe_n = 0;
	b->msg_auth_off = 0;
	b->len = out;
	tw_store_be16(b->buf + 2, (uint16_t)out);
	memcpy(b->buf + 4, token, 4);
	memset(b->buf + 8, 0, TW_RADIUS_AUTH_LEN - 4);
	*out_len = out;
	b->err = TW_ERR_STATE;
	return TW_OK;
}

int tw_radius_finish_request(struct tw_radius_builder *b, const uint8_t *secret,
			     size_t secret_len, size_t *out_len)
{
	struct tmp_key t;
	struct key k;
	int err = finish_common(b, secret_ok(secret, secret_len), out_len);

	if (err != TW_OK)
		return err;
	k = tmp_key_init(&t, secret, secret_len);
	err = finish_request(b, &k, out_len);
	tmp_key_wipe(&t);
	return err;
}

int tw_radius_finish_request_ctx(struct tw_radius_builder *b,
				 const struct tw_radius_secret *s, size_t *out_len)
{
	struct key k;
	int err = finish_common(b, s != NULL, out_len);

	if (err != TW_OK)
		return err;
	k = key_of(s);
	return finish_request(b, &k, out_len);
}

/* ---- many responses at once ---------------------------------------------- */

enum { FIN_CHUNK = 64, FIN_TAIL = 4 * TW_MD5_BLOCK_LEN };

/*
 * j absorbs, from h, data[0..len) then suffix[0..slen) then the MD5
 * padding (RFC 1321 §3.1-3.2) of a message of pre + len + slen octets
 * (pre: what h has absorbed already, a multiple of 64): the whole blocks
 * of data in place, the rest through tail (FIN_TAIL octets).
 */
static void job_msg(struct tw_md5_job *j, const uint32_t h[4], const uint8_t *data, size_t len,
		    size_t pre, const uint8_t *suffix, size_t slen, uint8_t *tail)
{
	size_t full = len / 64, rest = len % 64, tl = (rest + slen + 9 + 63) / 64 * 64;
	uint64_t bits = (uint64_t)(pre + len + slen) * 8;

	memcpy(j->h, h, sizeof(j->h));
	memcpy(tail, data + 64 * full, rest);
	if (slen > 0)
		memcpy(tail + rest, suffix, slen);
	tail[rest + slen] = 0x80;
	memset(tail + rest + slen + 1, 0, tl - rest - slen - 1 - 8);
	tw_store_le64(tail + tl - 8, bits);
	j->seg[0] = data;
	j->nblk[0] = full;
	j->seg[1] = tail;
	j->nblk[1] = tl / 64;
	j->nblk[2] = j->nblk[3] = 0;
}

static void job_out(const struct tw_md5_job *j, uint8_t out[16])
{
	for (int w = 0; w < 4; w++)
		tw_store_le32(out + 4 * w, j->h[w]);
}

/*
 * HMAC-MD5 (RFC 2104 §2) of n messages at once: mj[k] is set up as the
 * inner hash of message k from key[k]'s precomputed inner state (job_msg
 * or job_prefixed); runs it, then the outer hash from key[k]'s outer
 * state; mac[k] = the MAC. mj and tail are reused.
 */
static void hmac_md5_mb(struct tw_md5_job *mj, size_t n, const struct tw_radius_secret *const *key,
			uint8_t (*tail)[FIN_TAIL], uint8_t (*mac)[16])
{
	tw_md5_mb(mj, n);
	for (size_t k = 0; k < n; k++) {
		job_out(&mj[k], mac[k]);
		job_msg(&mj[k], key[k]->hmac.ostate, mac[k], 16, TW_MD5_BLOCK_LEN, NULL, 0, tail[k]);
	}
	tw_md5_mb(mj, n);
	for (size_t k = 0; k < n; k++)
		job_out(&mj[k], mac[k]);
}

/*
 * RFC 2548 §2.4.2 for the keys of tw_radius_add_mppe_keys_later in the
 * jobs ok[0..nok): b(1) = MD5(S | R | A), b(i) = MD5(S | c(i-1)), c(i) =
 * p(i) ^ b(i) (R: the header's request authenticator, A: the Salt). Every
 * key's chain advances one step per multi-buffer call, FIN_CHUNK keys at
 * a time. mj and tail are the caller's scratch (FIN_CHUNK entries).
 */
static void mppe_chunk(struct tw_radius_finish_job *jobs, const size_t *ok, size_t nok,
		       struct tw_md5_job *mj, uint8_t (*tail)[FIN_TAIL])
{
	uint8_t *sv[FIN_CHUNK], sfx[FIN_CHUNK][TW_RADIUS_AUTH_LEN + MPPE_SALT_LEN], bi[16];
	const struct tw_radius_secret *key[FIN_CHUNK];
	struct tw_md5_ctx iv;
	size_t m = 0;

	tw_md5_init(&iv);
	for (size_t k = 0; k <= nok; k++) {
		struct tw_radius_builder *b = k < nok ? jobs[ok[k]].b : NULL;

		for (unsigned i = 0; b != NULL && i < b->mppe_n; i++) {
			sv[m] = b->buf + b->mppe_off[i];
			key[m] = jobs[ok[k]].s;
			memcpy(sfx[m], b->buf + 4, TW_RADIUS_AUTH_LEN);
			memcpy(sfx[m] + TW_RADIUS_AUTH_LEN, sv[m], MPPE_SALT_LEN);
			m++;
		}
		if (b != NULL)
			b->mppe_n = 0;
		/* a full group (room for one more reply's two keys kept), or
		 * the end */
		if (m == 0 || (k < nok && m + 2 <= FIN_CHUNK))
			continue;
		for (size_t r = 0; r < MPPE_PLAIN_LEN / 16; r++) {
			for (size_t j = 0; j < m; j++) {
				const uint8_t *x = r == 0 ? sfx[j] : sv[j] + MPPE_SALT_LEN + 16 * (r - 1);

				job_msg(&mj[j], iv.h, key[j]->secret, key[j]->len, 0, x,
					r == 0 ? sizeof(sfx[j]) : 16, tail[j]);
			}
			tw_md5_mb(mj, m);
			for (size_t j = 0; j < m; j++) {
				uint8_t *c = sv[j] + MPPE_SALT_LEN + 16 * r;

				job_out(&mj[j], bi);
				tw_xor(c, c, bi, 16);
			}
		}
		tw_wipe(tail, m * sizeof(tail[0]));
		tw_wipe(mj, m * sizeof(mj[0]));
		m = 0;
	}
	tw_wipe(bi, sizeof(bi));
}

static void finish_chunk(struct tw_radius_finish_job *jobs, size_t n, bool response)
{
	struct tw_md5_job mj[FIN_CHUNK];
	struct tw_md5_ctx iv;
	uint8_t tail[FIN_CHUNK][FIN_TAIL], dig[FIN_CHUNK][16];
	size_t ok[FIN_CHUNK], with_ma[FIN_CHUNK], nok = 0, nma = 0;
	const struct tw_radius_secret *key[FIN_CHUNK] = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct tw_radius_finish_job *f = &jobs[i];

		f->len = 0;
		f->rc = finish_common(f->b, f->s != NULL, &f->len);
		if (f->rc != TW_OK)
			continue;
		ok[nok++] = i;
		if (f->b->msg_auth_off != 0)
			with_ma[nma++] = i;
	}
	mppe_chunk(jobs, ok, nok, mj, tail);
	/* RFC 3579 §3.2 with the Request Authenticator still in the header
	 * and the value zeroed (as built): inner hashes, then outer ones */
	for (size_t k = 0; k < nma; k++) {
		const struct tw_radius_finish_job *f = &jobs[with_ma[k]];

		key[k] = f->s;
		job_msg(&mj[k], f->s->hmac.istate, f->b->buf, f->b->len, TW_MD5_BLOCK_LEN, NULL, 0,
			tail[k]);
	}
	hmac_md5_mb(mj, nma, key, tail, dig);
	for (size_t k = 0; k < nma; k++) {
		const struct tw_radius_finish_job *f = &jobs[with_ma[k]];

		memcpy(f->b->buf + f->b->msg_auth_off, dig[k], TW_RADIUS_MSG_AUTH_LEN);
	}
	/* a request is done: its header holds its own authenticator */
	for (size_t k = 0; !response && k < nok; k++) {
		struct tw_radius_finish_job *f = &jobs[ok[k]];

		f->len = f->b->len;
		f->b->err = TW_ERR_STATE;
	}
	if (!response)
		nok = 0;
	/* RFC 2865 §3: MD5(Code | ID | Length | RequestAuth | Attributes |
	 * Secret) over the final attributes, from MD5's initial value */
	tw_md5_init(&iv);
	for (size_t k = 0; k < nok; k++) {
		const struct tw_radius_finish_job *f = &jobs[ok[k]];

		job_msg(&mj[k], iv.h, f->b->buf, f->b->len, 0, f->s->secret, f->s->len, tail[k]);
	}
	tw_md5_mb(mj, nok);
	for (size_t k = 0; k < nok; k++) {
		struct tw_radius_finish_job *f = &jobs[ok[k]];

		job_out(&mj[k], f->b->buf + 4);
		f->len = f->b->len;
		/* finishing twice would sign over the Response Authenticator */
		f->b->err = TW_ERR_STATE;
	}
	/* secrets, inner hashes: in the first n entries only (a whole chunk's
	 * 20 KiB for a batch of one cost more than its MD5) */
	tw_wipe(tail, n * sizeof(tail[0]));
	tw_wipe(dig, n * sizeof(dig[0]));
	tw_wipe(mj, n * sizeof(mj[0]));
}

void tw_radius_finish_responses_ctx(struct tw_radius_finish_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i += FIN_CHUNK)
		finish_chunk(jobs + i, n - i < FIN_CHUNK ? n - i : FIN_CHUNK, true);
}

void tw_radius_finish_requests_ctx(struct tw_radius_finish_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i += FIN_CHUNK)
		finish_chunk(jobs + i, n - i < FIN_CHUNK ? n - i : FIN_CHUNK, false);
}

/* ---- many requests at once ------------------------------------------------ */

/*
 * j absorbs, from the HMAC inner state of s, the request p with its
 * Message-Authenticator value (at ma_off) taken as zeros, then the
 * padding of 64 + len octets: the whole blocks before the one(s) holding
 * the value in place, those through mid (zeroed there), the whole blocks
 * after in place, the rest and the padding through tail.
 */
static void job_ma_request(struct tw_md5_job *j, const struct tw_radius_secret *s,
			   const uint8_t *buf, size_t len, size_t ma_off, uint8_t *mid,
			   uint8_t *tail)
{
	size_t b0 = ma_off / 64, b1 = (ma_off + TW_RADIUS_MSG_AUTH_LEN - 1) / 64;
	size_t from = 64 * b0, to = 64 * (b1 + 1);

	memcpy(j->h, s->hmac.istate, sizeof(j->h));
	j->seg[0] = buf;
	j->nblk[0] = b0;
	if (to <= len) {
		memcpy(mid, buf + from, to - from);
		memset(mid + (ma_off - from), 0, TW_RADIUS_MSG_AUTH_LEN);
		j->seg[1] = mid;
		j->nblk[1] = b1 - b0 + 1;
		/* the rest: whole blocks in place, then the tail */
		struct tw_md5_job rest;

		job_msg(&rest, j->h, buf + to, len - to, TW_MD5_BLOCK_LEN + to, NULL, 0, tail);
		j->seg[2] = rest.seg[0];
		j->nblk[2] = rest.nblk[0];
		j->seg[3] = rest.seg[1];
		j->nblk[3] = rest.nblk[1];
	} else {
		/* the value's block(s) reach the end: one stretch to pad */
		struct tw_md5_job rest;

		memcpy(mid, buf + from, len - from);
		memset(mid + (ma_off - from), 0, TW_RADIUS_MSG_AUTH_LEN);
		job_msg(&rest, j->h, mid, len - from, TW_MD5_BLOCK_LEN + from, NULL, 0, tail);
		j->seg[1] = rest.seg[0];
		j->nblk[1] = rest.nblk[0];
		j->seg[2] = rest.seg[1];
		j->nblk[2] = rest.nblk[1];
		j->nblk[3] = 0;
	}
}

static void verify_chunk(struct tw_radius_verify_job *jobs, size_t n)
{
	struct tw_md5_job mj[FIN_CHUNK];
	uint8_t mid[FIN_CHUNK][2 * TW_MD5_BLOCK_LEN], tail[FIN_CHUNK][FIN_TAIL],
		dig[FIN_CHUNK][16];
	size_t with_ma[FIN_CHUNK], nma = 0;
	const struct tw_radius_secret *key[FIN_CHUNK] = { 0 };

	for (size_t i = 0; i < n; i++) {
		struct tw_radius_verify_job *v = &jobs[i];
		const struct tw_radius_pkt *p = v->p;

		if (p == NULL || v->s == NULL) {
			v->rc = TW_ERR_INVAL;
			continue;
		}
		/* the rules of verify_request without a value to check */
		if (p->code != TW_RADIUS_ACCESS_REQUEST && p->code != TW_RADIUS_STATUS_SERVER) {
			v->rc = TW_ERR_AUTH;
			continue;
		}
		if (p->msg_auth < 0) {
			v->rc = p->n_eap != 0 || p->code == TW_RADIUS_STATUS_SERVER ? TW_ERR_AUTH
										   : TW_OK;
			continue;
		}
		v->rc = TW_ERR_AUTH;
		job_ma_request(&mj[nma], v->s, p->buf, p->len, p->attrs[p->msg_auth].off,
			       mid[nma], tail[nma]);
		key[nma] = v->s;
		with_ma[nma++] = i;
	}
	hmac_md5_mb(mj, nma, key, tail, dig);
	for (size_t k = 0; k < nma; k++) {
		struct tw_radius_verify_job *v = &jobs[with_ma[k]];
		const struct tw_radius_pkt *p = v->p;

		if (tw_ct_eq(dig[k], p->buf + p->attrs[p->msg_auth].off, TW_RADIUS_MSG_AUTH_LEN))
			v->rc = TW_OK;
	}
	/* the entries used: the first n */
	tw_wipe(mid, n * sizeof(mid[0]));
	tw_wipe(tail, n * sizeof(tail[0]));
	tw_wipe(dig, n * sizeof(dig[0]));
	tw_wipe(mj, n * sizeof(mj[0]));
}

void tw_radius_verify_requests_ctx(struct tw_radius_verify_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i += FIN_CHUNK)
		verify_chunk(jobs + i, n - i < FIN_CHUNK ? n - i : FIN_CHUNK);
}

/* ---- many responses checked at once ---------------------------------------- */

enum { PREFIX_MAX = 4 * TW_MD5_BLOCK_LEN };

/*
 * j absorbs, from h, buf[0..len) with its first pl octets taken from pre
 * instead (pl a multiple of 64 below len, or pl >= len: the whole packet
 * is in pre), then suffix, then the padding of pre_abs + len + slen.
 */
static void job_prefixed(struct tw_md5_job *j, const uint32_t h[4], const uint8_t *pre, size_t pl,
			 const uint8_t *buf, size_t len, size_t pre_abs, const uint8_t *suffix,
			 size_t slen, uint8_t *tail)
{
	struct tw_md5_job rest;

	if (pl >= len) {
		job_msg(j, h, pre, len, pre_abs, suffix, slen, tail);
		return;
	}
	job_msg(&rest, h, buf + pl, len - pl, pre_abs + pl, suffix, slen, tail);
	memcpy(j->h, h, sizeof(j->h));
	j->seg[0] = pre;
	j->nblk[0] = pl / 64;
	j->seg[1] = rest.seg[0];
	j->nblk[1] = rest.nblk[0];
	j->seg[2] = rest.seg[1];
	j->nblk[2] = rest.nblk[1];
	j->nblk[3] = 0;
}

/* The first min(len, 64 * ceil(end / 64)) octets of p into pre, the
 * header authenticator replaced by req_auth and, when ma_off, the
 * Message-Authenticator value zeroed; returns that length. */
static size_t patch_prefix(uint8_t *pre, const struct tw_radius_pkt *p, const uint8_t *req_auth,
			   size_t ma_off, size_t end)
{
	size_t pl = (end + 63) / 64 * 64;

	if (pl > p->len)
		pl = p->len;
	memcpy(pre, p->buf, pl);
	memcpy(pre + 4, req_auth, TW_RADIUS_AUTH_LEN);
	if (ma_off != 0)
		memset(pre + ma_off, 0, TW_RADIUS_MSG_AUTH_LEN);
	return pl;
}

static void verify_resp_chunk(struct tw_radius_verify_resp_job *jobs, size_t n)
{
	struct tw_md5_job ra[FIN_CHUNK], ma[FIN_CHUNK];
	uint8_t pre_ra[FIN_CHUNK][TW_MD5_BLOCK_LEN], pre_ma[FIN_CHUNK][PREFIX_MAX];
	uint8_t tail_ra[FIN_CHUNK][FIN_TAIL], tail_ma[FIN_CHUNK][FIN_TAIL], dig[FIN_CHUNK][16];
	size_t idx[FIN_CHUNK], with_ma[FIN_CHUNK], nra = 0, nma = 0;
	bool ok[FIN_CHUNK];
	const struct tw_radius_secret *key[FIN_CHUNK] = { 0 };
	struct tw_md5_ctx iv;

	tw_md5_init(&iv);
	for (size_t i = 0; i < n; i++) {
		struct tw_radius_verify_resp_job *v = &jobs[i];
		const struct tw_radius_pkt *p = v->p;
		size_t pl, ma_off = 0;

		if (p == NULL || v->req_auth == NULL || v->s == NULL) {
			v->rc = TW_ERR_INVAL;
			continue;
		}
		if (p->msg_auth >= 0) {
			ma_off = p->attrs[p->msg_auth].off;
			if (ma_off + TW_RADIUS_MSG_AUTH_LEN > PREFIX_MAX) {
				v->rc = tw_radius_verify_response_ctx(p, v->req_auth, v->s,
								      v->require_msg_auth);
				continue;
			}
		} else if (v->require_msg_auth || p->n_eap != 0) {
			v->rc = TW_ERR_AUTH; /* RFC 3579 §3.2 */
			continue;
		}
		/* RFC 2865 §3 Response Authenticator */
		pl = patch_prefix(pre_ra[nra], p, v->req_auth, 0, TW_RADIUS_HDR_LEN);
		job_prefixed(&ra[nra], iv.h, pre_ra[nra], pl, p->buf, p->len, 0, v->s->secret,
			     v->s->len, tail_ra[nra]);
		ok[nra] = true;
		idx[nra] = i;
		if (ma_off != 0) {
			/* RFC 3579 §3.2, the Request Authenticator in the header */
			pl = patch_prefix(pre_ma[nma], p, v->req_auth, ma_off,
					  ma_off + TW_RADIUS_MSG_AUTH_LEN);
			job_prefixed(&ma[nma], v->s->hmac.istate, pre_ma[nma], pl, p->buf, p->len,
				     TW_MD5_BLOCK_LEN, NULL, 0, tail_ma[nma]);
			key[nma] = v->s;
			with_ma[nma++] = nra;
		}
		nra++;
	}
	tw_md5_mb(ra, nra);
	hmac_md5_mb(ma, nma, key, tail_ma, dig);
	for (size_t k = 0; k < nma; k++) {
		const struct tw_radius_pkt *p = jobs[idx[with_ma[k]]].p;

		ok[with_ma[k]] &= tw_ct_eq(dig[k], p->buf + p->attrs[p->msg_auth].off,
					   TW_RADIUS_MSG_AUTH_LEN);
	}
	for (size_t k = 0; k < nra; k++) {
		struct tw_radius_verify_resp_job *v = &jobs[idx[k]];

		job_out(&ra[k], dig[0]);
		ok[k] &= tw_ct_eq(dig[0], v->p->authenticator, TW_RADIUS_AUTH_LEN);
		v->rc = ok[k] ? TW_OK : TW_ERR_AUTH;
	}
	tw_wipe(tail_ra, sizeof(tail_ra));
	tw_wipe(tail_ma, sizeof(tail_ma));
	tw_wipe(dig, sizeof(dig));
	tw_wipe(ra, sizeof(ra));
	tw_wipe(ma, sizeof(ma));
}

void tw_radius_verify_responses_ctx(struct tw_radius_verify_resp_job *jobs, size_t n)
{
	if (jobs == NULL)
		return;
	for (size_t i = 0; i < n; i += FIN_CHUNK)
		verify_resp_chunk(jobs + i, n - i < FIN_CHUNK ? n - i : FIN_CHUNK);
}

/* ---- accounting (RFC 2866, June 2000) ------------------------------------ */

/*
 * RFC 2866 §3: "Request Authenticator = MD5(Code + Identifier + Length +
 * 16 zero octets + request attributes + shared secret)". The
 * Message-Authenticator of an Accounting-Request cannot cover the Request
 * Authenticator (which covers it): it is HMAC-MD5 over the packet with 16
 * zero octets in the Authenticator field, as RFC 5176 §3.3 defines it for
 * the other requests that carry a computed Request Authenticator, and as
 * FreeRADIUS and hostapd compute it.
 */
bool tw_radius_acct_authenticator_ok(const struct tw_radius_pkt *p,
				     const struct tw_radius_secret *s)
{
	uint8_t ra[16];
	bool ok;

	if (p == NULL || s == NULL || p->code != TW_RADIUS_ACCOUNTING_REQUEST)
		return false;
	resp_auth_compute(ra, p->buf, p->len, zero16, s->secret, s->len);
	ok = tw_ct_eq(ra, p->authenticator, TW_RADIUS_AUTH_LEN);
	tw_wipe(ra, sizeof(ra));
	return ok;
}

bool tw_radius_acct_msg_auth_ok(const struct tw_radius_pkt *p, const struct tw_radius_secret *s)
{
	struct key k;
	uint8_t mac[16];
	bool ok;

	if (p == NULL || s == NULL)
		return false;
	if (p->msg_auth < 0)
		return true;
	k = key_of(s);
	msg_auth_compute(mac, p->buf, p->len, zero16, p->attrs[p->msg_auth].off, &k);
	ok = tw_ct_eq(mac, p->buf + p->attrs[p->msg_auth].off, TW_RADIUS_MSG_AUTH_LEN);
	tw_wipe(mac, sizeof(mac));
	return ok;
}

int tw_radius_verify_acct_request_ctx(const struct tw_radius_pkt *p,
				      const struct tw_radius_secret *s)
{
	bool ok;

	if (p == NULL || s == NULL)
		return TW_ERR_INVAL;
	/* both computed, whichever fails: no early exit on the first */
	ok = tw_radius_acct_authenticator_ok(p, s);
	ok &= tw_radius_acct_msg_auth_ok(p, s);
	return ok ? TW_OK : TW_ERR_AUTH;
}

int tw_radius_finish_acct_request_ctx(struct tw_radius_builder *b,
				      const struct tw_radius_secret *s, size_t *out_len)
{
	struct key k;
	int err = finish_common(b, s != NULL, out_len);

	if (err != TW_OK)
		return err;
	k = key_of(s);
	mppe_pending(b, &k); /* not for requests, but never in the clear */
	memset(b->buf + 4, 0, TW_RADIUS_AUTH_LEN);
	if (b->msg_auth_off != 0)
		msg_auth_compute(b->buf + b->msg_auth_off, b->buf, b->len, zero16,
				 b->msg_auth_off, &k);
	/* RFC 2866 §3: over the final attributes, Message-Authenticator included */
	resp_auth_compute(b->buf + 4, b->buf, b->len, zero16, k.secret, k.len);
	*out_len = b->len;
	b->err = TW_ERR_STATE;
	return TW_OK;
}

/* ---- dynamic authorization (RFC 5176) ------------------------------------ */

static const struct {
	uint16_t v;
	const char *name;
} error_causes[] = {
	{ TW_RADIUS_EC_RESIDUAL_SESSION_CONTEXT_REMOVED, "Residual-Session-Context-Removed" },
	{ TW_RADIUS_EC_INVALID_EAP_PACKET, "Invalid-EAP-Packet" },
	{ TW_RADIUS_EC_UNSUPPORTED_ATTRIBUTE, "Unsupported-Attribute" },
	{ TW_RADIUS_EC_MISSING_ATTRIBUTE, "Missing-Attribute" },
	{ TW_RADIUS_EC_NAS_IDENTIFICATION_MISMATCH, "NAS-Identification-Mismatch" },
	{ TW_RADIUS_EC_INVALID_REQUEST, "Invalid-Request" },
	{ TW_RADIUS_EC_UNSUPPORTED_SERVICE, "Unsupported-Service" },
	{ TW_RADIUS_EC_UNSUPPORTED_EXTENSION, "Unsupported-Extension" },
	{ TW_RADIUS_EC_INVALID_ATTRIBUTE_VALUE, "Invalid-Attribute-Value" },
	{ TW_RADIUS_EC_ADMINISTRATIVELY_PROHIBITED, "Administratively-Prohibited" },
	{ TW_RADIUS_EC_REQUEST_NOT_ROUTABLE, "Request-Not-Routable" },
	{ TW_RADIUS_EC_SESSION_CONTEXT_NOT_FOUND, "Session-Context-Not-Found" },
	{ TW_RADIUS_EC_SESSION_CONTEXT_NOT_REMOVABLE, "Session-Context-Not-Removable" },
	{ TW_RADIUS_EC_OTHER_PROXY_PROCESSING_ERROR, "Other-Proxy-Processing-Error" },
	{ TW_RADIUS_EC_RESOURCES_UNAVAILABLE, "Resources-Unavailable" },
	{ TW_RADIUS_EC_REQUEST_INITIATED, "Request-Initiated" },
	{ TW_RADIUS_EC_MULTIPLE_SESSION_SELECTION_UNSUPPORTED,
	  "Multiple-Session-Selection-Unsupported" },
};

const char *tw_radius_error_cause_name(uint32_t v)
{
	for (size_t i = 0; i < sizeof(error_causes) / sizeof(error_causes[0]); i++)
		if (error_causes[i].v == v)
			return error_causes[i].name;
	return NULL;
}

static bool dynauth_request_code(uint8_t code)
{
	return code == TW_RADIUS_DISCONNECT_REQUEST || code == TW_RADIUS_COA_REQUEST;
}

int tw_radius_finish_dynauth_request_ctx(struct tw_radius_builder *b,
					 const struct tw_radius_secret *s, size_t *out_len)
{
	if (b != NULL && b->buf != NULL && b->err == TW_OK && !dynauth_request_code(b->buf[0]))
		fail(b, TW_ERR_INVAL);
	/* RFC 5176 §2.3: "the Request Authenticator is calculated in the
	 * same way as for an Accounting-Request" (RFC 2866 §3), and §3.3
	 * the Message-Authenticator over a zero Authenticator field: the
	 * accounting finish computes exactly these */
	return tw_radius_finish_acct_request_ctx(b, s, out_len);
}

bool tw_radius_dynauth_request_ok(const struct tw_radius_pkt *p, const struct tw_radius_secret *s)
{
	uint8_t ra[16];
	bool ok;

	if (p == NULL || s == NULL || !dynauth_request_code(p->code))
		return false;
	/* RFC 5176 §2.3: MD5(Code | Identifier | Length | 16 zero octets |
	 * Attributes | Secret) */
	resp_auth_compute(ra, p->buf, p->len, zero16, s->secret, s->len);
	ok = tw_ct_eq(ra, p->authenticator, TW_RADIUS_AUTH_LEN);
	tw_wipe(ra, sizeof(ra));
	/* both computed, whichever fails */
	ok &= tw_radius_acct_msg_auth_ok(p, s);
	return ok;
}

int tw_radius_dynauth_reply_check(const struct tw_radius_pkt *p, uint8_t req_code, uint8_t req_id,
				  const uint8_t req_auth[static 16],
				  const struct tw_radius_secret *s,
				  struct tw_radius_dynauth_reply *out)
{
	struct tw_radius_dynauth_reply r;
	struct key k;

	if (out != NULL)
		memset(out, 0, sizeof(*out));
	if (p == NULL || req_auth == NULL || s == NULL || out == NULL ||
	    !dynauth_request_code(req_code))
		return TW_ERR_INVAL;
	/* RFC 5176 §2.1/§2.2: a Disconnect-Request (40) is answered by 41 or
	 * 42, a CoA-Request (43) by 44 or 45 */
	if ((p->code != req_code + 1 && p->code != req_code + 2) || p->id != req_id)
		return TW_ERR_NOTFOUND;
	k = key_of(s);
	/* §3.3: the Response Authenticator as RFC 2865 §3, the
	 * Message-Authenticator with the request's Authenticator in place */
	if (verify_response(p, req_auth, &k, false) != TW_OK)
		return TW_ERR_AUTH;
	memset(&r, 0, sizeof(r));
	r.ack = p->code == req_code + 1;
	for (unsigned i = 0; i < p->n_attrs; i++) {
		const struct tw_radius_attr *a = &p->attrs[i];

		if (a->type != TW_RADIUS_ERROR_CAUSE)
			continue;
		/* §3.5: Length = 6 (an Integer, RFC 2865 §5) */
		if (a->len != 4)
			return TW_ERR_DECODE;
		if (!r.has_error_cause) {
			r.has_error_cause = true;
			r.error_cause = tw_load_be32(p->buf + a->off);
		}
	}
	*out = r;
	return TW_OK;
}
