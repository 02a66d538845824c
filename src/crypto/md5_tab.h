/*
 * twag — the MD5 sine table, shared by the scalar (md5.c) and the
 * multi-buffer (md5_mb.c) code: RFC 1321 §3.4, T[i] = floor(4294967296 *
 * abs(sin(i))), i = 1..64 (index i - 1 here).
 */
#ifndef TWAG_MD5_TAB_H
#define TWAG_MD5_TAB_H

#include <stdint.h>

extern const uint32_t tw_md5_tab[64];

#endif
