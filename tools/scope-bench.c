/* SPDX-License-Identifier: MIT */
/* scope-bench: runs a program's baseline and variants in turn, each warmed up, repeated and
 * profiled from a fresh directory, and says what got slower. */
#define _GNU_SOURCE
#include "bench_stats.h"
#include "bench_summary.h"
#include "format.h"
#include "h5guard.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-bench [options] [--] PROGRAM [ARGS...]\n"
	"Run PROGRAM with ARGS (the baseline), then each variant, one run at a time: a warm-up,\n"
	"then --repeat measured runs, each profiled as scope-run does and each from a fresh\n"
	"working directory. Write every run's profile and log and bench.json into the results\n"
	"folder, and print on stderr each configuration's median, p90 and max, its ratios to\n"
	"the baseline and the regions whose time changed most.\n"
	"\n"
	"  -o, --output DIR         the results folder (default: scope-bench-PROGRAM-DATE here)\n"
	"      --stage DIR          each run works in a fresh copy of DIR (default: an empty one)\n"
	"      --repeat N           measured runs of each configuration, 1 to 1000 (default 3)\n"
	"      --variant NAME[=ARGS]\n"
	"                           a variant: ARGS (split as a shell splits words) appended to\n"
	"                           the program's; its results are labelled variant_NAME\n"
	"      --env VAR=VALUE      set VAR in the last --variant's runs (repeatable)\n"
	"      --exe PROGRAM        run PROGRAM (another build) in the last --variant's runs\n"
	"      --no-warm-up         no unmeasured run before each configuration's\n"
	"      --warm-up-args ARGS  appended to the warm-up's arguments (to make it shorter)\n"
	"      --keep               keep the working directories (in DIR/work)\n"
	"      --no-profile         measure without the profiler (its cost, on the same job)\n"
	"      --memory             after each configuration that succeeded, one more run that\n"
	"                           tracks the heap (SCOPE_HEAP=1): LABEL-heap.h5, untimed\n"
	"      --max-regression PCT exit 3 when a variant's median wall time, or the baseline's\n"
	"                           slowest repeat, is more than PCT percent over the baseline's\n"
	"                           median\n"
	"      --top N              changed regions shown per variant (default 10)\n"
	"      --project N          print an #SBATCH block for N units of the baseline's work\n"
	"      --margin PCT         added to the projection's figures (default 25)\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"\n"
	"Exit status: 0; 1 when a run failed or the results could not be written; 2 for a usage\n"
	"error; 3 when --max-regression failed; 130 when interrupted.\n";

__attribute__((noreturn, format(printf, 1, 2))) static void die_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("scope-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see scope-bench --help)\n", stderr);
	exit(2);
}

__attribute__((noreturn)) static void out_of_memory(void)
{
	fputs("scope-bench: out of memory\n", stderr);
	exit(1);
}

/* ---- Options ------------------------------------------------------------ */

/* A number in [lo, max], lo being 0 or a bound above 0 (zero excluded). */
static double number(const char *opt, const char *v, int zero, double max)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !(zero ? d >= 0 : d > 0) || d > max)
		die_usage("bad %s '%s': give a number %s 0, at most %g", opt, v,
			  zero ? "from" : "above", max);
	return d;
}

static unsigned whole(const char *opt, const char *v, unsigned lo, unsigned hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < (long)lo || n > (long)hi)
		die_usage("bad %s '%s': give a whole number from %u to %u", opt, v, lo, hi);
	return (unsigned)n;
}

/* A variant's name becomes a file name: letters, digits, '_', '-', '.'. */
static void check_name(const struct bench_plan *p, const char *name)
{
	if (!*name || strlen(name) > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
			 "XYZ0123456789_-.") != strlen(name) ||
	    name[0] == '.' || name[0] == '-')
		die_usage("bad --variant name '%s': use letters, digits, '_', '-' and '.' (not "
			  "first), at most 64",
			  name);
	for (size_t i = 1; i < p->nconfigs; i++)
		if (strcmp(p->configs[i].name, name) == 0)
			die_usage("--variant %s is given twice", name);
}

static struct bench_config *add_config(struct bench_plan *p, const char *name)
{
	struct bench_config *grown = realloc(p->configs, (p->nconfigs + 1) * sizeof *grown), *c;

