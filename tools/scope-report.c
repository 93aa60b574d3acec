/* SPDX-License-Identifier: MIT */
/* scope-report: tables, call trees, diffs and trace exports of scope profiles. */
#define _GNU_SOURCE
#include "format.h"
#include "h5guard.h"
#include "names.h"
#include "profile.h"
#include "progress.h"
#include "report.h"
#include "sink.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <signal.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_head[] =
	"usage: scope-report [options] PROFILE.h5\n"
	"       scope-report --diff [options] BASE.h5 NEW.h5\n"
	"       scope-report --bench DIR [--html | --project N [--margin PCT]] [-o FILE]\n"
	"Show where the time of a scope profile went: a table of its regions by default,\n"
	"or one of the views below; or export its calls for a trace or flame-graph viewer.\n"
	"\n"
	"Views (one at most; the default is the table of regions):\n";

static const char usage_tail[] =
	"Tables:\n"
	"      --format FMT         text (default), csv or json\n"
	"      --sort KEY           self (default), total, calls, mean, min, max, std, name\n"
	"      --top N              the first N rows only\n"
	"      --depth N            --tree: show N levels\n"
	"      --per-thread         --tree: a tree per thread lane (default: per process)\n"
	"      --names FORM         short (default: geo::Mesh::refine, std::map::operator[])\n"
	"                           or full (the whole signature, as demangled)\n"
	"      --lines              a file:line column in text tables, trees and lists\n"
	"      --compensate         times less what recording the calls cost, which the\n"
	"                           profile measured (overhead_ns_per_call)\n"
	"Selection:\n"
	"      --include REGEX      only regions whose name matches (POSIX extended; repeatable)\n"
	"      --exclude REGEX      leave out regions whose name matches (repeatable)\n"
	"      --process N          only process N (its row in /processes)\n"
	"      --rank N             only the processes of MPI rank N\n"
	"      --thread N           only thread lane N\n"
	"Calls (the table, --tree, --callers, --callees, --threads, --processes, --diff and the\n"
	"exports; --since and --until choose the samples of --samples and --folded-samples too):\n"
	"      --since TIME         calls that end at TIME or later\n"
	"      --until TIME         calls that start before TIME\n"
	"      --min-duration TIME  calls that last TIME or longer\n"
	"      --no-align           keep each host's clock as recorded (by default every\n"
	"                           host is shifted so that its ranks' MPI_Init ends meet\n"
	"                           those on rank 0's host)\n"
	"Regression gate (--diff):\n"
	"      --max-regression [REGEX=]PCT\n"
	"                           exit 1 when the self or total time of a region grew more\n"
	"                           than PCT percent; with REGEX=, for the regions it matches\n"
	"                           (repeatable; the first match wins, a plain PCT is the rest)\n"
	"      --min-time TIME      gate only regions with TIME or more in BASE or NEW\n"
	"\n"
	"  -o, --output FILE        write to FILE (through a temporary sibling, then renamed);\n"
	"                           FILE.gz: gzip-compressed\n"
	"      --max-size SIZE      exports: write nothing, and exit 1, when the output would\n"
	"                           pass SIZE bytes (64K, 100M, 2G); an export estimated over\n"
	"                           1 GiB is announced on stderr either way\n"
	"  -q, --quiet              no progress line on a terminal during exports\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"\n"
	"TIME is ns, or a number with a unit: 1500ns, 2.5us, 10ms, 1s; --since and --until\n"
	"count from the start of the job: its earliest process start, hosts aligned.\n"
	"--bench DIR prints the summary of scope-bench's results in DIR again (exit 1 when a\n"
	"run failed, 3 when its --max-regression gate failed); --html draws it as a page;\n"
	"--project N prints its #SBATCH block for N units of work (--margin, default 25).\n"
	"Exit status: 0; 1 when a file cannot be read or written, or a region got slower\n"
	"than --max-regression allows; 2 for a usage error.\n";

__attribute__((noreturn, format(printf, 1, 2))) static void die_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("scope-report: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see scope-report --help)\n", stderr);
	exit(2);
}

/* ---- The views ---------------------------------------------------------- */

/* The options that only some views take: bits of struct view's takes. */
enum {
	VO_FORMAT = 1 << 0, /* --format */
	VO_SPAN = 1 << 1,   /* --since, --until */
	VO_ALIGN = 1 << 2,  /* --no-align; a view that takes it puts calls on the job's timeline */
	VO_SORT = 1 << 3,   /* --sort */
	VO_STATS = 1 << 4,  /* --sort mean, min, max or std */
	VO_TOP = 1 << 5,    /* --top */
	VO_DEPTH = 1 << 6,  /* --depth */
	VO_GATE = 1 << 7,   /* --max-regression, --min-time */
	VO_THREAD = 1 << 8, /* --thread */
	VO_COMPENSATE = 1 << 9,	 /* --compensate */
	VO_LINES = 1 << 10,	 /* --lines */
	VO_PER_THREAD = 1 << 11, /* --per-thread */
	VO_SIZE = 1 << 12,	 /* --max-size */
	VO_DURATION = 1 << 13,	 /* --min-duration */
};

