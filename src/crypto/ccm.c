/*
 * twag — AES-CCM (NIST SP 800-38C, 2004 with 2007 errata; RFC 3610, 2003):
 * argument checks, block formatting (Appendix A), the portable CBC-MAC +
 * CTR, the choice of kernel, and the multi-frame scheduler that feeds the
 * AES-NI (4 lanes) and VAES (16 lanes) kernels.
 *
 * Formatting (SP 800-38C A.2): q = 15 - n octets of length field;
 *   B_0   = Flags || N || Q,  Flags = 64*Adata + 8*((t-2)/2) + (q-1);
 *   Ctr_i = Flags' || N || [i]_8q,  Flags' = q-1;
 *   T = CBC-MAC_K(B_0 || encode(a) || A || pad || P || pad), the tag is
 *   MSB_t(T) ^ MSB_t(S_0) with S_i = CIPH_K(Ctr_i), C = P ^ MSB_len(S_1..).
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/ccm.h"
#include "twag/cpu.h"

#define NI_FEATURES (TW_CPU_AESNI | TW_CPU_SSE41)
#define VAES_FEATURES (NI_FEATURES | TW_CPU_AVX2 | TW_CPU_VAES | TW_CPU_AVX512)


/* SP 800-38C A.2.2: a < 2^16 - 2^8 in 2 octets; < 2^32 as 0xfffe || 4
 * octets; else 0xffff || 8 octets. Returns the encoding's length. */
static size_t encode_alen(uint8_t e[10], size_t a)
{
	if (a < 0xff00u) {
		tw_store_be16(e, (uint16_t)a);
		return 2;
	}
	if ((uint64_t)a <= 0xffffffffu) {
		e[0] = 0xff;
		e[1] = 0xfe;
		tw_store_be32(e + 2, (uint32_t)a);
		return 6;
	}
	e[0] = 0xff;
	e[1] = 0xff;
	tw_store_be64(e + 2, (uint64_t)a);
	return 10;
}

size_t tw_ccm_aad_blocks(size_t aad_len)
{
	uint8_t e[10];

	if (aad_len == 0)
		return 0;
	return (encode_alen(e, aad_len) + aad_len + 15) / 16;
}

void tw_ccm_aad_block(uint8_t out[16], const uint8_t *aad, size_t aad_len,
		      size_t k)
{
	uint8_t e[10];
	size_t el = encode_alen(e, aad_len);
	size_t pos = 16 * k, o = 0; /* pos: offset in encode(a) || aad */

	memset(out, 0, 16);
	for (; o < 16 && pos < el; o++, pos++)
		out[o] = e[pos];
	pos -= el;
	if (o < 16 && pos < aad_len) {
		size_t n = aad_len - pos < 16 - o ? aad_len - pos : 16 - o;

		memcpy(out + o, aad + pos, n);
	}
}

/*
 * Copies n <= 16 octets with at most two overlapping loads and stores per
 * width: the batch path's partial blocks and tags, which would otherwise
 * be variable-length libc calls once per frame.
 */
static inline void copy16(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n >= 8) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;

		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n > 0) {
		uint8_t a = s[0], b = s[n / 2], c = s[n - 1];

		d[0] = a;
		d[n / 2] = b;
		d[n - 1] = c;
	}
}

/* The parameter checks of SP 800-38C §5.4 and A.1. */
static int check(const struct tw_aes_ctx *aes, const uint8_t *nonce, size_t nonce_len,
		 const uint8_t *aad, size_t aad_len, const uint8_t *in,
		 const uint8_t *out, size_t len, const uint8_t *tag, size_t tag_len)
{
	if (aes == NULL || nonce == NULL || tag == NULL ||
	    (aad_len > 0 && aad == NULL) || (len > 0 && (in == NULL || out == NULL)))
		return TW_ERR_INVAL;
	if (nonce_len < TW_CCM_NONCE_MIN || nonce_len > TW_CCM_NONCE_MAX ||
	    tag_len < TW_CCM_TAG_MIN || tag_len > TW_CCM_TAG_MAX || tag_len % 2 != 0)
		return TW_ERR_LENGTH;
	if (aes->nr != 10 && aes->nr != 14)
		return TW_ERR_INVAL;
	size_t q = 15 - nonce_len;
	/* A.1: Q < 2^(8q). */
	if (q < 8 && ((uint64_t)len >> (8 * q)) != 0)
		return TW_ERR_LENGTH;
	return TW_OK;
}

