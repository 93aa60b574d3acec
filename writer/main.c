/* SPDX-License-Identifier: MIT */
/* scope-writer: turns a recording arena into a published HDF5 profile. */
#define _GNU_SOURCE
#include "alongside.h"
#include "columns.h"
#include "evict.h"
#include "merge.h"
#include "profile_out.h"
#include "progress.h"
#include "publish.h"
#include "ranks.h"
#include "run.h"
#include "spill.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <hdf5.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-writer [options] ARENA\n"
	"Write the HDF5 profile of the run recorded in ARENA. libscope_preload.so runs this\n"
	"when the program exits; run it yourself on an arena a killed run left behind.\n"
	"\n"
	"  -o, --output FILE        write FILE (default: the run's SCOPE_OUTPUT, else a new name)\n"
	"      --compression SPEC   auto (default), none, gzip or gzip:LEVEL (1-9)\n"
	"      --chunk-size N       elements per HDF5 chunk (chunked storage even uncompressed)\n"
	"      --recover            the run did not stop cleanly: write what it recorded\n"
	"      --keep               keep ARENA after writing (default: removed once published)\n"
	"      --no-symbolize       name regions module+0xOFFSET (scope-symbolize resolves later)\n"
	"      --exit-signal N      with --recover: the process was killed by signal N\n"
	"      --arena-fd N         read ARENA through open descriptor N (ARENA: its path)\n"
	"      --run-fd N           the writer of a whole run: write each arena whose path\n"
	"                           comes through the socket N, until an empty message\n"
	"      --at-exit            with --run-fd: write nothing until that message\n"
	"      --losses-fd N        with --run-fd: at the end, write \"PARTS LOST\\n\" to\n"
	"                           descriptor N: the parts published and their lost calls\n"
	"  -q, --quiet              no progress line on a terminal (SCOPE_PROGRESS=off)\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n";

/* argv as the program got it, joined by spaces. */
static char *command_line(const struct arena *a)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t n = h->cmdline_bytes;
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	memcpy(s, a->base + h->cmdline_off, n);
	s[n] = '\0';
	while (n > 0 && s[n - 1] == '\0')
		n--;
	for (uint64_t i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	s[n] = '\0';
	return s;
}

/*
 * Where this process's profile goes: -o when given; the run's output for
 * its first process; for any other, a part named by pid and start time
 * (unique on the host), in the parts folder scope-run made, else beside
 * the output ("app.h5" -> "app.1234-1700000000123456789.part.h5"). The
 * first process of one MPI rank writes OUTPUT.ranks/rank-N.h5; the last
 * rank to finish merges them into the output.
 */
static int output_path(char *out, size_t cap, const char *path, const char *suffix, int pid,
		       unsigned long long start)
{
	int n = pid ? snprintf(out, cap, "%s%d-%llu%s", path, pid, start, suffix)
		    : snprintf(out, cap, "%s%s", path, suffix);
	if (n >= 0 && (size_t)n < cap)
		return 0;
	fprintf(stderr,
		"scope-writer: the profile's name would be longer than a path can be: %.64s...\n",
		path);
	return -1;
}

