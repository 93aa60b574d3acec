/* SPDX-License-Identifier: MIT */
/* Calls kept in a temporary file while they are grouped by region, read back a window at a time. */
#define _GNU_SOURCE
#include "spill.h"

#include "grow.h"
#include "map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A record is a call, or the bytes the call at row slot moved, packed in
 * LEB128 varints (about 10 bytes instead of 32: the spill is written once
 * and read once, so its size is its cost):
 *
 *   head    kind (bit 0), then flags (of 6 bits; the 7th is SPILL_LATER)
 *   slot    row within its window
 *   call:   thread, depth, task, start as a zigzag gap to the block's previous
 *           call (calls come in start order, so the gap is small), duration
 *   bytes:  sent, received (head bits above the kind: 0); or, head bits
 *           above the kind k + 1, counters 2k and 2k + 1's change
 */
enum { REC_CALL, REC_BYTES };
/* A bytes record of this kind is a call's duration and flags, given after
 * the call (SPILL_LATER): the two may be read in either order. */
#define REC_LATER 0x7f
#define REC_MAX	  64 /* bytes a record takes at most */

/*
 * Each bucket's records leave memory in blocks appended to the file. A
 * block starts with the offset of the bucket's block before it, so the
 * bucket is read back by following that chain from its last block. The
 * order does not matter: every record says its slot.
 *
 * A spill by row has a bucket per window of rows, and a record's slot is
 * its row in the window. A spill by region (spill_open_by_region), filled
 * before the regions' rows are known, has a bucket per window of each
 * region's calls: a call's slot is its index among its region's calls, in
 * the window of 2^shift of them its bucket holds.
 */
struct block_head {
	uint64_t prev; /* offset + 1 of the window's previous block; 0: none */
	uint64_t bytes;
};

struct bucket {
	unsigned char *buf;
	uint32_t used, cap;
	uint64_t prev_start; /* of the block's last call */
	uint64_t last;	     /* offset + 1 of its last block; 0: none */
	uint64_t calls;
};

struct spill {
	int fd;
	int bytes;
	uint32_t ncounters;
	uint64_t n, window, nwin;
	int shift;    /* log2(window) when it is a power of two (the default), else -1 */
	uint64_t end; /* where the next block goes */
	uint32_t cap; /* bytes a bucket holds before it is written */
	struct bucket *b;
	/* By region: (region << 32 | window of its calls) + 1 -> bucket; the
	 * buckets' buffers come and go within BUFFER_BYTES in all. */
	int by_region;
	struct u64map keys;
	uint64_t nb, bcap, buffered;
	/* Per region, its latest bucket (index + 1, 0: none) and whose window
	 * of calls it is: calls of a region come in order. */
	uint32_t *latest;
	uint64_t *latest_w;
	uint64_t nlatest;
	unsigned char *rbuf;
	uint32_t rcap;
	char dir[512];
};

/* Buffers of all windows together; each gets a share. */
#define BUFFER_BYTES (16u << 20)

