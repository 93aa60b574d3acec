/* SPDX-License-Identifier: MIT */
/* Writing one process's profile as an HDF5 schema-3 file. */
#ifndef SCOPE_WRITER_PROFILE_OUT_H
#define SCOPE_WRITER_PROFILE_OUT_H

#include "writer.h"

#include <hdf5.h>

struct run_info {
	const struct arena *arena;
	const char *arena_path;
	const struct scope_arena_header *hdr;
	const struct tick_clock *clock;
	const char *command_line; /* argv joined by spaces */
	const char *compression;  /* the storage spec as given */
	const char *host;	  /* the host the process ran on */
	double clock_hz;
	uint64_t lost;
	uint64_t end_ns; /* the process's end, ns since its start */
	int exit_kind;	 /* enum scope_exit_kind: the arena's, or what --exit-signal says */
	int exit_code;
	int symbolize;
	int recover;
	const struct module *mods;
	size_t nmods;
};

int metadata_write(hid_t file, const struct run_info *run);

/* A process's regions named (by libdw, or from its arena), as /regions
 * will have them. */
struct named;

/* Names p's regions, which are final once it is collected: the run's
 * writer names each process as it ends, not all at the end. A process
 * with the modules of the one named before reuses its symbolizer. NULL
 * without memory. */
struct named *profile_name(const struct run_info *run, const struct profile *p);
void profile_named_free(struct named *nm);

/* Closes the symbolizer profile_name keeps for the next process (profile_write
 * does before it writes). */
void profile_names_done(void);

/* One process of a profile being written: what it was, and its calls. */
struct proc_out {
	const struct run_info *run;
	struct profile *p;
	struct named *named; /* profile_name's (the caller's to free), or NULL */
};

/* The record-time filters the run had (its SCOPE_* variables) and the
 * calls stored and summed, in all the processes: only in profiles that had
 * some. */
int metadata_filters(hid_t file, const struct proc_out *procs, size_t n);

struct columns;
struct scope_sym_module;

/* The run's modules, as the symbolizer takes them; NULL without memory. */
struct scope_sym_module *run_sym_modules(const struct run_info *run);

/* The tables of the processes written so far that a later process's
 * group links again when its own would be equal (process_group.c). */
#define SHARED_MODULES	  16
#define SHARED_PATH_BYTES 96
struct shared_tables {
	char tasks[SHARED_PATH_BYTES]; /* the first empty task table's, "" before it */
	struct shared_modules {
		const struct run_info *run;
		char path[SHARED_PATH_BYTES];
	} mods[SHARED_MODULES];
	size_t nmods;
};

/* Writes /process<index>: the process's lanes, modules, crash stack, heap,
 * samples and the sums of calls not stored. Returns 0 or -1. */
int process_group_write(struct columns *c, hid_t file, size_t index, const struct run_info *run,
			const struct profile *p, struct shared_tables *sh);

/* Writes the profile of the n processes into a new file at path (which
 * must not be the final name: see publish.c), in the order of their start
 * (procs is sorted so). Their calls held in memory are spent. Returns 0,
 * or -1 without saying why: the caller's publish_file gives the reason,
 * from errno or as HDF5's. */
int profile_write(const char *path, struct proc_out *procs, size_t n, const struct storage *st);

#endif
