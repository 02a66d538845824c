/*
 * twag — the bitsliced Triple DES kernel (FIPS 46-3; SP 800-67 Rev. 2),
 * a template: des_bs.c includes it once per lane width with
 *   BS_W       the word type (uint64_t, or a vector of 4 or 8 of them)
 *   BS_Q       64-bit lanes per word (1, 4, 8)
 *   BS_NAME(x) the name of x in this instance
 *   BS_INLINE  "static inline" with the instance's target and always_inline
 *   BS_ATTR    the target attribute of the instance's entry point
 *   BS_KEY(b)  a word of all ones if the key mask octet b is 0xff, else 0
 *
 * Bitslicing (E. Biham, "A fast new DES implementation in software", FSE
 * 1997): word i holds bit i+1 of every block (block lane, bit position
 * lane), so the S-boxes become Boolean circuits over whole words and each
 * bit permutation (IP, E, P, FP) is a choice of which word to read. No
 * table, no data-dependent index, no branch: constant time by
 * construction. The key is the same in every lane, so a key bit is a word
 * of all zeros or all ones (struct tw_des3_ctx.bsk).
 *
 * The S-box circuits are Matthew Kwan's ("Reducing the gate count of
 * bitslice DES", IACR ePrint 2000/051; the gate lists he published in
 * March 1998, which may be used for any purpose with their origin
 * acknowledged), written here as plain C operators; tests/unit/test_des.c
 * checks the whole cipher against FIPS/SP 800-67 vectors and OpenSSL.
 * Inputs a1..a6 are the S-box's input bits b1..b6 (FIPS 46-3 order), each
 * output is XORed into the word of L that P sends it to.
 */

/* S1: 63 gates */
BS_INLINE void BS_NAME(s1)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a4;
	BS_W x2 = ~a1;
	BS_W x3 = a4 ^ a3;
	BS_W x4 = x3 ^ x2;
	BS_W x5 = a3 | x2;
	BS_W x6 = x5 & x1;
	BS_W x7 = a6 | x6;
	BS_W x8 = x4 ^ x7;
	BS_W x9 = x1 | x2;
	BS_W x10 = a6 & x9;
	BS_W x11 = x7 ^ x10;
	BS_W x12 = a2 | x11;
	BS_W x13 = x8 ^ x12;
	BS_W x14 = x9 ^ x13;
	BS_W x15 = a6 | x14;
	BS_W x16 = x1 ^ x15;
	BS_W x17 = ~x14;
	BS_W x18 = x17 & x3;
	BS_W x19 = a2 | x18;
	BS_W x20 = x16 ^ x19;
	BS_W x21 = a5 | x20;
	BS_W x22 = x13 ^ x21;
	*o4 ^= x22;
	BS_W x23 = a3 | x4;
	BS_W x24 = ~x23;
	BS_W x25 = a6 | x24;
	BS_W x26 = x6 ^ x25;
	BS_W x27 = x1 & x8;
	BS_W x28 = a2 | x27;
	BS_W x29 = x26 ^ x28;
	BS_W x30 = x1 | x8;
	BS_W x31 = x30 ^ x6;
	BS_W x32 = x5 & x14;
	BS_W x33 = x32 ^ x8;
	BS_W x34 = a2 & x33;
	BS_W x35 = x31 ^ x34;
	BS_W x36 = a5 | x35;
	BS_W x37 = x29 ^ x36;
	*o1 ^= x37;
	BS_W x38 = a3 & x10;
	BS_W x39 = x38 | x4;
	BS_W x40 = a3 & x33;
	BS_W x41 = x40 ^ x25;
	BS_W x42 = a2 | x41;
	BS_W x43 = x39 ^ x42;
	BS_W x44 = a3 | x26;
	BS_W x45 = x44 ^ x14;
	BS_W x46 = a1 | x8;
	BS_W x47 = x46 ^ x20;
	BS_W x48 = a2 | x47;
	BS_W x49 = x45 ^ x48;
	BS_W x50 = a5 & x49;
	BS_W x51 = x43 ^ x50;
	*o2 ^= x51;
	BS_W x52 = x8 ^ x40;
	BS_W x53 = a3 ^ x11;
	BS_W x54 = x53 & x5;
	BS_W x55 = a2 | x54;
	BS_W x56 = x52 ^ x55;
	BS_W x57 = a6 | x4;
	BS_W x58 = x57 ^ x38;
	BS_W x59 = x13 & x56;
	BS_W x60 = a2 & x59;
	BS_W x61 = x58 ^ x60;
	BS_W x62 = a5 & x61;
	BS_W x63 = x56 ^ x62;
	*o3 ^= x63;
}

