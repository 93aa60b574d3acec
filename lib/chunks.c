/* SPDX-License-Identifier: MIT */
/* Column chunks deflated on every core while the caller goes on, written in the order given. */
#include "chunks.h"
#include "columns.h"
#include "grow.h"
#include "rle.h"

#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * A ring of chunks: [head, take) are being deflated or done, [take, tail)
 * wait for a worker. The caller's thread fills the slot at tail and
 * writes the one at head; a worker takes the one at take. Only the
 * caller writes to the file, and at points that depend on the chunks
 * given alone, whatever the number of cores (the ring full, in slots or
 * in bytes; a drain), so the same calls make the same file.
 *
 * In flight: enough for two workers to deflate while the caller reads the
 * next calls back (32 chunks of 256 KiB), few enough that the ring's
 * buffers stay small. A slot keeps its buffers for the next chunk up to
 * KEEP_BYTES (the default chunks of every width); larger ones, of a chosen
 * chunk size, are let go once written.
 */
#define SLOTS	   32
#define RING_BYTES (UINT64_C(8) << 20)
#define KEEP_BYTES (512u << 10)

/*
 * Under auto, a chunk of a column of two bytes or more may be coded by
 * runs (rle.h) instead: two to three times as fast, and smaller where
 * libdeflate's match search finds little in the low bytes' noise; but on a
 * recursion's regular times the matches pay. The first SAMPLE bytes of the
 * chunk's low plane, coded both ways, tell which: on the profiles measured
 * that choice came within 1% of the better coding of each chunk, and never
 * above deflate alone. It depends on the rows alone, so the same calls make
 * the same file on any number of cores.
 */
#define SAMPLE 4096

struct chunk_job {
	hid_t d;
	hsize_t offset;
	uint64_t have, elems;
	int width, done, failed;
	unsigned char *in, *out;
	uint64_t in_cap, out_cap;
	size_t size; /* 0: all zero, not written */
};

/* A worker shuffles into scratch and deflates into out, both its own and
 * kept warm; a slot then holds only the deflated bytes, a tenth of the
 * rows or less, so the ring's memory is mostly the rows waiting. */
struct worker {
	struct chunk_pool *pool;
	struct libdeflate_compressor *cz;
	unsigned char *scratch, *out, *out2;
	uint16_t *tokens;
	uint64_t scratch_cap, out_cap, out2_cap, tokens_cap;
	pthread_t tid;
};

struct chunk_pool {
	pthread_mutex_t lock;
	pthread_cond_t work, finished;
	struct chunk_job job[SLOTS];
	uint64_t head, take, tail;
	uint64_t bytes; /* the rows of the chunks in [head, tail) */
	int quit, failed, nworkers, automatic;
	struct worker w[COLUMNS_MAX_THREADS];
};

/* HDF5's shuffle filter: byte b of element i goes to b * elems + i. One
 * loop per width, so the compiler knows the stride. */
#define SHUFFLE(W)                                                                                 \
	for (uint64_t i = 0; i < have; i++)                                                        \
		for (int b = 0; b < (W); b++)                                                      \
	dst[(uint64_t)b * elems + i] = src[i * (W) + (uint64_t)b]

static void shuffle(unsigned char *dst, const unsigned char *src, uint64_t elems, uint64_t have,
		    int width)
{
	if (have < elems)
		memset(dst, 0, elems * (uint64_t)width);
	switch (width) {
	case 1: memcpy(dst, src, have); break;
	case 2: SHUFFLE(2); break;
	case 4: SHUFFLE(4); break;
	default: SHUFFLE(8); break;
	}
}

#undef SHUFFLE

