/* SPDX-License-Identifier: MIT */
/* Creates the arena file and hands out its chunks, lanes and module lines. */
#define _GNU_SOURCE
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PAGE	    4096u
#define MODULES_CAP (1u << 20)
#define CMDLINE_CAP (256u << 10)
#define NAMES_CAP   4096u
/* 4 MiB of task slots: the areas before the chunks stay far below the
 * smallest arena (ARENA_MIN), and the slots are backed as tasks begin. */
#define TASKS_CAP (1u << 16)
/* Regions heap tracking has room for; more are charged to the last. */
#define HEAP_REGIONS 8192u
/* The chunks are backed by disk in steps that double from the first to
 * this large, so the chunk slow path makes a system call only once every
 * few hundred chunks, and a short process does not pay for what it never
 * records into: in /dev/shm a step's pages are allocated and cleared at
 * once (16 MiB took 3 ms, a forked child's whole run). */
#define BACKING_FIRST (256u << 10)
#define BACKING_STEP  (16u << 20)

static SCOPE_NOINST uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* Reserves disk space for [have, want) so that a full disk becomes a counted
 * loss instead of a SIGBUS inside the program. */
static SCOPE_NOINST int back(int fd, uint64_t have, uint64_t want)
{
	if (fallocate(fd, 0, (off_t)have, (off_t)(want - have)) == 0)
		return 0;
	return errno == EOPNOTSUPP ? 0 : -errno;
}

static SCOPE_NOINST int open_arena_file(struct scope_process *p)
{
	int n = snprintf(p->arena_path, sizeof p->arena_path, "%s/scope-%d-XXXXXX.arena",
			 p->cfg.arena_dir, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof p->arena_path)
		return -ENAMETOOLONG;
	p->fd = mkostemps(p->arena_path, 6, O_CLOEXEC);
	if (p->fd < 0)
		return -errno;
	p->fd = scope_fd_hide(p->fd);
	return 0;
}

static SCOPE_NOINST void layout(struct scope_arena_header *h, const struct scope_config *cfg)
{
	size_t store_dir = strlen(cfg->tmpdir);

	memcpy(h->magic, SCOPE_ARENA_MAGIC, sizeof h->magic);
	h->version = SCOPE_ARENA_VERSION;
	/* a folder too long for the field: the store goes beside the arena */
	if (strcmp(cfg->tmpdir, cfg->arena_dir) != 0 && store_dir < sizeof h->store_dir)
		memcpy(h->store_dir, cfg->tmpdir, store_dir + 1);
	h->page_bytes = PAGE;
	h->chunk_bytes = cfg->chunk_bytes;
	h->lane_capacity = cfg->lane_capacity;
	h->cmdline_off = SCOPE_ARENA_HEADER_BYTES;
	h->modules_off = h->cmdline_off + CMDLINE_CAP;
	h->modules_cap = MODULES_CAP;
	h->lanes_off = h->modules_off + MODULES_CAP;
	h->names_off = round_up(
		h->lanes_off + (uint64_t)cfg->lane_capacity * sizeof(struct scope_lane), PAGE);
	h->names_cap = NAMES_CAP;
	h->tasks_off = h->names_off + (uint64_t)NAMES_CAP * sizeof(struct scope_name);
	h->tasks_cap = TASKS_CAP;
	h->crash_off = h->tasks_off + (uint64_t)TASKS_CAP * sizeof(struct scope_task);
	h->crash_cap = SCOPE_CRASH_STACK_BYTES;
	h->heap_off = h->crash_off + h->crash_cap;
	h->heap_cap = cfg->heap ? HEAP_REGIONS : 0;
	h->chunks_off =
		round_up(h->heap_off + h->heap_cap * sizeof(struct scope_heap_region), PAGE);
	h->chunk_capacity = (cfg->arena_max_bytes - h->chunks_off) / cfg->chunk_bytes;
}

#define ARENA_MIN (UINT64_C(64) << 20)

/*
 * Sizes the file and maps it. Where the address space will not take the
 * size asked for (valgrind's, or a ulimit -v), a smaller arena is better
 * than none: the size is halved down to ARENA_MIN. Returns 0 or -errno.
 */
