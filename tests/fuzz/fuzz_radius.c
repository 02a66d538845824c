/*
 * Fuzz target: the RADIUS codec (tw_radius_decode, _eap_join,
 * _verify_request, _verify_response, _get_mppe_keys, and the builder).
 *
 * Invariants: no crash or overread; the attribute views tile the packet
 * from octet 20 to Length; the Message-Authenticator index and the
 * EAP-Message count/length agree with the attributes; a join returns
 * exactly their concatenation; verification only answers OK or AUTH; and
 * the builder, fed the decoded attributes, re-creates the packet octet for
 * octet (with the Message-Authenticator recomputed under the fixed secret
 * when it came first, which must then agree with tw_radius_verify_request).
 * Every _ctx twin (prepared secret) gives the same verdicts and keys as
 * its plain function, and every batch call (verify_requests_ctx,
 * verify_responses_ctx, finish_requests_ctx, finish_responses_ctx, on up
 * to 9 jobs with two secrets, more than one group of MD5 lanes) the same
 * results and octets as the single call for each job; tw_radius_find
 * gives the first attribute of each type. On the raw input: split into
 * EAP-Message attributes it joins back (RFC 3579 §3.1), as MS-MPPE keys it
 * gives the same octets by each of the three ways to add them and
 * decrypts back (RFC 2548 §2.4.2), as a secret it is prepared exactly when
 * it fits, and as a key attribute value it decrypts alike both ways; as a
 * size and attributes for a builder, its sticky errors agree with a model
 * and a failed reply leaves no MPPE key in the clear (check_sticky); and
 * the same through tw_radius_finish_v11 (RADIUS/1.1, check_v11).
 *
 * Seeds (tests/fuzz/corpus/radius/) were written with Python hashlib/hmac
 * under the secret and Request Authenticator below: EAP Access-Requests
 * (one and two EAP-Message fragments, EAP-Start), Access-Challenge,
 * Access-Accept with MS-MPPE keys, Access-Reject, Status-Server, the RFC
 * 2865 §7.1 pair, padding after Length, and two malformed packets.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "twag/bytes.h"
#include "twag/radius.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t secret[] = "fuzzsecret";
static const uint8_t req_auth[16] = {
	0x52, 0x41, 0x44, 0x49, 0x55, 0x53, 0x2d, 0x66,
	0x75, 0x7a, 0x7a, 0x2d, 0x72, 0x65, 0x71, 0x21,
};

/* A second shared secret, longer than an MD5 block (its prepared MD5
 * prefix then holds whole blocks). */
static const uint8_t secret2[100] = "a shared secret longer than one MD5 block, so that its prefix state "
				    "absorbs a whole block.";
static struct tw_radius_secret ks2;

/* more than one group of MD5 lanes; packets with Identifier 250..255
 * run more jobs than one chunk of the batch calls (64) holds */
enum { JOBS = 9, JOBS_WIDE = 64 + 4 };

/* The attributes of p (without a Message-Authenticator) into b. */
static void put_attrs(struct tw_radius_builder *b, const struct tw_radius_pkt *p,
		      const uint8_t *data)
{
	for (unsigned i = 0; i < p->n_attrs; i++)
		if ((int)i != p->msg_auth)
			tw_radius_add(b, p->attrs[i].type, data + p->attrs[i].off, p->attrs[i].len);
}

/*
 * The batch calls against the single ones on p: verify_requests_ctx and
 * verify_responses_ctx give each job the single call's rc, whatever the
 * secrets and requirements of the others; finish_requests_ctx and
 * finish_responses_ctx give the single call's rc, length and octets for
 * packets rebuilt from p's attributes, with and without
 * Message-Authenticator and MPPE keys left for the finish.
 */
