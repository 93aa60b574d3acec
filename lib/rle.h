/* SPDX-License-Identifier: MIT */
/* Literals and runs as a zlib stream, one deflate block per byte plane: no match search. */
#ifndef SCOPE_RLE_H
#define SCOPE_RLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A shuffled chunk is planes of bytes: the low bytes of every row, then
 * the next bytes, and so on. The upper planes are mostly zero and the low
 * one mostly noise, where a match search finds little and costs most of
 * deflate's time. rle_zlib codes each plane as one dynamic-Huffman block
 * of literals and runs (matches at distance 1), the last block final,
 * wrapped as zlib (RFC 1950/1951), so any inflate, HDF5's deflate filter
 * among them, reads it back.
 *
 * in holds nplanes planes of plane bytes each. The stream goes to out (cap
 * bytes); returns its size, or 0 when it does not fit (the caller then
 * deflates as before). tokens is the caller's scratch of plane entries.
 */
size_t rle_zlib(const unsigned char *in, size_t plane, int nplanes, uint16_t *tokens,
		unsigned char *out, size_t cap);

#endif
