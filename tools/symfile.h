/* SPDX-License-Identifier: MIT */
/* scope-symbolize's HDF5 side: the atomic rewrite of a profile with new region names. */
#ifndef SCOPE_TOOLS_SYMFILE_H
#define SCOPE_TOOLS_SYMFILE_H

#include "columns.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Writes the profile at path anew with r as its /regions: every top-level
 * object but /regions is copied as it is (h5copy.h: a table two processes
 * share stays one), with the attributes of
 * the root, and /regions is written as the writer and the merge write it
 * (col_regions), with the descriptions of lib/schema.h (describe_profile).
 * The copy goes to a temporary sibling, PATH.tmp-XXXXXX,
 * whose name is kept in *tmp while it exists (for a crash handler to remove);
 * it is checked with the reader, given the file's mode, synced and renamed
 * over path, and the folder synced. PATH is path with its links resolved, so
 * a link to the profile stays a link to the new file. Returns 0, or -1 with
 * the reason in err and path untouched.
 */
int sf_rewrite(const char *path, const struct region_columns *r, char *volatile *tmp, char *err,
	       size_t cap);

#endif
