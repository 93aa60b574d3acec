/* SPDX-License-Identifier: MIT */
/*
 * Many threads and many regions: main calls 1,024 functions once each,
 * then THREADS threads, one after another, each call the last of them,
 * whose region id is past 1,024. Read merged, each lane would keep an
 * outermost call for every region up to it (2,048 of them): the writer
 * reads the lanes one after another instead.
 *
 * Prints "calls NAME=N". Usage: r_wide THREADS.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

volatile unsigned long wide_sink;

#define F1(p)                                                                                      \
	NOINLINE void p(void)                                                                      \
	{                                                                                          \
		wide_sink++;                                                                       \
	}
#define F4(p)	F1(p##0) F1(p##1) F1(p##2) F1(p##3)
#define F16(p)	F4(p##0) F4(p##1) F4(p##2) F4(p##3)
#define F64(p)	F16(p##0) F16(p##1) F16(p##2) F16(p##3)
#define F256(p) F64(p##0) F64(p##1) F64(p##2) F64(p##3)
#define F1K(p)	F256(p##0) F256(p##1) F256(p##2) F256(p##3)
F1K(f)

#define C1(p)	p()
#define C4(p)	C1(p##0), C1(p##1), C1(p##2), C1(p##3)
#define C16(p)	C4(p##0), C4(p##1), C4(p##2), C4(p##3)
#define C64(p)	C16(p##0), C16(p##1), C16(p##2), C16(p##3)
#define C256(p) C64(p##0), C64(p##1), C64(p##2), C64(p##3)
#define C1K(p)	C256(p##0), C256(p##1), C256(p##2), C256(p##3)

NOINLINE void call_all(void)
{
	C1K(f);
}

NOINLINE void *last(void *arg)
{
	(void)arg;
	f33333();
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2200;
	pthread_t *t = calloc((size_t)(threads > 0 ? threads : 1), sizeof *t);

	if (!t || threads < 1) {
		fprintf(stderr, "usage: r_wide THREADS (1 or more)\n");
		return 2;
	}
	call_all();
	/* One at a time: each lane's calls come after the one before. */
	for (int i = 0; i < threads; i++) {
		pthread_create(&t[i], NULL, last, NULL);
		pthread_join(t[i], NULL);
	}
	printf("calls main=1\ncalls call_all=1\ncalls last=%d\ncalls f00000=1\ncalls f33333=%d\n",
	       threads, threads + 1);
	free(t);
	return 0;
}
