/*
 * twag — IPsec ESP (RFC 4303, December 2005) and AH (RFC 4302, December
 * 2005) packet processing, with the transforms
 *   ESP: AES-GCM-128/256 with 8/12/16-octet ICV (RFC 4106), AES-CBC
 *        (RFC 3602) or 3DES-CBC (RFC 2451) or NULL (RFC 2410) encryption
 *        with HMAC-SHA1-96 (RFC 2404), HMAC-SHA-256-128 (RFC 4868) or
 *        HMAC-MD5-96 (RFC 2403) integrity;
 *   AH:  HMAC-SHA1-96, HMAC-SHA-256-128, HMAC-MD5-96;
 * 32-bit and extended (64-bit, ESN) sequence numbers, and the anti-replay
 * window of twag/replay.h. No allocation, no I/O: an SA is a caller-owned
 * struct holding prepared keys (AES key schedules, GHASH powers, HMAC
 * inner/outer states computed once per SA); packets are processed in the
 * caller's buffer.
 *
 * 3DES, MD5 and NULL exist to compare legacy transforms in the benchmark.
 * ESP with NULL encryption and no integrity is forbidden on the wire
 * (RFC 4303 §3.2 "MUST NOT"); it is accepted only when the configuration
 * asks for it explicitly (allow_null_null), as the no-crypto baseline.
 *
 * Inbound processing follows RFC 4303 §3.4 in order: SA (SPI) match,
 * sequence number pre-check against the window, ICV verification in
 * constant time (before any CBC decryption; GCM verifies as it decrypts),
 * window update only after the ICV verified, decryption, then padding and
 * next-header checks. Every failure has its own status code and counter,
 * and no plaintext survives a failure.
 */
#ifndef TWAG_ESP_H
#define TWAG_ESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/des.h"
#include "twag/err.h"
#include "twag/gcm.h"
#include "twag/hmac.h"
#include "twag/md5.h"
#include "twag/replay.h"

enum tw_esp_cipher {
	TW_ESP_ENC_NULL = 0,    /* RFC 2410 */
	TW_ESP_ENC_AES_CBC = 1, /* RFC 3602, key 16 or 32 octets */
	TW_ESP_ENC_3DES_CBC = 2, /* RFC 2451, key 24 octets */
	TW_ESP_ENC_AES_GCM = 3, /* RFC 4106, key 16 or 32 octets + 4 salt */
};

enum tw_esp_integ {
	TW_ESP_AUTH_NONE = 0,
	TW_ESP_AUTH_HMAC_SHA1_96 = 1,    /* RFC 2404: key 20, ICV 12 */
	TW_ESP_AUTH_HMAC_SHA256_128 = 2, /* RFC 4868: key 32, ICV 16 */
	TW_ESP_AUTH_HMAC_MD5_96 = 3,     /* RFC 2403: key 16, ICV 12 */
};

enum tw_esp_mode {
	TW_ESP_TRANSPORT = 0, /* payload: an upper-layer protocol */
	TW_ESP_TUNNEL = 1,    /* payload: an inner IPv4/IPv6 packet */
};

enum {
	TW_ESP_HDR_LEN = 8,        /* SPI + sequence number (RFC 4303 §2) */
	TW_ESP_MAX_IV_LEN = 16,
	TW_ESP_MAX_ICV_LEN = 16,
	TW_ESP_NH_IPV4 = 4,        /* IANA protocol numbers */
	TW_ESP_NH_IPV6 = 41,
	TW_ESP_NH_NONE = 59,       /* RFC 4303 §2.6 dummy packet */
	TW_AH_HDR_LEN = 12,        /* RFC 4302 §2 without the ICV */
	TW_IPV4_HDR_LEN = 20,
	TW_IPPROTO_ESP = 50,
	TW_IPPROTO_AH = 51,
};

/* Prepared integrity key: HMAC inner/outer states (twag/hmac.h, md5.h). */
union tw_ipsec_auth {
	struct tw_hmac_sha1_ctx sha1;
	struct tw_hmac_sha256_ctx sha256;
	struct tw_hmac_md5_ctx md5;
};

