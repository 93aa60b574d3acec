/* SPDX-License-Identifier: MIT */
/* An MPI job to profile: a ring exchange, rank-dependent work, an allreduce; "kill R" makes rank R
 * die by SIGKILL. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) double work(int n)
{
	volatile double s = 0;
	for (int i = 0; i < n; i++)
		s += i * 0.5;
	return s;
}

__attribute__((noinline)) void step(int rank, int size, int *token)
{
	MPI_Sendrecv_replace(token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, size, token = 0,
			victim = argc > 2 && strcmp(argv[1], "kill") == 0 ? atoi(argv[2]) : -1;
	double x, sum;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < 10; i++)
		step(rank, size, &token);
	for (int i = 0; i < rank + 1; i++)
		work(1000);
	if (rank == victim)
		kill(getpid(), SIGKILL);
	x = work(10);
	MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d calls step=10 work=%d\n", rank, rank + 2);
	MPI_Finalize();
	return 0;
}
