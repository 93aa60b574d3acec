/* SPDX-License-Identifier: MIT */
/* The arena: the shared file libscope_preload.so records into and scope-writer reads. */
#ifndef SCOPE_ARENA_H
#define SCOPE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Layout of the file, every offset a multiple of the page size:
 *
 *   header   struct scope_arena_header, SCOPE_ARENA_HEADER_BYTES
 *   cmdline  the process's NUL-separated argv, as /proc/self/cmdline has it
 *   modules  text lines appended by the library, one per mapped object:
 *            "<bias> <lo> <hi> <build-id|-> <unload> <path>\n" (hex; unload
 *            is the tick the object was closed at, 0 if never); a newline
 *            or backslash in the path is written as \n or \\
 *   lanes    struct scope_lane[lane_capacity]
 *   names    struct scope_name[names_cap]: the names of the regions and
 *            tasks a program names through the API (scope.h)
 *   tasks    struct scope_task[tasks_cap]: the task lanes, 1 + slot
 *   crash    crash_cap bytes: the stack of the thread a fatal signal hit,
 *            copied from its stack pointer upward (see crash_sp)
 *   heap     struct scope_heap_region[heap_cap], heap tracking's figures
 *            per region (SCOPE_HEAP=1); none (heap_cap 0) otherwise
 *   chunks   chunk_bytes each: struct scope_chunk_head, then records
 *
 * The file is sparse: only what was touched occupies disk or memory.
 */

#define SCOPE_ARENA_MAGIC   "SCOPEAR1"
#define SCOPE_ARENA_VERSION 3

/*
 * One call. The library writes it at entry and completes it at exit, so a
 * thread's records stand in the order their calls started, and a call that
 * never returned is still in the file, marked open.
 *
 *   fn     the function's address in the low 48 bits, the call's depth
 *          (modulo 65,536: the writer rebuilds the rest) above
 *   start  clock ticks at entry
 *   end    clock ticks at exit; while the call is open, SCOPE_REC_OPEN
 *          ored with the address of the enclosing open record (or 0)
 */
struct scope_rec {
	uint64_t fn;
	uint64_t start;
	uint64_t end;
};
_Static_assert(sizeof(struct scope_rec) == 24, "records are 24 bytes");

#define SCOPE_REC_OPEN	    (UINT64_C(1) << 63)
#define SCOPE_REC_ADDR_BITS 48
#define SCOPE_REC_ADDR_MASK ((UINT64_C(1) << SCOPE_REC_ADDR_BITS) - 1)

/*
 * A bytes record: what the call open at its depth moved (an MPI call).
 * Written into the thread's next slot while that call is still open, so it
 * belongs to the latest record of that depth on the lane before it.
 *
 *   fn     SCOPE_REC_BYTES in the low 48 bits, the call's depth above;
 *          stored last, after start and end
 *   start  bytes sent
 *   end    bytes received
 */
#define SCOPE_REC_BYTES UINT64_C(1)

static inline int scope_rec_is_bytes(const struct scope_rec *r)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) == SCOPE_REC_BYTES;
}

/*
 * A task record: from here on, the calls its lane's thread starts belong
 * to a task lane (until the next task record of the lane).
 *
 *   fn     SCOPE_REC_TASK in the low 48 bits, the depth above; stored last
 *   start  clock ticks when the thread took the task up
 *   end    the task lane (1 + its slot in the tasks area), 0 for none
 */
#define SCOPE_REC_TASK UINT64_C(2)

/*
 * A slot taken and then not used: a signal handler recorded after it
 * before it could be given back, and a lane's records end at the first
 * empty slot of a chunk. Holds nothing; readers skip it.
 */
#define SCOPE_REC_PAD UINT64_C(3)

/*
 * A counters record: the change of counters 2k and 2k + 1 (of the
 * header's list) over the call open at its depth, written at its exit
 * while it is still open, so it belongs, like a bytes record, to the
 * latest record of that depth on the lane before it.
 *
 *   fn     SCOPE_REC_COUNTERS + k in the low 48 bits, the depth above
 *   start  counter 2k's change, end counter 2k + 1's (0 past the list)
 */
