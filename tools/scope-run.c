/* SPDX-License-Identifier: MIT */
/* scope-run: runs a program under libscope_preload.so and prints where its time went. */
#define _GNU_SOURCE
#include "format.h"
#include "gather.h"
#include "job.h"
#include "launch.h"
#include "merge.h"
#include "profile.h"
#include "reader.h"
#include "run_filters.h"
#include "storage.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-run [options] [--] PROGRAM [ARGS...]\n"
	"Run PROGRAM (built with -finstrument-functions) and record every call of every\n"
	"instrumented function into one HDF5 profile; then print the regions with the most\n"
	"self time, and the run's wall time, CPU time and peak memory, on stderr.\n"
	"\n"
	"  -o, --output FILE        the profile (default: scope-PROGRAM-DATE-HOST-PID.h5 here)\n"
	"      --compression SPEC   auto (default: deflate from 16384 calls), none, gzip, "
	"gzip:1..9\n"
	"      --chunk-size N       calls per HDF5 chunk of each column (default 65536)\n"
	"      --write-at-exit      start writing the profile once the program has ended\n"
	"                           (default: while it runs, on another core)\n"
	"      --libcalls KINDS     C library calls recorded as regions: none, wait (default:\n"
	"                           joins, locks, sleeps, polls), io (read, write, open...), all\n"
	"      --paused             start paused: record nothing until the program calls\n"
	"                           scope_resume_process() (scope.h)\n"
	"      --counters EVENTS    counters read over each call: perf::TASK-CLOCK,\n"
	"                           perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES,\n"
	"                           perf::CPU-MIGRATIONS, PAPI events; comma-separated, at most 4\n"
	"      --counter-regions RE only in the regions whose name matches RE\n"
	"  -F, --only REGEX         store only calls of functions matching REGEX and the calls\n"
	"                           they make (repeatable; POSIX extended, matched anywhere\n"
	"                           in the demangled name or its short form)\n"
	"  -N, --not REGEX          never store calls of functions matching REGEX; the calls\n"
	"                           they make are stored at their true depth (repeatable)\n"
	"      --not-subtree        with --not: store none of the calls they make either\n"
	"  -D, --depth N            store calls N levels deep: depths 0 to N-1\n"
	"  -t, --min-duration T     store only calls lasting T or more (ns, or 10us, 2ms, 1s)\n"
	"                           Calls not stored are still counted exactly, per function\n"
	"      --sample HZ          also sample each thread's stack HZ times per second of its\n"
	"                           CPU time (libunwind), instrumented code or not\n"
	"  -q, --quiet              print no summary, and no progress line while the\n"
	"                           profile is written (SCOPE_PROGRESS=off)\n"
	"      --top N              rows in the summary, 0 to 1000000 (default 10)\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"\n"
	"The exit status is PROGRAM's, or 128+N when a signal N ended it; 2 for a usage error.\n"
	"When the profile could not be written with every process of the run, nothing is\n"
	"written to FILE, a line says where the recorded data is kept, and the status is\n"
	"PROGRAM's if that is not 0, else 1.\n"
	"SCOPE_* variables set in the environment apply too: see scope(7).\n";

#define MAX_TOP 1000000

struct options {
	const char *output, *compression, *chunk, *libcalls, *counters, *counter_regions;
	struct run_filters filters;
	int quiet, at_exit, paused;
	size_t top;
	char **argv;
};

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "scope-run: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see scope-run --help)\n");
	exit(2);
}

/* SCOPE_WRITE=exit: the writer waits for the program's end (as
 * --write-at-exit); alongside, the default, writes while it runs. */
static int write_at_exit(void)
{
	const char *v = getenv("SCOPE_WRITE");

	if (!v || !*v || strcmp(v, "alongside") == 0)
		return 0;
	if (strcmp(v, "exit") == 0)
		return 1;
	fprintf(stderr, "scope-run: SCOPE_WRITE='%s' is not alongside or exit; using alongside\n",
		v);
	return 0;
}

