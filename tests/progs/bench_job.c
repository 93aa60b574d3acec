/* SPDX-License-Identifier: MIT */
/* A job for scope-bench whose behaviour its arguments decide: how long it naps, what it writes
 * relative to its working directory (refusing to run where outputs exist), what it needs to find
 * there, whether it fails, how much memory its children hold at once, whether one run is slower
 * than the rest, and a trace of each run appended to a file outside. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

/* One line to the trace: "WHAT PID CWD ARGS..." and the monotonic time, so
 * that a test sees the runs' order and that none overlapped another. */
NOINLINE static void trace(const char *path, const char *what, int argc, char **argv)
{
	char cwd[4096], line[8192];
	struct timespec ts;
	int fd, len;

	if (!path)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, "?");
	len = snprintf(line, sizeof line, "%s %ld.%09ld %d %s", what, (long)ts.tv_sec,
		       (long)ts.tv_nsec, (int)getpid(), cwd);
	for (int i = 1; i < argc && len < (int)sizeof line - 2; i++)
		len += snprintf(line + len, sizeof line - (size_t)len, " %s", argv[i]);
	len += snprintf(line + len, sizeof line - (size_t)len, "\n");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0 || write(fd, line, (size_t)len) != len)
		exit(9);
	close(fd);
}

NOINLINE static void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* out/result.bin of exactly bytes bytes; a run that finds out/ there
 * already (another run's output) fails with 4. */
NOINLINE static void write_outputs(long bytes)
{
	static char block[4096];
	int fd;

	if (mkdir("out", 0755) != 0) {
		fprintf(stderr, "bench_job: out/: %s\n", strerror(errno));
		exit(4);
	}
	fd = open("out/result.bin", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0)
		exit(4);
	memset(block, 'x', sizeof block);
	while (bytes > 0) {
		size_t n = bytes < (long)sizeof block ? (size_t)bytes : sizeof block;
		if (write(fd, block, n) != (ssize_t)n)
			exit(4);
		bytes -= (long)n;
	}
	close(fd);
}

/* The staged input, relative to the working directory: 6 when missing. */
NOINLINE static void need(const char *name)
{
	char buf[256];
	int fd = open(name, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "bench_job: %s: %s\n", name, strerror(errno));
		exit(6);
	}
	if (read(fd, buf, sizeof buf) < 0)
		exit(6);
	close(fd);
}

/* n children alive at once, each with mib MiB resident for 300 ms: the
 * process tree's peak is their sum, far above any one process's. */
NOINLINE static void children(int n, long mib)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			char *block = malloc((size_t)mib << 20);
			if (!block)
				_exit(7);
			memset(block, i + 1, (size_t)mib << 20);
			nap(300);
			_exit(block[mib] == i + 1 ? 0 : 7);
		}
		if (pid < 0)
			exit(7);
	}
	for (int i = 0; i < n; i++) {
		int status;
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			exit(7);
	}
}

/* The first run that finds no path naps ms longer (and makes path): one
 * slow repeat among fast ones. */
NOINLINE static void slow_once(const char *path, long ms)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd >= 0) {
		close(fd);
		nap(ms);
	}
}

int main(int argc, char **argv)
{
	const char *trace_path = getenv("BENCH_JOB_TRACE");
	long sleep_ms = 0, bytes = -1, hold = 0;
	int fail = 0, nchildren = 0;

	trace(trace_path, "begin", argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sleep") == 0 && i + 1 < argc)
			sleep_ms = atol(argv[++i]);
		else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc)
			bytes = atol(argv[++i]);
		else if (strcmp(argv[i], "--need") == 0 && i + 1 < argc)
			need(argv[++i]);
		else if (strcmp(argv[i], "--fail") == 0)
			fail = 1;
		else if (strcmp(argv[i], "--children") == 0 && i + 2 < argc) {
			nchildren = atoi(argv[++i]);
			hold = atol(argv[++i]);
		} else if (strcmp(argv[i], "--slow-once") == 0 && i + 1 < argc)
			slow_once(argv[++i], 1000);
	}
	if (getenv("BENCH_JOB_FAIL"))
		fail = 1;
	nap(sleep_ms);
	if (nchildren > 0)
		children(nchildren, hold);
	if (bytes >= 0)
		write_outputs(bytes);
	trace(trace_path, "end", argc, argv);
	printf("bench_job done\n");
	return fail ? 5 : 0;
}
