/* SPDX-License-Identifier: MIT */
/* One profile per MPI job: each rank's profile waits beside the output, the last one merges. */
#define _GNU_SOURCE
#include "ranks.h"

#include <scope/launcher.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The launcher's name for this job, reduced to characters safe in a file
 * name: ranks of an earlier job with the same output count apart. */
static void job_id(char *out, size_t cap)
{
	static const char *const vars[] = {SCOPE_JOB_VARS};
	const char *v = NULL, *step = getenv("SLURM_STEP_ID");
	size_t i;

	for (i = 0; i < sizeof vars / sizeof *vars && !(v && *v); i++)
		v = getenv(vars[i]);
	out[0] = '\0';
	if (!v || !*v)
		return;
	if (strcmp(vars[i - 1], "SLURM_JOB_ID") == 0 && step && *step)
		snprintf(out, cap, "%s.%s", v, step);
	else
		snprintf(out, cap, "%s", v);
	for (char *c = out; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-')
			*c = '_';
}

int job_init(struct job *j, const char *output, int rank, int size, const char *who)
{
	memset(j, 0, sizeof *j);
	j->rank = rank;
	j->size = size;
	job_id(j->id, sizeof j->id);
	if (rank < 0 || size < 2)
		return 0;
	if (snprintf(j->dir, sizeof j->dir, "%s.ranks", output) >= (int)sizeof j->dir ||
	    snprintf(j->rank_file, sizeof j->rank_file, "%.*s/rank-%06d.h5", PATH_MAX - 32, j->dir,
		     rank) >= (int)sizeof j->rank_file) {
		fprintf(stderr, "%s: %s: path too long\n", who, output);
		return -1;
	}
	if (mkdir(j->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: cannot make %s for the job's ranks: %s\n", who, j->dir,
			strerror(errno));
		return -1;
	}
	return 1;
}

int run_tool(const char *path, char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, path, NULL, NULL, argv, environ) != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int count_h5(const char *dir, const char *prefix, char *first, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t plen = strlen(prefix);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l <= 3 || strcmp(e->d_name + l - 3, ".h5") != 0 ||
		    strncmp(e->d_name, prefix, plen) != 0)
			continue;
		if (n++ == 0 && first)
			snprintf(first, cap, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n;
}

/*
 * How many ranks have published their profile, this one included: each
 * links a name of its own to the job's counter file, and the counter's
 * link count says how many did. link() is atomic on every filesystem, NFS
 * included, and its reply carries the count fresh from the server, where a
 * directory listing may be minutes old on a client; it is also one call
 * where a listing reads every rank's entry. Without hard links, a listing.
 */
static int arrivals(const struct job *j)
{
	char counter[PATH_MAX + 96], mine[PATH_MAX + 128];
	struct stat st;
	int fd;

	snprintf(counter, sizeof counter, "%s/arrivals%s%s", j->dir, j->id[0] ? "-" : "", j->id);
	snprintf(mine, sizeof mine, "%s/arrived-%s%s%06d", j->dir, j->id, j->id[0] ? "-" : "",
		 j->rank);
	fd = open(counter, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
	if (fd < 0 || (link(counter, mine) != 0 && errno != EEXIST) || stat(counter, &st) != 0)
		return count_h5(j->dir, "rank-", NULL, 0);
	return (int)st.st_nlink - 1;
}

void job_forget(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 300];

	while (d && (e = readdir(d)) != NULL)
		if ((strcmp(e->d_name, "merging") == 0 || strncmp(e->d_name, "arrivals", 8) == 0 ||
		     strncmp(e->d_name, "arrived-", 8) == 0) &&
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
			unlink(path);
	if (d)
		closedir(d);
}

int job_finish(const struct job *j, const char *output, job_merge_fn merge, const char *who)
{
	char lock[PATH_MAX + 16], err[1024];
	int fd;

	if (arrivals(j) < j->size)
		return 0; /* a rank still running will merge */
	snprintf(lock, sizeof lock, "%s/merging", j->dir);
	fd = open(lock, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0)
		return 0; /* another rank found them all at the same moment */
	close(fd);
	if (merge(j->dir, j->size, output, who, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		fprintf(stderr,
			"%s: the ranks' profiles are kept in %s (merge them with: "
			"scope-merge --parts %s -o %s)\n",
			who, j->dir, j->dir, output);
		unlink(lock);
		return -1;
	}
	job_forget(j->dir);
	rmdir(j->dir);
	return 0;
}