/* S2: 56 gates */
BS_INLINE void BS_NAME(s2)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a5;
	BS_W x2 = ~a1;
	BS_W x3 = a5 ^ a6;
	BS_W x4 = x3 ^ x2;
	BS_W x5 = x4 ^ a2;
	BS_W x6 = a6 | x1;
	BS_W x7 = x6 | x2;
	BS_W x8 = a2 & x7;
	BS_W x9 = a6 ^ x8;
	BS_W x10 = a3 & x9;
	BS_W x11 = x5 ^ x10;
	BS_W x12 = a2 & x9;
	BS_W x13 = a5 ^ x6;
	BS_W x14 = a3 | x13;
	BS_W x15 = x12 ^ x14;
	BS_W x16 = a4 & x15;
	BS_W x17 = x11 ^ x16;
	*o2 ^= x17;
	BS_W x18 = a5 | a1;
	BS_W x19 = a6 | x18;
	BS_W x20 = x13 ^ x19;
	BS_W x21 = x20 ^ a2;
	BS_W x22 = a6 | x4;
	BS_W x23 = x22 & x17;
	BS_W x24 = a3 | x23;
	BS_W x25 = x21 ^ x24;
	BS_W x26 = a6 | x2;
	BS_W x27 = a5 & x2;
	BS_W x28 = a2 | x27;
	BS_W x29 = x26 ^ x28;
	BS_W x30 = x3 ^ x27;
	BS_W x31 = x2 ^ x19;
	BS_W x32 = a2 & x31;
	BS_W x33 = x30 ^ x32;
	BS_W x34 = a3 & x33;
	BS_W x35 = x29 ^ x34;
	BS_W x36 = a4 | x35;
	BS_W x37 = x25 ^ x36;
	*o3 ^= x37;
	BS_W x38 = x21 & x32;
	BS_W x39 = x38 ^ x5;
	BS_W x40 = a1 | x15;
	BS_W x41 = x40 ^ x13;
	BS_W x42 = a3 | x41;
	BS_W x43 = x39 ^ x42;
	BS_W x44 = x28 | x41;
	BS_W x45 = a4 & x44;
	BS_W x46 = x43 ^ x45;
	*o1 ^= x46;
	BS_W x47 = x19 & x21;
	BS_W x48 = x47 ^ x26;
	BS_W x49 = a2 & x33;
	BS_W x50 = x49 ^ x21;
	BS_W x51 = a3 & x50;
	BS_W x52 = x48 ^ x51;
	BS_W x53 = x18 & x28;
	BS_W x54 = x53 & x50;
	BS_W x55 = a4 | x54;
	BS_W x56 = x52 ^ x55;
	*o4 ^= x56;
}