/* The options that choose calls, and what every view that reads calls takes. */
#define VO_WINDOW (VO_SPAN | VO_DURATION)
#define VO_CALLS  (VO_WINDOW | VO_ALIGN)

/* What views whose figures are the whole run's, as recorded, say of the window. */
#define WHOLE_RUN ": --since, --until and --min-duration do not apply"

struct view {
	const char *name; /* its option; "" for the default, which has none */
	const char *arg;  /* the value its option takes (REGEX, DIR), or NULL */
	int dir;	  /* it writes a directory, its option's value, not to -o */
	int passes;	  /* times it reads the calls: its progress line counts them; 0: none */
	const char *help; /* its line in --help */
	view_fn *run;
	view_size_fn *size; /* its output's size, estimated before it runs; NULL: small */
	size_t profiles;    /* how many it reads: 1, or 2 (BASE.h5 NEW.h5) */
	unsigned takes;	    /* VO_* */
	struct {
		unsigned opts; /* VO_* it refuses in words of its own, instead of limits[]'s */
		const char *why;
	} refuse[2];
};

/*
 * Every view, one row each, the default first. The view options, their lines
 * in --help, which options go with which view, how many profiles a view reads
 * and what main runs all come from this table. A new view is two steps:
 *   1. its view_fn in a report-*.c file, declared with the others in report.h;
 *   2. its row here: option, help line, function, profiles, VO_* it takes.
 * Then man/scope-report.1 describes it.
 */
static const struct view views[] = {
	{.name = "",
	 .run = view_flat,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_SORT | VO_STATS | VO_TOP | VO_THREAD | VO_CALLS | VO_COMPENSATE |
		  VO_LINES},
	{.name = "--tree",
	 .help = "call tree of each process, lanes merged: total, self, calls",
	 .run = view_tree,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_SORT | VO_DEPTH | VO_THREAD | VO_CALLS | VO_COMPENSATE | VO_LINES |
		  VO_PER_THREAD,
	 .refuse = {{VO_TOP, "--top does not apply to --tree: use --depth"}}},
	{.name = "--callers",
	 .arg = "REGEX",
	 .help = "who calls the regions REGEX matches: calls, total, self",
	 .run = view_callers,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_SORT | VO_THREAD | VO_CALLS | VO_COMPENSATE | VO_LINES},
	{.name = "--callees",
	 .arg = "REGEX",
	 .help = "what the regions REGEX matches call: calls, total, self",
	 .run = view_callees,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_SORT | VO_THREAD | VO_CALLS | VO_COMPENSATE | VO_LINES},
	{.name = "--threads",
	 .help = "one row per thread lane",
	 .run = view_threads,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_THREAD | VO_CALLS,
	 .refuse = {{VO_SORT | VO_TOP,
		     "--threads lists every lane in order: --sort and --top do not apply"}}},
	{.name = "--tasks",
	 .help = "one row per task lane: calls, busy time, the threads that ran it",
	 .run = view_tasks,
	 .profiles = 1,
	 .takes = VO_FORMAT,
	 .refuse = {{VO_SORT | VO_TOP,
		     "--tasks lists every task lane in order: --sort and --top do not apply"},
		    {VO_WINDOW, "--tasks shows each task lane's busy time and span over the whole "
				"run, as recorded" WHOLE_RUN}}},
	{.name = "--counters",
	 .help = "each region's counters (scope-run --counters): total, self, IPC",
	 .run = view_counters,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_LINES,
	 .refuse = {{VO_SORT | VO_TOP,
		     "--counters lists every region by its first counter: --sort and --top do not "
		     "apply"},
		    {VO_WINDOW, "--counters shows the counters of each region's calls as the "
				"profile sums them over the whole run (/pairs)" WHOLE_RUN}}},
	{.name = "--processes",
	 .help = "one row per process, then each region's spread across them",
	 .run = view_processes,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_SORT | VO_TOP | VO_CALLS | VO_COMPENSATE | VO_LINES},
	{.name = "--heap",
	 .help = "each region's heap blocks: allocated, peak, leaked (SCOPE_HEAP=1)",
	 .run = view_heap,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_TOP | VO_LINES,
	 .refuse = {{VO_WINDOW, "--heap counts each region's heap blocks over the whole run, "
				"and blocks have no times" WHOLE_RUN}}},
	{.name = "--diff",
	 .help = "BASE.h5 NEW.h5: change of calls, total and self per region",
	 .run = view_diff,
	 .profiles = 2,
	 .takes = VO_FORMAT | VO_SORT | VO_TOP | VO_GATE | VO_CALLS | VO_COMPENSATE | VO_LINES},
	{.name = "--samples",
	 .help = "on-CPU time per function (instrumented or not) and per region, from the samples "
		 "of scope-run --sample",
	 .run = view_samples,
	 .profiles = 1,
	 .takes = VO_FORMAT | VO_TOP | VO_LINES | VO_SPAN | VO_ALIGN,
	 .refuse = {{VO_DURATION, "a sample is an instant, not a call: --min-duration does not "
				  "apply to --samples (--since and --until do)"}}},
	{.name = "--folded-samples",
	 .help = "folded stacks of the samples, instrumented code or not, weighted by CPU ns "
		 "(flamegraph.pl)",
	 .run = view_folded_samples,
	 .profiles = 1,
	 .takes = VO_SPAN | VO_ALIGN,
	 .refuse = {{VO_DURATION, "a sample is an instant, not a call: --min-duration does not "
				  "apply to --folded-samples (--since and --until do)"}}},
	{.name = "--chrome",
	 .passes = 1,
	 .help = "Chrome trace-event JSON (Perfetto, chrome://tracing)",
	 .run = view_chrome,
	 .size = size_chrome,
	 .profiles = 1,
	 .takes = VO_WINDOW | VO_ALIGN | VO_THREAD | VO_SIZE},
	{.name = "--speedscope",
	 .passes = 1,
	 .help = "speedscope JSON, one evented profile per thread lane",
	 .run = view_speedscope,
	 .size = size_speedscope,
	 .profiles = 1,
	 .takes = VO_WINDOW | VO_ALIGN | VO_THREAD | VO_SIZE},
	{.name = "--html",
	 .passes = 2,
	 .help = "one self-contained HTML page: regions, flame graph, timeline, ranks",
	 .run = view_html,
	 .profiles = 1,
	 .takes = VO_WINDOW | VO_ALIGN | VO_THREAD | VO_SIZE},
	{.name = "--otf2",
	 .passes = 1,
	 .arg = "DIR",
	 .help = "an OTF2 trace archive in DIR, a new directory (Vampir, Score-P tools)",
	 .run = view_otf2,
	 .size = size_otf2,
	 .dir = 1,
	 .profiles = 1,
	 .takes = VO_WINDOW | VO_ALIGN | VO_THREAD | VO_SIZE},
	{.name = "--folded",
	 .passes = 1,
	 .help = "folded stacks weighted by self time (flamegraph.pl)",
	 .run = view_folded,
	 .profiles = 1,
	 .takes = VO_WINDOW | VO_ALIGN | VO_THREAD | VO_SIZE},
};

