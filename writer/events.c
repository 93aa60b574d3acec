/* SPDX-License-Identifier: MIT */
/* Event columns in memory: allocation and the start-order merge of a region's calls. */
#include "writer.h"

#include "fresh.h"

#include <stdlib.h>
#include <string.h>

int events_alloc(struct events *e, uint64_t n, int bytes, uint32_t ncounters)
{
	memset(e, 0, sizeof *e);
	e->n = n;
	e->start = malloc(n * sizeof *e->start + 1);
	e->duration = malloc(n * sizeof *e->duration + 1);
	e->thread = malloc(n * sizeof *e->thread + 1);
	e->depth = malloc(n * sizeof *e->depth + 1);
	e->task = malloc(n * sizeof *e->task + 1);
	e->flags = malloc(n + 1);
	if (bytes) {
		e->sent = calloc(n + 1, sizeof *e->sent);
		e->received = calloc(n + 1, sizeof *e->received);
		if (!e->sent || !e->received)
			return -1;
	}
	for (uint32_t k = 0; k < ncounters && k < SCOPE_MAX_COUNTERS; k++)
		if (!(e->counter[k] = calloc(n + 1, sizeof *e->counter[k])))
			return -1;
	if (!e->start || !e->duration || !e->thread || !e->depth || !e->task || !e->flags)
		return -1;
	scope_fresh(e->start, n * sizeof *e->start);
	scope_fresh(e->duration, n * sizeof *e->duration);
	scope_fresh(e->thread, n * sizeof *e->thread);
	scope_fresh(e->depth, n * sizeof *e->depth);
	scope_fresh(e->task, n * sizeof *e->task);
	scope_fresh(e->flags, n);
	return 0;
}

void events_free(struct events *e)
{
	free(e->start);
	free(e->duration);
	free(e->thread);
	free(e->depth);
	free(e->task);
	free(e->flags);
	free(e->sent);
	free(e->received);
	for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
		free(e->counter[k]);
	memset(e, 0, sizeof *e);
}

/* Calls that start at the same tick on two threads go in lane order, so
 * the order is one whatever the order the calls were read in. */
static inline int before_or_same(const uint64_t *start, const uint32_t *thread, uint32_t a,
				 uint32_t b)
{
	return start[a] < start[b] || (start[a] == start[b] && thread[a] <= thread[b]);
}

/* Bottom-up merges of the ascending runs, into the order idx. */
static void merge_runs(const uint64_t *start, const uint32_t *thread, uint32_t *idx, uint32_t *tmp,
		       uint64_t n)
{
#define LE(x, y) before_or_same(start, thread, idx[x], idx[y])
	for (;;) {
		uint64_t i = 0, merges = 0;
		while (i < n) {
			uint64_t a = i, b = i + 1, c, x, y, k;
			while (b < n && LE(b - 1, b))
				b++;
			c = b + (b < n);
			while (c < n && LE(c - 1, c))
				c++;
			for (x = a, y = b, k = a; x < b || y < c;)
				tmp[k++] = (y >= c || (x < b && LE(x, y))) ? idx[x++] : idx[y++];
			memcpy(idx + a, tmp + a, (c - a) * sizeof *idx);
			merges++;
			i = c;
		}
		if (merges <= 1)
			return;
	}
#undef LE
}

int events_sort(struct events *ev, uint64_t first, uint64_t n)
{
	uint64_t *start = ev->start + first, sorted = 1;
	uint32_t *thread = ev->thread + first;
	uint32_t *idx, *tmp;
	void *col;

	while (sorted < n && before_or_same(start, thread, (uint32_t)sorted - 1, (uint32_t)sorted))
		sorted++;
	if (sorted >= n)
		return 0;
	idx = malloc(n * sizeof *idx);
	tmp = malloc(n * sizeof *tmp);
	col = malloc(n * sizeof(uint64_t));
	if (!idx || !tmp || !col) {
		free(idx);
		free(tmp);
		free(col);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	merge_runs(start, thread, idx, tmp, n);
#define PERMUTE(arr, type)                                                                         \
	do {                                                                                       \
		type *dst = (type *)col, *src = (arr) + first;                                     \
		for (uint64_t i = 0; i < n; i++)                                                   \
			dst[i] = src[idx[i]];                                                      \
		memcpy(src, dst, n * sizeof(type));                                                \
	} while (0)
	PERMUTE(ev->start, uint64_t);
	PERMUTE(ev->duration, uint64_t);
	PERMUTE(ev->thread, uint32_t);
	PERMUTE(ev->depth, uint32_t);
	PERMUTE(ev->task, uint32_t);
	PERMUTE(ev->flags, uint8_t);
	if (ev->sent) {
		PERMUTE(ev->sent, uint64_t);
		PERMUTE(ev->received, uint64_t);
	}
	for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
		if (ev->counter[k])
			PERMUTE(ev->counter[k], uint64_t);
#undef PERMUTE
	_Static_assert(SC_NEV == 12, "events_sort moves every held /events column");
	free(idx);
	free(tmp);
	free(col);
	return 0;
}
