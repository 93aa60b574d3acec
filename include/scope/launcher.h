/* SPDX-License-Identifier: MIT */
/* Where MPI launchers put a process's rank and the job's size, before MPI_Init. */
#ifndef SCOPE_LAUNCHER_H
#define SCOPE_LAUNCHER_H

/* Open MPI, PMIx, MPICH's Hydra, Slurm: the first one set wins. */
#define SCOPE_RANK_VARS "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"
#define SCOPE_SIZE_VARS "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"

/* What names one job, the same in all its ranks (SCOPE_JOB_ID to set it by
 * hand); Slurm's job and step together. MPICH's Hydra sets none. */
#define SCOPE_JOB_VARS "SCOPE_JOB_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"

#endif
