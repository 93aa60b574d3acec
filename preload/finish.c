/* SPDX-License-Identifier: MIT */
/* The exit path: stop recording, capture the module map, run scope-writer and wait. */
#define _GNU_SOURCE
#include "clock.h"
#include "state.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *writer_argv[4];

/* The writer gets the program's environment without LD_PRELOAD, so it is
 * not profiled itself. Built at start-up: the exit path allocates nothing. */
static char **writer_envp;

int scope_finish_prepare(struct scope_process *p)
{
	size_t n = 0, k = 0;

	if (!p->cfg.writer[0] || access(p->cfg.writer, X_OK) != 0) {
		scope_log("cannot find scope-writer (looked for %s); this run is not profiled "
			  "(set SCOPE_WRITER to its path)",
			  p->cfg.writer[0] ? p->cfg.writer : "it beside libscope_preload.so");
		goto fail;
	}
	while (environ && environ[n])
		n++;
	free(writer_envp);
	writer_envp = calloc(n + 1, sizeof *writer_envp);
	if (!writer_envp)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			writer_envp[k++] = environ[i];
	writer_argv[0] = p->cfg.writer;
	writer_argv[1] = p->arena_path;
	return 0;
fail:
	scope_set_stopped(1);
	munmap(p->base, p->map_bytes);
	scope_fd_close(p->fd);
	unlink(p->arena_path);
	p->hdr = NULL;
	p->base = NULL;
	return -1;
}

static SCOPE_NOINST uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static SCOPE_NOINST void record_stop(struct scope_process *p, int kind, int code)
{
	struct scope_arena_header *h = p->hdr;
	struct rusage ru;
	struct timespec ts;

	h->stop_tick = scope_now();
	h->stop_mono_ns = scope_mono_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	h->stop_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h->exit_kind = kind;
	h->exit_code = code;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		h->cpu_user_ns = tv_ns(ru.ru_utime);
		h->cpu_sys_ns = tv_ns(ru.ru_stime);
		h->max_rss_kib = (uint64_t)ru.ru_maxrss;
	}
}

/* Runs the writer and waits for it. SIGCHLD is put to its default while
 * waiting, so a program that ignores it or reaps children in a handler
 * cannot take the writer's status away. */
static SCOPE_NOINST int run_writer(struct scope_process *p)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	pid_t pid;
	int status = 0, rc;

	sigaction(SIGCHLD, &dfl, &old);
	rc = scope_spawn(&pid, p->cfg.writer, writer_argv, writer_envp);
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	sigaction(SIGCHLD, &old, NULL);
	if (rc != 0) {
		scope_log("cannot start %s: %s", p->cfg.writer, strerror(rc));
		return -1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 0 ? 0 : 1; /* the writer said why */
	scope_log("%s was killed by signal %d", p->cfg.writer, WTERMSIG(status));
	return -1;
}

void scope_finish(int kind, int code)
{
	struct scope_process *p = &scope_proc;

	/* Exactly one thread stops it, when two exit or crash at once. */
	if (!p->hdr || __atomic_exchange_n(&p->stopped, 1, __ATOMIC_RELAXED))
		return;
	scope_busy_begin(&scope_tls);
	scope_thread_stop_self();
	record_stop(p, kind, code);
	scope_thread_finish();
	scope_modules_capture(p);
	__atomic_store_n(&p->hdr->state, SCOPE_ARENA_STOPPED, __ATOMIC_RELEASE);
	if (run_writer(p) < 0)
		scope_log("the profile was not written; what was recorded is kept in %s "
			  "(write it with: scope-writer --recover %s)",
			  p->arena_path, p->arena_path);
	scope_busy_end(&scope_tls);
}