/* tw_store_be64 as one 8-octet store: GCC merges the byte stores of the
 * portable form through a stack temporary read back 16 octets wide. */
static inline void store_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
#else
	tw_store_be64(p, v);
#endif
}

/*
 * A.2.1 B_0 and A.3 Ctr_0 of checked parameters, built as two big-endian
 * 64-bit halves in registers: octets 1..7 are N_0..N_6, octets 8..15 the
 * rest of N followed by the q-octet field (Q in B_0, zero in Ctr_0). Two
 * 8-octet stores per block and no narrower stores read back wider, which
 * in the batch path would stall store forwarding once per frame.
 */
static void blocks(uint8_t b0[16], uint8_t a0[16], const uint8_t *nonce,
		   size_t nonce_len, size_t aad_len, size_t len, size_t tag_len)
{
	size_t q = 15 - nonce_len;
	uint64_t hi = 0, lo = 0;

	if (nonce_len >= 8) {
		hi = tw_load_be64(nonce) >> 8;
		/* The last 8 - q octets of N, above the q-octet field. */
		lo = tw_load_be64(nonce + nonce_len - 8) << (8 * q);
	} else {
		for (size_t i = 0; i < nonce_len; i++)
			hi = hi << 8 | nonce[i];
	}
	uint64_t flags = (uint64_t)((aad_len > 0 ? 0x40 : 0) |
				    ((tag_len - 2) / 2) << 3 | (q - 1));

	store_be64(a0, hi | (uint64_t)(q - 1) << 56);
	store_be64(a0 + 8, lo);
	store_be64(b0, hi | flags << 56);
	/* Q < 2^(8q) (A.1, checked): it fits the low q octets. */
	store_be64(b0 + 8, lo | (uint64_t)len);
}

/* Checks the parameters and builds B_0 and Ctr_0. */
static int format(uint8_t b0[16], uint8_t a0[16], const struct tw_aes_ctx *aes,
		  const uint8_t *nonce, size_t nonce_len, const uint8_t *aad,
		  size_t aad_len, const uint8_t *in, const uint8_t *out, size_t len,
		  const uint8_t *tag, size_t tag_len)
{
	int err = check(aes, nonce, nonce_len, aad, aad_len, in, out, len, tag, tag_len);

	if (err == TW_OK)
		blocks(b0, a0, nonce, nonce_len, aad_len, len, tag_len);
	return err;
}

/* Ctr_j = Ctr_0 + j: the counter field never overflows since Q < 2^(8q). */
static void ctr_at(uint8_t out[16], const uint8_t a0[16], uint64_t j)
{
	memcpy(out, a0, 8);
	store_be64(out + 8, tw_load_be64(a0 + 8) + j);
}

/* Portable: T over B_0 || encode(a)||A || P (p: the plaintext). */
static void cbc_mac(const struct tw_aes_ctx *aes, uint8_t y[16], const uint8_t b0[16],
		    const uint8_t *aad, size_t aad_len, const uint8_t *p, size_t len)
{
	uint8_t x[16];
	size_t h = tw_ccm_aad_blocks(aad_len);

	tw_aes_encrypt(aes, y, b0);
	for (size_t k = 0; k < h; k++) {
		tw_ccm_aad_block(x, aad, aad_len, k);
		tw_xor(y, y, x, 16);
		tw_aes_encrypt(aes, y, y);
	}
	for (; len >= 16; len -= 16, p += 16) {
		tw_xor(y, y, p, 16);
		tw_aes_encrypt(aes, y, y);
	}
	if (len > 0) {
		tw_xor(y, y, p, len);
		tw_aes_encrypt(aes, y, y);
	}
	tw_wipe(x, sizeof(x));
}

static bool use_ni(const struct tw_aes_ctx *aes)
{
#if defined(__x86_64__)
	return aes->impl == TW_AES_IMPL_AESNI && tw_cpu_has(NI_FEATURES);
#else
	(void)aes;
	return false;
#endif
}

