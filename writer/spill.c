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

enum { REC_CALL, REC_BYTES };

/* A call, or the bytes the call at row slot moved (a and b: sent, received). */
struct rec {
	uint32_t slot; /* row within its window */
	uint32_t thread;
	uint64_t a, b; /* start and duration */
	uint16_t depth;
	uint8_t flags;
	uint8_t kind;
	uint32_t pad;
};
_Static_assert(sizeof(struct rec) == 32, "spilled records are 32 bytes");

/*
 * Each window's records leave memory in blocks appended to the file. A
 * block starts with the offset of the window's block before it, so the
 * window is read back by following that chain from its last block. The
 * order does not matter: every record says its row.
 */
struct block_head {
	uint64_t prev; /* offset + 1 of the window's previous block; 0: none */
	uint64_t count;
};

struct bucket {
	struct rec *buf;
	uint32_t n;
	uint64_t last; /* offset + 1 of its last block; 0: none */
	uint64_t calls;
};

struct spill {
	int fd;
	int bytes;
	uint64_t n, window, nwin;
	uint64_t end; /* where the next block goes */
	uint32_t cap; /* records a bucket holds before it is written */
	struct bucket *b;
	struct rec *rbuf;
	char dir[512];
};

/* Buffers of all windows together; each gets a share. */
#define BUFFER_BYTES (16u << 20)
#define READ_RECS    4096u

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

struct spill *spill_open(const char *dir, uint64_t n, uint64_t window, int bytes)
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
	share = BUFFER_BYTES / (s->nwin ? s->nwin : 1) / sizeof(struct rec);
	s->cap = share < 256 ? 256 : share > 4096 ? 4096 : (uint32_t)share;
	s->b = calloc(s->nwin + 1, sizeof *s->b);
	s->rbuf = malloc(READ_RECS * sizeof *s->rbuf);
	for (uint64_t i = 0; s->b && i < s->nwin; i++)
		if (!(s->b[i].buf = malloc(s->cap * sizeof(struct rec))))
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

static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		p = (const char *)p + w;
		len -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t r = pread(fd, p, len, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : EIO;
		p = (char *)p + r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int flush_bucket(struct spill *s, struct bucket *b)
{
	struct block_head h = {b->last, b->n};
	int err;

	if (!b->n)
		return 0;
	err = write_all(s->fd, &h, sizeof h, s->end);
	if (!err)
		err = write_all(s->fd, b->buf, b->n * sizeof *b->buf, s->end + sizeof h);
	if (err)
		return fail(s, "write", err);
	b->last = s->end + 1;
	s->end += sizeof h + b->n * sizeof *b->buf;
	b->n = 0;
	return 0;
}

static int push(struct spill *s, uint64_t at, const struct rec *r)
{
	struct bucket *b = &s->b[at / s->window];

	b->buf[b->n] = *r;
	b->buf[b->n].slot = (uint32_t)(at % s->window);
	return ++b->n == s->cap ? flush_bucket(s, b) : 0;
}

int spill_call(struct spill *s, const struct spilled_call *c)
{
	struct rec r = {.thread = c->thread,
			.a = c->start,
			.b = c->duration,
			.depth = c->depth,
			.flags = c->flags,
			.kind = REC_CALL};

	s->b[c->at / s->window].calls++;
	return push(s, c->at, &r);
}

int spill_bytes(struct spill *s, uint64_t at, uint64_t sent, uint64_t received)
{
	struct rec r = {.a = sent, .b = received, .kind = REC_BYTES};
	return push(s, at, &r);
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

static void place(struct events *ev, const struct rec *r)
{
	if (r->kind == REC_BYTES) {
		if (ev->sent) {
			ev->sent[r->slot] += r->a;
			ev->received[r->slot] += r->b;
		}
		return;
	}
	ev->start[r->slot] = r->a;
	ev->duration[r->slot] = r->b;
	ev->thread[r->slot] = r->thread;
	ev->depth[r->slot] = r->depth;
	ev->flags[r->slot] = r->flags;
}

/* Places every record of window w; returns 0 or an errno value. */
static int load(struct spill *s, uint64_t w, struct events *ev)
{
	struct block_head h;

	for (uint64_t off = s->b[w].last; off; off = h.prev) {
		uint64_t at = off - 1 + sizeof h;
		int err = read_all(s->fd, &h, sizeof h, off - 1);
		while (!err && h.count > 0) {
			uint64_t k = h.count < READ_RECS ? h.count : READ_RECS;
			err = read_all(s->fd, s->rbuf, k * sizeof *s->rbuf, at);
			for (uint64_t i = 0; !err && i < k; i++)
				if (s->rbuf[i].slot < ev->n)
					place(ev, &s->rbuf[i]);
			at += k * sizeof *s->rbuf;
			h.count -= k;
		}
		if (err)
			return err;
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

	if (!ev->start && events_alloc(ev, s->window, s->bytes) != 0) {
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
