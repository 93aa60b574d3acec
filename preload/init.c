/* SPDX-License-Identifier: MIT */
/* Start-up: configuration, clock, and recording for this process image. */
#define _GNU_SOURCE
#include "clock.h"
#include "clock_pair.h"
#include "filter.h"
#include "libcall.h"
#include "state.h"

#include <scope/launcher.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

struct scope_process scope_proc = {.fd = -1};

static int clock_source;

static SCOPE_NOINST void on_exit_status(int status, void *unused)
{
	(void)unused;
	scope_finish(SCOPE_EXIT_STATUS, status);
}

static SCOPE_NOINST uint64_t unix_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static SCOPE_NOINST void read_cmdline(struct scope_process *p)
{
	struct scope_arena_header *h = p->hdr;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	uint64_t cap = h->modules_off - h->cmdline_off - 1, len = 0;
	ssize_t n;

	if (fd < 0)
		return;
	/* a page at a time, each backed first */
	while (len < cap) {
		uint64_t want = cap - len < 4096 ? cap - len : 4096;
		if (scope_arena_back_table(p, h->cmdline_off + len, want) != 0 ||
		    (n = read(fd, p->base + h->cmdline_off + len, want)) <= 0)
			break;
		len += (uint64_t)n;
	}
	close(fd);
	h->cmdline_bytes = len;
}

/* The MPI rank as the launcher tells it, before MPI_Init: Open MPI, PMIx,
 * MPICH's Hydra, Slurm. */
static SCOPE_NOINST void launcher_rank(int32_t *rank, int32_t *ranks)
{
	static const char *const rank_vars[] = {SCOPE_RANK_VARS};
	static const char *const size_vars[] = {SCOPE_SIZE_VARS};
	const char *v;

	*rank = -1;
	*ranks = 0;
	for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars && *rank < 0; i++)
		if ((v = scope_getenv(rank_vars[i])) && *v)
			*rank = (int32_t)atoi(v);
	for (size_t i = 0; i < sizeof size_vars / sizeof *size_vars && !*ranks; i++)
		if ((v = scope_getenv(size_vars[i])) && *v)
			*ranks = (int32_t)atoi(v);
}

static SCOPE_NOINST void describe_process(struct scope_process *p)
{
	struct scope_arena_header *h = p->hdr;
	ssize_t n;

	h->pid = (int32_t)getpid();
	h->ppid = (int32_t)(p->parent_pid ? p->parent_pid : getppid());
	p->parent_pid = 0;
	h->role = (uint32_t)p->cfg.role;
	launcher_rank(&h->rank, &h->ranks);
	n = readlink("/proc/self/exe", h->exe, sizeof h->exe - 1);
	if (n > 0)
		h->exe[n] = '\0';
	if (!getcwd(h->cwd, sizeof h->cwd))
		h->cwd[0] = '\0';
	memcpy(h->output, p->cfg.output, sizeof h->output);
	memcpy(h->parts, p->cfg.parts, sizeof h->parts);
	memcpy(h->compression, p->cfg.compression, sizeof h->compression);
	read_cmdline(p);
	h->clock_source = (uint32_t)clock_source;
	h->start_unix_ns = unix_ns();
	clock_pair(scope_now, scope_mono_ns, &h->start_tick, &h->start_mono_ns);
}

/* Opens a new arena and starts recording into it, on the calling thread.
 * Used at start-up, in a forked child, and after an exec that failed. */
int scope_start_recording(void)
{
	struct scope_process *p = &scope_proc;
	if (scope_arena_create(p) != 0)
		return -1; /* it said why */
	describe_process(p);
	scope_counters_init(p->hdr);
	p->hdr->overhead_ticks = scope_measure_overhead();
	if (scope_finish_prepare(p) != 0)
		return -1;
	scope_set_stopped(0);
	__atomic_store_n(&p->hdr->state, SCOPE_ARENA_RECORDING, __ATOMIC_RELEASE);
	scope_thread_register(-1);
	/* Now too, not only at exit: a process killed with SIGKILL keeps the
	 * names of the code it ran. */
	scope_modules_capture(p);
	scope_run_start(p);
	scope_heap_start(p);
	scope_run_join(p);
	return 0;
}

/*
 * Processes the library leaves alone, however it was loaded (LD_PRELOAD,
 * or /etc/ld.so.preload for a whole machine): a program in secure mode
 * (setuid or setgid), where nothing from the environment may choose a
 * program or a path; scope's own programs, which export scope_own_program;
 * and what the library starts itself (the writer, and anything it runs),
 * marked with SCOPE_OFF. Otherwise each writer would record itself and
 * start another at its exit.
 */
static SCOPE_NOINST int stays_out(void)
{
	const char *off;

	if (getauxval(AT_SECURE))
		return 1;
	if (dlsym(RTLD_DEFAULT, "scope_own_program"))
		return 1;
	off = scope_getenv("SCOPE_OFF");
	return off && *off && strcmp(off, "0") != 0;
}

/* Runs once per program image: as its constructor, or earlier, from the
 * first hook that runs (a .preinit_array function, another library's
 * constructor). */
void scope_init(void)
{
	struct scope_process *p = &scope_proc;

	if (p->initialized)
		return;
	p->initialized = 1;
	scope_busy_begin(&scope_tls);
	/* The wrappers need their originals whether this process records or not. */
	scope_pthread_init();
	scope_fds_resolve();
	scope_jump_resolve();
	scope_modules_resolve();
	scope_libcalls_resolve();
	scope_heap_resolve();
	if (stays_out() || scope_config_read(&p->cfg) != 0 || scope_filter_init() != 0) {
		scope_busy_end(&scope_tls);
		return;
	}
	clock_source = scope_clock_init();
	if (p->cfg.force_monotonic) {
		scope_clock_is_tsc = 0;
		clock_source = SCOPE_CLOCK_MONOTONIC;
	}
	scope_env_capture(&p->cfg);
	if (p->cfg.start_paused)
		__atomic_store_n(&p->paused, 1, __ATOMIC_SEQ_CST);
	if (scope_start_recording() == 0) {
		scope_filter_start();
		on_exit(on_exit_status, NULL);
		scope_signals_init();
		scope_process_init();
		__atomic_store_n(&scope_libcalls, p->cfg.libcalls, __ATOMIC_RELAXED);
	}
	scope_busy_end(&scope_tls);
}

__attribute__((constructor)) static SCOPE_NOINST void scope_constructor(void)
{
	struct scope_process *p = &scope_proc;

	if (p->initialized && p->cfg.export_later) {
		/* started from a .preinit_array function, before environ existed */
		scope_config_export(&p->cfg);
		scope_env_capture(&p->cfg);
	}
	scope_init();
}
