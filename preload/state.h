/* SPDX-License-Identifier: MIT */
/* State shared by the parts of libscope_preload.so. */
#ifndef SCOPE_PRELOAD_STATE_H
#define SCOPE_PRELOAD_STATE_H

#include <scope/arena.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SCOPE_HIDDEN __attribute__((visibility("hidden")))
#define SCOPE_NOINST __attribute__((no_instrument_function))
/* What the library exports (exports.map lists the same): the hooks and the
 * wrappers of the functions it takes over. */
#define SCOPE_EXPORT __attribute__((visibility("default"))) SCOPE_NOINST

#define SCOPE_FRAME_SLOTS 512
#define SCOPE_HELD_SLOTS  32

/* Chunks [lo, hi) of the arena that left memory with calls still open in
 * them, the shallowest being rec at depth; released again once rec has
 * returned (see thread.c). chunks: how many were merged into the range
 * (at most 65,535 counted); skip, backoff: how often rec is read. */
struct scope_held {
	uintptr_t lo, hi;
	const struct scope_rec *rec;
	uint32_t depth;
	uint16_t chunks;
	uint8_t skip, backoff;
};

/*
 * Per-thread recording state. The hooks' one test is cur >= limit: a thread
 * that has not registered yet, whose chunk is full, or that must not record
 * right now has limit == NULL or limit == cur, and every such case is
 * decided in the slow path. The enter hook has one more, before it takes a
 * slot: a stack pointer below stack_floor is another task's (clone.c).
 * While filters apply, a thread that may record has limit ==
 * SCOPE_LIMIT_FILTER, below every slot: each enter fails the test and goes
 * to the filters (filter.c), and the calls they store are marked
 * (SCOPE_REC_MARKED), so that each exit fails its test too.
 */
#define SCOPE_LIMIT_FILTER ((struct scope_rec *)(uintptr_t)1)

struct scope_filter_block;

struct scope_thread {
	struct scope_rec *cur;	 /* next free record in the current chunk */
	struct scope_rec *limit; /* end of the current chunk, or NULL */
	struct scope_rec *open;	 /* innermost open record, or NULL */
	struct scope_rec *chunk_end;
	/* The enter hook's one other test: a stack pointer below it is not on
	 * this thread's stack, it is a task sharing the block (clone.c); 0:
	 * not tested. */
	uintptr_t stack_floor;
	uint32_t depth;		      /* open recorded calls */
	int32_t lane;		      /* -1 until registered */
	uint32_t seq;		      /* chunks this lane has had */
	uint32_t ignored;	      /* unrecorded calls awaiting their exits */
	struct scope_rec *saved_open; /* open, while ignored > 0 */
	uint8_t registered;
	uint8_t busy;		      /* the library is running on this thread */
	uint8_t dropping;	      /* 1 + the loss cause of the calls being ignored, or 0 */
	uintptr_t stack_lo, stack_hi; /* the thread's own stack, 0 when unknown */
	/* Each open call's frame (the caller's stack pointer at the hook), by
	 * depth: longjmp closes the calls whose frames it unwinds. Deeper than
	 * SCOPE_FRAME_SLOTS, slots are shared and a jump may close late. */
	uintptr_t frames[SCOPE_FRAME_SLOTS];
	struct scope_held held[SCOPE_HELD_SLOTS];
	uint32_t nheld;
	uint8_t holding; /* held is being changed: a signal handler leaves it alone */
	uint8_t inside;	 /* slow paths running on this state (signal handlers nest) */
	/* Tasks that clone(CLONE_VM) without CLONE_SETTLS share this block:
	 * while shared is set, its fast paths always fail and each task's
	 * state is in clone.c's table; sharers counts the clone children
	 * alive, owner is the task whose block it is. */
	uint8_t shared;
	uint8_t adopts; /* shared for a raw clone's task: unknown tasks get states */
	uint32_t sharers;
	uint32_t owner;
	/* A raw clone's task found on the block (SCOPE_FOREIGN_*, a futex
	 * word), and the owner's innermost open call, taken out of open to
	 * send every hook to the slow path until the block is shared. */
	uint32_t foreign;
	struct scope_rec *parked, *parked_first;
	uint32_t reap;		    /* the owner's entries since its raw tasks were looked for */
	uint32_t tid;		    /* the task this state was registered for */
	uint8_t paused;		    /* scope_pause: calls are not recorded until scope_resume */
	uint32_t task;		    /* the task lane the thread runs, 0 for none */
	struct scope_counters *ctr; /* the thread's counters (counters.c), NULL when none */
	struct scope_filter_block *filter; /* the thread's filter state (filter.c), or NULL */
};