static void check_batches(const struct tw_radius_pkt *p, const uint8_t *data,
			  const struct tw_radius_secret *ks)
{
	static uint8_t one[JOBS_WIDE][TW_RADIUS_MAX_LEN], many[JOBS_WIDE][TW_RADIUS_MAX_LEN];
	static struct tw_radius_verify_job vj[JOBS_WIDE];
	static struct tw_radius_verify_resp_job rj[JOBS_WIDE];
	static struct tw_radius_finish_job fj[JOBS_WIDE];
	static struct tw_radius_builder b1[JOBS_WIDE], bm[JOBS_WIDE];
	unsigned n = p->id >= 250 ? JOBS_WIDE - 5u + (p->id - 250u) % 6 : 1u + p->id % JOBS;
	uint8_t msk[64];

	for (unsigned i = 0; i < n; i++) {
		vj[i] = (struct tw_radius_verify_job){ p, i % 2 ? &ks2 : ks, 0 };
		rj[i] = (struct tw_radius_verify_resp_job){ p, req_auth, i % 2 ? ks : &ks2,
							    i % 3 == 0, 0 };
	}
	tw_radius_verify_requests_ctx(vj, n);
	tw_radius_verify_responses_ctx(rj, n);
	for (unsigned i = 0; i < n; i++)
		if (vj[i].rc != tw_radius_verify_request_ctx(p, vj[i].s) ||
		    rj[i].rc != tw_radius_verify_response_ctx(p, req_auth, rj[i].s,
							      rj[i].require_msg_auth))
			abort();

	for (size_t i = 0; i < sizeof(msk); i++)
		msk[i] = data[i % p->len];
	for (int resp = 0; resp < 2; resp++) {
		for (unsigned i = 0; i < n; i++) {
			tw_radius_build_init(&bm[i], many[i], TW_RADIUS_MAX_LEN, p->code, p->id,
					     p->authenticator, i % 2 == 0);
			put_attrs(&bm[i], p, data);
			if (i % 3 == 1)
				tw_radius_add_mppe_keys_later(&bm[i], msk, (uint16_t)(p->id + i));
			fj[i] = (struct tw_radius_finish_job){ &bm[i], i % 2 ? &ks2 : ks, -1, 1 };
		}
		if (resp)
			tw_radius_finish_responses_ctx(fj, n);
		else
			tw_radius_finish_requests_ctx(fj, n);
		for (unsigned i = 0; i < n; i++) {
			size_t len = 0;
			int rc;

			/* the same packet through the single call */
			tw_radius_build_init(&b1[i], one[i], TW_RADIUS_MAX_LEN, p->code, p->id,
					     p->authenticator, i % 2 == 0);
			put_attrs(&b1[i], p, data);
			if (i % 3 == 1)
				tw_radius_add_mppe_keys_later(&b1[i], msk, (uint16_t)(p->id + i));
			rc = resp ? tw_radius_finish_response_ctx(&b1[i], fj[i].s, &len)
				  : tw_radius_finish_request_ctx(&b1[i], fj[i].s, &len);
			if (fj[i].rc != rc || fj[i].len != (rc == TW_OK ? len : 0) ||
			    (rc == TW_OK && memcmp(one[i], many[i], len) != 0))
				abort();
		}
	}
}

/* NULL where a call takes a pointer, without the compiler seeing it */
static void *volatile nul;

/*
 * The argument contract of radius.h, once: every call given a NULL where
 * it needs an object (or a secret pointer NULL with a length) answers
 * TW_ERR_INVAL (not for the array parameters declared [static 16]: a NULL
 * there is undefined behaviour, which clang uses), a builder in error or spent stays so, and the batch calls
 * mark each such job TW_ERR_INVAL while the others are answered.
 */
