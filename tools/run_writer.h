/* SPDX-License-Identifier: MIT */
/* The run's writer: one scope-writer for every process of a scope-run, working while the program
 * runs. */
#ifndef SCOPE_TOOLS_RUN_WRITER_H
#define SCOPE_TOOLS_RUN_WRITER_H

#include <limits.h>
#include <sys/resource.h>
#include <sys/types.h>

struct run_writer {
	pid_t pid;		 /* 0: none (the processes start writers of their own) */
	char socket[PATH_MAX];	 /* where the processes hand over their arenas */
	double cpu_during;	 /* CPU seconds it used while the program ran */
	double cpu_after;	 /* and after */
	int status;		 /* its wait status, once it has ended */
	int losses_fd;		 /* where it says, at its end, what it published */
	long long parts;	 /* parts it published, once it has ended; -1: unknown */
	unsigned long long lost; /* and the calls lost in them */
};

/*
 * Makes the run's socket in the arenas folder and starts the writer on it
 * (with --at-exit, it writes nothing before the run ends). On failure (a
 * folder path too long for a socket, say) w->pid is 0 and the run goes on
 * as before, each process starting its own writer.
 */
void run_writer_start(struct run_writer *w, const char *arenas, const char *bindir, int at_exit);

/* The program and all it started have ended (pid: the writer, never
 * reaped before): tells the writer, waits for it and notes its CPU time,
 * and the parts it published with their losses. */
void run_writer_finish(struct run_writer *w);

/* Whether scope-run's only child left, if any, is the writer. */
int run_writer_alone(const struct run_writer *w);

#endif