/* S3: 57 gates */
BS_INLINE void BS_NAME(s3)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a5;
	BS_W x2 = ~a6;
	BS_W x3 = a5 & a3;
	BS_W x4 = x3 ^ a6;
	BS_W x5 = a4 & x1;
	BS_W x6 = x4 ^ x5;
	BS_W x7 = x6 ^ a2;
	BS_W x8 = a3 & x1;
	BS_W x9 = a5 ^ x2;
	BS_W x10 = a4 | x9;
	BS_W x11 = x8 ^ x10;
	BS_W x12 = x7 & x11;
	BS_W x13 = a5 ^ x11;
	BS_W x14 = x13 | x7;
	BS_W x15 = a4 & x14;
	BS_W x16 = x12 ^ x15;
	BS_W x17 = a2 & x16;
	BS_W x18 = x11 ^ x17;
	BS_W x19 = a1 & x18;
	BS_W x20 = x7 ^ x19;
	*o4 ^= x20;
	BS_W x21 = a3 ^ a4;
	BS_W x22 = x21 ^ x9;
	BS_W x23 = x2 | x4;
	BS_W x24 = x23 ^ x8;
	BS_W x25 = a2 | x24;
	BS_W x26 = x22 ^ x25;
	BS_W x27 = a6 ^ x23;
	BS_W x28 = x27 | a4;
	BS_W x29 = a3 ^ x15;
	BS_W x30 = x29 | x5;
	BS_W x31 = a2 | x30;
	BS_W x32 = x28 ^ x31;
	BS_W x33 = a1 | x32;
	BS_W x34 = x26 ^ x33;
	*o1 ^= x34;
	BS_W x35 = a3 ^ x9;
	BS_W x36 = x35 | x5;
	BS_W x37 = x4 | x29;
	BS_W x38 = x37 ^ a4;
	BS_W x39 = a2 | x38;
	BS_W x40 = x36 ^ x39;
	BS_W x41 = a6 & x11;
	BS_W x42 = x41 | x6;
	BS_W x43 = x34 ^ x38;
	BS_W x44 = x43 ^ x41;
	BS_W x45 = a2 & x44;
	BS_W x46 = x42 ^ x45;
	BS_W x47 = a1 | x46;
	BS_W x48 = x40 ^ x47;
	*o3 ^= x48;
	BS_W x49 = x2 | x38;
	BS_W x50 = x49 ^ x13;
	BS_W x51 = x27 ^ x28;
	BS_W x52 = a2 | x51;
	BS_W x53 = x50 ^ x52;
	BS_W x54 = x12 & x23;
	BS_W x55 = x54 & x52;
	BS_W x56 = a1 | x55;
	BS_W x57 = x53 ^ x56;
	*o2 ^= x57;
}

/* S4: 42 gates */
BS_INLINE void BS_NAME(s4)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a1;
	BS_W x2 = ~a3;
	BS_W x3 = a1 | a3;
	BS_W x4 = a5 & x3;
	BS_W x5 = x1 ^ x4;
	BS_W x6 = a2 | a3;
	BS_W x7 = x5 ^ x6;
	BS_W x8 = a1 & a5;
	BS_W x9 = x8 ^ x3;
	BS_W x10 = a2 & x9;
	BS_W x11 = a5 ^ x10;
	BS_W x12 = a4 & x11;
	BS_W x13 = x7 ^ x12;
	BS_W x14 = x2 ^ x4;
	BS_W x15 = a2 & x14;
	BS_W x16 = x9 ^ x15;
	BS_W x17 = x5 & x14;
	BS_W x18 = a5 ^ x2;
	BS_W x19 = a2 | x18;
	BS_W x20 = x17 ^ x19;
	BS_W x21 = a4 | x20;
	BS_W x22 = x16 ^ x21;
	BS_W x23 = a6 & x22;
	BS_W x24 = x13 ^ x23;
	*o2 ^= x24;
	BS_W x25 = ~x13;
	BS_W x26 = a6 | x22;
	BS_W x27 = x25 ^ x26;
	*o1 ^= x27;
	BS_W x28 = a2 & x11;
	BS_W x29 = x28 ^ x17;
	BS_W x30 = a3 ^ x10;
	BS_W x31 = x30 ^ x19;
	BS_W x32 = a4 & x31;
	BS_W x33 = x29 ^ x32;
	BS_W x34 = x25 ^ x33;
	BS_W x35 = a2 & x34;
	BS_W x36 = x24 ^ x35;
	BS_W x37 = a4 | x34;
	BS_W x38 = x36 ^ x37;
	BS_W x39 = a6 & x38;
	BS_W x40 = x33 ^ x39;
	*o4 ^= x40;
	BS_W x41 = x26 ^ x38;
	BS_W x42 = x41 ^ x40;
	*o3 ^= x42;
}