static void check_contract(const struct tw_radius_secret *ks)
{
	static uint8_t buf[TW_RADIUS_MAX_LEN], big[TW_RADIUS_MAX_LEN];
	static struct tw_radius_pkt p;
	struct tw_radius_secret s;
	struct tw_radius_builder b;
	struct tw_radius_verify_job vj[2];
	struct tw_radius_verify_resp_job rj[2];
	struct tw_radius_finish_job fj[2];
	const uint8_t *np = nul;
	uint8_t *nw = nul, key[32], msk[64] = { 0 };
	size_t n = 1;

	if (tw_radius_secret_init(nul, secret, 4) != TW_ERR_INVAL ||
	    tw_radius_secret_init(&s, np, 4) != TW_ERR_INVAL ||
	    tw_radius_secret_init(&s, big, TW_RADIUS_SECRET_MAX + 1) != TW_ERR_LENGTH ||
	    tw_radius_secret_init(&s, np, 0) != TW_OK)
		abort();
	tw_radius_secret_wipe(&s);
	tw_radius_secret_wipe(nul);
	if (tw_radius_decode(nul, buf, 20) != TW_ERR_INVAL ||
	    tw_radius_decode(&p, np, 20) != TW_ERR_INVAL)
		abort();
	/* an Access-Request with only an EAP-Start */
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
	tw_radius_add(&b, TW_RADIUS_EAP_MESSAGE, np, 0);
	if (tw_radius_finish_request(&b, secret, sizeof(secret) - 1, &n) != TW_OK ||
	    tw_radius_decode(&p, buf, n) != TW_OK)
		abort();
	if (tw_radius_eap_join(nul, big, 10, &n) != TW_ERR_INVAL ||
	    tw_radius_eap_join(&p, big, 10, nul) != TW_ERR_INVAL ||
	    tw_radius_eap_join(&p, nw, 10, &n) != TW_ERR_INVAL ||
	    tw_radius_eap_join(&p, nw, 0, &n) != TW_OK || n != 0)
		abort();
	if (tw_radius_verify_request(nul, secret, 1) != TW_ERR_INVAL ||
	    tw_radius_verify_request(&p, np, 1) != TW_ERR_INVAL ||
	    tw_radius_verify_request_ctx(nul, ks) != TW_ERR_INVAL ||
	    tw_radius_verify_request_ctx(&p, nul) != TW_ERR_INVAL ||
	    tw_radius_verify_response(nul, req_auth, secret, 1, false) != TW_ERR_INVAL ||
	    tw_radius_verify_response(&p, req_auth, np, 1, false) != TW_ERR_INVAL ||
	    tw_radius_verify_response_ctx(nul, req_auth, ks, false) != TW_ERR_INVAL ||
	    tw_radius_verify_response_ctx(&p, req_auth, nul, false) != TW_ERR_INVAL)
		abort();
	if (tw_radius_mppe_decrypt(np, 50, secret, 1, req_auth, key) != TW_ERR_INVAL ||
	    tw_radius_mppe_decrypt(big, 50, np, 1, req_auth, key) != TW_ERR_INVAL ||
	    tw_radius_mppe_decrypt_ctx(np, 50, ks, req_auth, key) != TW_ERR_INVAL ||
	    tw_radius_mppe_decrypt_ctx(big, 50, nul, req_auth, key) != TW_ERR_INVAL)
		abort();
	if (tw_radius_get_mppe_keys(nul, secret, 1, req_auth, msk) != TW_ERR_INVAL ||
	    tw_radius_get_mppe_keys(&p, np, 1, req_auth, msk) != TW_ERR_INVAL ||
	    tw_radius_get_mppe_keys_ctx(nul, ks, req_auth, msk) != TW_ERR_INVAL ||
	    tw_radius_get_mppe_keys_ctx(&p, nul, req_auth, msk) != TW_ERR_INVAL)
		abort();

	/* builders: no buffer; then each bad argument, sticky */
	tw_radius_build_init(&b, nw, sizeof(buf), TW_RADIUS_ACCESS_ACCEPT, 1, req_auth, false);
	if (tw_radius_finish_response(&b, secret, 1, &n) == TW_OK)
		abort();
	for (int k = 0; k < 8; k++) {
		tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCESS_ACCEPT, 1, req_auth,
				     false);
		switch (k) {
		case 0: tw_radius_add(&b, 0, "x", 1); break;
		case 1: tw_radius_add(&b, TW_RADIUS_MESSAGE_AUTHENTICATOR, big, 16); break;
		case 2: tw_radius_add(&b, TW_RADIUS_REPLY_MESSAGE, np, 3); break;
		case 3: tw_radius_add_eap(&b, np, 5); break;
		case 4: tw_radius_add_mppe_keys(&b, np, 3, req_auth, msk, 1); break;
		case 5: tw_radius_add_mppe_keys_ctx(&b, nul, req_auth, msk, 1); break;
		case 6: tw_radius_add(&b, TW_RADIUS_REPLY_MESSAGE, np, 1); break;
		default:
			tw_radius_add_mppe_keys_later(&b, msk, 1);
			tw_radius_add_mppe_keys_later(&b, msk, 3); /* once per reply */
			break;
		}
		if (b.err != TW_ERR_INVAL)
			abort();
		/* sticky: nothing more goes in, and the finish says why */
		tw_radius_add(&b, TW_RADIUS_REPLY_MESSAGE, "x", 1);
		tw_radius_add_eap(&b, big, 5);
		tw_radius_add_mppe_keys(&b, secret, 1, req_auth, msk, 1);
		tw_radius_add_mppe_keys_ctx(&b, ks, req_auth, msk, 1);
		tw_radius_add_mppe_keys_later(&b, msk, 1);
		if (b.err != TW_ERR_INVAL ||
		    tw_radius_finish_response(&b, secret, 1, &n) != TW_ERR_INVAL)
			abort();
	}
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCESS_ACCEPT, 1, req_auth, false);
	if (tw_radius_finish_response(nul, secret, 1, &n) != TW_ERR_INVAL ||
	    tw_radius_finish_response(&b, secret, 1, nul) != TW_ERR_INVAL ||
	    tw_radius_finish_response(&b, np, 1, &n) != TW_ERR_INVAL ||
	    tw_radius_finish_request(&b, np, 1, &n) != TW_ERR_INVAL ||
	    tw_radius_finish_response_ctx(&b, nul, &n) != TW_ERR_INVAL ||
	    tw_radius_finish_request_ctx(&b, nul, &n) != TW_ERR_INVAL)
		abort();

	/* batches: a job without its packet or secret, beside a good one */
	tw_radius_verify_requests_ctx(nul, 3);
	tw_radius_verify_responses_ctx(nul, 3);
	tw_radius_finish_requests_ctx(nul, 3);
	tw_radius_finish_responses_ctx(nul, 3);
	tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
	tw_radius_add(&b, TW_RADIUS_EAP_MESSAGE, np, 0);
	if (tw_radius_finish_request_ctx(&b, ks, &n) != TW_OK ||
	    tw_radius_decode(&p, buf, n) != TW_OK)
		abort();
	vj[0] = (struct tw_radius_verify_job){ nul, ks, 0 };
	vj[1] = (struct tw_radius_verify_job){ &p, ks, -1 };
	tw_radius_verify_requests_ctx(vj, 2);
	if (vj[0].rc != TW_ERR_INVAL || vj[1].rc != TW_OK)
		abort();
	vj[0] = (struct tw_radius_verify_job){ &p, nul, 0 };
	tw_radius_verify_requests_ctx(vj, 1);
	if (vj[0].rc != TW_ERR_INVAL)
		abort();
	for (int k = 0; k < 3; k++) {
		rj[0] = (struct tw_radius_verify_resp_job){ k == 0 ? nul : &p,
							    k == 1 ? np : req_auth,
							    k == 2 ? nul : ks, false, 0 };
		rj[1] = (struct tw_radius_verify_resp_job){ &p, req_auth, ks, false, 0 };
		tw_radius_verify_responses_ctx(rj, 2);
		if (rj[0].rc != TW_ERR_INVAL ||
		    rj[1].rc != tw_radius_verify_response_ctx(&p, req_auth, ks, false))
			abort();
	}
	for (int resp = 0; resp < 2; resp++) {
		struct tw_radius_builder bb[2];
		static uint8_t o2[2][TW_RADIUS_MAX_LEN];

		for (int i = 0; i < 2; i++) {
			tw_radius_build_init(&bb[i], o2[i], TW_RADIUS_MAX_LEN, resp ? 2 : 1, 7,
					     req_auth, true);
			tw_radius_add_mppe_keys_later(&bb[i], msk, 9);
		}
		fj[0] = (struct tw_radius_finish_job){ nul, ks, 0, 1 };
		fj[1] = (struct tw_radius_finish_job){ &bb[0], nul, 0, 1 };
		if (resp)
			tw_radius_finish_responses_ctx(fj, 2);
		else
			tw_radius_finish_requests_ctx(fj, 2);
		/* the job without a secret failed, its keys wiped */
		if (fj[0].rc != TW_ERR_INVAL || fj[1].rc != TW_ERR_INVAL || fj[1].len != 0 ||
		    bb[0].mppe_n != 0)
			abort();
		fj[0] = (struct tw_radius_finish_job){ &bb[1], ks, 0, 1 };
		if (resp)
			tw_radius_finish_responses_ctx(fj, 1);
		else
			tw_radius_finish_requests_ctx(fj, 1);
		if (fj[0].rc != TW_OK || fj[0].len == 0)
			abort();
	}
}

