/* SPDX-License-Identifier: MIT */
/* An OpenMP program whose explicit tasks each call a known function a known number of times. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#include "../progs/progs.h"

#define UNTIED 8 /* untied tasks, PARTS parts each, taskyield between */
#define PARTS  4
#define TIED   4 /* tied tasks, 10 * (i + 1) calls each, taskyield every 5 */

static volatile unsigned long sink;
static int part_tid[UNTIED][PARTS + 1]; /* the last: where the task ended */

NOINLINE void untied_step(void)
{
	sink++;
}

NOINLINE void tied_step(void)
{
	sink += 2;
}

NOINLINE void outside(void)
{
	sink += 3;
}

/* Keeps a part busy a while, so the other thread is free to take the
 * parts its own thread sets aside. */
NOINLINE static void spin(void)
{
	for (volatile int i = 0; i < 20000; i++)
		;
}

/*
 * untied: task i makes (i + 1) calls of untied_step in each of its PARTS
 * parts, PARTS * (i + 1) in all; between parts it yields, and an untied
 * task may go on on another thread. Each part notes the thread it ran on.
 */
NOINLINE static void untied(void)
{
#pragma omp parallel num_threads(2)
	{
		/* both threads are in the region before the first task: the
		 * other one is free to take parts from the start */
#pragma omp barrier
#pragma omp single
		for (int i = 0; i < UNTIED; i++) {
#pragma omp task untied firstprivate(i)
			{
				for (int p = 0; p < PARTS; p++) {
					for (int k = 0; k <= i; k++)
						untied_step();
					part_tid[i][p] = (int)gettid();
					spin();
#pragma omp taskyield
				}
				/* the part after the last yield */
				part_tid[i][PARTS] = (int)gettid();
			}
		}
	}
}

/* tied: task i makes 10 * (i + 1) calls of tied_step, yielding every 5
 * (the thread may run another task on top of it meanwhile). */
NOINLINE static void tied(void)
{
#pragma omp parallel num_threads(2)
	{
		outside();
#pragma omp single
		for (int i = 0; i < TIED; i++) {
#pragma omp task firstprivate(i)
			for (int k = 0; k < 10 * (i + 1); k++) {
				tied_step();
				if (k % 5 == 4) {
#pragma omp taskyield
				}
			}
		}
	}
}

/* Prints, per untied task, the OS threads its parts ran on, in order, and
 * the one it ended on: "task 3: 1201 1201 1202 1201 1202". */
int main(void)
{
	untied();
	tied();
	for (int i = 0; i < UNTIED; i++) {
		printf("task %d:", i);
		for (int p = 0; p <= PARTS; p++)
			printf(" %d", part_tid[i][p]);
		printf("\n");
	}
	return 0;
}
