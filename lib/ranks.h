/* SPDX-License-Identifier: MIT */
/* One profile per MPI job: each rank's profile waits beside the output, the last one merges. */
#ifndef SCOPE_LIB_RANKS_H
#define SCOPE_LIB_RANKS_H

#include <limits.h>
#include <stddef.h>

struct job {
	int rank, size;
	char dir[PATH_MAX];	  /* OUTPUT.ranks */
	char rank_file[PATH_MAX]; /* this rank's profile in it */
	char id[64];		  /* the launcher's name for the job, "" when it gives none */
};

/* Whether rank of a job of size ranks is one of several; fills j and makes
 * the folder when it is (1). Returns 0 when not, -1 after printing why
 * (prefixed with who). */
int job_init(struct job *j, const char *output, int rank, int size, const char *who);

/* Merges the ranks' profiles in dir into output for the program who;
 * returns 0, or -1 with the reason in err. */
typedef int (*job_merge_fn)(const char *dir, int ranks, const char *output, const char *who,
			    char *err, size_t cap);

/*
 * This rank's profile is in j->rank_file: if every rank's now is, merge
 * them into output with merge(dir, ranks, output, who, ...). Exactly one
 * rank does (an O_EXCL lock file: no flock, which NFS may not honour).
 * Returns 0, or -1 after printing, prefixed with who, why and what is kept
 * where.
 */
int job_finish(const struct job *j, const char *output, job_merge_fn merge, const char *who);

/* Removes what the ranks kept in dir to agree who merges (the arrival
 * counters of this job and of earlier ones, the merging lock), once the
 * job is merged and all of it is stale. */
void job_forget(const char *dir);

/* Runs a program and waits for it; returns 0 when it exited with 0. */
int run_tool(const char *path, char *const argv[]);

/* The .h5 files in dir whose names start with prefix; *first gets the
 * path of one of them (first may be NULL). */
int count_h5(const char *dir, const char *prefix, char *first, size_t cap);

#endif
