/* SPDX-License-Identifier: MIT */
/* The hooks' slow path: thread registration, new chunks, calls not recorded. */
#define _GNU_SOURCE
#include "filter.h"
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

__thread struct scope_thread scope_tls __attribute__((tls_model("initial-exec"))) = {.lane = -1};

static SCOPE_NOINST struct scope_lane *lane_slot(int32_t lane)
{
	struct scope_process *p = &scope_proc;
	return (struct scope_lane *)(p->base + p->hdr->lanes_off) + lane;
}

/* Stops recording this call and every call it makes until it returns; the
 * exits of the calls not recorded are matched by count. */
static SCOPE_NOINST void ignore_call(struct scope_thread *t)
{
	if (t->ignored++ == 0) {
		t->saved_open = t->open;
		t->open = NULL;
	}
	t->limit = NULL;
}

static SCOPE_NOINST int recording(void)
{
	return scope_proc.hdr && !scope_stopped();
}

/* Lets the hooks' fast path run again if nothing holds it off. A process
 * pause stores the flag, then NULL into every thread's limit: read after
 * the limit is stored, the flag is either seen here or its NULL comes
 * after this store. */
static SCOPE_NOINST int held_off(struct scope_thread *t)
{
	return scope_paused() || __atomic_load_n(&t->foreign, __ATOMIC_SEQ_CST);
}

static SCOPE_NOINST void resume(struct scope_thread *t)
{
	struct scope_rec *limit = t->chunk_end;

	if (t->busy || t->ignored || t->paused || !recording() || held_off(t))
		return;
	if (scope_filtering && limit)
		limit = SCOPE_LIMIT_FILTER; /* every call goes to the filters */
	else if (t->ctr)
		return; /* a thread reading counters takes the slow path for every call */
	__atomic_store_n(&t->limit, limit, __ATOMIC_SEQ_CST);
	/* a raw clone's task asks as a pause does: flag, then limit */
	if (held_off(t))
		t->limit = NULL;
}

/*
 * The threads a process pause must reach, by lane: each registers its own
 * state when it gets a lane and takes it out as it ends, under the lock, so
 * the pausing thread never stores into a state that is gone.
 */
#define REGISTRY_SLOTS 16384u
static struct scope_thread *registry[REGISTRY_SLOTS];
static int registry_lock;

