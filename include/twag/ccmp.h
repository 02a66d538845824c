/*
 * twag — IEEE 802.11 data confidentiality for MPDUs (IEEE Std 802.11-2020
 * §12.5.3 CCMP and §12.5.5 GCMP): CCMP-128, CCMP-256, GCMP-128 and
 * GCMP-256 encapsulation and decapsulation of a real 802.11 MAC frame,
 * with the transmitter's PN and the receiver's per-TID replay counters.
 *
 * A frame here is the MPDU without FCS: MAC header || frame body.
 * Encapsulation turns header || plaintext into
 *   header || CCMP/GCMP header (8) || ciphertext || MIC (8 or 16);
 * decapsulation the reverse. Both work in place (out == in).
 * Nothing here allocates; keys and plaintext of rejected frames are wiped.
 */
#ifndef TWAG_CCMP_H
#define TWAG_CCMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twag/aes.h"
#include "twag/err.h"
#include "twag/gcm.h"

enum tw_ccmp_cipher {
	TW_CCMP_128 = 1, /* §12.5.3, AES-128-CCM, 8-octet MIC */
	TW_CCMP_256 = 2, /* §12.5.3, AES-256-CCM, 16-octet MIC */
	TW_GCMP_128 = 3, /* §12.5.5, AES-128-GCM, 16-octet MIC */
	TW_GCMP_256 = 4, /* §12.5.5, AES-256-GCM, 16-octet MIC */
};

enum {
	TW_CCMP_HDR_LEN = 8,       /* §12.5.3.2 / §12.5.5.2 header */
	TW_CCMP_MIC_MAX = 16,
	TW_CCMP_OVERHEAD_MAX = TW_CCMP_HDR_LEN + TW_CCMP_MIC_MAX,
	TW_80211_HDR_MAX = 36,     /* 24 + A4 6 + QoS 2 + HT Control 4 */
	TW_CCMP_AAD_MAX = 30,      /* §12.5.3.3.3: FC A1 A2 A3 SC A4 QC */
	TW_CCMP_RC_MGMT = 16,      /* replay counter of management frames */
	TW_CCMP_NUM_RC = 17,       /* TIDs 0..15 and management */
};

#define TW_CCMP_PN_MAX UINT64_C(0xffffffffffff) /* 48-bit PN */

/* A temporal key (TK) installed for one cipher and Key ID. */
struct tw_ccmp_key {
	uint32_t cipher;  /* enum tw_ccmp_cipher */
	uint32_t key_id;  /* 0..3 */
	bool spp_amsdu;   /* both STAs SPP A-MSDU capable: keep QC bit 7 */
	union {
		struct tw_aes_ctx aes;
		struct tw_gcm_ctx gcm;
	} k;
};

/* Transmit side: the PN of the last frame sent (0: none yet). */
struct tw_ccmp_tx {
	uint64_t pn;
};

/*
 * Receive side (§12.5.3.4.4): the last accepted PN per TID (QoS data;
 * non-QoS data counts as TID 0) and for management frames, plus the
 * dot11RSNAStats-style counters of rejected frames. Installing a new key
 * does not touch it: a receiver's PNs never go backwards.
 */
struct tw_ccmp_rx {
	uint64_t pn[TW_CCMP_NUM_RC];
	uint64_t replays, mic_failures, bad_key_id, decode_errors;
};

/*
 * Installs tk (16 octets for CCMP-128/GCMP-128, 32 for CCMP-256/GCMP-256)
 * under key_id 0..3. Returns TW_OK, TW_ERR_INVAL or TW_ERR_LENGTH.
 */
TW_MUST_CHECK int tw_ccmp_key_init(struct tw_ccmp_key *key, enum tw_ccmp_cipher cipher,
				   const uint8_t *tk, size_t tk_len, unsigned key_id);
void tw_ccmp_key_wipe(struct tw_ccmp_key *key);

