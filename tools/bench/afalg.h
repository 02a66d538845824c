/*
 * twag-bench — the Linux kernel crypto API (AF_ALG) as a data-plane
 * reference: one transform socket bound to an algorithm and keyed once,
 * one operation socket, one sendmsg + read per packet (the ordinary way a
 * user-space program uses it).
 *
 * UNTESTED ON THE MACHINE IT WAS WRITTEN ON: that kernel has no AF_ALG
 * (socket() fails with EAFNOSUPPORT), so only the "unavailable" path has
 * run. The request layout follows the kernel's
 * Documentation/crypto/userspace-if.rst (AEAD since Linux 4.9: the
 * associated data is part of the input AND of the output).
 *
 * Typical use in a reference scenario's setup():
 *
 *   int rc = bench_afalg_open(&s->alg, t, "aead", "ccm(aes)", tk, 16, 8);
 *   if (rc != 0)
 *       return rc;   // BENCH_UNAVAILABLE with t->why filled in, or -1
 */
#ifndef TW_BENCH_AFALG_H
#define TW_BENCH_AFALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

struct bench_afalg {
	int tfm;           /* bound transform socket, -1 when closed */
	int op;            /* accept()ed operation socket, -1 when closed */
	unsigned authsize; /* AEAD tag length; 0 for a skcipher */
};

/*
 * Opens type ("aead" or "skcipher") / name ("ccm(aes)", "gcm(aes)",
 * "authenc(hmac(sha1),cbc(aes))", "cbc(des3_ede)", ...) keyed with key
 * (for authenc(): the blob from bench_afalg_authenc_key) and, for an
 * AEAD, the tag length authsize. Returns 0; BENCH_UNAVAILABLE with the
 * reason in t->why when the kernel has no AF_ALG ("kernel AF_ALG: not
 * available on this kernel (socket: ...)") or lacks the algorithm; -1 for
 * any other failure. *a is usable with bench_afalg_close() in every case.
 */
int bench_afalg_open(struct bench_afalg *a, const struct bench_thread *t, const char *type,
		     const char *name, const uint8_t *key, size_t key_len, unsigned authsize);

/*
 * One request. encrypt selects ALG_OP_ENCRYPT/DECRYPT; iv (iv_len bytes)
 * is sent with ALG_SET_IV; for an AEAD, assoc_len (ALG_SET_AEAD_ASSOCLEN)
 * says how many leading bytes of in are associated data.
 *   AEAD encrypt: in = AAD | plaintext       out = AAD | ciphertext | tag
 *   AEAD decrypt: in = AAD | ciphertext | tag   out = AAD | plaintext
 *   skcipher:     in = data (whole blocks)   out = data
 * Returns the number of bytes read into out (at most out_len), or -1 (a
 * bad tag reads as -1 with errno EBADMSG).
 */
long bench_afalg_crypt(struct bench_afalg *a, bool encrypt, const uint8_t *iv, size_t iv_len,
		       size_t assoc_len, const uint8_t *in, size_t in_len, uint8_t *out,
		       size_t out_len);

/*
 * The key blob authenc(hmac(H),cbc(C)) takes (crypto/authenc.c): an rtattr
 * of type CRYPTO_AUTHENC_KEYA_PARAM holding enckeylen (big-endian), then
 * the authentication key, then the encryption key. Returns its length, or
 * 0 if it does not fit in max.
 */
size_t bench_afalg_authenc_key(uint8_t *out, size_t max, const uint8_t *auth_key,
			       size_t auth_len, const uint8_t *enc_key, size_t enc_len);

/* Closes both sockets (safe on a zeroed or already closed *a). */
void bench_afalg_close(struct bench_afalg *a);

#endif