static SCOPE_NOINST int size_and_map(struct scope_process *p, struct scope_arena_header *h)
{
	for (;;) {
		uint64_t total = h->chunks_off + h->chunk_capacity * h->chunk_bytes;
		int err;

		p->map_bytes = total;
		if (ftruncate(p->fd, (off_t)total) != 0)
			return -errno;
		p->base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
		if (p->base != MAP_FAILED) {
			/* No read-ahead: the page cache then holds the arena in
			 * single pages, and a call returning in a chunk that left
			 * memory brings back its page, not a large folio around it. */
			madvise(p->base, total, MADV_RANDOM);
			return 0;
		}
		err = -errno;
		if ((err != -ENOMEM && err != -EINVAL) || p->cfg.arena_max_bytes / 2 < ARENA_MIN)
			return err;
		p->cfg.arena_max_bytes /= 2;
		layout(h, &p->cfg);
	}
}

/* The file-size limit (ulimit -f) bounds the arena: sizing the file past
 * it would kill the program with SIGXFSZ. Returns -EFBIG when even the
 * smallest arena is over it. */
static SCOPE_NOINST int within_file_limit(struct scope_config *cfg)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= cfg->arena_max_bytes)
		return 0;
	if (rl.rlim_cur < ARENA_MIN)
		return -EFBIG;
	cfg->arena_max_bytes = rl.rlim_cur;
	return 0;
}

int scope_arena_back(struct scope_process *p, uint64_t off, uint64_t len)
{
	return back(p->fd, off, off + len);
}

/*
 * The tables take 2.8 MiB, of which a process fills a few KiB: backing
 * them whole cost a forked child 0.3 ms in /dev/shm, where fallocate
 * clears the pages. They are backed in at most 64 blocks instead, each
 * the first time something is written into it; two threads may back a
 * block at once, which fallocate allows.
 */
#define TABLE_BLOCKS	64u
#define TABLE_BLOCK_MIN (64u << 10)

static SCOPE_NOINST void tables_init(struct scope_process *p, uint64_t tables_end)
{
	uint64_t block = round_up((tables_end + TABLE_BLOCKS - 1) / TABLE_BLOCKS, PAGE);

	p->table_block = block < TABLE_BLOCK_MIN ? TABLE_BLOCK_MIN : block;
	p->tables_backed = 0;
	memset(p->released, 0, sizeof p->released); /* a new arena: nothing left memory */
}

int scope_arena_back_table(struct scope_process *p, uint64_t off, uint64_t len)
{
	uint64_t block = p->table_block;

	if (off + len > TABLE_BLOCKS * block)
		return -ERANGE;
	for (uint64_t b = off / block; b * block < off + len; b++) {
		uint64_t bit = UINT64_C(1) << b;
		int err;
		if (__atomic_load_n(&p->tables_backed, __ATOMIC_ACQUIRE) & bit)
			continue;
		if ((err = back(p->fd, b * block, (b + 1) * block)) != 0)
			return err;
		__atomic_fetch_or(&p->tables_backed, bit, __ATOMIC_RELEASE);
	}
	return 0;
}