/* S5: 62 gates */
BS_INLINE void BS_NAME(s5)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a6;
	BS_W x2 = ~a3;
	BS_W x3 = x1 | x2;
	BS_W x4 = x3 ^ a4;
	BS_W x5 = a1 & x3;
	BS_W x6 = x4 ^ x5;
	BS_W x7 = a6 | a4;
	BS_W x8 = x7 ^ a3;
	BS_W x9 = a3 | x7;
	BS_W x10 = a1 | x9;
	BS_W x11 = x8 ^ x10;
	BS_W x12 = a5 & x11;
	BS_W x13 = x6 ^ x12;
	BS_W x14 = ~x4;
	BS_W x15 = x14 & a6;
	BS_W x16 = a1 | x15;
	BS_W x17 = x8 ^ x16;
	BS_W x18 = a5 | x17;
	BS_W x19 = x10 ^ x18;
	BS_W x20 = a2 | x19;
	BS_W x21 = x13 ^ x20;
	*o3 ^= x21;
	BS_W x22 = x2 | x15;
	BS_W x23 = x22 ^ a6;
	BS_W x24 = a4 ^ x22;
	BS_W x25 = a1 & x24;
	BS_W x26 = x23 ^ x25;
	BS_W x27 = a1 ^ x11;
	BS_W x28 = x27 & x22;
	BS_W x29 = a5 | x28;
	BS_W x30 = x26 ^ x29;
	BS_W x31 = a4 | x27;
	BS_W x32 = ~x31;
	BS_W x33 = a2 | x32;
	BS_W x34 = x30 ^ x33;
	*o2 ^= x34;
	BS_W x35 = x2 ^ x15;
	BS_W x36 = a1 & x35;
	BS_W x37 = x14 ^ x36;
	BS_W x38 = x5 ^ x7;
	BS_W x39 = x38 & x34;
	BS_W x40 = a5 | x39;
	BS_W x41 = x37 ^ x40;
	BS_W x42 = x2 ^ x5;
	BS_W x43 = x42 & x16;
	BS_W x44 = x4 & x27;
	BS_W x45 = a5 & x44;
	BS_W x46 = x43 ^ x45;
	BS_W x47 = a2 | x46;
	BS_W x48 = x41 ^ x47;
	*o1 ^= x48;
	BS_W x49 = x24 & x48;
	BS_W x50 = x49 ^ x5;
	BS_W x51 = x11 ^ x30;
	BS_W x52 = x51 | x50;
	BS_W x53 = a5 & x52;
	BS_W x54 = x50 ^ x53;
	BS_W x55 = x14 ^ x19;
	BS_W x56 = x55 ^ x34;
	BS_W x57 = x4 ^ x16;
	BS_W x58 = x57 & x30;
	BS_W x59 = a5 & x58;
	BS_W x60 = x56 ^ x59;
	BS_W x61 = a2 | x60;
	BS_W x62 = x54 ^ x61;
	*o4 ^= x62;
}

/* S6: 57 gates */
BS_INLINE void BS_NAME(s6)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a2;
	BS_W x2 = ~a5;
	BS_W x3 = a2 ^ a6;
	BS_W x4 = x3 ^ x2;
	BS_W x5 = x4 ^ a1;
	BS_W x6 = a5 & a6;
	BS_W x7 = x6 | x1;
	BS_W x8 = a5 & x5;
	BS_W x9 = a1 & x8;
	BS_W x10 = x7 ^ x9;
	BS_W x11 = a4 & x10;
	BS_W x12 = x5 ^ x11;
	BS_W x13 = a6 ^ x10;
	BS_W x14 = x13 & a1;
	BS_W x15 = a2 & a6;
	BS_W x16 = x15 ^ a5;
	BS_W x17 = a1 & x16;
	BS_W x18 = x2 ^ x17;
	BS_W x19 = a4 | x18;
	BS_W x20 = x14 ^ x19;
	BS_W x21 = a3 & x20;
	BS_W x22 = x12 ^ x21;
	*o2 ^= x22;
	BS_W x23 = a6 ^ x18;
	BS_W x24 = a1 & x23;
	BS_W x25 = a5 ^ x24;
	BS_W x26 = a2 ^ x17;
	BS_W x27 = x26 | x6;
	BS_W x28 = a4 & x27;
	BS_W x29 = x25 ^ x28;
	BS_W x30 = ~x26;
	BS_W x31 = a6 | x29;
	BS_W x32 = ~x31;
	BS_W x33 = a4 & x32;
	BS_W x34 = x30 ^ x33;
	BS_W x35 = a3 & x34;
	BS_W x36 = x29 ^ x35;
	*o4 ^= x36;
	BS_W x37 = x6 ^ x34;
	BS_W x38 = a5 & x23;
	BS_W x39 = x38 ^ x5;
	BS_W x40 = a4 | x39;
	BS_W x41 = x37 ^ x40;
	BS_W x42 = x16 | x24;
	BS_W x43 = x42 ^ x1;
	BS_W x44 = x15 ^ x24;
	BS_W x45 = x44 ^ x31;
	BS_W x46 = a4 | x45;
	BS_W x47 = x43 ^ x46;
	BS_W x48 = a3 | x47;
	BS_W x49 = x41 ^ x48;
	*o1 ^= x49;
	BS_W x50 = x5 | x38;
	BS_W x51 = x50 ^ x6;
	BS_W x52 = x8 & x31;
	BS_W x53 = a4 | x52;
	BS_W x54 = x51 ^ x53;
	BS_W x55 = x30 & x43;
	BS_W x56 = a3 | x55;
	BS_W x57 = x54 ^ x56;
	*o3 ^= x57;
}

