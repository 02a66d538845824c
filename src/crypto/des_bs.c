/*
 * twag — bitsliced Triple DES (FIPS 46-3, October 1999; NIST SP 800-67
 * Rev. 2, November 2017): the kernel of des_bs_core.h at three widths,
 * chosen per pass from the blocks at hand and tw_cpu_has() — 64 lanes
 * (uint64_t, any CPU), 256 (AVX2), 512 (AVX-512 F; the compiler merges
 * the S-box gates into VPTERNLOGQ) — and what runs on it: CBC decryption
 * of one long chain (every block independent, SP 800-38A §6.2) and CBC
 * encryption of many chains side by side (one block of each per pass).
 *
 * A pass costs the same for one block as for all its lanes, so a pass is
 * as narrow as the blocks at hand allow. Constant time: the kernel has no
 * table and no branch on data; the drivers index and branch only on
 * lengths and counts.
 */
#include <string.h>

#include "twag/bytes.h"
#include "twag/cpu.h"
#include "twag/des.h"

#include "des_bs.h"
#include "des_tab.h"

/* ---- the 64-lane kernel (portable) ---- */

#define BS_W uint64_t
#define BS_Q 1
#define BS_NAME(x) bs64_##x
#define BS_INLINE static inline __attribute__((always_inline))
#define BS_ATTR
#define BS_KEY(b) ((uint64_t)0 - (b))
#include "des_bs_core.h"
#undef BS_W
#undef BS_Q
#undef BS_NAME
#undef BS_INLINE
#undef BS_ATTR
#undef BS_KEY

static void pass64(const struct tw_des3_ctx *ctx, uint64_t *m, int dec)
{
	uint64_t w[64], t[64];

	bs64_pass(ctx, m, dec, w, t);
	tw_wipe(w, sizeof(w));
	tw_wipe(t, sizeof(t));
}

#if defined(__x86_64__)
/* ---- 256 lanes (AVX2) ---- */

typedef uint64_t tw_u64x4 __attribute__((vector_size(32)));
#define BS_W tw_u64x4
#define BS_Q 4
#define BS_NAME(x) bs256_##x
#define BS_INLINE static inline __attribute__((always_inline, target("avx2")))
#define BS_ATTR __attribute__((target("avx2")))
#define BS_KEY(b) ((tw_u64x4){ 0, 0, 0, 0 } - (uint64_t)(b))
#include "des_bs_core.h"
#undef BS_W
#undef BS_Q
#undef BS_NAME
#undef BS_INLINE
#undef BS_ATTR
#undef BS_KEY

__attribute__((target("avx2"))) static void pass256(const struct tw_des3_ctx *ctx,
						      uint64_t *m, int dec)
{
	tw_u64x4 w[64], t[64];

	bs256_pass(ctx, m, dec, w, t);
	tw_wipe(w, sizeof(w));
	tw_wipe(t, sizeof(t));
}

/* ---- 512 lanes (AVX-512 F) ---- */

typedef uint64_t tw_u64x8 __attribute__((vector_size(64)));
#define BS_W tw_u64x8
#define BS_Q 8
#define BS_NAME(x) bs512_##x
#define BS_INLINE static inline __attribute__((always_inline, target("avx2,avx512f")))
#define BS_ATTR __attribute__((target("avx2,avx512f")))
#define BS_KEY(b) ((tw_u64x8){ 0, 0, 0, 0, 0, 0, 0, 0 } - (uint64_t)(b))
#include "des_bs_core.h"
#undef BS_W
#undef BS_Q
#undef BS_NAME
#undef BS_INLINE
#undef BS_ATTR
#undef BS_KEY

__attribute__((target("avx2,avx512f"))) static void pass512(const struct tw_des3_ctx *ctx,
							      uint64_t *m, int dec)
{
	tw_u64x8 w[64], t[64];

	bs512_pass(ctx, m, dec, w, t);
	tw_wipe(w, sizeof(w));
	tw_wipe(t, sizeof(t));
}
#endif

/* ---- widths and lanes ---- */

enum { MAX_Q = 8, MAX_LANES = 64 * MAX_Q };

/* 64-bit lanes per word of the narrowest kernel that takes n blocks in
 * one pass (or the widest the CPU has). */
static unsigned width_for(size_t n)
{
#if defined(__x86_64__)
	if (n > 256 && tw_cpu_has(TW_CPU_AVX512 | TW_CPU_AVX2))
		return 8;
	if (n > 64 && tw_cpu_has(TW_CPU_AVX2))
		return 4;
#endif
	(void)n;
	return 1;
}

