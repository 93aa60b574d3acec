/* SPDX-License-Identifier: MIT */
/* The merge of a run's profiles into one, for scope-merge and for the last rank of a job. */
#ifndef SCOPE_LIB_MERGE_H
#define SCOPE_LIB_MERGE_H

#include "storage.h"

#include <stddef.h>

/* What scope-merge's command line asks for. */
struct merge_request {
	const char *output; /* the merged profile */
	const char *parts;  /* merge every .h5 in this folder; NULL: inputs, or output's run */
	char **inputs;	    /* the profiles named */
	int ninputs;	    /* 0 with no parts: output and what its run left beside it */
	const struct storage *st;
	int keep;	 /* keep parts once merged */
	int ranks;	 /* an MPI job's size (its missing ranks go in /metadata), 0: the inputs' */
	int quiet;	 /* no progress line on a terminal */
	const char *who; /* the program merging, which names the progress line */
};

/*
 * Merges the profiles r names into r->output, atomically, and removes the
 * parts it merged unless r->keep. Returns 0, or -1 when nothing was written
 * (no input, an input that cannot be read, an output that cannot be
 * written) with the reason in err, one line that names the file and says
 * what is kept, for the caller to print after its own name:
 * "a.h5: /events/thread is missing; nothing was written".
 */
int merge_profiles(const struct merge_request *r, char *err, size_t cap);

/* The last rank of an MPI job: merges the ranks' profiles in dir into
 * output, as `scope-merge --parts DIR --ranks N -o OUTPUT` does (a
 * job_merge_fn of lib/ranks.h). Returns 0, or -1 with the reason in err. */
int merge_ranks(const char *dir, int ranks, const char *output, const char *who, char *err,
		size_t cap);

#endif
