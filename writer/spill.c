/* SPDX-License-Identifier: MIT */
/* Calls grouped by region as they are read, in memory or a temporary file, read back by rows. */
#define _GNU_SOURCE
#include "spill.h"

#include "fresh.h"
#include "grow.h"
#include "map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A record is a call, or something more about the call at a slot, packed
 * in LEB128 varints (about 10 bytes instead of 32: the spill is written
 * once and read once, so its size is its cost):
 *
 *   head    kind (bit 0), then flags (of 6 bits; the 7th is SPILL_LATER)
 *   call:   thread, depth, task, start as a zigzag gap to the block's previous
 *           call (a region's calls come in start order, so the gap is small),
 *           duration; its slot, the call's index among its region's within
 *           its bucket, is the block's first plus the calls before it there
 *   bytes:  slot, then sent, received (head bits above the kind: 0); or,
 *           head bits above the kind k + 1, counters 2k and 2k + 1's change
 */
enum { REC_CALL, REC_BYTES };
/* A bytes record of this kind is a call's duration and flags, given after
 * the call (SPILL_LATER): the two may be read in either order. */
#define REC_LATER 0x7f
#define REC_MAX	  64 /* bytes a record takes at most */

/*
 * A bucket holds the records of a window of 2^shift of one region's
 * calls. Its records leave memory in blocks appended to the spill's
 * store; a block starts with the offset of the bucket's block before it,
 * so the bucket is read back by following that chain from its last block.
 * The order does not matter: every record says its slot.
 */
struct block_head {
	uint64_t prev; /* offset + 1 of the bucket's previous block; 0: none */
	uint64_t bytes;
	uint64_t first; /* slot of the block's first call */
};

struct bucket {
	unsigned char *buf;
	uint32_t used, cap;
	uint64_t prev_start; /* of the block's last call */
	uint64_t last;	     /* offset + 1 of its last block; 0: none */
	uint64_t first;	     /* slot of the block's first call */
	uint64_t calls;	     /* calls in the block */
};

struct spill {
	/* The blocks: those before split in mem (up to mem_max bytes), the
	 * rest in the file fd, made in dirs[dir], from its start. */
	unsigned char *mem;
	uint64_t mem_cap, mem_max, split;
	int fd;
	char **dirs;
	int ndirs, dir;
	uint64_t end; /* where the next block goes */
	int bytes;
	uint32_t ncounters;
	uint64_t n, window, nwin;
	int shift;
	/* (region << 32 | window of its calls) + 1 -> bucket; the buckets'
	 * buffers come and go within BUFFER_BYTES in all. */
	struct bucket *b;
	struct u64map keys;
	uint64_t nb, bcap, buffered;
	/* Per region, its latest bucket (index + 1, 0: none) and whose window
	 * of calls it is: calls of a region come in order. */
	uint32_t *latest;
	uint64_t *latest_w;
	uint64_t nlatest;
	unsigned char *rbuf;
};

/* Buffers of all buckets together; a bucket's grows to REGION_CAP. */
#define BUFFER_BYTES (16u << 20)
#define REGION_CAP   (32u << 10)
#define FIRST_CAP    512u
/* The records stay in memory up to this many bytes a call of a window
 * (16 MiB for the default window, some 2.7 million calls), and up to
 * MEM_ALL in all the spills of the writer, the rest going to the file:
 * reading them back from memory costs no copy. */
#define MEM_PER_CALL 64u
#define MEM_ALL	     (UINT64_C(64) << 20)

static _Atomic uint64_t mem_held; /* by every spill: their mem_cap summed */

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

	if (__builtin_expect(!(*p & 0x80), 1)) {
		*v = *p;
		return p + 1;
	}
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
	int at = s->dir < 0 ? 0 : s->dir < s->ndirs ? s->dir : s->ndirs - 1;
	writer_fail("cannot %s the temporary spill file in %s: %s", what, s->dirs[at],
		    strerror(err));
	return -1;
}

/* An unnamed file in dir; -1 with errno set. */
static int open_tmp(const char *dir)
{
	char path[4200];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	snprintf(path, sizeof path, "%s/scope-spill.XXXXXX", dir);
	if ((fd = mkostemp(path, O_CLOEXEC)) >= 0)
		unlink(path);
	return fd;
}