/* T and S_0 for one frame, encrypting or decrypting in into out. */
static void one(const struct tw_aes_ctx *aes, const uint8_t b0[16], const uint8_t a0[16],
		const uint8_t *aad, size_t aad_len, const uint8_t *in, uint8_t *out,
		size_t len, int dec, uint8_t t[16], uint8_t s0[16])
{
#if defined(__x86_64__)
	if (use_ni(aes)) {
		tw_ccm_ni_one(aes, b0, a0, aad, aad_len, in, out, len, dec, t, s0);
		return;
	}
#endif
	uint8_t a1[16];

	ctr_at(a1, a0, 1);
	if (!dec) {
		/* §6.1 steps 3-4 over P before CTR may overwrite it in place. */
		cbc_mac(aes, t, b0, aad, aad_len, in, len);
		if (len > 0)
			tw_aes_ctr(aes, a1, out, in, len);
	} else {
		/* §6.2 steps 5-6: P from C first, then T over P. */
		if (len > 0)
			tw_aes_ctr(aes, a1, out, in, len);
		cbc_mac(aes, t, b0, aad, aad_len, out, len);
	}
	tw_aes_encrypt(aes, s0, a0);
}

int tw_ccm_encrypt(const struct tw_aes_ctx *aes, const uint8_t *nonce,
		   size_t nonce_len, const uint8_t *aad, size_t aad_len,
		   const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag,
		   size_t tag_len)
{
	uint8_t b0[16], a0[16], t[16], s0[16];
	int err = format(b0, a0, aes, nonce, nonce_len, aad, aad_len, in, out,
			 len, tag, tag_len);

	if (err != TW_OK)
		goto out;
	one(aes, b0, a0, aad, aad_len, in, out, len, 0, t, s0);
	/* §6.1 step 9: Tag = T ^ MSB_Tlen(S_0). */
	tw_xor(tag, t, s0, tag_len);
out:
	tw_wipe(t, sizeof(t));
	tw_wipe(s0, sizeof(s0));
	return err;
}

int tw_ccm_decrypt(const struct tw_aes_ctx *aes, const uint8_t *nonce,
		   size_t nonce_len, const uint8_t *aad, size_t aad_len,
		   const uint8_t *in, uint8_t *out, size_t len, const uint8_t *tag,
		   size_t tag_len)
{
	uint8_t b0[16], a0[16], t[16], s0[16];
	int err = format(b0, a0, aes, nonce, nonce_len, aad, aad_len, in, out,
			 len, tag, tag_len);

	if (err != TW_OK)
		goto out;
	one(aes, b0, a0, aad, aad_len, in, out, len, 1, t, s0);
	tw_xor(t, t, s0, tag_len);
	/* §6.2 step 10: constant-time compare; no plaintext on failure. */
	if (!tw_ct_eq(t, tag, tag_len)) {
		if (len > 0)
			tw_wipe(out, len);
		err = TW_ERR_AUTH;
	}
out:
	tw_wipe(t, sizeof(t));
	tw_wipe(s0, sizeof(s0));
	return err;
}

/* ---- multi-frame scheduler ---- */

/*
 * Step s of a frame with h encoded-aad blocks and m payload blocks runs
 * the CBC-MAC over block s of B_0 || aad blocks || P_1..P_m (1+h+m steps)
 * and, beside it, one CTR block:
 *   encrypt: Ctr_{s-h} (mod 2^64 in the counter's low 64 bits): junk
 *            before step h, S_0 = CIPH_K(Ctr_0) at step h, and Ctr_j with
 *            P_j at step h+j, so P_j is read for the MAC in the same step
 *            that C_j overwrites it in place;
 *   decrypt: Ctr_{s+1} at step s < m and Ctr_0 at step m, so P_j is in out
 *            (step j-1) before the MAC needs it (step h+j); junk after.
 * A lane's steps fall into segments over which its three streams (MAC
 * input, CTR input, CTR output) each advance by 16 octets a step: up to
 * HB head blocks (B_0 and aad) formatted into a scratch array, the run of
 * full payload blocks read and written in place, single steps for the
 * partial block and S_0. Each kernel call runs as many steps as the
 * shortest current segment of the busy lanes, so frames of one size go
 * through the kernel in three or four calls, and only lanes whose segment
 * ended are prepared again between calls.
 */
enum { HB = 4 };
static const uint8_t zeros[HB * 16];

struct job {
	struct tw_ccm_op *op;
	size_t s, h, m, full, rem;
	size_t left;  /* steps left in the current segment */
	size_t s0_at; /* S_0 is cb block s0_at after this segment (or SIZE_MAX) */
	uint8_t b0[16], a0[16], s0[16];
	uint8_t hb[HB * 16]; /* MAC inputs of a head segment; padded P_m */
	uint8_t cb[HB * 16]; /* CTR outputs kept out of the frame */
	uint8_t cin[16];
	bool cpart; /* this segment's CTR output is the partial last block */
	const struct tw_aes_ctx *rk_of; /* whose round keys the lane holds */
};

