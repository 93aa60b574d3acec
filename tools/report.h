/* SPDX-License-Identifier: MIT */
/* scope-report's parts: options, selection, tables and the views that print them. */
#ifndef SCOPE_TOOLS_REPORT_H
#define SCOPE_TOOLS_REPORT_H

#include "map.h"
#include "reader.h"
#include "walk.h"

#include <regex.h>
#include <stdint.h>
#include <stdio.h>

struct view; /* a row of the table of views (scope-report.c) */
enum format { FMT_TEXT, FMT_CSV, FMT_JSON };
enum sort_key {
	SORT_SELF,
	SORT_TOTAL,
	SORT_CALLS,
	SORT_MEAN,
	SORT_MIN,
	SORT_MAX,
	SORT_STD,
	SORT_NAME
};

/* --max-regression [REGEX=]PCT */
struct gate {
	regex_t re;
	int has_re;
	double pct;
};

/* What scope-report adds to each profile it reads, once it is open. */
struct shown {
	char **names; /* per region: its name as shown (--names), kept apart */
	char **where; /* per region: "file:line", "" when not known */
	double cost;  /* ns one recorded call cost (/metadata overhead_ns_per_call), 0 unknown */
	uint64_t *by_name; /* the regions, in byte order of their full names (region_named) */
};

struct options {
	const struct view *view;
	enum format format;
	enum sort_key sort;
	int sort_given;
	size_t top;	/* 0: every row */
	uint64_t depth; /* --tree levels shown; 0: all */
	regex_t *include, *exclude;
	size_t ninclude, nexclude;
	int64_t process, rank, thread;	     /* -1: all */
	uint64_t since, until, min_duration; /* until 0: no end */
	int windowed;			     /* since, until or min_duration given */
	int no_align;			     /* --no-align: hosts' clocks as recorded */
	int on_timeline; /* the view puts calls on the job's timeline (it takes --no-align) */
	int compensate;	 /* --compensate: times less the recording's cost */
	int full_names;	 /* --names full */
	int lines;	 /* --lines */
	int quiet;	 /* -q: no progress line */
	int per_thread;	 /* --tree --per-thread */
	regex_t target;	 /* --callers or --callees REGEX */
	int has_target;
	struct gate *gates;
	size_t ngates;
	uint64_t min_time; /* --diff: gate only regions above this time */
	uint64_t max_size; /* --max-size, bytes; 0: none */
	const char *output;
	const char *dir; /* --otf2 DIR */
	const char *files[2];
	size_t nfiles;
	struct shown shown[2]; /* of files[i], filled once it is open */
};

/* The name region r of profile k (files[k]) is shown by. */
static inline const char *region_name(const struct options *o, size_t k, uint64_t r)
{
	return o->shown[k].names[r];
}

/* ---- Selection (report-select.c) ---------------------------------------- */

/* Whether a region passes --include and --exclude: a regex matches when it
 * matches its full name or the name it is shown by. */
int want_region(const struct options *o, const char *full, const char *shown);
/* want_region of every region of p (files[k]), as an array of 0/1; NULL when out of memory. */
unsigned char *region_mask(const struct options *o, size_t k, const struct rd_profile *p);
/* Whether regex re matches the region r of profile k (its full or its shown name). */
int region_matches(const struct options *o, const regex_t *re, const struct rd_profile *p, size_t k,
		   uint64_t r);
/* Whether process i of p passes --process and --rank. */
int want_process(const struct options *o, const struct rd_profile *p, size_t i);
/* Wall time of the processes selected, ns. */
uint64_t selected_wall(const struct options *o, const struct rd_profile *p);
/* Wall time of their thread lanes (of --thread only, if given), summed, ns. */
uint64_t selected_lanes_wall(const struct options *o, const struct rd_profile *p);
/* Whether --process, --rank and --thread name something in p (the profile at path):
 * 0, or -1 with the reason printed. */
int check_selection(const struct options *o, const struct rd_profile *p, const char *path);

/* ---- Call filter (report-select.c) -------------------------------------- */

/* Which calls the views keep: region, duration, time window. */
struct call_filter {
	const struct options *o;
	const struct rd_profile *p;
	size_t k;	       /* p is files[k] */
	unsigned char *wanted; /* per region */
	uint64_t *at0;	       /* per process: ns from the job's start to its start */
};
/* Returns 0, or -1 when out of memory. */
int filter_init(struct call_filter *f, const struct options *o, size_t k,
		const struct rd_profile *p);
void filter_free(struct call_filter *f);
/* Whether the call f of process passes. */
int filter_call(const struct call_filter *f, size_t process, const struct wk_frame *fr);
/* Whether a call of process at start (relative ns) lasting duration passes, whatever its region. */
int filter_time(const struct call_filter *f, size_t process, uint64_t start, uint64_t duration);
/* A time of process (ns from its start) on the job's timeline, ns since the job's start.
 * Inline: the exports call it for every call. */