int scope_arena_create(struct scope_process *p)
{
	struct scope_arena_header h = {0};
	int err;

	if (p->cfg.arena_max_bytes < ARENA_MIN)
		p->cfg.arena_max_bytes = ARENA_MIN;
	if (within_file_limit(&p->cfg) != 0) {
		scope_log("the file size limit (ulimit -f) is under the %llu MiB a recording arena "
			  "needs; this process is not profiled",
			  (unsigned long long)(ARENA_MIN >> 20));
		return -EFBIG;
	}
	layout(&h, &p->cfg);
	err = open_arena_file(p);
	if (err) {
		scope_log("cannot create the recording arena in %s: %s; this process is not "
			  "profiled (set SCOPE_ARENA_DIR to a writable folder)",
			  p->cfg.arena_dir, strerror(-err));
		return err;
	}
	/* the task slots are backed a block at a time as tasks begin
	 * (scope_arena_back): a program without tasks does not pay for them */
	tables_init(p, h.tasks_off);
	if ((err = size_and_map(p, &h)) != 0 ||
	    (err = scope_arena_back_table(p, 0, h.cmdline_off)) != 0 ||
	    (err = back(p->fd, h.crash_off, h.chunks_off)) != 0)
		goto fail;
	h.fallocated = h.chunks_off;
	memcpy(p->base, &h, sizeof h);
	p->hdr = (struct scope_arena_header *)p->base;
	p->recs_per_chunk =
		(h.chunk_bytes - sizeof(struct scope_chunk_head)) / sizeof(struct scope_rec);
	return 0;
fail:
	scope_log("cannot make a recording arena of %llu bytes in %s: %s; this process is not "
		  "profiled (a smaller SCOPE_ARENA_MAX, or another SCOPE_ARENA_DIR)",
		  (unsigned long long)p->map_bytes, p->cfg.arena_dir, strerror(-err));
	if (p->base && p->base != MAP_FAILED)
		munmap(p->base, p->map_bytes);
	p->base = NULL;
	scope_fd_close(p->fd);
	unlink(p->arena_path);
	p->fd = -1;
	return err;
}

/* Where to back the file to, for a chunk ending at end: as much again as
 * the chunks have, between the first step and the largest. */
static SCOPE_NOINST uint64_t backing_want(const struct scope_arena_header *h, uint64_t have,
					  uint64_t end)
{
	uint64_t step = have > h->chunks_off ? have - h->chunks_off : 0;

	if (step < BACKING_FIRST)
		step = BACKING_FIRST;
	if (step > BACKING_STEP)
		step = BACKING_STEP;
	return round_up(end > have + step ? end : have + step, h->page_bytes);
}

SCOPE_NOINST uintptr_t scope_arena_resident_end(const struct scope_process *p)
{
	const struct scope_arena_header *h = p->hdr;
	uint64_t n =
		SCOPE_RESIDENT_BASE +
		SCOPE_RESIDENT_PER_LANE * (uint64_t)__atomic_load_n(&h->nlanes, __ATOMIC_RELAXED);

	if (!__atomic_load_n(&h->free_tail, __ATOMIC_RELAXED))
		n = SCOPE_RESIDENT_EARLY;
	else if (n > SCOPE_RESIDENT_CHUNKS)
		n = SCOPE_RESIDENT_CHUNKS;
	return (uintptr_t)p->base + h->chunks_off + n * h->chunk_bytes;
}

SCOPE_NOINST void scope_arena_release(struct scope_process *p, uintptr_t lo, uintptr_t hi)
{
	const struct scope_arena_header *h = p->hdr;
	uintptr_t chunks = (uintptr_t)p->base + h->chunks_off;

	madvise((void *)lo, hi - lo, MADV_DONTNEED);
	for (uint64_t i = (lo - chunks) / h->chunk_bytes;
	     i < SCOPE_RESIDENT_CHUNKS && chunks + i * h->chunk_bytes < hi; i++)
		__atomic_fetch_or(&p->released[i / 64], UINT64_C(1) << (i % 64), __ATOMIC_RELAXED);
}

/* Whether chunk ch of a process left its memory since it last held it. */
static SCOPE_NOINST int was_released(struct scope_process *p, const struct scope_chunk_head *ch)
{
	const struct scope_arena_header *h = p->hdr;
	uint64_t i = (uint64_t)((const char *)ch - (p->base + h->chunks_off)) / h->chunk_bytes;
	uint64_t bit = UINT64_C(1) << (i % 64);

	return i >= SCOPE_RESIDENT_CHUNKS ||
	       (__atomic_fetch_and(&p->released[i / 64], ~bit, __ATOMIC_RELAXED) & bit);
}

/*
 * A chunk this process has not mapped, about to be written whole: its
 * pages mapped in one system call. A write fault a page cost 14 us on a
 * file in /dev/shm in the virtual machines measured here, against 7 a page
 * populated, and a program's first 16 MiB of chunks are 4,096 pages.
 * Advice only: a kernel without it (before 5.14) leaves them to fault.
 */
