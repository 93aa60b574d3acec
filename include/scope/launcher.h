/* SPDX-License-Identifier: MIT */
/* Where MPI launchers put a process's rank and the job's size, before MPI_Init. */
#ifndef SCOPE_LAUNCHER_H
#define SCOPE_LAUNCHER_H

/* Open MPI, PMIx, MPICH's Hydra, Slurm: the first one set wins. */
#define SCOPE_RANK_VARS "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"
#define SCOPE_SIZE_VARS "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"

#endif