typedef void (*steps_fn)(struct tw_ccm_lanes *l, size_t k);

static void prepare(struct tw_ccm_lanes *L, unsigned l, struct job *j, int dec)
{
	const struct tw_ccm_op *op = j->op;
	const uint8_t *p = dec ? op->out : op->in; /* where the MAC reads P */
	size_t s = j->s, run, crun;

	if (s == 0 && j->h < HB && op->aad_len < 0xff00u) {
		/* A.2.2 in one pass: B_0 || [a]_16 || A || zero pad (the
		 * whole head, at most HB blocks, e.g. 3 for a CCMP AAD). */
		run = j->h + 1;
		copy16(j->hb, j->b0, 16); /* as the two halves blocks() stored */
		memset(j->hb + 16, 0, sizeof(j->hb) - 16);
		tw_store_be16(j->hb + 16, (uint16_t)op->aad_len);
		size_t a = 0;
		for (; a + 16 <= op->aad_len; a += 16)
			memcpy(j->hb + 18 + a, op->aad + a, 16);
		copy16(j->hb + 18 + a, op->aad + a, op->aad_len - a);
		L->mac_src[l] = j->hb;
	} else if (s <= j->h) {
		run = j->h + 1 - s < HB ? j->h + 1 - s : HB;
		for (size_t t = 0; t < run; t++) {
			if (s + t == 0)
				memcpy(j->hb, j->b0, 16);
			else
				tw_ccm_aad_block(j->hb + 16 * t, op->aad, op->aad_len, s + t - 1);
		}
		L->mac_src[l] = j->hb;
	} else if (s - j->h <= j->full) {
		run = j->h + j->full + 1 - s;
		L->mac_src[l] = p + 16 * (s - j->h - 1);
	} else {
		/* A.2.3: P_m padded with zeros. */
		run = 1;
		memset(j->hb, 0, 16);
		copy16(j->hb, p + 16 * j->full, j->rem);
		L->mac_src[l] = j->hb;
	}
	j->cpart = false;
	j->s0_at = SIZE_MAX;
	if (!dec) {
		ctr_at(L->ctr[l], j->a0, (uint64_t)s - j->h);
		if (s <= j->h) {
			crun = run;
			L->ctr_in[l] = zeros;
			L->ctr_out[l] = j->cb;
			if (s + run > j->h)
				j->s0_at = j->h - s;
		} else if (s - j->h <= j->full) {
			crun = run;
			L->ctr_in[l] = op->in + 16 * (s - j->h - 1);
			L->ctr_out[l] = op->out + 16 * (s - j->h - 1);
		} else {
			crun = 1;
			j->cpart = true;
		}
	} else if (s < j->full) {
		ctr_at(L->ctr[l], j->a0, s + 1);
		crun = j->full - s;
		L->ctr_in[l] = op->in + 16 * s;
		L->ctr_out[l] = op->out + 16 * s;
	} else if (s < j->m) {
		ctr_at(L->ctr[l], j->a0, s + 1);
		crun = 1;
		j->cpart = true;
	} else if (s == j->m) {
		memcpy(L->ctr[l], j->a0, 16);
		crun = 1;
		L->ctr_in[l] = zeros;
		L->ctr_out[l] = j->s0;
	} else {
		memcpy(L->ctr[l], j->a0, 16);
		crun = HB;
		L->ctr_in[l] = zeros;
		L->ctr_out[l] = j->cb;
	}
	if (j->cpart) {
		memset(j->cin, 0, 16);
		copy16(j->cin, op->in + 16 * j->full, j->rem);
		L->ctr_in[l] = j->cin;
		L->ctr_out[l] = j->cb;
	}
	j->left = run < crun ? run : crun;
}

static void finish(struct tw_ccm_lanes *L, unsigned l, struct job *j, int dec)
{
	struct tw_ccm_op *op = j->op;

	/* §6.1 step 9 / §6.2 step 9: MSB_Tlen(T) ^ MSB_Tlen(S_0). */
	for (int i = 0; i < 16; i++)
		L->mac[l][i] ^= j->s0[i];
	if (!dec) {
		copy16(op->tag, L->mac[l], op->tag_len);
		op->status = TW_OK;
	} else if (tw_ct_eq(L->mac[l], op->tag, op->tag_len)) {
		op->status = TW_OK;
	} else {
		if (op->len > 0)
			tw_wipe(op->out, op->len);
		op->status = TW_ERR_AUTH;
	}
}