static int resolve_output(char *out, size_t cap, const char *given,
			  const struct scope_arena_header *h, struct job *job)
{
	char base[SCOPE_PATH_BYTES + 1];
	size_t len;

	if (given && *given) {
		if (given[0] == '/' || !h->cwd[0])
			return output_path(out, cap, given, "", 0, 0);
		snprintf(base, sizeof base, "%.*s/", SCOPE_PATH_BYTES - 1, h->cwd);
		return output_path(out, cap, base, given, 0, 0);
	}
	if (h->role == SCOPE_ROLE_PART && h->parts[0]) {
		snprintf(base, sizeof base, "%.*s/", SCOPE_PATH_BYTES - 1, h->parts);
		return output_path(out, cap, base, ".h5", (int)h->pid, h->start_unix_ns);
	}
	if (!h->output[0]) {
		fputs("scope-writer: the arena names no output file: give one with -o\n", stderr);
		return -1;
	}
	snprintf(base, sizeof base, "%.*s", SCOPE_PATH_BYTES - 1, h->output);
	if (h->role != SCOPE_ROLE_PART) {
		/* One rank of a job under a plain LD_PRELOAD: the ranks meet
		 * beside the output, as scope-run's do. */
		int in_job = job_init(job, base, h->rank, h->ranks, "scope-writer");
		if (in_job < 0)
			return -1;
		return output_path(out, cap, in_job ? job->rank_file : base, "", 0, 0);
	}
	len = strlen(base);
	if (len > 3 && strcmp(base + len - 3, ".h5") == 0)
		base[len - 3] = '\0';
	strcat(base, ".");
	return output_path(out, cap, base, ".part.h5", (int)h->pid, h->start_unix_ns);
}

/* Calls grouped in memory at once (window_calls), a whole number of HDF5
 * chunks. */
static uint64_t window(const struct storage *st)
{
	uint64_t chunk = column_chunk_elems(st), w = window_calls();

	return w < chunk ? chunk : w / chunk * chunk;
}

/* The folder of path, into out. */
static const char *folder_of(char *out, size_t cap, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, cap, ".");
	else if (slash == path)
		snprintf(out, cap, "/");
	else
		snprintf(out, cap, "%.*s", (int)(slash - path), path);
	return out;
}

/* Where calls that do not fit in memory wait: beside the arena's store
 * (the run chose that place for the records that grow with it: the arena
 * itself may be in memory), else beside the output, else in TMPDIR. */
static void spill_dirs(char dirs[3][4096], const char *list[4], const struct arena *a,
		       const char *arena, const char *output)
{
	char store[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];
	const char *tmp = getenv("TMPDIR");
	size_t n = 0;

	if (arena_store_name(a->hdr, arena, store, sizeof store) != 0)
		snprintf(store, sizeof store, "%s", arena);
	folder_of(dirs[0], sizeof dirs[0], store);
	folder_of(dirs[1], sizeof dirs[1], output);
	snprintf(dirs[2], sizeof dirs[2], "%s", tmp && *tmp ? tmp : "");
	for (int i = 0; i < 3; i++) {
		int seen = !dirs[i][0];
		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(list[k], dirs[i]) == 0;
		if (!seen)
			list[n++] = dirs[i];
	}
	list[n] = NULL;
}

/* The last rank of a job to publish merges every rank's profile. */
static void finish_job(const struct job *job, const struct scope_arena_header *h)
{
	char output[SCOPE_PATH_BYTES + 1];

	snprintf(output, sizeof output, "%.*s", SCOPE_PATH_BYTES, h->output);
	job_finish(job, output, merge_ranks, "scope-writer");
}

struct options {
	const char *output, *compression, *chunk, *arena;
	int recover, keep, symbolize, exit_signal, quiet;
	int arena_fd;	   /* -1: open ARENA by its path */
	int run_fd;	   /* the run's socket (--run-fd), -1 for one arena */
	int at_exit;	   /* with run_fd: write nothing before the run ends */
	const char *lock;  /* with run_fd: held while this writer lives (--detach LOCK) */
	const char *merge; /* with run_fd: the output the run's parts join (--merge) */
	pid_t watch;	   /* with run_fd: the run ends with this process too (--watch) */
	int losses_fd;	   /* with run_fd: told the parts and their losses (--losses-fd) */
};

/* An inherited descriptor: valid, and not passed on to what this program
 * starts (debuginfod). Returns it, or -1 after one line. */
static int inherited_fd(const char *option, const char *arg)
{
	char *end;
	long fd = strtol(arg, &end, 10);

	if (!*arg || *end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) {
		fprintf(stderr, "scope-writer: %s %s: %s (give an open descriptor)\n", option, arg,
			*arg && !*end && fd >= 0 ? strerror(errno) : "not a number");
		return -1;
	}
	return (int)fd;
}

