/* SPDX-License-Identifier: MIT */
/* Fork-heavy benchmark for scope: a parent that forks children, or runs itself through system(). */
//
// Build it with -O2 -g -finstrument-functions -fno-optimize-sibling-calls.
// Usage: forks fork [CHILDREN [CALLS [PARENT_CALLS]]]   (defaults: 50, 10000, 100000)
//        forks system [RUNS [CALLS [PARENT_CALLS]]]     (defaults: 5, 100000, 100000)
//        forks child CALLS
// fork: the parent forks CHILDREN children, each making CALLS calls of a leaf function and
// exiting, while the parent makes PARENT_CALLS calls of its own; then it waits for them all.
// system: the parent runs "forks child CALLS" RUNS times with system(), one after another,
// and makes PARENT_CALLS calls after each (PARENT_CALLS / RUNS each).
// Every instrumented call is counted in the process that makes it (a forked child counts
// only the calls it enters after the fork); the total over all processes is printed on
// stdout as "calls=...".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINSTR __attribute__((no_instrument_function))

__attribute__((noinline, noclone)) unsigned leaf(unsigned x)
{
	return x * 2654435761u + 1u;
}

/* calls + 1 instrumented calls: itself and its leaves. */
__attribute__((noinline, noclone)) unsigned work(unsigned long calls, unsigned seed)
{
	unsigned acc = seed;
	for (unsigned long i = 0; i < calls; i++)
		acc += leaf(acc + (unsigned)i);
	return acc;
}

/* One forked child: work, then exit from the frame the parent entered.
 * Not instrumented, so the child's count is exactly work's. */
static NOINSTR void child(unsigned long calls, unsigned seed)
{
	unsigned acc = work(calls, seed);
	exit(acc == 0xdeadbeefu ? 3 : 0);
}

static NOINSTR int wait_all(int n)
{
	int bad = 0, status;
	for (int i = 0; i < n; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad++;
	}
	return bad;
}

/* fork: instrumented calls = 1 (main) + 1 (run_forks) + children * (calls + 1)
 * + children * (parent_calls / children + 1). */
__attribute__((noinline, noclone)) int run_forks(int children, unsigned long calls,
						 unsigned long parent_calls)
{
	unsigned acc = 0;
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("forks: fork");
			return -1;
		}
		if (pid == 0)
			child(calls, (unsigned)i);
		acc += work(parent_calls / (unsigned long)children, acc);
	}
	if (wait_all(children) != 0) {
		fprintf(stderr, "forks: a child failed\n");
		return -1;
	}
	return (int)(acc & 1);
}

/* system: instrumented calls = 1 (main) + 1 (run_system) + runs * (calls + 2) in the
 * children (main, work, leaves) + runs * (parent_calls / runs + 1) in the parent. */
__attribute__((noinline, noclone)) int run_system(const char *self, int runs, unsigned long calls,
						  unsigned long parent_calls)
{
	char cmd[4096];
	unsigned acc = 0;
	if (snprintf(cmd, sizeof cmd, "'%s' child %lu", self, calls) >= (int)sizeof cmd ||
	    strchr(self, '\'')) {
		fprintf(stderr, "forks: cannot quote the program's path %s\n", self);
		return -1;
	}
	for (int i = 0; i < runs; i++) {
		int status = system(cmd);
		if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "forks: '%s' failed (status %d)\n", cmd, status);
			return -1;
		}
		acc += work(parent_calls / (unsigned long)runs, acc);
	}
	return (int)(acc & 1);
}

static NOINSTR unsigned long arg(int argc, char **argv, int i, unsigned long dflt)
{
	return argc > i ? strtoul(argv[i], NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	unsigned long long expected;
	int rc;

	if (strcmp(mode, "child") == 0) {
		unsigned long calls = arg(argc, argv, 2, 100000);
		unsigned acc = work(calls, 1);
		return acc == 0xdeadbeefu ? 3 : 0;
	}
	if (strcmp(mode, "fork") == 0) {
		int children = (int)arg(argc, argv, 2, 50);
		unsigned long calls = arg(argc, argv, 3, 10000),
			      parent = arg(argc, argv, 4, 100000);
		if (children < 1)
			children = 1;
		expected = 2 + (unsigned long long)children * (calls + 1) +
			   (unsigned long long)children * (parent / (unsigned long)children + 1);
		rc = run_forks(children, calls, parent);
	} else if (strcmp(mode, "system") == 0) {
		int runs = (int)arg(argc, argv, 2, 5);
		unsigned long calls = arg(argc, argv, 3, 100000),
			      parent = arg(argc, argv, 4, 100000);
		if (runs < 1)
			runs = 1;
		expected = 2 + (unsigned long long)runs * (calls + 2) +
			   (unsigned long long)runs * (parent / (unsigned long)runs + 1);
		rc = run_system(argv[0], runs, calls, parent);
	} else {
		fprintf(stderr, "forks: unknown mode '%s' (fork, system or child)\n", mode);
		return 2;
	}
	if (rc < 0)
		return 1;
	printf("%s calls=%llu\n", mode, expected);
	return 0;
}
