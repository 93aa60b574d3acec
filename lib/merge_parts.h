/* SPDX-License-Identifier: MIT */
/* Which profiles scope-merge combines: named, in a parts folder, or left beside the output. */
#ifndef SCOPE_LIB_MERGE_PARTS_H
#define SCOPE_LIB_MERGE_PARTS_H

#include <stddef.h>

/*
 * The inputs: the ninputs named; every .h5 in parts; or output itself and
 * what its run left: parts beside it (STEM.*.part.h5) and the ranks of an
 * MPI job in OUTPUT.ranks. *owned tells whether they are parts to remove
 * once merged. Returns 0 or -1; *v holds *n malloc'ed paths.
 */
int parts_gather(const char *output, const char *parts, char **inputs, int ninputs, char ***v,
		 size_t *n, int *owned);

/* OUTPUT.ranks once merged: removes it, with the empty folders and stale
 * markers of ranks killed while they gathered or merged. Returns 0, or -1
 * when it still holds something (or is there and cannot be read). */
int parts_remove_ranks_folder(const char *output);

#endif
