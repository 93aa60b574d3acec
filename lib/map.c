/* SPDX-License-Identifier: MIT */
/* The one hash map of scope's programs: 64-bit keys to 32-bit values, open addressing. */
#include "map.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64's finaliser: neighbouring keys (addresses, ids) spread out. */
static uint64_t mix(uint64_t k)
{
	k ^= k >> 30;
	k *= UINT64_C(0xbf58476d1ce4e5b9);
	k ^= k >> 27;
	k *= UINT64_C(0x94d049bb133111eb);
	return k ^ (k >> 31);
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	uint64_t *keys = calloc(cap, sizeof *keys);
	uint32_t *vals = malloc(cap * sizeof *vals);

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;
		if (!m->keys[i])
			continue;
		for (j = mix(m->keys[i]) & (cap - 1); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

uint32_t *map_slot(struct u64map *m, uint64_t key, uint32_t fresh, int *added)
{
	size_t i;

	*added = 0;
	if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
		return NULL;
	key++;
	for (i = mix(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return &m->vals[i];
	m->keys[i] = key;
	m->vals[i] = fresh;
	m->n++;
	*added = 1;
	return &m->vals[i];
}

void map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

uint64_t map_hash_str(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h == UINT64_MAX ? 0 : h;
}