static void parse(int argc, char **argv, struct options *o)
{
	enum {
		COMPRESSION = 256,
		CHUNK,
		TOP,
		ATEXIT,
		LIBCALLS,
		PAUSED,
		COUNTERS,
		COUNTER_REGIONS,
		NOT_SUBTREE,
		SAMPLE
	};
	static const struct option longs[] = {
		{"output", required_argument, 0, 'o'},
		{"compression", required_argument, 0, COMPRESSION},
		{"chunk-size", required_argument, 0, CHUNK},
		{"quiet", no_argument, 0, 'q'},
		{"top", required_argument, 0, TOP},
		{"write-at-exit", no_argument, 0, ATEXIT},
		{"libcalls", required_argument, 0, LIBCALLS},
		{"paused", no_argument, 0, PAUSED},
		{"counters", required_argument, 0, COUNTERS},
		{"counter-regions", required_argument, 0, COUNTER_REGIONS},
		{"only", required_argument, 0, 'F'},
		{"not", required_argument, 0, 'N'},
		{"not-subtree", no_argument, 0, NOT_SUBTREE},
		{"depth", required_argument, 0, 'D'},
		{"min-duration", required_argument, 0, 't'},
		{"sample", required_argument, 0, SAMPLE},
		{"help", no_argument, 0, 'h'},
		{"version", no_argument, 0, 'V'},
		{0, 0, 0, 0}};
	struct storage st;
	char *end;
	long top;
	int c;

	memset(o, 0, sizeof *o);
	o->top = 10;
	o->at_exit = write_at_exit();
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:qhVF:N:D:t:", longs, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				die_usage("%s", "the output file name is empty (give one with -o)");
			o->output = optarg;
			break;
		case COMPRESSION:
			if (storage_parse(&st, optarg) != 0)
				die_usage("unknown compression '%s': use auto, none, gzip or "
					  "gzip:1..9",
					  optarg);
			o->compression = optarg;
			break;
		case CHUNK:
			if (storage_parse_chunk(&st, optarg) != 0)
				die_usage("bad chunk size '%s': give 1 to 67108864 elements",
					  optarg);
			o->chunk = optarg;
			break;
		case LIBCALLS:
			if (strcmp(optarg, "none") != 0 && strcmp(optarg, "wait") != 0 &&
			    strcmp(optarg, "io") != 0 && strcmp(optarg, "all") != 0)
				die_usage("unknown --libcalls '%s': use none, wait, io or all",
					  optarg);
			o->libcalls = optarg;
			break;
		case 'F':
		case 'N':
			if (run_filters_add(&o->filters,
					    c == 'F' ? RUN_FILTER_ONLY : RUN_FILTER_NOT,
					    optarg) != 0)
				exit(2);
			break;
		case NOT_SUBTREE: o->filters.not_subtree = 1; break;
		case 'D': o->filters.depth = optarg; break;
		case 't': o->filters.min_duration = optarg; break;
		case SAMPLE: o->filters.sample = optarg; break;
		case 'q': o->quiet = 1; break;
		case ATEXIT: o->at_exit = 1; break;
		case PAUSED: o->paused = 1; break;
		case COUNTERS: o->counters = optarg; break;
		case COUNTER_REGIONS: o->counter_regions = optarg; break;
		case TOP:
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (*end || !*optarg || errno || top < 0 || top > MAX_TOP)
				die_usage("bad --top '%s': give a number of rows from 0 to 1000000",
					  optarg);
			o->top = (size_t)top;
			break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-run %s\n", SCOPE_VERSION); exit(0);
		case ':': die_usage("option %s needs a value", argv[optind - 1]); break;
		default: die_usage("unknown option %s", argv[optind - 1]);
		}
	}
	if (run_filters_check(&o->filters) != 0)
		exit(2);
	if (optind >= argc)
		die_usage("%s", "no program to run");
	o->argv = argv + optind;
}

/* The profile must not take the place of the program it profiles, nor of
 * a folder. Returns 0, or -1 after one line saying why not. */
static int check_output(const char *output, const char *program)
{
	struct stat out, prog;

	if (stat(output, &out) != 0)
		return 0;
	if (S_ISDIR(out.st_mode)) {
		fprintf(stderr, "scope-run: %s is a directory: give a file name with -o\n", output);
		return -1;
	}
	if (stat(program, &prog) == 0 && out.st_dev == prog.st_dev && out.st_ino == prog.st_ino) {
		fprintf(stderr,
			"scope-run: %s is the program to run: writing the profile there would "
			"replace it (give another file with -o)\n",
			output);
		return -1;
	}
	return 0;
}

