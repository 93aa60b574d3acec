/* SPDX-License-Identifier: MIT */
/* Which process of a profile each one came from: /processes/parent. */
#ifndef SCOPE_LIB_PARENTS_H
#define SCOPE_LIB_PARENTS_H

#include <stdint.h>

/*
 * Fills parent[r] with the row each of the n processes came from, -1 for
 * none: for a program an exec started, the image that exec'd it (same pid,
 * earlier, ended by exec); else the newest earlier process whose pid is its
 * ppid. Of two equally new, the lower row. exec[r] is non-zero for an
 * image that ended by exec. Returns 0, or -1 without memory.
 */
int parents_link(const uint64_t *pid, const uint64_t *ppid, const uint64_t *start,
		 const uint64_t *exec, uint64_t n, int64_t *parent);

#endif
