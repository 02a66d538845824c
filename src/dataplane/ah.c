/*
 * twag — IPsec AH (RFC 4302, December 2005) in IPv4 transport mode with
 * HMAC-SHA1-96 (RFC 2404), HMAC-SHA-256-128 (RFC 4868) and HMAC-MD5-96
 * (RFC 2403). Legacy comparison transform; see twag/esp.h.
 */
#include <string.h>

#include "esp_internal.h"
#include "twag/bytes.h"

int tw_ah_sa_init(struct tw_ah_sa *sa, const struct tw_esp_config *cfg)
{
	int err;

	if (sa == NULL || cfg == NULL)
		return TW_ERR_INVAL;
	memset(sa, 0, sizeof(*sa));
	if (cfg->spi == 0 || cfg->cipher != TW_ESP_ENC_NULL || cfg->enc_key_len != 0 ||
	    cfg->integ == TW_ESP_AUTH_NONE || cfg->auth_key == NULL)
		return TW_ERR_INVAL;
	sa->spi = cfg->spi;
	sa->integ = cfg->integ;
	sa->esn = cfg->esn;
	err = tw_replay_init(&sa->replay, cfg->replay_window ? cfg->replay_window
							     : TW_REPLAY_WINDOW_DEFAULT);
	if (err == TW_OK)
		err = tw_ipsec_auth_init(&sa->auth, cfg->integ, cfg->auth_key,
					 cfg->auth_key_len, &sa->icv_len);
	if (err != TW_OK)
		tw_ah_sa_wipe(sa);
	return err;
}

void tw_ah_sa_wipe(struct tw_ah_sa *sa)
{
	tw_wipe(sa, sizeof(*sa));
}

/* RFC 4302 §2.2: the AH length is a multiple of 32 bits for IPv4 (the
 * 12- and 16-octet ICVs need no padding). */
size_t tw_ah_len(const struct tw_ah_sa *sa)
{
	return TW_AH_HDR_LEN + ((sa->icv_len + 3) & ~3u);
}

/* RFC 791 header checksum over the 20-octet header. */
static uint16_t ipv4_checksum(const uint8_t h[20])
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += tw_load_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The small IPv4 model: version 4, IHL 5, total length = len, not a
 * fragment (AH is applied to whole datagrams, §3.3.3.1.1.1 / §3.4.1). */
static int ipv4_check(const uint8_t *ip, size_t len)
{
	if (len < TW_IPV4_HDR_LEN || (ip[0] >> 4) != 4)
		return TW_ERR_DECODE;
	if ((ip[0] & 15) != 5)
		return TW_ERR_UNSUPPORTED; /* options: mutability per option */
	if (tw_load_be16(ip + 2) != len)
		return TW_ERR_DECODE;
	if ((tw_load_be16(ip + 6) & 0x3fff) != 0)
		return TW_ERR_UNSUPPORTED; /* MF set or an offset */
	return TW_OK;
}

/*
 * RFC 4302 §3.3.3: ICV over the IP header with the mutable fields zeroed
 * (§3.3.3.1.1.1: TOS, flags + fragment offset, TTL, header checksum), the
 * AH header with the ICV field zeroed, the payload, and with ESN the high
 * 32 bits of the sequence number appended after the payload (§2.5.1:
 * covered by the ICV, never sent).
 */
static void ah_icv(struct tw_ah_sa *sa, const uint8_t *pkt, size_t len,
		   uint64_t seq, uint8_t mac[32])
{
	uint8_t hdr[TW_IPV4_HDR_LEN + TW_AH_HDR_LEN + 16] = { 0 };
	size_t ahl = tw_ah_len(sa), hl = TW_IPV4_HDR_LEN + ahl;
	uint8_t hi[4];

	memcpy(hdr, pkt, TW_IPV4_HDR_LEN + TW_AH_HDR_LEN);
	hdr[1] = 0;                    /* TOS (DSCP/ECN) */
	hdr[6] = hdr[7] = 0;           /* flags, fragment offset */
	hdr[8] = 0;                    /* TTL */
	hdr[10] = hdr[11] = 0;         /* header checksum */
	tw_store_be32(hi, (uint32_t)(seq >> 32));
	tw_ipsec_auth_mac(&sa->auth, sa->integ, hdr, hl, pkt + hl, len - hl, hi,
			  sa->esn ? 4 : 0, mac);
}

