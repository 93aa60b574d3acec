/* SPDX-License-Identifier: MIT */
/* A line of progress on standard error, drawn by a thread of its own while the work goes on. */
#define _GNU_SOURCE
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Atomic uint64_t progress_work;

#define REFRESH_NS 250000000L /* a quarter of a second between redraws */

/* SCOPE_PROGRESS: "off" (-1), or the seconds before the line shows; default 1. */
static double progress_after(void)
{
	const char *v = getenv("SCOPE_PROGRESS");
	char *end;
	double s;

	if (!v || !*v)
		return 1;
	if (strcmp(v, "off") == 0)
		return -1;
	s = strtod(v, &end);
	return *end || s < 0 || s != s ? 1 : s;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void draw(struct progress *pg, double seconds)
{
	uint64_t done = atomic_load_explicit(&progress_work, memory_order_relaxed) - pg->base;
	uint64_t total = atomic_load(&pg->total);
	char pct[16] = "";

	if (total) /* the units are estimates: never past 99% before the end */
		snprintf(pct, sizeof pct, " %d%%",
			 done >= total ? 99 : (int)((long double)done * 100 / (long double)total));
	fprintf(stderr, "\r%s:%s (%.0f s)\033[K", pg->line, pct, seconds);
	fflush(stderr);
	pg->shown = 1;
}

static void *run(void *arg)
{
	struct progress *pg = arg;
	double start = now();
	struct timespec until;

	pthread_mutex_lock(&pg->mu);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)pg->after;
	until.tv_nsec += (long)((pg->after - (double)(time_t)pg->after) * 1e9);
	if (pg->shown) /* drawn at the start already */
		until.tv_nsec += REFRESH_NS;
	for (;;) {
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		while (!pg->stop && pthread_cond_timedwait(&pg->cv, &pg->mu, &until) != ETIMEDOUT)
			;
		if (pg->stop)
			break;
		draw(pg, now() - start);
		until.tv_nsec += REFRESH_NS;
	}
	pthread_mutex_unlock(&pg->mu);
	return NULL;
}

int progress_wanted(int quiet)
{
	return !quiet && progress_after() >= 0 && isatty(STDERR_FILENO);
}

void progress_start(struct progress *pg, const char *prog, const char *what, uint64_t total,
		    int quiet)
{
	memset(pg, 0, sizeof *pg);
	snprintf(pg->line, sizeof pg->line, "%s: %s", prog, what);
	pg->base = atomic_load(&progress_work);
	atomic_store(&pg->total, total);
	pg->after = progress_after();
	if (!progress_wanted(quiet))
		return;
	/* At once means before the work, not whenever the thread that redraws
	 * it is first scheduled: work of a few milliseconds on a busy machine
	 * would end before that. */
	if (pg->after == 0)
		draw(pg, 0);
	pthread_mutex_init(&pg->mu, NULL);
	pthread_cond_init(&pg->cv, NULL);
	pg->on = pthread_create(&pg->thread, NULL, run, pg) == 0;
	if (!pg->on && pg->shown) {
		fputs("\r\033[K", stderr);
		pg->shown = 0;
	}
}

void progress_total(struct progress *pg, uint64_t total)
{
	atomic_store(&pg->total, total);
}

void progress_end(struct progress *pg)
{
	if (!pg->on)
		return;
	pthread_mutex_lock(&pg->mu);
	pg->stop = 1;
	pthread_cond_signal(&pg->cv);
	pthread_mutex_unlock(&pg->mu);
	pthread_join(pg->thread, NULL);
	if (pg->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	pthread_mutex_destroy(&pg->mu);
	pthread_cond_destroy(&pg->cv);
	pg->on = 0;
}
