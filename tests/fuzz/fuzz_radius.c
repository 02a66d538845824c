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
 * its plain function.
 *
 * Seeds (tests/fuzz/corpus/radius/) were written with Python hashlib/hmac
 * under the secret and Request Authenticator below: EAP Access-Requests
 * (one and two EAP-Message fragments, EAP-Start), Access-Challenge,
 * Access-Accept with MS-MPPE keys, Access-Reject, Status-Server, the RFC
 * 2865 §7.1 pair, padding after Length, and two malformed packets.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/bytes.h"
#include "twag/radius.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static const uint8_t secret[] = "fuzzsecret";
static const uint8_t req_auth[16] = {
	0x52, 0x41, 0x44, 0x49, 0x55, 0x53, 0x2d, 0x66,
	0x75, 0x7a, 0x7a, 0x2d, 0x72, 0x65, 0x71, 0x21,
};

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

	if (tw_radius_decode(&p, data, size) != TW_OK)
		return 0;
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

	if (!ks_ready) {
		if (tw_radius_secret_init(&ks, secret, sizeof(secret) - 1) != TW_OK)
			abort();
		ks_ready = 1;
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
