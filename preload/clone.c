/* SPDX-License-Identifier: MIT */
/* Tasks that share one TLS block (clone() or a raw clone system call without CLONE_SETTLS) each get
 * a state and lane of their own. */
#define _GNU_SOURCE
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * A task that clone(CLONE_VM) starts without CLONE_SETTLS runs on its
 * parent's thread pointer, so on the parent's scope_tls: two tasks would
 * take the same record slots and open chains. While such children live,
 * the block is "shared": its fast paths always fail (limit and open are
 * NULL; the fast path's xadd on cur then touches a value nothing reads),
 * and every slow path finds the calling task's own state in this table by
 * its kernel tid. The block's owner moves its state in here when its
 * first child starts, and takes it back at its first hook after the last
 * child has returned. A child gets a state and a lane of its own when its
 * function starts, and gives them back when it returns.
 *
 * The table holds SCOPE_TASKS states; a task that finds none (more tasks,
 * or a raw clone's task on a block clone() shared) has its calls dropped
 * and counted as SCOPE_LOST_SHARED_TLS. Changes of a block's mode are made
 * with every signal blocked, so a handler never sees half of one. Tasks a
 * raw clone system call makes are found by the enter hook: see "Tasks of a
 * raw clone system call" below.
 */
#define SCOPE_TASKS   128
#define TASK_STARTING UINT32_MAX /* a slot handed to a child not yet running */

struct task_start {
	int (*fn)(void *);
	void *arg;
	int32_t parent;
	sigset_t mask; /* the child's signal mask, once it has its state */
	struct scope_thread *block;
};

static uint32_t task_tid[SCOPE_TASKS]; /* whose state slot i is: 0 free */
static uint32_t task_hi;	       /* slots [0, task_hi) have been used */
static struct scope_thread task_state[SCOPE_TASKS];
static struct task_start task_start[SCOPE_TASKS];
static uint8_t task_raw[SCOPE_TASKS]; /* slot i is a raw clone's task's: its end is looked for */
/* Raw clones' tasks counted in a block's sharers that found no slot. */
#define SCOPE_RAW_DROPPED 256
static uint32_t raw_dropped[SCOPE_RAW_DROPPED];

typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);
static clone_fn real_clone;

void scope_clone_resolve(void)
{
	if (!__atomic_load_n(&real_clone, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real_clone, (clone_fn)dlsym(RTLD_NEXT, "clone"),
				 __ATOMIC_RELEASE);
}

/* A forked child is one task with a fresh state: the table is empty. */
void scope_clone_forget(void)
{
	memset(task_tid, 0, sizeof task_tid);
	memset(task_raw, 0, sizeof task_raw);
	memset(raw_dropped, 0, sizeof raw_dropped);
	task_hi = 0;
}

/* A free slot, marked starting and with a fresh state; -1 when none is. */
static SCOPE_NOINST int claim(void)
{
	for (uint32_t i = 0; i < SCOPE_TASKS; i++) {
		uint32_t expect = 0, hi;
		if (__atomic_load_n(&task_tid[i], __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&task_tid[i], &expect, TASK_STARTING, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		hi = __atomic_load_n(&task_hi, __ATOMIC_RELAXED);
		while (hi < i + 1 &&
		       !__atomic_compare_exchange_n(&task_hi, &hi, i + 1, 0, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
		memset(&task_state[i], 0, sizeof task_state[i]);
		task_state[i].lane = -1;
		return (int)i;
	}
	return -1;
}

static SCOPE_NOINST void publish(int slot, uint32_t tid)
{
	__atomic_store_n(&task_tid[slot], tid, __ATOMIC_RELEASE);
}

static SCOPE_NOINST int find(uint32_t tid)
{
	uint32_t hi = __atomic_load_n(&task_hi, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hi; i++)
		if (__atomic_load_n(&task_tid[i], __ATOMIC_ACQUIRE) == tid)
			return (int)i;
	return -1;
}

static struct scope_thread *adopt(struct scope_thread *b, uint32_t tid, int counted);
static void reap(struct scope_thread *b);

static SCOPE_NOINST void block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
}

/* The owner takes its state back into the block: no child is left. */
static SCOPE_NOINST struct scope_thread *take_back(struct scope_thread *b, int slot)
{
	sigset_t old;

	block_signals(&old);
	memcpy(b, &task_state[slot], sizeof *b);
	b->limit = NULL;
	b->sharers = 0;
	scope_thread_resume(b);
	publish(slot, 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return b;
}

/* The owner found no slot when its block became shared, and lost its
 * state then: with no child left, it goes on as a new thread. */
static SCOPE_NOINST struct scope_thread *start_over(struct scope_thread *b)
{
	sigset_t old;

	block_signals(&old);
	memset(b, 0, sizeof *b);
	b->lane = -1;
	b->inside = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return b;
}

struct scope_thread *scope_task_enter(struct scope_thread *b)
{
	uint32_t tid = (uint32_t)gettid();
	int slot = find(tid), alone = !__atomic_load_n(&b->sharers, __ATOMIC_ACQUIRE);
	struct scope_thread *s;

	if (slot < 0) {
		if (tid == b->owner)
			return alone && !b->inside ? start_over(b) : NULL;
		return __atomic_load_n(&b->adopts, __ATOMIC_ACQUIRE) ? adopt(b, tid, 0) : NULL;
	}
	s = &task_state[slot];
	if (tid == b->owner && !alone && b->adopts && (++s->reap & 4095) == 0)
		reap(b);
	s->inside++;
	scope_signal_fence();
	if (__atomic_load_n(&task_tid[slot], __ATOMIC_RELAXED) != tid) {
		/* a signal handler took the state back meanwhile */
		b->inside++;
		return b;
	}
	if (tid == b->owner && alone && s->inside == 1 && !s->busy)
		return take_back(b, slot);
	return s;
}

/*
 * Moves the state in block b, owner's, into the table with open as its
 * innermost open call, and leaves b shared: what is left in it sends every
 * hook to the slow path. adopts: a task b does not know gets a state of
 * its own (a raw clone's). Returns owner's state, NULL when the table is
 * full. Called with every signal blocked, while no hook of owner's is
 * halfway through b.
 */
static SCOPE_NOINST struct scope_thread *share_for(struct scope_thread *b, uint32_t owner,
						   struct scope_rec *open, int adopts)
{
	int slot = claim();

	if (slot >= 0) {
		struct scope_thread *s = &task_state[slot];
		memcpy(s, b, sizeof *b);
		s->open = open;
		s->limit = NULL;
		s->parked = s->parked_first = NULL;
		s->foreign = s->sharers = s->reap = 0;
		s->adopts = 0;
		publish(slot, owner);
	}
	b->cur = b->limit = b->open = b->saved_open = b->chunk_end = NULL;
	b->parked = b->parked_first = NULL;
	b->depth = b->ignored = b->nheld = 0;
	b->busy = b->dropping = 0;
	b->registered = 1;
	b->lane = -1;
	b->owner = owner;
	if (adopts)
		__atomic_store_n(&b->adopts, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&b->shared, 1, __ATOMIC_RELEASE);
	return slot < 0 ? NULL : &task_state[slot];
}

/* ---- Tasks of a raw clone system call -------------------------------------
 *
 * A runtime with threads of its own may make its tasks with the clone
 * system call, not clone(): such a task (CLONE_VM without CLONE_SETTLS)
 * runs on its parent's block, and nothing tells the library. The enter
 * hook's one other test (scope_below_floor: the stack pointer below the
 * thread's stack) sends it to the slow path at its first call, before it
 * has changed anything in the block. There it asks for the block to be
 * shared, as clone() shares it, and waits until it is: sharing moves the
 * owner's state out of the block, which only a task sure that no hook of
 * the owner's is halfway through the block may do.
 *
 *   1. The task stores limit = NULL and takes open out (into parked): the
 *      owner's next hooks all go to the slow path, but for one that was
 *      already past its test (an enter that puts its record into open
 *      after all, and the exits of the calls then found there).
 *   2. The owner's next slow path shares the block (scope_foreign_owner).
 *   3. An owner that calls no instrumented function meanwhile (it waits
 *      for the task, say) is seen from /proc: blocked in a system call,
 *      which no hook makes, or 10 ms of CPU time gone with the block
 *      unchanged, more than any hook takes. Open is then taken out once
 *      more: when it is still empty, no hook of the owner's is halfway,
 *      and the task shares the block for it.
 *
 * The task then gets a state and a lane of its own, parented to the
 * owner's (no state left: its calls are dropped and counted, as
 * lost_shared_tls). Its end is not seen: the owner looks for its raw
 * tasks every 4096 of its entries here (kill(tid, 0)), and takes its state
 * back into the block once no task shares it. Example: main, recording,
 * makes a task with syscall(SYS_clone, CLONE_VM | ..., stack) and waits
 * for it in waitpid; the task's first call stores limit = NULL, takes
 * main's innermost call (waitpid's) out of open, and waits; /proc says
 * main is in wait4, open is still empty: the task shares the block, gets
 * lane 1 and records; when main returns from waitpid, its exit hook finds
 * open empty, and its own state, lane 0, in the table.
 */

/* A system call that leaves errno alone: the task shares it with the owner. */
static SCOPE_NOINST long raw_syscall(long nr, long a, long b, long c, long d)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#else
	int saved = errno;
	long ret = syscall(nr, a, b, c, d);
	if (ret < 0)
		ret = -errno;
	errno = saved;
	return ret;
#endif
}

static SCOPE_NOINST void futex_wait_ms(uint32_t *word, uint32_t seen, long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	raw_syscall(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, seen, (long)&ts);
}

static SCOPE_NOINST void futex_wake_all(uint32_t *word)
{
	raw_syscall(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, INT32_MAX, 0);
}

/* "/proc/PID/task/TID/NAME" into out (64 bytes). */
static SCOPE_NOINST void task_path(char *out, uint32_t pid, uint32_t tid, const char *name)
{
	static const char pre[] = "/proc/", mid[] = "/task/";
	uint32_t v[2] = {pid, tid};
	char *o = out;

	memcpy(o, pre, sizeof pre - 1);
	o += sizeof pre - 1;
	for (int k = 0; k < 2; k++) {
		char d[10];
		int n = 0;
		do
			d[n++] = (char)('0' + v[k] % 10);
		while ((v[k] /= 10) && n < 10);
		while (n)
			*o++ = d[--n];
		if (k == 0) {
			memcpy(o, mid, sizeof mid - 1);
			o += sizeof mid - 1;
		}
	}
	*o++ = '/';
	while (*name && o < out + 63)
		*o++ = *name++;
	*o = 0;
}

/* The start of /proc/PID/task/TID/NAME, NUL-ended: its length, or -errno. */
static SCOPE_NOINST long task_read(uint32_t pid, uint32_t tid, const char *name, char *buf,
				   size_t cap)
{
	char path[64];
	long fd, n;

	task_path(path, pid, tid, name);
	fd = raw_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	n = raw_syscall(SYS_read, fd, (long)buf, (long)cap - 1, 0);
	raw_syscall(SYS_close, fd, 0, 0, 0);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* Whether task tid of process pid is surely outside every hook now:
 * blocked in a system call (1), or gone (2). *cpu gets its CPU time in ns
 * (0 when it cannot be read). */
static SCOPE_NOINST int task_outside(uint32_t pid, uint32_t tid, uint64_t *cpu)
{
	char buf[128];
	long n = task_read(pid, tid, "schedstat", buf, sizeof buf);
	const char *p;

	*cpu = 0;
	for (p = buf; n > 0 && *p >= '0' && *p <= '9'; p++)
		*cpu = *cpu * 10 + (uint64_t)(*p - '0');
	n = task_read(pid, tid, "syscall", buf, sizeof buf);
	if (n == -ENOENT || n == -ESRCH)
		return task_read(pid, pid, "stat", buf, sizeof buf) > 0 ? 2 : 0; /* or no /proc */
	if (n > 0) /* "NR args...": in a system call; "-1 ...": blocked outside one; "running" */
		return buf[0] >= '0' && buf[0] <= '9';
	/* not ours to read (ptrace rules): interruptible sleep is a system call */
	n = task_read(pid, tid, "stat", buf, sizeof buf);
	p = n > 0 ? strrchr(buf, ')') : NULL;
	if (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return 2;
	return p && p[1] == ' ' && p[2] == 'S';
}

static SCOPE_NOINST uint32_t rec_depth(const struct scope_rec *r)
{
	return (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS) & 0xffff;
}

static SCOPE_NOINST int rec_open(const struct scope_rec *r)
{
	return (__atomic_load_n(&r->end, __ATOMIC_RELAXED) & SCOPE_REC_OPEN) != 0;
}

/* Takes b's open out into parked; whether a call was there. parked_first
 * keeps the first one taken, the owner's innermost call when the task
 * asked. */
static SCOPE_NOINST int park(struct scope_thread *b)
{
	struct scope_rec *r = __atomic_exchange_n(&b->open, NULL, __ATOMIC_SEQ_CST);

	if (!r)
		return 0;
	if (!b->parked_first)
		b->parked_first = r;
	b->parked = r;
	return 1;
}

/*
 * The owner's innermost open call, with no hook of its halfway: the last
 * one taken out of open. An enter already past its test when the task
 * asked may have read open after it was taken, and its call then has no
 * parent: it is put on the first one taken. One whose exit was halfway is
 * closed, and open was empty after it: the first one, if still open and
 * shallower, or none.
 */
static SCOPE_NOINST struct scope_rec *parked_top(struct scope_thread *b)
{
	struct scope_rec *top = b->parked, *first = b->parked_first;

	if (!top)
		return NULL;
	if (!rec_open(top))
		return first && first != top && rec_open(first) && rec_depth(first) < rec_depth(top)
			       ? first
			       : NULL;
	if (first && first != top && !scope_record_parent(top) && rec_open(first) &&
	    rec_depth(top) == rec_depth(first) + 1)
		top->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)first;
	return top;
}

/* Shares b for its owner, the caller or not; b->foreign is CONVERTING. */
static SCOPE_NOINST void share_raw(struct scope_thread *b)
{
	sigset_t old;

	block_signals(&old);
	park(b);
	share_for(b, b->tid, parked_top(b), 1);
	__atomic_store_n(&b->foreign, SCOPE_FOREIGN_NONE, __ATOMIC_RELEASE);
	futex_wake_all(&b->foreign);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void scope_foreign_owner(struct scope_thread *b)
{
	uint32_t pending = SCOPE_FOREIGN_PENDING;

	if (__atomic_load_n(&b->shared, __ATOMIC_ACQUIRE) || (uint32_t)gettid() != b->tid)
		return; /* a raw clone's task itself, in a wrapper */
	if (__atomic_compare_exchange_n(&b->foreign, &pending, SCOPE_FOREIGN_CONVERTING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		share_raw(b);
		return;
	}
	while (__atomic_load_n(&b->foreign, __ATOMIC_ACQUIRE) == SCOPE_FOREIGN_CONVERTING)
		futex_wait_ms(&b->foreign, SCOPE_FOREIGN_CONVERTING, 1);
}

/* What changes in b while its owner records: the slot cursor and depth. */
struct block_seen {
	struct scope_rec *cur;
	uint32_t depth;
};

static SCOPE_NOINST struct block_seen seen_of(const struct scope_thread *b)
{
	return (struct block_seen){__atomic_load_n(&b->cur, __ATOMIC_RELAXED),
				   __atomic_load_n(&b->depth, __ATOMIC_RELAXED)};
}

/* Whether b's owner is in one of the library's slow paths, or busy in its
 * own work: b is not to be changed under it. */
static SCOPE_NOINST int owner_inside(const struct scope_thread *b)
{
	return __atomic_load_n(&b->inside, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&b->busy, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&b->holding, __ATOMIC_RELAXED);
}

/* Step 3: open still empty, the owner in none of the library's slow
 * paths (or gone); shares b and returns 1, or 0 to wait more. */
static SCOPE_NOINST int share_for_owner(struct scope_thread *b, int gone)
{
	uint32_t pending = SCOPE_FOREIGN_PENDING;

	if (park(b) || (!gone && owner_inside(b)) ||
	    !__atomic_compare_exchange_n(&b->foreign, &pending, SCOPE_FOREIGN_CONVERTING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	if ((!gone && owner_inside(b)) || __atomic_load_n(&b->open, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&b->foreign, SCOPE_FOREIGN_PENDING, __ATOMIC_RELEASE);
		return 0;
	}
	share_raw(b);
	return 1;
}

/* Asks for b to be shared and waits until it is (steps 1 to 3). */
static SCOPE_NOINST void await_shared(struct scope_thread *b)
{
	const struct scope_arena_header *h = scope_proc.hdr;
	uint32_t pid = h ? (uint32_t)h->pid : 0, none, f;
	struct block_seen mark = {0}, now;
	uint64_t cpu, cpu_mark = 0;
	int marked = 0, outside;

	for (;;) {
		if (__atomic_load_n(&b->shared, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&b->foreign, __ATOMIC_ACQUIRE) == SCOPE_FOREIGN_NONE)
			return;
		none = SCOPE_FOREIGN_NONE;
		__atomic_compare_exchange_n(&b->foreign, &none, SCOPE_FOREIGN_PENDING, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		__atomic_store_n(&b->limit, NULL, __ATOMIC_SEQ_CST);
		f = __atomic_load_n(&b->foreign, __ATOMIC_ACQUIRE);
		if (f == SCOPE_FOREIGN_PENDING && pid) {
			int moved = park(b);
			now = seen_of(b);
			outside = task_outside(pid, b->tid, &cpu);
			if (moved || !marked || now.cur != mark.cur || now.depth != mark.depth ||
			    !cpu) {
				mark = now;
				cpu_mark = cpu;
				marked = 1;
			} else if (cpu - cpu_mark >= 10000000u) {
				outside = 1; /* running, but in no hook: 10 ms with b unchanged */
			}
			if (outside && share_for_owner(b, outside == 2))
				return;
		}
		futex_wait_ms(&b->foreign, f, 1);
	}
}

/* Finds the end of raw clones' tasks gone (kill(tid, 0): ESRCH): their
 * lanes end, their slots are free, the block has a sharer less. */
static SCOPE_NOINST void reap(struct scope_thread *b)
{
	uint32_t hi = __atomic_load_n(&task_hi, __ATOMIC_ACQUIRE), tid;

	for (uint32_t i = 0; i < hi; i++) {
		tid = __atomic_load_n(&task_tid[i], __ATOMIC_ACQUIRE);
		if (!task_raw[i] || !tid || tid == TASK_STARTING ||
		    raw_syscall(SYS_kill, tid, 0, 0, 0) != -ESRCH)
			continue;
		scope_thread_gone(&task_state[i]);
		task_raw[i] = 0;
		publish((int)i, 0);
		__atomic_sub_fetch(&b->sharers, 1, __ATOMIC_RELEASE);
	}
	for (uint32_t i = 0; i < SCOPE_RAW_DROPPED; i++) {
		tid = __atomic_load_n(&raw_dropped[i], __ATOMIC_ACQUIRE);
		if (tid && raw_syscall(SYS_kill, tid, 0, 0, 0) == -ESRCH &&
		    __atomic_compare_exchange_n(&raw_dropped[i], &tid, 0, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			__atomic_sub_fetch(&b->sharers, 1, __ATOMIC_RELEASE);
	}
}

/* Counts tid among b's sharers once, it having no slot: the block stays
 * shared while it runs. */
static SCOPE_NOINST void count_dropped(struct scope_thread *b, uint32_t tid)
{
	for (uint32_t i = 0; i < SCOPE_RAW_DROPPED; i++)
		if (__atomic_load_n(&raw_dropped[i], __ATOMIC_ACQUIRE) == tid)
			return;
	for (uint32_t i = 0; i < SCOPE_RAW_DROPPED; i++) {
		uint32_t none = 0;
		if (__atomic_compare_exchange_n(&raw_dropped[i], &none, tid, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	/* over SCOPE_RAW_DROPPED of them, counted each time: shared for good */
	__atomic_add_fetch(&b->sharers, 1, __ATOMIC_ACQ_REL);
}

/* A state of its own for tid, a raw clone's task on the shared block b,
 * with inside counted up; NULL when the table is full (its calls are then
 * dropped and counted). counted: tid is among b's sharers already. */
static SCOPE_NOINST struct scope_thread *adopt(struct scope_thread *b, uint32_t tid, int counted)
{
	int slot = claim(), owner = find(b->owner);
	struct scope_thread *s;

	if (slot < 0) {
		if (!counted)
			count_dropped(b, tid);
		return NULL;
	}
	if (!counted)
		__atomic_add_fetch(&b->sharers, 1, __ATOMIC_ACQ_REL);
	task_raw[slot] = 1;
	publish(slot, tid);
	s = &task_state[slot];
	scope_thread_begin(s, owner < 0 ? -1 : task_state[owner].lane);
	s->inside++;
	return s;
}

void scope_foreign_task(struct scope_thread *b)
{
	uint32_t tid = (uint32_t)gettid();
	struct scope_thread *s;
	sigset_t old;

	if (tid == b->tid) {
		/* b's own thread on another stack (swapcontext, sigaltstack): the
		 * hook's test is given up for it, raw clones of it are not told
		 * apart from then on */
		b->stack_floor = 0;
		return;
	}
	block_signals(&old);
	/* counted first: the owner cannot take its state back before this
	 * task has one */
	__atomic_add_fetch(&b->sharers, 1, __ATOMIC_ACQ_REL);
	await_shared(b);
	s = find(tid) < 0 ? adopt(b, tid, 1) : NULL;
	if (s) {
		scope_task_leave(s);
	} else {
		/* it has a state already, or none is left: counted as such */
		if (find(tid) < 0)
			count_dropped(b, tid);
		__atomic_sub_fetch(&b->sharers, 1, __ATOMIC_RELEASE);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/*
 * Makes the calling task's block shared, if it is not yet, moving the
 * task's state into the table; returns the task's state (NULL when it has
 * none). Called with every signal blocked.
 */
static SCOPE_NOINST struct scope_thread *share(struct scope_thread *b)
{
	uint32_t tid = (uint32_t)gettid(), f;
	int slot;

	/* a raw clone's task may be asking for the same meanwhile (see
	 * await_shared): one of the two shares, with what the task took out */
	for (;;) {
		if (__atomic_load_n(&b->shared, __ATOMIC_ACQUIRE)) {
			slot = find(tid);
			return slot < 0 ? NULL : &task_state[slot];
		}
		f = __atomic_load_n(&b->foreign, __ATOMIC_ACQUIRE);
		if (f == SCOPE_FOREIGN_CONVERTING)
			futex_wait_ms(&b->foreign, f, 1);
		else if (__atomic_compare_exchange_n(&b->foreign, &f, SCOPE_FOREIGN_CONVERTING, 0,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	if (f == SCOPE_FOREIGN_PENDING) {
		share_raw(b);
		slot = find(tid);
		return slot < 0 ? NULL : &task_state[slot];
	}
	share_for(b, tid, b->open, 0);
	__atomic_store_n(&b->foreign, SCOPE_FOREIGN_NONE, __ATOMIC_RELEASE);
	futex_wake_all(&b->foreign);
	slot = find(tid);
	return slot < 0 ? NULL : &task_state[slot];
}

/* The child's first and last steps, around the program's function. */
static SCOPE_NOINST int task_main(void *v)
{
	int slot = (int)(intptr_t)v, rc;
	struct task_start st = task_start[slot];
	struct scope_thread *s = &task_state[slot];
	sigset_t old;

	publish(slot, (uint32_t)gettid());
	scope_thread_begin(s, st.parent);
	sigprocmask(SIG_SETMASK, &st.mask, NULL);
	rc = st.fn(st.arg);
	block_signals(&old);
	scope_thread_end(s);
	publish(slot, 0);
	/* The task ends now, signals blocked, touching nothing more. */
	__atomic_sub_fetch(&st.block->sharers, 1, __ATOMIC_RELEASE);
	return rc;
}

static SCOPE_NOINST int clone_shared(int (*fn)(void *), void *stack, int flags, void *arg,
				     pid_t *ptid, void *tls, pid_t *ctid)
{
	struct scope_thread *b = &scope_tls, *self;
	sigset_t old;
	int slot, rc, err;

	block_signals(&old);
	self = share(b);
	slot = claim();
	__atomic_add_fetch(&b->sharers, 1, __ATOMIC_ACQ_REL);
	if (slot >= 0) {
		task_start[slot] = (struct task_start){fn, arg, self ? self->lane : -1, old, b};
		rc = real_clone(task_main, stack, flags, (void *)(intptr_t)slot, ptid, tls, ctid);
	} else {
		/* No state for it: its calls are dropped and counted, and as its
		 * end is not seen, the block stays shared. */
		sigprocmask(SIG_SETMASK, &old, NULL);
		rc = real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	}
	err = errno;
	if (rc < 0) {
		if (slot >= 0)
			publish(slot, 0);
		__atomic_sub_fetch(&b->sharers, 1, __ATOMIC_RELEASE);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return rc;
}

/* Whether the caller is a process of its own (clone with CLONE_VM but not
 * CLONE_THREAD) on its parent's TLS block: its exit or exec ends only
 * itself, not the recording of the process whose memory it shares. A task
 * of the same thread group ends the whole process when it exits or execs. */
int scope_clone_process(void)
{
	struct scope_thread *b = &scope_tls;
	const struct scope_arena_header *h = scope_proc.hdr;

	return __atomic_load_n(&b->shared, __ATOMIC_ACQUIRE) && (uint32_t)gettid() != b->owner &&
	       h && getpid() != h->pid;
}

/* A child of clone without CLONE_VM is a process of its own, as a forked
 * child is, but no atfork handler runs in it: it is told here, before the
 * program's function, or it would record into its parent's arena. */
struct copy_start {
	int (*fn)(void *);
	void *arg;
};

static SCOPE_NOINST int copy_main(void *v)
{
	struct copy_start st = *(struct copy_start *)v;
	int rc;

	scope_clone_forget();
	scope_process_forked();
	rc = st.fn(st.arg);
	/* clone ends the child with the exit system call: no exit handler */
	scope_finish(SCOPE_EXIT_STATUS, rc & 0xff);
	return rc;
}

SCOPE_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	pid_t *ptid, *ctid;
	void *tls;

	/* glibc reads these three whatever the flags say; so do we. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	scope_clone_resolve();
	if (!real_clone) {
		errno = ENOSYS;
		return -1;
	}
	if (fn && !(flags & CLONE_VM)) {
		/* the child reads this from its copy of the caller's memory */
		struct copy_start st = {fn, arg};
		return real_clone(copy_main, stack, flags, &st, ptid, tls, ctid);
	}
	if ((flags & CLONE_SETTLS) || !fn)
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	return clone_shared(fn, stack, flags, arg, ptid, tls, ctid);
}