/*
 * Builders on the raw input: its octets as EAP split into consecutive
 * EAP-Message attributes of at most 253 octets (RFC 3579 §3.1) that join
 * back to them; MS-MPPE keys from the input, by secret octets, prepared
 * secret and left to the finish, giving the same octets and decrypting
 * back (RFC 2548 §2.4.2) after the packet decodes; a secret of the input's
 * length prepared exactly when it fits.
 */
static void check_builders(const uint8_t *data, size_t size, const struct tw_radius_secret *ks)
{
	static uint8_t a[TW_RADIUS_MAX_LEN], b[TW_RADIUS_MAX_LEN], c[TW_RADIUS_MAX_LEN];
	static struct tw_radius_pkt q;
	struct tw_radius_builder bb;
	struct tw_radius_secret tmp;
	uint8_t msk[64], got[64];
	size_t la = 0, lb = 0, lc = 0, k = 0;
	int rc;

	rc = tw_radius_secret_init(&tmp, data, size);
	if ((rc == TW_OK) != (size <= TW_RADIUS_SECRET_MAX) ||
	    (rc == TW_OK && (tmp.len != size || memcmp(tmp.secret, data, size) != 0)))
		abort();
	tw_radius_secret_wipe(&tmp);

	tw_radius_build_init(&bb, a, sizeof(a), TW_RADIUS_ACCESS_REQUEST, 1, req_auth, true);
	tw_radius_add_eap(&bb, data, size);
	rc = tw_radius_finish_request_ctx(&bb, ks, &la);
	if ((rc == TW_OK) != (size <= TW_RADIUS_MAX_LEN - 20 - 18 - 2 * ((size + 252) / 253)))
		abort();
	if (rc == TW_OK) {
		if (tw_radius_decode(&q, a, la) != TW_OK || q.n_eap != (size + 252) / 253 +
								 (size == 0) ||
		    q.eap_len != size || tw_radius_verify_request_ctx(&q, ks) != TW_OK)
			abort();
		for (unsigned i = 0; i < q.n_attrs; i++) {
			if (q.attrs[i].type != TW_RADIUS_EAP_MESSAGE)
				continue;
			if (q.attrs[i].len > 253 || memcmp(a + q.attrs[i].off, data + k,
							   q.attrs[i].len) != 0)
				abort();
			k += q.attrs[i].len;
		}
		if (k != size)
			abort();
	}

	for (size_t i = 0; i < sizeof(msk); i++)
		msk[i] = size ? data[i % size] : (uint8_t)i;
	uint16_t salt = size ? (uint16_t)(data[0] << 8 | data[size - 1]) : 0;
	tw_radius_build_init(&bb, a, sizeof(a), TW_RADIUS_ACCESS_ACCEPT, 2, req_auth, true);
	tw_radius_add_mppe_keys(&bb, secret, sizeof(secret) - 1, req_auth, msk, salt);
	if (tw_radius_finish_response_ctx(&bb, ks, &la) != TW_OK)
		abort();
	tw_radius_build_init(&bb, b, sizeof(b), TW_RADIUS_ACCESS_ACCEPT, 2, req_auth, true);
	tw_radius_add_mppe_keys_ctx(&bb, ks, req_auth, msk, salt);
	if (tw_radius_finish_response(&bb, secret, sizeof(secret) - 1, &lb) != TW_OK)
		abort();
	tw_radius_build_init(&bb, c, sizeof(c), TW_RADIUS_ACCESS_ACCEPT, 2, req_auth, true);
	tw_radius_add_mppe_keys_later(&bb, msk, salt);
	if (tw_radius_finish_response_ctx(&bb, ks, &lc) != TW_OK)
		abort();
	if (la != lb || la != lc || memcmp(a, b, la) != 0 || memcmp(a, c, la) != 0)
		abort();
	if (tw_radius_decode(&q, a, la) != TW_OK ||
	    tw_radius_verify_response_ctx(&q, req_auth, ks, true) != TW_OK ||
	    tw_radius_get_mppe_keys_ctx(&q, ks, req_auth, got) != TW_OK ||
	    memcmp(got, msk, 64) != 0)
		abort();
	/* each key attribute on its own: Vendor-Specific = vendor id (4),
	 * vendor type, vendor length, then salt | ciphertext */
	for (unsigned i = 0; i < q.n_attrs; i++) {
		const uint8_t *v = a + q.attrs[i].off;

		if (q.attrs[i].type != TW_RADIUS_VENDOR_SPECIFIC || q.attrs[i].len < 6)
			continue;
		if (tw_radius_mppe_decrypt(v + 6, q.attrs[i].len - 6, secret, sizeof(secret) - 1,
					   req_auth, got) != TW_OK ||
		    tw_radius_mppe_decrypt_ctx(v + 6, q.attrs[i].len - 6, ks, req_auth,
					       got + 32) != TW_OK ||
		    memcmp(got, got + 32, 32) != 0 ||
		    memcmp(got, v[4] == TW_RADIUS_MS_MPPE_RECV_KEY ? msk : msk + 32, 32) != 0)
			abort();
	}
	/* the raw input as a key attribute value: it decrypts (or not) the
	 * same way with the secret's octets and prepared */
	rc = tw_radius_mppe_decrypt(data, size, secret, sizeof(secret) - 1, req_auth, got);
	if (tw_radius_mppe_decrypt_ctx(data, size, ks, req_auth, got + 32) != rc ||
	    (rc == TW_OK && memcmp(got, got + 32, 32) != 0))
		abort();
}

