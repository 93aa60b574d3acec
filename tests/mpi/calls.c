/* SPDX-License-Identifier: MIT */
/* Every wrapped MPI call a known number of times with known sizes; tests/mpi.py holds the table. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { RING_ROUNDS = 5, RING_MAX = 100, ALLREDUCE_LOOP = 20, MAX_RANKS = 16 };

static int rank, size, left, right;

static void fail(const char *what)
{
	fprintf(stderr, "rank %d: %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Round i sends (i+1)*20 ints to the right into a receive posted for
 * RING_MAX: the receive counts what arrived, not what was posted. Then a
 * send to and a receive from MPI_PROC_NULL, which move nothing. */
__attribute__((noinline)) void ring(void)
{
	int out[RING_MAX] = {0}, in[RING_MAX];
	MPI_Status st;

	for (int i = 0; i < RING_ROUNDS; i++) {
		int n = (i + 1) * 20, got;
		if (rank % 2 == 0) {
			MPI_Send(out, n, MPI_INT, right, i, MPI_COMM_WORLD);
			MPI_Recv(in, RING_MAX, MPI_INT, left, i, MPI_COMM_WORLD, &st);
		} else {
			MPI_Recv(in, RING_MAX, MPI_INT, left, i, MPI_COMM_WORLD, &st);
			MPI_Send(out, n, MPI_INT, right, i, MPI_COMM_WORLD);
		}
		MPI_Get_count(&st, MPI_INT, &got);
		if (got != n)
			fail("ring: wrong count");
	}
	MPI_Send(out, RING_MAX, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
	MPI_Recv(in, RING_MAX, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Isend/Irecv completed by Waitall (3 rounds of 50 doubles), by Wait (7
 * ints, then Test and Testall on the finished, now null, requests), and by
 * Waitany (2 ints). */
__attribute__((noinline)) void nonblocking(void)
{
	double dout[50] = {0}, din[50];
	int iout[7] = {0}, iin[7], flag;
	MPI_Request req[2];

	for (int i = 0; i < 3; i++) {
		MPI_Irecv(din, 50, MPI_DOUBLE, left, 10 + i, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(dout, 50, MPI_DOUBLE, right, 10 + i, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
	}
	MPI_Irecv(iin, 7, MPI_INT, left, 20, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(iout, 7, MPI_INT, right, 20, MPI_COMM_WORLD, &req[1]);
	MPI_Wait(&req[1], MPI_STATUS_IGNORE);
	MPI_Wait(&req[0], MPI_STATUS_IGNORE);
	MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
	if (!flag)
		fail("Test of a null request");
	MPI_Testall(2, req, &flag, MPI_STATUSES_IGNORE);
	if (!flag)
		fail("Testall of null requests");
	MPI_Irecv(iin, 2, MPI_INT, left, 30, MPI_COMM_WORLD, &req[0]);
	MPI_Isend(iout, 2, MPI_INT, right, 30, MPI_COMM_WORLD, &req[1]);
	for (int i = 0, idx; i < 2; i++)
		MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
}

/* Sendrecv of 10 ints (4 times) and Sendrecv_replace of 8 doubles (3). */
__attribute__((noinline)) void exchange(void)
{
	int out[10] = {0}, in[10];
	double buf[8] = {0};

	for (int i = 0; i < 4; i++)
		MPI_Sendrecv(out, 10, MPI_INT, right, 40, in, 10, MPI_INT, left, 40, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
	for (int i = 0; i < 3; i++)
		MPI_Sendrecv_replace(buf, 8, MPI_DOUBLE, right, 50, left, 50, MPI_COMM_WORLD,
				     MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void collectives(void)
{
	int ints[250] = {0}, many[MAX_RANKS * 10] = {0}, counts[MAX_RANKS], displs[MAX_RANKS];
	double d[16] = {0}, dsum[16], x = rank, sum;
	char c[MAX_RANKS] = {0}, call[MAX_RANKS * MAX_RANKS];

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 2; i++)
		MPI_Bcast(ints, 250, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Reduce(d, dsum, 16, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
	for (int i = 0; i < ALLREDUCE_LOOP; i++)
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, d, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (sum != size * (size - 1) / 2.0)
		fail("Allreduce: wrong sum");

	/* rank i's block is i+1 elements in the v-variants */
	for (int i = 0; i < size; i++) {
		counts[i] = i + 1;
		displs[i] = i * 10;
	}
	MPI_Gather(ints, 3, MPI_INT, many, 3, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Gatherv(ints, rank + 1, MPI_INT, many, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatter(many, 5, MPI_INT, ints, 5, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatterv(many, counts, displs, MPI_DOUBLE, d, rank + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Allgather(ints, 2, MPI_INT, many, 2, MPI_INT, MPI_COMM_WORLD);
	MPI_Allgatherv(c, rank + 1, MPI_CHAR, call, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
	MPI_Alltoall(many, 3, MPI_INT, ints, 3, MPI_INT, MPI_COMM_WORLD);
	{
		/* to rank j, j+1 ints; from every rank, rank+1 ints */
		int scounts[MAX_RANKS], sdispls[MAX_RANKS], rcounts[MAX_RANKS], rdispls[MAX_RANKS];
		for (int j = 0; j < size; j++) {
			scounts[j] = j + 1;
			sdispls[j] = j * 10;
			rcounts[j] = rank + 1;
			rdispls[j] = j * 10;
		}
		MPI_Alltoallv(many, scounts, sdispls, MPI_INT, ints, rcounts, rdispls, MPI_INT,
			      MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int provided;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || size > MAX_RANKS)
		fail("needs 2 to 16 ranks");
	left = (rank + size - 1) % size;
	right = (rank + 1) % size;
	ring();
	nonblocking();
	exchange();
	collectives();
	printf("rank %d of %d done\n", rank, size);
	MPI_Finalize();
	return 0;
}