/* S7: 57 gates */
BS_INLINE void BS_NAME(s7)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a2;
	BS_W x2 = ~a5;
	BS_W x3 = a2 & a4;
	BS_W x4 = x3 ^ a5;
	BS_W x5 = x4 ^ a3;
	BS_W x6 = a4 & x4;
	BS_W x7 = x6 ^ a2;
	BS_W x8 = a3 & x7;
	BS_W x9 = a1 ^ x8;
	BS_W x10 = a6 | x9;
	BS_W x11 = x5 ^ x10;
	BS_W x12 = a4 & x2;
	BS_W x13 = x12 | a2;
	BS_W x14 = a2 | x2;
	BS_W x15 = a3 & x14;
	BS_W x16 = x13 ^ x15;
	BS_W x17 = x6 ^ x11;
	BS_W x18 = a6 | x17;
	BS_W x19 = x16 ^ x18;
	BS_W x20 = a1 & x19;
	BS_W x21 = x11 ^ x20;
	*o1 ^= x21;
	BS_W x22 = a2 | x21;
	BS_W x23 = x22 ^ x6;
	BS_W x24 = x23 ^ x15;
	BS_W x25 = x5 ^ x6;
	BS_W x26 = x25 | x12;
	BS_W x27 = a6 | x26;
	BS_W x28 = x24 ^ x27;
	BS_W x29 = x1 & x19;
	BS_W x30 = x23 & x26;
	BS_W x31 = a6 & x30;
	BS_W x32 = x29 ^ x31;
	BS_W x33 = a1 | x32;
	BS_W x34 = x28 ^ x33;
	*o4 ^= x34;
	BS_W x35 = a4 & x16;
	BS_W x36 = x35 | x1;
	BS_W x37 = a6 & x36;
	BS_W x38 = x11 ^ x37;
	BS_W x39 = a4 & x13;
	BS_W x40 = a3 | x7;
	BS_W x41 = x39 ^ x40;
	BS_W x42 = x1 | x24;
	BS_W x43 = a6 | x42;
	BS_W x44 = x41 ^ x43;
	BS_W x45 = a1 | x44;
	BS_W x46 = x38 ^ x45;
	*o2 ^= x46;
	BS_W x47 = x8 ^ x44;
	BS_W x48 = x6 ^ x15;
	BS_W x49 = a6 | x48;
	BS_W x50 = x47 ^ x49;
	BS_W x51 = x19 ^ x44;
	BS_W x52 = a4 ^ x25;
	BS_W x53 = x52 & x46;
	BS_W x54 = a6 & x53;
	BS_W x55 = x51 ^ x54;
	BS_W x56 = a1 | x55;
	BS_W x57 = x50 ^ x56;
	*o3 ^= x57;
}