static bool load_job(struct tw_ccm_lanes *L, unsigned l, struct job *j,
		     struct tw_ccm_op *ops, size_t n, size_t *next, unsigned nr, int dec)
{
	for (; *next < n; (*next)++) {
		struct tw_ccm_op *op = &ops[*next];

		/* status 1: queued for this pass (set by the caller). */
		if (op->status != 1 || op->aes->nr != nr)
			continue;
		(*next)++;
		j->op = op;
		j->s = 0;
		j->h = tw_ccm_aad_blocks(op->aad_len);
		j->full = op->len / 16;
		j->rem = op->len % 16;
		j->m = j->full + (j->rem != 0);
		/* check() passed for this op when it was queued. */
		blocks(j->b0, j->a0, op->nonce, op->nonce_len, op->aad_len, op->len,
		       op->tag_len);
		/* The lane keeps its round keys while frames share a key. */
		if (j->rk_of != op->aes) {
			for (unsigned r = 0; r <= nr; r++)
				memcpy(L->rk[r][l], op->aes->rk.ni[0][r], 16);
			j->rk_of = op->aes;
		}
		memset(L->mac[l], 0, 16);
		prepare(L, l, j, dec);
		return true;
	}
	j->op = NULL;
	return false;
}

static void run_lanes(struct tw_ccm_op *ops, size_t n, int dec, unsigned nl,
		      steps_fn steps, unsigned nr)
{
	struct tw_ccm_lanes L;
	struct job jobs[TW_CCM_MAX_LANES];
	size_t next = 0;
	unsigned busy = 0;

	L.nr = nr;
	for (unsigned l = 0; l < nl; l++) {
		jobs[l].rk_of = NULL;
		busy += load_job(&L, l, &jobs[l], ops, n, &next, nr, dec);
	}
	while (busy > 0) {
		size_t k = SIZE_MAX;
		unsigned first = nl;

		for (unsigned l = 0; l < nl; l++) {
			if (jobs[l].op == NULL)
				continue;
			k = jobs[l].left < k ? jobs[l].left : k;
			if (first == nl)
				first = l;
		}
		/* An idle lane repeats a busy one: same key, same blocks,
		 * same stores, so it writes nothing new and reads in bounds. */
		for (unsigned l = 0; l < nl; l++) {
			if (jobs[l].op != NULL)
				continue;
			jobs[l].rk_of = NULL;
			for (unsigned r = 0; r <= nr; r++)
				memcpy(L.rk[r][l], L.rk[r][first], 16);
			memcpy(L.mac[l], L.mac[first], 16);
			memcpy(L.ctr[l], L.ctr[first], 16);
			L.mac_src[l] = L.mac_src[first];
			L.ctr_in[l] = L.ctr_in[first];
			L.ctr_out[l] = L.ctr_out[first];
		}
		steps(&L, k);
		for (unsigned l = 0; l < nl; l++) {
			struct job *j = &jobs[l];

			if (j->op == NULL)
				continue;
			j->s += k;
			j->left -= k;
			if (j->left > 0)
				continue;
			if (j->cpart)
				copy16(j->op->out + 16 * j->full, j->cb, j->rem);
			if (j->s0_at != SIZE_MAX)
				memcpy(j->s0, j->cb + 16 * j->s0_at, 16);
			if (j->s == 1 + j->h + j->m) {
				finish(&L, l, j, dec);
				busy -= !load_job(&L, l, j, ops, n, &next, nr, dec);
			} else {
				prepare(&L, l, j, dec);
			}
		}
	}
	tw_wipe(&L, sizeof(L));
	tw_wipe(jobs, sizeof(jobs));
}

#if defined(__x86_64__)
/*
 * Encryption on VAES: queued frames of nr rounds with a short aad (the
 * head fits the group's four steps, as every CCMP AAD does) run sixteen
 * to a group (tw_ccm_vaes_enc16), sorted by length so that a group's
 * lanes end together; a group whose lanes would idle for more than a
 * quarter of its work, and the last few frames, are left queued for the
 * refilling scheduler. Returns the number of frames done.
 */
enum { GWIN = 64, GMIN = 5 };