#define NVIEWS (sizeof views / sizeof views[0])

/*
 * The options some views do not take, in the order they are checked: the
 * first one given that the view does not take is the error, in the view's own
 * words if it has some. %s is the view or, with takers set, the views that
 * take the option. --sort comes before its keys: a view that takes no --sort
 * says so.
 */
static const struct limit {
	unsigned opt;
	int takers;
	const char *msg;
} limits[] = {
	{VO_FORMAT, 0, "--format applies to tables, not to %s"},
	{VO_SPAN, 1, "--since and --until apply to %s"},
	{VO_DURATION, 1, "--min-duration applies to %s"},
	{VO_ALIGN, 1, "--no-align applies to %s"},
	{VO_SORT, 0, "--sort and --top apply to tables, not to %s"},
	{VO_STATS, 0, "%s sorts by self, total, calls or name"},
	{VO_TOP, 0, "--sort and --top apply to tables, not to %s"},
	{VO_DEPTH, 1, "--depth applies to %s"},
	{VO_GATE, 1, "--max-regression and --min-time apply to %s"},
	{VO_THREAD, 0, "--thread does not apply to %s, which reads the per-process totals"},
	{VO_COMPENSATE, 1, "--compensate applies to %s"},
	{VO_LINES, 1, "--lines applies to %s"},
	{VO_PER_THREAD, 1, "--per-thread applies to %s"},
	{VO_SIZE, 1, "--max-size applies to the exports %s"},
};

static void help(void)
{
	fputs(usage_head, stdout);
	for (size_t i = 0; i < NVIEWS; i++) {
		char opt[64];
		if (!views[i].help)
			continue;
		snprintf(opt, sizeof opt, "%s%s%s", views[i].name, views[i].arg ? " " : "",
			 views[i].arg ? views[i].arg : "");
		printf("      %-21s%s\n", opt, views[i].help);
	}
	fputs(usage_tail, stdout);
}

/* ---- Options ------------------------------------------------------------ */

static uint64_t number(const char *opt, const char *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *end || *v == '-' || errno)
		die_usage("bad %s '%s': give a whole number", opt, v);
	return n;
}

static int64_t index_of(const char *opt, const char *v)
{
	uint64_t n = number(opt, v);
	if (n > INT64_MAX)
		die_usage("bad %s '%s': too large", opt, v);
	return (int64_t)n;
}

static uint64_t duration(const char *opt, const char *v)
{
	uint64_t ns;
	if (parse_ns(v, &ns) != 0)
		die_usage("bad %s '%s': give ns, or a number with ns, us, ms or s", opt, v);
	return ns;
}

static void compile(regex_t *re, const char *opt, const char *v)
{
	int rc = regcomp(re, v, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char why[256];
		regerror(rc, re, why, sizeof why);
		die_usage("bad %s '%s': %s", opt, v, why);
	}
}

