/* SPDX-License-Identifier: MIT */
/* Gathering the profiles of every process of a scope-run into one file. */
#ifndef SCOPE_TOOLS_GATHER_H
#define SCOPE_TOOLS_GATHER_H

#include <limits.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "run_writer.h"

/* The program whose name prefixes the lines below print: scope-run's by default. */
extern const char *gather_tool;

struct run_dirs {
	char parts[PATH_MAX];  /* each process writes its profile here */
	char arenas[PATH_MAX]; /* and records here, SCOPE_ARENA_DIR */
	char bindir[PATH_MAX]; /* scope-writer */
	int stores_apart;      /* arenas in a folder of their own (/dev/shm), stores in TMPDIR */
	int nparts;	       /* (run_gather) the parts it found */
};

/* Makes the folders: parts beside output (so one part moves into place
 * without a copy), arenas in the temporary folder. Returns 0, or -1 after
 * printing why. */
int run_dirs_make(struct run_dirs *d, const char *output, const char *bindir, int at_exit);

/* Waits for the child and for every process it left behind (scope-run is
 * their subreaper), but not for the run's writer w. The child's status and
 * resources go to *status and *ru. */
void run_wait_all(pid_t child, struct run_writer *w, int *status, struct rusage *ru);

/* What run_gather did with the output. */
enum gather_result {
	GATHER_PUBLISHED, /* written, with every process of the run */
	GATHER_NOTHING,	  /* untouched: no process recorded (the library said why) */
	GATHER_KEPT,	  /* untouched: what was recorded is kept, and a line said where */
};

/* Writes what killed processes left in their arenas, then merges every
 * part into output and removes the folders; when a process left no part
 * (its writer failed), the output is not written at all and the parts
 * stay. Returns an enum gather_result. */
int run_gather(struct run_dirs *d, const char *output, pid_t child, int status);

#endif