static size_t groups(struct tw_ccm_op *ops, size_t n, unsigned nr)
{
	struct tw_ccm_op *g[GWIN];
	size_t done = 0;

	for (size_t base = 0; base < n;) {
		size_t cnt = 0;

		for (; base < n && cnt < GWIN; base++) {
			struct tw_ccm_op *op = &ops[base];

			if (op->status == 1 && op->aes->nr == nr &&
			    op->aad_len <= TW_CCM_GROUP_AAD_MAX && op->len <= TW_CCM_GROUP_LEN_MAX)
				g[cnt++] = op;
		}
		/* Insertion sort by length: a few dozen frames at most. */
		for (size_t i = 1; i < cnt; i++) {
			struct tw_ccm_op *x = g[i];
			size_t k = i;

			for (; k > 0 && g[k - 1]->len > x->len; k--)
				g[k] = g[k - 1];
			g[k] = x;
		}
		for (size_t i = 0; i + GMIN <= cnt; i += TW_CCM_MAX_LANES) {
			size_t k = cnt - i < TW_CCM_MAX_LANES ? cnt - i : TW_CCM_MAX_LANES;
			size_t sum = 0, max = g[i + k - 1]->len / 16 + 1; /* sorted */

			for (size_t l = 0; l < k; l++)
				sum += g[i + l]->len / 16 + 1;
			if (k * max - sum > sum / 4 + 2 * k)
				continue;
			tw_ccm_vaes_enc16(g + i, (unsigned)k, nr);
			done += k;
		}
	}
	return done;
}
#endif

static int batch(struct tw_ccm_op *ops, size_t n, int dec)
{
	size_t nq = 0, n14 = 0;
	int err = TW_OK;
	bool ni = false;

	if (n > 0 && ops == NULL)
		return TW_ERR_INVAL;
#if defined(__x86_64__)
	ni = tw_cpu_has(NI_FEATURES);
#endif
	for (size_t i = 0; i < n; i++) {
		struct tw_ccm_op *op = &ops[i];

		/* Checked once here; B_0 and Ctr_0 are built once, when the
		 * frame enters a lane. */
		op->status = check(op->aes, op->nonce, op->nonce_len, op->aad,
				   op->aad_len, op->in, op->out, op->len, op->tag,
				   op->tag_len);
		/* 1: queued for the lanes; 2: for the single-frame path. */
		if (op->status == TW_OK) {
			op->status = ni && op->aes->impl == TW_AES_IMPL_AESNI ? 1 : 2;
			nq += op->status == 1;
			n14 += op->status == 1 && op->aes->nr == 14;
		}
	}
	steps_fn steps = NULL;
	unsigned nl = 0;
#if defined(__x86_64__)
	if (!dec && nq > 4 && tw_cpu_has(VAES_FEATURES)) {
		if (nq > n14)
			nq -= groups(ops, n, 10);
		if (n14 > 0) {
			size_t done = groups(ops, n, 14);

			nq -= done;
			n14 -= done;
		}
	}
	if (nq > 4 && tw_cpu_has(VAES_FEATURES)) {
		steps = tw_ccm_vaes_steps16;
		nl = 16;
	} else if (nq > 1 && tw_cpu_has(NI_FEATURES)) {
		steps = tw_ccm_ni_steps4;
		nl = 4;
	}
#endif
	if (steps != NULL) {
		if (nq > n14)
			run_lanes(ops, n, dec, nl, steps, 10);
		if (n14 > 0)
			run_lanes(ops, n, dec, nl, steps, 14);
	}
	for (size_t i = 0; i < n; i++) {
		struct tw_ccm_op *op = &ops[i];

		if (op->status == 1 || op->status == 2)
			op->status = dec ? tw_ccm_decrypt(op->aes, op->nonce, op->nonce_len,
							  op->aad, op->aad_len, op->in,
							  op->out, op->len, op->tag,
							  op->tag_len)
					 : tw_ccm_encrypt(op->aes, op->nonce, op->nonce_len,
							  op->aad, op->aad_len, op->in,
							  op->out, op->len, op->tag,
							  op->tag_len);
		if (err == TW_OK)
			err = op->status;
	}
	return err;
}

int tw_ccm_encrypt_batch(struct tw_ccm_op *ops, size_t n)
{
	return batch(ops, n, 0);
}

int tw_ccm_decrypt_batch(struct tw_ccm_op *ops, size_t n)
{
	return batch(ops, n, 1);
}