static regex_t *add_regex(regex_t **list, size_t *n, const char *opt, const char *v)
{
	regex_t *grown = realloc(*list, (*n + 1) * sizeof *grown);
	if (!grown)
		die_usage("out of memory");
	*list = grown;
	compile(&grown[*n], opt, v);
	return &grown[(*n)++];
}

/* [REGEX=]PCT: the last '=' splits, a regex may hold one. */
static void add_gate(struct options *o, const char *v)
{
	const char *eq = strrchr(v, '=');
	const char *pct = eq ? eq + 1 : v;
	struct gate *grown = realloc(o->gates, (o->ngates + 1) * sizeof *grown), *g;
	char *end;

	if (!grown)
		die_usage("out of memory");
	o->gates = grown;
	g = &grown[o->ngates];
	memset(g, 0, sizeof *g);
	g->pct = strtod(pct, &end);
	if (!*pct || *end || !(g->pct >= 0) || g->pct > 1e12)
		die_usage("bad --max-regression '%s': give PCT or REGEX=PCT, PCT a number >= 0", v);
	if (eq) {
		char *re = strndup(v, (size_t)(eq - v));
		if (!re)
			die_usage("out of memory");
		compile(&g->re, "--max-regression", re);
		g->has_re = 1;
		free(re);
	}
	o->ngates++;
}

static enum format format_of(const char *v)
{
	if (strcmp(v, "text") == 0)
		return FMT_TEXT;
	if (strcmp(v, "csv") == 0)
		return FMT_CSV;
	if (strcmp(v, "json") == 0)
		return FMT_JSON;
	die_usage("unknown --format '%s': use text, csv or json", v);
}

/* --names: 1 for full, 0 for short. */
static int names_of(const char *v)
{
	if (strcmp(v, "short") == 0)
		return 0;
	if (strcmp(v, "full") == 0)
		return 1;
	die_usage("unknown --names '%s': use short or full", v);
}

static enum sort_key sort_of(const char *v)
{
	static const char *const keys[] = {"self", "total", "calls", "mean",
					   "min",  "max",   "std",   "name"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(v, keys[i]) == 0)
			return (enum sort_key)i;
	die_usage("unknown --sort '%s': use self, total, calls, mean, min, max, std or name", v);
}

enum {
	OPT_FORMAT = 256,
	OPT_SORT,
	OPT_TOP,
	OPT_DEPTH,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_PROCESS,
	OPT_RANK,
	OPT_THREAD,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_MIN_DURATION,
	OPT_NO_ALIGN,
	OPT_MAX_REGRESSION,
	OPT_MIN_TIME,
	OPT_COMPENSATE,
	OPT_NAMES,
	OPT_LINES,
	OPT_PER_THREAD,
	OPT_MAX_SIZE,
	OPT_VIEW, /* OPT_VIEW + i: the view views[i] */
};

static const struct option common[] = {
	{"format", required_argument, 0, OPT_FORMAT},
	{"sort", required_argument, 0, OPT_SORT},
	{"top", required_argument, 0, OPT_TOP},
	{"depth", required_argument, 0, OPT_DEPTH},
	{"include", required_argument, 0, OPT_INCLUDE},
	{"exclude", required_argument, 0, OPT_EXCLUDE},
	{"process", required_argument, 0, OPT_PROCESS},
	{"rank", required_argument, 0, OPT_RANK},
	{"thread", required_argument, 0, OPT_THREAD},
	{"since", required_argument, 0, OPT_SINCE},
	{"until", required_argument, 0, OPT_UNTIL},
	{"min-duration", required_argument, 0, OPT_MIN_DURATION},
	{"no-align", no_argument, 0, OPT_NO_ALIGN},
	{"max-regression", required_argument, 0, OPT_MAX_REGRESSION},
	{"min-time", required_argument, 0, OPT_MIN_TIME},
	{"compensate", no_argument, 0, OPT_COMPENSATE},
	{"names", required_argument, 0, OPT_NAMES},
	{"lines", no_argument, 0, OPT_LINES},
	{"per-thread", no_argument, 0, OPT_PER_THREAD},
	{"max-size", required_argument, 0, OPT_MAX_SIZE},
	{"quiet", no_argument, 0, 'q'},
	{"output", required_argument, 0, 'o'},
	{"help", no_argument, 0, 'h'},
	{"version", no_argument, 0, 'V'},
	{0, 0, 0, 0},
};

/* getopt's long options: the views' (--tree is "tree"), then the common ones. */
static const struct option *long_options(void)
{
	static struct option all[NVIEWS + sizeof common / sizeof common[0]];
	size_t n = 0;

	for (size_t i = 0; i < NVIEWS; i++)
		if (views[i].name[0])
			all[n++] = (struct option){views[i].name + 2,
						   views[i].arg ? required_argument : no_argument,
						   0, OPT_VIEW + (int)i};
	memcpy(&all[n], common, sizeof common);
	return all;
}

static void set_view(struct options *o, const struct view *v)
{
	if (o->view != &views[0] && o->view != v)
		die_usage("%s and %s cannot be combined: give one view", o->view->name, v->name);
	o->view = v;
}

