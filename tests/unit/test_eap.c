/* Tests of EAP framing (RFC 3748 §4, RFC 6696 §5.3 codes). */
#include "tw_test.h"
#include "twag/bytes.h"
#include "twag/eap.h"

static int dec(struct tw_eap_view *v, const char *hex, uint8_t *buf)
{
	size_t n = tw_test_hex(buf, 64, hex);

	return tw_eap_decode(v, buf, n);
}

static void test_decode(void)
{
	struct tw_eap_view v;
	uint8_t b[64];

	/* RFC 3748 §5.1 Request/Identity with no data, and a Response/
	 * Identity carrying "user". */
	CHECK_OK(dec(&v, "0105000501", b));
	CHECK(v.code == TW_EAP_REQUEST && v.id == 5 && v.length == 5 &&
	      v.type == TW_EAP_TYPE_IDENTITY && v.data_len == 0);
	CHECK_OK(dec(&v, "02050009017573657200", b));
	CHECK(v.type == 1 && v.data_len == 4 && memcmp(v.data, "user", 4) == 0);
	/* §4.1: octets beyond Length are link padding, ignored. */
	CHECK(v.length == 9);
	/* §4.2 Success/Failure: exactly 4 octets. */
	CHECK_OK(dec(&v, "03070004", b));
	CHECK(v.code == TW_EAP_SUCCESS && v.type == 0 && v.data == NULL);
	CHECK_OK(dec(&v, "04070004ffff", b));
	CHECK_ERR(dec(&v, "0307000501", b), TW_ERR_DECODE);
	/* RFC 6696 §5.3: Initiate / Finish carry a Type. */
	CHECK_OK(dec(&v, "0501000501", b));
	CHECK(v.code == TW_EAP_INITIATE && v.type == 1);
	CHECK_OK(dec(&v, "060100060200", b));
	CHECK_ERR(dec(&v, "05010004", b), TW_ERR_DECODE);
	/* Requests need a Type; Length below 4, above the buffer; short
	 * buffers; unknown codes. */
	CHECK_ERR(dec(&v, "01050004", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "0105000301", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "0105000001", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "0105000601", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "010500", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "00050004", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "07050004", b), TW_ERR_DECODE);
	CHECK_ERR(dec(&v, "ff0500050100", b), TW_ERR_DECODE);
	CHECK_ERR(tw_eap_decode(NULL, b, 4), TW_ERR_INVAL);
	CHECK_ERR(tw_eap_decode(&v, NULL, 4), TW_ERR_INVAL);
}

static void test_encode(void)
{
	uint8_t buf[80], data[64];
	size_t n = 99;
	struct tw_eap_view v;

	CHECK_OK(tw_eap_encode(buf, sizeof(buf), &n, TW_EAP_FAILURE, 3, 99, data, 10));
	CHECK(n == 4 && buf[0] == 4 && buf[1] == 3 && tw_load_be16(buf + 2) == 4);
	CHECK_OK(tw_eap_encode(buf, sizeof(buf), &n, TW_EAP_REQUEST, 0, TW_EAP_TYPE_IDENTITY, NULL, 0));
	CHECK(n == 5);
	CHECK_ERR(tw_eap_encode(buf, sizeof(buf), &n, 7, 0, 1, NULL, 0), TW_ERR_INVAL);
	CHECK_ERR(tw_eap_encode(buf, sizeof(buf), &n, TW_EAP_REQUEST, 0, 1, NULL, 3), TW_ERR_INVAL);
	CHECK_ERR(tw_eap_encode(buf, 4, &n, TW_EAP_REQUEST, 0, 1, NULL, 0), TW_ERR_OVERFLOW);
	CHECK(n == 0);
	CHECK_ERR(tw_eap_encode(buf, 3, &n, TW_EAP_SUCCESS, 0, 0, NULL, 0), TW_ERR_OVERFLOW);
	CHECK_ERR(tw_eap_encode(buf, sizeof(buf), &n, TW_EAP_RESPONSE, 0, 1, data, 65531), TW_ERR_LENGTH);
	/* Data already in place at buf + 5 (built in the caller's buffer). */
	memcpy(buf + 5, "abc", 3);
	CHECK_OK(tw_eap_encode(buf, sizeof(buf), &n, TW_EAP_RESPONSE, 1, 1, buf + 5, 3));
	CHECK(n == 8 && memcmp(buf + 5, "abc", 3) == 0);

	/* Random round trips for every typed code. */
	static const uint8_t codes[4] = { 1, 2, 5, 6 };
	bool all = true;
	for (int i = 0; i < 500; i++) {
		size_t dl = tw_test_random_u32() % sizeof(data);
		uint8_t code = codes[i % 4], id = (uint8_t)i, type = (uint8_t)(i * 7);

		tw_test_random(data, dl);
		all &= tw_eap_encode(buf, sizeof(buf), &n, code, id, type, data, dl) == TW_OK;
		all &= n == 5 + dl;
		all &= tw_eap_decode(&v, buf, n) == TW_OK;
		all &= v.code == code && v.id == id && v.type == type &&
		       v.data_len == dl && memcmp(v.data, data, dl) == 0;
		/* A single octet less is a truncated packet. */
		all &= tw_eap_decode(&v, buf, n - 1) == TW_ERR_DECODE;
	}
	CHECK(all);
	CHECK_ERR(tw_eap_set_length(buf, 3), TW_ERR_LENGTH);
	CHECK_ERR(tw_eap_set_length(buf, 65536), TW_ERR_LENGTH);
	CHECK_OK(tw_eap_set_length(buf, 65535));
	CHECK(tw_load_be16(buf + 2) == 65535);
}

void test_main(void)
{
	test_decode();
	test_encode();
}
