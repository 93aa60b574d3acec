/* SPDX-License-Identifier: MIT */
/* scope-report: tables, call trees, diffs and trace exports of scope profiles. */
#define _GNU_SOURCE
#include "format.h"
#include "h5guard.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-report [options] PROFILE.h5\n"
	"       scope-report --diff [options] BASE.h5 NEW.h5\n"
	"Show where the time of a scope profile went: a table of its regions by default,\n"
	"or one of the views below; or export its calls for a trace or flame-graph viewer.\n"
	"\n"
	"Views (one at most; the default is the table of regions):\n"
	"      --tree               call tree of each thread lane: total, self, calls\n"
	"      --threads            one row per thread lane\n"
	"      --processes          one row per process, then each region's spread across them\n"
	"      --diff               BASE.h5 NEW.h5: change of calls, total and self per region\n"
	"      --chrome             Chrome trace-event JSON (Perfetto, chrome://tracing)\n"
	"      --speedscope         speedscope JSON, one evented profile per thread lane\n"
	"      --folded             folded stacks weighted by self time (flamegraph.pl)\n"
	"Tables:\n"
	"      --format FMT         text (default), csv or json\n"
	"      --sort KEY           self (default), total, calls, mean, min, max, std, name\n"
	"      --top N              the first N rows only\n"
	"      --depth N            --tree: show N levels\n"
	"Selection:\n"
	"      --include REGEX      only regions whose name matches (POSIX extended; repeatable)\n"
	"      --exclude REGEX      leave out regions whose name matches (repeatable)\n"
	"      --process N          only process N (its row in /processes)\n"
	"      --rank N             only the processes of MPI rank N\n"
	"      --thread N           only thread lane N\n"
	"Exports (--chrome, --speedscope, --folded):\n"
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
	"  -o, --output FILE        write to FILE (through a temporary sibling, then renamed)\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"\n"
	"TIME is ns, or a number with a unit: 1500ns, 2.5us, 10ms, 1s; --since and --until\n"
	"count from the start of the job: its earliest process start, hosts aligned.\n"
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
	OPT_TREE = 256,
	OPT_THREADS,
	OPT_PROCESSES,
	OPT_DIFF,
	OPT_CHROME,
	OPT_SPEEDSCOPE,
	OPT_FOLDED,
	OPT_FORMAT,
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
};

static const struct option longs[] = {
	{"tree", no_argument, 0, OPT_TREE},
	{"threads", no_argument, 0, OPT_THREADS},
	{"processes", no_argument, 0, OPT_PROCESSES},
	{"diff", no_argument, 0, OPT_DIFF},
	{"chrome", no_argument, 0, OPT_CHROME},
	{"speedscope", no_argument, 0, OPT_SPEEDSCOPE},
	{"folded", no_argument, 0, OPT_FOLDED},
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
	{"output", required_argument, 0, 'o'},
	{"help", no_argument, 0, 'h'},
	{"version", no_argument, 0, 'V'},
	{0, 0, 0, 0},
};

static const char *const view_names[] = {"",	   "--tree",   "--threads",    "--processes",
					 "--diff", "--chrome", "--speedscope", "--folded"};

static void set_view(struct options *o, enum view v)
{
	if (o->view != VIEW_FLAT && o->view != v)
		die_usage("%s and %s cannot be combined: give one view", view_names[o->view],
			  view_names[v]);
	o->view = v;
}

/* Options that make sense with some views only. */
static void check_combinations(const struct options *o, int format_given, int sort_given)
{
	int export = o->view == VIEW_CHROME || o->view == VIEW_SPEEDSCOPE || o->view == VIEW_FOLDED;
	const char *v = view_names[o->view];

	if (export && format_given)
		die_usage("--format applies to tables, not to %s", v);
	if (export && (sort_given || o->top))
		die_usage("--sort and --top apply to tables, not to %s", v);
	if (!export && o->windowed)
		die_usage("--since, --until and --min-duration apply to --chrome, --speedscope "
			  "and --folded");
	if (!export && o->no_align)
		die_usage("--no-align applies to --chrome, --speedscope and --folded");
	if (sort_given &&
	    (o->view == VIEW_TREE || o->view == VIEW_DIFF || o->view == VIEW_PROCESSES) &&
	    o->sort != SORT_SELF && o->sort != SORT_TOTAL && o->sort != SORT_CALLS &&
	    o->sort != SORT_NAME)
		die_usage("%s sorts by self, total, calls or name", v);
	if ((sort_given || o->top) && o->view == VIEW_THREADS)
		die_usage("--threads lists every lane in order: --sort and --top do not apply");
	if (o->top && o->view == VIEW_TREE)
		die_usage("--top does not apply to --tree: use --depth");
	if (o->depth && o->view != VIEW_TREE)
		die_usage("--depth applies to --tree");
	if ((o->ngates || o->min_time) && o->view != VIEW_DIFF)
		die_usage("--max-regression and --min-time apply to --diff");
	if (o->thread >= 0 && (o->view == VIEW_DIFF || o->view == VIEW_PROCESSES))
		die_usage("--thread does not apply to %s, which reads the per-process totals", v);
	if (o->since && o->until && o->until <= o->since)
		die_usage("--until must come after --since");
	if (o->view == VIEW_DIFF && o->nfiles != 2)
		die_usage("--diff compares two profiles: give BASE.h5 NEW.h5");
	if (o->view != VIEW_DIFF && o->nfiles != 1)
		die_usage("%s", o->nfiles ? "give one profile (or --diff BASE.h5 NEW.h5)"
					  : "no profile given");
}