int tw_ah_encap(struct tw_ah_sa *sa, const uint8_t *ip, size_t len,
		uint8_t *out, size_t out_max, size_t *out_len)
{
	size_t ahl, total;
	uint64_t seq;
	uint8_t mac[32];
	int err;

	if (sa == NULL || ip == NULL || out == NULL || out_len == NULL)
		return TW_ERR_INVAL;
	err = ipv4_check(ip, len);
	if (err != TW_OK)
		return err;
	ahl = tw_ah_len(sa);
	total = len + ahl;
	if (total > out_max || total > 0xffff)
		return TW_ERR_OVERFLOW;
	/* §3.3.2: the counter must not cycle (32-bit, or 64-bit with ESN) */
	if (sa->seq_out == (sa->esn ? UINT64_MAX : (uint64_t)UINT32_MAX)) {
		sa->stats.seq_exhausted++;
		return TW_ERR_STATE;
	}
	seq = sa->seq_out + 1;
	/* payload moves up by the AH length; the header is copied below */
	memmove(out + TW_IPV4_HDR_LEN + ahl, ip + TW_IPV4_HDR_LEN,
		len - TW_IPV4_HDR_LEN);
	if (out != ip)
		memmove(out, ip, TW_IPV4_HDR_LEN);
	/* §2: Next Header, Payload Len = AH length in 32-bit words - 2,
	 * Reserved, SPI, Sequence Number, ICV */
	uint8_t *ah = out + TW_IPV4_HDR_LEN;
	ah[0] = out[9];
	ah[1] = (uint8_t)(ahl / 4 - 2);
	ah[2] = ah[3] = 0;
	tw_store_be32(ah + 4, sa->spi);
	tw_store_be32(ah + 8, (uint32_t)seq);
	memset(ah + TW_AH_HDR_LEN, 0, ahl - TW_AH_HDR_LEN);
	out[9] = TW_IPPROTO_AH;
	tw_store_be16(out + 2, (uint16_t)total);
	ah_icv(sa, out, total, seq, mac);
	memcpy(ah + TW_AH_HDR_LEN, mac, sa->icv_len);
	tw_wipe(mac, sizeof(mac));
	out[10] = out[11] = 0;
	tw_store_be16(out + 10, ipv4_checksum(out));
	sa->seq_out = seq;
	sa->stats.out_ok++;
	*out_len = total;
	return TW_OK;
}

static int ah_decap(struct tw_ah_sa *sa, uint8_t *pkt, size_t len,
		    size_t *out_len, uint64_t *seq_out)
{
	size_t ahl = tw_ah_len(sa);
	uint8_t *ah = pkt + TW_IPV4_HDR_LEN;
	uint8_t mac[32], icv[16];
	uint64_t seq;
	bool ok;
	int err;

	if (len < TW_IPV4_HDR_LEN + ahl)
		return TW_ERR_LENGTH;
	err = ipv4_check(pkt, len);
	if (err != TW_OK)
		return err;
	if (pkt[9] != TW_IPPROTO_AH || ah[1] != ahl / 4 - 2)
		return TW_ERR_DECODE;
	if (tw_load_be32(ah + 4) != sa->spi)
		return TW_ERR_NOTFOUND;
	/* §3.4.3: sequence number (ESN inferred) and replay pre-check */
	if (sa->esn) {
		err = tw_replay_esn_infer(&sa->replay, tw_load_be32(ah + 8), &seq);
		if (err != TW_OK)
			return err;
	} else {
		seq = tw_load_be32(ah + 8);
	}
	err = tw_replay_check(&sa->replay, seq);
	if (err != TW_OK)
		return err;
	/* §3.4.4: the ICV field is zeroed for the computation, compared in
	 * constant time. */
	memcpy(icv, ah + TW_AH_HDR_LEN, sa->icv_len);
	memset(ah + TW_AH_HDR_LEN, 0, sa->icv_len);
	ah_icv(sa, pkt, len, seq, mac);
	ok = tw_ct_eq(mac, icv, sa->icv_len);
	memcpy(ah + TW_AH_HDR_LEN, icv, sa->icv_len);
	tw_wipe(mac, sizeof(mac));
	if (!ok)
		return TW_ERR_AUTH;
	/* only now may the window move */
	err = tw_replay_update(&sa->replay, seq);
	if (err != TW_OK)
		return err;
	/* Restore the IPv4 packet without AH. */
	pkt[9] = ah[0];
	memmove(ah, ah + ahl, len - TW_IPV4_HDR_LEN - ahl);
	tw_store_be16(pkt + 2, (uint16_t)(len - ahl));
	pkt[10] = pkt[11] = 0;
	tw_store_be16(pkt + 10, ipv4_checksum(pkt));
	*out_len = len - ahl;
	*seq_out = seq;
	return TW_OK;
}

int tw_ah_decap(struct tw_ah_sa *sa, uint8_t *pkt, size_t len, size_t *out_len,
		uint64_t *seq)
{
	int err;

	if (sa == NULL || pkt == NULL || out_len == NULL || seq == NULL)
		return TW_ERR_INVAL;
	err = ah_decap(sa, pkt, len, out_len, seq);
	if (err != TW_OK)
		tw_ipsec_count(&sa->stats, err);
	else
		sa->stats.in_ok++;
	return err;
}
