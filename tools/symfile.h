/* SPDX-License-Identifier: MIT */
/* scope-symbolize's HDF5 side: the atomic rewrite of a profile with new region names. */
#ifndef SCOPE_TOOLS_SYMFILE_H
#define SCOPE_TOOLS_SYMFILE_H

#include <stddef.h>
#include <stdint.h>

/* The new values of /regions/name, file and line, one row per region. */
struct sf_regions {
	const char *const *name;
	const char *const *file;
	const uint64_t *line;
	size_t n;
};

/*
 * Writes the profile at path anew with r's names, files and lines: every
 * top-level object but /regions, and every member of /regions but those
 * three columns, is copied as it is (H5Ocopy), with the attributes of the
 * root and of /regions. The copy goes to a temporary sibling, PATH.tmp-XXXXXX,
 * whose name is kept in *tmp while it exists (for a crash handler to remove);
 * it is checked with the reader, given the file's mode, synced and renamed
 * over path, and the folder synced. PATH is path with its links resolved, so
 * a link to the profile stays a link to the new file. Returns 0, or -1 with
 * the reason in err and path untouched.
 */
int sf_rewrite(const char *path, const struct sf_regions *r, char *volatile *tmp, char *err,
	       size_t cap);

#endif
