/* SPDX-License-Identifier: MIT */
/* Calls kept in a temporary file while they are grouped by region, read back a window at a time. */
#define _GNU_SOURCE
#include "spill.h"

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
 *   head    kind (bit 0), then flags
 *   slot    row within its window
 *   call:   thread, depth, task, start as a zigzag gap to the block's previous
 *           call (calls come in start order, so the gap is small), duration
 *   bytes:  sent, received (head bits above the kind: 0); or, head bits
 *           above the kind k + 1, counters 2k and 2k + 1's change
 */
enum { REC_CALL, REC_BYTES };
#define REC_MAX 64 /* bytes a record takes at most */

/*
 * Each window's records leave memory in blocks appended to the file. A
 * block starts with the offset of the window's block before it, so the
 * window is read back by following that chain from its last block. The
 * order does not matter: every record says its row.
 */
struct block_head {
	uint64_t prev; /* offset + 1 of the window's previous block; 0: none */
	uint64_t bytes;
};

struct bucket {
	unsigned char *buf;
	uint32_t used;
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
	for (uint64_t i = 0; s->b && i < s->nwin; i++)
		if (!(s->b[i].buf = malloc(s->cap)))
			break;
	if (!s->b || !s->rbuf || (s->nwin && !s->b[s->nwin - 1].buf)) {
		writer_fail("out of memory for the spill buffers");
		spill_close(s);
		return NULL;
	}
	if (open_file(s) != 0) {
		spill_close(s);
		return NULL;
	}
	return s;
}

void spill_close(struct spill *s)
{
	if (!s)
		return;
	for (uint64_t i = 0; s->b && i < s->nwin; i++)
		free(s->b[i].buf);
	free(s->b);
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
	if (b->used + REC_MAX > s->cap && flush_bucket(s, b) != 0)
		return NULL;
	return b;
}

int spill_call(struct spill *s, const struct spilled_call *c)
{
	uint64_t slot;
	struct bucket *b = bucket_for(s, c->at, &slot);
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

static int spill_pair(struct spill *s, uint64_t at, unsigned which, uint64_t sent,
		      uint64_t received)
{
	uint64_t slot;
	struct bucket *b = bucket_for(s, at, &slot);
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

int spill_bytes(struct spill *s, uint64_t at, uint64_t sent, uint64_t received)
{
	return spill_pair(s, at, 0, sent, received);
}

int spill_counters(struct spill *s, uint64_t at, uint32_t k, uint64_t a, uint64_t b)
{
	return spill_pair(s, at, k + 1, a, b);
}

int spill_flush(struct spill *s)
{
	for (uint64_t i = 0; i < s->nwin; i++)
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

/* Places the records of one block. */
static void place(struct events *ev, const unsigned char *p, const unsigned char *end)
{
	uint64_t start = 0;

	while (p < end) {
		unsigned head = *p++;
		uint64_t slot, a, b, thread, depth, task;
		p = get(p, &slot);
		if ((head & 1) == REC_BYTES) {
			unsigned k = (head >> 1) - 1;
			p = get(get(p, &a), &b);
			if (slot >= ev->n)
				continue;
			if (head >> 1 == 0 && ev->sent) {
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
		if (slot >= ev->n)
			continue;
		ev->start[slot] = start;
		ev->duration[slot] = b;
		ev->thread[slot] = (uint32_t)thread;
		ev->depth[slot] = (uint32_t)depth;
		ev->task[slot] = (uint32_t)task;
		ev->flags[slot] = (uint8_t)(head >> 1);
	}
}

/* Places every record of window w; returns 0 or an errno value. */
static int load(struct spill *s, uint64_t w, struct events *ev)
{
	struct block_head h;

	for (uint64_t off = s->b[w].last; off; off = h.prev) {
		int err = move_all(s->fd, &h, sizeof h, off - 1, 0);
		if (!err && h.bytes > s->rcap)
			err = EIO;
		if (!err)
			err = move_all(s->fd, s->rbuf, h.bytes, off - 1 + sizeof h, 0);
		if (err)
			return err;
		place(ev, s->rbuf, s->rbuf + h.bytes);
	}
	return 0;
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
	if (s->b[w].calls != len) {
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
	if ((err = load(s, w, ev)) != 0)
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
