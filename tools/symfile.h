/* SPDX-License-Identifier: MIT */
/* scope-symbolize's HDF5 side: the module tables of a profile, and its atomic rewrite with new
 * region names. */
#ifndef SCOPE_TOOLS_SYMFILE_H
#define SCOPE_TOOLS_SYMFILE_H

#include <stddef.h>
#include <stdint.h>

/* A row of /process<N>/modules. */
struct sf_module {
	char *path, *build_id; /* build_id: hex, "" when none was recorded */
	uint64_t bias, lo, hi;
};

/*
 * Reads the /process<N>/modules tables of the profile at path, for N below
 * nprocesses, into one array (a process without a table adds nothing).
 * Returns 0, or -1 with a one-line reason in err (a table that is not one:
 * columns missing, mistyped or of different lengths).
 */
int sf_read_modules(const char *path, size_t nprocesses, struct sf_module **mods, size_t *n,
		    char *err, size_t cap);
void sf_free_modules(struct sf_module *mods, size_t n);

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
