/* SPDX-License-Identifier: MIT */
/* The pre-check of the profile fuzzers (h5walk in a child) and their check for HDF5 objects left
 * open. */
#define _GNU_SOURCE
#include "h5check.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The HDF5 library trusts the metadata of the files it opens: some damaged
 * files crash it (Debian's 1.10.8 reads out of bounds on a forged heap or
 * object header), whatever its caller does. Those are not findings of
 * scope's code, so before the code under test sees an input, the pre-check
 * hands it to h5walk, an HDF5 program (with ASan, without coverage) that
 * makes every HDF5 call the reader and the merge make on the file, in a
 * child of its own: when that child dies, hangs or allocates past 2 GiB,
 * the input breaks libhdf5 alone and is skipped, counted, and kept in
 * $FUZZ_HDF5_DIR (at most 50) for the record. Every input that libhdf5
 * survives goes on to the code under ASan: a finding there is scope's, or
 * a libhdf5 bug the pre-check missed, which fuzz.py tells apart by its
 * stack.
 *
 * This file is built without coverage instrumentation: a skipped input
 * then shows libFuzzer no new coverage and never enters the corpus.
 * (libFuzzer 14 ignores a -1 from the target.)
 */

static const char *who = "fuzz";
static char path[PATH_MAX];
static int fd = -1;
static int walk_in = -1, walk_out = -1; /* to h5walk, from it */
static unsigned long runs, crashed, hung, kept;

static void report(void)
{
	if (walk_in >= 0)
		fprintf(stderr,
			"%s: %lu inputs; in the pre-check, %lu crashed libhdf5 itself and %lu hung "
			"it (skipped, %lu kept)\n",
			who, runs, crashed, hung, kept);
	if (fd >= 0)
		unlink(path);
}

/* Our environment without the sanitizers' options: h5walk keeps its own. */
static char **walk_env(void)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 1, sizeof *env);
	for (size_t i = 0; env && i < n; i++)
		if (strncmp(environ[i], "ASAN_OPTIONS=", 13) &&
		    strncmp(environ[i], "LSAN_OPTIONS=", 13))
			env[k++] = environ[i];
	return env;
}

/* Starts h5walk --serve with a pipe each way. */
static int start_walk(const char *prog)
{
	char *argv[] = {(char *)prog, "--serve", NULL}, **env = walk_env();
	int in[2], out[2];
	pid_t pid;

	if (!env || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execve(prog, argv, env);
		_exit(127);
	}
	free(env);
	close(in[0]);
	close(out[1]);
	walk_in = in[1];
	walk_out = out[0];
	return 0;
}

const char *h5check_init(const char *name)
{
	const char *dir = getenv("TMPDIR"), *walk = getenv("FUZZ_H5WALK");

	who = name;
	snprintf(path, sizeof path, "%s/%s-%d-XXXXXX", dir && *dir ? dir : "/tmp", name,
		 (int)getpid());
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
		exit(1);
	}
	if (walk && *walk && start_walk(walk) != 0) {
		fprintf(stderr, "%s: cannot start %s: %s\n", who, walk, strerror(errno));
		exit(1);
	}
	signal(SIGPIPE, SIG_IGN);
	atexit(report);
	return path;
}

/* Keeps an input that crashed libhdf5, named by its run number. */
static void keep(const uint8_t *data, size_t size)
{
	const char *dir = getenv("FUZZ_HDF5_DIR");
	char name[PATH_MAX];
	FILE *f;

	if (!dir || !*dir || kept >= 50)
		return;
	snprintf(name, sizeof name, "%s/hdf5-%d-%lu", dir, (int)getpid(), runs);
	f = fopen(name, "wb");
	if (!f)
		return;
	fwrite(data, 1, size, f);
	fclose(f);
	kept++;
}

/* Writes all of buf, through the interruptions of libFuzzer's timer. */
static int write_all(int to, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(to, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one line (without its newline) into buf. */
static int read_line(int from, char *buf, size_t cap)
{
	size_t len = 0;

	while (len + 1 < cap) {
		ssize_t n = read(from, buf + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return 0;
}

/* Whether libhdf5 survives the file: h5walk answers "ok" or why not
 * ("signal N", "timeout", "exit N"). */
static int hdf5_survives(void)
{
	char req[PATH_MAX + 2], line[64];

	if (walk_in < 0)
		return 1;
	snprintf(req, sizeof req, "%s\n", path);
	if (write_all(walk_in, req, strlen(req)) != 0 ||
	    read_line(walk_out, line, sizeof line) != 0) {
		fprintf(stderr, "%s: h5walk stopped answering\n", who);
		abort();
	}
	if (strcmp(line, "ok") == 0)
		return 1;
	if (strcmp(line, "timeout") == 0)
		hung++;
	else
		crashed++;
	return 0;
}

int h5check_input(const uint8_t *data, size_t size)
{
	runs++;
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
		abort();
	}
	if (hdf5_survives())
		return 1;
	keep(data, size);
	return 0;
}

void h5check_all_closed(const char *code, const char *why)
{
	ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);

	if (n != 0) {
		fprintf(stderr,
			"%s: %s left %zd HDF5 objects open (files %zd, groups %zd, datasets %zd, "
			"types %zd, attributes %zd); it said: %s\n",
			who, code, n, H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_GROUP),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATASET),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATATYPE),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ATTR), why);
		abort();
	}
}