/* The end of the room t's side records may take now: its limit, or its
 * chunk's end while the filters hold the limit; NULL: none. */
static inline struct scope_rec *scope_room(const struct scope_thread *t)
{
	struct scope_rec *limit = __atomic_load_n(&t->limit, __ATOMIC_RELAXED);
	return limit == SCOPE_LIMIT_FILTER ? t->chunk_end : limit;
}

extern __thread struct scope_thread scope_tls __attribute__((tls_model("initial-exec")));

/* Whether the stack pointer is below t's stack_floor: one compare and one
 * branch (a C comparison of the frame costs one more instruction). */
#if defined(__x86_64__)
#define scope_below_floor(t)                                                                       \
	({                                                                                         \
		int below_ = 0;                                                                    \
		__asm__ goto("cmpq %0, %%rsp\n\tjb %l[below]"                                      \
			     :                                                                     \
			     : "m"((t)->stack_floor)                                               \
			     : "cc"                                                                \
			     : below);                                                             \
		if (0) {                                                                           \
		below:                                                                             \
			below_ = 1;                                                                \
		}                                                                                  \
		below_;                                                                            \
	})
#else
#define scope_below_floor(t)                                                                       \
	__builtin_expect((uintptr_t)__builtin_frame_address(0) < (t)->stack_floor, 0)
#endif

struct scope_config {
	char output[SCOPE_PATH_BYTES];
	char parts[SCOPE_PATH_BYTES];
	char self[SCOPE_PATH_BYTES];	  /* this library */
	char tmpdir[SCOPE_PATH_BYTES];	  /* the store's and the writer's spills */
	char arena_dir[SCOPE_PATH_BYTES]; /* the arena's (arena_dir_choose) */
	char writer[SCOPE_PATH_BYTES];
	char run_writer[SCOPE_PATH_BYTES]; /* the socket of the run's writer, "" when none */
	char compression[64];
	uint32_t chunk_bytes;
	uint32_t lane_capacity;
	uint64_t arena_max_bytes;
	int role;	  /* enum scope_role */
	int export_later; /* environ did not exist yet at start-up */
	int force_monotonic;
	int keep_arena;
	int debug;
	int chunk_size_bad; /* SCOPE_CHUNK_SIZE is unusable: not given to the writer */
	int libcalls;	    /* SCOPE_LIBCALLS: the SCOPE_LIBCALL_* kinds recorded */
	int start_paused;   /* SCOPE_START_PAUSED: nothing is recorded until scope_resume_process */
	int heap;	    /* SCOPE_HEAP: heap blocks are tracked per region */
};

/* The process-wide state. */
struct scope_process {
	struct scope_config cfg;
	struct scope_arena_header *hdr; /* NULL when not recording */
	char *base;			/* the mapping, hdr == (void *)base */
	int fd;
	char arena_path[SCOPE_PATH_BYTES];
	uint64_t map_bytes;
	uint32_t recs_per_chunk;
	int stopped; /* set and read with scope_stopped/scope_set_stopped */
	int initialized;
	pid_t parent_pid; /* a forked child's parent, taken before it can exit */
	int paused;	  /* scope_pause_process: set and read with scope_paused */
	/* The tables before the tasks' slots are backed a block at a time
	 * (scope_arena_back_table): bit b says block b is. */
	uint64_t tables_backed;
	uint64_t table_block;
	/* Bit i: chunk i left this process's memory (it is past
	 * SCOPE_RESIDENT_CHUNKS otherwise, or mapped). */
	uint64_t released[SCOPE_RESIDENT_CHUNKS / 64];
};

extern struct scope_process scope_proc SCOPE_HIDDEN;

/* One thread stops the process while others are still in the slow path:
 * the flag is atomic. Relaxed: no data is published through it, a thread
 * that has not seen it yet records one more chunk at most. */
static inline int scope_stopped(void)
{
	return __atomic_load_n(&scope_proc.stopped, __ATOMIC_RELAXED);
}

