/*
 * twag — Keccak-f[1600] permutation, portable 64-bit.
 *
 * Spec: NIST FIPS 202 (August 2015) §3.2 (step mappings) and §3.3
 * (Keccak-p[1600, 24] = Keccak-f[1600]); TS 35.231 Annex C restates the
 * same permutation for TUAK. One round is Rnd = ι ∘ χ ∘ π ∘ ρ ∘ θ.
 *
 * Lane A[x, y] is st[x + 5*y]; bit z of the lane is bit z of the word
 * (FIPS 202 §3.1.2: S[w(5y + x) + z] = A[x, y, z]).
 *
 * The code has no secret-dependent branches or memory indices: every lane
 * index and rotation below is a compile-time pattern, so it is constant-time
 * by construction (only XOR, AND, NOT and fixed rotations).
 */
#include "twag/keccak.h"

#include "twag/bytes.h"

/* FIPS 202 §3.2.5, Algorithm 6: RC[ir] for ir = 0..23 (the bits rc(j + 7ir)
 * placed at positions 2^j - 1 of the lane), precomputed. */
static const uint64_t keccak_rc[24] = {
	0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull,
	0x8000000080008000ull, 0x000000000000808bull, 0x0000000080000001ull,
	0x8000000080008081ull, 0x8000000000008009ull, 0x000000000000008aull,
	0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
	0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull,
	0x8000000000008003ull, 0x8000000000008002ull, 0x8000000000000080ull,
	0x000000000000800aull, 0x800000008000000aull, 0x8000000080008081ull,
	0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull,
};

static inline uint64_t rotl64(uint64_t v, unsigned n)
{
	/* n is in 0..63; the "& 63" keeps n == 0 well defined. */
	return (v << n) | (v >> ((64 - n) & 63));
}

void tw_keccak_f1600(uint64_t st[static 25])
{
	uint64_t b[25];
	uint64_t c0, c1, c2, c3, c4, d0, d1, d2, d3, d4;

	/* Fully unrolled within a round: the loop form with "% 5" indices
	 * ran about 10x slower with gcc -O2. */
	for (unsigned ir = 0; ir < 24; ir++) {
		/* θ (§3.2.1): C[x] = A[x,0] ^ ... ^ A[x,4];
		 * D[x] = C[x-1] ^ ROT(C[x+1], 1); A[x,y] ^= D[x] (folded below). */
		c0 = st[0] ^ st[5] ^ st[10] ^ st[15] ^ st[20];
		c1 = st[1] ^ st[6] ^ st[11] ^ st[16] ^ st[21];
		c2 = st[2] ^ st[7] ^ st[12] ^ st[17] ^ st[22];
		c3 = st[3] ^ st[8] ^ st[13] ^ st[18] ^ st[23];
		c4 = st[4] ^ st[9] ^ st[14] ^ st[19] ^ st[24];
		d0 = c4 ^ rotl64(c1, 1);
		d1 = c0 ^ rotl64(c2, 1);
		d2 = c1 ^ rotl64(c3, 1);
		d3 = c2 ^ rotl64(c4, 1);
		d4 = c3 ^ rotl64(c0, 1);

		/* ρ and π (§3.2.2, §3.2.3): B[y, 2x + 3y] = ROT(A[x,y] ^ D[x],
		 * r[x,y]) with the offsets r of FIPS 202 Table 2; B[X, Y] is
		 * b[X + 5Y], so A[x,y] = st[x + 5y] lands in b[y + 5((2x+3y) mod 5)]. */
		b[ 0] = rotl64(st[ 0] ^ d0,  0);
		b[ 1] = rotl64(st[ 6] ^ d1, 44);
		b[ 2] = rotl64(st[12] ^ d2, 43);
		b[ 3] = rotl64(st[18] ^ d3, 21);
		b[ 4] = rotl64(st[24] ^ d4, 14);
		b[ 5] = rotl64(st[ 3] ^ d3, 28);
		b[ 6] = rotl64(st[ 9] ^ d4, 20);
		b[ 7] = rotl64(st[10] ^ d0,  3);
		b[ 8] = rotl64(st[16] ^ d1, 45);
		b[ 9] = rotl64(st[22] ^ d2, 61);
		b[10] = rotl64(st[ 1] ^ d1,  1);
		b[11] = rotl64(st[ 7] ^ d2,  6);
		b[12] = rotl64(st[13] ^ d3, 25);
		b[13] = rotl64(st[19] ^ d4,  8);
		b[14] = rotl64(st[20] ^ d0, 18);
		b[15] = rotl64(st[ 4] ^ d4, 27);
		b[16] = rotl64(st[ 5] ^ d0, 36);
		b[17] = rotl64(st[11] ^ d1, 10);
		b[18] = rotl64(st[17] ^ d2, 15);
		b[19] = rotl64(st[23] ^ d3, 56);
		b[20] = rotl64(st[ 2] ^ d2, 62);
		b[21] = rotl64(st[ 8] ^ d3, 55);
		b[22] = rotl64(st[14] ^ d4, 39);
		b[23] = rotl64(st[15] ^ d0, 41);
		b[24] = rotl64(st[21] ^ d1,  2);

		/* χ (§3.2.4): A[x,y] = B[x,y] ^ (~B[x+1,y] & B[x+2,y]). */
		for (unsigned y = 0; y < 25; y += 5) {
			st[y + 0] = b[y + 0] ^ (~b[y + 1] & b[y + 2]);
			st[y + 1] = b[y + 1] ^ (~b[y + 2] & b[y + 3]);
			st[y + 2] = b[y + 2] ^ (~b[y + 3] & b[y + 4]);
			st[y + 3] = b[y + 3] ^ (~b[y + 4] & b[y + 0]);
			st[y + 4] = b[y + 4] ^ (~b[y + 0] & b[y + 1]);
		}

		/* ι (§3.2.5): A[0,0] ^= RC[ir]. */
		st[0] ^= keccak_rc[ir];
	}

	/* The temporaries hold key-derived lanes when TUAK calls us (the
	 * scalars c/d live in registers; b is the only stack copy). */
	tw_wipe(b, sizeof(b));
}