/*
 * The builder's sticky errors: a buffer size and the attributes to add
 * from the input (d[0]: size, d[1]: Message-Authenticator and MPPE keys
 * left for the finish, then type, length, value records), against a model
 * of radius.h: type 0 or a Message-Authenticator through _add is
 * TW_ERR_INVAL, a value above 253 octets TW_ERR_LENGTH, no room
 * TW_ERR_OVERFLOW, the first error kept and returned by the finish; and a
 * reply that fails never leaves the MPPE keys in the clear in its buffer.
 */
static void check_sticky(const uint8_t *d, size_t n, const struct tw_radius_secret *ks)
{
	static uint8_t buf[TW_RADIUS_MAX_LEN];
	static const uint8_t msk[64] = { 0x6b, 0x65, 0x79, 0x21 };
	struct tw_radius_builder b;
	size_t max, pos = TW_RADIUS_HDR_LEN, len = 0, i = 2, off[2];
	int want = TW_OK, rc;
	bool ma, mppe;
	unsigned n_mppe = 0;

	if (n < 2)
		return;
	max = d[0] < 128 ? (size_t)d[0] * 4 : (size_t)TW_RADIUS_MAX_LEN + d[0];
	ma = d[1] & 1;
	mppe = d[1] & 2;
	memset(buf, 0x55, sizeof(buf));
	tw_radius_build_init(&b, buf, max, TW_RADIUS_ACCESS_ACCEPT, 9, req_auth, ma);
	if (max > TW_RADIUS_MAX_LEN)
		max = TW_RADIUS_MAX_LEN;
	if (max < pos)
		want = TW_ERR_OVERFLOW;
	else if (ma && max - pos < 18)
		want = TW_ERR_OVERFLOW;
	else if (ma)
		pos += 18;
	if (mppe) {
		tw_radius_add_mppe_keys_later(&b, msk, 7);
		for (int k = 0; k < 2 && want == TW_OK; k++) {
			if (max - pos < 58) {
				want = TW_ERR_OVERFLOW;
				break;
			}
			off[n_mppe++] = pos + 2 + 4 + 2 + 2; /* the plaintext after the salt */
			pos += 58;
		}
	}
	while (i + 2 <= n) {
		uint8_t type = d[i];
		size_t vlen = d[i + 1];
		const uint8_t *v = d + i + 2;

		i += 2;
		if (vlen <= 253 && vlen > n - i)
			vlen = n - i;
		tw_radius_add(&b, type, v, vlen);
		if (vlen <= 253)
			i += vlen;
		if (want != TW_OK)
			continue;
		if (type == 0 || type == TW_RADIUS_MESSAGE_AUTHENTICATOR)
			want = TW_ERR_INVAL;
		else if (vlen > 253)
			want = TW_ERR_LENGTH;
		else if (max - pos < 2 + vlen)
			want = TW_ERR_OVERFLOW;
		else
			pos += 2 + vlen;
	}
	rc = tw_radius_finish_response_ctx(&b, ks, &len);
	if (rc != want || (rc == TW_OK && len != pos))
		abort();
	if (rc != TW_OK)
		for (unsigned k = 0; k < n_mppe; k++)
			for (size_t j = 0; j < 48; j++) /* RFC 2548: 1 + 32 + 15 */
				if (buf[off[k] + j] != 0)
					abort();
}