static inline uint64_t filter_at(const struct call_filter *f, size_t process, uint64_t rel)
{
	uint64_t at0 = f->at0[process];
	return at0 > UINT64_MAX - rel ? UINT64_MAX : at0 + rel;
}

/* ---- The recording's cost (report-select.c) ----------------------------- */

/* The ns to take off each call of profile k: its cost with --compensate,
 * else 0 (wk_visitor.overhead_ns). */
double call_cost(const struct options *o, size_t k);
/* What recording the calls of process i (-1: of the processes chosen) cost, ns: calls,
 * those the recording's filters kept out of /events too, times the cost of one call. */
double recording_ns(const struct options *o, size_t k, const struct rd_profile *p, int64_t i);
/* Ends a text heading with ", recording 1.2 ms (3.4% of wall, 20.1 ns a call)" for process
 * i (-1: the processes chosen), wall being theirs, and with --compensate adds a line
 * saying the times are less it. */
void print_recording(const struct options *o, size_t k, const struct rd_profile *p, int64_t i,
		     uint64_t wall, FILE *out);
/* The same as JSON members: ,"recording_ns":...,"recording_pct":...,"compensated":... */
void json_recording(const struct options *o, size_t k, const struct rd_profile *p, int64_t i,
		    uint64_t wall, FILE *out);

/* ---- Recursion (report-select.c) ---------------------------------------- */

/*
 * A call counts in a total only when no call of its region is open around it
 * on its lane, as /pairs/total_ns: the inner calls of a recursion lie inside
 * the outermost one's time. A walk's visitor calls open_enter at every enter
 * and open_leave at every leave, whatever it keeps, with one map (zeroed
 * first, map_free at the end) of the calls open per lane and pair.
 * open_enter returns 0, or -1 when out of memory; open_leave, 1 when the call
 * leaving is its region's outermost on its lane, else 0.
 */
int open_enter(struct u64map *open, const struct wk_lane *l);
int open_leave(struct u64map *open, const struct wk_lane *l);

/* ---- Calls summed per pair (report-select.c) ---------------------------- */

/* A pair's calls that the filter keeps, from the events. */
struct pair_sum {
	uint64_t calls, min, max;
	uint64_t total;	    /* of the calls with no call of the pair open around them */
	uint64_t total_all; /* of every call kept */
	int64_t self;
	long double sum, sumsq; /* of the totals, for the standard deviation */
};
/* Whether the views' figures come from the calls (sum_calls) rather than /pairs:
 * --thread, --compensate, --since, --until or --min-duration. */
int from_calls(const struct options *o);
/* Every pair's calls in the processes chosen (of lane --thread only, if given) that
 * the filter keeps, summed; with --compensate, times less the recording's cost.
 * Returns an array of p->npairs, or NULL with the reason in p->err. */
struct pair_sum *sum_calls(const struct options *o, size_t k, struct rd_profile *p);

/* ---- Tables (report-table.c) -------------------------------------------- */

enum cell_kind {
	CELL_STR,   /* s */
	CELL_U64,   /* u */
	CELL_I64,   /* i */
	CELL_NS,    /* u: a duration in ns */
	CELL_NSF,   /* f: a duration in ns, fractional (a mean) */
	CELL_DNS,   /* i: a change of duration, ns, signed */
	CELL_PCT,   /* f: a percentage; NaN when there is none */
	CELL_DPCT,  /* f: a change in percent, signed; NaN when there is none */
	CELL_RATIO, /* f: a plain ratio; NaN when there is none */
	CELL_BYTES, /* u: bytes; text in B, KiB, MiB, GiB, TiB */
};

struct column {
	const char *head; /* in text */
	const char *key;  /* in CSV and JSON */
	enum cell_kind kind;
	int width;     /* in text; the last column is left-aligned and not padded */
	int no_text;   /* left out of text tables */
	int only_text; /* in text tables only */
	int off;       /* left out of every format (a column a table shows on request) */
};

union cell {
	const char *s;
	uint64_t u;
	int64_t i;
	double f;
};

/* Columns in a static table of them. */
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

struct table {
	FILE *out;
	enum format format;
	const struct column *cols;
	size_t ncols;
	size_t rows;
};

/* Text: the header line; CSV: the header row; JSON: `"key":[`. */
void table_begin(struct table *t, const char *json_key);
void table_row(struct table *t, const union cell *cells);
/* JSON: `]`. */
void table_end(struct table *t);

/* JSON documents: `{"producer":...,"profile":PATH,...` and the closing brace. */
void json_doc_begin(FILE *out, const char *path, const struct rd_profile *p);
void json_doc_end(FILE *out);
/* A finite double as JSON (0 for NaN and infinities). */
void json_double(FILE *out, double v);