#define SCOPE_REC_COUNTERS UINT64_C(0x10)

/* A call whose exit must take the library's slow path has this bit in its
 * record's address too (x86-64 puts no user code there): one whose
 * counters are read, until it returns; while record-time filters apply,
 * every call they store, for good. Readers take it off (scope_rec_addr). */
#define SCOPE_REC_MARKED (UINT64_C(1) << 47)

/* The address a call record names, without SCOPE_REC_MARKED. */
static inline uint64_t scope_rec_addr(const struct scope_rec *r)
{
	return r->fn & SCOPE_REC_ADDR_MASK & ~SCOPE_REC_MARKED;
}

/* A record whose low 48 bits are below SCOPE_REC_CODE is no call of code:
 * a side record (bytes, task) or a call of a named region, whose name is
 * slot (fn - SCOPE_REC_NAMED) of the names area. No code is mapped that
 * low (the kernel's mmap_min_addr). */
#define SCOPE_REC_NAMED UINT64_C(0x100)
#define SCOPE_REC_CODE	UINT64_C(0x10000)

static inline int scope_rec_is_side(const struct scope_rec *r)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) < SCOPE_REC_NAMED;
}

/* A chunk belongs to one thread lane; seq orders a lane's chunks. A chunk
 * whose magic is not SCOPE_CHUNK_MAGIC was handed out but never used, or
 * holds nothing any more: SCOPE_CHUNK_FREE once the run's writer has
 * copied it to the store and zeroed it for reuse. */
struct scope_chunk_head {
	uint32_t lane;
	uint32_t seq;
	uint64_t magic;
	uint64_t reserved;
};

#define SCOPE_CHUNK_MAGIC UINT64_C(0x4b4e4843504f4353) /* "SCOPCHNK" */
#define SCOPE_CHUNK_FREE  UINT64_C(0x45455246504f4353) /* "SCOPFREE" */
_Static_assert(sizeof(struct scope_chunk_head) == 24,
	       "a chunk head is one record wide so records stay aligned");

/* One thread lane. Times are clock ticks; end is 0 while it runs. */
struct scope_lane {
	uint32_t tid;
	int32_t parent; /* lane that created it, -1 when unknown */
	uint64_t start;
	uint64_t end;
	char name[16];
	uint32_t used; /* nonzero once the slot is claimed */
	/* The sequence number of the chunk the thread records into: its
	 * chunks before it are full, and a writer may read them while the
	 * program runs. */
	uint32_t sealed;
	/* While the thread runs, SCOPE_LANE_CPU_RUNNING ored with its CPU
	 * clock (ns) when it got the lane; from its end or the process's stop,
	 * the CPU time it used since. 0 when not known. */
	uint64_t cpu_ns;
	uint32_t reserved[2];
};
#define SCOPE_LANE_CPU_RUNNING (UINT64_C(1) << 63)
_Static_assert(sizeof(struct scope_lane) == 64, "lanes are 64 bytes");

/* A name given through the API; text is cut to fit, NUL-terminated. A
 * slot is written once, then used is set (release). */
enum scope_name_kind {
	SCOPE_NAME_USER = 1,   /* a region of the program's (scope_region_begin) */
	SCOPE_NAME_OPENMP = 2, /* a region the OpenMP runtime reported */
	SCOPE_NAME_TASK = 3,   /* a task's name */
};

struct scope_name {
	uint32_t used;
	uint32_t kind; /* enum scope_name_kind */
	char text[120];
};
_Static_assert(sizeof(struct scope_name) == 128, "names are 128 bytes");

/* A task lane: a logical task that may run on several threads in turn.
 * Times are clock ticks; end is 0 while it runs. */
