/* SPDX-License-Identifier: MIT */
/* Grouping a running process of several threads: its lanes merged in start order as their chunks
 * are stored. */
#define _GNU_SOURCE
#include "running_merge.h"

#include "grow.h"

#include <scope/aggregate.h>
#include <scope/sample.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The end's merged pass (start_order.c) takes, at each step, the lane whose
 * next call starts first. While the process runs, a lane's next call may
 * not be known yet: its chunk is not in the store, or a record in it is
 * still being written. A call is then taken only if it starts before that
 * lane's bound, the start of the lane's last call read (a lane's calls
 * come in start order; one that does not stops this grouping), or, before
 * any, the lane's own start. Otherwise the merge waits for the lane, so
 * that it takes the calls in the end's order, one by one.
 *
 * Only what a lane keeps to itself is read here: calls and their bytes.
 * Samples, sums of filtered calls, tasks and counters make rows whose order
 * is the end's alone; a process with them is grouped at its end.
 */
enum { NEED, CALL, BLOCKED };

struct lane_read {
	uint64_t *at; /* per seq: its store slot + 1; 0 before it is stored */
	uint64_t nat;
	uint64_t seq; /* the next record: slot of chunk seq */
	uint32_t slot;
	int loaded; /* buf holds chunk seq */
	int state;
	struct lane_key key; /* of the call at slot, when CALL */
	uint64_t last_start; /* tick of the last call read, 0 before one */
	unsigned char *buf;
};

struct running_merge {
	struct grouping *gr;
	const struct arena *a;
	const struct tick_clock *clock;
	int store_fd;
	pthread_mutex_t *copy_lock;
	struct lane_read lane[RUNNING_MERGE_LANES];
	unsigned char *scratch; /* a settled chunk's copy */
};

struct running_merge *running_merge_open(struct grouping *gr, const struct arena *a,
					 const struct tick_clock *c, int store_fd,
					 pthread_mutex_t *copy_lock)
{
	struct running_merge *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	*m = (struct running_merge){
		.gr = gr, .a = a, .clock = c, .store_fd = store_fd, .copy_lock = copy_lock};
	gr->lanes = calloc(RUNNING_MERGE_LANES + 1, sizeof *gr->lanes);
	gr->lanes_cap = gr->lanes ? RUNNING_MERGE_LANES + 1 : 0;
	m->scratch = malloc(a->hdr->chunk_bytes);
	for (int i = 0; m->scratch && i < RUNNING_MERGE_LANES; i++)
		if (!(m->lane[i].buf = malloc(a->hdr->chunk_bytes)))
			break;
	if (!gr->lanes || !m->scratch || !m->lane[RUNNING_MERGE_LANES - 1].buf) {
		running_merge_free(m);
		return NULL;
	}
	return m;
}

void running_merge_free(struct running_merge *m)
{
	if (!m)
		return;
	for (int i = 0; i < RUNNING_MERGE_LANES; i++) {
		free(m->lane[i].at);
		free(m->lane[i].buf);
	}
	free(m->scratch);
	free(m);
}

const struct scope_rec *store_chunk_read(int store_fd, pthread_mutex_t *lock, uint64_t cb,
					 uint32_t lane, uint64_t seq, uint64_t at, void *buf)
{
	const struct scope_chunk_head *ch = buf;
	ssize_t n;

	pthread_mutex_lock(lock);
	n = pread(store_fd, buf, cb, (off_t)(at * cb));
	pthread_mutex_unlock(lock);
	if (n != (ssize_t)cb || ch->magic != SCOPE_CHUNK_MAGIC || ch->lane != lane ||
	    ch->seq != seq)
		return NULL;
	return (const struct scope_rec *)(ch + 1);
}

static int read_copy(struct running_merge *m, uint32_t lane, uint64_t seq, uint64_t at,
		     unsigned char *buf)
{
	return store_chunk_read(m->store_fd, m->copy_lock, m->a->hdr->chunk_bytes, lane, seq, at,
				buf)
		       ? 0
		       : -1;
}

static const struct scope_rec *recs(const unsigned char *buf)
{
	return (const struct scope_rec *)(buf + sizeof(struct scope_chunk_head));
}

/* A side record the merge may read as it passes: one of its lane's alone. */
static int lane_own(const struct scope_rec *r)
{
	return !rec_is_task(r) && !scope_rec_is_agg(r) && !scope_rec_is_sample(r) &&
	       (r->fn & SCOPE_REC_ADDR_MASK) < SCOPE_REC_COUNTERS;
}

/* Moves lane's reading to its next call (CALL), or to where it must wait
 * (NEED, BLOCKED). Returns 0, -1 on failure, -2 for what only the end can
 * group. */