static void run_pass(const struct tw_des3_ctx *ctx, uint64_t *m, unsigned q, int dec)
{
#if defined(__x86_64__)
	if (q == 8) {
		pass512(ctx, m, dec);
		return;
	}
	if (q == 4) {
		pass256(ctx, m, dec);
		return;
	}
#endif
	(void)q;
	pass64(ctx, m, dec);
}

/* Where block k of a pass sits in m for q lanes per word. */
static inline size_t slot(size_t k, unsigned q)
{
	return (k % 64) * q + k / 64;
}

void tw_des3_bs_keys(struct tw_des3_ctx *ctx)
{
	/* ks[i][j] is S-box j's 6-bit key group, its first bit the MSB */
	for (int d = 0; d < 3; d++)
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 48; j++)
				ctx->bsk[d][i][j] = (uint8_t)((ctx->ks[d][i][j / 6] >> (5 - j % 6)) & 1);
}

/* SP 800-38A §6.2: P_j = CIPH^-1_K(C_j) ^ C_{j-1}. A pass decrypts up to
 * its lanes' worth of blocks; the XOR runs from the last block down, so in
 * place each C_{j-1} is read before P_{j-1} overwrites it. */
void tw_des3_bs_cbc_decrypt(const struct tw_des3_ctx *ctx, uint8_t iv[8],
			    uint8_t *out, const uint8_t *in, size_t nblocks)
{
	_Alignas(64) uint64_t m[MAX_LANES];
	uint64_t prev = tw_load_be64(iv);

	while (nblocks > 0) {
		unsigned q = width_for(nblocks);
		size_t k = nblocks < 64u * q ? nblocks : 64u * q;
		uint64_t last = tw_load_be64(in + 8 * (k - 1));

		if (k < 64u * q)
			memset(m, 0, sizeof(uint64_t) * 64 * q);
		for (size_t i = 0; i < k; i++)
			m[slot(i, q)] = tw_load_be64(in + 8 * i);
		run_pass(ctx, m, q, 1);
		for (size_t i = k; i-- > 0;) {
			uint64_t c = i > 0 ? tw_load_be64(in + 8 * (i - 1)) : prev;

			tw_store_be64(out + 8 * i, m[slot(i, q)] ^ c);
		}
		prev = last;
		in += 8 * k;
		out += 8 * k;
		nblocks -= k;
	}
	tw_store_be64(iv, prev);
	tw_wipe(m, sizeof(m));
}

/*
 * SP 800-38A §6.2 on n chains at once, C_j = CIPH_K(P_j ^ C_{j-1}): each
 * pass takes the next block of every chain in flight (a lane per chain);
 * a chain that ends gives its lane to the next one waiting, and the last
 * lane in flight fills the gap once none waits.
 */
int tw_des3_cbc_encrypt_multi(const struct tw_des3_ctx *ctx,
			      struct tw_des3_cbc_chain *chains, size_t n)
{
	_Alignas(64) uint64_t m[MAX_LANES];
	size_t job[MAX_LANES], off[MAX_LANES];
	/* lanes: as many as the widest kernel the CPU has */
	size_t active = 0, next = 0, lanes = 64u * width_for(SIZE_MAX);

	if (ctx == NULL || (chains == NULL && n > 0))
		return TW_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		if (chains[i].iv == NULL || (chains[i].len > 0 && (chains[i].in == NULL ||
								   chains[i].out == NULL)))
			return TW_ERR_INVAL;
		if (chains[i].len % 8 != 0)
			return TW_ERR_LENGTH;
	}
	memset(m, 0, sizeof(m));
	for (;;) {
		/* fill the free lanes with chains that have blocks */
		while (active < lanes && next < n) {
			if (chains[next].len > 0) {
				job[active] = next;
				off[active] = 0;
				active++;
			}
			next++;
		}
		if (active == 0)
			break;
		unsigned q = width_for(active);

		for (size_t s = 0; s < active; s++) {
			const struct tw_des3_cbc_chain *c = &chains[job[s]];

			m[slot(s, q)] = tw_load_be64(c->in + off[s]) ^ tw_load_be64(c->iv);
		}
		run_pass(ctx, m, q, 0);
		for (size_t s = 0; s < active; s++) {
			struct tw_des3_cbc_chain *c = &chains[job[s]];

			tw_store_be64(c->out + off[s], m[slot(s, q)]);
			tw_store_be64(c->iv, m[slot(s, q)]);
			off[s] += 8;
		}
		/* retire finished chains: the last lane moves into the gap */
		for (size_t s = active; s-- > 0;) {
			if (off[s] < chains[job[s]].len)
				continue;
			active--;
			job[s] = job[active];
			off[s] = off[active];
		}
	}
	tw_wipe(m, sizeof(m));
	return TW_OK;
}
