/* SPDX-License-Identifier: MIT */
/* Counters per call (SCOPE_COUNTERS): Linux software events opened here, PAPI events through a
 * dlopen'd libpapi. */
#define _GNU_SOURCE
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Each thread reads its counters at the entry and the exit of the calls
 * of the selected regions. The perf:: software events are opened here as
 * one group per thread (one read gives them all), so they work with or
 * without PAPI; any other name is a PAPI event, and libpapi is loaded
 * only then. An event that cannot be counted is named once at start, with
 * the reason, and left out; the arena lists those that are counted.
 */

static const struct {
	const char *name;
	uint64_t config;
} software[] = {
	{"TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
	{"PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
	{"CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
};

/* libpapi's functions this file calls, and the constants of papi.h 7.0. */
#define PAPI_VER_7 0x07000000
#define PAPI_OK	   0
#define PAPI_NULL  (-1)
static struct {
	int (*library_init)(int);
	int (*thread_init)(unsigned long (*)(void));
	int (*create_eventset)(int *);
	int (*add_named_event)(int, const char *);
	int (*start)(int);
	int (*read)(int, long long *);
	int (*stop)(int, long long *);
	int (*cleanup_eventset)(int);
	int (*destroy_eventset)(int *);
	char *(*strerror)(int);
	int loaded; /* 1 loaded and initialised, -1 could not be */
} papi;

/* The events counted, in the arena's order: perf events first (perf[i]
 * is the config of group member i), then PAPI's. */
static struct {
	int n, nperf, npapi;
	uint64_t perf[SCOPE_MAX_COUNTERS];
	char papi_names[SCOPE_MAX_COUNTERS][SCOPE_COUNTER_NAME_BYTES];
	regex_t regions;
	int select; /* SCOPE_COUNTER_REGIONS was given */
} ev;

/* A thread's counters: its perf group, its PAPI event set, and the
 * values read at the entry of each open counted call, by depth. */
struct scope_counters {
	int fds[SCOPE_MAX_COUNTERS];
	int papi_set;
	uint64_t entry[SCOPE_FRAME_SLOTS][SCOPE_MAX_COUNTERS];
};

static SCOPE_NOINST long perf_open(uint64_t config, int group)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.read_format = PERF_FORMAT_GROUP;
	/* The group starts disabled and is enabled whole once complete: a
	 * member added to a running group counts only from the thread's
	 * next time on a CPU. */
	a.disabled = group < 0;
	return syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static SCOPE_NOINST int papi_load(void)
{
	void *h;

	if (papi.loaded)
		return papi.loaded > 0 ? 0 : -1;
	papi.loaded = -1;
	h = dlopen("libpapi.so.7.0", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libpapi.so", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		scope_log("PAPI events need libpapi (libpapi-dev 7.0): %s; they are not counted",
			  dlerror());
		return -1;
	}
#define SYM(f) (*(void **)&papi.f = dlsym(h, "PAPI_" #f))
	if (!SYM(library_init) || !SYM(thread_init) || !SYM(create_eventset) ||
	    !SYM(add_named_event) || !SYM(start) || !SYM(read) || !SYM(stop) ||
	    !SYM(cleanup_eventset) || !SYM(destroy_eventset) || !SYM(strerror)) {
		scope_log(
			"libpapi lacks PAPI_* functions of version 7; PAPI events are not counted");
		return -1;
	}
#undef SYM
	if (papi.library_init(PAPI_VER_7) != PAPI_VER_7 ||
	    papi.thread_init((unsigned long (*)(void))pthread_self) != PAPI_OK) {
		scope_log("libpapi does not start (a version other than 7.0?); PAPI events are not "
			  "counted");
		return -1;
	}
	papi.loaded = 1;
	return 0;
}

/* Whether name (not perf::) can be counted by PAPI on this thread; says
 * why not once. */
static SCOPE_NOINST int papi_usable(const char *name)
{
	int set = PAPI_NULL, rc;

	if (papi_load() != 0)
		return 0;
	if ((rc = papi.create_eventset(&set)) == PAPI_OK &&
	    (rc = papi.add_named_event(set, name)) == PAPI_OK)
		for (int i = 0; i < ev.npapi && rc == PAPI_OK; i++)
			rc = papi.add_named_event(set, ev.papi_names[i]);
	if (set != PAPI_NULL) {
		papi.cleanup_eventset(set);
		papi.destroy_eventset(&set);
	}
	if (rc != PAPI_OK)
		scope_log("counter %s cannot be counted here: %s; the run goes on without it", name,
			  papi.strerror(rc));
	return rc == PAPI_OK;
}

/* Whether the software event config can be opened here; says why not. */
static SCOPE_NOINST int perf_usable(const char *name, uint64_t config)
{
	long fd = perf_open(config, -1);

	if (fd < 0) {
		scope_log("counter %s cannot be counted here: perf_event_open: %s; the run goes on "
			  "without it",
			  name, strerror(errno));
		return 0;
	}
	close((int)fd);
	return 1;
}

/* One name of SCOPE_COUNTERS: added to the arena's list when it can be
 * counted. */
static SCOPE_NOINST void add_event(const char *name)
{
	const char *sw = strncmp(name, "perf::", 6) == 0 ? name + 6 : NULL;
	size_t k;

	if (ev.n == SCOPE_MAX_COUNTERS) {
		scope_log("counter %s: at most %d counters are read; it is left out", name,
			  SCOPE_MAX_COUNTERS);
		return;
	}
	if (strlen(name) >= SCOPE_COUNTER_NAME_BYTES) {
		scope_log("counter %.40s...: the name is too long; it is left out", name);
		return;
	}
	for (k = 0; sw && k < sizeof software / sizeof *software; k++)
		if (strcasecmp(sw, software[k].name) == 0)
			break;
	if (sw && k < sizeof software / sizeof *software) {
		if (!perf_usable(name, software[k].config))
			return;
		ev.perf[ev.nperf++] = software[k].config;
	} else {
		if (!papi_usable(name))
			return;
		strcpy(ev.papi_names[ev.npapi++], name);
	}
	ev.n++;
}

/* The arena's list: perf events first, as they are read. */
static SCOPE_NOINST void list_events(struct scope_arena_header *h)
{
	int n = 0;

	for (int i = 0; i < ev.nperf; i++)
		for (size_t k = 0; k < sizeof software / sizeof *software; k++)
			if (software[k].config == ev.perf[i])
				strcpy(h->counters[n++], "perf::"),
					strcat(h->counters[n - 1], software[k].name);
	for (int i = 0; i < ev.npapi; i++)
		strcpy(h->counters[n++], ev.papi_names[i]);
	h->ncounters = (uint32_t)n;
}

SCOPE_NOINST void scope_counters_init(struct scope_arena_header *h)
{
	const char *list = scope_getenv("SCOPE_COUNTERS"),
		   *re = scope_getenv("SCOPE_COUNTER_REGIONS");
	char buf[1024], *save = NULL;

	if (ev.select)
		regfree(&ev.regions);
	memset(&ev, 0, sizeof ev);
	if (!h || !list || !*list)
		return;
#if !defined(__x86_64__)
	scope_log("SCOPE_COUNTERS: counters are read on x86-64 only; none is read here");
	return;
#endif
	if (strlen(list) >= sizeof buf) {
		scope_log("SCOPE_COUNTERS is longer than %zu bytes; no counter is read",
			  sizeof buf - 1);
		return;
	}
	strcpy(buf, list);
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save))
		if (*name)
			add_event(name);
	if (re && *re) {
		int rc = regcomp(&ev.regions, re, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			scope_log(
				"SCOPE_COUNTER_REGIONS is no extended regular expression; counters "
				"are read in every region");
		} else
			ev.select = 1;
	}
	list_events(h);
}

