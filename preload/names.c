/* SPDX-License-Identifier: MIT */
/* The names a program gives its regions and tasks, each kept once in the arena's names area. */
#define _GNU_SOURCE
#include "state.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

/*
 * An open-addressed table in this process's memory finds a name's slot:
 * each entry holds a hash of the name (with its kind) and 1 + the slot. A
 * reader loads the hash (acquire) and then the slot, which the adding
 * thread stored before it; adding takes a lock, which the thread holding
 * it never waits for again (a signal handler naming a region while its
 * thread adds one gets no slot: that region is not recorded).
 */
#define TABLE_SLOTS 8192u /* a power of two, twice the names area's slots */

struct entry {
	uint32_t hash;
	uint32_t slot1;
};

static struct entry table[TABLE_SLOTS];
static int lock_owner; /* the thread id holding the lock, 0 when free */

#define TEXT_MAX (sizeof(((struct scope_name *)0)->text) - 1)

/* FNV-1a of the first TEXT_MAX bytes of name and its kind; never 0. */
static SCOPE_NOINST uint32_t hash_of(const char *name, size_t len, uint32_t kind)
{
	uint32_t h = 2166136261u ^ kind;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h ? h : 1;
}

static SCOPE_NOINST struct scope_name *name_at(uint32_t slot)
{
	return (struct scope_name *)(scope_proc.base + scope_proc.hdr->names_off) + slot;
}

static SCOPE_NOINST int same(uint32_t slot, const char *name, size_t len, uint32_t kind)
{
	const struct scope_name *n = name_at(slot);
	return n->kind == kind && strncmp(n->text, name, len) == 0 && n->text[len] == '\0';
}

/* The slot of name, or UINT32_MAX with *at the entry where it would go. */
static SCOPE_NOINST uint32_t find(const char *name, size_t len, uint32_t kind, uint32_t h,
				  uint32_t *at)
{
	for (uint32_t i = h & (TABLE_SLOTS - 1);; i = (i + 1) & (TABLE_SLOTS - 1)) {
		uint32_t eh = __atomic_load_n(&table[i].hash, __ATOMIC_ACQUIRE);
		if (!eh) {
			*at = i;
			return UINT32_MAX;
		}
		if (eh == h && same(table[i].slot1 - 1, name, len, kind))
			return table[i].slot1 - 1;
	}
}

static SCOPE_NOINST uint32_t add(const char *name, size_t len, uint32_t kind, uint32_t h)
{
	struct scope_arena_header *hdr = scope_proc.hdr;
	int self = (int)gettid(), free_ = 0;
	uint32_t slot, at;
	struct scope_name *n;

	if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == self)
		return UINT32_MAX;
	while (!__atomic_compare_exchange_n(&lock_owner, &free_, self, 0, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		free_ = 0;
		sched_yield();
	}
	slot = find(name, len, kind, h, &at);
	if (slot == UINT32_MAX && hdr->nnames < hdr->names_cap &&
	    scope_arena_back_table(&scope_proc, hdr->names_off + (uint64_t)hdr->nnames * sizeof *n,
				   sizeof *n) == 0) {
		slot = hdr->nnames;
		n = name_at(slot);
		memcpy(n->text, name, len);
		n->text[len] = '\0';
		n->kind = kind;
		__atomic_store_n(&n->used, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&hdr->nnames, slot + 1, __ATOMIC_RELEASE);
		table[at].slot1 = slot + 1;
		__atomic_store_n(&table[at].hash, h, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lock_owner, 0, __ATOMIC_RELEASE);
	return slot;
}

uint32_t scope_name_slot(const char *name, enum scope_name_kind kind)
{
	size_t len;
	uint32_t h, slot, at;

	if (!scope_proc.hdr || scope_stopped())
		return UINT32_MAX;
	if (!name)
		name = "";
	len = strnlen(name, TEXT_MAX);
	h = hash_of(name, len, kind);
	slot = find(name, len, kind, h, &at);
	return slot != UINT32_MAX ? slot : add(name, len, kind, h);
}

/* A forked child or a new image has a new arena, with no names yet. */
void scope_names_forget(void)
{
	memset(table, 0, sizeof table);
	lock_owner = 0;
}
