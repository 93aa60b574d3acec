/* SPDX-License-Identifier: MIT */
/* Samples in the arena: where a thread was when its CPU-time timer fired (SCOPE_SAMPLE). */
#ifndef SCOPE_SAMPLE_H
#define SCOPE_SAMPLE_H

#include <scope/aggregate.h>

/*
 * A sample is 1 + (n + 1) / 2 consecutive records of one chunk, n being
 * the number of code addresses of the interrupted stack, innermost first
 * (the interrupted instruction, then return addresses):
 *
 *   rec 0  fn = SCOPE_REC_SAMPLE | n << 48   start = clock ticks
 *                                            end = address of the innermost open
 *                                                  recorded call's function, or 0
 *   rec k  fn = SCOPE_REC_SAMPLE_2           start, end = addresses 2k-2 and 2k-1
 *
 * Rec 0's fn is written last. Its lane is the chunk's.
 */
#define SCOPE_REC_SAMPLE	UINT64_C(0xa)
#define SCOPE_REC_SAMPLE_2	UINT64_C(0xb)
#define SCOPE_SAMPLE_MAX_FRAMES 32

static inline int scope_rec_is_sample(const struct scope_rec *r)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) == SCOPE_REC_SAMPLE;
}

static inline uint32_t scope_sample_frames(const struct scope_rec *r)
{
	return (uint32_t)(r->fn >> SCOPE_REC_ADDR_BITS) & 0xffff;
}

#endif