	if (!grown)
		out_of_memory();
	p->configs = grown;
	c = &grown[p->nconfigs++];
	memset(c, 0, sizeof *c);
	c->name = name;
	snprintf(c->label, sizeof c->label, "%s%s", name ? BENCH_VARIANT : BENCH_BASELINE,
		 name ? name : "");
	return c;
}

/* --variant NAME[=ARGS] */
static void add_variant(struct bench_plan *p, const char *v)
{
	const char *eq = strchr(v, '=');
	char *name = eq ? strndup(v, (size_t)(eq - v)) : strdup(v);
	struct bench_config *c;
	int rc;

	if (!name)
		out_of_memory();
	check_name(p, name);
	c = add_config(p, name);
	if (eq && (rc = split_words(eq + 1, &c->args)) != 0) {
		if (rc < 0)
			out_of_memory();
		die_usage("bad --variant '%s': a quote is not closed", v);
	}
}

static struct bench_config *last_variant(struct bench_plan *p, const char *opt)
{
	if (p->nconfigs < 2)
		die_usage("%s sets what a variant runs: give it after --variant NAME", opt);
	return &p->configs[p->nconfigs - 1];
}

static void add_env(struct bench_plan *p, const char *v)
{
	struct bench_config *c = last_variant(p, "--env");
	const char *eq = strchr(v, '=');

	if (!eq || eq == v)
		die_usage("bad --env '%s': give VAR=VALUE", v);
	if (strings_add(&c->env, v) != 0)
		out_of_memory();
}

static void set_exe(struct bench_plan *p, const char *v)
{
	struct bench_config *c = last_variant(p, "--exe");

	if (c->exe)
		die_usage("--exe is given twice for --variant %s", c->name);
	c->exe = v;
}

enum {
	STAGE = 256,
	REPEAT,
	VARIANT,
	ENV,
	EXE,
	NO_WARM_UP,
	WARM_UP_ARGS,
	KEEP,
	NO_PROFILE,
	MEMORY,
	MAX_REGRESSION,
	TOP,
	PROJECT,
	MARGIN,
};

