/* SPDX-License-Identifier: MIT */
/*
 * A program in unfriendly surroundings: it gives up root, lowers its
 * descriptor limit, overflows its stack, fails to exec again and again, or
 * loses its parent at once. It prints what it did as "calls work=N main=1"
 * so the check compares the profile with the program's truth.
 * Usage: r_env MODE [ARGS...]; modes are listed in main().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

static unsigned long nwork;
volatile unsigned long env_sink;

NOINLINE void work(void)
{
	nwork++;
	env_sink++;
}

NOINLINE void works(long n)
{
	for (long i = 0; i < n; i++)
		work();
}

/* Recurses until the stack is gone: each level holds a page. */
NOINLINE void dive(unsigned long depth)
{
	volatile char page[4096];
	page[0] = (char)depth;
	env_sink += (unsigned long)page[0];
	dive(depth + 1);
	env_sink += (unsigned long)page[1];
}

static void report(void)
{
	printf("pid=%d calls work=%lu main=1\n", (int)getpid(), nwork);
	fflush(stdout);
}

/* Arenas this process still maps or holds open: its own one, and any it
 * failed to let go of. */
static void count_arenas(void)
{
	char line[4096], path[64], target[4096];
	FILE *maps = fopen("/proc/self/maps", "r");
	DIR *fds = opendir("/proc/self/fd");
	struct dirent *e;
	int mapped = 0, open_fds = 0;

	while (maps && fgets(line, sizeof line, maps))
		mapped += strstr(line, ".arena") != NULL;
	while (fds && (e = readdir(fds)) != NULL) {
		ssize_t n;
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof target - 1);
		if (n > 0) {
			target[n] = '\0';
			open_fds += strstr(target, ".arena") != NULL;
		}
	}
	if (maps)
		fclose(maps);
	if (fds)
		closedir(fds);
	printf("arena mappings=%d descriptors=%d\n", mapped, open_fds);
}

/* Waits up to ms for a store in dir (the run's writer copies full chunks
 * there while the program runs), then prints the arena this process maps
 * and the stores in dir, or "store=none". */
static void where(const char *dir, long ms)
{
	char line[4096], *path;
	FILE *maps;
	int found = 0;

	for (long waited = 0; !found; waited += 10) {
		DIR *d = opendir(dir);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			size_t l = strlen(e->d_name);
			if (l > 6 && strcmp(e->d_name + l - 6, ".store") == 0) {
				printf("store=%s\n", e->d_name);
				found = 1;
			}
		}
		if (d)
			closedir(d);
		if (found || waited >= ms)
			break;
		nanosleep(&(struct timespec){0, 10 * 1000000}, NULL);
	}
	if (!found)
		printf("store=none\n");
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof line, maps))
		if (strstr(line, ".arena") && (path = strchr(line, '/'))) {
			path[strcspn(path, "\n")] = '\0';
			printf("arena=%s\n", path);
			break;
		}
	if (maps)
		fclose(maps);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 1000;

	if (strcmp(mode, "plain") == 0) {
		works(n);
	} else if (strcmp(mode, "drop") == 0) {
		/* drop N: N calls as root, then N more as nobody */
		works(n);
		if (setgid(65534) != 0 || setuid(65534) != 0) {
			perror("r_env: cannot become nobody");
			return 3;
		}
		works(n);
	} else if (strcmp(mode, "nofile") == 0) {
		/* nofile N SOFT HARD: a descriptor limit the program sets itself */
		struct rlimit rl = {(rlim_t)atol(argv[3]), (rlim_t)atol(argv[4])};
		works(n);
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			perror("r_env: setrlimit");
			return 3;
		}
	} else if (strcmp(mode, "overflow") == 0) {
		works(n);
		dive(0);
	} else if (strcmp(mode, "execfail") == 0) {
		/* execfail N K: K execs that fail, between calls */
		char *args[] = {"/nonexistent/program", NULL};
		for (long k = atol(argv[3]); k > 0; k--) {
			works(n);
			execv(args[0], args);
		}
		count_arenas();
	} else if (strcmp(mode, "forks") == 0) {
		/* forks N K: K children make N calls each and exit; the parent,
		 * once they have, rests half a second, then makes N calls */
		for (long k = atol(argv[3]); k > 0; k--) {
			pid_t pid = fork();
			if (pid < 0)
				return 3;
			if (pid == 0) {
				works(n);
				report();
				exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
		nanosleep(&(struct timespec){0, 500 * 1000000}, NULL);
		works(n);
	} else if (strcmp(mode, "where") == 0) {
		/* where N DIR MS: N calls, then where the arena and its store are */
		works(n);
		where(argv[3], atol(argv[4]));
	} else if (strcmp(mode, "tunables") == 0) {
		/* tunables N: N calls, and the C library tunables the program was given */
		const char *t = getenv("GLIBC_TUNABLES");
		works(n);
		if (t)
			printf("GLIBC_TUNABLES=%s\n", t);
	} else if (strcmp(mode, "orphan") == 0) {
		/* orphan N: the parent dies by SIGKILL at once; the child works */
		pid_t pid = fork();
		if (pid < 0)
			return 3;
		if (pid > 0)
			kill(getpid(), SIGKILL);
		nanosleep(&(struct timespec){0, 50 * 1000000}, NULL);
		works(n);
		printf("parent=%d ", (int)getppid());
	} else {
		fprintf(stderr, "usage: r_env "
				"plain|drop|nofile|overflow|execfail|forks|where|tunables|orphan N "
				"[...]\n");
		return 2;
	}
	report();
	return 0;
}