static void parse(int argc, char **argv, struct options *o)
{
	int c, format_given = 0, sort_given = 0;

	memset(o, 0, sizeof *o);
	o->process = o->rank = o->thread = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hV", longs, NULL)) != -1) {
		switch (c) {
		case OPT_TREE: set_view(o, VIEW_TREE); break;
		case OPT_THREADS: set_view(o, VIEW_THREADS); break;
		case OPT_PROCESSES: set_view(o, VIEW_PROCESSES); break;
		case OPT_DIFF: set_view(o, VIEW_DIFF); break;
		case OPT_CHROME: set_view(o, VIEW_CHROME); break;
		case OPT_SPEEDSCOPE: set_view(o, VIEW_SPEEDSCOPE); break;
		case OPT_FOLDED: set_view(o, VIEW_FOLDED); break;
		case OPT_FORMAT: o->format = format_of(optarg), format_given = 1; break;
		case OPT_SORT: o->sort = sort_of(optarg), sort_given = o->sort_given = 1; break;
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
		case OPT_SINCE: o->since = duration("--since", optarg), o->windowed = 1; break;
		case OPT_UNTIL: o->until = duration("--until", optarg), o->windowed = 1; break;
		case OPT_MIN_DURATION:
			o->min_duration = duration("--min-duration", optarg);
			o->windowed = 1;
			break;
		case OPT_NO_ALIGN: o->no_align = 1; break;
		case OPT_MAX_REGRESSION: add_gate(o, optarg); break;
		case OPT_MIN_TIME: o->min_time = duration("--min-time", optarg); break;
		case 'o': o->output = optarg; break;
		case 'h': fputs(usage, stdout); exit(0);
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
	check_combinations(o, format_given, sort_given);
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
	free(o->include);
	free(o->exclude);
	free(o->gates);
}

/* ---- Output ------------------------------------------------------------- */

struct output {
	FILE *f;
	const char *path; /* NULL: standard output */
	char *tmp;	  /* the temporary sibling, renamed over path at the end */
};

/* Opens the output: stdout, the file itself when it exists and is not a
 * regular file (/dev/null, a pipe), else a temporary sibling. */
static int output_open(struct output *w, const char *path, char *err, size_t cap)
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

/* Finishes the output: keep it (renamed into place) or throw it away.
 * Returns 0, or -1 with the reason in err. */
static int output_close(struct output *w, int keep, char *err, size_t cap)
{
	int bad = fflush(w->f) != 0 || ferror(w->f);
	int saved = errno;

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

/* ---- Crashes in the HDF5 library ---------------------------------------- */

/* ---- Main --------------------------------------------------------------- */

static int run(const struct options *o, struct rd_profile **p, FILE *out, char *err, size_t cap)
{
	const char *path = o->files[0];

	switch (o->view) {
	case VIEW_FLAT: return view_flat(o, p[0], path, out, err, cap);
	case VIEW_TREE: return view_tree(o, p[0], path, out, err, cap);
	case VIEW_THREADS: return view_threads(o, p[0], path, out, err, cap);
	case VIEW_PROCESSES: return view_processes(o, p[0], path, out, err, cap);
	case VIEW_DIFF: return view_diff(o, p[0], p[1], out, err, cap);
	case VIEW_CHROME: return view_chrome(o, p[0], path, out, err, cap);
	case VIEW_SPEEDSCOPE: return view_speedscope(o, p[0], path, out, err, cap);
	case VIEW_FOLDED: return view_folded(o, p[0], path, out, err, cap);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct rd_profile *p[2] = {NULL, NULL};
	struct options o;
	struct output w;
	char err[RD_ERR_MAX + 64];
	int rc;

	parse(argc, argv, &o);
	refuse_overwrite(&o);
	h5guard_install("scope-report");
	for (size_t i = 0; i < o.nfiles; i++) {
		h5guard_reading(o.files[i]);
		p[i] = rd_open(o.files[i], err, sizeof err);
		if (!p[i]) {
			fprintf(stderr, "scope-report: %s: %s\n", o.files[i], err);
			rd_close(p[0]);
			options_free(&o);
			return 1;
		}
		if (check_selection(&o, p[i], o.files[i]) != 0)
			exit(2);
	}
	if (output_open(&w, o.output, err, sizeof err) != 0) {
		fprintf(stderr, "scope-report: %s: %s\n", o.output, err);
		for (size_t i = 0; i < o.nfiles; i++)
			rd_close(p[i]);
		options_free(&o);
		return 1;
	}
	*h5guard_tmp() = (char *)w.tmp;
	h5guard_reading(o.view == VIEW_DIFF ? NULL : o.files[0]);
	err[0] = 0;
	rc = run(&o, p, w.f, err, sizeof err);
	h5guard_reading(NULL);
	*h5guard_tmp() = NULL;
	if (rc < 0) {
		output_close(&w, 0, NULL, 0);
		fprintf(stderr, "scope-report: %s\n", err);
		rc = 1;
	} else if (output_close(&w, 1, err, sizeof err) != 0) {
		fprintf(stderr, "scope-report: %s: %s\n", o.output ? o.output : "standard output",
			err);
		rc = 1;
	}
	for (size_t i = 0; i < o.nfiles; i++)
		rd_close(p[i]);
	options_free(&o);
	return rc;
}
