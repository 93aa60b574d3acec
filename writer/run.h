/* SPDX-License-Identifier: MIT */
/* The writer of a whole run: arenas handed over by the run's processes, written as they come. */
#ifndef SCOPE_WRITER_RUN_H
#define SCOPE_WRITER_RUN_H

#include <sys/types.h>

/*
 * Reads arena paths from the datagram socket fd, one message each, and
 * writes each with write_one(path, ctx) as it comes, or, with at_exit, all of
 * them once the run has ended. A path after a NUL byte is an arena whose
 * process has started recording: its full chunks are consumed while it
 * runs (tail.h), unless at_exit. An empty message ends the run, and so does
 * the end of the process watch (when > 0). Returns 0, or 1 when an arena
 * could not be written (write_one said why). write_one is given what was
 * grouped of the arena's calls while its process ran (alongside.h), NULL
 * when nothing was, to finish and free.
 */
struct alongside;
int run_serve(int fd, int at_exit, pid_t watch,
	      int (*write_one)(const char *arena, struct alongside *early, void *ctx), void *ctx);

#endif
