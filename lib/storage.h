/* SPDX-License-Identifier: MIT */
/* How a profile's datasets are stored: compression and chunking. */
#ifndef SCOPE_LIB_STORAGE_H
#define SCOPE_LIB_STORAGE_H

#include <stdint.h>

#define STORAGE_AUTO_MIN_EVENTS 16384u
/* auto trades a little size for speed: on profiles, libdeflate's level 2
 * is twice as fast as 4 and about 20% larger, far under a byte per call;
 * level 1 is no faster (290-340 MB/s on the shuffled event columns, both)
 * and 1 to 3% larger. */
#define STORAGE_AUTO_LEVEL    2
#define STORAGE_DEFAULT_LEVEL 4
#define STORAGE_MAX_CHUNK     (1u << 26)

struct storage {
	int level;     /* deflate level; 0 = no compression */
	int automatic; /* compress only from auto_min elements */
	uint64_t auto_min;
	uint64_t chunk_elems; /* 0 = default */
	int chunk_given;      /* chunked even without compression */
};

/* "auto", "none", "gzip", "gzip:1".."gzip:9"; returns 0, or -1 when unknown. */
int storage_parse(struct storage *s, const char *spec);

/* Elements per chunk, 1..STORAGE_MAX_CHUNK; NULL or "" leaves the default.
 * Returns 0, or -1 when out of range. */
int storage_parse_chunk(struct storage *s, const char *v);

#endif
