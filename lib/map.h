/* SPDX-License-Identifier: MIT */
/* The one hash map of scope's programs: 64-bit keys to 32-bit values, open addressing. */
#ifndef SCOPE_LIB_MAP_H
#define SCOPE_LIB_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed is empty. Keys are stored plus one, so 0 marks a free slot and
 * every 64-bit key but UINT64_MAX can be used. */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

/*
 * The value of key, or, for a new key, a slot holding fresh with *added
 * set. The pointer is good until the next call. NULL when out of memory.
 * A map of ids in order of first sight passes its own n as fresh.
 */
uint32_t *map_slot(struct u64map *m, uint64_t key, uint32_t fresh, int *added);
void map_free(struct u64map *m);

/* A key made from a string: for maps whose values lead back to their
 * strings, which the user compares, trying hash + 1, + 2 ... on a miss. */
uint64_t map_hash_str(const char *s);

#endif
