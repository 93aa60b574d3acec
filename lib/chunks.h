/* SPDX-License-Identifier: MIT */
/* Column chunks deflated on every core while the caller goes on, written in the order given. */
#ifndef SCOPE_LIB_CHUNKS_H
#define SCOPE_LIB_CHUNKS_H

#include <stdint.h>

#include <hdf5.h>

struct columns;

/*
 * Hands one chunk of the deflated dataset d to the columns' workers: the
 * chunk at row offset, of elems rows, its first have of them (width bytes
 * each) copied from rows now, the rest zero. Chunks are written to the
 * file by the caller's thread, in the order they were given, when the
 * pool has no room for another and at chunks_drain; an all-zero chunk is
 * not written (it reads as the fill value). The workers start at the
 * first chunk. Returns 0, or -1 when a chunk given before could not be
 * written or memory ran out.
 */
int chunks_put(struct columns *c, hid_t d, uint64_t offset, const void *rows, uint64_t have,
	       uint64_t elems, int width);

/* Writes every chunk given so far: before a dataset closes. 0 or -1. */
int chunks_drain(struct columns *c);

/* Stops the workers and lets the pool go; a chunk not drained (after a
 * failure) is dropped. */
void chunks_stop(struct columns *c);

#endif