static struct spill *copy_dirs(struct spill *s, const char *const *dirs)
{
	static const char *const here[] = {".", NULL};

	if (!dirs || !dirs[0])
		dirs = here;
	while (dirs[s->ndirs])
		s->ndirs++;
	if (!(s->dirs = calloc((size_t)s->ndirs, sizeof *s->dirs)))
		return NULL;
	for (int i = 0; i < s->ndirs; i++)
		if (!(s->dirs[i] = strdup(dirs[i][0] ? dirs[i] : ".")))
			return NULL;
	return s;
}

struct spill *spill_open(const char *const *dirs, uint64_t window)
{
	struct spill *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->fd = -1;
	s->dir = -1;
	s->split = UINT64_MAX;
	s->window = window ? window : 1;
	s->mem_max = s->window < MEM_ALL / MEM_PER_CALL ? s->window * MEM_PER_CALL : MEM_ALL;
	/* A bucket holds a power of two of a region's calls, an eighth of a
	 * window or more: a window read reads at most that much too many. */
	s->shift = s->window <= 8 ? 0 : 64 - __builtin_clzll(s->window - 1) - 3;
	if (!copy_dirs(s, dirs) || !(s->rbuf = malloc(REGION_CAP))) {
		writer_fail("out of memory for the spill buffers");
		spill_close(s);
		return NULL;
	}
	return s;
}