static SCOPE_NOINST void registry_take(void)
{
	while (__atomic_exchange_n(&registry_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static SCOPE_NOINST void registry_give(void)
{
	__atomic_store_n(&registry_lock, 0, __ATOMIC_RELEASE);
}

static SCOPE_NOINST void registry_set(int32_t lane, struct scope_thread *t)
{
	if (lane < 0 || (uint32_t)lane >= REGISTRY_SLOTS)
		return;
	registry_take();
	registry[lane] = t;
	registry_give();
}

void scope_threads_pause(void)
{
	registry_take();
	for (uint32_t i = 0; i < REGISTRY_SLOTS; i++)
		if (registry[i])
			__atomic_store_n(&registry[i]->limit, NULL, __ATOMIC_SEQ_CST);
	registry_give();
}

void scope_threads_forget(void)
{
	memset(registry, 0, sizeof registry);
	registry_lock = 0;
}

void scope_thread_resume(struct scope_thread *t)
{
	resume(t);
}

void scope_busy_end(struct scope_thread *t)
{
	scope_foreign_check(t);
	if (__atomic_load_n(&t->shared, __ATOMIC_RELAXED)) {
		struct scope_thread *own = scope_task_enter(t);
		if (own) {
			own->busy--;
			resume(own);
			scope_task_leave(own);
			return;
		}
	}
	t->busy--;
	resume(t);
}

/* Drops [lo, hi) from this process's memory: the pages stay in the file
 * (the page cache writes them out), so resident memory grows with the
 * calls still open, not with everything recorded. Only ever the arena's
 * chunks: the bounds are checked, whatever the thread state says. */
static SCOPE_NOINST void release(uintptr_t lo, uintptr_t hi)
{
	struct scope_process *p = &scope_proc;
	uintptr_t first = scope_arena_resident_end(p), last = (uintptr_t)p->base + p->map_bytes;

	lo = lo < first ? first : lo;
	hi = hi > last ? last : hi;
	if (lo < hi)
		scope_arena_release(p, lo, hi);
}

static SCOPE_NOINST uintptr_t chunk_of(struct scope_rec *end)
{
	return (uintptr_t)(end - scope_proc.recs_per_chunk) - sizeof(struct scope_chunk_head);
}

/*
 * A fault on the file maps more than its page: the pages around it (the
 * kernel's fault-around, 64 KiB) or the whole large folio of the page
 * cache that holds it, up to 2 MiB at once where the mapping is aligned
 * for it. A held chunk's returning calls so bring back pages of the
 * chunks around it, which go with it: all of its 2 MiB but the thread's
 * current chunk and those after it, which are in use or soon will be.
 * Another thread's chunk in use there only takes a page fault again.
 */
#define SCOPE_MAP_GRAIN ((uintptr_t)2 << 20)

static SCOPE_NOINST void release_around(const struct scope_thread *t, uintptr_t lo, uintptr_t hi)
{
	uintptr_t in_use = t->chunk_end ? chunk_of(t->chunk_end) : UINTPTR_MAX;

	lo &= ~(SCOPE_MAP_GRAIN - 1);
	hi = (hi + SCOPE_MAP_GRAIN - 1) & ~(SCOPE_MAP_GRAIN - 1);
	if (in_use > lo && in_use < hi)
		hi = in_use;
	release(lo, hi);
}

/*
 * A chunk left with calls still open in it comes back into memory as they
 * return and write their ends. Those are the deepest
 * open calls when the thread moves on (a lane's records lie at increasing
 * addresses by depth), all within the shallowest of them, r: the chunk is
 * held with r and released again at the first chunk change after r has
 * returned. Example: calls at depths 5, 6 and 7 open in chunk C when the
 * thread moves on to D; at its move to E, C stays held if the call at 5
 * is still open; at the next move after that call returned, C leaves
 * memory for good.
 *
 * Each held r was open when the next one was held, so each is within the
 * one before: the held calls still open are the first ones, at increasing
 * depths. Those at the thread's depth or deeper have returned; of the
 * others, the last is read to know (from the file: reading the mapping
 * would bring the chunk back), and so on down to the first still open.
 */

/* The shallowest call open in [lo, hi) and its depth; NULL when none is. */
static SCOPE_NOINST const struct scope_rec *
shallowest_open(const struct scope_thread *t, uintptr_t lo, uintptr_t hi, uint32_t *depth)
{
	const struct scope_rec *r, *last = NULL;
	uint32_t k = 0, d, low;

	for (r = t->open; r && (uintptr_t)r >= lo && (uintptr_t)r < hi; r = scope_record_parent(r))
		last = r, k++;
	if (!last)
		return NULL;
	/* The innermost open call is at depth - 1. A signal handler that
	 * came between the two stores of a call's opening leaves depth one
	 * ahead: the 16 bits the record keeps settle it. */
	low = (uint32_t)(last->fn >> SCOPE_REC_ADDR_BITS) & 0xffff;
	d = t->depth >= k ? t->depth - k : 0;
	*depth = d >= low ? d - ((d - low) & 0xffff) : 0;
	return last;
}

/* Whether h's call has returned. A call found open is read again after 1,
 * 3, 7, ... up to 31 chunk changes, unless another is about to be held
 * (which must be within it): the thread's own function, open to its end,
 * costs a read every 32 chunks, and a call that returned while the thread
 * went deeper again is let go a few chunks late at most. */
static SCOPE_NOINST int returned(const struct scope_thread *t, struct scope_held *h, int holding)
{
	struct scope_process *p = &scope_proc;
	uint64_t end;

	if (t->depth <= h->depth)
		return 1;
	if (h->skip && !holding) {
		h->skip--;
		return 0;
	}
	if (pread(p->fd, &end, sizeof end, (off_t)((const char *)&h->rec->end - p->base)) ==
		    (ssize_t)sizeof end &&
	    !(end & SCOPE_REC_OPEN))
		return 1;
	h->backoff = h->backoff < 31 ? (uint8_t)(2 * h->backoff + 1) : 31;
	h->skip = h->backoff;
	return 0;
}

/* Releases for good the held chunks whose calls have all returned;
 * holding: a chunk is held next. */
static SCOPE_NOINST void release_returned(struct scope_thread *t, int holding)
{
	while (t->nheld && returned(t, &t->held[t->nheld - 1], holding)) {
		t->nheld--;
		release_around(t, t->held[t->nheld].lo, t->held[t->nheld].hi);
	}
}

/* Holds [lo, hi) until r returns. With every slot taken, the two
 * neighbours that hold the fewest chunks together become one, held until
 * the earlier one's r returns, which is the later to. Their range then
 * covers other threads' chunks between them too, which only costs those
 * threads a few page faults when it is released. The first is never
 * merged: its call is often the thread's own function, open to its end. */
static SCOPE_NOINST void hold(struct scope_thread *t, uintptr_t lo, uintptr_t hi,
			      const struct scope_rec *r, uint32_t depth)
{
	if (t->nheld == SCOPE_HELD_SLOTS) {
		uint32_t best = 1;
		for (uint32_t i = 2; i + 1 < t->nheld; i++)
			if (t->held[i].chunks + t->held[i + 1].chunks <=
			    t->held[best].chunks + t->held[best + 1].chunks)
				best = i;
		struct scope_held *a = &t->held[best], *b = a + 1;
		a->hi = b->hi;
		a->chunks = a->chunks + b->chunks > UINT16_MAX ? UINT16_MAX
							       : (uint16_t)(a->chunks + b->chunks);
		memmove(b, b + 1, (t->nheld - best - 2) * sizeof *b);
		t->nheld--;
	}
	t->held[t->nheld++] = (struct scope_held){lo, hi, r, depth, 1, 0, 0};
}

/* The thread leaves the chunk that ends at end. The held chunks are
 * looked at whichever chunk it leaves: a thread that moves between
 * resident chunks still lets go of those its returning calls brought
 * back. */
static SCOPE_NOINST void leave_chunk(struct scope_thread *t, struct scope_rec *end)
{
	uintptr_t lo = chunk_of(end), hi = lo + scope_proc.hdr->chunk_bytes;
	int keep = lo < scope_arena_resident_end(&scope_proc);
	const struct scope_rec *r = NULL;
	uint32_t depth = 0;

	if (!t->holding) {
		t->holding = 1;
		scope_signal_fence();
		if (!keep)
			r = shallowest_open(t, lo, hi, &depth);
		if (t->nheld)
			release_returned(t, r != NULL);
		if (r)
			hold(t, lo, hi, r, depth);
		scope_signal_fence();
		t->holding = 0;
	}
	if (!keep)
		release(lo, hi);
}

/* A task that is not the one this state was registered for runs on it
 * unnoticed: a raw clone system call's without CLONE_SETTLS, whose stack
 * lies above its parent's (or the parent ran on another stack before, see
 * clone.c). Nothing keeps the two apart; say so once. */
static SCOPE_NOINST void check_task(const struct scope_thread *t)
{
	static int warned;
	uint32_t tid;

	if (!t->tid || (tid = (uint32_t)gettid()) == t->tid ||
	    __atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	scope_log(
		"task %u runs on the thread state of task %u (a clone without CLONE_SETTLS made "
		"by a system call, not clone(), on a stack above its parent's): the calls of both "
		"may be recorded wrong",
		tid, t->tid);
}

/*
 * Moves the thread to a fresh chunk. A signal handler that records may run
 * at any point in here and take a chunk of its own: every step leaves the
 * thread state consistent (cur before chunk_end: between the two, the
 * chunk looks full, never roomy with cur still at the old chunk's end; the
 * sequence number taken atomically), so neither loses records; at worst
 * the handler's chunk is left part-filled.
 */
static SCOPE_NOINST int next_chunk(struct scope_thread *t)
{
	struct scope_process *p = &scope_proc;
	struct scope_rec *old_end = t->chunk_end, *first;
	struct scope_chunk_head *ch = scope_arena_chunk(p);

	if (!ch)
		return 0;
	ch->lane = (uint32_t)t->lane;
	ch->seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ch->magic, SCOPE_CHUNK_MAGIC, __ATOMIC_RELEASE);
	first = (struct scope_rec *)(ch + 1);
	t->cur = first;
	scope_signal_fence();
	t->chunk_end = first + p->recs_per_chunk;
	scope_signal_fence();
	/* The chunks before this one are full: the run's writer may take
	 * them. A signal handler that took a chunk of its own meanwhile
	 * stored its number first; this store, the later, wins. */
	__atomic_store_n(&lane_slot(t->lane)->sealed, ch->seq, __ATOMIC_RELEASE);
	resume(t);
	if (old_end)
		leave_chunk(t, old_end);
	check_task(t);
	return 1;
}

static SCOPE_NOINST void stack_bounds(struct scope_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
		t->stack_floor = t->stack_lo; /* the enter hook's test from now on */
	}
	pthread_attr_destroy(&attr);
}

/* CPU clock id in ns; UINT64_MAX when it cannot be read (a thread gone). */
static SCOPE_NOINST uint64_t cpu_clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return UINT64_MAX;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU time a lane's thread used from its start, kept in the lane
 * (SCOPE_LANE_CPU_RUNNING set), to now on its clock id; 0 when not known. */
static SCOPE_NOINST uint64_t cpu_since(uint64_t kept, clockid_t id)
{
	uint64_t now, start = kept & ~SCOPE_LANE_CPU_RUNNING;

	if (!(kept & SCOPE_LANE_CPU_RUNNING) || (now = cpu_clock_ns(id)) == UINT64_MAX)
		return 0;
	return now > start ? now - start : 0;
}

/* Another thread's CPU clock, by the thread id its lane keeps: the id
 * pthread_getcpuclockid gives, the kernel's encoding of a thread id (see
 * MAKE_THREAD_CPUCLOCK in linux/posix-timers.h), made without touching the
 * other thread's pthread_t, which may be freed as it ends. The kernel
 * answers for threads of this process only; one gone gives EINVAL. */
static SCOPE_NOINST clockid_t thread_cpu_clock(uint32_t tid)
{
	return (clockid_t)((~tid << 3) | 6u); /* CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK */
}

/* Gives t a lane whose parent is parent; own_stack: t is the calling
 * thread's own TLS block, and pthread knows its stack. (A task sharing
 * its parent's block is no pthread: asking pthread would answer for the
 * parent, taking the parent's locks.) */
static SCOPE_NOINST void register_state(struct scope_thread *t, int32_t parent, int own_stack)
{
	struct scope_lane *l;
	uint64_t cpu;
	int lane;

	if (t->registered || !recording())
		return;
	t->registered = 1;
	t->tid = (uint32_t)gettid();
	lane = scope_arena_lane(&scope_proc, parent);
	if (lane < 0)
		return;
	l = lane_slot(lane);
	l->tid = t->tid;
	l->parent = parent;
	l->start = scope_now();
	/* The clock counts from the task's start: an exec'd image's main
	 * thread brings the time of the images before it. */
	cpu = cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	l->cpu_ns = cpu == UINT64_MAX ? 0 : cpu | SCOPE_LANE_CPU_RUNNING;
	prctl(PR_GET_NAME, l->name, 0, 0, 0);
	__atomic_store_n(&l->used, 1, __ATOMIC_RELEASE);
	t->lane = lane;
	if (own_stack) {
		stack_bounds(t);
		registry_set(lane, t);
		if (scope_counters_on()) {
			t->busy++;
			scope_counters_thread_start(t);
			t->busy--;
		}
	}
}

SCOPE_NOINST void scope_thread_register(int32_t parent)
{
	struct scope_thread *t = &scope_tls;

	if (__atomic_load_n(&t->shared, __ATOMIC_RELAXED))
		return; /* a task with a state of its own is registered by clone.c */
	register_state(t, parent, 1);
}

/* A clone(CLONE_VM) child's state, as it starts: a lane of its own. Its
 * stack is the one the program gave clone(), of a size not known. */
SCOPE_NOINST void scope_thread_begin(struct scope_thread *t, int32_t parent)
{
	t->busy++;
	register_state(t, parent, 0);
	t->busy--;
}

/* Its CPU time is not known: its clock went with it. */
SCOPE_NOINST void scope_thread_gone(struct scope_thread *t)
{
	struct scope_lane *l;

	if (t->lane < 0 || !scope_proc.hdr)
		return;
	l = lane_slot(t->lane);
	__atomic_store_n(&l->cpu_ns, 0, __ATOMIC_RELAXED);
	l->end = scope_now();
}

/* The calling task's state, counted inside until self_leave; NULL for a
 * task sharing another's TLS block that has no state of its own. */
static inline struct scope_thread *self_enter(void)
{
	struct scope_thread *t = &scope_tls;

	scope_foreign_check(t);
	if (__builtin_expect(__atomic_load_n(&t->shared, __ATOMIC_RELAXED), 0))
		return scope_task_enter(t);
	t->inside++;
	return t;
}

static inline void self_leave(struct scope_thread *t)
{
	scope_task_leave(t);
}

/* A thread's new name goes into its lane at once, so a run that is killed
 * keeps it too. */
void scope_thread_named(const char *name)
{
	struct scope_thread *t = self_enter();

	if (!t)
		return;
	if (t->lane >= 0 && scope_proc.hdr && name)
		strncpy(lane_slot(t->lane)->name, name, sizeof lane_slot(t->lane)->name - 1);
	self_leave(t);
}

int32_t scope_thread_lane(void)
{
	struct scope_thread *t = self_enter();
	int32_t lane;

	if (!t)
		return -1;
	lane = t->lane;
	self_leave(t);
	return lane;
}

/* The state's thread ends: its lane gets its end time, its CPU time and
 * the thread's name, and what it held leaves memory. Always called on the
 * thread itself, which alone reads its own clock for certain. */
SCOPE_NOINST void scope_thread_end(struct scope_thread *t)
{
	struct scope_lane *l;
	uint64_t kept;

	if (t->lane < 0 || !scope_proc.hdr)
		return;
	scope_filter_thread_end(t);
	if (t == &scope_tls) {
		registry_set(t->lane, NULL);
		scope_counters_thread_stop(t);
	}
	l = lane_slot(t->lane);
	/* Read within [start, end], as at the start: the CPU time is never
	 * more than the lane's span. */
	kept = __atomic_load_n(&l->cpu_ns, __ATOMIC_RELAXED);
	if (kept & SCOPE_LANE_CPU_RUNNING)
		__atomic_store_n(&l->cpu_ns, cpu_since(kept, CLOCK_THREAD_CPUTIME_ID),
				 __ATOMIC_RELAXED);
	l->end = scope_now();
	prctl(PR_GET_NAME, l->name, 0, 0, 0);
	/* Its chunk leaves memory too: ten thousand ended threads would
	 * otherwise keep a chunk resident each. */
	if (scope_stopped())
		return;
	for (uint32_t i = 0; i < t->nheld; i++)
		release_around(t, t->held[i].lo, t->held[i].hi);
	t->nheld = 0;
	if (t->chunk_end)
		release(chunk_of(t->chunk_end), (uintptr_t)t->chunk_end);
}

/* Called when the thread ends (or the process stops, for the thread that
 * stops it). */
SCOPE_NOINST void scope_thread_finish(void)
{
	struct scope_thread *t = self_enter();

	if (!t)
		return;
	scope_thread_end(t);
	self_leave(t);
}

/* The process stops: the threads still running get their CPU time so far,
 * read on their clocks by the stopping thread (its own lane has it
 * already). A thread that ends meanwhile writes its own, which stays. */
SCOPE_NOINST void scope_threads_cpu_at_stop(void)
{
	struct scope_process *p = &scope_proc;
	uint32_t n;

	if (!p->hdr)
		return;
	n = __atomic_load_n(&p->hdr->nlanes, __ATOMIC_RELAXED);
	if (n > p->hdr->lane_capacity)
		n = p->hdr->lane_capacity;
	for (uint32_t i = 0; i < n; i++) {
		struct scope_lane *l = lane_slot((int32_t)i);
		uint64_t kept;
		if (!__atomic_load_n(&l->used, __ATOMIC_ACQUIRE))
			continue;
		kept = __atomic_load_n(&l->cpu_ns, __ATOMIC_RELAXED);
		if (kept & SCOPE_LANE_CPU_RUNNING)
			__atomic_compare_exchange_n(&l->cpu_ns, &kept,
						    cpu_since(kept, thread_cpu_clock(l->tid)), 0,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

/* The calling thread records nothing more: calls still open stay open in
 * the arena, and the exits that come later touch nothing. */
SCOPE_NOINST void scope_thread_stop_self(void)
{
	struct scope_thread *t = self_enter();

	if (!t)
		return;
	t->limit = t->chunk_end = NULL;
	t->open = t->saved_open = NULL;
	self_leave(t);
}

/* The slow path of an enter (stored: the filters have chosen to store the
 * call); returns the record opened, or NULL. taken: the slot the fast path
 * took, NULL when the stack test sent the call here (scope_below_floor)
 * before it took one. Inlined in both its callers, so that neither tests
 * stored. */
static inline __attribute__((always_inline)) struct scope_rec *
enter_slow(void *fn, uintptr_t frame, struct scope_rec *taken, int stored)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r = NULL;
	int saved_errno = errno, was_shared = __atomic_load_n(&t->shared, __ATOMIC_ACQUIRE);

	if (frame < t->stack_floor && !was_shared) {
		scope_foreign_check(t);
		if (!__atomic_load_n(&t->shared, __ATOMIC_ACQUIRE))
			scope_foreign_task(t);
	}
	if (!(t = self_enter())) {
		if (recording())
			scope_arena_lost(&scope_proc, SCOPE_LOST_SHARED_TLS);
		goto out;
	}
	/* Give back the slot the fast path took: the state's own, or its
	 * owner's when the block has just been shared. A signal handler that
	 * took the next one meanwhile leaves it taken: it is padded, so that
	 * the records after it are read. On a block shared before, taken is
	 * no slot: it matches nothing, and nothing is padded. */
	if (taken && !scope_try_give_back(t, taken) && !was_shared)
		scope_pad_slot(t, taken);
	if (!scope_proc.initialized && !t->busy)
		scope_init();
	if (t->busy || t->ignored || !recording()) {
		if (t->ignored && t->dropping && recording())
			scope_arena_lost(&scope_proc, t->dropping - 1);
		ignore_call(t);
		goto leave;
	}
	if (t->paused || scope_paused())
		goto leave; /* not recorded: its exit finds no record of it */
	if (!t->registered) {
		t->busy++;
		register_state(t, -1, t == &scope_tls);
		t->busy--;
	}
	if (t->lane >= 0 && t->cur >= t->chunk_end)
		next_chunk(t);
	if (t->lane < 0 || t->cur >= t->chunk_end) {
		/* this call and every call it makes are lost, and counted */
		int why = t->lane < 0 ? SCOPE_LOST_NO_LANE : SCOPE_LOST_ARENA_FULL;
		scope_arena_lost(&scope_proc, why);
		ignore_call(t);
		t->dropping = (uint8_t)(why + 1);
		goto leave;
	}
	resume(t); /* after a pause */
	if (!stored && t->limit == SCOPE_LIMIT_FILTER && t == &scope_tls) {
		/* the filters decide, from the clock after this path's own work */
		uint64_t now = scope_now();
		scope_filter_enter(fn, scope_take_slot(t), frame, now);
		goto leave;
	}
	/* A counted call is marked in its record until it returns, so that its
	 * exit comes here too; its counters are read before its clock. */
	if (t->ctr && scope_counters_enter(t, fn))
		fn = (void *)((uintptr_t)fn | SCOPE_REC_MARKED);
	/* read after the slow path's own work, which is not the call's */
	r = scope_take_slot(t);
	scope_record_open(t, r, fn, frame, scope_now());
leave:
	self_leave(t);
out:
	/* stored only when changed: a raw clone's task shares errno */
	if (errno != saved_errno)
		errno = saved_errno;
	return r;
}

SCOPE_NOINST void scope_enter_slow(void *fn, uintptr_t frame, struct scope_rec *taken)
{
	enter_slow(fn, frame, taken, 0);
}

SCOPE_NOINST struct scope_rec *scope_enter_record(void *fn, uintptr_t frame,
						  struct scope_rec *taken)
{
	return enter_slow(fn, frame, taken, 1);
}

/* Only a slot of the thread's current chunk is filled: a chunk it has left
 * may be the run's writer's already. */
SCOPE_NOINST void scope_pad_slot(struct scope_thread *t, struct scope_rec *taken)
{
	struct scope_rec *end = t->chunk_end;

	if (!end || taken >= end || taken < end - scope_proc.recs_per_chunk)
		return;
	taken->start = taken->end = 0;
	__atomic_store_n(&taken->fn, SCOPE_REC_PAD, __ATOMIC_RELEASE);
}

/* The frame an open call was entered from, kept by depth. */
static SCOPE_NOINST uintptr_t frame_of(const struct scope_thread *t, const struct scope_rec *r)
{
	return t->frames[(r->fn >> SCOPE_REC_ADDR_BITS) & (SCOPE_FRAME_SLOTS - 1)];
}

/* Whether two frames are on one stack: the thread's own, or not. A
 * coroutine (swapcontext) runs on a stack of its own. */
static SCOPE_NOINST int same_stack(const struct scope_thread *t, uintptr_t a, uintptr_t b)
{
	int in_a = a >= t->stack_lo && a < t->stack_hi, in_b = b >= t->stack_lo && b < t->stack_hi;
	return !t->stack_hi || in_a == in_b;
}

/* Ends r, which child (or nothing, when r is innermost) sits on. */
static SCOPE_NOINST void unlink_close(struct scope_thread *t, struct scope_rec *child,
				      struct scope_rec *r, uint64_t now)
{
	struct scope_rec *parent = scope_record_parent(r);
	r->fn &= ~SCOPE_REC_MARKED; /* closed without its counters */
	if (child)
		child->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)parent;
	else
		t->open = parent;
	t->depth--;
	scope_signal_fence();
	r->end = now;
}

/*
 * An exit that is not the innermost open call's. Either calls not recorded
 * are returning; or longjmp without the wrapper, or an exception whose
 * unwinding calls no exit hooks (clang), left frames behind: those on this
 * stack above the returning call end now. Calls open on another stack
 * belong to a context switched away from (swapcontext): they stay open.
 */
SCOPE_NOINST void scope_exit_slow(void *fn, uint64_t now, uintptr_t frame)
{
	struct scope_thread *t = &scope_tls, *b = t;
	struct scope_rec *r, *child = NULL, *above;

	/* a raw clone's task whose first hook is an exit (unseen by the enter
	 * hook's test) */
	if (frame < b->stack_floor && !__atomic_load_n(&b->shared, __ATOMIC_ACQUIRE)) {
		scope_foreign_check(b);
		if (!__atomic_load_n(&b->shared, __ATOMIC_ACQUIRE))
			scope_foreign_task(b);
	}
	if (!(t = self_enter()))
		return;
	if (t->ignored) {
		if (--t->ignored == 0) {
			t->open = t->saved_open;
			t->dropping = 0;
			resume(t);
		}
		goto out;
	}
	r = t->open;
	if (r && (r->fn & SCOPE_REC_ADDR_MASK) == ((uintptr_t)fn | SCOPE_REC_MARKED)) {
		/* a counted call returns: its counters are read after its clock */
		scope_counters_exit(t, r->fn & ~SCOPE_REC_ADDR_MASK);
		r->fn &= ~SCOPE_REC_MARKED;
		scope_record_close(t, r, now);
		goto out;
	}
	for (r = t->open; r; r = scope_record_parent(r))
		if ((scope_record_is(r, fn) ||
		     (r->fn & SCOPE_REC_ADDR_MASK) == ((uintptr_t)fn | SCOPE_REC_MARKED)) &&
		    same_stack(t, frame_of(t, r), frame))
			break;
	if (!r)
		goto out;
	for (above = t->open; above != r;) {
		struct scope_rec *next = scope_record_parent(above);
		if (same_stack(t, frame_of(t, above), frame))
			unlink_close(t, child, above, now);
		else
			child = above;
		above = next;
	}
	unlink_close(t, child, r, now);
out:
	self_leave(t);
}

/* The cost of one recorded call, enter and exit hooks together, measured on
 * a scratch chunk so that reports can subtract it. The best of a few
 * rounds: the question is what the hooks cost, not what the machine did
 * meanwhile. */
uint64_t scope_measure_overhead(void)
{
	enum { CALLS = 256, ROUNDS = 8 };
	struct scope_thread *t = &scope_tls, saved = *t;
	struct scope_rec scratch[CALLS];
	uint64_t best = UINT64_MAX;

	for (int round = 0; round < ROUNDS; round++) {
		uint64_t t0, t1;
		t->cur = scratch;
		t->limit = t->chunk_end = scratch + CALLS;
		t->open = NULL;
		t->depth = 0;
		t0 = scope_now();
		for (int i = 0; i < CALLS; i++) {
			__cyg_profile_func_enter((void *)&scope_measure_overhead, NULL);
			__cyg_profile_func_exit((void *)&scope_measure_overhead, NULL);
		}
		t1 = scope_now();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	*t = saved;
	return best / CALLS;
}

/*
 * What an MPI call moved, in the slot after whatever the call recorded so
 * far, while the call is still open: the record carries the call's depth,
 * and the writer gives it to the latest call of that depth before it. The
 * slot is taken as the hooks take theirs, and fn is stored last, so a
 * signal handler that records meanwhile neither shares the slot nor sees
 * half a record. A call not being recorded (ignored, or recording
 * stopped) has no open record of its own and gets no bytes either.
 */
SCOPE_NOINST void scope_record_bytes(void *fn, uint64_t sent, uint64_t received)
{
	struct scope_thread *t = self_enter();
	struct scope_rec *open;

	if (!t)
		return;
	open = t->open;
	if (open && (scope_record_is(open, fn) ||
		     (open->fn & SCOPE_REC_ADDR_MASK) == ((uintptr_t)fn | SCOPE_REC_MARKED)))
		scope_record_side(t, SCOPE_REC_BYTES, open->fn & ~SCOPE_REC_ADDR_MASK, sent,
				  received);
	self_leave(t);
}

/* A side record (code: SCOPE_REC_BYTES, SCOPE_REC_COUNTERS + k) of the
 * call open at depth (its record's bits above the address) on t, in the
 * next slot, fn stored last; nothing when t records nothing now. */
SCOPE_NOINST void scope_record_side(struct scope_thread *t, uint64_t code, uint64_t depth,
				    uint64_t a, uint64_t b)
{
	struct scope_rec *r = scope_take_slot(t);

	if (r >= t->limit) { /* while filtering too: the chunk's end is tested here */
		if (t->cur == r + 1)
			t->cur = r;
		if (t->busy || t->ignored || !recording() || t->lane < 0)
			return;
		if (t->cur >= t->chunk_end && !next_chunk(t))
			return;
		if (t->cur >= t->chunk_end)
			return;
		r = scope_take_slot(t);
	}
	r->start = a;
	r->end = b;
	scope_signal_fence();
	r->fn = code | depth;
}

/*
 * The calling thread runs task lane lane from now on (0: none), noted in
 * its record stream as a task record, so the writer gives each call the
 * lane current on its thread when it started. Written while the thread
 * is paused too: its calls after the resume belong to the task.
 */
SCOPE_NOINST void scope_task_run(uint32_t lane)
{
	struct scope_thread *t = self_enter();
	struct scope_rec *r;

	if (!t)
		return;
	if (!recording() || t->busy) /* a task switch inside the library's own work */
		goto out;
	if (!t->registered) {
		t->busy++;
		register_state(t, -1, t == &scope_tls);
		t->busy--;
	}
	t->task = lane;
	if (t->lane < 0)
		goto out;
	r = scope_take_slot(t);
	if (r >= t->limit) {
		if (t->cur == r + 1)
			t->cur = r;
		if (t->cur >= t->chunk_end && !next_chunk(t))
			goto out;
		r = scope_take_slot(t);
	}
	r->start = scope_now();
	r->end = lane;
	scope_signal_fence();
	r->fn = SCOPE_REC_TASK | (uint64_t)t->depth << SCOPE_REC_ADDR_BITS;
out:
	self_leave(t);
}
