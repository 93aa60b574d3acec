/* SPDX-License-Identifier: MIT */
/* The reader of schema-3 profiles: validated tables in memory, events decoded in slices. */
#ifndef SCOPE_LIB_READER_H
#define SCOPE_LIB_READER_H

#include "schema.h"

#include <stddef.h>
#include <stdint.h>

#define RD_SCHEMA  SC_SCHEMA
#define RD_ERR_MAX 512

/* A row of /process<N>/lanes/threads. */
struct rd_lane {
	uint64_t tid;
	int64_t parent;
	uint64_t start, end; /* relative ns */
	uint64_t cpu_ns;     /* 0 when not known */
	char *name;
};

/* A row of /process<N>/lanes/tasks: task lane k is tasks[k - 1]. */
struct rd_task {
	uint64_t id;
	int64_t parent;	     /* the thread lane that began it, -1 when unknown */
	uint64_t start, end; /* relative ns */
	uint64_t busy_ns;
	char *name, *threads; /* threads: "0,2", the thread lanes that ran it */
};

/* A row of /processes, with its thread lanes. */
struct rd_process {
	int64_t pid, ppid, parent, rank, exit_status, exit_signal;
	uint64_t start, end, lost; /* unix ns; end >= start */
	uint64_t exec, complete;
	char *executable, *arguments;
	char *host;	/* "" when the file has no /processes/host */
	char *counters; /* "perf::TASK-CLOCK,PAPI_TOT_INS": the counters read, "" none */
	/* ppid is -1, exit_signal, exec and complete 0 in files without them */
	struct rd_lane *lanes;
	size_t nlanes;
	struct rd_task *tasks; /* none in files without lanes/tasks */
	size_t ntasks;
};

/* A row of /regions. */
struct rd_region {
	char *name, *module, *file, *kind;
	uint64_t offset, line;
};

/* A row of /pairs: process < nprocesses, region < nregions, and with
 * events, [first, first + count) lies inside /events. */
struct rd_pair {
	uint64_t process, region, first, count;
	uint64_t total_ns;     /* outermost calls only: no call of the region open around them */
	uint64_t total_all_ns; /* every call; total_ns in files without it */
	uint64_t self_ns, min_ns, max_ns;
	uint64_t bytes_sent, bytes_received; /* by MPI calls; 0 without has_bytes */
	/* counter k of its process (rd_process.counters names them): every
	 * call's change summed, and less the recorded callees'; 0 without */
	uint64_t counter_total[4], counter_self[4];
	uint64_t aggregated; /* calls not in /events (filters), counted in the figures above */
};

/* Every call of the pair: those in /events and those a filter kept out. */
static inline uint64_t rd_pair_calls(const struct rd_pair *r)
{
	return r->count + r->aggregated;
}

/* Attributes of /metadata that the tools show; absent ones are 0 or "". */
struct rd_meta {
	double wall_seconds, cpu_seconds, peak_rss_bytes;
	uint64_t lost_records;
	int64_t mpi_ranks; /* the MPI job's size, 0 when not a job's */
	/* what recording one call cost, ns, measured at start-up: 0 when the
	 * file has no figure, or one that is not a number above 0 and up to 1 s */
	double overhead_ns_per_call;
	char *command_line, *host, *start_time_utc, *clock_source;
};

struct rd_h5;

struct rd_profile {
	struct rd_process *processes;
	size_t nprocesses;
	struct rd_region *regions;
	size_t nregions;
	struct rd_pair *pairs;
	size_t npairs;
	int has_events;	  /* 0: an aggregate-only profile, /pairs without /events */
	uint64_t nevents; /* rows of /events */
	int has_bytes;	  /* /pairs has bytes_sent and bytes_received (MPI calls) */
	int brief;	  /* opened by rd_open_brief: no process has its lanes */
	uint64_t origin;  /* the earliest /processes/start, unix ns (0 without processes) */
	struct rd_meta meta;
	char err[RD_ERR_MAX]; /* why the last call failed */
	struct rd_h5 *h5;
};

/* Event columns, to choose which a cursor reads: bit i is column i of
 * /events in lib/schema.h's order, the required ones. */