struct scope_task {
	uint64_t id;	/* the program's (or the OpenMP runtime's) id for it */
	uint64_t start; /* when it began */
	uint64_t end;	/* when it ended, 0 if it did not */
	uint32_t name;	/* slot in the names area, UINT32_MAX for none */
	int32_t parent; /* the thread lane that began it, -1 when unknown */
	uint32_t used;	/* nonzero once the slot is filled (release) */
	uint32_t reserved0;
	uint64_t reserved[3];
};
_Static_assert(sizeof(struct scope_task) == 64, "tasks are 64 bytes");

enum scope_clock_source {
	SCOPE_CLOCK_TSC = 1,
	SCOPE_CLOCK_MONOTONIC = 2, /* ticks are nanoseconds */
};

enum scope_arena_state {
	SCOPE_ARENA_RECORDING = 1,
	SCOPE_ARENA_STOPPED = 2, /* stop fields are valid */
};

enum scope_exit_kind {
	SCOPE_EXIT_UNKNOWN = 0,
	SCOPE_EXIT_STATUS = 1, /* exit_code is an exit status */
	SCOPE_EXIT_SIGNAL = 2, /* exit_code is a signal number */
	SCOPE_EXIT_EXEC = 3,   /* the process went on as another program */
};

/* Where the writer puts this process's profile. */
enum scope_role {
	SCOPE_ROLE_ROOT = 0, /* the run's first process: the output itself */
	SCOPE_ROLE_PART = 1, /* any other: a part beside the output, or in parts */
};

/* Why records were dropped; each cause is counted separately. */
enum scope_lost_cause {
	SCOPE_LOST_ARENA_FULL, /* no chunk could be had */
	SCOPE_LOST_NO_LANE,    /* more threads than lane slots */
	SCOPE_LOST_SHARED_TLS, /* a task sharing another's TLS (clone(CLONE_VM) without
				  CLONE_SETTLS) that got no state of its own */
	SCOPE_LOST_CAUSES
};

/* Freed chunks waiting to be taken again; a power of two. */
#define SCOPE_FREE_RING 512

/* While the run's writer recycles chunks, the arena's first chunks stay
 * mapped: a chunk that comes back costs no TLB flush and no page faults.
 * In the program, SCOPE_RESIDENT_BASE of them (16 MiB of the default
 * 64 KiB chunks: what a program making 50 M calls a second fills while the
 * writer takes a few milliseconds to come round) and SCOPE_RESIDENT_PER_LANE
 * more for each thread lane, in the writer SCOPE_RESIDENT_CHUNKS, the most
 * of either. Those past them, reached when the writer falls behind, leave
 * memory as they fill, so neither process's memory grows with the arena.
 * Before the writer recycles any, the program keeps SCOPE_RESIDENT_EARLY
 * (1 MiB): a short process never pays for letting its chunks go (a TLB
 * flush and a system call each, 20 to 40 us in the virtual machines
 * measured here, and the fault when the chunk comes back). */
#define SCOPE_RESIDENT_CHUNKS	512
#define SCOPE_RESIDENT_BASE	256
#define SCOPE_RESIDENT_PER_LANE 16
#define SCOPE_RESIDENT_EARLY	16

/* The store: the file the run's writer copies a running process's full
 * chunks to, named after the arena with this suffix, chunk after chunk in
 * the arena's chunk format. It lives in the folder the header's store_dir
 * names (the arena in memory, the store on disk), else beside the arena. */
#define SCOPE_STORE_SUFFIX    ".store"
#define SCOPE_STORE_DIR_BYTES 512

/* Any path the system accepts (PATH_MAX) fits. */
#define SCOPE_PATH_BYTES 4096

/* A fatal signal's snapshot: room for the registers of any architecture in
 * DWARF numbering, and the most stack copied (the crash area's size). */
#define SCOPE_CRASH_REGS	40
#define SCOPE_CRASH_STACK_BYTES (64u << 10)

