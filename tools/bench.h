/* SPDX-License-Identifier: MIT */
/* scope-bench's parts: the plan of runs, one run's figures, and the files that hold them. */
#ifndef SCOPE_TOOLS_BENCH_H
#define SCOPE_TOOLS_BENCH_H

#include "launch.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BENCH_BASELINE	     "baseline"
#define BENCH_VARIANT	     "variant_"
#define BENCH_JSON	     "bench.json"
#define BENCH_WORK	     "work" /* the runs' working directories, in the results */
#define BENCH_LABEL_MAX	     128
#define BENCH_DEFAULT_MARGIN 25.0
/* A region is marked SLOWER only with this share of the baseline's median
 * wall time, in one run or the other. */
#define BENCH_REGION_MIN_SHARE 0.01

/* A list of strings, each owned. */
struct strings {
	char **v;
	size_t n;
};

/* Returns 0, or -1 without memory. */
int strings_add(struct strings *s, const char *value);
void strings_free(struct strings *s);
/* Appends the words of s, split as a shell splits them without expanding
 * anything (blanks, quotes, backslashes). Returns 0, 1 for an unterminated
 * quote, -1 without memory. */
int split_words(const char *s, struct strings *out);

/* One configuration: the baseline, or a variant of it. */
struct bench_config {
	char label[BENCH_LABEL_MAX]; /* baseline, variant_NAME */
	const char *name;	     /* NULL for the baseline */
	struct strings args;	     /* appended to the program's arguments */
	struct strings env;	     /* VAR=VALUE set in the run's environment */
	const char *exe;	     /* another build of the program, or NULL */
	char program[PATH_MAX];	     /* what is run */
};

/* What the user asked for. */
struct bench_plan {
	const char *results; /* -o */
	char dir[PATH_MAX];  /* it, absolute */
	char stage[PATH_MAX];
	int has_stage;
	unsigned repeat;
	int warm_up, profile, memory, keep;
	struct strings warm_up_args;
	double max_regression; /* < 0: no gate */
	double project;	       /* units of work for --project, 0: none */
	double margin;	       /* percent added to the projection */
	size_t top;	       /* changed regions shown per variant */
	char **argv;	       /* the program and its arguments */
	struct bench_config *configs;
	size_t nconfigs;
	struct launch_paths paths;
};

enum bench_kind { BENCH_WARM_UP, BENCH_MEASURED, BENCH_MEMORY };

/* What one run measured. */
struct bench_figures {
	double wall_s, user_s, sys_s, cpu_s, utilisation;
	uint64_t peak_rss_bytes, output_bytes;
	double profile_s; /* writing the profile, after the program */
};

struct bench_run {
	size_t config;
	enum bench_kind kind;
	unsigned repeat; /* 1..N for a measured run */
	int started;	 /* the program ran (else error says why not) */
	int status;	 /* its wait status */
	int failed;	 /* did not start, ended with a status other than 0 or a signal, or left
			    no profile */
	char error[256];
	struct bench_figures f;
	char name[BENCH_LABEL_MAX + 32]; /* LABEL-N, LABEL-warm-up, LABEL-heap */
	int has_profile;		 /* NAME.h5 was written */
	int kept;			 /* its working directory was kept (--keep) */
};

/* ---- Running (bench_run.c) ---------------------------------------------- */

/* Runs configuration c of plan as r says (kind, repeat, name), from a fresh
 * working directory, profiled or not, and measures it into r. Never fails:
 * what went wrong is in r. */
void bench_run(const struct bench_plan *plan, const struct bench_config *c, struct bench_run *r);
/* The program of the run in progress, 0 between runs (for signals to pass on). */
extern volatile pid_t bench_child;

/* ---- Working directories (bench_stage.c) -------------------------------- */

/* Makes dir anew: a copy of stage (NULL: empty). Returns 0, or -1 with the
 * reason in err. */
int stage_copy(const char *stage, const char *dir, char *err, size_t cap);
/* The files a stage put into a working directory, to tell them from a
 * run's outputs. */
struct stage_file {
	uint64_t ino;
	int64_t ctime_ns;
};
struct stage_snap {
	struct stage_file *v;
	size_t n;
};
/* Takes snap of dir. Returns 0, or -1 without memory or when dir cannot be
 * read. */
int stage_snapshot(const char *dir, struct stage_snap *snap);
void stage_snapshot_free(struct stage_snap *snap);
/* Bytes of the regular files under dir that snap does not hold unchanged:
 * what was written since it was taken. */
uint64_t stage_written(const char *dir, const struct stage_snap *snap);
/* Removes dir and all it holds. Returns 0, or -1 with the reason in err. */
int stage_remove(const char *dir, char *err, size_t cap);

/* ---- The process tree's memory (bench_sample.c) -------------------------- */

struct tree_sampler;

/* Starts sampling the summed resident memory of this process's descendants
 * but skip (and its own) every few milliseconds; NULL when it cannot. */
struct tree_sampler *tree_sampler_start(pid_t skip);
/* Stops it; returns the largest sum seen, bytes. */
uint64_t tree_sampler_stop(struct tree_sampler *s);

#endif
