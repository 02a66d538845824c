/*
 * Fuzz target: the ERP decoder (RFC 6696 §5.3) and the server/peer entry
 * points on arbitrary packets, with one known key whose keyName-NAI the
 * lookup answers. Invariants: no crash, no overread; a decoded message's
 * views lie inside the input and re-encode to a packet that decodes again;
 * the server never accepts (a forged tag cannot verify here) and never
 * changes the key's SEQ state on a rejection.
 */
#include <stdlib.h>
#include <string.h>

#include "twag/eap.h"
#include "twag/erp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct tw_erp_key_ctx key;
static int ready;

static int lookup(void *arg, const uint8_t *nai, size_t nai_len,
		  struct tw_erp_key_ctx **k)
{
	(void)arg;
	if (nai_len != key.keyname_nai_len || memcmp(nai, key.keyname_nai, nai_len) != 0)
		return TW_ERR_NOTFOUND;
	*k = &key;
	return TW_OK;
}

static int inside(const uint8_t *p, size_t n, const uint8_t *d, size_t size)
{
	return p == NULL ? n == 0 : (p >= d && n <= size && p + n <= d + size);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tw_erp_msg m, m2;
	uint8_t out[1200], rmsk[64];
	size_t len;

	if (!ready) {
		uint8_t emsk[64] = { 1, 2, 3 }, sid[4] = { 50, 1, 2, 3 };
		if (tw_erp_key_init(&key, emsk, sid, 4, "fuzz.example", 12, 2) != TW_OK)
			abort();
		ready = 1;
	}
	if (tw_erp_decode(&m, data, size) == TW_OK) {
		if (!inside(m.keyname_nai, m.keyname_nai_len, data, size) ||
		    !inside(m.domain, m.domain_len, data, size) ||
		    !inside(m.tag, m.tag_len, data, size) || m.signed_len > size)
			abort();
		const struct tw_erp_key_ctx *k =
			m.type == TW_ERP_TYPE_REAUTH && m.cryptosuite ? &key : NULL;
		if (tw_erp_encode(out, sizeof(out), &len, &m, k) != TW_OK ||
		    tw_erp_decode(&m2, out, len) != TW_OK || m2.seq != m.seq ||
		    m2.keyname_nai_len != m.keyname_nai_len)
			abort();
	}
	/* with the suite known: the same bounds, and a split the suite's */
	for (uint8_t cs = 1; cs <= 3; cs++)
		if (tw_erp_decode_suite(&m, data, size, cs) == TW_OK &&
		    (!inside(m.keyname_nai, m.keyname_nai_len, data, size) ||
		     !inside(m.tag, m.tag_len, data, size) || m.signed_len > size ||
		     (m.tag != NULL && (m.cryptosuite != cs || m.tag_len != tw_erp_tag_len(cs)))))
			abort();
	struct tw_erp_key_ctx before = key;
	struct tw_erp_key_ctx *used;
	if (tw_erp_server_reauth(lookup, NULL, data, size, out, sizeof(out), &len,
				 rmsk, &used) == TW_OK)
		abort(); /* no input can carry a valid tag under this key */
	if (memcmp(&before, &key, sizeof(key)) != 0)
		abort();
	/* the peer side, with a Re-auth outstanding */
	key.pending = true;
	key.pending_seq = 0;
	if (tw_erp_peer_finish(&key, data, size, rmsk) == TW_OK)
		abort();
	key = before;
	return 0;
}
