/* SPDX-License-Identifier: MIT */
/* The merge of a run's profiles into one, for scope-merge and for the last rank of a job. */
#ifndef SCOPE_LIB_MERGE_H
#define SCOPE_LIB_MERGE_H

#include "storage.h"

/* What scope-merge's command line asks for. */
struct merge_request {
	const char *output; /* the merged profile */
	const char *parts;  /* merge every .h5 in this folder; NULL: inputs, or output's run */
	char **inputs;	    /* the profiles named */
	int ninputs;	    /* 0 with no parts: output and what its run left beside it */
	const struct storage *st;
	int keep;  /* keep parts once merged */
	int ranks; /* an MPI job's size (its missing ranks go in /metadata), 0: the inputs' */
	int quiet; /* no progress line on a terminal */
};

/*
 * Merges the profiles r names into r->output, atomically, and removes the
 * parts it merged unless r->keep. Every message is one line on stderr
 * prefixed "scope-merge: ". Returns 0, or 1 when nothing was written (an
 * input that cannot be read, an output that cannot be written): scope-merge's
 * exit status.
 */
int merge_profiles(const struct merge_request *r);

/* The last rank of an MPI job: merges the ranks' profiles in dir into
 * output, as `scope-merge --parts DIR --ranks N -o OUTPUT` does (a
 * job_merge_fn of lib/ranks.h; the last argument is not used). Returns 0,
 * or -1 after printing why. */
int merge_ranks(const char *dir, int ranks, const char *output, const void *unused);

#endif
