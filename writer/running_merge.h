/* SPDX-License-Identifier: MIT */
/* Grouping a running process of several threads: its lanes merged in start order as their chunks
 * are stored. */
#ifndef SCOPE_WRITER_RUNNING_MERGE_H
#define SCOPE_WRITER_RUNNING_MERGE_H

#include "collect.h"
#include "lane_heap.h"

#include <pthread.h>

/* Lanes read so; a process with more is grouped at its end. */
#define RUNNING_MERGE_LANES 16

struct running_merge;

/* Reads the copy of chunk (lane, seq) in store slot at of store_fd (chunks
 * of cb bytes) into buf, under lock, which the taking thread holds while
 * it copies a chunk over its earlier copy. Returns the chunk's records, or
 * NULL when the copy is not that chunk's. */
const struct scope_rec *store_chunk_read(int store_fd, pthread_mutex_t *lock, uint64_t cb,
					 uint32_t lane, uint64_t seq, uint64_t at, void *buf);

/* Reads the lanes of arena a (the run's writer's mapping) into gr, which
 * it gives a state per lane, from the chunks' copies in store_fd, read
 * under copy_lock. NULL without memory. */
struct running_merge *running_merge_open(struct grouping *gr, const struct arena *a,
					 const struct tick_clock *c, int store_fd,
					 pthread_mutex_t *copy_lock);
void running_merge_free(struct running_merge *m);

/* Chunk (lane, seq) is in store slot at. Returns 0, -1 without memory, -2
 * for a lane past RUNNING_MERGE_LANES. */
int running_merge_note(struct running_merge *m, uint32_t lane, uint32_t seq, uint64_t at);
/* The same, every call in it returned: the calls of it that waited are
 * ended, and its lane read on. */
int running_merge_settled(struct running_merge *m, uint32_t lane, uint32_t seq, uint64_t at);
/* Groups every call the end's merged pass would take next, as far as the
 * chunks stored tell. Returns 0, -1 on failure, -2 for what only the end
 * can group (then nothing more may be read here). */
int running_merge_go(struct running_merge *m);

/* Where each lane's reading stopped, into pos[0, RUNNING_MERGE_LANES);
 * returns RUNNING_MERGE_LANES. */
uint32_t running_merge_positions(const struct running_merge *m, struct lane_pos *pos);

#endif