static inline void scope_set_stopped(int stopped)
{
	__atomic_store_n(&scope_proc.stopped, stopped, __ATOMIC_RELAXED);
}

/* The process is paused (scope_pause_process, SCOPE_START_PAUSED): threads
 * see it at their next slow path, which scope_threads_pause forces. */
static inline int scope_paused(void)
{
	return __atomic_load_n(&scope_proc.paused, __ATOMIC_SEQ_CST);
}

/* config.c: returns 0, or -1 after one line saying why this process is
 * not profiled. */
int scope_config_read(struct scope_config *cfg) SCOPE_HIDDEN;
void scope_config_export(struct scope_config *cfg) SCOPE_HIDDEN;
const char *scope_getenv(const char *name) SCOPE_HIDDEN;

/* arena.c: returns 0 or -errno (scope_arena_create has said why). */
int scope_arena_create(struct scope_process *p) SCOPE_HIDDEN;
struct scope_chunk_head *scope_arena_chunk(struct scope_process *p) SCOPE_HIDDEN;
/*
 * While the run's writer recycles chunks, the arena's first chunks stay in
 * the program's memory: a chunk that comes back costs no TLB flush and no
 * page faults. There are SCOPE_RESIDENT_BASE of them and
 * SCOPE_RESIDENT_PER_LANE more for each thread lane, at most
 * SCOPE_RESIDENT_CHUNKS: 16 MiB, and 1 MiB a thread; before the writer
 * recycles any, SCOPE_RESIDENT_EARLY. Returns where the chunks that leave
 * memory begin.
 */
uintptr_t scope_arena_resident_end(const struct scope_process *p) SCOPE_HIDDEN;
/* [lo, hi), whole chunks, leaves this process's memory. */
void scope_arena_release(struct scope_process *p, uintptr_t lo, uintptr_t hi) SCOPE_HIDDEN;
int scope_arena_lane(struct scope_process *p, int32_t parent) SCOPE_HIDDEN;
void scope_arena_append_module(struct scope_process *p, const char *line, size_t len) SCOPE_HIDDEN;
void scope_arena_lost(struct scope_process *p, enum scope_lost_cause why) SCOPE_HIDDEN;
/* Reserves disk for [off, off + len) of the arena; 0 or -errno. */
int scope_arena_back(struct scope_process *p, uint64_t off, uint64_t len) SCOPE_HIDDEN;
/* The same for [off, off + len) of the tables before the tasks' slots
 * (command line, modules, lanes, names), which are written into only once
 * this has returned 0. */
int scope_arena_back_table(struct scope_process *p, uint64_t off, uint64_t len) SCOPE_HIDDEN;

/* clone.c: the calling task's own state when t, its TLS block, is shared
 * (t->shared), with inside counted up: give it back with scope_task_leave.
 * NULL for a task that has none (its calls are dropped and counted). */
struct scope_thread *scope_task_enter(struct scope_thread *t) SCOPE_HIDDEN;
static inline void scope_task_leave(struct scope_thread *t)
{
	t->inside--;
}
void scope_clone_resolve(void) SCOPE_HIDDEN;
void scope_clone_forget(void) SCOPE_HIDDEN;
int scope_clone_process(void) SCOPE_HIDDEN;

/* A task made by a raw clone system call without CLONE_SETTLS runs on its
 * parent's block (clone.c). SCOPE_FOREIGN_PENDING: such a task waits for
 * the block to become shared, which its owner does at its next slow path
 * (scope_foreign_owner); SCOPE_FOREIGN_CONVERTING: a task is doing it. */
enum { SCOPE_FOREIGN_NONE, SCOPE_FOREIGN_PENDING, SCOPE_FOREIGN_CONVERTING };
/* The calling task's stack pointer is below b's stack_floor, b not shared:
 * either b's own thread on a stack of its own making (the test is given up
 * for it), or another task, for which b is made shared; returns then. */
void scope_foreign_task(struct scope_thread *b) SCOPE_HIDDEN;
/* b->foreign is set: its owner makes it shared, or waits while another
 * task does; nothing for any other task. */
void scope_foreign_owner(struct scope_thread *b) SCOPE_HIDDEN;
static inline void scope_foreign_check(struct scope_thread *b)
{
	if (__builtin_expect(__atomic_load_n(&b->foreign, __ATOMIC_ACQUIRE) != 0, 0))
		scope_foreign_owner(b);
}

