/* SPDX-License-Identifier: MIT */
/* scope-report's map from 64-bit keys to 32-bit values, which the views count with. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static int map_grow(struct u64map *m)
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
	if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
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
