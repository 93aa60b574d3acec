/* SPDX-License-Identifier: MIT */
/* Exact aggregates in the arena: the calls a filter or a time threshold kept out of the events. */
#ifndef SCOPE_AGGREGATE_H
#define SCOPE_AGGREGATE_H

#include <scope/arena.h>

/*
 * With filters (SCOPE_ONLY, SCOPE_NOT, SCOPE_DEPTH, SCOPE_MIN_DURATION),
 * a call that is not stored as a record is still counted, per thread lane
 * and function, and the sums land in the arena as SCOPE_AGG_RECS
 * consecutive records of one chunk (times in clock ticks):
 *
 *   rec 0  fn = SCOPE_REC_AGG    start = function address  end = calls
 *   rec 1  fn = SCOPE_REC_AGG_2  start = total             end = total_all
 *   rec 2  fn = SCOPE_REC_AGG_2  start = self (signed)     end = min
 *   rec 3  fn = SCOPE_REC_AGG_2  start = max               end = hidden
 *   rec 4  fn = SCOPE_REC_AGG_2  start = lane              end = 0
 *
 * total counts the calls made while no call of the function was open on
 * the lane, total_all every call; self is the calls' time less that of
 * every call they made; hidden is time the function's stored calls spent
 * in calls that were not stored, which the writer takes off their self
 * time. Rec 0's fn is written last: a reader that finds it finds the rest.
 * A lane's sums may come in several groups (a full table is emptied into
 * the arena as the program runs): they add up. Both markers are side
 * records (scope_rec_is_side): a reader that knows neither skips them.
 */
#define SCOPE_REC_AGG	UINT64_C(0x8)
#define SCOPE_REC_AGG_2 UINT64_C(0x9)
#define SCOPE_AGG_RECS	5

static inline int scope_rec_is_agg(const struct scope_rec *r)
{
	return (r->fn & SCOPE_REC_ADDR_MASK) == SCOPE_REC_AGG;
}

#endif