/* Keeps calls the library itself causes (an instrumented malloc, say) out
 * of the record; pairs nest. */
static inline void scope_busy_begin(struct scope_thread *t)
{
	scope_foreign_check(t);
	if (__builtin_expect(__atomic_load_n(&t->shared, __ATOMIC_RELAXED), 0)) {
		struct scope_thread *own = scope_task_enter(t);
		if (own) {
			own->busy++;
			own->limit = NULL;
			scope_task_leave(own);
			return;
		}
	}
	t->busy++;
	t->limit = NULL;
}

/* thread.c */
void scope_busy_end(struct scope_thread *t) SCOPE_HIDDEN;
void scope_thread_register(int32_t parent) SCOPE_HIDDEN;
void scope_thread_finish(void) SCOPE_HIDDEN;
void scope_thread_named(const char *name) SCOPE_HIDDEN;
void scope_thread_stop_self(void) SCOPE_HIDDEN;
int32_t scope_thread_lane(void) SCOPE_HIDDEN;
void scope_thread_begin(struct scope_thread *t, int32_t parent) SCOPE_HIDDEN;
/* t's task has ended, unseen (a raw clone's): its lane gets its end. */
void scope_thread_gone(struct scope_thread *t) SCOPE_HIDDEN;
void scope_thread_resume(struct scope_thread *t) SCOPE_HIDDEN;
void scope_thread_end(struct scope_thread *t) SCOPE_HIDDEN;
void scope_threads_cpu_at_stop(void) SCOPE_HIDDEN;
/* Sends every registered thread to its slow path (a process pause); and
 * forgets them all (a new process: a forked child, an exec). */
void scope_threads_pause(void) SCOPE_HIDDEN;
void scope_threads_forget(void) SCOPE_HIDDEN;
void scope_enter_slow(void *fn, uintptr_t frame, struct scope_rec *taken) SCOPE_HIDDEN;
void scope_exit_slow(void *fn, uint64_t now, uintptr_t frame) SCOPE_HIDDEN;
/* For the filters: records the call of fn as the slow path would (a new
 * chunk, the counters), at the thread's depth; returns its record, marked
 * when its counters are read, or NULL when the call is not recorded (its
 * exit then goes to scope_exit_slow). taken is given back as there. */
struct scope_rec *scope_enter_record(void *fn, uintptr_t frame,
				     struct scope_rec *taken) SCOPE_HIDDEN;
uint64_t scope_measure_overhead(void) SCOPE_HIDDEN;
/* The bytes the innermost open call (fn) moved, as a SCOPE_REC_BYTES record;
 * nothing when that call is not being recorded. */
void scope_record_bytes(void *fn, uint64_t sent, uint64_t received) SCOPE_HIDDEN;
void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

/* names.c: the slot in the arena's names area of name (cut to fit) of
 * kind, added when new; UINT32_MAX when not recording or the area is full. */
uint32_t scope_name_slot(const char *name, enum scope_name_kind kind) SCOPE_HIDDEN;
void scope_names_forget(void) SCOPE_HIDDEN;

/* tasks.c: task lanes (1 + their slot in the arena's tasks area; 0 is
 * none). scope_task_new fills a slot (0 when not recording or full);
 * scope_task_run (thread.c) makes lane the calling thread's task. */
uint32_t scope_task_new(uint64_t id, const char *name) SCOPE_HIDDEN;
void scope_task_ended(uint32_t lane) SCOPE_HIDDEN;
uint32_t scope_task_lane(uint64_t id) SCOPE_HIDDEN;
void scope_task_forget(void) SCOPE_HIDDEN;
void scope_task_run(uint32_t lane) SCOPE_HIDDEN;

/* thread.c: a side record of the call open at depth (bits above the address). */
void scope_record_side(struct scope_thread *t, uint64_t code, uint64_t depth, uint64_t a,
		       uint64_t b) SCOPE_HIDDEN;

/* counters.c (SCOPE_COUNTERS): init lists the events that can be counted in
 * the arena's header and says why of each that cannot; a thread's counters
 * start as it registers and stop as it ends; enter returns whether the call
 * of fn is counted (and reads its counters), exit writes the change over
 * the counted call open at depth as side records. */
