/* SPDX-License-Identifier: MIT */
/* The resident memory of a run's whole process tree, summed and sampled while it runs. */
#define _GNU_SOURCE
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Short enough to catch a phase of a run that lasts a few tens of
 * milliseconds; each sample reads two small files per process. */
#define SAMPLE_MS 10

struct tree_sampler {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int stop;
	pid_t skip;
	uint64_t peak;
	long page;
};

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static uint64_t resident(const struct tree_sampler *s, pid_t pid)
{
	char path[64], buf[256];
	unsigned long long size, rss;

	snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0 || sscanf(buf, "%llu %llu", &size, &rss) != 2)
		return 0;
	return (uint64_t)rss * (uint64_t)s->page;
}

/* The resident bytes of pid's children and all below them, but skip's. */
static uint64_t below(const struct tree_sampler *s, pid_t pid, int depth)
{
	char path[320], buf[4096];
	DIR *d;
	struct dirent *e;
	uint64_t sum = 0;

	/* a chain of processes this deep is a fork bomb, not a run to measure */
	if (depth > 64)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *p, *end;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)pid, e->d_name);
		if (read_small(path, buf, sizeof buf) <= 0)
			continue;
		for (p = buf;; p = end) {
			long child = strtol(p, &end, 10);
			if (end == p)
				break;
			if (child == s->skip)
				continue;
			sum += resident(s, (pid_t)child) + below(s, (pid_t)child, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

static void *sample(void *arg)
{
	struct tree_sampler *s = arg;
	struct timespec at;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		uint64_t now;
		pthread_mutex_unlock(&s->lock);
		now = below(s, getpid(), 0);
		pthread_mutex_lock(&s->lock);
		if (now > s->peak)
			s->peak = now;
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_nsec += SAMPLE_MS * 1000000L;
		if (at.tv_nsec >= 1000000000L) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000L;
		}
		while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct tree_sampler *tree_sampler_start(pid_t skip)
{
	struct tree_sampler *s = calloc(1, sizeof *s);
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	s->skip = skip;
	s->page = sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&s->thread, NULL, sample, s) != 0) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

uint64_t tree_sampler_stop(struct tree_sampler *s)
{
	uint64_t peak;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	peak = s->peak;
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return peak;
}
