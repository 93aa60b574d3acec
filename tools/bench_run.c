/* SPDX-License-Identifier: MIT */
/* One run of a benchmark: a fresh working directory, the program (profiled as scope-run does it, or
 * not), and what it cost. */
#define _GNU_SOURCE
#include "bench.h"
#include "gather.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile pid_t bench_child;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The program's arguments for c: the program's own, c's, then for a warm-up
 * --warm-up-args. NULL without memory. */
static char **arguments(const struct bench_plan *plan, const struct bench_config *c,
			const struct bench_run *r)
{
	size_t n = 0, k = 0;
	const struct strings *warm = r->kind == BENCH_WARM_UP ? &plan->warm_up_args : NULL;
	char **argv;

	while (plan->argv[n])
		n++;
	argv = calloc(n + c->args.n + (warm ? warm->n : 0) + 1, sizeof *argv);
	if (!argv)
		return NULL;
	argv[k++] = (char *)c->program;
	for (size_t i = 1; i < n; i++)
		argv[k++] = plan->argv[i];
	for (size_t i = 0; i < c->args.n; i++)
		argv[k++] = c->args.v[i];
	for (size_t i = 0; warm && i < warm->n; i++)
		argv[k++] = warm->v[i];
	return argv;
}

/* In the child: its working directory, its log for both outputs, nothing
 * to read, its environment, then the program. */
static void exec_child(const struct bench_plan *plan, const struct bench_config *c,
		       struct bench_run *r, const char *workdir, const char *log, char **argv,
		       const char *profile, const struct run_dirs *d, const struct run_writer *w)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 ||
	    chdir(workdir) != 0)
		_exit(127);
	/* The measured runs never track the heap: it is the memory pass's. */
	unsetenv("SCOPE_HEAP");
	if (r->kind == BENCH_MEMORY)
		setenv("SCOPE_HEAP", "1", 1);
	if (profile && launch_env(&plan->paths, profile, d, w) != 0)
		_exit(127);
	for (size_t i = 0; i < c->env.n; i++)
		if (putenv(c->env.v[i]) != 0)
			_exit(127);
	execv(c->program, argv);
	fprintf(stderr, "scope-bench: cannot run %s: %s\n", c->program, strerror(errno));
	_exit(127);
}

/* What ended the run, for people: "exit 3", "signal 9 (Killed)". */
static void describe_end(struct bench_run *r)
{
	if (WIFSIGNALED(r->status))
		snprintf(r->error, sizeof r->error, "killed by signal %d (%s)", WTERMSIG(r->status),
			 strsignal(WTERMSIG(r->status)));
	else if (WEXITSTATUS(r->status) == 127)
		snprintf(r->error, sizeof r->error, "exit 127 (could not be started: see its log)");
	else
		snprintf(r->error, sizeof r->error, "exit %d", WEXITSTATUS(r->status));
}

/* Runs the child pid to its end and all it left behind, measuring them. */
static void wait_measured(pid_t pid, struct run_writer *w, struct bench_run *r, double start,
			  const struct rusage *before)
{
	struct tree_sampler *s = tree_sampler_start(w->pid);
	struct rusage ru = {0}, after;
	uint64_t sampled, single;

	run_wait_all(pid, w, &r->status, &ru);
	r->f.wall_s = now() - start;
	sampled = tree_sampler_stop(s);
	/* Everything reaped so far but the writer (not reaped yet): the program
	 * and every process it started. */
	getrusage(RUSAGE_CHILDREN, &after);
	r->f.user_s = seconds(after.ru_utime) - seconds(before->ru_utime);
	r->f.sys_s = seconds(after.ru_stime) - seconds(before->ru_stime);
	r->f.cpu_s = r->f.user_s + r->f.sys_s;
	r->f.utilisation = r->f.wall_s > 0 ? r->f.cpu_s / r->f.wall_s : 0;
	/* The kernel's own peak of the program and the descendants it reaped
	 * is exact for one process; the samples add up processes alive at once. */
	single = (uint64_t)ru.ru_maxrss * 1024u;
	r->f.peak_rss_bytes = sampled > single ? sampled : single;
}

static void path_of(char *out, size_t cap, const struct bench_plan *plan, const char *name,
		    const char *suffix)
{
	snprintf(out, cap, "%s/%s%s", plan->dir, name, suffix);
}

void bench_run(const struct bench_plan *plan, const struct bench_config *c, struct bench_run *r)
{
	char workdir[PATH_MAX + 256], log[PATH_MAX + 256], profile[PATH_MAX + 256], why[512];
	int profiled = plan->profile || r->kind == BENCH_MEMORY;
	struct run_dirs dirs;
	struct run_writer w = {0};
	struct rusage before;
	char **argv = arguments(plan, c, r);
	struct stage_snap snap = {0};
	double start, ended;
	pid_t pid;

	snprintf(workdir, sizeof workdir, "%s/" BENCH_WORK "/%s", plan->dir, r->name);
	path_of(log, sizeof log, plan, r->name, ".log");
	path_of(profile, sizeof profile, plan, r->name, ".h5");
	unlink(profile);
	if (!argv) {
		snprintf(r->error, sizeof r->error, "out of memory");
		r->failed = 1;
		return;
	}
	if (stage_copy(plan->has_stage ? plan->stage : NULL, workdir, why, sizeof why) != 0) {
		snprintf(r->error, sizeof r->error, "no working directory: %.200s", why);
		r->failed = 1;
		stage_remove(workdir, why, sizeof why);
		free(argv);
		return;
	}
	if (stage_snapshot(workdir, &snap) != 0) {
		snprintf(r->error, sizeof r->error, "cannot read its working directory %.200s",
			 workdir);
		r->failed = 1;
		goto out;
	}
	if (profiled && run_dirs_make(&dirs, profile, plan->paths.bindir, 0) != 0) {
		snprintf(r->error, sizeof r->error, "cannot make the profile's folders");
		r->failed = 1;
		goto out;
	}
	if (profiled)
		run_writer_start(&w, dirs.arenas, plan->paths.bindir, 0);
	getrusage(RUSAGE_CHILDREN, &before);
	fflush(NULL);
	start = now();
	pid = fork();
	if (pid == 0)
		exec_child(plan, c, r, workdir, log, argv, profiled ? profile : NULL, &dirs, &w);
	if (pid < 0) {
		snprintf(r->error, sizeof r->error, "cannot start it: %s", strerror(errno));
		r->failed = 1;
		if (profiled) {
			run_writer_finish(&w);
			run_gather(&dirs, profile, 0, 0);
		}
		goto out;
	}
	r->started = 1;
	bench_child = pid;
	wait_measured(pid, &w, r, start, &before);
	bench_child = 0;
	r->f.output_bytes = stage_written(workdir, &snap);
	if (profiled) {
		ended = now();
		run_writer_finish(&w);
		r->has_profile = run_gather(&dirs, profile, pid, r->status) == GATHER_PUBLISHED;
		r->f.profile_s = now() - ended;
	}
	r->failed = !WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0;
	if (r->failed)
		describe_end(r);
	else if (profiled && !r->has_profile) {
		r->failed = 1;
		snprintf(r->error, sizeof r->error, "no profile was written (see its log)");
	}
out:
	stage_snapshot_free(&snap);
	free(argv);
	if (plan->keep) {
		r->kept = 1;
	} else if (stage_remove(workdir, why, sizeof why) != 0) {
		fprintf(stderr, "scope-bench: %s (its working directory stays)\n", why);
		r->kept = 1;
	}
}
