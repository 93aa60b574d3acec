/* SPDX-License-Identifier: MIT */
/* Linking each process of a profile to the one it came from. */
#define _GNU_SOURCE
#include "parents.h"

#include <stdlib.h>

/* Rows sorted by pid, then start, then row: a pid's images in the order they ran. */
struct pid_order {
	const uint64_t *pid, *start;
};

static int by_pid_start(const void *x, const void *y, void *ctx)
{
	const struct pid_order *k = ctx;
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	if (k->pid[a] != k->pid[b])
		return k->pid[a] < k->pid[b] ? -1 : 1;
	if (k->start[a] != k->start[b])
		return k->start[a] < k->start[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The number of sorted rows before (pid, start), or up to it with at_too. */
static uint64_t bound(const uint64_t *order, uint64_t n, const struct pid_order *k, uint64_t pid,
		      uint64_t start, int at_too)
{
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, q = order[mid];
		int before = k->pid[q] < pid ||
			     (k->pid[q] == pid &&
			      (k->start[q] < start || (at_too && k->start[q] == start)));
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each lookup is two binary searches in the rows sorted by pid and start,
 * and last_exec[i] (the latest position up to i in its pid's run that
 * ended by exec) answers the exec case at once: O(n log n) in all. */
int parents_link(const uint64_t *pid, const uint64_t *ppid, const uint64_t *start,
		 const uint64_t *exec, uint64_t n, int64_t *parent)
{
	uint64_t *order = malloc((n + 1) * sizeof *order);
	int64_t *last_exec = malloc((n + 1) * sizeof *last_exec);
	struct pid_order k = {pid, start};

	if (!order || !last_exec) {
		free(order);
		free(last_exec);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_pid_start, &k);
	for (uint64_t i = 0; i < n; i++) {
		int same_run = i > 0 && pid[order[i - 1]] == pid[order[i]];
		last_exec[i] = exec[order[i]] ? (int64_t)i : same_run ? last_exec[i - 1] : -1;
	}
	for (uint64_t r = 0; r < n; r++) {
		int64_t best = -1;
		uint64_t at;
		/* exec'd it: the latest earlier image of the same pid that ended by exec */
		at = bound(order, n, &k, pid[r], start[r], 0);
		if (at > 0 && pid[order[at - 1]] == pid[r] && last_exec[at - 1] >= 0) {
			uint64_t e = (uint64_t)last_exec[at - 1];
			while (e > 0 && pid[order[e - 1]] == pid[r] &&
			       start[order[e - 1]] == start[order[e]] && exec[order[e - 1]])
				e--;
			best = (int64_t)order[e];
		}
		/* forked it: the newest process of pid ppid that started by then */
		at = bound(order, n, &k, ppid[r], start[r], 1);
		if (at > 0 && order[at - 1] == r)
			at--;
		if (at > 0 && pid[order[at - 1]] == ppid[r]) {
			uint64_t s = start[order[at - 1]];
			uint64_t f = bound(order, n, &k, ppid[r], s, 0);
			if (order[f] == r)
				f++;
			if (best < 0 || s > start[best] ||
			    (s == start[best] && order[f] < (uint64_t)best))
				best = (int64_t)order[f];
		}
		parent[r] = best;
	}
	free(order);
	free(last_exec);
	return 0;
}