/* MIC length of the key's cipher: 8 (CCMP-128) or 16. */
size_t tw_ccmp_mic_len(const struct tw_ccmp_key *key);

static inline void tw_ccmp_tx_init(struct tw_ccmp_tx *tx)
{
	tx->pn = 0;
}

void tw_ccmp_rx_init(struct tw_ccmp_rx *rx);

/*
 * §12.5.3.3 / §12.5.5.3 encapsulation of one MPDU (header || plaintext
 * body, frame_len octets) with PN = tx->pn + 1: builds the AAD from the
 * masked header and the nonce from priority/management flag, A2 and PN,
 * writes header (Protected bit set) || CCMP header || ciphertext || MIC to
 * out (out_cap octets; out may equal frame) and sets *out_len and tx->pn.
 * Returns TW_OK; TW_ERR_DECODE for a truncated or unsupported header
 * (control/extension frames, version != 0); TW_ERR_RANGE when the PN
 * space is exhausted (tx->pn == 2^48 - 1: the sender must rekey);
 * TW_ERR_OVERFLOW if out is too small; TW_ERR_INVAL for NULL pointers.
 */
TW_MUST_CHECK int tw_ccmp_encap(const struct tw_ccmp_key *key, struct tw_ccmp_tx *tx,
				const uint8_t *frame, size_t frame_len,
				uint8_t *out, size_t out_cap, size_t *out_len);

/*
 * §12.5.3.4 / §12.5.5.4 decapsulation: parses the header and CCMP header
 * (ExtIV must be set), checks the Key ID against key (TW_ERR_NOTFOUND),
 * rejects a PN not above the receiver's counter for the frame's TID
 * (TW_ERR_REPLAY) before any decryption, verifies the MIC in constant
 * time (TW_ERR_AUTH, nothing of the plaintext left in out), and only then
 * advances the counter. Writes header || plaintext to out (may equal
 * frame), *out_len, and *pn (may be NULL). TW_ERR_DECODE for truncated
 * frames; TW_ERR_OVERFLOW if out is too small. rx may be NULL to skip the
 * replay check (tools that decrypt captured frames).
 */
TW_MUST_CHECK int tw_ccmp_decap(const struct tw_ccmp_key *key, struct tw_ccmp_rx *rx,
				const uint8_t *frame, size_t frame_len,
				uint8_t *out, size_t out_cap, size_t *out_len, uint64_t *pn);

/* One MPDU of a batch: the arguments of tw_ccmp_encap / tw_ccmp_decap. */
struct tw_ccmp_mpdu {
	const struct tw_ccmp_key *key;
	struct tw_ccmp_tx *tx; /* encap */
	struct tw_ccmp_rx *rx; /* decap (NULL: no replay check) */
	const uint8_t *in;
	size_t in_len;
	uint8_t *out;
	size_t out_cap;
	size_t out_len; /* set on success */
	uint64_t pn;    /* set: the PN used / received */
	int status;     /* set: this MPDU's result */
	/* scratch for the batch call */
	uint8_t aad[TW_CCMP_AAD_MAX], nonce[13];
	size_t aad_len, hdr_len, body_len;
	uint32_t rc;
};

/*
 * Encapsulates / decapsulates mpdu[0..n) (each with its own key and PN
 * state) in one call, CCMP frames through the multi-frame CCM kernels and
 * GCMP frames through the GCM batch. Each MPDU gets the status the
 * single-frame call would give in array order (frames of one receiver
 * and TID are checked for replay in array order). Returns TW_OK if all
 * succeeded, else the first failure; TW_ERR_INVAL if n > 0 and mpdu is
 * NULL. MPDU buffers must not overlap one another.
 */
TW_MUST_CHECK int tw_ccmp_encap_batch(struct tw_ccmp_mpdu *mpdu, size_t n);
TW_MUST_CHECK int tw_ccmp_decap_batch(struct tw_ccmp_mpdu *mpdu, size_t n);

#endif