struct scope_counters;
void scope_counters_init(struct scope_arena_header *h) SCOPE_HIDDEN;
int scope_counters_on(void) SCOPE_HIDDEN;
void scope_counters_thread_start(struct scope_thread *t) SCOPE_HIDDEN;
void scope_counters_thread_stop(struct scope_thread *t) SCOPE_HIDDEN;
void scope_counters_forget(struct scope_thread *t) SCOPE_HIDDEN;
int scope_counters_enter(struct scope_thread *t, void *fn) SCOPE_HIDDEN;
void scope_counters_exit(struct scope_thread *t, uint64_t depth) SCOPE_HIDDEN;
/* symname.c: the name of the region fn (given, or its symbol); 0, or -1. */
int scope_symbol_name(void *fn, char *out, size_t cap) SCOPE_HIDDEN;

/* fds.c */
int scope_fd_hide(int fd) SCOPE_HIDDEN;
void scope_fd_close(int fd) SCOPE_HIDDEN;

/* modules.c */
void scope_modules_capture(struct scope_process *p) SCOPE_HIDDEN;
struct dl_phdr_info;
void scope_module_build_id(const struct dl_phdr_info *info, char *out, size_t cap) SCOPE_HIDDEN;

/* init.c */
void scope_init(void) SCOPE_HIDDEN;
int scope_start_recording(void) SCOPE_HIDDEN;

/* env.c: what a program exec'd from this one needs in its environment. */
void scope_env_capture(const struct scope_config *cfg) SCOPE_HIDDEN;
char **scope_env_for_exec(char *const envp[]) SCOPE_HIDDEN;
void scope_env_free(char **env) SCOPE_HIDDEN;

/* process.c: fork, exec, spawn and _exit. */
void scope_process_init(void) SCOPE_HIDDEN;
/* The calling process was just made as a copy of a recording one. */
void scope_process_forked(void) SCOPE_HIDDEN;
/* Starts the writer with keep_fd open in it; returns 0 or an errno. */
int scope_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
		int keep_fd) SCOPE_HIDDEN;

/* finish.c */
void scope_finish(int kind, int code) SCOPE_HIDDEN;
int scope_finish_prepare(struct scope_process *p) SCOPE_HIDDEN;

/* run.c: a plain run's writer. Start it (the run's first process, when
 * recording starts), and at that process's end, after handing its own arena
 * over, end the run and wait for the writer; returns 0, or -1 when this
 * process started no such writer. */
void scope_run_start(struct scope_process *p) SCOPE_HIDDEN;
int scope_run_end(struct scope_process *p) SCOPE_HIDDEN;
/* finish.c: the writer's environment (NULL before scope_finish_prepare). */
char **scope_writer_env(void) SCOPE_HIDDEN;
/* finish.c: the run's writer, if there is one, reads the arena from now on. */
void scope_run_join(const struct scope_process *p) SCOPE_HIDDEN;

/* signals.c */
void scope_signals_init(void) SCOPE_HIDDEN;
/* A stack for the fatal-signal handler on a new thread, and its end;
 * begin returns what end takes (NULL when the thread has its own). */
void *scope_signals_thread_begin(void) SCOPE_HIDDEN;
void scope_signals_thread_end(void *stack) SCOPE_HIDDEN;

/* heap.c: the allocator's originals, looked up at start-up; tracking from
 * scope_heap_start (the arena made) to scope_heap_stop (recording stops);
 * a forked child forgets its parent's blocks. */
void scope_heap_resolve(void) SCOPE_HIDDEN;
void scope_heap_start(struct scope_process *p) SCOPE_HIDDEN;
void scope_heap_stop(struct scope_process *p) SCOPE_HIDDEN;
void scope_heap_forked(void) SCOPE_HIDDEN;

/* pthread.c */
int scope_pthread_init(void) SCOPE_HIDDEN;

/* The wrapped functions' originals, looked up by scope_init before the
 * program can start a thread, so threads only ever read them. */
void scope_fds_resolve(void) SCOPE_HIDDEN;
void scope_jump_resolve(void) SCOPE_HIDDEN;
void scope_modules_resolve(void) SCOPE_HIDDEN;

/* log.c: write(2) to stderr, prefixed "scope[pid/tid]: ". */
void scope_log(const char *fmt, ...) SCOPE_HIDDEN __attribute__((format(printf, 1, 2)));

#endif