static inline unsigned char *put(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline const unsigned char *get(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	for (int sh = 0;; sh += 7) {
		x |= (uint64_t)(*p & 0x7f) << sh;
		if (!(*p++ & 0x80))
			break;
	}
	*v = x;
	return p;
}

static int fail(const struct spill *s, const char *what, int err)
{
	writer_fail("cannot %s the temporary spill file in %s: %s", what, s->dir, strerror(err));
	return -1;
}

static int open_file(struct spill *s)
{
	char path[600];

	s->fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (s->fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return s->fd >= 0 ? 0 : fail(s, "create", errno);
	snprintf(path, sizeof path, "%s/scope-spill.XXXXXX", s->dir);
	s->fd = mkostemp(path, O_CLOEXEC);
	if (s->fd < 0)
		return fail(s, "create", errno);
	unlink(path);
	return 0;
}

/* s with its file made, when its buffers are (have); else NULL, s gone. */
static struct spill *opened(struct spill *s, int have)
{
	if (!have)
		writer_fail("out of memory for the spill buffers");
	if (!have || open_file(s) != 0) {
		spill_close(s);
		return NULL;
	}
	return s;
}

struct spill *spill_open(const char *dir, uint64_t n, uint64_t window, int bytes,
			 uint32_t ncounters)
{
	struct spill *s = calloc(1, sizeof *s);
	uint64_t share;

	if (!s)
		return NULL;
	snprintf(s->dir, sizeof s->dir, "%s", dir && *dir ? dir : ".");
	s->fd = -1;
	s->n = n;
	s->window = window;
	s->nwin = (n + window - 1) / window;
	s->bytes = bytes;
	s->ncounters = ncounters;
	s->shift = -1;
	if ((window & (window - 1)) == 0)
		s->shift = __builtin_ctzll(window);
	share = BUFFER_BYTES / (s->nwin ? s->nwin : 1);
	s->cap = share < 8192 ? 8192 : share > 131072 ? 131072 : (uint32_t)share;
	s->rcap = s->cap;
	s->b = calloc(s->nwin + 1, sizeof *s->b);
	s->rbuf = malloc(s->rcap);
	for (uint64_t i = 0; s->b && i < s->nwin; i++) {
		if (!(s->b[i].buf = malloc(s->cap)))
			break;
		s->b[i].cap = s->cap;
	}
	return opened(s, s->b && s->rbuf && (!s->nwin || s->b[s->nwin - 1].buf));
}

/* A region's bucket holds this much before it is written. */
#define REGION_CAP (32u << 10)

struct spill *spill_open_by_region(const char *dir, uint64_t window)
{
	struct spill *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	snprintf(s->dir, sizeof s->dir, "%s", dir && *dir ? dir : ".");
	s->fd = -1;
	s->by_region = 1;
	s->window = window ? window : 1;
	/* A bucket holds a power of two of a region's calls, an eighth of a
	 * window or more: a window read reads at most that much too many. */
	s->shift = s->window <= 8 ? 0 : 64 - __builtin_clzll(s->window - 1) - 3;
	s->rcap = REGION_CAP;
	s->rbuf = malloc(s->rcap);
	return opened(s, s->rbuf != NULL);
}

void spill_by_region_done(struct spill *s, uint64_t n, int bytes, uint64_t window)
{
	s->window = window ? window : 1;
	s->n = n;
	s->nwin = (n + s->window - 1) / s->window;
	s->bytes = bytes;
}

void spill_close(struct spill *s)
{
	if (!s)
		return;
	for (uint64_t i = 0; s->b && i < (s->by_region ? s->nb : s->nwin); i++)
		free(s->b[i].buf);
	free(s->b);
	map_free(&s->keys);
	free(s->latest);
	free(s->latest_w);
	free(s->rbuf);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

/* Writes (or reads) all len bytes at off; returns 0 or an errno value. */
static int move_all(int fd, void *p, size_t len, uint64_t off, int writing)
{
	while (len > 0) {
		ssize_t k =
			writing ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : writing ? ENOSPC : EIO;
		p = (char *)p + k;
		len -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static int flush_bucket(struct spill *s, struct bucket *b)
{
	struct block_head h = {b->last, b->used};
	int err;

	if (!b->used)
		return 0;
	err = move_all(s->fd, &h, sizeof h, s->end, 1);
	if (!err)
		err = move_all(s->fd, b->buf, b->used, s->end + sizeof h, 1);
	if (err)
		return fail(s, "write", err);
	b->last = s->end + 1;
	s->end += sizeof h + b->used;
	b->used = 0;
	b->prev_start = 0;
	return 0;
}

/* The window of row at; a shift, not a division, on the hot loop. */
static inline uint64_t window_of(const struct spill *s, uint64_t at)
{
	return s->shift >= 0 ? at >> s->shift : at / s->window;
}

/* The bucket of row at, with room for one more record. */
static struct bucket *bucket_for(struct spill *s, uint64_t at, uint64_t *slot)
{
	uint64_t w = window_of(s, at);
	struct bucket *b = &s->b[w];

	*slot = at - w * s->window;
	if (b->used + REC_MAX > b->cap && flush_bucket(s, b) != 0)
		return NULL;
	return b;
}

static uint64_t region_key(uint32_t region, uint64_t w)
{
	return ((uint64_t)region << 32 | w) + 1;
}

/* Writes out every bucket's records and lets their buffers go. */
static int flush_all(struct spill *s)
{
	for (uint64_t i = 0; i < s->nb; i++) {
		if (flush_bucket(s, &s->b[i]) != 0)
			return -1;
		free(s->b[i].buf);
		s->b[i].buf = NULL;
		s->b[i].cap = 0;
	}
	s->buffered = 0;
	return 0;
}

/* A bucket's buffer, within the buffers' budget. */
static int give_buffer(struct spill *s, struct bucket *b)
{
	if (s->buffered + REGION_CAP > BUFFER_BYTES && flush_all(s) != 0)
		return -1;
	if (!(b->buf = malloc(REGION_CAP))) {
		writer_fail("out of memory for the spill buffers");
		return -1;
	}
	b->cap = REGION_CAP;
	s->buffered += REGION_CAP;
	return 0;
}

/* The bucket of (region, window w of its calls), a new one when there is
 * none yet; UINT32_MAX without memory. */
static uint32_t find_bucket(struct spill *s, uint32_t region, uint64_t w)
{
	int added;
	uint32_t *at = map_slot(&s->keys, region_key(region, w), (uint32_t)s->nb, &added);

	if (!at || (added && s->nb >= UINT32_MAX - 1))
		return UINT32_MAX;
	if (added) {
		if (scope_grow((void **)&s->b, &s->bcap, s->nb + 1, sizeof *s->b) != 0)
			return UINT32_MAX;
		s->b[s->nb++] = (struct bucket){0};
	}
	return *at;
}

/* Room for region's entry of the latest buckets. */
static int latest_reserve(struct spill *s, uint32_t region)
{
	uint64_t wcap = s->nlatest;

	if (region < s->nlatest)
		return 0;
	/* latest_w first, then latest to the same capacity: nlatest counts both */
	if (scope_grow((void **)&s->latest_w, &wcap, (uint64_t)region + 1, sizeof *s->latest_w))
		return -1;
	return scope_grow_zeroed((void **)&s->latest, &s->nlatest, wcap, sizeof *s->latest);
}

/* The bucket of the call that is index among region's, with room for one
 * more record. */
static struct bucket *region_bucket(struct spill *s, uint32_t region, uint64_t index,
				    uint64_t *slot)
{
	uint64_t w = index >> s->shift;
	uint32_t k;
	struct bucket *b;

	if (latest_reserve(s, region) != 0)
		goto oom;
	if (s->latest[region] && s->latest_w[region] == w) {
		k = s->latest[region] - 1;
	} else {
		if ((k = find_bucket(s, region, w)) == UINT32_MAX)
			goto oom;
		s->latest[region] = k + 1;
		s->latest_w[region] = w;
	}
	b = &s->b[k];
	*slot = index - (w << s->shift);
	if (!b->buf && give_buffer(s, b) != 0)
		return NULL;
	if (b->used + REC_MAX > b->cap && flush_bucket(s, b) != 0)
		return NULL;
	return b;
oom:
	writer_fail("out of memory for the spill buffers");
	return NULL;
}

static int put_call(struct bucket *b, uint64_t slot, const struct spilled_call *c)
{
	unsigned char *p;
	int64_t gap;

	if (!b)
		return -1;
	gap = (int64_t)(c->start - b->prev_start);
	p = b->buf + b->used;
	*p++ = (unsigned char)(REC_CALL | c->flags << 1);
	p = put(p, slot);
	p = put(p, c->thread);
	p = put(p, c->depth);
	p = put(p, c->task);
	p = put(p, (uint64_t)gap << 1 ^ (gap < 0 ? UINT64_MAX : 0)); /* zigzag */
	p = put(p, c->duration);
	b->used = (uint32_t)(p - b->buf);
	b->prev_start = c->start;
	b->calls++;
	return 0;
}

int spill_call(struct spill *s, const struct spilled_call *c)
{
	uint64_t slot = 0;
	struct bucket *b = bucket_for(s, c->at, &slot);
	return put_call(b, slot, c);
}

int spill_region_call(struct spill *s, uint32_t region, uint64_t index,
		      const struct spilled_call *c)
{
	uint64_t slot = 0;
	struct bucket *b = region_bucket(s, region, index, &slot);
	return put_call(b, slot, c);
}

static int put_pair(struct bucket *b, uint64_t slot, unsigned which, uint64_t sent,
		    uint64_t received)
{
	unsigned char *p;

	if (!b)
		return -1;
	p = b->buf + b->used;
	*p++ = (unsigned char)(REC_BYTES | which << 1);
	p = put(p, slot);
	p = put(p, sent);
	p = put(p, received);
	b->used = (uint32_t)(p - b->buf);
	return 0;
}

static int spill_pair(struct spill *s, uint64_t at, unsigned which, uint64_t sent,
		      uint64_t received)
{
	uint64_t slot = 0;
	struct bucket *b = bucket_for(s, at, &slot);
	return put_pair(b, slot, which, sent, received);
}

int spill_bytes(struct spill *s, uint64_t at, uint64_t sent, uint64_t received)
{
	return spill_pair(s, at, 0, sent, received);
}

int spill_counters(struct spill *s, uint64_t at, uint32_t k, uint64_t a, uint64_t b)
{
	return spill_pair(s, at, k + 1, a, b);
}

int spill_region_bytes(struct spill *s, uint32_t region, uint64_t index, uint64_t sent,
		       uint64_t received)
{
	uint64_t slot = 0;
	struct bucket *b = region_bucket(s, region, index, &slot);
	return put_pair(b, slot, 0, sent, received);
}

int spill_region_later(struct spill *s, uint32_t region, uint64_t index, uint64_t duration,
		       uint8_t flags)
{
	uint64_t slot = 0;
	struct bucket *b = region_bucket(s, region, index, &slot);
	return put_pair(b, slot, REC_LATER, duration, flags);
}

int spill_flush(struct spill *s)
{
	for (uint64_t i = 0; i < (s->by_region ? s->nb : s->nwin); i++)
		if (flush_bucket(s, &s->b[i]) != 0)
			return -1;
	return 0;
}

uint64_t spill_windows(const struct spill *s)
{
	return s->nwin;
}

uint64_t spill_window_rows(const struct spill *s)
{
	return s->window;
}

/* Places the records of one block: slot s at row s + base of the window,
 * when that is in [lo, hi). */
static void place(struct events *ev, const unsigned char *p, const unsigned char *end,
		  uint64_t base, uint64_t lo, uint64_t hi)
{
	uint64_t start = 0;

	while (p < end) {
		unsigned head = *p++;
		uint64_t slot, a, b, thread, depth, task;
		p = get(p, &slot);
		slot += base; /* base is a row less a slot: it may wrap, and then undo */
		if ((head & 1) == REC_BYTES) {
			unsigned k = (head >> 1) - 1;
			p = get(get(p, &a), &b);
			if (slot < lo || slot >= hi)
				continue;
			if (head >> 1 == REC_LATER) {
				ev->duration[slot] = a;
				ev->flags[slot] = (uint8_t)b;
			} else if (head >> 1 == 0 && ev->sent) {
				ev->sent[slot] += a;
				ev->received[slot] += b;
			} else if (head >> 1 && 2 * k + 1 < SCOPE_MAX_COUNTERS) {
				if (ev->counter[2 * k])
					ev->counter[2 * k][slot] = a;
				if (ev->counter[2 * k + 1])
					ev->counter[2 * k + 1][slot] = b;
			}
			continue;
		}
		p = get(get(get(get(get(p, &thread), &depth), &task), &a), &b);
		start += (a >> 1) ^ (0 - (a & 1));
		if (slot < lo || slot >= hi)
			continue;
		ev->start[slot] = start;
		ev->thread[slot] = (uint32_t)thread;
		ev->depth[slot] = (uint32_t)depth;
		ev->task[slot] = (uint32_t)task;
		if (!(head >> 1 & SPILL_LATER)) {
			ev->duration[slot] = b;
			ev->flags[slot] = (uint8_t)(head >> 1);
		}
	}
}

/* Places the records of bucket b's blocks; returns 0 or an errno value. */
static int load_bucket(struct spill *s, const struct bucket *b, struct events *ev, uint64_t base,
		       uint64_t lo, uint64_t hi)
{
	struct block_head h;

	for (uint64_t off = b->last; off; off = h.prev) {
		int err = move_all(s->fd, &h, sizeof h, off - 1, 0);
		if (!err && h.bytes > s->rcap)
			err = EIO;
		if (!err)
			err = move_all(s->fd, s->rbuf, h.bytes, off - 1 + sizeof h, 0);
		if (err)
			return err;
		place(ev, s->rbuf, s->rbuf + h.bytes, base, lo, hi);
	}
	return 0;
}

/* Places every record of window w; returns 0 or an errno value. */
static int load(struct spill *s, uint64_t w, struct events *ev)
{
	return load_bucket(s, &s->b[w], ev, 0, 0, ev->n);
}

/* The first region whose calls reach past row lo. */
static uint32_t region_at(const struct region *g, uint32_t n, uint64_t lo)
{
	uint32_t a = 0, b = n;
	while (a < b) {
		uint32_t m = a + (b - a) / 2;
		if (g[m].first + g[m].count <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Places the calls of rows [lo, lo + len) of a spill by region: those of
 * each region there, from the buckets of its calls that the rows hold. */
static int load_regions(struct spill *s, uint64_t lo, uint64_t len, const struct region *regions,
			uint32_t nregions, struct events *ev)
{
	for (uint32_t r = region_at(regions, nregions, lo);
	     r < nregions && regions[r].first < lo + len; r++) {
		const struct region *g = &regions[r];
		uint64_t a = (g->first > lo ? g->first : lo) - lo;
		uint64_t e = (g->first + g->count < lo + len ? g->first + g->count : lo + len) - lo;
		uint64_t first = lo + a - g->first, last = lo + e - 1 - g->first;

		for (uint64_t k = first >> s->shift; a < e && k <= last >> s->shift; k++) {
			int added, err;
			uint32_t *at = map_slot(&s->keys, region_key(r, k), UINT32_MAX, &added);
			if (!at)
				return ENOMEM;
			if (*at >= s->nb)
				continue; /* none of its calls there: none was read */
			err = load_bucket(s, &s->b[*at], ev, g->first + (k << s->shift) - lo, a, e);
			if (err)
				return err;
		}
	}
	return 0;
}

int spill_read(struct spill *s, uint64_t w, const struct region *regions, uint32_t nregions,
	       uint64_t *prev, struct events *ev)
{
	uint64_t lo = w * s->window, len = s->n - lo < s->window ? s->n - lo : s->window;
	int err;

	if (!ev->start && events_alloc(ev, s->window, s->bytes, s->ncounters) != 0) {
		writer_fail("out of memory for a window of calls");
		return -1;
	}
	ev->n = len;
	if (!s->by_region && s->b[w].calls != len) {
		writer_fail("the arena changed while it was read (%llu of %llu calls)",
			    (unsigned long long)s->b[w].calls, (unsigned long long)len);
		return -1;
	}
	if (ev->sent) {
		memset(ev->sent, 0, len * sizeof *ev->sent);
		memset(ev->received, 0, len * sizeof *ev->received);
	}
	for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
		if (ev->counter[k])
			memset(ev->counter[k], 0, len * sizeof *ev->counter[k]);
	if ((err = s->by_region ? load_regions(s, lo, len, regions, nregions, ev) : load(s, w, ev)))
		return fail(s, "read", err);
	for (uint32_t r = region_at(regions, nregions, lo);
	     r < nregions && regions[r].first < lo + len; r++) {
		const struct region *g = &regions[r];
		uint64_t a = (g->first > lo ? g->first : lo) - lo;
		uint64_t e = (g->first + g->count < lo + len ? g->first + g->count : lo + len) - lo;
		if (events_sort(ev, a, e - a) != 0)
			return -1;
		for (uint64_t i = a; i < e; i++) {
			uint64_t t = ev->start[i];
			/* A lane's calls can start out of order by a signal
			 * handler's few ns; across windows that reads as 0. */
			ev->start[i] = lo + i == g->first ? t : t > prev[r] ? t - prev[r] : 0;
			prev[r] = lo + i == g->first || t > prev[r] ? t : prev[r];
		}
	}
	return 0;
}
