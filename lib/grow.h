/* SPDX-License-Identifier: MIT */
/* Growing an array: the one helper the writer's and the merge's tables use. */
#ifndef SCOPE_GROW_H
#define SCOPE_GROW_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for need elements of size bytes in *v, whose capacity is *cap:
 * doubled from 64 until it fits. Returns 0, or -1 without memory (*v and
 * *cap as they were). */
static inline int scope_grow(void **v, uint64_t *cap, uint64_t need, size_t size)
{
	uint64_t c = *cap ? *cap : 64;
	void *grown;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(grown = realloc(*v, c * size)))
		return -1;
	*v = grown;
	*cap = c;
	return 0;
}

/* The same, the new elements zeroed. */
static inline int scope_grow_zeroed(void **v, uint64_t *cap, uint64_t need, size_t size)
{
	uint64_t had = *cap;

	if (scope_grow(v, cap, need, size) != 0)
		return -1;
	memset((char *)*v + had * size, 0, (*cap - had) * size);
	return 0;
}

#endif