enum rd_column {
	RD_START = 1 << 0, /* start_delta, decoded into start */
	RD_DURATION = 1 << 1,
	RD_THREAD = 1 << 2,
	RD_TASK = 1 << 3,
	RD_DEPTH = 1 << 4,
	RD_FLAGS = 1 << 5,
	RD_ALL = (1 << 6) - 1,
};
#define RD_NCOLUMNS 6
_Static_assert(RD_NCOLUMNS == SC_EV_FLAGS + 1 && SC_EV_START_DELTA == 0,
	       "a cursor reads the required /events columns, first in lib/schema.h's order");

#define RD_FLAG_UNFINISHED 1u /* the call never returned */

/* One call; the fields of columns not read are 0. */
struct rd_event {
	uint64_t start; /* relative ns: since /processes/start of the pair's process */
	uint64_t duration, thread, task, depth;
	uint8_t flags;
};

/* Reads one pair's calls in order, a slice of rows at a time. */
struct rd_cursor {
	struct rd_profile *p;
	size_t pair;
	unsigned columns;
	uint64_t row, end; /* next row to read from the file, end of the pair */
	uint64_t start;	   /* running sum of start_delta */
	uint64_t nlanes;
	uint64_t *buf[RD_NCOLUMNS];
	size_t cap, len, pos; /* slice capacity, rows in it, next row in it */
};

/*
 * Opens the profile at path and checks everything but the events: the
 * schema version, every documented table with its types and lengths, and
 * the ranges of /pairs. Returns the profile, or NULL with a one-line reason
 * (without the path) in err.
 */
struct rd_profile *rd_open(const char *path, char *err, size_t errcap);

/* The same without the processes' lane tables (nlanes 0), for a reader of
 * /pairs, /regions and /metadata alone, such as scope-run's summary: a run
 * of fifty processes spends most of its opening on their lanes. Its
 * events cannot be read. */
struct rd_profile *rd_open_brief(const char *path, char *err, size_t errcap);
void rd_close(struct rd_profile *p);

/* The calls the run could not record (/metadata's lost_records, as
 * rd_open reads it) of the profile at path, read without its tables.
 * Returns 0, or -1 with a one-line reason in err. */
int rd_lost_records(const char *path, uint64_t *lost, char *err, size_t errcap);

/*
 * Starts reading pair's calls, the given columns only, slice rows at a
 * time (0: a default). Returns 0, or -1 with the reason in p->err.
 */
int rd_cursor_open(struct rd_profile *p, size_t pair, unsigned columns, size_t slice,
		   struct rd_cursor *c);
/* The next call into e: returns 1, 0 after the last, or -1 with the reason
 * in p->err (an unreadable slice, a thread lane out of range, a start or an
 * end past 2^64 ns). */
int rd_cursor_next(struct rd_cursor *c, struct rd_event *e);
void rd_cursor_close(struct rd_cursor *c);

/* Sizes the chunk cache of the event columns for readers cursors reading
 * at once, each at its own place (rd_open sizes it for one). Returns 0, or
 * -1 with the reason in p->err. */
int rd_cache(struct rd_profile *p, size_t readers);

/* The event columns whose values rd_cursor_next checks (thread lanes in
 * range, starts and ends below 2^64 ns). */
#define RD_CHECKED (RD_START | RD_DURATION | RD_THREAD)

/* Reads the given columns of every call of p, with the checks of
 * rd_cursor_next: with RD_CHECKED, every event a reader may meet is known
 * to be readable. Returns 0, or -1 with the reason in p->err. */
int rd_check_events(struct rd_profile *p, unsigned columns);

/* Reads the tables of every process that rd_open leaves (samples,
 * aggregates, heap and heap_sites), checking them as it checks its own.
 * Returns 0, or -1 with the reason in p->err. */
int rd_check_tables(struct rd_profile *p);

/* Opens the profile at path and reads every column of every call, checking
 * it, and the tables of rd_check_tables: the whole of what a reader may
 * meet. For tests and fuzzers. Returns 0, or -1 with the reason in err. */
int rd_check(const char *path, char *err, size_t errcap);

/* ---- Raw access, for the programs that transform profiles -------------- */

/* A row of /process<N>/samples (SCOPE_SAMPLE). */
struct rd_sample {
	uint64_t process, time, thread; /* time: relative ns */
	uint64_t region; /* row of /regions, or 4294967295 when no recorded call was open */
	char *stack;	 /* function names, outermost first, joined by ';' */
};

/* The samples of process (none when it has no /process<N>/samples), in
 * new memory (rd_samples_free). Returns 0, or -1 with the reason in p->err. */
