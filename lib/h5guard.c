/* SPDX-License-Identifier: MIT */
/* A crash inside the HDF5 library while a tool reads a damaged file: one line, exit 1. */
#include "h5guard.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

/*
 * The HDF5 library trusts the metadata of the files it opens: a damaged
 * heap or object header can make it read out of bounds. The reader checks
 * everything it can reach (lib/reader.c); for the rest, a crash while a file
 * is being read says which file and why, removes the temporary output, and
 * exits 1 like any other bad file. Sanitizer builds keep their own reports.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static const char *tool_name = "scope";
static const char *volatile reading;
static char *volatile tmp;

void h5guard_reading(const char *path)
{
	reading = path;
}

char *volatile *h5guard_tmp(void)
{
	return &tmp;
}

#ifndef SANITIZED
static void put(const char *s)
{
	ssize_t n = write(STDERR_FILENO, s, strlen(s));
	(void)n;
}

static void on_crash(int sig)
{
	if (tmp)
		unlink(tmp);
	put(tool_name);
	put(": ");
	put(reading ? reading : "?");
	put(sig == SIGABRT ? ": damaged: the HDF5 library aborted reading it\n"
			   : ": damaged: the HDF5 library crashed reading it\n");
	_exit(1);
}
#endif

void h5guard_install(const char *tool)
{
	tool_name = tool;
#ifndef SANITIZED
	static char altstack[1 << 16];
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaltstack(&st, NULL);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
#endif
}