static void parse(int argc, char **argv, struct bench_plan *p)
{
	static const struct option longs[] = {
		{"output", required_argument, 0, 'o'},
		{"stage", required_argument, 0, STAGE},
		{"repeat", required_argument, 0, REPEAT},
		{"variant", required_argument, 0, VARIANT},
		{"env", required_argument, 0, ENV},
		{"exe", required_argument, 0, EXE},
		{"no-warm-up", no_argument, 0, NO_WARM_UP},
		{"warm-up-args", required_argument, 0, WARM_UP_ARGS},
		{"keep", no_argument, 0, KEEP},
		{"no-profile", no_argument, 0, NO_PROFILE},
		{"memory", no_argument, 0, MEMORY},
		{"max-regression", required_argument, 0, MAX_REGRESSION},
		{"top", required_argument, 0, TOP},
		{"project", required_argument, 0, PROJECT},
		{"margin", required_argument, 0, MARGIN},
		{"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},
		{0, 0, 0, 0}};
	const char *stage = NULL;
	int c, rc;

	memset(p, 0, sizeof *p);
	p->repeat = 3;
	p->warm_up = p->profile = 1;
	p->max_regression = -1;
	p->margin = BENCH_DEFAULT_MARGIN;
	p->top = 10;
	add_config(p, NULL);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:hV", longs, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				die_usage("the results folder's name is empty (give one with -o)");
			p->results = optarg;
			break;
		case STAGE: stage = optarg; break;
		case REPEAT: p->repeat = whole("--repeat", optarg, 1, 1000); break;
		case VARIANT: add_variant(p, optarg); break;
		case ENV: add_env(p, optarg); break;
		case EXE: set_exe(p, optarg); break;
		case NO_WARM_UP: p->warm_up = 0; break;
		case WARM_UP_ARGS:
			if ((rc = split_words(optarg, &p->warm_up_args)) != 0) {
				if (rc < 0)
					out_of_memory();
				die_usage("bad --warm-up-args '%s': a quote is not closed", optarg);
			}
			break;
		case KEEP: p->keep = 1; break;
		case NO_PROFILE: p->profile = 0; break;
		case MEMORY: p->memory = 1; break;
		case MAX_REGRESSION:
			p->max_regression = number("--max-regression", optarg, 1, 1e9);
			break;
		case TOP: p->top = whole("--top", optarg, 1, 1000000); break;
		case PROJECT: p->project = number("--project", optarg, 0, 1e12); break;
		case MARGIN: p->margin = number("--margin", optarg, 1, 1000); break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-bench %s\n", SCOPE_VERSION); exit(0);
		case ':': die_usage("option %s needs a value", argv[optind - 1]);
		default: die_usage("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die_usage("no program to run");
	p->argv = argv + optind;
	if (stage) {
		struct stat st;
		if (stat(stage, &st) != 0 || !S_ISDIR(st.st_mode))
			die_usage("--stage %s is not a folder", stage);
		if (!realpath(stage, p->stage))
			die_usage("--stage %s: %s", stage, strerror(errno));
		p->has_stage = 1;
	}
}

/* Each configuration's program, as execvp would find it, that can be profiled. */
static void find_programs(struct bench_plan *p)
{
	for (size_t i = 0; i < p->nconfigs; i++) {
		struct bench_config *c = &p->configs[i];
		const char *name = c->exe ? c->exe : p->argv[0], *why;
		char found[PATH_MAX];
		if (launch_find_program(name, found, sizeof found) != 0)
			die_usage("%s: no such program (or not executable)", name);
		/* absolute: every run starts in a working directory of its own */
		launch_absolute(c->program, sizeof c->program, found);
		if (p->profile || p->memory) {
			if ((why = launch_cannot_preload(c->program)) != NULL) {
				fprintf(stderr,
					"scope-bench: %s %s; it cannot be profiled by preloading "
					"(try --no-profile)\n",
					c->program, why);
				exit(2);
			}
		}
	}
}

/* ---- The results folder ------------------------------------------------- */

static void default_results(char *out, size_t cap, const char *program)
{
	char prog[PATH_MAX], stamp[32];
	time_t when = time(NULL);
	struct tm tm;

	snprintf(prog, sizeof prog, "%s", program);
	localtime_r(&when, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	snprintf(out, cap, "scope-bench-%s-%s", basename(prog), stamp);
}

/* Makes the results folder and its work folder; one that holds a
 * benchmark's results already is refused. */
static int make_results(struct bench_plan *p)
{
	char given[PATH_MAX], path[PATH_MAX + 16];
	struct stat st;

	if (p->results)
		snprintf(given, sizeof given, "%s", p->results);
	else
		default_results(given, sizeof given, p->argv[0]);
	launch_absolute(p->dir, sizeof p->dir, given);
	if (mkdir(p->dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "scope-bench: cannot make %s: %s\n", p->dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/" BENCH_JSON, p->dir);
	if (stat(p->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "scope-bench: %s is not a folder: give another with -o\n", p->dir);
		return -1;
	}
	if (access(path, F_OK) == 0) {
		fprintf(stderr,
			"scope-bench: %s holds a benchmark's results already: remove it or give "
			"another folder with -o\n",
			p->dir);
		return -1;
	}
	snprintf(path, sizeof path, "%s/" BENCH_WORK, p->dir);
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "scope-bench: cannot make %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- Running ------------------------------------------------------------ */

static volatile sig_atomic_t interrupted;

/* The benchmark stops after the run in progress, which Ctrl-C reaches
 * through the terminal; a batch system's SIGTERM is passed on to it. */
static void on_stop(int sig)
{
	interrupted = 1;
	if (sig != SIGINT && bench_child > 0)
		kill(bench_child, sig);
}

static void utc_now(char *out, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static struct bench_run *next_run(struct bench_results *r, size_t config, enum bench_kind kind,
				  unsigned repeat)
{
	const char *label = r->plan->configs[config].label;
	struct bench_run *run;

	if (r->nruns == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct bench_run *grown = realloc(r->runs, cap * sizeof *grown);
		if (!grown)
			out_of_memory();
		r->runs = grown;
		r->cap = cap;
	}
	run = &r->runs[r->nruns++];
	memset(run, 0, sizeof *run);
	run->config = config;
	run->kind = kind;
	run->repeat = repeat;
	if (kind == BENCH_WARM_UP)
		snprintf(run->name, sizeof run->name, "%s-warm-up", label);
	else if (kind == BENCH_MEMORY)
		snprintf(run->name, sizeof run->name, "%s-heap", label);
	else
		snprintf(run->name, sizeof run->name, "%s-%u", label, repeat);
	return run;
}

static void say_run(const struct bench_run *r)
{
	char wall[32];

	if (!r->started) {
		fprintf(stderr, "  %-28s FAILED: %s\n", r->name, r->error);
		return;
	}
	fprintf(stderr, "  %-28s wall %s, CPU %.3f s, peak RSS %.1f MiB, wrote %llu bytes%s%s\n",
		r->name, fmt_ns(wall, sizeof wall, r->f.wall_s * 1e9), r->f.cpu_s,
		(double)r->f.peak_rss_bytes / 1048576.0, (unsigned long long)r->f.output_bytes,
		r->failed ? ": FAILED, " : "", r->failed ? r->error : "");
}

/* One configuration: its warm-up, its measured runs, its memory pass. */
static void run_config(struct bench_results *r, size_t c)
{
	const struct bench_plan *p = r->plan;
	const struct bench_config *cfg = &p->configs[c];
	int all_ok = 1;

	fprintf(stderr, "scope-bench: [%zu/%zu] %s\n", c + 1, p->nconfigs, cfg->label);
	if (p->warm_up && !interrupted) {
		struct bench_run *w = next_run(r, c, BENCH_WARM_UP, 0);
		char profile[PATH_MAX + 256];
		bench_run(p, cfg, w);
		snprintf(profile, sizeof profile, "%s/%s.h5", p->dir, w->name);
		unlink(profile); /* a warm-up is not measured: only its log stays */
		w->has_profile = 0;
		if (w->failed)
			fprintf(stderr, "  %-28s FAILED: %s (not measured)\n", w->name, w->error);
	}
	for (unsigned k = 1; k <= p->repeat && !interrupted; k++) {
		struct bench_run *run = next_run(r, c, BENCH_MEASURED, k);
		bench_run(p, cfg, run);
		say_run(run);
		all_ok &= !run->failed;
	}
	if (p->memory && all_ok && !interrupted) {
		struct bench_run *m = next_run(r, c, BENCH_MEMORY, 0);
		bench_run(p, cfg, m);
		fprintf(stderr, "  %-28s %s%s\n", m->name, m->failed ? "FAILED: " : "heap tracked",
			m->failed ? m->error : "");
	}
}

/* bench.json, then the summary read back from it (what scope-report
 * --bench prints), then the projection. Returns the exit status. */
static int finish(struct bench_results *r)
{
	const struct bench_plan *p = r->plan;
	char err[512];
	struct json *j;
	int rc;

	utc_now(r->finished_utc, sizeof r->finished_utc);
	if (bench_stats(r) != 0)
		out_of_memory();
	if (bench_json_write(r, err, sizeof err) != 0) {
		fprintf(stderr, "scope-bench: cannot write %s/" BENCH_JSON ": %s\n", p->dir, err);
		return 1;
	}
	if (!(j = bench_load(p->dir, err, sizeof err))) {
		fprintf(stderr, "scope-bench: %s\n", err);
		return 1;
	}
	fputc('\n', stderr);
	rc = bench_summary(stderr, j, p->dir, err, sizeof err);
	if (p->project > 0) {
		fflush(stderr);
		if (bench_project(stdout, j, p->project, p->margin, err, sizeof err) != 0) {
			fprintf(stderr, "scope-bench: --project: %s\n", err);
			rc = rc ? rc : 1;
		}
	}
	json_free(j);
	if (interrupted)
		return 130;
	if (r->gate_failed)
		return 3;
	return rc < 0 ? 1 : rc;
}

int main(int argc, char **argv)
{
	struct bench_plan plan;
	struct bench_results r;
	struct sigaction stop = {.sa_handler = on_stop};
	int rc;

	parse(argc, argv, &plan);
	find_programs(&plan);
	if ((plan.profile || plan.memory) && launch_locate(&plan.paths, "scope-bench") != 0)
		return 2;
	if (make_results(&plan) != 0)
		return 1;
	h5guard_install("scope-bench");
	gather_tool = "scope-bench";
	/* Orphans of a run become scope-bench's children: a run ends when
	 * everything it started has ended, profiled or not. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &stop, NULL);
	memset(&r, 0, sizeof r);
	r.plan = &plan;
	machine_read(&r.machine);
	utc_now(r.started_utc, sizeof r.started_utc);
	fprintf(stderr, "scope-bench: %zu configuration%s into %s\n", plan.nconfigs,
		plan.nconfigs == 1 ? "" : "s", plan.dir);
	for (size_t c = 0; c < plan.nconfigs && !interrupted; c++)
		run_config(&r, c);
	r.interrupted = interrupted;
	rc = finish(&r);
	bench_stats_free(&r);
	free(r.runs);
	return rc;
}