/*
 * RADIUS/1.1 (RFC 9765) replies: the same size and attributes as
 * check_sticky's through tw_radius_finish_v11. When it succeeds the
 * packet's attributes tile it and are the ones added, in order, without a
 * Message-Authenticator, each MS-MPPE key a 38-octet Vendor-Specific with
 * the MSK half in the clear; the header holds the Token and 12 zeros; the
 * octets after it up to the builder's old end are zero. When it fails it
 * gives the error the plain finish would, and leaves no key in the clear.
 */
static void check_v11(const uint8_t *d, size_t n, const struct tw_radius_secret *ks)
{
	static uint8_t buf[TW_RADIUS_MAX_LEN], ref[TW_RADIUS_MAX_LEN];
	static const uint8_t msk[64] = { 0x6b, 0x65, 0x79, 0x21, [32] = 0x4b, 0x45, 0x59 };
	static const uint8_t token[4] = { 0x70, 0x71, 0x72, 0x73 };
	struct tw_radius_builder b, r;
	size_t max, len = 0, rlen = 0, i = 2, old_len, added = 0;
	int rc, rrc;
	bool ma, mppe;

	if (n < 2)
		return;
	max = d[0] < 128 ? (size_t)d[0] * 4 : (size_t)TW_RADIUS_MAX_LEN + d[0];
	ma = d[1] & 1;
	mppe = d[1] & 2;
	memset(buf, 0x55, sizeof(buf));
	tw_radius_build_init(&b, buf, max, TW_RADIUS_ACCESS_ACCEPT, 9, req_auth, ma);
	tw_radius_build_init(&r, ref, max, TW_RADIUS_ACCESS_ACCEPT, 9, req_auth, ma);
	if (mppe) {
		tw_radius_add_mppe_keys_later(&b, msk, 7);
		tw_radius_add_mppe_keys_later(&r, msk, 7);
	}
	while (i + 2 <= n) {
		size_t vlen = d[i + 1];

		if (vlen <= 253 && vlen > n - i - 2)
			vlen = n - i - 2;
		tw_radius_add(&b, d[i], d + i + 2, vlen);
		tw_radius_add(&r, d[i], d + i + 2, vlen);
		added++;
		i += 2 + (vlen <= 253 ? vlen : 0);
	}
	old_len = b.len;
	rc = tw_radius_finish_v11(&b, token, &len);
	rrc = tw_radius_finish_response_ctx(&r, ks, &rlen);
	if (rc != rrc)
		abort();
	if (rc != TW_OK) {
		/* (unless the input itself brought those octets) */
		if ((memmem(d, n, msk, 4) == NULL && memmem(buf, sizeof(buf), msk, 4) != NULL) ||
		    (memmem(d, n, msk + 32, 3) == NULL && memmem(buf, sizeof(buf), msk + 32, 3) != NULL))
			abort();
		return;
	}
	if (tw_load_be16(buf + 2) != len || memcmp(buf + 4, token, 4) != 0 ||
	    !tw_ct_is_zero(buf + 8, 12) || buf[1] != 9 || len > old_len ||
	    !tw_ct_is_zero(buf + len, old_len - len))
		abort();
	/* the attributes walked here (the decoder's limits, 128 attributes
	 * and consecutive EAP-Messages, are not the builder's) */
	{
		size_t off = TW_RADIUS_HDR_LEN, k = 0;

		while (off < len) {
			const uint8_t *v = buf + off + 2;
			size_t al = buf[off + 1];

			if (off + 2 > len || al < 2 || off + al > len)
				abort();
			if (mppe && k < 2) {
				if (buf[off] != TW_RADIUS_VENDOR_SPECIFIC || al != 2 + 38 ||
				    tw_load_be32(v) != TW_RADIUS_VENDOR_MICROSOFT ||
				    v[4] != (k == 0 ? TW_RADIUS_MS_MPPE_RECV_KEY
						    : TW_RADIUS_MS_MPPE_SEND_KEY) ||
				    v[5] != 34 || memcmp(v + 6, msk + 32 * k, 32) != 0)
					abort();
			} else if (buf[off] == TW_RADIUS_MESSAGE_AUTHENTICATOR) {
				abort();
			}
			off += al;
			k++;
		}
		if (k != added + (mppe ? 2 : 0))
			abort();
	}
}