static void default_output(char *out, size_t cap, const char *program, pid_t pid, time_t when)
{
	char prog[PATH_MAX], stamp[32], host[128] = "host";
	struct tm tm;

	snprintf(prog, sizeof prog, "%s", program);
	localtime_r(&when, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	gethostname(host, sizeof host - 1);
	host[strcspn(host, ".")] = '\0';
	snprintf(out, cap, "scope-%s-%s-%s-%d.h5", basename(prog), stamp, host, (int)pid);
}

/* In the child: the environment the library reads, then exec. */
static void exec_child(const struct options *o, const char *program, const struct launch_paths *lp,
		       const char *output, const struct run_dirs *d, const struct run_writer *w)
{
	if (launch_env(lp, output, d, w) != 0)
		_exit(127);
	if (o->compression)
		setenv("SCOPE_COMPRESSION", o->compression, 1);
	if (o->chunk)
		setenv("SCOPE_CHUNK_SIZE", o->chunk, 1);
	if (o->libcalls)
		setenv("SCOPE_LIBCALLS", o->libcalls, 1);
	if (o->paused)
		setenv("SCOPE_START_PAUSED", "1", 1);
	if (o->counters)
		setenv("SCOPE_COUNTERS", o->counters, 1);
	if (o->counter_regions)
		setenv("SCOPE_COUNTER_REGIONS", o->counter_regions, 1);
	execv(program, o->argv);
	fprintf(stderr, "scope-run: cannot run %s: %s\n", program, strerror(errno));
	_exit(127);
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void say_lost(uint64_t lost)
{
	if (lost)
		fprintf(stderr,
			"scope-run: %llu calls were not recorded (see lost_records in /metadata "
			"and /processes)\n",
			(unsigned long long)lost);
}

/* The losses, as the run's writer counted them in the parts it published,
 * when it published every part gathered (no other writer's, no recovered
 * one's); else as the output says. */
static int run_lost(const char *output, const struct run_writer *w, int nparts, uint64_t *lost,
		    char *err, size_t cap)
{
	if (w->parts > 0 && w->parts == nparts) {
		*lost = w->lost;
		return 0;
	}
	return rd_lost_records(output, lost, err, cap);
}

/* written: whether this run wrote output (else it holds another run's
 * profile, or nothing, and the library, the writer or the gathering said why);
 * nparts: the parts it was gathered from. */
static void print_summary(const struct options *o, const char *output, int written, int nparts,
			  double wall, const struct rusage *ru, const struct run_writer *w)
{
	struct summary s;
	char err[512];
	int have = 0;
	uint64_t lost;

	if (!written) {
		/* nothing of this run to summarise */
	} else if (o->quiet) {
		/* the losses alone, without reading the tables */
		if (run_lost(output, w, nparts, &lost, err, sizeof err) != 0)
			fprintf(stderr, "scope-run: cannot read %s: %s\n", output, err);
		else
			say_lost(lost);
	} else if (summary_read(output, &s, err, sizeof err) != 0) {
		fprintf(stderr, "scope-run: cannot read %s: %s\n", output, err);
	} else {
		have = 1;
		if (!o->quiet && s.n && o->top) {
			fputc('\n', stderr);
			summary_print(stderr, &s, o->top);
			fputc('\n', stderr);
		}
		if (!s.n && !s.lost && !o->quiet)
			fprintf(stderr, "scope-run: no instrumented function was called (build the "
					"program with -finstrument-functions)\n");
		if (!o->quiet && s.aggregated)
			fprintf(stderr,
				"scope-run: %llu calls of %zu regions in %s, and %llu more that "
				"the "
				"filters counted without storing them\n",
				(unsigned long long)s.events, s.n, output,
				(unsigned long long)s.aggregated);
		else if (!o->quiet)
			fprintf(stderr, "scope-run: %llu calls of %zu regions in %s\n",
				(unsigned long long)s.events, s.n, output);
		if (!o->quiet && s.events + s.aggregated && s.recording_ns > 0 &&
		    s.wall_seconds > 0) {
			char b[32];
			fprintf(stderr,
				"scope-run: recording them cost about %s (%.1f ns a call), %.1f%% "
				"of the program's wall time (scope-report --compensate subtracts "
				"%s)\n",
				fmt_ns(b, sizeof b, s.recording_ns),
				s.recording_ns / (double)(s.events + s.aggregated),
				100.0 * s.recording_ns / (s.wall_seconds * 1e9),
				s.aggregated ? "the stored calls' part" : "it");
		}
		say_lost(s.lost);
	}
	if (!o->quiet && have)
		fprintf(stderr, "scope-run: program: wall %.3f s, CPU %.3f s, peak RSS %.1f MiB\n",
			s.wall_seconds, s.cpu_seconds, s.peak_rss_bytes / 1048576.0);
	if (!o->quiet && w->socket[0])
		fprintf(stderr,
			"scope-run: writer: CPU %.3f s while the program ran, %.3f s after%s\n",
			w->cpu_during, w->cpu_after, o->at_exit ? " (--write-at-exit)" : "");
	if (!o->quiet)
		fprintf(stderr,
			"scope-run: whole run, with writing the profile: wall %.3f s, CPU %.3f s "
			"(user %.3f, system %.3f), peak RSS %.1f MiB\n",
			wall, seconds(ru->ru_utime) + seconds(ru->ru_stime), seconds(ru->ru_utime),
			seconds(ru->ru_stime), (double)ru->ru_maxrss / 1024.0);
	if (have)
		summary_free(&s);
}

/* A request to stop scope-run (mpirun ending a job, a batch system's time
 * limit) goes to the program: it saves its profile and ends, and scope-run
 * goes on to collect it. */
static pid_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct options o;
	char program[PATH_MAX];
	char output[PATH_MAX + 256], name[PATH_MAX];
	const char *why;
	struct launch_paths lp;
	struct rusage ru = {0}, all;
	struct run_dirs dirs;
	struct run_writer w;
	struct job job;
	char job_output[PATH_MAX + 256];
	int in_job;
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
	time_t when = time(NULL);
	double start;
	pid_t pid;
	int status = 0, gathered, rc;

	parse(argc, argv, &o);
	if (o.quiet) /* for the writers and the merge, in this process and the run's */
		setenv("SCOPE_PROGRESS", "off", 1);
	/* here, not in the child only: the run's writer records them too */
	run_filters_export(&o.filters);
	if (launch_find_program(o.argv[0], program, sizeof program) != 0) {
		fprintf(stderr, "scope-run: %s: no such program (or not executable)\n", o.argv[0]);
		return 2;
	}
	if ((why = launch_cannot_preload(program)) != NULL) {
		fprintf(stderr, "scope-run: %s %s; it cannot be profiled by preloading\n", program,
			why);
		return 2;
	}
	if (launch_locate(&lp, "scope-run") != 0)
		return 2;

	if (o.output)
		launch_absolute(output, sizeof output, o.output);
	else if (getenv("SCOPE_OUTPUT") && *getenv("SCOPE_OUTPUT"))
		launch_absolute(output, sizeof output, getenv("SCOPE_OUTPUT"));
	else {
		default_output(name, sizeof name, o.argv[0], getpid(), when);
		launch_absolute(output, sizeof output, name);
	}
	if (check_output(output, program) != 0)
		return 2;
	/* One rank of an MPI job: this run's profile is the rank's, and the
	 * last rank to finish merges them into the output. */
	in_job = job_detect(&job, output);
	if (in_job < 0)
		return 2;
	if (in_job) {
		snprintf(job_output, sizeof job_output, "%s", output);
		snprintf(output, sizeof output, "%s", job.rank_file);
	}
	if (run_dirs_make(&dirs, output, lp.bindir, o.at_exit) != 0)
		return 2;
	run_writer_start(&w, dirs.arenas, lp.bindir, o.at_exit);

	/* Ctrl-C reaches the program through the terminal; scope-run stays to
	 * report what it did. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	start = now();
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "scope-run: cannot start %s: %s\n", program, strerror(errno));
		return 2;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		exec_child(&o, program, &lp, output, &dirs, &w);
	}
	child_pid = pid;
	{
		struct sigaction fwd = {.sa_handler = forward};
		sigaction(SIGTERM, &fwd, NULL);
		sigaction(SIGHUP, &fwd, NULL);
	}
	run_wait_all(pid, &w, &status, &ru);
	run_writer_finish(&w);
	getrusage(RUSAGE_CHILDREN, &all);
	gathered = run_gather(&dirs, output, pid, status);
	if (!in_job || job.rank == 0)
		print_summary(&o, output, gathered == GATHER_PUBLISHED, dirs.nparts, now() - start,
			      &all, &w);
	if (in_job)
		job_finish(&job, job_output, merge_ranks, "scope-run");
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		fprintf(stderr, "scope-run: %s was killed by signal %d (%s)%s\n", o.argv[0], sig,
			strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
		rc = 128 + sig;
	} else {
		rc = WEXITSTATUS(status);
	}
	/* A run whose profile was not written does not pass for a good one. */
	return rc == 0 && gathered == GATHER_KEPT ? 1 : rc;
}