static int all_zero(const unsigned char *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* w's buffers for a chunk of bytes: shuffled, deflated, coded by runs. */
static int buffers(struct worker *w, struct chunk_job *j, size_t bytes)
{
	return scope_grow((void **)&w->scratch, &w->scratch_cap, bytes, 1) ||
	       scope_grow((void **)&w->out, &w->out_cap,
			  libdeflate_zlib_compress_bound(w->cz, bytes), 1) ||
	       (j->width > 1 &&
		(scope_grow((void **)&w->out2, &w->out2_cap, bytes, 1) ||
		 scope_grow((void **)&w->tokens, &w->tokens_cap, j->elems, sizeof *w->tokens)));
}

static void keep(struct chunk_job *j, const unsigned char *out, size_t size)
{
	if (size == 0 || scope_grow((void **)&j->out, &j->out_cap, size, 1) != 0) {
		j->failed = 1; /* size is never 0: out holds deflate's bound */
		return;
	}
	memcpy(j->out, out, size);
	j->size = size;
}

/* Whether runs code a chunk whose low plane is p (n bytes) as small as
 * deflate does: its first SAMPLE bytes coded both ways. */
static int runs_pay(struct worker *w, const unsigned char *p, size_t n)
{
	size_t z, r;

	n = n < SAMPLE ? n : SAMPLE;
	z = libdeflate_deflate_compress(w->cz, p, n, w->out, w->out_cap);
	r = rle_zlib(p, n, 1, w->tokens, w->out2, w->out2_cap);
	return r && r <= z;
}

/* Shuffles and codes job j's rows into j->out; j->size 0 when they are
 * all zero. Coded by runs, a chunk that would not fit in its own size is
 * deflated instead. */
static void deflate_job(struct worker *w, struct chunk_job *j)
{
	size_t have = (size_t)(j->have * (uint64_t)j->width);
	size_t bytes = (size_t)(j->elems * (uint64_t)j->width), size = 0;

	j->size = 0;
	j->failed = 0;
	if (all_zero(j->in, have))
		return;
	if (buffers(w, j, bytes) != 0) {
		j->failed = 1;
		return;
	}
	shuffle(w->scratch, j->in, j->elems, j->have, j->width);
	if (w->pool->automatic && j->width > 1 && runs_pay(w, w->scratch, j->elems) &&
	    (size = rle_zlib(w->scratch, j->elems, j->width, w->tokens, w->out2, bytes)))
		return keep(j, w->out2, size);
	size = libdeflate_zlib_compress(w->cz, w->scratch, bytes, w->out, w->out_cap);
	keep(j, w->out, size);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct chunk_pool *p = w->pool;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct chunk_job *j;
		while (!p->quit && p->take == p->tail)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->take == p->tail)
			break;
		j = &p->job[p->take++ % SLOTS];
		pthread_mutex_unlock(&p->lock);
		deflate_job(w, j);
		pthread_mutex_lock(&p->lock);
		j->done = 1;
		pthread_cond_signal(&p->finished);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct chunk_pool *start(struct columns *c)
{
	struct chunk_pool *p = calloc(1, sizeof *p);

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->finished, NULL);
	p->automatic = c->st.automatic;
	for (int i = 0; i < c->threads; i++) {
		struct worker *w = &p->w[p->nworkers];
		*w = (struct worker){.pool = p, .cz = c->cz[i]};
		if (pthread_create(&w->tid, NULL, work, w) != 0)
			break;
		p->nworkers++;
	}
	/* No worker: the caller deflates each chunk as it comes. */
	if (!p->nworkers)
		p->w[0] = (struct worker){.pool = p, .cz = c->cz[0]};
	return p;
}

/* Writes the chunk at head, once deflated; called with the lock held. */
static void write_head(struct chunk_pool *p)
{
	struct chunk_job *j = &p->job[p->head % SLOTS];

	while (!j->done)
		pthread_cond_wait(&p->finished, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (j->failed || (j->size && !p->failed &&
			  H5Dwrite_chunk(j->d, H5P_DEFAULT, 0, &j->offset, j->size, j->out) < 0))
		p->failed = 1;
	p->bytes -= j->elems * (uint64_t)j->width;
	if (j->in_cap > KEEP_BYTES) {
		free(j->in);
		free(j->out);
		j->in = j->out = NULL;
		j->in_cap = j->out_cap = 0;
	}
	pthread_mutex_lock(&p->lock);
	p->head++;
}

int chunks_put(struct columns *c, hid_t d, uint64_t offset, const void *rows, uint64_t have,
	       uint64_t elems, int width)
{
	struct chunk_pool *p = c->pool ? c->pool : (c->pool = start(c));
	size_t bytes = (size_t)(elems * (uint64_t)width);
	struct chunk_job *j;

	if (!p)
		return -1;
	pthread_mutex_lock(&p->lock);
	while (p->tail > p->head && (p->tail - p->head == SLOTS || p->bytes + bytes > RING_BYTES))
		write_head(p);
	pthread_mutex_unlock(&p->lock);
	/* The slot at tail is the caller's until it is handed over. */
	j = &p->job[p->tail % SLOTS];
	if (p->failed || scope_grow((void **)&j->in, &j->in_cap, bytes, 1) != 0)
		return -1;
	memcpy(j->in, rows, (size_t)(have * (uint64_t)width));
	p->bytes += bytes;
	j->d = d;
	j->offset = offset;
	j->have = have;
	j->elems = elems;
	j->width = width;
	j->done = 0;
	if (!p->nworkers) {
		deflate_job(&p->w[0], j);
		j->done = 1;
	}
	pthread_mutex_lock(&p->lock);
	p->tail++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int chunks_drain(struct columns *c)
{
	struct chunk_pool *p = c->pool;
	int failed;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	while (p->head != p->tail)
		write_head(p);
	failed = p->failed;
	pthread_mutex_unlock(&p->lock);
	return failed ? -1 : 0;
}

void chunks_stop(struct columns *c)
{
	struct chunk_pool *p = c->pool;

	if (!p)
		return;
	/* Chunks still queued follow a failure the caller was told of: their
	 * datasets may be closed, so they are dropped, not written. */
	pthread_mutex_lock(&p->lock);
	p->take = p->tail;
	p->quit = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->w[i].tid, NULL);
	for (int i = 0; i < COLUMNS_MAX_THREADS; i++) {
		free(p->w[i].scratch);
		free(p->w[i].out);
		free(p->w[i].out2);
		free(p->w[i].tokens);
	}
	for (uint64_t i = 0; i < SLOTS; i++) {
		free(p->job[i].in);
		free(p->job[i].out);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->lock);
	free(p);
	c->pool = NULL;
}
