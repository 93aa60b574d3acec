/* SPDX-License-Identifier: MIT */
/*
 * Signals: fatal ones raised or faulted deep inside, handlers the program
 * installs itself (before the profiler's constructor, from .preinit_array,
 * or after it, in main), raise() with an instrumented handler, and SIGPROF
 * from setitimer interrupting a busy loop.
 *
 * It prints what it knows ("calls handler=N") and flushes before dying.
 * Usage: r_sig MODE; modes are listed in main().
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "progs.h"

volatile unsigned long sig_sink;
static volatile sig_atomic_t handled;
static unsigned long nspin;

NOINLINE void note(void)
{
	sig_sink++;
}

/* An instrumented handler: it and note() are calls on the interrupted thread. */
NOINLINE void on_signal(int sig)
{
	(void)sig;
	handled++;
	note();
}

static void say(const char *what)
{
	printf("%s\n", what);
	fflush(stdout);
}

/* The program's own fatal-signal handler: a call, then the default action. */
NOINLINE void on_fatal(int sig)
{
	note();
	printf("handler ran for signal %d\n", sig);
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The program's own handler that ends the process itself. */
NOINLINE void on_fatal_exit(int sig)
{
	note();
	printf("handler ran for signal %d, exiting 3\n", sig);
	fflush(stdout);
	_exit(3);
}

/* Runs before any constructor, the profiler's included; it is not
 * instrumented, so it does not start the profiler early either. */
static __attribute__((no_instrument_function)) void early(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc > 1 && strcmp(argv[1], "early-handler") == 0)
		signal(SIGSEGV, on_fatal);
}
__attribute__((section(".preinit_array"), used)) static void (*early_p)(int, char **,
									char **) = early;

volatile int *sig_null;
volatile int sig_zero;

NOINLINE void fault(const char *how)
{
	note();
	if (strcmp(how, "segv") == 0) {
		*sig_null = 1;
	} else if (strcmp(how, "fpe") == 0) {
		sig_sink = (unsigned long)(100 / sig_zero);
	} else if (strcmp(how, "ill") == 0) {
		__builtin_trap();
	} else if (strcmp(how, "bus") == 0) {
		/* A mapping past the end of an empty file. */
		char path[] = "/tmp/r_sig-XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		volatile char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		m[0] = 1;
	} else if (strcmp(how, "abrt") == 0) {
		abort();
	} else if (strcmp(how, "term") == 0) {
		kill(getpid(), SIGTERM);
	} else if (strcmp(how, "int") == 0) {
		kill(getpid(), SIGINT);
	} else if (strcmp(how, "hup") == 0) {
		kill(getpid(), SIGHUP);
	}
	say("still alive after the signal");
}

NOINLINE void outer(const char *how)
{
	note();
	fault(how);
}

/* Short, so that much of the loop's time is spent entering and leaving it. */
NOINLINE void spin(void)
{
	nspin++;
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (argc == 3 && strcmp(mode, "die") == 0) {
		say("dying");
		outer(argv[2]);
		return 0;
	}
	if (strcmp(mode, "raise") == 0) {
		/* Three raises, the handler instrumented. */
		install(SIGUSR1, on_signal);
		for (int i = 0; i < 3; i++)
			raise(SIGUSR1);
		printf("calls on_signal=%d\n", (int)handled);
		return 0;
	}
	if (strcmp(mode, "sigprof") == 0) {
		/* SIGPROF every ms of CPU time until 60 arrived, handled by an
		 * instrumented handler; the busy loop counts its calls. */
		struct itimerval it = {{0, 1000}, {0, 1000}};
		install(SIGPROF, on_signal);
		setitimer(ITIMER_PROF, &it, NULL);
		while (handled < 60)
			spin();
		memset(&it, 0, sizeof it);
		setitimer(ITIMER_PROF, &it, NULL);
		printf("calls on_signal=%d spin=%lu\n", (int)handled, nspin);
		return 0;
	}
	if (strcmp(mode, "late-handler") == 0) {
		/* Installed in main, after the profiler's constructor. */
		install(SIGSEGV, on_fatal);
		say("dying");
		outer("segv");
		return 0;
	}
	if (strcmp(mode, "late-handler-exit") == 0) {
		install(SIGSEGV, on_fatal_exit);
		say("dying");
		outer("segv");
		return 0;
	}
	if (strcmp(mode, "late-term") == 0) {
		signal(SIGTERM, on_fatal);
		say("dying");
		outer("term");
		return 0;
	}
	if (strcmp(mode, "early-handler") == 0) {
		/* Installed from .preinit_array, before the profiler's constructor. */
		say("dying");
		outer("segv");
		return 0;
	}
	fprintf(stderr,
		"usage: %s die segv|bus|fpe|ill|abrt|term|int|hup | raise | sigprof | "
		"late-handler | late-handler-exit | late-term | early-handler\n",
		argv[0]);
	return 64;
}