/* ---- Opening profiles (report-open.c) ----------------------------------- */

/* Opens o's files into p and fills o->shown for each, as every view needs
 * them. Returns 0; 1 when one cannot be read (the reason printed, prefixed
 * with prog); 2 when the selection names nothing in one. */
int report_open(struct options *o, struct rd_profile **p, const char *prog);
/* Closes what report_open opened (p[k] NULL: not opened). */
void report_close(struct options *o, struct rd_profile **p);

/* The region of profile k (files[k]) whose full name is full; -1 when none is. */
int64_t region_named(const struct options *o, size_t k, const struct rd_profile *p,
		     const char *full);

/*
 * The names to show for n functions that the profile p (files[k]) names in
 * full outside /regions (the frames of samples, heap sites' functions),
 * repeats allowed: a region's full name gets the name the region is shown
 * by; any other, its short form (--names full: itself), numbered after the
 * regions that show the same short form, "#2", "#3"... in byte order of the
 * full names, so that no two functions are shown alike and a region keeps
 * its number of the other views. Returns n new strings (names_free), NULL
 * when out of memory.
 */
char **function_names(const struct options *o, size_t k, const struct rd_profile *p,
		      const char *const *full, size_t n);

/* ---- Comparing two profiles (report-diff.c) ------------------------------ */

/* A region's figures in one profile, summed over the processes chosen. */
struct diff_fig {
	const char *name;  /* full: regions are matched by it */
	const char *shown; /* the name shown (--names) */
	const char *file;
	uint64_t line;
	uint64_t calls, total, self;
};

/* A region in both (or one) of the profiles. Its strings are the profiles'. */
struct diff_row {
	const char *name, *shown, *file;
	uint64_t line;
	struct diff_fig f[2]; /* base, new */
	int in[2];
	double pct_total, pct_self; /* NaN without a base */
	int slower;		    /* grew more than --max-regression allows */
};

/*
 * What --diff shows of in[0] (base) and in[1] (new): one row per region of
 * either, marked by the gate (o->gates), the largest change (o->sort) first.
 * Returns the rows (free them) and their number in *n, the rows the gate
 * marked in *slower; NULL with "FILE: reason" in err.
 */
struct diff_row *diff_compute(const struct options *o, struct rd_profile *const *in, size_t *n,
			      size_t *slower, char *err, size_t cap);

/* ---- Benchmarks (report-bench.c) ----------------------------------------- */

/* Whether arg is an option of --bench (--bench, --html, --project, --margin). */
int report_bench_option(const char *arg);
/* scope-report --bench DIR ...: returns the exit status. */
int report_bench(int argc, char **argv);

/* ---- Views ------------------------------------------------------------- */

/*
 * A view prints the profile in[0] (and in[1], for a view of two profiles) to
 * out. Returns 0; 1 when it found what the exit status reports (--diff: a
 * region got slower than --max-regression allows); -1 with "FILE: reason" in
 * err. scope-report.c's table of views names each.
 */
typedef int view_fn(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		    size_t cap);

/* The size of a view's output, estimated from /pairs before it runs, bytes; the
 * calls it will write go to *calls. */
typedef uint64_t view_size_fn(const struct options *o, struct rd_profile *const *in,
			      uint64_t *calls);

view_fn view_flat, view_threads, view_processes; /* report-flat.c */
view_fn view_tasks;				 /* report-tasks.c */
view_fn view_counters;				 /* report-counters.c */
view_fn view_heap;				 /* report-heap.c */
view_fn view_tree, view_folded;			 /* report-tree.c */
view_fn view_html;				 /* report-html.c */
view_fn view_otf2;				 /* report-otf2.c: writes into o->dir */
view_size_fn size_otf2;				 /* report-otf2.c */

/* A node of a call tree: one call path. */
struct call_node {
	uint64_t region;	     /* UINT64_MAX for the root */
	uint32_t parent;	     /* UINT32_MAX for the root */
	uint64_t calls, total, self; /* of the calls kept on this path, ns */
};
struct call_tree {
	struct call_node
		*nodes; /* nodes[0] is the root when n > 0; a parent comes before its children */
	size_t n;
};
/* The call tree of the processes and lanes chosen, all merged into one root,
 * of the calls the filter keeps (report-tree.c; --folded prints the same).
 * Returns 0, or -1 with the reason in p->err. Free nodes. */
int call_tree_merged(const struct options *o, struct rd_profile *p, struct call_tree *out);
view_fn view_chrome, view_speedscope;	   /* report-export.c */
view_size_fn size_chrome, size_speedscope; /* report-export.c */
view_fn view_diff;			   /* report-diff.c */
view_fn view_callers, view_callees;	   /* report-callers.c */
view_fn view_samples, view_folded_samples; /* report-samples.c */

#endif