#define SCOPE_MAX_COUNTERS	 4
#define SCOPE_COUNTER_NAME_BYTES 64
/* Heap tracking: the call sites that allocated most of a region's bytes. */
#define SCOPE_HEAP_SITES 4

struct scope_heap_site {
	uint64_t bytes;	      /* allocated there, in all */
	uint64_t allocations; /* calls made there */
	uint64_t address;     /* the return address of the allocating call */
};

/*
 * The heap blocks charged to one region: those allocated while it was the
 * innermost open call of their thread. fn is its function's address, 0 for
 * blocks allocated outside any recorded call. A block's free is charged to
 * the region that allocated it, on whatever thread; realloc is a free and
 * an allocation.
 */
struct scope_heap_region {
	uint64_t fn;
	uint64_t allocations, frees;
	uint64_t bytes; /* allocated, in all */
	uint64_t live;	/* allocated and not freed yet; at the process's stop: leaked */
	uint64_t peak;	/* the most live at once */
	struct scope_heap_site sites[SCOPE_HEAP_SITES]; /* most bytes first; bytes 0: none */
};
_Static_assert(sizeof(struct scope_heap_region) == 144, "heap regions are 144 bytes");

struct scope_arena_header {
	char magic[8];
	uint32_t version;
	uint32_t page_bytes;
	uint32_t chunk_bytes;
	uint32_t lane_capacity;
	uint64_t cmdline_off, cmdline_bytes;
	uint64_t modules_off, modules_cap;
	uint64_t lanes_off;
	uint64_t crash_off, crash_cap;
	uint64_t chunks_off;
	uint64_t chunk_capacity;

	/* Grown with atomic operations while the program runs. */
	uint64_t nchunks;     /* chunks handed out */
	uint64_t fallocated;  /* bytes of the file backed by disk */
	uint64_t modules_len; /* bytes appended to the modules area */
	uint32_t nlanes;      /* lane slots handed out */
	uint32_t state;	      /* enum scope_arena_state */
	uint64_t lost[SCOPE_LOST_CAUSES];

	/* The process. */
	int32_t pid, ppid;
	uint64_t start_unix_ns; /* wall clock at start_tick */

	/* The clock: start_tick and start_mono_ns were read together. */
	uint32_t clock_source;
	uint32_t reserved0;
	uint64_t start_tick;
	uint64_t start_mono_ns;

	/* Filled when recording stops. */
	uint64_t stop_tick;
	uint64_t stop_mono_ns;
	uint64_t stop_unix_ns;
	int32_t exit_kind; /* enum scope_exit_kind */
	int32_t exit_code;
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t max_rss_kib;
	uint64_t overhead_ticks; /* measured cost of one recorded call */

	/* A later reading of both clocks, taken by the first writer when the
	 * run was too short to calibrate the tick rate on its own; kept so
	 * that writing the arena again gives the same times. */
	uint64_t calib_tick;
	uint64_t calib_mono_ns;
	uint64_t published; /* nonzero once a writer published it (a kept arena) */

	/*
	 * A fatal signal: which, on which lane, and what the writer needs to
	 * unwind that thread's stack. The library only copies (a handler may
	 * not allocate or load anything): the interrupted registers, and the
	 * stack from the stack pointer upward into the crash area, stopping
	 * at the thread's stack top or the first unreadable page.
	 */
	uint32_t crash_signal;
	int32_t crash_lane;
	uint32_t crash_nregs; /* registers saved (x86-64: 17), 0 when none */
	uint32_t reported;    /* nonzero once a writer said why it could not publish */
	uint64_t crash_regs[SCOPE_CRASH_REGS]; /* DWARF numbering: x86-64 rax, rdx, rcx,
						  rbx, rsi, rdi, rbp, rsp, r8-r15, rip */
	uint64_t crash_sp;	    /* the address the crash area's first byte was read at */
	uint64_t crash_stack_bytes; /* bytes of stack in the crash area */

	uint32_t role; /* enum scope_role */
	int32_t rank;  /* MPI rank from the launcher's environment, -1 when none */
	int32_t ranks; /* MPI job size, 0 when unknown */
	uint32_t reserved1;

