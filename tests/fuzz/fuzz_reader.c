/* SPDX-License-Identifier: MIT */
/* libFuzzer harness of the profile reader: each input goes to a file that rd_check reads whole,
 * then through the raw reads scope-merge and scope-symbolize make. */
#define _GNU_SOURCE
#include "reader.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The HDF5 library trusts the metadata of the files it opens: some damaged
 * files crash it (Debian's 1.10.8 reads out of bounds on a forged heap or
 * object header), whatever the reader does. Those are not findings of the
 * reader, so before rd_check sees an input, a pre-check hands it to h5walk,
 * an HDF5 program (with ASan, without coverage) that makes every HDF5 call
 * the reader makes on the file, in a child of its own: when that child
 * dies, hangs or allocates past 2 GiB, the input breaks libhdf5 alone and
 * is skipped, counted, and kept in $FUZZ_HDF5_DIR (at most 50) for the
 * record. Every input that libhdf5 survives goes on to rd_check under ASan:
 * a finding there is the reader's, or a libhdf5 bug the pre-check missed,
 * which fuzz.py tells apart by its stack.
 *
 * FUZZ_H5WALK names h5walk; without it there is no pre-check.
 *
 * This file is built without coverage instrumentation (only the reader is
 * instrumented): a skipped input then shows libFuzzer no new coverage and
 * never enters the corpus. (libFuzzer 14 ignores a -1 from the target.)
 */

static char path[PATH_MAX];
static int fd = -1;
static int walk_in = -1, walk_out = -1; /* to h5walk, from it */
static unsigned long runs, crashed, hung, kept;

static void report(void)
{
	if (walk_in >= 0)
		fprintf(stderr,
			"fuzz_reader: %lu inputs; in the pre-check, %lu crashed libhdf5 itself and "
			"%lu hung it (skipped, %lu kept)\n",
			runs, crashed, hung, kept);
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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR"), *walk = getenv("FUZZ_H5WALK");

	(void)argc;
	(void)argv;
	snprintf(path, sizeof path, "%s/fuzz_reader-%d-XXXXXX", dir && *dir ? dir : "/tmp",
		 (int)getpid());
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "fuzz_reader: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (walk && *walk && start_walk(walk) != 0) {
		fprintf(stderr, "fuzz_reader: cannot start %s: %s\n", walk, strerror(errno));
		exit(1);
	}
	signal(SIGPIPE, SIG_IGN);
	atexit(report);
	return 0;
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
		fprintf(stderr, "fuzz_reader: h5walk stopped answering\n");
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

/* The reader must close every HDF5 object it opens, on every path: one left
 * open keeps the file open, and the next file at the same path would be
 * read through the stale one. */
static void expect_all_closed(const char *why)
{
	ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);

	if (n != 0) {
		fprintf(stderr,
			"fuzz_reader: rd_check left %zd HDF5 objects open (files %zd, groups %zd, "
			"datasets %zd, types %zd, attributes %zd); it said: %s\n",
			n, H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_GROUP),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATASET),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_DATATYPE),
			H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ATTR), why);
		abort();
	}
}

/*
 * What scope-merge and scope-symbolize read besides: the modules, each
 * /events column raw at its stored width, and the copy of a group into
 * another file (an HDF5 file in memory here).
 */
static void raw_reads(void)
{
	char err[RD_ERR_MAX];
	struct rd_profile *p = rd_open(path, err, sizeof err);
	struct rd_module *mods = NULL;
	size_t nmods = 0;
	hid_t fapl, to;

	if (!p)
		return;
	if (rd_check_events(p, RD_CHECKED) == 0) {
		for (int col = 0; col < SC_NEV; col++) {
			int width = rd_event_width(p, col);
			uint64_t rows = p->nevents < 4096 ? p->nevents : 4096;
			uint64_t buf[4096];
			if (width > 0)
				rd_event_rows(p, col, 0, rows, width, buf);
		}
	}
	if (rd_modules(p, &mods, &nmods) == 0)
		rd_modules_free(mods, nmods);
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
	    (to = H5Fcreate("copy.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0) {
		if (rd_has(p, "/" SC_METADATA))
			rd_copy(p, "/" SC_METADATA, to, SC_METADATA);
		H5Fclose(to);
	}
	if (fapl >= 0)
		H5Pclose(fapl);
	rd_close(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[RD_ERR_MAX];

	runs++;
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		fprintf(stderr, "fuzz_reader: %s: %s\n", path, strerror(errno));
		abort();
	}
	if (!hdf5_survives()) {
		keep(data, size);
		return 0;
	}
	if (rd_check(path, err, sizeof err) == 0)
		raw_reads();
	expect_all_closed(err);
	return 0;
}
