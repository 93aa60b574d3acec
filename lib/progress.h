/* SPDX-License-Identifier: MIT */
/* A line of progress on standard error, for work that takes seconds, when it is a terminal. */
#ifndef SCOPE_LIB_PROGRESS_H
#define SCOPE_LIB_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/*
 * The work done, in whatever unit the program counts its total in: the
 * reader adds the rows of /events it reads, the writer the calls it groups
 * and the column elements it writes. Adding costs one relaxed atomic add a
 * slice or chunk, whether a progress line is shown or not.
 */
extern _Atomic uint64_t progress_work;

static inline void progress_add(uint64_t n)
{
	atomic_fetch_add_explicit(&progress_work, n, memory_order_relaxed);
}

struct progress {
	char line[200]; /* "scope-report: trace.json" */
	uint64_t base;	/* progress_work at the start */
	_Atomic uint64_t total;
	double after; /* seconds of work before the line shows */
	int on, stop, shown;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * Starts showing "PROG: WHAT: 45% (3 s)" on standard error, refreshed a few
 * times a second, once the work has taken SCOPE_PROGRESS seconds (default
 * 1). Nothing shows when standard error is not a terminal, when quiet is
 * set, or when SCOPE_PROGRESS is "off". total may be 0 and set later.
 */
void progress_start(struct progress *pg, const char *prog, const char *what, uint64_t total,
		    int quiet);
/* Whether progress_start would show the line: to count a total only then. */
int progress_wanted(int quiet);
void progress_total(struct progress *pg, uint64_t total);
/* Stops, and clears the line if one was shown. */
void progress_end(struct progress *pg);

#endif