int scope_counters_on(void)
{
	return ev.n > 0;
}

/* Opens the calling thread's counters and starts them; t->ctr stays NULL
 * when none could be. */
SCOPE_NOINST void scope_counters_thread_start(struct scope_thread *t)
{
	struct scope_counters *c;

	if (!ev.n || t->ctr)
		return;
	c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return;
	c->papi_set = PAPI_NULL;
	for (int i = 0; i < SCOPE_MAX_COUNTERS; i++)
		c->fds[i] = -1;
	for (int i = 0; i < ev.nperf; i++) {
		long fd = perf_open(ev.perf[i], i ? c->fds[0] : -1);
		if (fd < 0)
			goto fail;
		c->fds[i] = scope_fd_hide((int)fd);
	}
	if (ev.nperf && ioctl(c->fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
		goto fail;
	if (ev.npapi) {
		if (papi.create_eventset(&c->papi_set) != PAPI_OK)
			goto fail;
		for (int i = 0; i < ev.npapi; i++)
			if (papi.add_named_event(c->papi_set, ev.papi_names[i]) != PAPI_OK)
				goto fail;
		if (papi.start(c->papi_set) != PAPI_OK)
			goto fail;
	}
	t->ctr = c;
	return;
fail:
	scope_log("this thread's counters cannot be opened: its calls are recorded without them");
	t->ctr = c;
	scope_counters_thread_stop(t);
}

SCOPE_NOINST void scope_counters_thread_stop(struct scope_thread *t)
{
	struct scope_counters *c = t->ctr;
	long long values[SCOPE_MAX_COUNTERS];

	if (!c)
		return;
	t->ctr = NULL;
	for (int i = SCOPE_MAX_COUNTERS; i-- > 0;)
		if (c->fds[i] >= 0)
			scope_fd_close(c->fds[i]);
	if (c->papi_set != PAPI_NULL) {
		papi.stop(c->papi_set, values);
		papi.cleanup_eventset(c->papi_set);
		papi.destroy_eventset(&c->papi_set);
	}
	munmap(c, sizeof *c);
}

/* A forked child's copy of its parent's thread: the perf events count the
 * parent, and PAPI's state is the parent's: dropped, not stopped. */
SCOPE_NOINST void scope_counters_forget(struct scope_thread *t)
{
	struct scope_counters *c = t->ctr;

	if (!c)
		return;
	t->ctr = NULL;
	for (int i = 0; i < SCOPE_MAX_COUNTERS; i++)
		if (c->fds[i] >= 0)
			scope_fd_close(c->fds[i]);
	munmap(c, sizeof *c);
}

/* The thread's counters now, in the arena's order; 0 when one cannot be
 * read. */
static SCOPE_NOINST void read_now(struct scope_counters *c, uint64_t *out)
{
	uint64_t group[1 + SCOPE_MAX_COUNTERS];
	long long papi_values[SCOPE_MAX_COUNTERS];

	memset(out, 0, SCOPE_MAX_COUNTERS * sizeof *out);
	if (ev.nperf && syscall(SYS_read, c->fds[0], group, sizeof group) > 0)
		for (int i = 0; i < ev.nperf && (uint64_t)i < group[0]; i++)
			out[i] = group[1 + i];
	if (ev.npapi && papi.read(c->papi_set, papi_values) == PAPI_OK)
		for (int i = 0; i < ev.npapi; i++)
			out[ev.nperf + i] = (uint64_t)papi_values[i];
}

/*
 * Whether the calls of fn are counted: every one without
 * SCOPE_COUNTER_REGIONS, else those whose name matches it. A name is the
 * region's given name, or the function's symbol (dladdr, else the
 * object's own symbol table); the answer is kept per function.
 */
#define CHOICE_SLOTS 16384u
static struct {
	uintptr_t fn;
	int counted; /* 1 yes, 2 no */
} choices[CHOICE_SLOTS];

static SCOPE_NOINST int choose(void *fn)
{
	char name[256];
	uintptr_t key = (uintptr_t)fn;
	uint32_t i = (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 50) & (CHOICE_SLOTS - 1);
	int counted;

	for (uint32_t probe = 0; probe < 64; probe++, i = (i + 1) & (CHOICE_SLOTS - 1)) {
		uintptr_t have = __atomic_load_n(&choices[i].fn, __ATOMIC_ACQUIRE);
		if (have == key)
			return __atomic_load_n(&choices[i].counted, __ATOMIC_ACQUIRE) == 1;
		if (have)
			continue;
		counted = scope_symbol_name(fn, name, sizeof name) == 0 &&
					  regexec(&ev.regions, name, 0, NULL, 0) == 0
				  ? 1
				  : 2;
		if (__atomic_compare_exchange_n(&choices[i].fn, &have, key, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			__atomic_store_n(&choices[i].counted, counted, __ATOMIC_RELEASE);
		return counted == 1;
	}
	return scope_symbol_name(fn, name, sizeof name) == 0 &&
	       regexec(&ev.regions, name, 0, NULL, 0) == 0;
}

/* At the entry of fn, before its record opens at depth: whether it is
 * counted, and if so its counters now. */
SCOPE_NOINST int scope_counters_enter(struct scope_thread *t, void *fn)
{
	if (!t->ctr || (ev.select && !choose(fn)))
		return 0;
	read_now(t->ctr, t->ctr->entry[t->depth & (SCOPE_FRAME_SLOTS - 1)]);
	return 1;
}

/* At the exit of the counted call open innermost on t (depth: its
 * record's bits above the address): the counters' change over it, as
 * side records written while it is still open. */
SCOPE_NOINST void scope_counters_exit(struct scope_thread *t, uint64_t depth)
{
	uint64_t now[SCOPE_MAX_COUNTERS], diff[SCOPE_MAX_COUNTERS] = {0};
	const uint64_t *at;

	if (!t->ctr || !t->depth)
		return;
	read_now(t->ctr, now);
	at = t->ctr->entry[(t->depth - 1) & (SCOPE_FRAME_SLOTS - 1)];
	for (int i = 0; i < ev.n; i++)
		diff[i] = now[i] > at[i] ? now[i] - at[i] : 0;
	for (int k = 0; 2 * k < ev.n; k++)
		scope_record_side(t, SCOPE_REC_COUNTERS + (uint64_t)k, depth, diff[2 * k],
				  diff[2 * k + 1]);
}
