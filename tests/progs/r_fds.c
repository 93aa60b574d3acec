/* SPDX-License-Identifier: MIT */
/*
 * Descriptor hygiene, as daemons practise it: close every descriptor from
 * 3 to 1023 at start-up, or dup2 /dev/null over the low numbers, then open
 * a file of the program's own (which gets the lowest free number, maybe one
 * the profiler had) and make enough calls to fill several recording chunks.
 *
 * Usage: r_fds closeall|dup2|plain FILE N (plain leaves the descriptors alone). Writes "hello\n"
 * into FILE, calls work() N times, checks FILE still holds exactly "hello\n", prints "calls work=N"
 * and "FILE size=S". r_fds listfds prints the descriptors above 2 it was started with (what an
 * exec'd program inherits).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progs.h"

volatile unsigned long fds_sink;
static unsigned long n_work;

NOINLINE void work(void)
{
	n_work++;
	fds_sink++;
}

static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 1;
	while ((e = readdir(d)) != NULL) {
		char path[64], target[4096];
		int fd = atoi(e->d_name);
		ssize_t k;
		if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		k = readlink(path, target, sizeof target - 1);
		target[k > 0 ? k : 0] = '\0';
		printf("inherited fd %d -> %s\n", fd, target);
		n++;
	}
	closedir(d);
	printf("inherited fds=%d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct stat st;
	int fd;

	if (strcmp(mode, "listfds") == 0)
		return list_fds();
	if (strcmp(mode, "exec-listfds") == 0) {
		/* What a program this one execs inherits. */
		execl("/proc/self/exe", argv[0], "listfds", (char *)NULL);
		return 127;
	}
	if (argc != 4)
		goto usage;
	if (strcmp(mode, "closeall") == 0) {
		for (int i = 3; i < 1024; i++)
			close(i);
	} else if (strcmp(mode, "dup2") == 0) {
		int null = open("/dev/null", O_RDWR);
		for (int i = 3; i < 16; i++)
			if (i != null)
				dup2(null, i);
		if (null >= 16)
			close(null);
	} else if (strcmp(mode, "plain") != 0) {
		goto usage;
	}
	/* The program's own file, at the lowest free number. */
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "hello\n", 6) != 6)
		return 1;
	long n = atol(argv[3]);
	for (long i = 0; i < n; i++)
		work();
	if (fstat(fd, &st) != 0)
		return 1;
	printf("own file fd=%d size=%lld\n", fd, (long long)st.st_size);
	close(fd);
	printf("calls work=%lu\n", n_work);
	return 0;
usage:
	fprintf(stderr, "usage: %s closeall|dup2|plain FILE N | listfds | exec-listfds\n", argv[0]);
	return 64;
}