/* The VO_* options given; their values tell, but for --format and the window's. */
static unsigned given(const struct options *o, int format_given, unsigned window)
{
	int stats = o->sort == SORT_MEAN || o->sort == SORT_MIN || o->sort == SORT_MAX ||
		    o->sort == SORT_STD;

	return (format_given ? VO_FORMAT : 0u) | window | (o->no_align ? VO_ALIGN : 0u) |
	       (o->sort_given ? VO_SORT : 0u) | (o->sort_given && stats ? VO_STATS : 0u) |
	       (o->top ? VO_TOP : 0u) | (o->depth ? VO_DEPTH : 0u) |
	       (o->ngates || o->min_time ? VO_GATE : 0u) | (o->thread >= 0 ? VO_THREAD : 0u) |
	       (o->compensate ? VO_COMPENSATE : 0u) | (o->lines ? VO_LINES : 0u) |
	       (o->per_thread ? VO_PER_THREAD : 0u) | (o->max_size ? VO_SIZE : 0u);
}

/* The views that take opt: "--a", "--a and --b", "--a, --b and --c". */
static const char *takers(unsigned opt, char *buf, size_t cap)
{
	size_t n = 0, k = 0, len = 0;

	for (size_t i = 0; i < NVIEWS; i++)
		n += (views[i].takes & opt) != 0;
	buf[0] = 0;
	for (size_t i = 0; i < NVIEWS && len < cap; i++)
		if (views[i].takes & opt) {
			k++;
			len += (size_t)snprintf(buf + len, cap - len, "%s%s",
						k == 1	 ? ""
						: k == n ? " and "
							 : ", ",
						views[i].name[0] ? views[i].name : "the table");
		}
	return buf;
}

/* Options that make sense with some views only (limits[]), and the profiles a view reads. */
static void check_combinations(const struct options *o, int format_given, unsigned window)
{
	const struct view *v = o->view;
	unsigned refused = given(o, format_given, window) & ~v->takes;
	char list[256];

	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		if (!(refused & limits[i].opt))
			continue;
		for (size_t k = 0; k < sizeof v->refuse / sizeof v->refuse[0]; k++)
			if (v->refuse[k].opts & limits[i].opt)
				die_usage("%s", v->refuse[k].why);
		die_usage(limits[i].msg,
			  limits[i].takers ? takers(limits[i].opt, list, sizeof list) : v->name);
	}
	if (o->since && o->until && o->until <= o->since)
		die_usage("--until must come after --since");
	if (v->profiles == 2 && o->nfiles != 2)
		die_usage("%s compares two profiles: give BASE.h5 NEW.h5", v->name);
	if (v->profiles == 1 && o->nfiles != 1)
		die_usage("%s", o->nfiles ? "give one profile (or --diff BASE.h5 NEW.h5)"
					  : "no profile given");
}