static SCOPE_NOINST struct scope_chunk_head *mapped(struct scope_chunk_head *ch, uint64_t bytes)
{
	(void)madvise(ch, bytes, MADV_POPULATE_WRITE);
	return ch;
}

/* A chunk the run's writer freed, zeroed and backed; NULL when none waits.
 * The slot is read before the compare-and-swap that takes it: the writer
 * fills a slot again only after free_head has passed it. */
static SCOPE_NOINST struct scope_chunk_head *reused_chunk(struct scope_process *p)
{
	struct scope_arena_header *h = p->hdr;
	uint64_t head = __atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE);

	while (head != __atomic_load_n(&h->free_tail, __ATOMIC_ACQUIRE)) {
		uint32_t idx =
			__atomic_load_n(&h->free_ring[head % SCOPE_FREE_RING], __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(&h->free_head, &head, head + 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			if (idx >= __atomic_load_n(&h->nchunks, __ATOMIC_RELAXED))
				return NULL; /* not one of ours: a forged ring */
			return (struct scope_chunk_head *)(p->base + h->chunks_off +
							   (uint64_t)idx * h->chunk_bytes);
		}
	}
	return NULL;
}

struct scope_chunk_head *scope_arena_chunk(struct scope_process *p)
{
	struct scope_arena_header *h = p->hdr;
	struct scope_chunk_head *reused = reused_chunk(p);
	uint64_t idx, end, have;

	if (reused)
		return was_released(p, reused) ? mapped(reused, h->chunk_bytes) : reused;
	idx = __atomic_fetch_add(&h->nchunks, 1, __ATOMIC_RELAXED);
	if (idx >= h->chunk_capacity)
		return NULL;
	end = h->chunks_off + (idx + 1) * h->chunk_bytes;
	have = __atomic_load_n(&h->fallocated, __ATOMIC_ACQUIRE);
	while (have < end) {
		uint64_t want = backing_want(h, have, end);
		if (want > p->map_bytes)
			want = p->map_bytes;
		/* On a nearly full disk, back just this chunk. */
		if (back(p->fd, have, want) != 0 && back(p->fd, have, want = end) != 0)
			return NULL;
		/* Another thread may have backed more meanwhile; keep the larger. */
		if (__atomic_compare_exchange_n(&h->fallocated, &have, want, 0, __ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			have = want;
	}
	return mapped((struct scope_chunk_head *)(p->base + h->chunks_off + idx * h->chunk_bytes),
		      h->chunk_bytes);
}

int scope_arena_lane(struct scope_process *p, int32_t parent)
{
	struct scope_arena_header *h = p->hdr;
	uint32_t lane = __atomic_load_n(&h->nlanes, __ATOMIC_RELAXED);

	(void)parent;
	/* Readers take every slot below nlanes, and reading a page that is
	 * not backed is a SIGBUS on a full tmpfs too: the slot is backed
	 * before nlanes passes it. */
	do {
		if (lane >= h->lane_capacity ||
		    scope_arena_back_table(
			    p, h->lanes_off + (uint64_t)lane * sizeof(struct scope_lane),
			    sizeof(struct scope_lane)) != 0)
			return -1;
	} while (!__atomic_compare_exchange_n(&h->nlanes, &lane, lane + 1, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return (int)lane;
}

void scope_arena_append_module(struct scope_process *p, const char *line, size_t len)
{
	struct scope_arena_header *h = p->hdr;
	uint64_t at = __atomic_load_n(&h->modules_len, __ATOMIC_RELAXED);

	/* As for the lanes: the bytes are backed before modules_len passes
	 * them. Past the area's end the length still grows, which tells the
	 * writer that lines were cut. */
	do {
		if (at + len <= h->modules_cap &&
		    scope_arena_back_table(p, h->modules_off + at, len) != 0)
			return;
	} while (!__atomic_compare_exchange_n(&h->modules_len, &at, at + len, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	if (at + len <= h->modules_cap)
		memcpy(p->base + h->modules_off + at, line, len);
}

void scope_arena_lost(struct scope_process *p, enum scope_lost_cause why)
{
	__atomic_fetch_add(&p->hdr->lost[why], 1, __ATOMIC_RELAXED);
}
