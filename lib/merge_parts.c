/* SPDX-License-Identifier: MIT */
/* Which profiles scope-merge combines: named, in a parts folder, or left beside the output. */
#define _GNU_SOURCE
#include "merge_parts.h"
#include "ranks.h"

#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int push_path(char ***v, size_t *n, size_t *cap, char *path)
{
	if (!path)
		return -1;
	if (*n == *cap) {
		char **grown = realloc(*v, (*cap = *cap ? 2 * *cap : 16) * sizeof *grown);
		if (!grown) {
			free(path);
			return -1;
		}
		*v = grown;
	}
	(*v)[(*n)++] = path;
	return 0;
}

/* The files in dir named STEM.*.part.h5, or, without a stem, *.h5. */
static int list_parts(const char *dir, const char *stem, char ***v, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t len = stem ? strlen(stem) : 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		int rank_file = stem && strcmp(stem, "rank") == 0;
		const char *tail = stem && !rank_file ? ".part.h5" : ".h5";
		char sep = rank_file ? '-' : '.';
		char *path;
		if (l <= strlen(tail) || strcmp(e->d_name + l - strlen(tail), tail) != 0 ||
		    (stem && (strncmp(e->d_name, stem, len) != 0 || e->d_name[len] != sep)))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0 ||
		    push_path(v, n, cap, path) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/* Temporary files a killed writer left half-written: nothing to merge. */
static void remove_unfinished(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[8400];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".tmp-") && snprintf(path, sizeof path, "%.4000s/%.255s", dir,
							   e->d_name) < (int)sizeof path)
			unlink(path);
	closedir(d);
}

/* OUTPUT.ranks once merged: empty but for the empty folders of ranks whose
 * scope-run was killed while it gathered. */
int parts_remove_ranks_folder(const char *output)
{
	char ranks[4200], sub[8400];
	DIR *d;
	struct dirent *e;

	snprintf(ranks, sizeof ranks, "%s.ranks", output);
	job_forget(ranks); /* also the lock of a rank killed while it merged */
	if (!(d = opendir(ranks)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", ranks, e->d_name);
		remove_unfinished(sub);
		rmdir(sub);
	}
	closedir(d);
	return rmdir(ranks) == 0 ? 0 : -1;
}

/* The complete parts in OUTPUT.ranks/.rank-*.parts-* folders. */
static int list_gathering(const char *ranks, char ***v, size_t *n, size_t *cap)
{
	DIR *d = opendir(ranks);
	struct dirent *e;
	char sub[8400];
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, ".rank-", 6) != 0 || !strstr(e->d_name, ".parts-"))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", ranks, e->d_name);
		rc = list_parts(sub, NULL, v, n, cap);
	}
	closedir(d);
	return rc;
}

/* The inputs: those named; those in the parts folder; or the output and
 * the parts its run left beside it. *owned tells whether they are parts
 * to remove once merged. */
int parts_gather(const char *output, const char *parts, char **inputs, int ninputs, char ***v,
		 size_t *n, int *owned)
{
	size_t cap = 0;
	*v = NULL;
	*n = 0;
	*owned = 0;
	if (ninputs) {
		for (int i = 0; i < ninputs; i++)
			if (push_path(v, n, &cap, strdup(inputs[i])) != 0)
				return -1;
		return 0;
	}
	*owned = 1;
	if (parts)
		return list_parts(parts, NULL, v, n, &cap);
	{
		char dir[4096], base[4096], *stem;
		size_t len;
		snprintf(dir, sizeof dir, "%s", output);
		snprintf(base, sizeof base, "%s", output);
		stem = basename(base);
		len = strlen(stem);
		if (len > 3 && strcmp(stem + len - 3, ".h5") == 0)
			stem[len - 3] = '\0';
		char ranks[4200];
		if (access(output, F_OK) == 0 && push_path(v, n, &cap, strdup(output)) != 0)
			return -1;
		/* an MPI job some of whose ranks never merged: their folder, and
		 * the parts of ranks whose scope-run was killed while it gathered */
		snprintf(ranks, sizeof ranks, "%s.ranks", output);
		if (access(ranks, F_OK) == 0 && (list_parts(ranks, "rank", v, n, &cap) != 0 ||
						 list_gathering(ranks, v, n, &cap) != 0))
			return -1;
		return list_parts(dirname(dir), stem, v, n, &cap);
	}
}