static int parse(int argc, char **argv, struct options *o)
{
	enum {
		COMPRESSION = 256,
		CHUNK,
		RECOVER,
		KEEP,
		NOSYM,
		EXITSIG,
		ARENAFD,
		RUNFD,
		ATEXIT,
		DETACH,
		MERGE,
		WATCH,
		LOSSESFD
	};
	static const struct option longs[] = {{"output", required_argument, 0, 'o'},
					      {"compression", required_argument, 0, COMPRESSION},
					      {"chunk-size", required_argument, 0, CHUNK},
					      {"recover", no_argument, 0, RECOVER},
					      {"keep", no_argument, 0, KEEP},
					      {"exit-signal", required_argument, 0, EXITSIG},
					      {"no-symbolize", no_argument, 0, NOSYM},
					      {"arena-fd", required_argument, 0, ARENAFD},
					      {"run-fd", required_argument, 0, RUNFD},
					      {"at-exit", no_argument, 0, ATEXIT},
					      {"detach", required_argument, 0, DETACH},
					      {"merge", required_argument, 0, MERGE},
					      {"watch", required_argument, 0, WATCH},
					      {"losses-fd", required_argument, 0, LOSSESFD},
					      {"quiet", no_argument, 0, 'q'},
					      {"help", no_argument, 0, 'h'},
					      {"version", no_argument, 0, 'V'},
					      {0, 0, 0, 0}};
	const char *sym = getenv("SCOPE_SYMBOLIZE"), *keep = getenv("SCOPE_KEEP_ARENA");
	int c;

	memset(o, 0, sizeof *o);
	o->arena_fd = o->run_fd = o->losses_fd = -1;
	o->symbolize = !(sym && strcmp(sym, "0") == 0);
	o->keep = keep && *keep && strcmp(keep, "0") != 0;
	o->chunk = getenv("SCOPE_CHUNK_SIZE");
	while ((c = getopt_long(argc, argv, "+o:qhV", longs, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case COMPRESSION: o->compression = optarg; break;
		case CHUNK: o->chunk = optarg; break;
		case RECOVER: o->recover = 1; break;
		case KEEP: o->keep = 1; break;
		case NOSYM: o->symbolize = 0; break;
		case EXITSIG: o->exit_signal = atoi(optarg); break;
		case ARENAFD:
			if ((o->arena_fd = inherited_fd("--arena-fd", optarg)) < 0)
				return -1;
			break;
		case RUNFD:
			if ((o->run_fd = inherited_fd("--run-fd", optarg)) < 0)
				return -1;
			break;
		case ATEXIT: o->at_exit = 1; break;
		case DETACH: o->lock = optarg; break;
		case MERGE: o->merge = optarg; break;
		case WATCH: o->watch = (pid_t)atoi(optarg); break;
		case LOSSESFD:
			if ((o->losses_fd = inherited_fd("--losses-fd", optarg)) < 0)
				return -1;
			break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-writer %s\n", SCOPE_VERSION); exit(0);
		default: fputs("scope-writer: see scope-writer --help\n", stderr); return -1;
		}
	}
	if (o->run_fd >= 0 && optind == argc)
		return 0; /* the arenas come through the run's socket */
	if (o->run_fd >= 0 || optind != argc - 1) {
		fputs("scope-writer: give exactly one arena file, or --run-fd alone (see "
		      "scope-writer --help)\n",
		      stderr);
		return -1;
	}
	o->arena = argv[optind];
	return 0;
}

/* One line: why the profile was not written, where the records are, and
 * the command that writes them (with options, when the ones given were
 * the cause). */
static void say_kept_hint(const char *cause, const char *output, const struct options *o,
			  const char *options)
{
	char store[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];
	int with_store;

	with_store = arena_store_of(o->arena, store, sizeof store) == 0 && access(store, F_OK) == 0;
	fprintf(stderr,
		"scope-writer: %s%s%s%s; the recorded data is kept in %s%s%s (write it with: "
		"scope-writer%s%s -o FILE %s)\n",
		output ? "cannot write " : "", output ? output : "", output ? ": " : "", cause,
		o->arena, with_store ? " and " : "", with_store ? store : "",
		o->recover ? " --recover" : "", options, o->arena);
}

static void say_kept(const char *cause, const char *output, const struct options *o)
{
	say_kept_hint(cause, output, o, "");
}

/* Whether this arena should be written as asked; returns -1 to go on, else
 * the exit status, after one line saying why not. */
static int refuse(struct options *o, const struct arena *a, struct storage *st)
{
	char why[256], hint[64];
	int bad_spec, bad_chunk;

	if (!o->compression)
		o->compression = a->hdr->compression[0] ? a->hdr->compression : "auto";
	bad_spec = storage_parse(st, o->compression) != 0;
	bad_chunk = storage_parse_chunk(st, o->chunk) != 0;
	if (bad_spec || bad_chunk) {
		/* SCOPE_COMPRESSION or SCOPE_CHUNK_SIZE as the program saw
		 * them: the options of the hint take their place. */
		snprintf(why, sizeof why, "bad %s '%.64s' (use %s)",
			 bad_spec ? "compression" : "chunk size",
			 bad_spec ? o->compression : o->chunk,
			 bad_spec ? "auto, none, gzip or gzip:1..9" : "1 to 67108864 elements");
		snprintf(hint, sizeof hint, "%s%s%s",
			 a->hdr->state != SCOPE_ARENA_STOPPED && !o->recover ? " --recover" : "",
			 bad_spec ? " --compression auto" : "",
			 bad_chunk ? " --chunk-size 65536" : "");
		say_kept_hint(why, NULL, o, hint);
		return 2;
	}
	if (o->recover && a->hdr->published && !o->output) {
		fprintf(stderr, "scope-writer: %s was written already; give -o to write it again\n",
			o->arena);
		return 0;
	}
	if (a->hdr->state != SCOPE_ARENA_STOPPED && !o->recover) {
		fprintf(stderr,
			"scope-writer: %s is from a run that did not stop (still running, or "
			"killed); use --recover to write what it recorded\n",
			o->arena);
		return 1;
	}
	return -1;
}

/* What the profile's metadata and /processes say about the run. */
static void describe_run(struct run_info *run, const struct options *o, const struct arena *a,
			 const struct tick_clock *clock, const char *host)
{
	run->arena = a;
	run->arena_path = o->arena;
	run->hdr = a->hdr;
	run->exit_kind = a->hdr->exit_kind;
	run->exit_code = a->hdr->exit_code;
	if (o->exit_signal > 0 && a->hdr->state != SCOPE_ARENA_STOPPED) {
		run->exit_kind = SCOPE_EXIT_SIGNAL;
		run->exit_code = o->exit_signal;
	}
	run->recover = o->recover;
	run->host = host;
	run->clock = clock;
	run->clock_hz = clock->hz;
	run->compression = o->compression;
	run->symbolize = o->symbolize;
	run->command_line = command_line(a);
}

/* A published arena is removed; one that cannot be (a program that gave up
 * its privileges can read its arena through a descriptor, not remove it)
 * is marked written, so that recovering it again is refused. */
static void remove_arena(const struct arena *a, const char *arena, const char *output)
{
	char store[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];
	int err;

	if (arena_store_name(a->hdr, arena, store, sizeof store) == 0)
		unlink(store);
	if (unlink(arena) == 0 || errno == ENOENT)
		return;
	err = errno;
	arena_mark_published(a);
	fprintf(stderr, "scope-writer: wrote %s, but cannot remove %s: %s (remove it yourself)\n",
		output, arena, strerror(err));
}

/*
 * One process's arena with its calls collected, waiting to be written:
 * alone, or, in a run's writer, with others of the run into one file.
 */
struct held {
	struct options o; /* o.arena is path */
	char path[SCOPE_PATH_BYTES + 1];
	struct arena a;
	int opened, collected;
	struct tick_clock clock;
	struct storage st;
	struct run_info run;
	struct module *mods;
	struct profile p;
	struct named *named; /* its regions' names, from its end */
	struct job job;
	char output[4096], host[256];
};

/* Opens o's arena and groups its calls into h, from what early grouped
 * of them while the process ran when it is given (and then freed).
 * Returns -1 when h holds them, else the exit status, the reason said. */
static int hold(struct held *h, const struct options *o, struct alongside *early)
{
	char spill[3][4096];
	const char *spill_list[4];
	struct progress pg;
	char label[64];
	int rc;

	writer_fail_reset();
	h->o = *o;
	snprintf(h->path, sizeof h->path, "%s", o->arena);
	h->o.arena = h->path;
	if (arena_open_fd(&h->a, h->path, o->arena_fd) != 0) {
		fprintf(stderr, "scope-writer: %s\n", writer_failure());
		return 1;
	}
	h->opened = 1;
	if ((rc = refuse(&h->o, &h->a, &h->st)) >= 0)
		return rc;
	if (resolve_output(h->output, sizeof h->output, o->output, h->a.hdr, &h->job) != 0)
		return 2;
	tick_clock_init(&h->clock, &h->a);
	h->run.nmods = modules_parse(&h->a, &h->mods);
	h->run.mods = h->mods;
	gethostname(h->host, sizeof h->host - 1);
	describe_run(&h->run, &h->o, &h->a, &h->clock, h->host);
	phase("setup");
	if (!h->run.command_line) {
		say_kept("out of memory", NULL, &h->o);
		return 1;
	}
	/* every record is visited twice, then written as some 6 columns; a
	 * part of a run is named by its process, the part's path being hidden */
	snprintf(label, sizeof label, "the profile of pid %d", (int)h->a.hdr->pid);
	progress_start(&pg, "scope-writer", h->a.hdr->parts[0] && !o->output ? label : h->output,
		       h->a.nchunks * h->a.recs_per_chunk * 8, o->quiet);
	spill_dirs(spill, spill_list, &h->a, h->path, h->output);
	rc = early ? alongside_collect(early, &h->a, h->run.clock, h->run.mods, h->run.nmods,
				       window(&h->st), &h->p)
		   : -2;
	if (rc == -2)
		rc = collect(&h->a, h->run.clock, h->run.mods, h->run.nmods, window(&h->st),
			     spill_list, &h->p);
	progress_end(&pg);
	if (rc != 0) {
		say_kept(writer_failure() ? writer_failure() : "out of memory", NULL, &h->o);
		return 1;
	}
	h->collected = 1;
	h->run.lost = h->p.lost;
	h->run.end_ns = h->p.end_ns;
	arena_release_records(&h->a);
	phase("collect");
	/* named now, while the run's other processes go on: at the end,
	 * only the last is left to name (NULL: it is tried again then) */
	h->named = profile_name(&h->run, &h->p);
	phase("names");
	return -1;
}

/* Lets go of h, its arena marked as said for when rc says it failed:
 * the library that started this writer need not say it again. */
static void release(struct held *h, int rc)
{
	profile_named_free(h->named);
	if (h->collected)
		profile_free(&h->p);
	free((char *)h->run.command_line);
	modules_free(h->mods, h->run.nmods);
	if (h->opened && rc != 0)
		arena_mark_reported(&h->a);
	if (h->opened)
		arena_close(&h->a);
	free(h);
}

struct write_job {
	struct proc_out *procs;
	size_t n;
	const struct storage *st;
};

static int write_profile(const char *tmp, void *ctx)
{
	struct write_job *j = ctx;
	int rc = profile_write(tmp, j->procs, j->n, j->st);
	phase("close");
	return rc;
}

static int held_by_start(const void *x, const void *y)
{
	const struct scope_arena_header *a = (*(struct held *const *)x)->a.hdr,
					*b = (*(struct held *const *)y)->a.hdr;
	if (a->start_unix_ns != b->start_unix_ns)
		return a->start_unix_ns < b->start_unix_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* The processes' profiles could not be written: one line, their arenas kept. */
static void say_not_written(struct held **h, size_t n, const char *output, const char *why)
{
	char folder[4096];

	if (n == 1) {
		say_kept(writer_failure() ? writer_failure() : why, output, &h[0]->o);
		return;
	}
	fprintf(stderr,
		"scope-writer: cannot write %s: %s; the recorded data of its %zu processes is kept "
		"in their arenas in %s (write each with: scope-writer -o FILE ARENA)\n",
		output, writer_failure() ? writer_failure() : why, n,
		folder_of(folder, sizeof folder, h[0]->path));
}

/* Whose output a file of the processes h[0..n) is: the run's first
 * process's (the output itself) when it is among them, else the first to
 * start's (a part). */
static const struct held *destination(struct held *const *h, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (h[k]->a.hdr->role == SCOPE_ROLE_ROOT)
			return h[k];
	return h[0];
}

/* Writes the held processes h[0..n) as one profile and publishes it; each
 * arena goes then, unless kept. Returns 0 or 1. */
static int publish_held(struct held **h, size_t n, char *wrote, size_t cap)
{
	struct proc_out *procs = calloc(n + 1, sizeof *procs);
	struct write_job wj = {procs, n, &h[0]->st};
	const struct held *to;
	char why[512];
	int flags, rc = 1;

	if (!procs) {
		say_not_written(h, n, h[0]->output, "out of memory");
		return 1;
	}
	qsort(h, n, sizeof *h, held_by_start);
	for (size_t k = 0; k < n; k++)
		procs[k] = (struct proc_out){&h[k]->run, &h[k]->p, h[k]->named};
	to = destination(h, n);
	/* A part in the run's parts folder is read back by the run's merge,
	 * which publishes the profile durably: syncing each part would make
	 * every process of the run wait for the disk. */
	flags = to->a.hdr->parts[0] && !to->o.output ? PUBLISH_NO_SYNC : 0;
	if (publish_file(to->output, write_profile, &wj, -1, NULL, why, sizeof why, flags) == 0) {
		phase("publish");
		rc = 0;
		for (size_t k = 0; k < n; k++) {
			if (h[k]->job.size > 1)
				finish_job(&h[k]->job, h[k]->a.hdr);
			/* marked first: a writer stopped before the arena goes
			 * leaves nothing for the run's gather to write again */
			arena_mark_published(&h[k]->a);
			if (!h[k]->o.keep)
				remove_arena(&h[k]->a, h[k]->path, h[k]->output);
		}
		if (wrote)
			snprintf(wrote, cap, "%s", to->output);
	} else {
		say_not_written(h, n, to->output, why);
	}
	free(procs);
	return rc;
}

/* Writes the profile of the arena o names, its path into wrote (when not
 * NULL); returns the exit status. */
static int write_arena(struct options *o, char *wrote, size_t cap)
{
	struct held *h = calloc(1, sizeof *h);
	int rc;

	if (!h) {
		fputs("scope-writer: out of memory\n", stderr);
		return 1;
	}
	if ((rc = hold(h, o, NULL)) < 0)
		rc = publish_held(&h, 1, wrote, cap);
	release(h, rc);
	return rc;
}

/*
 * The run's writer holds the processes of the run as they end, to write
 * them into one file when the run ends: up to BATCH_PROCESSES of them (or
 * SCOPE_WRITER_BATCH; 1 writes each at once), and their spills' records
 * in memory up to BATCH_BYTES (a spill in a file holds none); past that,
 * those held go into a part of their own, which the run's merge reads. The
 * file is the output of the first of them to start: with plain LD_PRELOAD,
 * the run's first process's, the output itself. The processes of an MPI
 * rank, or one with -o, are written at once.
 */
#define BATCH_PROCESSES 64
#define BATCH_BYTES	(UINT64_C(32) << 20)

struct batch {
	struct held *h[BATCH_PROCESSES];
	size_t n, max;
	uint64_t bytes; /* held in memory */
};

static uint64_t bytes_held(const struct held *h)
{
	return h->p.spill ? spill_memory(h->p.spill) : 0;
}

static int batchable(const struct held *h)
{
	return !h->o.output && h->job.size <= 1;
}

/* The run's writer: its options, the profiles it wrote (and the calls
 * lost in them), those it holds. */
struct run_state {
	const struct options *o;
	char **wrote;
	size_t n, cap;
	uint64_t parts, lost;
	struct batch b;
};

static void wrote_part(struct run_state *rs, const char *path, uint64_t lost)
{
	if (!path[0])
		return;
	rs->parts++;
	rs->lost += lost;
	if (rs->n < rs->cap)
		rs->wrote[rs->n++] = strdup(path);
}

/* Writes the processes held into one part. Returns 0 or 1. At the run's
 * end (last), what they hold once written is left to the writer's exit,
 * which evict_at_exit takes off the command's time. */
static int flush(struct run_state *rs, int last)
{
	char wrote[4096] = "";
	int rc = 0;
	uint64_t lost = 0;

	if (rs->b.n)
		rc = publish_held(rs->b.h, rs->b.n, wrote, sizeof wrote);
	for (size_t k = 0; k < rs->b.n; k++)
		lost += rs->b.h[k]->run.lost;
	if (rc == 0)
		wrote_part(rs, wrote, lost);
	if (last && rc == 0)
		return 0;
	for (size_t k = 0; k < rs->b.n; k++)
		release(rs->b.h[k], rc);
	rs->b.n = 0;
	rs->b.bytes = 0;
	return rc;
}

/* One arena of the run, with the options of the command line. */
static int write_run_arena(const char *path, struct alongside *early, void *ctx)
{
	struct run_state *rs = ctx;
	struct options one = *rs->o;
	struct held *h = calloc(1, sizeof *h);
	char wrote[4096] = "";
	int rc = 0;

	one.arena = path;
	one.arena_fd = -1;
	if (!h) {
		fprintf(stderr, "scope-writer: out of memory; %s is kept\n", path);
		alongside_free(early);
		return 1;
	}
	rc = hold(h, &one, early);
	alongside_free(early);
	if (rc >= 0) {
		release(h, rc);
		return rc;
	}
	if (rs->b.max <= 1 || !batchable(h)) {
		uint64_t lost = h->run.lost;

		rc = publish_held(&h, 1, wrote, sizeof wrote);
		release(h, rc);
		if (rc == 0)
			wrote_part(rs, wrote, lost);
		return rc;
	}
	rc = 0; /* held: written with the batch */
	if (rs->b.n && (rs->b.n == rs->b.max || rs->b.bytes + bytes_held(h) > BATCH_BYTES))
		rc = flush(rs, 0);
	rs->b.h[rs->b.n++] = h;
	rs->b.bytes += bytes_held(h);
	return rc;
}

/* A plain run's end: the parts its processes wrote beside the output join
 * it, and go. Nothing to do for a run of one process. */
static int merge_run(struct run_state *rs, const char *output)
{
	struct storage st;
	char **inputs = calloc(rs->n + 1, sizeof *inputs);
	struct merge_request req = {
		.output = output, .inputs = inputs, .st = &st, .keep = 1, .who = "scope-writer"};
	char err[1024];
	int rc = 0, parts = 0;

	if (!inputs)
		return 1;
	inputs[req.ninputs++] = (char *)output;
	for (size_t i = 0; i < rs->n; i++)
		if (rs->wrote[i] && strcmp(rs->wrote[i], output) != 0) {
			inputs[req.ninputs++] = rs->wrote[i];
			parts++;
		}
	if (parts && access(output, F_OK) == 0) {
		storage_parse(&st, NULL); /* the default, which always parses */
		rc = merge_profiles(&req, err, sizeof err) != 0;
		if (rc != 0)
			fprintf(stderr, "scope-writer: %s\n", err);
		for (int i = 1; rc == 0 && i < req.ninputs; i++)
			unlink(inputs[i]);
	}
	free(inputs);
	return rc;
}

/*
 * The writer a plain run's first process starts (--detach): it leaves its
 * starter at once, so that the program never sees it as a child (a program
 * that waits for all its children would wait for it), in a session of its
 * own (a Ctrl-C to the program's group does not reach it), holding LOCK
 * for as long as it lives: the run's first process waits on it at its end.
 * Returns -1 in the starter, which then exits 0; 0 in the writer.
 */
static int detach(const char *lock)
{
	int fd = open(lock, O_RDWR | O_CLOEXEC);
	pid_t pid;

	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		fprintf(stderr, "scope-writer: %s: %s\n", lock, strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "scope-writer: cannot detach: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0)
		return -1; /* the lock stays with the child's copy of fd */
	setsid();
	return 0;
}

/* The run's folder (the lock's): its socket, so that a process still
 * running hands over to nobody and writes its own profile, and the lock,
 * which this writer releases as it exits. */
static void forget_run(const char *lock)
{
	char folder[PATH_MAX], sock[PATH_MAX + 16];

	snprintf(folder, sizeof folder, "%s", lock);
	snprintf(sock, sizeof sock, "%s/writer.sock", dirname(folder));
	unlink(sock);
	unlink(lock);
	rmdir(folder);
}

/* The run's writer. What it holds at the end stays reachable from here
 * until its exit frees it all (evict.h). */
static struct run_state the_run;

static int serve_run(struct options *o)
{
	enum { MAX_PARTS = 65536 };
	const char *batch = getenv("SCOPE_WRITER_BATCH");
	int rc;

	if (o->lock && detach(o->lock) < 0)
		_exit(0);
	the_run = (struct run_state){
		.o = o, .wrote = calloc(MAX_PARTS, sizeof(char *)), .cap = MAX_PARTS};
	if (!the_run.wrote)
		return 1;
	the_run.b.max = batch && *batch ? strtoul(batch, NULL, 10) : BATCH_PROCESSES;
	if (the_run.b.max > BATCH_PROCESSES)
		the_run.b.max = BATCH_PROCESSES;
	rc = run_serve(o->run_fd, o->at_exit, o->watch, write_run_arena, &the_run);
	rc |= flush(&the_run, 1);
	if (o->merge)
		rc |= merge_run(&the_run, o->merge);
	/* scope-run -q reports the losses from this line instead of opening
	 * the profile: one write to an empty pipe, which never blocks */
	if (o->losses_fd >= 0 && rc == 0)
		dprintf(o->losses_fd, "%llu %llu\n", (unsigned long long)the_run.parts,
			(unsigned long long)the_run.lost);
	if (o->lock)
		forget_run(o->lock);
	phase("end");
	evict_at_exit();
	return rc;
}

/*
 * Every phase, and every process of a run, allocates its buffers again:
 * kept in the heap once freed, the next finds its pages mapped. A fault
 * is microseconds in a virtual machine, and malloc would otherwise map
 * each large buffer afresh and unmap it when freed. The writer's peak is
 * what it is either way.
 */
static void keep_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_TOP_PAD, 16 << 20);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	/* HDF5's exit handler closes what is still open: after a close that
	 * failed (a full disk) that is the discarded file, and it crashes.
	 * Everything this program opens it closes itself. */
	H5dont_atexit();
	/* Past RLIMIT_FSIZE, write() fails with EFBIG, said like a full disk,
	 * instead of killing the writer. */
	signal(SIGXFSZ, SIG_IGN);
	keep_memory();
	phase("start");
	if (parse(argc, argv, &o) != 0)
		return 2;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (o.run_fd >= 0)
		return serve_run(&o);
	rc = write_arena(&o, NULL, 0);
	profile_names_done();
	return rc;
}