/*
 * Accounting (RFC 2866 §3) against OpenSSL: the Request Authenticator is
 * MD5(Code | Identifier | Length | 16 zero octets | attributes | secret);
 * a Message-Authenticator, when present, HMAC-MD5 under the secret over
 * the packet with the Authenticator field and its own value zero (as RFC
 * 5176 §3.3 computes it for requests that carry a Request Authenticator
 * of this kind). The library must agree on both, and an Accounting-Request
 * of the same attributes signed by the builder must verify.
 */
static void check_acct(const struct tw_radius_pkt *p, const struct tw_radius_secret *ks)
{
	static uint8_t m[TW_RADIUS_MAX_LEN + 64], buf[TW_RADIUS_MAX_LEN];
	static struct tw_radius_pkt q;
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned mdl = 0;
	bool auth_ok, ma_ok = true;
	int rc;

	memcpy(m, p->buf, p->len);
	memset(m + 4, 0, 16);
	memcpy(m + p->len, secret, sizeof(secret) - 1);
	if (EVP_Digest(m, p->len + sizeof(secret) - 1, md, &mdl, EVP_md5(), NULL) != 1)
		abort();
	/* (only an Accounting-Request has this Request Authenticator) */
	auth_ok = p->code == TW_RADIUS_ACCOUNTING_REQUEST && memcmp(md, p->buf + 4, 16) == 0;
	if (p->msg_auth >= 0) {
		size_t at = p->attrs[p->msg_auth].off;

		memset(m + at, 0, 16);
		if (HMAC(EVP_md5(), secret, (int)sizeof(secret) - 1, m, p->len, md, &mdl) == NULL)
			abort();
		ma_ok = memcmp(md, p->buf + at, 16) == 0;
	}
	if (tw_radius_acct_authenticator_ok(p, ks) != auth_ok ||
	    tw_radius_acct_msg_auth_ok(p, ks) != ma_ok)
		abort();
	rc = tw_radius_verify_acct_request_ctx(p, ks);
	if (rc != (auth_ok && ma_ok ? TW_OK : TW_ERR_AUTH))
		abort();
	if (tw_radius_verify_acct_request_ctx(p, nul) != TW_ERR_INVAL)
		abort();
	{
		struct tw_radius_builder b;
		size_t n = 0;

		tw_radius_build_init(&b, buf, sizeof(buf), TW_RADIUS_ACCOUNTING_REQUEST, p->id,
				     p->authenticator, p->msg_auth >= 0);
		for (unsigned i = 0; i < p->n_attrs; i++)
			if ((int)i != p->msg_auth)
				tw_radius_add(&b, p->attrs[i].type, tw_radius_value(p, &p->attrs[i]),
					      p->attrs[i].len);
		if (tw_radius_finish_acct_request_ctx(&b, ks, &n) == TW_OK &&
		    (tw_radius_decode(&q, buf, n) != TW_OK ||
		     tw_radius_verify_acct_request_ctx(&q, ks) != TW_OK))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct tw_radius_pkt p;
	static uint8_t eap[TW_RADIUS_EAP_MAX], out[TW_RADIUS_MAX_LEN];
	static struct tw_radius_secret ks;
	static int ks_ready;
	uint8_t msk[64], msk2[64];
	size_t n = 0, off = TW_RADIUS_HDR_LEN, eap_len = 0;
	unsigned n_eap = 0;
	int e;

	if (!ks_ready) {
		if (tw_radius_secret_init(&ks, secret, sizeof(secret) - 1) != TW_OK ||
		    tw_radius_secret_init(&ks2, secret2, sizeof(secret2)) != TW_OK)
			abort();
		ks_ready = 1;
		check_contract(&ks);
	}
	check_builders(data, size, &ks);
	check_sticky(data, size, &ks);
	check_v11(data, size, &ks);
	if (tw_radius_decode(&p, data, size) != TW_OK)
		return 0;
	/* the first attribute of each type, or none */
	for (unsigned t = 0; t < 256; t++) {
		const struct tw_radius_attr *f = tw_radius_find(&p, (uint8_t)t), *want = NULL;

		for (unsigned i = 0; i < p.n_attrs && want == NULL; i++)
			if (p.attrs[i].type == t)
				want = &p.attrs[i];
		if (f != want)
			abort();
	}
	if (p.len < TW_RADIUS_MIN_LEN || p.len > size || p.len > TW_RADIUS_MAX_LEN ||
	    p.buf != data || p.authenticator != data + 4 || p.n_attrs > TW_RADIUS_MAX_ATTRS)
		abort();
	for (unsigned i = 0; i < p.n_attrs; i++) {
		const struct tw_radius_attr *a = &p.attrs[i];

		if (a->off != off + 2 || data[off] != a->type || a->type == 0 ||
		    data[off + 1] != a->len + 2)
			abort();
		off += 2u + a->len;
		if ((a->type == TW_RADIUS_MESSAGE_AUTHENTICATOR) != (p.msg_auth == (int)i) ||
		    (p.msg_auth == (int)i && a->len != 16))
			abort();
		if (a->type == TW_RADIUS_EAP_MESSAGE) {
			if (n_eap != 0 && p.attrs[i - 1].type != TW_RADIUS_EAP_MESSAGE)
				abort();
			n_eap++;
			eap_len += a->len;
		}
	}
	if (off != p.len || n_eap != p.n_eap || eap_len != p.eap_len)
		abort();
	check_acct(&p, &ks);

	e = tw_radius_eap_join(&p, eap, sizeof(eap), &n);
	if (e == TW_OK) {
		size_t k = 0;

		if (n != p.eap_len || (n != 0 && (n < 4 || tw_load_be16(eap + 2) != n)))
			abort();
		for (unsigned i = 0; i < p.n_attrs; i++) {
			const struct tw_radius_attr *a = &p.attrs[i];

			if (a->type != TW_RADIUS_EAP_MESSAGE)
				continue;
			if (memcmp(eap + k, data + a->off, a->len) != 0)
				abort();
			k += a->len;
		}
	} else if (e != TW_ERR_NOTFOUND && e != TW_ERR_DECODE) {
		abort();
	}

	int vreq = tw_radius_verify_request(&p, secret, sizeof(secret) - 1);
	if (vreq != TW_OK && vreq != TW_ERR_AUTH)
		abort();
	if (tw_radius_verify_request_ctx(&p, &ks) != vreq)
		abort();
	e = tw_radius_verify_response(&p, req_auth, secret, sizeof(secret) - 1, false);
	if (e != TW_OK && e != TW_ERR_AUTH)
		abort();
	if (tw_radius_verify_response_ctx(&p, req_auth, &ks, false) != e)
		abort();
	e = tw_radius_get_mppe_keys(&p, secret, sizeof(secret) - 1, req_auth, msk);
	if (e != TW_OK && e != TW_ERR_NOTFOUND && e != TW_ERR_DECODE)
		abort();
	if (tw_radius_get_mppe_keys_ctx(&p, &ks, req_auth, msk2) != e ||
	    (e == TW_OK && memcmp(msk, msk2, 64) != 0))
		abort();

	check_batches(&p, data, &ks);

	/* Rebuild: same header, the attributes in order (the MA recomputed
	 * in place when it came first; elsewhere the builder cannot put it). */
	if (p.msg_auth > 0)
		return 0;
	struct tw_radius_builder b;
	tw_radius_build_init(&b, out, sizeof(out), p.code, p.id, p.authenticator,
			     p.msg_auth == 0);
	for (unsigned i = p.msg_auth == 0 ? 1 : 0; i < p.n_attrs; i++)
		tw_radius_add(&b, p.attrs[i].type, data + p.attrs[i].off, p.attrs[i].len);
	if (tw_radius_finish_request(&b, secret, sizeof(secret) - 1, &n) != TW_OK ||
	    n != p.len)
		abort();
	if (p.msg_auth < 0) {
		if (memcmp(out, data, n) != 0)
			abort();
	} else if (p.code == TW_RADIUS_ACCESS_REQUEST || p.code == TW_RADIUS_STATUS_SERVER) {
		/* Same octets exactly when the received MA was right. */
		if ((memcmp(out, data, n) == 0) != (vreq == TW_OK))
			abort();
	}
	return 0;
}
