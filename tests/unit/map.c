/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/map.c: keys keep their values through growth, new ones are told apart, and
 * string keys are FNV-1a. */
#include "map.h"
#include "unit.h"

#include <string.h>

/* One key: new the first time, with fresh in its slot; the same slot after. */
static void one_key(void)
{
	struct u64map m = {0};
	uint32_t *v;
	int added = -1;

	v = map_slot(&m, 42, 7, &added);
	EXPECT_I64(1, v != NULL, "map_slot(42) of an empty map: a slot");
	EXPECT_I64(1, added, "map_slot(42) of an empty map: added");
	EXPECT_U64(7, v ? *v : 0, "map_slot(42, fresh 7): its value");
	if (v)
		*v = 9;
	v = map_slot(&m, 42, 8, &added);
	EXPECT_I64(0, added, "map_slot(42) again: added");
	EXPECT_U64(9, v ? *v : 0, "map_slot(42) again: the value stored through the slot");
	EXPECT_U64(1, m.n, "keys after one key twice");
	map_free(&m);
	EXPECT_I64(1, m.keys == NULL && m.vals == NULL && m.cap == 0 && m.n == 0,
		   "map_free: the map is empty again");
}

/* 0 and UINT64_MAX - 1 are keys like others: keys are stored plus one. */
static void edge_keys(void)
{
	static const uint64_t keys[] = {0, 1, UINT64_MAX - 1, UINT64_C(1) << 63};
	struct u64map m = {0};
	int added;

	for (uint32_t i = 0; i < 4; i++) {
		uint32_t *v = map_slot(&m, keys[i], i, &added);
		EXPECT_I64(1, added, "map_slot(%llu) first: added", (unsigned long long)keys[i]);
		EXPECT_U64(i, v ? *v : UINT32_MAX, "map_slot(%llu) first: its value",
			   (unsigned long long)keys[i]);
	}
	for (uint32_t i = 0; i < 4; i++) {
		uint32_t *v = map_slot(&m, keys[i], 99, &added);
		EXPECT_I64(0, added, "map_slot(%llu) again: added", (unsigned long long)keys[i]);
		EXPECT_U64(i, v ? *v : UINT32_MAX, "map_slot(%llu) again: its value",
			   (unsigned long long)keys[i]);
	}
	map_free(&m);
}

/*
 * Ids in order of first sight, as the writer's region map and the merge's
 * use it (fresh is the map's own n): 100000 neighbouring keys and as many
 * spread ones, each seen three times, through every growth from 1024 slots.
 */
static void ids_through_growth(void)
{
	struct u64map m = {0};
	uint64_t wrong = 0, wrong_added = 0;
	const uint64_t n = 100000;

	for (int pass = 0; pass < 3; pass++)
		for (uint64_t i = 0; i < 2 * n; i++) {
			uint64_t key =
				i < n ? 0x400000 + 4 * i : (i - n) * UINT64_C(0x9e3779b97f4a7c15);
			int added;
			uint32_t *v = map_slot(&m, key, (uint32_t)m.n, &added);
			wrong += !v || *v != i;
			wrong_added += added != (pass == 0);
		}
	EXPECT_U64(0, wrong, "keys whose id is not their order of first sight");
	EXPECT_U64(0, wrong_added, "keys told new when seen before, or old when first seen");
	EXPECT_U64(2 * n, m.n, "keys in the map");
	EXPECT_I64(1, m.cap >= 2 * m.n && (m.cap & (m.cap - 1)) == 0,
		   "capacity %zu: a power of two, at most half full", m.cap);
	map_free(&m);
}

/* FNV-1a 64, the published values; and never UINT64_MAX, which no key can be. */
static void strings(void)
{
	EXPECT_U64(UINT64_C(0xcbf29ce484222325), map_hash_str(""), "map_hash_str(\"\")");
	EXPECT_U64(UINT64_C(0xaf63dc4c8601ec8c), map_hash_str("a"), "map_hash_str(\"a\")");
	EXPECT_U64(UINT64_C(0x85944171f73967e8), map_hash_str("foobar"),
		   "map_hash_str(\"foobar\")");
	EXPECT_I64(1, map_hash_str("main") != map_hash_str("mainx"),
		   "map_hash_str(\"main\") and (\"mainx\") differ");
}

void unit_map(void)
{
	one_key();
	edge_keys();
	ids_through_growth();
	strings();
}