void spill_close(struct spill *s)
{
	if (!s)
		return;
	for (uint64_t i = 0; s->b && i < s->nb; i++)
		free(s->b[i].buf);
	free(s->b);
	map_free(&s->keys);
	free(s->latest);
	free(s->latest_w);
	free(s->rbuf);
	free(s->mem);
	mem_held -= s->mem_cap;
	for (int i = 0; s->dirs && i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
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

/* Copies the blocks in the file so far into the file fd; returns 0 or an
 * errno value. */
static int copy_blocks(struct spill *s, int fd)
{
	uint64_t end = s->fd < 0 ? 0 : s->end - s->split;

	for (uint64_t off = 0; off < end;) {
		size_t len = end - off < REGION_CAP ? end - off : REGION_CAP;
		int err = move_all(s->fd, s->rbuf, len, off, 0);
		if (!err)
			err = move_all(fd, s->rbuf, len, off, 1);
		if (err)
			return err;
		off += len;
	}
	return 0;
}

/* Moves the blocks to a file in the next folder that takes them all
 * (err: why the last one did not). */
static int next_folder(struct spill *s, const char *what, int err)
{
	while (++s->dir < s->ndirs) {
		int fd = open_tmp(s->dirs[s->dir]);
		if (fd < 0) {
			what = "create";
			err = errno;
			continue;
		}
		if ((err = copy_blocks(s, fd)) != 0) {
			what = "write";
			close(fd);
			continue;
		}
		if (s->fd >= 0)
			close(s->fd);
		s->fd = fd;
		return 0;
	}
	return fail(s, what, err);
}

/* Room in memory for the blocks up to need bytes, within this spill's
 * share and every spill's: 0, or -1 when they go to the file. */
static int mem_room(struct spill *s, uint64_t need)
{
	uint64_t cap = s->mem_cap ? s->mem_cap : 64 << 10, more;
	unsigned char *grown;

	if (need <= s->mem_cap)
		return 0;
	if (need > s->mem_max)
		return -1;
	while (cap < need)
		cap *= 2;
	cap = cap < s->mem_max ? cap : s->mem_max;
	more = cap - s->mem_cap;
	if (atomic_fetch_add(&mem_held, more) + more > MEM_ALL || !(grown = realloc(s->mem, cap))) {
		atomic_fetch_sub(&mem_held, more);
		return -1; /* the file takes them */
	}
	scope_fresh(grown + s->mem_cap, more);
	s->mem = grown;
	s->mem_cap = cap;
	return 0;
}

/* Appends the block of bucket b. */
static int store(struct spill *s, const struct block_head *h, const unsigned char *buf)
{
	uint64_t len = sizeof *h + h->bytes;
	int err = 0;

	if (s->fd < 0 && mem_room(s, s->end + len) == 0) {
		memcpy(s->mem + s->end, h, sizeof *h);
		memcpy(s->mem + s->end + sizeof *h, buf, h->bytes);
		return 0;
	}
	if (s->fd < 0) {
		s->split = s->end;
		if (next_folder(s, "create", 0) != 0)
			return -1;
	}
	for (;;) {
		uint64_t at = s->end - s->split;
		err = move_all(s->fd, (void *)h, sizeof *h, at, 1);
		if (!err)
			err = move_all(s->fd, (void *)buf, h->bytes, at + sizeof *h, 1);
		if (!err)
			return 0;
		/* A full folder: the next may have room for all of it. */
		if (next_folder(s, "write", err) != 0)
			return -1;
	}
}

static int flush_bucket(struct spill *s, struct bucket *b)
{
	struct block_head h = {b->last, b->used, b->first};

	if (!b->used)
		return 0;
	if (store(s, &h, b->buf) != 0)
		return -1;
	b->last = s->end + 1;
	s->end += sizeof h + b->used;
	b->used = 0;
	b->prev_start = 0;
	b->calls = 0;
	return 0;
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

/* Room in bucket b for one more record, within the buffers' budget: a
 * buffer grows from FIRST_CAP, so a region of few calls holds little. */
static int make_room(struct spill *s, struct bucket *b)
{
	uint32_t cap = b->cap ? 2 * b->cap : FIRST_CAP;
	unsigned char *grown;

	if (b->used + REC_MAX <= b->cap)
		return 0;
	if (b->cap >= REGION_CAP)
		return flush_bucket(s, b);
	if (s->buffered + cap - b->cap > BUFFER_BYTES) {
		if (flush_all(s) != 0)
			return -1;
		cap = FIRST_CAP;
	}
	if (!(grown = realloc(b->buf, cap))) {
		writer_fail("out of memory for the spill buffers");
		return -1;
	}
	s->buffered += cap - b->cap;
	b->buf = grown;
	b->cap = cap;
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
static struct bucket *bucket_of(struct spill *s, uint32_t region, uint64_t index, uint64_t *slot)
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
	return make_room(s, b) == 0 ? b : NULL;
oom:
	writer_fail("out of memory for the spill buffers");
	return NULL;
}

int spill_call(struct spill *s, uint32_t region, uint64_t index, const struct spilled_call *c)
{
	uint64_t slot = 0;
	struct bucket *b = bucket_of(s, region, index, &slot);
	unsigned char *p;
	int64_t gap;

	if (!b)
		return -1;
	/* Calls come as their region's next: a slot out of turn starts a block. */
	if (b->calls && slot != b->first + b->calls && flush_bucket(s, b) != 0)
		return -1;
	if (!b->calls)
		b->first = slot;
	b->calls++;
	gap = (int64_t)(c->start - b->prev_start);
	p = b->buf + b->used;
	*p++ = (unsigned char)(REC_CALL | c->flags << 1);
	p = put(p, c->thread);
	p = put(p, c->depth);
	p = put(p, c->task);
	p = put(p, (uint64_t)gap << 1 ^ (gap < 0 ? UINT64_MAX : 0)); /* zigzag */
	p = put(p, c->duration);
	b->used = (uint32_t)(p - b->buf);
	b->prev_start = c->start;
	return 0;
}

static int put_pair(struct spill *s, uint32_t region, uint64_t index, unsigned which, uint64_t a,
		    uint64_t b)
{
	uint64_t slot = 0;
	struct bucket *k = bucket_of(s, region, index, &slot);
	unsigned char *p;

	if (!k)
		return -1;
	p = k->buf + k->used;
	*p++ = (unsigned char)(REC_BYTES | which << 1);
	p = put(p, slot);
	p = put(p, a);
	p = put(p, b);
	k->used = (uint32_t)(p - k->buf);
	return 0;
}

int spill_bytes(struct spill *s, uint32_t region, uint64_t index, uint64_t sent, uint64_t received)
{
	return put_pair(s, region, index, 0, sent, received);
}

int spill_counters(struct spill *s, uint32_t region, uint64_t index, uint32_t k, uint64_t a,
		   uint64_t b)
{
	return put_pair(s, region, index, k + 1, a, b);
}

int spill_later(struct spill *s, uint32_t region, uint64_t index, uint64_t duration, uint8_t flags)
{
	return put_pair(s, region, index, REC_LATER, duration, flags);
}

int spill_done(struct spill *s, uint64_t n, int bytes, uint32_t ncounters)
{
	s->n = n;
	s->nwin = n / s->window + (n % s->window != 0);
	s->bytes = bytes;
	s->ncounters = ncounters;
	free(s->latest);
	free(s->latest_w);
	s->latest = NULL;
	s->latest_w = NULL;
	s->nlatest = 0;
	return flush_all(s);
}

uint64_t spill_windows(const struct spill *s)
{
	return s->nwin;
}

uint64_t spill_memory(const struct spill *s)
{
	return s->mem_cap + s->buffered;
}

/* Places the records of block h: slot s at row s + base of the window,
 * when that is in [lo, hi). Returns the calls placed. */
static uint64_t place(struct events *ev, const struct block_head *h, const unsigned char *p,
		      uint64_t base, uint64_t lo, uint64_t hi)
{
	const unsigned char *end = p + h->bytes;
	/* base is a row less a slot: it may wrap, and then undo */
	uint64_t start = 0, placed = 0, call = h->first + base;

	while (p < end) {
		unsigned head = *p++;
		uint64_t slot, a, b, thread, depth, task;
		if ((head & 1) == REC_BYTES) {
			unsigned k = (head >> 1) - 1;
			p = get(get(get(p, &slot), &a), &b);
			slot += base;
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
		slot = call++;
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
		placed++;
	}
	return placed;
}

/* The block at off: in memory, or read into the spill's buffer. Returns
 * 0 or an errno value. */
static int block_at(struct spill *s, uint64_t off, struct block_head *h, const unsigned char **p)
{
	int err;

	if (off < s->split) {
		uint64_t end = s->split < s->end ? s->split : s->end;
		if (off + sizeof *h > end)
			return EIO;
		memcpy(h, s->mem + off, sizeof *h);
		*p = s->mem + off + sizeof *h;
		return h->bytes <= end - off - sizeof *h ? 0 : EIO;
	}
	off -= s->split;
	if ((err = move_all(s->fd, h, sizeof *h, off, 0)) != 0)
		return err;
	if (h->bytes > REGION_CAP)
		return EIO;
	*p = s->rbuf;
	return move_all(s->fd, s->rbuf, h->bytes, off + sizeof *h, 0);
}

/* Places the records of bucket b's blocks, adding the calls placed to
 * *placed; returns 0 or an errno value. */
static int load_bucket(struct spill *s, const struct bucket *b, struct events *ev, uint64_t base,
		       uint64_t lo, uint64_t hi, uint64_t *placed)
{
	struct block_head h;

	for (uint64_t off = b->last; off; off = h.prev) {
		const unsigned char *p;
		int err = block_at(s, off - 1, &h, &p);
		if (err)
			return err;
		*placed += place(ev, &h, p, base, lo, hi);
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

/* Places the calls of rows [lo, lo + len): those of each region there,
 * from the buckets of its calls that the rows hold. */
static int load_regions(struct spill *s, uint64_t lo, uint64_t len, const struct region *regions,
			uint32_t nregions, struct events *ev, uint64_t *placed)
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
			err = load_bucket(s, &s->b[*at], ev, g->first + (k << s->shift) - lo, a, e,
					  placed);
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
	uint64_t placed = 0;
	int err;

	if (!ev->start &&
	    events_alloc(ev, s->n < s->window ? s->n : s->window, s->bytes, s->ncounters) != 0) {
		writer_fail("out of memory for a window of calls");
		return -1;
	}
	ev->n = len;
	if (ev->sent) {
		memset(ev->sent, 0, len * sizeof *ev->sent);
		memset(ev->received, 0, len * sizeof *ev->received);
	}
	for (int k = 0; k < SCOPE_MAX_COUNTERS; k++)
		if (ev->counter[k])
			memset(ev->counter[k], 0, len * sizeof *ev->counter[k]);
	if ((err = load_regions(s, lo, len, regions, nregions, ev, &placed)))
		return fail(s, "read", err);
	if (placed != len) {
		writer_fail("the arena changed while it was read (%llu of %llu calls)",
			    (unsigned long long)placed, (unsigned long long)len);
		return -1;
	}
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