/* How an SA is made. Keys are copied into prepared contexts. */
struct tw_esp_config {
	uint32_t spi;          /* RFC 4303 §2.1; 0 is reserved (rejected) */
	uint32_t cipher;       /* enum tw_esp_cipher */
	uint32_t integ;        /* enum tw_esp_integ; NONE with GCM */
	uint32_t mode;         /* enum tw_esp_mode */
	const uint8_t *enc_key; /* GCM: AES key | 4-octet salt (RFC 4106 §8.1) */
	size_t enc_key_len;
	const uint8_t *auth_key;
	size_t auth_key_len;
	uint32_t icv_len;      /* GCM: 8, 12 or 16 (0 = 16); else derived */
	uint32_t replay_window; /* receiver: 32..4096 (0 = 64) */
	bool esn;              /* 64-bit extended sequence numbers */
	bool allow_null_null;  /* benchmark baseline only, see above */
};

/* Per-SA counters of what happened to packets (RFC 4303 §3.4 auditable
 * events: each drop is counted, never silent). */
struct tw_esp_stats {
	uint64_t out_ok, in_ok;
	uint64_t bad_length;   /* truncated, or not a whole number of blocks */
	uint64_t bad_spi;
	uint64_t replayed;     /* seen before (inside the window) */
	uint64_t too_old;      /* left of the window */
	uint64_t bad_icv;
	uint64_t bad_padding;
	uint64_t bad_next_header;
	uint64_t seq_exhausted; /* sender: counter would cycle (§3.3.3) */
};

struct tw_esp_sa {
	uint32_t spi, cipher, integ, mode;
	uint32_t iv_len, icv_len, align; /* align: padding boundary */
	bool esn;
	uint64_t seq_out;      /* sender: last number sent (0: none) */
	union {
		struct tw_aes_ctx aes;
		struct tw_des3_ctx des3;
		struct tw_gcm_ctx gcm;
	} enc;
	uint8_t salt[4];       /* GCM */
	union tw_ipsec_auth auth;
	struct tw_replay_ctx replay;
	struct tw_esp_stats stats;
};

/* Where the plaintext ended up after decapsulation: pkt + off, len octets;
 * the next header it names, and the full (ESN) sequence number. */
struct tw_esp_view {
	size_t off, len;
	uint8_t next_header;
	uint64_t seq;
};

/*
 * Looks up a transform by its CLI/benchmark name: "aes-gcm-128",
 * "aes-gcm-256", "aes-cbc-128-hmac-sha1", "aes-cbc-256-hmac-sha1",
 * "aes-cbc-128-hmac-sha256", "aes-cbc-256-hmac-sha256",
 * "3des-cbc-hmac-sha1", "aes-cbc-128-hmac-md5", "null-hmac-sha1",
 * "null-hmac-md5", "null" (no ICV: baseline only). Fills cipher, integ
 * and the key lengths (enc_key_len includes the GCM salt); key pointers,
 * spi and the rest are left to the caller. Returns TW_ERR_NOTFOUND for
 * an unknown name.
 */
TW_MUST_CHECK int tw_esp_transform(const char *name, struct tw_esp_config *cfg);

/*
 * Prepares an SA (keys expanded, HMAC states precomputed, empty replay
 * window, sequence counter 0). Returns TW_ERR_LENGTH for a key length the
 * transform does not take, TW_ERR_INVAL for an unknown cipher/integ/mode,
 * SPI 0, GCM with a separate integrity transform, NULL with no integrity
 * unless allow_null_null, or AES-CBC/3DES with ESN and no integrity
 * (nothing would check the inferred high half, RFC 4303 §2.2.1);
 * TW_ERR_RANGE for a bad window.
 */
TW_MUST_CHECK int tw_esp_sa_init(struct tw_esp_sa *sa,
				 const struct tw_esp_config *cfg);

/* Wipes every key in the SA. */
void tw_esp_sa_wipe(struct tw_esp_sa *sa);

