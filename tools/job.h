/* SPDX-License-Identifier: MIT */
/* One profile per MPI job: the ranks' scope-runs meet in a folder beside the output. */
#ifndef SCOPE_TOOLS_JOB_H
#define SCOPE_TOOLS_JOB_H

#include <limits.h>

struct job {
	int rank, size;
	char dir[PATH_MAX];	  /* OUTPUT.ranks */
	char rank_file[PATH_MAX]; /* this rank's profile in it */
};

/* Whether this scope-run is one rank of a job of several, as the launcher's
 * environment says (Open MPI, PMIx, Hydra, Slurm). Fills j when it is. */
int job_detect(struct job *j, const char *output);

/* This rank's profile is in j->rank_file: if every rank's now is, merge
 * them into output. Exactly one rank does (an O_EXCL lock file: no flock,
 * which NFS may not honour). Returns 0, or -1 after printing why. */
int job_finish(const struct job *j, const char *output, const char *bindir);

#endif
