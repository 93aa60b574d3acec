/* SPDX-License-Identifier: MIT */
/* Task lanes: logical tasks that run on one thread after another, and which of them a thread runs.
 */
#define _GNU_SOURCE
#include "record.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

static struct scope_task *task_slot(uint32_t lane)
{
	return (struct scope_task *)(scope_proc.base + scope_proc.hdr->tasks_off) + (lane - 1);
}

/*
 * The program's task ids, to their lanes: an open-addressed table mapped
 * when the first task begins, as large as the tasks area, so it never
 * fills. A key is claimed by compare-and-swap; a task id begun again (a
 * program reusing ids) points at its new lane.
 */
struct id_entry {
	uint64_t id1; /* id + 1; 0 = free (an id of UINT64_MAX is not mapped) */
	uint32_t lane;
	uint32_t reserved;
};

static struct id_entry *ids;
static uint64_t ids_mask;

static SCOPE_NOINST struct id_entry *id_table(void)
{
	struct id_entry *t = __atomic_load_n(&ids, __ATOMIC_ACQUIRE), *fresh;
	uint64_t slots;

	if (t || !scope_proc.hdr)
		return t;
	slots = (uint64_t)scope_proc.hdr->tasks_cap * 2;
	fresh = mmap(NULL, slots * sizeof *fresh, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fresh == MAP_FAILED)
		return NULL;
	ids_mask = slots - 1;
	if (!__atomic_compare_exchange_n(&ids, &t, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(fresh, slots * sizeof *fresh);
		return t;
	}
	return fresh;
}

/* The entry of id, claimed when add and it is new; NULL when absent. */
static SCOPE_NOINST struct id_entry *id_entry(uint64_t id, int add)
{
	struct id_entry *t = id_table();
	uint64_t key = id + 1, h = key * UINT64_C(0x9e3779b97f4a7c15);

	if (!t || !key)
		return NULL;
	for (uint64_t i = (h >> 20) & ids_mask;; i = (i + 1) & ids_mask) {
		uint64_t have = __atomic_load_n(&t[i].id1, __ATOMIC_ACQUIRE);
		if (have == key)
			return &t[i];
		if (have)
			continue;
		if (!add)
			return NULL;
		if (__atomic_compare_exchange_n(&t[i].id1, &have, key, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    have == key)
			return &t[i];
	}
}

/*
 * The task slots are backed by disk a block at a time, by the thread that
 * first claims a slot of the block; one that claims another slot of it
 * meanwhile waits for it. A block that cannot be backed (a full disk)
 * takes no task: a slot written there could raise SIGBUS.
 */
#define TASK_BLOCK 1024u
enum { BLOCK_NONE, BLOCK_BACKING, BLOCK_BACKED, BLOCK_FAILED };
static uint8_t blocks[256];

static SCOPE_NOINST int slot_backed(struct scope_arena_header *h, uint32_t at)
{
	uint32_t b = at / TASK_BLOCK;
	uint8_t state = BLOCK_NONE;

	if (b >= sizeof blocks)
		return 0;
	if (__atomic_compare_exchange_n(&blocks[b], &state, BLOCK_BACKING, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		int rc = scope_arena_back(&scope_proc,
					  h->tasks_off + (uint64_t)b * TASK_BLOCK *
								 sizeof(struct scope_task),
					  (uint64_t)TASK_BLOCK * sizeof(struct scope_task));
		__atomic_store_n(&blocks[b], rc == 0 ? BLOCK_BACKED : BLOCK_FAILED,
				 __ATOMIC_RELEASE);
		return rc == 0;
	}
	while (state == BLOCK_BACKING) {
		sched_yield();
		state = __atomic_load_n(&blocks[b], __ATOMIC_ACQUIRE);
	}
	return state == BLOCK_BACKED;
}

uint32_t scope_task_new(uint64_t id, const char *name)
{
	struct scope_arena_header *h = scope_proc.hdr;
	uint32_t lane, at;
	struct scope_task *s;

	if (!h || scope_stopped())
		return 0;
	at = __atomic_fetch_add(&h->ntasks, 1, __ATOMIC_RELAXED);
	if (at >= h->tasks_cap || !slot_backed(h, at))
		return 0;
	lane = at + 1;
	s = task_slot(lane);
	s->id = id;
	s->name = name ? scope_name_slot(name, SCOPE_NAME_TASK) : UINT32_MAX;
	s->parent = scope_thread_lane();
	s->start = scope_now();
	__atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
	return lane;
}

void scope_task_ended(uint32_t lane)
{
	if (lane && scope_proc.hdr && lane <= scope_proc.hdr->tasks_cap)
		__atomic_store_n(&task_slot(lane)->end, scope_now(), __ATOMIC_RELEASE);
}

uint32_t scope_task_lane(uint64_t id)
{
	struct id_entry *e = id_entry(id, 0);
	return e ? __atomic_load_n(&e->lane, __ATOMIC_ACQUIRE) : 0;
}

void scope_task_forget(void)
{
	/* the child's table starts empty; the parent's mapping stays the
	 * parent's; its new arena has no task slot backed yet */
	ids = NULL;
	memset(blocks, 0, sizeof blocks);
}

SCOPE_EXPORT void scope_task_begin(uint64_t task_id, const char *name)
{
	struct id_entry *e;
	uint32_t lane;

	if (!scope_proc.initialized)
		scope_init();
	lane = scope_task_new(task_id, name);
	if (!lane || !(e = id_entry(task_id, 1)))
		return;
	__atomic_store_n(&e->lane, lane, __ATOMIC_RELEASE);
	scope_task_run(lane);
}

SCOPE_EXPORT void scope_task_switch(uint64_t task_id)
{
	scope_task_run(task_id ? scope_task_lane(task_id) : 0);
}

SCOPE_EXPORT void scope_task_end(uint64_t task_id)
{
	uint32_t lane = scope_task_lane(task_id);

	if (!lane)
		return;
	scope_task_ended(lane);
	if (scope_tls.task == lane)
		scope_task_run(0);
}