/* Octets before the payload in an ESP packet of this SA: 8 + IV. */
size_t tw_esp_hdr_len(const struct tw_esp_sa *sa);
/* Exact length of the ESP packet for a payload of len octets. */
size_t tw_esp_encap_len(const struct tw_esp_sa *sa, size_t len);

/*
 * RFC 4303 §3.3: builds the ESP packet SPI | Seq | IV | E(payload | pad |
 * pad length | next header) | ICV into out (out_max octets) with the next
 * sequence number, and writes its length to *out_len.
 *   - Sequence number: seq_out + 1; without ESN, once 2^32 - 1 was sent the
 *     SA stops with TW_ERR_STATE (§3.3.3: it must not cycle; rekey).
 *   - IV: GCM uses the 64-bit sequence number (RFC 4106 §3.1: unique per
 *     key); CBC uses E_K(nonce) with the sequence number as the nonce
 *     (NIST SP 800-38A Appendix C), unpredictable without an RNG.
 *   - Padding: §2.4, octets 1, 2, 3, ... up to the cipher block (CBC) or
 *     a 4-octet boundary.
 *   - next_header: transport mode, the protocol of the payload; tunnel
 *     mode, 0 (taken from the inner packet's version: 4 or 41) or the
 *     matching value.
 * payload may overlap out in any way (it is moved first); in particular
 * payload == out + tw_esp_hdr_len(sa) encapsulates in place.
 * Returns TW_OK, TW_ERR_OVERFLOW if out_max is too small, TW_ERR_STATE when
 * the sequence space is exhausted, TW_ERR_INVAL for a tunnel payload that
 * is not IPv4/IPv6 or a next_header that contradicts it.
 */
TW_MUST_CHECK int tw_esp_encap(struct tw_esp_sa *sa, uint8_t next_header,
			       const uint8_t *payload, size_t len, uint8_t *out,
			       size_t out_max, size_t *out_len);

/*
 * As tw_esp_encap(), with the explicit IV given (iv_len octets of the SA:
 * 16 AES-CBC, 8 3DES and GCM, none for NULL; iv NULL means generated as
 * tw_esp_encap() does). For
 * known-answer tests and cross-checks: the caller vouches that a CBC IV
 * is unpredictable and that a GCM IV never repeats under the key.
 */
TW_MUST_CHECK int tw_esp_encap_iv(struct tw_esp_sa *sa, uint8_t next_header,
				  const uint8_t *iv, const uint8_t *payload,
				  size_t len, uint8_t *out, size_t out_max,
				  size_t *out_len);

/*
 * RFC 4303 §3.4: verifies and decrypts the ESP packet pkt[0..len) in place
 * and describes the payload in *view. Returns, in the order checked:
 *   TW_ERR_LENGTH   shorter than header + IV + trailer + ICV, or the
 *                   ciphertext is not a whole number of cipher blocks;
 *   TW_ERR_NOTFOUND the SPI is not this SA's;
 *   TW_ERR_REPLAY   a sequence number already received;
 *   TW_ERR_RANGE    a sequence number left of the window;
 *   TW_ERR_AUTH     the ICV does not verify (constant-time compare);
 *   TW_ERR_DECODE   pad length too large or padding not 1, 2, 3, ...;
 *   TW_ERR_UNSUPPORTED a next header the SA's mode does not carry (tunnel:
 *                   not 4/41/59, or not matching the inner version).
 * The window moves only when the ICV verified. The trailer of a verified
 * packet (pad length, next header, padding; in tunnel mode the inner
 * version) is declassified (tw_ct_declassify): the receiver acts on it.
 * On any failure after
 * decryption the decrypted octets are wiped. Next header 59 (dummy packet,
 * §2.6) is returned with TW_OK for the caller to discard.
 */
TW_MUST_CHECK int tw_esp_decap(struct tw_esp_sa *sa, uint8_t *pkt, size_t len,
			       struct tw_esp_view *view);

