/* SPDX-License-Identifier: MIT */
/*
 * Processes: fork, vfork+execl, fork+exec* with the program's own envp,
 * posix_spawn, system(), exec of the process itself, daemon(0,0), exit()
 * and _exit() deep inside, a child that outlives its parent.
 *
 * Every process prints what it knows on stdout as "pid=P calls a=N b=N c=N"
 * (or into the file given with --report for daemon, whose stdout is
 * /dev/null), so the check compares the profile with the program's truth.
 * Usage: r_proc MODE [ARGS...]; modes are listed in main().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

extern char **environ;

static unsigned long na, nb, nc, nleaf;
volatile unsigned long proc_sink;

NOINLINE void c(void)
{
	nc++;
	proc_sink++;
}

NOINLINE void b(void)
{
	nb++;
	c();
	c();
}

NOINLINE void a(void)
{
	na++;
	b();
}

/* a -> b -> c c, N times. */
NOINLINE void abc(int n)
{
	for (int i = 0; i < n; i++)
		a();
}

/* A forked child counts only what it does itself, as its profile should. */
#define RESET_COUNTS() (na = nb = nc = nleaf = 0)

static void report(const char *who)
{
	printf("%s pid=%d calls a=%lu b=%lu c=%lu leaf=%lu\n", who, (int)getpid(), na, nb, nc,
	       nleaf);
	fflush(stdout);
}

