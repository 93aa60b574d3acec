/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD helper for bench/run: writes the time at which the program's main returned. */
//
// Build: cc -O2 -shared -fPIC -o stamp.so stamp.c -ldl
// Use:   BENCH_STAMP=FILE BENCH_STAMP_PROG=NAME LD_PRELOAD=./stamp.so ./prog
// It wraps __libc_start_main to learn main and, when main returns (or the program calls
// exit), writes CLOCK_REALTIME in ns to FILE, before any exit handler or destructor runs
// (so before a profiler's exit path). Only a process whose short name is NAME writes, so a
// wrapper that inherits LD_PRELOAD (uftrace, scope-run) does not overwrite the stamp; and
// only the first such process: it takes BENCH_STAMP out of its environment, so a program it
// runs does not write, and a child it forks does not either (the stamp of a program that
// forks or runs others is its first process's).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
			void *);

static main_fn real_main;
static int stamped;
static char *stamp_path; /* set in the process that writes the stamp */
static pid_t stamp_pid;

/* Whether this process writes the stamp; if so, its children will not. */
static void claim(void)
{
	const char *path = getenv("BENCH_STAMP");
	const char *want = getenv("BENCH_STAMP_PROG");
	if (!path || (want && strcmp(want, program_invocation_short_name) != 0))
		return;
	stamp_path = strdup(path);
	stamp_pid = getpid();
	unsetenv("BENCH_STAMP");
}

static void write_stamp(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (stamped)
		return;
	stamped = 1;
	if (!stamp_path || getpid() != stamp_pid)
		return;
	FILE *f = fopen(stamp_path, "w");
	if (f) {
		fprintf(f, "%lld\n", (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
		fclose(f);
	}
}

static int wrapped_main(int argc, char **argv, char **envp)
{
	int rc = real_main(argc, argv, envp);
	write_stamp();
	return rc;
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	start_fn next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	claim();
	return next(wrapped_main, argc, argv, init, fini, rtld_fini, stack_end);
}

void exit(int status)
{
	void (*next)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	write_stamp();
	next(status);
	abort(); /* not reached */
}