/*
 * One packet of a batch. Each names its own SA (several may share one; they
 * are processed in array order, so sequence numbers and window updates are
 * as if sent/received one by one).
 *   encap: the payload is at buf + tw_esp_hdr_len(sa), len octets, with
 *          next_header; on TW_OK buf[0..len) is the ESP packet (len updated).
 *   decap: buf[0..len) is the ESP packet; on TW_OK view describes the
 *          payload (next_header is set too).
 * status: the packet's own result, as the single-packet calls return it.
 */
struct tw_esp_pkt {
	struct tw_esp_sa *sa;
	uint8_t *buf;
	size_t len;
	size_t cap;
	uint8_t next_header;
	struct tw_esp_view view;
	int status;
};

/*
 * Processes n packets in one call: the framing of all, then the AES-GCM
 * packets together through tw_gcm_*_batch (several packets in flight), on
 * encapsulation the 3DES packets of each SA as CBC chains side by side
 * (tw_des3_cbc_encrypt_multi), and the other CBC/NULL ones in turn. Returns TW_OK if all succeeded, else the
 * status of the first that failed (all are processed); TW_ERR_INVAL for a
 * NULL array with n > 0.
 */
TW_MUST_CHECK int tw_esp_encap_batch(struct tw_esp_pkt *pkts, size_t n);
TW_MUST_CHECK int tw_esp_decap_batch(struct tw_esp_pkt *pkts, size_t n);

/* ---- AH (RFC 4302), IPv4 transport mode ---- */

/*
 * An AH SA: integrity only (HMAC-SHA1-96, HMAC-SHA-256-128, HMAC-MD5-96).
 * The IPv4 model is deliberately small: a 20-octet header without options
 * (IHL 5); the mutable fields TOS, flags/fragment offset, TTL and header
 * checksum are zeroed for the ICV (RFC 4302 §3.3.3.1.1.1), everything else
 * in the header is covered.
 */
struct tw_ah_sa {
	uint32_t spi, integ, icv_len;
	bool esn;
	uint64_t seq_out;
	union tw_ipsec_auth auth;
	struct tw_replay_ctx replay;
	struct tw_esp_stats stats;
};

/*
 * Prepares an AH SA from cfg's spi, integ (not NONE), auth_key, esn and
 * replay_window (the cipher/enc fields must be NULL/0). Returns as
 * tw_esp_sa_init().
 */
TW_MUST_CHECK int tw_ah_sa_init(struct tw_ah_sa *sa,
				const struct tw_esp_config *cfg);
void tw_ah_sa_wipe(struct tw_ah_sa *sa);
/* AH header + ICV octets inserted by tw_ah_encap (12 + ICV, 4-aligned). */
size_t tw_ah_len(const struct tw_ah_sa *sa);

/*
 * RFC 4302 §3.1.1 transport mode: inserts the AH header after the IPv4
 * header of ip[0..len) (total length and protocol 51 updated, header
 * checksum recomputed), computes the ICV over the packet with the mutable
 * fields zeroed (§3.3.3), writes the result (len + tw_ah_len()) to out.
 * ip may equal out (processed in place; out_max must leave room).
 * Returns TW_ERR_DECODE for a packet that is not IPv4 or whose total length
 * differs from len, TW_ERR_UNSUPPORTED for IPv4 options or a fragment,
 * TW_ERR_OVERFLOW, TW_ERR_STATE (sequence space exhausted, §3.3.2).
 */
TW_MUST_CHECK int tw_ah_encap(struct tw_ah_sa *sa, const uint8_t *ip,
			      size_t len, uint8_t *out, size_t out_max,
			      size_t *out_len);

/*
 * RFC 4302 §3.4: verifies the AH packet pkt[0..len) and, on success,
 * removes the AH header in place, restoring the original IPv4 packet
 * (protocol = AH next header, total length, checksum) in pkt[0..*out_len);
 * *seq receives the full sequence number. Errors as tw_esp_decap(), with
 * TW_ERR_DECODE also for a malformed IPv4 header or AH length field. On
 * failure the packet is left unchanged.
 */
TW_MUST_CHECK int tw_ah_decap(struct tw_ah_sa *sa, uint8_t *pkt, size_t len,
			      size_t *out_len, uint64_t *seq);

#endif