	uint64_t names_off;
	uint32_t names_cap; /* slots */
	uint32_t nnames;    /* slots handed out (atomic) */
	uint64_t tasks_off;
	uint32_t tasks_cap; /* slots */
	uint32_t ntasks;    /* slots handed out (atomic) */

	char exe[SCOPE_PATH_BYTES];
	char cwd[SCOPE_PATH_BYTES];
	char output[SCOPE_PATH_BYTES];
	char parts[SCOPE_PATH_BYTES]; /* folder for parts, "" = beside the output */
	char compression[64];

	/* The counters read at each counted call (SCOPE_COUNTERS), in the
	 * order of counters records; written once at start. */
	uint32_t ncounters;
	uint32_t reserved2;
	char counters[SCOPE_MAX_COUNTERS][SCOPE_COUNTER_NAME_BYTES];
	/* Heap tracking, 0 when off. heap_used: regions filled (grown with
	 * atomics); the rest set when recording stops. */
	uint64_t heap_off, heap_cap, heap_used;
	uint64_t heap_live, heap_peak; /* bytes live at the stop, and at most, in the process */
	uint64_t heap_untracked;       /* calls not counted: made inside another's tracking on
					  its thread (a signal handler), or with the table full */

	/*
	 * Chunks the run's writer took while the program ran (see the store
	 * below). store_chunks is the durable record of what it consumed: the
	 * store's first store_chunks chunks are complete copies, made before
	 * their arena chunks were freed. A chunk found both in the store and
	 * still in the arena (the writer stopped between the two) is read
	 * from the arena, which is never older.
	 *
	 * The free ring hands freed chunks back to the program: the writer
	 * alone fills slot free_tail % SCOPE_FREE_RING and then moves
	 * free_tail; a thread takes slot free_head % SCOPE_FREE_RING by moving
	 * free_head with a compare-and-swap. The counters never wrap, so a
	 * slot is never taken twice.
	 */
	uint64_t store_chunks;
	uint64_t free_head, free_tail;
	uint32_t free_ring[SCOPE_FREE_RING];

	/* The store's folder, "" when it is the arena's: the arena stays
	 * small and in memory while the store, which grows with the run,
	 * goes to disk. Written once at start. */
	char store_dir[SCOPE_STORE_DIR_BYTES];
};
#define SCOPE_ARENA_HEADER_BYTES (5u * 4096u)
_Static_assert(sizeof(struct scope_arena_header) <= SCOPE_ARENA_HEADER_BYTES,
	       "the header fits its pages");

/*
 * The store of the arena at ARENA, whose header is h, into out: in
 * h->store_dir under the arena's own name, or beside the arena when the
 * header names no folder (or one not ended within its field, as a
 * forged header could). Returns 0, or -1 when the name does not fit in
 * cap bytes. Only copies bytes: a program's exit path uses it.
 */
static inline int scope_store_path(const struct scope_arena_header *h, const char *arena, char *out,
				   size_t cap)
{
	size_t dir = 0, name = 0, at = 0, len = 0, suffix = sizeof SCOPE_STORE_SUFFIX;

	while (dir < SCOPE_STORE_DIR_BYTES && h->store_dir[dir])
		dir++;
	if (dir == SCOPE_STORE_DIR_BYTES)
		dir = 0;
	while (arena[len]) {
		if (arena[len] == '/')
			name = len + 1;
		len++;
	}
	if (!dir)
		name = 0; /* the arena's whole path */
	if (dir + 1 + (len - name) + suffix > cap)
		return -1;
	if (dir) {
		__builtin_memcpy(out, h->store_dir, dir);
		out[dir] = '/';
		at = dir + 1;
	}
	__builtin_memcpy(out + at, arena + name, len - name);
	__builtin_memcpy(out + at + len - name, SCOPE_STORE_SUFFIX, suffix);
	return 0;
}

#endif