/* S8: 54 gates */
BS_INLINE void BS_NAME(s8)(BS_W a1, BS_W a2, BS_W a3, BS_W a4, BS_W a5, BS_W a6,
				 BS_W *o1, BS_W *o2, BS_W *o3, BS_W *o4)
{
	BS_W x1 = ~a1;
	BS_W x2 = ~a4;
	BS_W x3 = a3 ^ x1;
	BS_W x4 = a3 | x1;
	BS_W x5 = x4 ^ x2;
	BS_W x6 = a5 | x5;
	BS_W x7 = x3 ^ x6;
	BS_W x8 = x1 | x5;
	BS_W x9 = x2 ^ x8;
	BS_W x10 = a5 & x9;
	BS_W x11 = x8 ^ x10;
	BS_W x12 = a2 & x11;
	BS_W x13 = x7 ^ x12;
	BS_W x14 = x6 ^ x9;
	BS_W x15 = x3 & x9;
	BS_W x16 = a5 & x8;
	BS_W x17 = x15 ^ x16;
	BS_W x18 = a2 | x17;
	BS_W x19 = x14 ^ x18;
	BS_W x20 = a6 | x19;
	BS_W x21 = x13 ^ x20;
	*o1 ^= x21;
	BS_W x22 = a5 | x3;
	BS_W x23 = x22 & x2;
	BS_W x24 = ~a3;
	BS_W x25 = x24 & x8;
	BS_W x26 = a5 & x4;
	BS_W x27 = x25 ^ x26;
	BS_W x28 = a2 | x27;
	BS_W x29 = x23 ^ x28;
	BS_W x30 = a6 & x29;
	BS_W x31 = x13 ^ x30;
	*o4 ^= x31;
	BS_W x32 = x5 ^ x6;
	BS_W x33 = x32 ^ x22;
	BS_W x34 = a4 | x13;
	BS_W x35 = a2 & x34;
	BS_W x36 = x33 ^ x35;
	BS_W x37 = a1 & x33;
	BS_W x38 = x37 ^ x8;
	BS_W x39 = a1 ^ x23;
	BS_W x40 = x39 & x7;
	BS_W x41 = a2 & x40;
	BS_W x42 = x38 ^ x41;
	BS_W x43 = a6 | x42;
	BS_W x44 = x36 ^ x43;
	*o3 ^= x44;
	BS_W x45 = a1 ^ x10;
	BS_W x46 = x45 ^ x22;
	BS_W x47 = ~x7;
	BS_W x48 = x47 & x8;
	BS_W x49 = a2 | x48;
	BS_W x50 = x46 ^ x49;
	BS_W x51 = x19 ^ x29;
	BS_W x52 = x51 | x38;
	BS_W x53 = a6 & x52;
	BS_W x54 = x50 ^ x53;
	*o2 ^= x54;
}
/* One round, L ^= f(R, K) (FIPS 46-3 "The cipher function f"): S-box j
 * reads E's group j, bits 4j..4j+5 of R (1-based, wrapping from 32 to 1),
 * XORed with key bits 6j+1..6j+6; its output bits 4j+1..4j+4 go where P
 * sends them (P(i) = bit p_tab[i] of the S output, so out bit s lands in
 * L word pinv(s)). */
BS_INLINE void BS_NAME(round)(BS_W *l, const BS_W *r, const uint8_t k[48])
{
	BS_NAME(s1)(r[31] ^ BS_KEY(k[0]), r[0] ^ BS_KEY(k[1]), r[1] ^ BS_KEY(k[2]), r[2] ^ BS_KEY(k[3]), r[3] ^ BS_KEY(k[4]), r[4] ^ BS_KEY(k[5]),
		    &l[8], &l[16], &l[22], &l[30]);
	BS_NAME(s2)(r[3] ^ BS_KEY(k[6]), r[4] ^ BS_KEY(k[7]), r[5] ^ BS_KEY(k[8]), r[6] ^ BS_KEY(k[9]), r[7] ^ BS_KEY(k[10]), r[8] ^ BS_KEY(k[11]),
		    &l[12], &l[27], &l[1], &l[17]);
	BS_NAME(s3)(r[7] ^ BS_KEY(k[12]), r[8] ^ BS_KEY(k[13]), r[9] ^ BS_KEY(k[14]), r[10] ^ BS_KEY(k[15]), r[11] ^ BS_KEY(k[16]), r[12] ^ BS_KEY(k[17]),
		    &l[23], &l[15], &l[29], &l[5]);
	BS_NAME(s4)(r[11] ^ BS_KEY(k[18]), r[12] ^ BS_KEY(k[19]), r[13] ^ BS_KEY(k[20]), r[14] ^ BS_KEY(k[21]), r[15] ^ BS_KEY(k[22]), r[16] ^ BS_KEY(k[23]),
		    &l[25], &l[19], &l[9], &l[0]);
	BS_NAME(s5)(r[15] ^ BS_KEY(k[24]), r[16] ^ BS_KEY(k[25]), r[17] ^ BS_KEY(k[26]), r[18] ^ BS_KEY(k[27]), r[19] ^ BS_KEY(k[28]), r[20] ^ BS_KEY(k[29]),
		    &l[7], &l[13], &l[24], &l[2]);
	BS_NAME(s6)(r[19] ^ BS_KEY(k[30]), r[20] ^ BS_KEY(k[31]), r[21] ^ BS_KEY(k[32]), r[22] ^ BS_KEY(k[33]), r[23] ^ BS_KEY(k[34]), r[24] ^ BS_KEY(k[35]),
		    &l[3], &l[28], &l[10], &l[18]);
	BS_NAME(s7)(r[23] ^ BS_KEY(k[36]), r[24] ^ BS_KEY(k[37]), r[25] ^ BS_KEY(k[38]), r[26] ^ BS_KEY(k[39]), r[27] ^ BS_KEY(k[40]), r[28] ^ BS_KEY(k[41]),
		    &l[31], &l[11], &l[21], &l[6]);
	BS_NAME(s8)(r[27] ^ BS_KEY(k[42]), r[28] ^ BS_KEY(k[43]), r[29] ^ BS_KEY(k[44]), r[30] ^ BS_KEY(k[45]), r[31] ^ BS_KEY(k[46]), r[0] ^ BS_KEY(k[47]),
		    &l[4], &l[26], &l[14], &l[20]);
}