static void wait_child(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	printf("child %d status=%d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);
}

/* The exec'd program: "leaf N" calls a N times and reports. It checks it got
 * the program's own environment, FOO=bar, where the caller gave one. */
NOINLINE void leaf(int n)
{
	nleaf++;
	abc(n);
}

static int mode_leaf(int n)
{
	const char *foo = getenv("R_PROC_FOO");
	leaf(n);
	if (foo)
		printf("leaf env R_PROC_FOO=%s\n", foo);
	report("leaf");
	return 0;
}

static int exit_code, exit_underscore;

/* main -> exit_outer -> exit_middle -> exit_inner, which ends the process. */
NOINLINE void exit_inner(void)
{
	report("exit");
	if (exit_underscore)
		_exit(exit_code);
	exit(exit_code);
}

NOINLINE void exit_middle(void)
{
	proc_sink++;
	exit_inner();
}

NOINLINE void exit_outer(int code, int underscore)
{
	exit_code = code;
	exit_underscore = underscore;
	exit_middle();
}

NOINLINE void child_side(void)
{
	abc(3);
	report("child");
}

NOINLINE void parent_side(void)
{
	abc(2);
}

static char self[4096];

static void find_self(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		exit(70);
	self[n] = '\0';
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	static char *own_env[] = {"R_PROC_FOO=bar", "PATH=/usr/bin:/bin", NULL};
	pid_t pid;

	find_self();
	if (strcmp(mode, "leaf") == 0 && argc == 3)
		return mode_leaf(atoi(argv[2]));

	if (strcmp(mode, "fork") == 0) {
		/* Both sides call a->b->c: the parent 2 times, the child 3. */
		abc(1);
		pid = fork();
		if (pid == 0) {
			RESET_COUNTS();
			child_side();
			return 0; /* the child leaves main, which it never entered */
		}
		parent_side();
		wait_child(pid);
		report("parent");
		return 0;
	}
	if (strcmp(mode, "vfork-execl") == 0) {
		abc(1);
		pid = vfork();
		if (pid == 0) {
			execl(self, self, "leaf", "4", (char *)NULL);
			_exit(127);
		}
		wait_child(pid);
		report("parent");
		return 0;
	}
	if (strcmp(mode, "fork-exec") == 0 && argc == 3) {
		/* The exec'd child gets an environment of the program's own making. */
		const char *how = argv[2];
		abc(1);
		pid = fork();
		if (pid == 0) {
			char *args[] = {self, "leaf", "5", NULL};
			if (strcmp(how, "execve") == 0)
				execve(self, args, own_env);
			else if (strcmp(how, "execle") == 0)
				execle(self, self, "leaf", "5", (char *)NULL, own_env);
			else if (strcmp(how, "execvpe") == 0)
				execvpe(self, args, own_env);
			else if (strcmp(how, "execvp") == 0)
				execvp(self, args);
			else if (strcmp(how, "execv") == 0)
				execv(self, args);
			_exit(127);
		}
		wait_child(pid);
		report("parent");
		return 0;
	}
	if (strcmp(mode, "spawn") == 0) {
		char *args[] = {self, "leaf", "6", NULL};
		abc(1);
		int rc = posix_spawn(&pid, self, NULL, NULL, args, own_env);
		if (rc != 0) {
			fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
			return 1;
		}
		wait_child(pid);
		report("parent");
		return 0;
	}
	if (strcmp(mode, "system") == 0) {
		char cmd[4200];
		abc(1);
		snprintf(cmd, sizeof cmd, "'%s' leaf 7; true", self);
		int st = system(cmd);
		printf("system status=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		report("parent");
		return 0;
	}
	if (strcmp(mode, "exec-self") == 0) {
		/* This image calls a twice, then becomes "leaf 3". */
		abc(2);
		report("before-exec");
		execl(self, self, "leaf", "3", (char *)NULL);
		return 127;
	}
	if (strcmp(mode, "exec-fail") == 0) {
		/* A failed exec goes on in the same process. */
		abc(1);
		execl("/nonexistent/r_proc", "r_proc", (char *)NULL);
		abc(2);
		report("after-failed-exec");
		return 0;
	}
	if (strcmp(mode, "daemon") == 0 && argc == 3) {
		/* The daemon writes its report into argv[2]: its stdout is /dev/null. */
		char cwd[4096] = "?";
		const char *path = argv[2];
		abc(1);
		fflush(stdout);
		if (daemon(0, 0) != 0)
			return 1;
		RESET_COUNTS();
		abc(4);
		if (!getcwd(cwd, sizeof cwd))
			strcpy(cwd, "?");
		char tty[64] = "?";
		ssize_t k = readlink("/proc/self/fd/1", tty, sizeof tty - 1);
		if (k > 0)
			tty[k] = '\0';
		FILE *f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "daemon pid=%d calls a=%lu b=%lu c=%lu leaf=%lu\ncwd=%s\nstdout=%s\n",
			(int)getpid(), na, nb, nc, nleaf, cwd, tty);
		fclose(f);
		return 0;
	}
	if (strcmp(mode, "orphan") == 0 && argc == 3) {
		/* The child outlives its parent by 300 ms; it reports into argv[2]. */
		abc(1);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			RESET_COUNTS();
			struct timespec ts = {0, 300 * 1000 * 1000};
			nanosleep(&ts, NULL);
			abc(6);
			FILE *f = fopen(argv[2], "w");
			if (!f)
				_exit(1);
			fprintf(f, "orphan pid=%d calls a=%lu b=%lu c=%lu leaf=%lu\n",
				(int)getpid(), na, nb, nc, nleaf);
			fclose(f);
			return 0;
		}
		report("parent");
		return 0;
	}
	if (strcmp(mode, "exit") == 0) {
		abc(2);
		exit_outer(2, 0);
	}
	if (strcmp(mode, "_exit") == 0) {
		abc(2);
		exit_outer(5, 1);
	}
	if (strcmp(mode, "fork-exit") == 0) {
		/* A forked child that _exits deep inside; the parent returns. */
		pid = fork();
		if (pid == 0) {
			RESET_COUNTS();
			abc(2);
			exit_outer(9, 1);
		}
		abc(1);
		wait_child(pid);
		report("parent");
		return 0;
	}
	fprintf(stderr,
		"usage: %s leaf N | fork | vfork-execl | fork-exec HOW | spawn | system | "
		"exec-self | exec-fail | daemon FILE | orphan FILE | exit | _exit | fork-exit\n",
		argv[0]);
	return 64;
}
