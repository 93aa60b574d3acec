/* SPDX-License-Identifier: MIT */
/* Whether this scope-run is one rank of an MPI job, as the launcher's environment says. */
#ifndef SCOPE_TOOLS_JOB_H
#define SCOPE_TOOLS_JOB_H

#include "ranks.h"

/* Fills j from the launcher's variables (Open MPI, PMIx, Hydra, Slurm)
 * when this is one rank of several (1); 0 when not; -1 after printing why. */
int job_detect(struct job *j, const char *output);

#endif