static void parse(int argc, char **argv, struct options *o)
{
	const struct option *longs = long_options();
	int c, format_given = 0;
	unsigned window = 0; /* VO_SPAN, VO_DURATION given */

	memset(o, 0, sizeof *o);
	o->view = &views[0];
	o->process = o->rank = o->thread = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", longs, NULL)) != -1) {
		if (c >= OPT_VIEW) {
			set_view(o, &views[c - OPT_VIEW]);
			if (views[c - OPT_VIEW].dir) {
				o->dir = optarg;
			} else if (views[c - OPT_VIEW].arg) {
				if (o->has_target)
					regfree(&o->target);
				compile(&o->target, views[c - OPT_VIEW].name, optarg);
				o->has_target = 1;
			}
			continue;
		}
		switch (c) {
		case OPT_FORMAT: o->format = format_of(optarg), format_given = 1; break;
		case OPT_SORT: o->sort = sort_of(optarg), o->sort_given = 1; break;
		case OPT_TOP:
			o->top = (size_t)number("--top", optarg);
			if (!o->top)
				die_usage("bad --top '%s': give 1 or more", optarg);
			break;
		case OPT_DEPTH:
			o->depth = number("--depth", optarg);
			if (!o->depth)
				die_usage("bad --depth '%s': give 1 or more", optarg);
			break;
		case OPT_INCLUDE: add_regex(&o->include, &o->ninclude, "--include", optarg); break;
		case OPT_EXCLUDE: add_regex(&o->exclude, &o->nexclude, "--exclude", optarg); break;
		case OPT_PROCESS: o->process = index_of("--process", optarg); break;
		case OPT_RANK: o->rank = index_of("--rank", optarg); break;
		case OPT_THREAD: o->thread = index_of("--thread", optarg); break;
		case OPT_SINCE:
			o->since = duration("--since", optarg), o->windowed = 1, window |= VO_SPAN;
			break;
		case OPT_UNTIL:
			o->until = duration("--until", optarg), o->windowed = 1, window |= VO_SPAN;
			break;
		case OPT_MIN_DURATION:
			o->min_duration = duration("--min-duration", optarg);
			o->windowed = 1, window |= VO_DURATION;
			break;
		case OPT_NO_ALIGN: o->no_align = 1; break;
		case OPT_MAX_REGRESSION: add_gate(o, optarg); break;
		case OPT_MIN_TIME: o->min_time = duration("--min-time", optarg); break;
		case OPT_COMPENSATE: o->compensate = 1; break;
		case OPT_NAMES: o->full_names = names_of(optarg); break;
		case OPT_LINES: o->lines = 1; break;
		case OPT_PER_THREAD: o->per_thread = 1; break;
		case OPT_MAX_SIZE:
			if (parse_bytes(optarg, &o->max_size) != 0 || !o->max_size)
				die_usage("bad --max-size '%s': give bytes, or a number with K, M, "
					  "G or "
					  "T",
					  optarg);
			break;
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'h': help(); exit(0);
		case 'V': printf("scope-report %s\n", SCOPE_VERSION); exit(0);
		case ':': die_usage("option %s needs a value", argv[optind - 1]);
		default: die_usage("unknown option %s", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (o->nfiles == 2)
			die_usage("too many profiles: '%s'", argv[optind]);
		o->files[o->nfiles++] = argv[optind];
	}
	o->on_timeline = (o->view->takes & VO_ALIGN) != 0;
	if (o->view->dir && o->output)
		die_usage("%s writes into its DIR: -o does not apply", o->view->name);
	check_combinations(o, format_given, window);
}

static void options_free(struct options *o)
{
	for (size_t i = 0; i < o->ninclude; i++)
		regfree(&o->include[i]);
	for (size_t i = 0; i < o->nexclude; i++)
		regfree(&o->exclude[i]);
	for (size_t i = 0; i < o->ngates; i++)
		if (o->gates[i].has_re)
			regfree(&o->gates[i].re);
	if (o->has_target)
		regfree(&o->target);
	free(o->include);
	free(o->exclude);
	free(o->gates);
}

/* ---- Output ------------------------------------------------------------- */

struct output {
	FILE *f;	   /* what the view writes to: under, or the sink over it */
	FILE *under;	   /* the file itself */
	struct sink *sink; /* with -o FILE.gz or --max-size */
	const char *path;  /* NULL: standard output */
	char *tmp;	   /* the temporary sibling, renamed over path at the end */
};

/* Puts a sink between the view and the file when the output is compressed
 * or limited. Returns 0, or -1 with the reason in err. */
static int output_sink(struct output *w, int gzip, uint64_t limit, char *err, size_t cap)
{
	w->under = w->f;
	if (!gzip && !limit)
		return 0;
	if (!(w->sink = malloc(sizeof *w->sink)) ||
	    !(w->f = sink_open(w->sink, w->under, gzip, limit))) {
		free(w->sink);
		w->sink = NULL;
		w->f = w->under;
		snprintf(err, cap, "out of memory");
		return -1;
	}
	return 0;
}

/* Opens the output: stdout, the file itself when it exists and is not a
 * regular file (/dev/null, a pipe), else a temporary sibling. */
static int output_file(struct output *w, const char *path, char *err, size_t cap)
{
	struct stat st;
	char *dir, *copy;
	mode_t mask;
	int fd;

	memset(w, 0, sizeof *w);
	if (!path || strcmp(path, "-") == 0) {
		w->f = stdout;
		return 0;
	}
	w->path = path;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		w->f = fopen(path, "w");
		return w->f ? 0 : (snprintf(err, cap, "%s", strerror(errno)), -1);
	}
	copy = strdup(path);
	dir = copy ? dirname(copy) : NULL;
	if (!dir || asprintf(&w->tmp, "%s/.%s.XXXXXX", dir, basename((char *)path)) < 0) {
		free(copy);
		w->tmp = NULL;
		return snprintf(err, cap, "out of memory"), -1;
	}
	free(copy);
	fd = mkstemp(w->tmp);
	if (fd < 0) {
		snprintf(err, cap, "cannot write in its directory: %s", strerror(errno));
		free(w->tmp);
		w->tmp = NULL;
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || !(w->f = fdopen(fd, "w"))) {
		snprintf(err, cap, "%s", strerror(errno));
		close(fd);
		unlink(w->tmp);
		free(w->tmp);
		w->tmp = NULL;
		return -1;
	}
	return 0;
}

static int output_open(struct output *w, const char *path, int gzip, uint64_t limit, char *err,
		       size_t cap)
{
	if (output_file(w, path, err, cap) != 0)
		return -1;
	if (output_sink(w, gzip, limit, err, cap) != 0) {
		if (w->f != stdout)
			fclose(w->f);
		if (w->tmp)
			unlink(w->tmp);
		free(w->tmp);
		return -1;
	}
	return 0;
}

/* Finishes the output: keep it (renamed into place) or throw it away.
 * Returns 0, or -1 with the reason in err. */
