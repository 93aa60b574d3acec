/* SPDX-License-Identifier: MIT */
/* Consuming a running process's full chunks: copied to the store, then freed for reuse. */
#ifndef SCOPE_WRITER_TAIL_H
#define SCOPE_WRITER_TAIL_H

#include <stdint.h>

struct tail;

/* Starts consuming the arena at path, whose process records into it now.
 * Returns NULL (after one line on stderr) when it cannot be read: the
 * arena is then written at the end, as a whole. */
struct tail *tail_open(const char *path);

/* Consumes the chunks sealed since the poll before this one, and frees
 * those whose calls have all returned (nothing once the process has
 * stopped recording). Returns 1, or 0 once the process is gone without
 * handing the arena over. */
int tail_poll(struct tail *t);

/* Stops consuming: the store and the arena's record of it stay, for
 * whichever writer writes the profile. */
void tail_close(struct tail *t);

const char *tail_path(const struct tail *t);

/* The grouping of the process's calls done while it ran (alongside.h),
 * NULL when none was: the caller's now, to finish and free. */
struct alongside;
struct alongside *tail_take_grouping(struct tail *t);

/* Chunks copied to the store and chunks freed so far. */
uint64_t tail_stored(const struct tail *t);
uint64_t tail_freed(const struct tail *t);

#endif