static int advance(struct running_merge *m, uint32_t lane)
{
	struct lane_read *l = &m->lane[lane];
	uint32_t n = m->a->recs_per_chunk;

	for (;;) {
		const struct scope_rec *r;
		if (!l->loaded) {
			if (l->seq >= l->nat || !l->at[l->seq]) {
				l->state = NEED;
				return 0;
			}
			if (read_copy(m, lane, l->seq, l->at[l->seq] - 1, l->buf) != 0)
				return -1;
			l->loaded = 1;
		}
		r = recs(l->buf);
		for (; l->slot < n && r[l->slot].fn; l->slot++) {
			const struct scope_rec *x = &r[l->slot];
			uint64_t code = x->fn & SCOPE_REC_ADDR_MASK;
			if (code < SCOPE_REC_NAMED && code != 0) {
				if (!lane_own(x))
					return -2;
				if (group_side(m->gr, r, l->slot, n, lane) != 0)
					return -1;
				continue;
			}
			if (x->start == 0) {
				l->state = BLOCKED; /* read on once its chunk has settled */
				return 0;
			}
			if (code == 0)
				continue;
			if (x->start < l->last_start)
				return -2; /* not in start order (a signal handler's) */
			l->last_start = x->start;
			l->key = (struct lane_key){tick_ns(m->clock, x->start), lane};
			l->state = CALL;
			return 0;
		}
		l->seq++;
		l->slot = 0;
		l->loaded = 0;
	}
}

/* The lanes the process has, at most RUNNING_MERGE_LANES; 0 past those. */
static uint32_t lanes_now(const struct running_merge *m)
{
	uint32_t n = __atomic_load_n(&m->a->hdr->nlanes, __ATOMIC_ACQUIRE);
	if (n > m->a->hdr->lane_capacity)
		n = m->a->hdr->lane_capacity;
	return n > RUNNING_MERGE_LANES ? 0 : n;
}

/* What a call of lane, not read yet, starts no earlier than. */
static struct lane_key bound(const struct running_merge *m, uint32_t lane)
{
	const struct scope_lane *lanes =
		(const void *)((const char *)m->a->hdr + m->a->hdr->lanes_off);
	const struct lane_read *l = &m->lane[lane];
	uint64_t start = 0;

	if (l->last_start)
		start = l->last_start;
	else if (__atomic_load_n(&lanes[lane].used, __ATOMIC_ACQUIRE))
		start = lanes[lane].start;
	return (struct lane_key){start ? tick_ns(m->clock, start) : 0, lane};
}

/* Takes calls while one comes first for sure. */
static int take(struct running_merge *m)
{
	for (;;) {
		uint32_t n = lanes_now(m), best = UINT32_MAX;
		struct lane_read *l;
		int rc;
		if (!n)
			return -2; /* more lanes than this merge reads */
		for (uint32_t k = 0; k < n; k++)
			if (m->lane[k].state == CALL &&
			    (best == UINT32_MAX ||
			     lane_before(&m->lane[k].key, &m->lane[best].key)))
				best = k;
		if (best == UINT32_MAX)
			return 0;
		for (uint32_t k = 0; k < n; k++) {
			struct lane_key b;
			if (m->lane[k].state == CALL)
				continue;
			b = bound(m, k);
			if (!lane_before(&m->lane[best].key, &b))
				return 0; /* lane k may have a call before it */
		}
		l = &m->lane[best];
		rc = group_call_running(m->gr, &recs(l->buf)[l->slot], best, l->seq, l->slot);
		if (rc != 0)
			return rc;
		l->slot++;
		if ((rc = advance(m, best)) != 0)
			return rc;
	}
}

int running_merge_go(struct running_merge *m)
{
	for (uint32_t k = 0; k < RUNNING_MERGE_LANES; k++) {
		struct lane_read *l = &m->lane[k];
		int rc;
		if (l->state == NEED && l->seq < l->nat && l->at[l->seq] &&
		    (rc = advance(m, k)) != 0)
			return rc;
	}
	return take(m);
}

int running_merge_note(struct running_merge *m, uint32_t lane, uint32_t seq, uint64_t at)
{
	struct lane_read *l;

	if (lane >= RUNNING_MERGE_LANES)
		return -2;
	l = &m->lane[lane];
	if (scope_grow_zeroed((void **)&l->at, &l->nat, (uint64_t)seq + 1, sizeof *l->at) != 0)
		return -1;
	l->at[seq] = at + 1;
	return 0;
}

int running_merge_settled(struct running_merge *m, uint32_t lane, uint32_t seq, uint64_t at)
{
	struct grouping *gr = m->gr;
	struct lane_read *l;
	uint64_t kept = 0;
	int rc;

	if ((rc = running_merge_note(m, lane, seq, at)) != 0)
		return rc;
	l = &m->lane[lane];
	if (read_copy(m, lane, seq, at, m->scratch) != 0)
		return -1;
	for (uint64_t i = 0; i < gr->nlater; i++) {
		const struct later *w = &gr->later[i];
		rc = w->lane == lane && w->c == seq
			     ? group_resolve(gr, w, &recs(m->scratch)[w->slot])
			     : 1;
		if (rc < 0)
			return -1;
		if (rc > 0)
			gr->later[kept++] = gr->later[i];
	}
	gr->nlater = kept;
	if (l->loaded && l->seq == seq) {
		memcpy(l->buf, m->scratch, m->a->hdr->chunk_bytes);
		if (l->state == BLOCKED && (rc = advance(m, lane)) != 0)
			return rc;
	}
	return 0;
}

uint32_t running_merge_positions(const struct running_merge *m, struct lane_pos *pos)
{
	for (uint32_t k = 0; k < RUNNING_MERGE_LANES; k++)
		pos[k] = (struct lane_pos){m->lane[k].seq, m->lane[k].slot};
	return RUNNING_MERGE_LANES;
}