static int output_close(struct output *w, int keep, char *err, size_t cap)
{
	int bad = 0, saved = 0;

	if (w->sink) {
		bad = fclose(w->f) != 0;
		saved = errno;
		w->f = w->under;
	}
	if (!bad && (fflush(w->f) != 0 || ferror(w->f)))
		bad = 1, saved = errno;

	if (w->f == stdout)
		return bad && keep ? (snprintf(err, cap, "%s", strerror(saved)), -1) : 0;
	if (!bad && w->tmp && fsync(fileno(w->f)) != 0)
		bad = 1, saved = errno;
	if (fclose(w->f) != 0 && !bad)
		bad = 1, saved = errno;
	if (w->tmp) {
		if (keep && !bad && rename(w->tmp, w->path) != 0)
			bad = 1, saved = errno;
		if (!keep || bad)
			unlink(w->tmp);
		free(w->tmp);
	}
	if (bad && keep) {
		snprintf(err, cap, "%s", strerror(saved));
		return -1;
	}
	return 0;
}

/* The report would replace a profile it reads (the same file, or a link to it). */
static void refuse_overwrite(const struct options *o)
{
	for (size_t i = 0; o->output && strcmp(o->output, "-") != 0 && i < o->nfiles; i++)
		if (rd_same_file(o->output, o->files[i]))
			die_usage("-o %s is the profile %s: write the report to another file",
				  o->output, o->files[i]);
}

/* ---- Main --------------------------------------------------------------- */

#define BIG_EXPORT (UINT64_C(1) << 30) /* exports estimated past this are announced */

/*
 * Says on stderr how large an export will be, when it is large or plainly
 * passes --max-size. Returns 0 to go on, or 1 when --max-size stops it
 * before a byte is written (an export near the limit, or compressed, is
 * measured as it is written).
 */
static int announce_size(const struct options *o, struct rd_profile *const *p, int gzip)
{
	char est[32], max[32], why[80] = "";
	const char *to = o->view->dir				    ? o->dir
			 : o->output && strcmp(o->output, "-") != 0 ? o->output
								    : "standard output";
	uint64_t calls = 0, bytes;

	if (!o->view->size)
		return 0;
	bytes = o->view->size(o, p, &calls);
	fmt_bytes(est, sizeof est, bytes);
	if (o->max_size)
		fmt_bytes(max, sizeof max, o->max_size);
	if (o->windowed || o->thread >= 0)
		snprintf(why, sizeof why, " at most");
	/* the estimate is within some 10% (tests/report.py sizes): past that margin
	 * nothing is written; below it the sink measures what is */
	if (o->max_size && !gzip && bytes / 11 > o->max_size / 10) {
		fprintf(stderr,
			"scope-report: %s would be%s about %s (%llu calls), more than --max-size "
			"%s: "
			"nothing written (%s--since, --until, --thread write less)\n",
			to, why, est, (unsigned long long)calls, max,
			o->view->dir ? "" : "FILE.gz compresses; ");
		return 1;
	}
	if (bytes > BIG_EXPORT)
		fprintf(stderr, "scope-report: %s will be%s about %s%s (%llu calls)%s\n", to, why,
			est, gzip ? " before compression" : "", (unsigned long long)calls,
			gzip || o->view->dir ? "" : "; -o FILE.gz compresses it");
	return 0;
}

/* The views drawn from /events show the stored calls only: says so, once
 * per profile, when filters kept calls out of it (the table counts them). */
static void note_aggregated(const struct options *o, struct rd_profile **p)
{
	if (o->view->run == view_flat || o->view->run == view_diff ||
	    o->view->run == view_processes)
		return; /* drawn from /pairs */
	for (size_t i = 0; i < o->nfiles; i++) {
		uint64_t stored = 0, summed = 0;
		for (size_t k = 0; k < p[i]->npairs; k++) {
			stored += p[i]->pairs[k].count;
			summed += p[i]->pairs[k].aggregated;
		}
		if (summed)
			fprintf(stderr,
				"scope-report: %s: this view shows the %llu calls stored as "
				"events; "
				"%llu more, kept out by the recording's filters, are counted in "
				"the "
				"table only\n",
				o->files[i], (unsigned long long)stored,
				(unsigned long long)summed);
	}
}

/* Starts the progress line of an export: the calls of the processes chosen,
 * read as many times as the view reads them. */
static void export_progress(struct progress *pg, const struct options *o, struct rd_profile **p,
			    const char *to)
{
	uint64_t calls = 0;
	unsigned passes = (unsigned)o->view->passes;

	if (o->view->run == view_html && from_calls(o))
		passes++; /* its table sums the calls first */
	for (size_t i = 0; i < p[0]->npairs; i++)
		if (want_process(o, p[0], p[0]->pairs[i].process))
			calls += p[0]->pairs[i].count;
	progress_start(pg, "scope-report", to, calls * passes, o->quiet || !passes);
}

