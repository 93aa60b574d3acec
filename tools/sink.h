/* SPDX-License-Identifier: MIT */
/* An output stream that counts what goes through it, gzip-compresses it on request and stops at a
 * size. */
#ifndef SCOPE_TOOLS_SINK_H
#define SCOPE_TOOLS_SINK_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

struct sink {
	FILE *under;	/* where the bytes go; the sink never closes it */
	int gzip;	/* compress into gzip's format (RFC 1952) */
	uint64_t limit; /* stop when more than this would reach under; 0: no limit */
	uint64_t in;	/* bytes written into the sink */
	uint64_t out;	/* bytes that reached under */
	int over;	/* the limit was passed: writes fail with EFBIG from then on */
	int failed;	/* under or zlib failed */
	z_stream z;
	unsigned char buf[1 << 16];
};

/*
 * A stream whose bytes go to under, through s (which must outlive it),
 * compressed when gzip is set. fclose() of the stream finishes it (the
 * gzip trailer) and leaves under open. Returns the stream, or NULL when out
 * of memory.
 */
FILE *sink_open(struct sink *s, FILE *under, int gzip, uint64_t limit);

/* Whether path names a gzip file: it ends in ".gz". */
int sink_gzip_name(const char *path);

#endif
