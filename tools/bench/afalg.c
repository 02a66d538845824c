/*
 * twag-bench — AF_ALG reference helper (see afalg.h). Linux only; on other
 * systems every open reports "unavailable".
 *
 * UNTESTED ON THE MACHINE IT WAS WRITTEN ON (no AF_ALG in its kernel): the
 * code follows the kernel's Documentation/crypto/userspace-if.rst.
 */
#include "afalg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/if_alg.h>
#endif

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

int bench_afalg_open(struct bench_afalg *a, const struct bench_thread *t, const char *type,
		     const char *name, const uint8_t *key, size_t key_len, unsigned authsize)
{
	a->tfm = -1;
	a->op = -1;
	a->authsize = authsize;
#if defined(__linux__)
	struct sockaddr_alg sa;

	a->tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (a->tfm < 0)
		return bench_unavailable(t, "kernel AF_ALG: not available on this kernel "
					 "(socket: %s)", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.salg_family = AF_ALG;
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", type);
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", name);
	if (bind(a->tfm, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		bench_afalg_close(a);
		return bench_unavailable(t, "kernel AF_ALG: no %s %s in this kernel (bind: %s)",
					 type, name, strerror(e));
	}
	if (setsockopt(a->tfm, SOL_ALG, ALG_SET_KEY, key, (socklen_t)key_len) != 0)
		goto fail;
	/* The tag length goes in optlen, with no value (userspace-if.rst). */
	if (authsize && setsockopt(a->tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, authsize) != 0)
		goto fail;
	a->op = accept(a->tfm, NULL, 0);
	if (a->op < 0)
		goto fail;
	return 0;
fail:
	bench_afalg_close(a);
	return -1;
#else
	(void)type;
	(void)key;
	(void)key_len;
	return bench_unavailable(t, "kernel AF_ALG: not available on this system (%s)", name);
#endif
}

long bench_afalg_crypt(struct bench_afalg *a, bool encrypt, const uint8_t *iv, size_t iv_len,
		       size_t assoc_len, const uint8_t *in, size_t in_len, uint8_t *out,
		       size_t out_len)
{
#if defined(__linux__)
	/* Control messages: ALG_SET_OP, ALG_SET_IV and (AEAD) ALG_SET_AEAD_ASSOCLEN. */
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) * 2 +
			 CMSG_SPACE(sizeof(struct af_alg_iv) + 64)];
		struct cmsghdr align;
	} cbuf;
	struct msghdr msg;
	struct iovec iov = {.iov_base = (void *)in, .iov_len = in_len};
	struct cmsghdr *c;
	size_t clen = CMSG_SPACE(sizeof(uint32_t));
	uint32_t v;

	if (a->op < 0 || iv_len > 64)
		return -1;
	if (iv_len)
		clen += CMSG_SPACE(sizeof(struct af_alg_iv) + iv_len);
	if (a->authsize)
		clen += CMSG_SPACE(sizeof(uint32_t));
	memset(&cbuf, 0, sizeof(cbuf));
	memset(&msg, 0, sizeof(msg));
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = clen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;

	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	v = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	memcpy(CMSG_DATA(c), &v, sizeof(v));
	if (iv_len) {
		struct af_alg_iv hdr = {.ivlen = (uint32_t)iv_len};
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(hdr) + iv_len);
		memcpy(CMSG_DATA(c), &hdr, sizeof(hdr));
		memcpy(CMSG_DATA(c) + sizeof(hdr), iv, iv_len);
	}
	if (a->authsize) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
		c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
		v = (uint32_t)assoc_len;
		memcpy(CMSG_DATA(c), &v, sizeof(v));
	}
	if (sendmsg(a->op, &msg, 0) != (ssize_t)in_len)
		return -1;
	ssize_t n = read(a->op, out, out_len);
	return n < 0 ? -1 : (long)n;
#else
	(void)a; (void)encrypt; (void)iv; (void)iv_len; (void)assoc_len;
	(void)in; (void)in_len; (void)out; (void)out_len;
	return -1;
#endif
}

size_t bench_afalg_authenc_key(uint8_t *out, size_t max, const uint8_t *auth_key,
			       size_t auth_len, const uint8_t *enc_key, size_t enc_len)
{
	/* struct rtattr {u16 rta_len; u16 rta_type;} (host order) followed by
	 * struct crypto_authenc_key_param {__be32 enckeylen;}: RTA_LENGTH(4)
	 * = 8 bytes, type CRYPTO_AUTHENC_KEYA_PARAM = 1. */
	uint16_t rta_len = 8, rta_type = 1;
	size_t total = 8 + auth_len + enc_len;

	if (total > max || enc_len > 0xffffffffu)
		return 0;
	memcpy(out, &rta_len, 2);
	memcpy(out + 2, &rta_type, 2);
	out[4] = (uint8_t)(enc_len >> 24);
	out[5] = (uint8_t)(enc_len >> 16);
	out[6] = (uint8_t)(enc_len >> 8);
	out[7] = (uint8_t)enc_len;
	memcpy(out + 8, auth_key, auth_len);
	memcpy(out + 8 + auth_len, enc_key, enc_len);
	return total;
}

void bench_afalg_close(struct bench_afalg *a)
{
	if (a->op > 0)
		close(a->op);
	if (a->tfm > 0)
		close(a->tfm);
	a->op = -1;
	a->tfm = -1;
}