/* ---- Views that write a directory -------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static uint64_t tree_bytes;

static int add_size(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path, (void)ftw;
	if (type == FTW_F)
		tree_bytes += (uint64_t)st->st_size;
	return 0;
}

/* A new, empty sibling of dir to write into: ".NAME.XXXXXX", or NULL with the reason in err. */
static char *sibling_dir(const char *dir, char *err, size_t cap)
{
	char *a = strdup(dir), *b = strdup(dir), *tmp = NULL;
	mode_t mask = umask(0);

	umask(mask);
	if (!a || !b || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(a), basename(b)) < 0) {
		snprintf(err, cap, "out of memory");
		tmp = NULL;
	} else if (!mkdtemp(tmp) || chmod(tmp, 0777 & ~mask) != 0) {
		snprintf(err, cap, "cannot write in its directory: %s", strerror(errno));
		free(tmp);
		tmp = NULL;
	}
	free(a);
	free(b);
	return tmp;
}

/*
 * Runs a view that writes a directory (--otf2 DIR): into a new sibling, which
 * becomes DIR when it is complete and within --max-size, and is removed
 * otherwise. DIR must not exist. Returns the exit status.
 */
static int report_dir(const struct options *o, struct rd_profile **p)
{
	char err[RD_ERR_MAX + 320], max[32], got[32];
	struct options in = *o;
	struct progress pg;
	struct stat st;
	int rc;

	if (lstat(o->dir, &st) == 0) {
		fprintf(stderr, "scope-report: %s exists: give %s a new directory\n", o->dir,
			o->view->name);
		return 1;
	}
	if (announce_size(o, p, 0) != 0)
		return 1;
	if (!(in.dir = sibling_dir(o->dir, err, sizeof err))) {
		fprintf(stderr, "scope-report: %s: %s\n", o->dir, err);
		return 1;
	}
	h5guard_reading(o->files[0]);
	err[0] = 0;
	note_aggregated(o, p);
	export_progress(&pg, o, p, o->dir);
	rc = o->view->run(&in, p, NULL, err, sizeof err);
	progress_end(&pg);
	h5guard_reading(NULL);
	tree_bytes = 0;
	if (rc == 0 && o->max_size && nftw(in.dir, add_size, 16, FTW_PHYS) == 0 &&
	    tree_bytes > o->max_size) {
		fprintf(stderr,
			"scope-report: %s passed --max-size %s (%s written): nothing written\n",
			o->dir, fmt_bytes(max, sizeof max, o->max_size),
			fmt_bytes(got, sizeof got, tree_bytes));
		rc = 1;
	} else if (rc == 0 && rename(in.dir, o->dir) != 0) {
		fprintf(stderr, "scope-report: %s: %s\n", o->dir, strerror(errno));
		rc = 1;
	} else if (rc < 0) {
		fprintf(stderr, "scope-report: %s\n", err);
		rc = 1;
	}
	if (rc != 0)
		nftw(in.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free((char *)in.dir);
	return rc;
}

/* Runs o's view of p into o's output; returns the exit status. */
static int report(const struct options *o, struct rd_profile **p)
{
	char err[RD_ERR_MAX + 64];
	struct output w;
	struct progress pg;
	int rc, gzip = sink_gzip_name(o->output);
	const char *to = o->output ? o->output : "standard output";

	if (o->view->dir)
		return report_dir(o, p);
	if (announce_size(o, p, gzip) != 0)
		return 1;
	if (output_open(&w, o->output, gzip, o->max_size, err, sizeof err) != 0) {
		fprintf(stderr, "scope-report: %s: %s\n", o->output, err);
		return 1;
	}
	*h5guard_tmp() = (char *)w.tmp;
	h5guard_reading(o->view->profiles == 1 ? o->files[0] : NULL);
	err[0] = 0;
	note_aggregated(o, p);
	export_progress(&pg, o, p, to);
	rc = o->view->run(o, p, w.f, err, sizeof err);
	progress_end(&pg);
	h5guard_reading(NULL);
	*h5guard_tmp() = NULL;
	if (rc >= 0 && w.sink && w.sink->over) {
		char max[32], in[32];
		output_close(&w, 0, NULL, 0);
		fprintf(stderr, "scope-report: %s passed --max-size %s (%s%s written): %s\n", to,
			fmt_bytes(max, sizeof max, o->max_size),
			fmt_bytes(in, sizeof in, w.sink->in),
			w.sink->gzip ? " before compression" : "",
			w.path ? "nothing written" : "the rest left out");
		free(w.sink);
		return 1;
	}
	if (rc < 0) {
		output_close(&w, 0, NULL, 0);
		free(w.sink);
		fprintf(stderr, "scope-report: %s\n", err);
		return 1;
	}
	if (output_close(&w, 1, err, sizeof err) != 0) {
		free(w.sink);
		fprintf(stderr, "scope-report: %s: %s\n", to, err);
		return 1;
	}
	free(w.sink);
	return rc;
}

int main(int argc, char **argv)
{
	struct rd_profile *p[2] = {NULL, NULL};
	struct options o;
	int rc;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (report_bench_option(argv[i]))
			return report_bench(argc, argv);
	parse(argc, argv, &o);
	refuse_overwrite(&o);
	h5guard_install("scope-report");
	rc = report_open(&o, p, "scope-report");
	if (rc == 0)
		rc = report(&o, p);
	report_close(&o, p);
	options_free(&o);
	return rc;
}
