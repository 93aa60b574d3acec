/* SPDX-License-Identifier: MIT */
/* One profile per MPI job: each rank writes its own, the last to finish merges them all. */
#define _GNU_SOURCE
#include "job.h"

#include "collect.h"

#include <scope/launcher.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int env_int(const char *const *names, size_t n, int fallback)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return fallback;
}

int job_detect(struct job *j, const char *output)
{
	static const char *const ranks[] = {SCOPE_RANK_VARS};
	static const char *const sizes[] = {SCOPE_SIZE_VARS};

	memset(j, 0, sizeof *j);
	j->rank = env_int(ranks, sizeof ranks / sizeof *ranks, -1);
	j->size = env_int(sizes, sizeof sizes / sizeof *sizes, 0);
	if (j->rank < 0 || j->size < 2)
		return 0;
	if (snprintf(j->dir, sizeof j->dir, "%s.ranks", output) >= (int)sizeof j->dir ||
	    snprintf(j->rank_file, sizeof j->rank_file, "%.*s/rank-%06d.h5", PATH_MAX - 32, j->dir,
		     j->rank) >= (int)sizeof j->rank_file) {
		fprintf(stderr, "scope-run: %s: path too long\n", output);
		return -1;
	}
	if (mkdir(j->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "scope-run: cannot make %s for the job's ranks: %s\n", j->dir,
			strerror(errno));
		return -1;
	}
	return 1;
}

int job_finish(const struct job *j, const char *output, const char *bindir)
{
	char lock[PATH_MAX + 16], merge[PATH_MAX + 32];
	char size[16];
	char *argv[] = {merge, "--parts", (char *)j->dir, "--ranks",
			size,  "-o",	  (char *)output, NULL};
	int fd;

	if (count_h5(j->dir, "rank-", NULL, 0) < j->size)
		return 0; /* a rank still running will merge */
	snprintf(lock, sizeof lock, "%s/merging", j->dir);
	fd = open(lock, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0)
		return 0; /* another rank found them all at the same moment */
	close(fd);
	snprintf(merge, sizeof merge, "%s/scope-merge", bindir);
	snprintf(size, sizeof size, "%d", j->size);
	if (run_tool(merge, argv) != 0) {
		fprintf(stderr,
			"scope-run: the ranks' profiles are kept in %s (merge them with: "
			"scope-merge --parts %s -o %s)\n",
			j->dir, j->dir, output);
		unlink(lock);
		return -1;
	}
	unlink(lock);
	rmdir(j->dir);
	return 0;
}
