/*
 * twag — the version of libtwag and its programs.
 *
 * One place sets it: the VERSION file at the top of the tree (MAJOR.MINOR.PATCH),
 * which the Makefile also uses for the shared library's SONAME
 * (libtwag.so.MAJOR) and for twag.pc.
 */
#ifndef TWAG_VERSION_H
#define TWAG_VERSION_H

/* Returns the version this library was built as, e.g. "0.1.0" (static). */
const char *tw_version(void);

#endif
