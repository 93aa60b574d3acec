/* SPDX-License-Identifier: MIT */
/* What a wrapped MPI call costs: N sends of 8 bytes from rank 0 to rank 1, and N to MPI_PROC_NULL.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Usage: mpirun -np 2 sendloop [N]; run it with and without the library
 * preloaded and compare the ns per call it prints. Alone (no mpirun) it
 * times the sends to MPI_PROC_NULL only, without a peer polling on the
 * other core. */
int main(int argc, char **argv)
{
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 100000;
	double x = 1, t0, pair_ns, null_ns;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < n && size > 1; i++) {
		if (rank == 0)
			MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	pair_ns = (MPI_Wtime() - t0) * 1e9 / n;
	/* no transfer at all: what is left is the call itself */
	t0 = MPI_Wtime();
	for (int i = 0; i < n; i++)
		MPI_Send(&x, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
	null_ns = (MPI_Wtime() - t0) * 1e9 / n;
	if (rank == 0)
		printf("send+recv %.1f ns per message, send to MPI_PROC_NULL %.1f ns per call\n",
		       pair_ns, null_ns);
	MPI_Finalize();
	return 0;
}