/* 16 rounds L_i = R_{i-1}, R_i = L_{i-1} ^ f(R_{i-1}, K_i) without moving
 * words: the halves swap roles each round, so after the even count l
 * holds L16 and r holds R16. dec runs K16..K1. */
BS_INLINE void BS_NAME(des16)(BS_W *l, BS_W *r, const uint8_t ks[16][48], int dec)
{
	for (int i = 0; i < 16; i += 2) {
		BS_NAME(round)(l, r, ks[dec ? 15 - i : i]);
		BS_NAME(round)(r, l, ks[dec ? 14 - i : i + 1]);
	}
}

/* Transposes the 64 x 64 bit matrix of each 64-bit lane (Hacker's Delight
 * §7-3): row b (block b, MSB first) becomes column b, so word c holds bit
 * c+1 of each block. Its own inverse. */
BS_INLINE void BS_NAME(transpose)(BS_W a[64])
{
	uint64_t m = 0x00000000ffffffffu;

	for (unsigned j = 32; j != 0; j >>= 1, m ^= m << j) {
		for (unsigned k = 0; k < 64; k = ((k | j) + 1) & ~j) {
			BS_W t = (a[k] ^ (a[k | j] >> j)) & m;

			a[k] ^= t;
			a[k | j] ^= t << j;
		}
	}
}

/*
 * SP 800-67 §3.1 on 64 * BS_Q blocks: m[b * BS_Q + q] is block 64q + b
 * (its eight octets big-endian); replaced by E_K3(D_K2(E_K1(.))), or the
 * inverse if dec. IP is taken in reading the halves, IP^-1 in writing
 * them; the inner IP^-1 IP pairs cancel (FIPS 46-3), so the three cores
 * pass (R16, L16) straight on. w and t are the caller's, wiped there.
 */
BS_ATTR static void BS_NAME(pass)(const struct tw_des3_ctx *ctx, uint64_t *m, int dec,
				 BS_W w[64], BS_W t[64])
{
	BS_W *l = t, *r = t + 32;

	memcpy(w, m, 64 * sizeof(BS_W));
	BS_NAME(transpose)(w);
	for (unsigned i = 0; i < 64; i++)
		t[i] = w[ip_tab[i] - 1];
	BS_NAME(des16)(l, r, ctx->bsk[dec ? 2 : 0], dec);
	BS_NAME(des16)(r, l, ctx->bsk[1], !dec);
	BS_NAME(des16)(l, r, ctx->bsk[dec ? 0 : 2], dec);
	/* preoutput R16 L16 = words r[0..31], l[0..31] */
	for (unsigned i = 0; i < 64; i++) {
		unsigned s = fp_tab[i] - 1u;

		w[i] = s < 32 ? r[s] : l[s - 32];
	}
	BS_NAME(transpose)(w);
	memcpy(m, w, 64 * sizeof(BS_W));
}
