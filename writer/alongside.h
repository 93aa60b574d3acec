/* SPDX-License-Identifier: MIT */
/* Grouping a running process's calls as its chunks are taken, so that little is left at its end. */
#ifndef SCOPE_WRITER_ALONGSIDE_H
#define SCOPE_WRITER_ALONGSIDE_H

#include "writer.h"

#include <scope/arena.h>

struct alongside;

/*
 * Starts grouping the calls of the arena at path (mapped at h, size bytes;
 * fd and store_fd its and its store's descriptors, which stay the
 * caller's), whose chunks the run's writer copies to the store as the
 * process runs: those already there are read first. NULL when it cannot
 * start: the process is then grouped at its end, as a whole.
 */
struct alongside *alongside_open(const char *path, int fd, int store_fd,
				 struct scope_arena_header *h, uint64_t size);

/* The chunk (lane, seq) was copied to store slot at: its calls are read,
 * in their lane's order. */
void alongside_stored(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at);
/* The chunk (lane, seq) was copied to slot at again, every call in it
 * returned: the calls of it that were open are ended. */
void alongside_settled(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at);
/* Around copying a chunk over its earlier copy in the store, which the
 * grouping may be reading. */
void alongside_copy_begin(struct alongside *g);
void alongside_copy_end(struct alongside *g);

/* The calls grouped, once paused (the grouping's thread counts them as
 * it goes); 0 while it runs and once it stopped. */
uint64_t alongside_calls(const struct alongside *g);

/* Stops its thread, before the arena's mapping and store_fd go: what it
 * had not read yet is read by alongside_collect. */
void alongside_pause(struct alongside *g);

/* Whether to start grouping an arena (header h) whose copied chunks hold
 * calls records: past a window of them and 10 ms of the process's run,
 * when this writer groups fewer than a few already and
 * SCOPE_WRITER_ALONGSIDE is not 0. */
int alongside_due(const struct scope_arena_header *h, uint64_t calls);

/* Whether it still groups (it stops at what only the end can group: a
 * second thread, a task, counters). */
int alongside_live(struct alongside *g);

/*
 * The process has ended and handed its arena over, opened as a: what is
 * left is read and p filled, as collect would. Returns 0; -1 on failure
 * (noted with writer_fail); -2 when it cannot, and collect must.
 */
int alongside_collect(struct alongside *g, const struct arena *a, const struct tick_clock *c,
		      const struct module *mods, size_t nmods, uint64_t window, struct profile *p);

void alongside_free(struct alongside *g);

#endif