int rd_samples(struct rd_profile *p, size_t process, struct rd_sample **out, size_t *n);
void rd_samples_free(struct rd_sample *s, size_t n);

/* A row of /process<N>/aggregates (filters): calls of a region on a thread
 * lane that are not in /events, summed. */
struct rd_aggregate {
	uint64_t region, thread, calls;
	uint64_t total_ns, total_all_ns, self_ns, min_ns, max_ns;
};

/* The aggregates of process (none when it has no /process<N>/aggregates),
 * in new memory (free). Returns 0, or -1 with the reason in p->err. */
int rd_aggregates(struct rd_profile *p, size_t process, struct rd_aggregate **out, size_t *n);

/* A row of /process<N>/heap (SCOPE_HEAP=1): what the blocks one region
 * allocated came to. */
struct rd_heap_row {
	char *region; /* as /regions names it, "" outside any recorded call */
	uint64_t allocations, frees, bytes, peak, leaked; /* bytes: allocated in all */
};

/* A row of /process<N>/heap_sites: a call site that allocated much of a region's bytes. */
struct rd_heap_site {
	char *region, *function, *file;
	uint64_t bytes, allocations, address, line;
};

/* A process's heap tracking. */
struct rd_heap {
	int64_t attrs[SC_NHEAPA]; /* the group's attributes, by enum sc_heapa */
	struct rd_heap_row *rows;
	size_t nrows;
	struct rd_heap_site *sites;
	size_t nsites;
};

/*
 * Reads /process<N>/heap and heap_sites of process into h, checked as
 * rd_open checks its tables (every column there with its type, of one
 * length), with the group's attributes. Returns 1; 0, h empty, when the
 * process has neither group (its heap was not tracked); or -1 with the
 * reason in p->err. rd_heap_free frees what it read.
 */
int rd_heap(struct rd_profile *p, size_t process, struct rd_heap *h);
void rd_heap_free(struct rd_heap *h);

/* A row of /process<N>/modules. */
struct rd_module {
	char *path, *build_id; /* build_id: hex, "" when none was recorded */
	uint64_t bias, lo, hi; /* lo and hi are 0 in files without them */
};

/*
 * Reads the /process<N>/modules tables of every process into one array,
 * process after process (a process without a table adds nothing). Returns
 * 0, or -1 with the reason in p->err (a table whose columns are missing,
 * mistyped or of different lengths).
 */
int rd_modules(struct rd_profile *p, struct rd_module **mods, size_t *n);
void rd_modules_free(struct rd_module *mods, size_t n);

/* Where field id of a row is (enum sc_proc, enum sc_pair): an int64_t,
 * a uint64_t or a char * as lib/schema.h types the column (signed
 * integers, unsigned ones, strings). */
const void *rd_process_field(const struct rd_process *r, int id);
const void *rd_pair_field(const struct rd_pair *r, int id);

/* Whether the object at path ("/processes/host") is in the file. */
int rd_has(const struct rd_profile *p, const char *path);

/* The width in bytes (1, 2, 4 or 8) in which /events column col
 * (enum sc_ev) is stored; 0 when the file lacks it. */
int rd_event_width(const struct rd_profile *p, int col);

/* Reads rows [off, off + n) of /events column col as unsigned integers of
 * width bytes into to. Returns 0, or -1 with the reason in p->err. */
int rd_event_rows(struct rd_profile *p, int col, uint64_t off, uint64_t n, int width, void *to);

struct linked_copies;

/* Copies the object name of the profile (a group with all it holds, its
 * attributes included) to the HDF5 location to (a hid_t) as as; seen, when
 * not NULL, holds what earlier copies from the profile met linked twice,
 * linked again here (h5copy.h). Returns 0, or -1. */
int rd_copy(struct rd_profile *p, const char *name, int64_t to, const char *as,
	    struct linked_copies *seen);

/* Why path cannot be read as a file without blocking: strerror of stat's
 * error ("No such file or directory"), "is a directory" or "not a regular
 * file" (a FIFO, a device); NULL when it is a regular file. rd_open checks
 * this first; other programs check their inputs with it before they open
 * them. */
const char *rd_not_a_file(const char *path);

/* Whether a and b are one file (same device and inode, so also through a
 * link); 0 when either does not exist. Programs refuse to write their
 * output over one of their inputs with it. */
int rd_same_file(const char *a, const char *b);

#endif
