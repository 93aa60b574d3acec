/* SPDX-License-Identifier: MIT */
/* Grouping a running process's calls as its chunks are taken, so that little is left at its end. */
#define _GNU_SOURCE
#include "alongside.h"

#include "collect.h"
#include "grow.h"
#include "running_merge.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * The chunks of a lane are read in their order (seq), each from its copy
 * in the store once the run's writer has made it: chunk 5 may be taken
 * before chunk 4, and then waits for it. A chunk is read up to a record
 * still being written (a signal handler's, interrupted), and read on from
 * there when its chunk has settled. A call still open when read waits in
 * the grouping (struct later) for its chunk to settle, or for the
 * process's end. A process of one lane is read here; one that has several
 * when the grouping starts has them merged in start order
 * (running_merge.c), and one whose second thread starts later is grouped
 * at its end.
 *
 * The reading is a thread's of its own, at a lower priority: the thread
 * that takes the chunks and frees them for reuse must keep pace with the
 * program, or the program records into fresh pages. It is told of each
 * chunk copied (a queue of notes), and reads the store under copy_lock,
 * which the taking thread holds while it copies a chunk over its earlier
 * copy.
 */
/* Groupings at once in one writer: each holds up to 16 MiB of spill
 * buffers (a run of many long processes groups the rest at their ends). */
#define MAX_LIVE 4
static unsigned live;

struct note {
	uint32_t lane, seq;
	uint64_t at;
	int settled;
};

struct alongside {
	pthread_t thread;
	pthread_mutex_t lock; /* the notes, quit, done */
	pthread_cond_t wake;
	pthread_mutex_t copy_lock;
	struct note *notes;
	uint64_t nnotes, cap;
	int quit, started;
	int done; /* the thread stopped grouping */
	/* The thread's own: */
	struct arena a; /* the run's writer's mapping of the arena, as the grouping reads it */
	struct tick_clock clock;
	struct grouping *gr;	  /* NULL once it stopped */
	struct running_merge *rm; /* a process of several lanes: them merged */
	int store_fd;
	uint32_t lane;
	int have_lane;
	uint64_t *at; /* per seq: its store slot + 1; 0 before it is stored */
	uint64_t nat;
	uint64_t next_seq; /* the chunk read next, from record next_slot on */
	uint32_t next_slot;
	unsigned char *buf; /* one chunk */
};

static void stop(struct alongside *g)
{
	if (!g->gr)
		return;
	running_merge_free(g->rm);
	g->rm = NULL;
	grouping_free(g->gr);
	free(g->gr);
	g->gr = NULL;
	__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	writer_fail_reset(); /* the process is grouped at its end instead, which says why */
}

/* Reads chunk seq's copy from store slot at into g->buf; its records, or
 * NULL when the copy is not the chunk's. */
static const struct scope_rec *read_copy(struct alongside *g, uint64_t seq, uint64_t at)
{
	return store_chunk_read(g->store_fd, &g->copy_lock, g->a.hdr->chunk_bytes, g->lane, seq, at,
				g->buf);
}

/* The lanes the process has now, for the grouping's reading. */
static void see_lanes(struct alongside *g)
{
	uint32_t lanes = __atomic_load_n(&g->a.hdr->nlanes, __ATOMIC_ACQUIRE);
	g->a.nlanes = lanes < g->a.hdr->lane_capacity ? lanes : g->a.hdr->lane_capacity;
}

/* Reads the chunks in order while the next one is in the store. */
static void advance(struct alongside *g)
{
	while (g->gr && !__atomic_load_n(&g->quit, __ATOMIC_RELAXED) && g->next_seq < g->nat &&
	       g->at[g->next_seq]) {
		const struct scope_rec *r = read_copy(g, g->next_seq, g->at[g->next_seq] - 1);
		uint32_t stopped = 0;

		see_lanes(g);
		if (!r ||
		    group_running(g->gr, r, g->next_slot, g->next_seq, g->lane, &stopped) != 0) {
			stop(g);
			return;
		}
		if (stopped < g->a.recs_per_chunk && r[stopped].fn) {
			g->next_slot = stopped; /* read on once the chunk has settled */
			return;
		}
		g->next_seq++;
		g->next_slot = 0;
	}
}

/* Notes that chunk (lane, seq) is in store slot at; 0, or -1 to stop. */
static int note(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at)
{
	if (g->rm)
		return running_merge_note(g->rm, lane, seq, at) != 0 ? -1 : 0;
	if (!g->have_lane) {
		g->lane = lane;
		g->have_lane = 1;
	}
	if (lane != g->lane)
		return -1; /* a second thread: its calls interleave with the first's */
	if (scope_grow_zeroed((void **)&g->at, &g->nat, (uint64_t)seq + 1, sizeof *g->at) != 0)
		return -1;
	g->at[seq] = at + 1;
	return 0;
}

/* A process of several lanes: groups what the chunks stored allow. */
static void merge_on(struct alongside *g)
{
	see_lanes(g);
	if (running_merge_go(g->rm) != 0)
		stop(g);
}

static void stored(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at)
{
	if (!g->gr)
		return;
	if (note(g, lane, seq, at) != 0)
		stop(g);
	else if (g->rm)
		merge_on(g);
	else
		advance(g);
}

static void settled(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at)
{
	struct grouping *gr = g->gr;
	const struct scope_rec *r;
	uint64_t kept = 0;

	if (!gr)
		return;
	if (g->rm) {
		see_lanes(g);
		if (running_merge_settled(g->rm, lane, seq, at) != 0)
			stop(g);
		else
			merge_on(g);
		return;
	}
	if (note(g, lane, seq, at) != 0 || !(r = read_copy(g, seq, at))) {
		stop(g);
		return;
	}
	for (uint64_t i = 0; i < gr->nlater; i++) {
		int rc = gr->later[i].c == seq
				 ? group_resolve(gr, &gr->later[i], &r[gr->later[i].slot])
				 : 1;
		if (rc < 0) {
			stop(g);
			return;
		}
		if (rc > 0)
			gr->later[kept++] = gr->later[i];
	}
	gr->nlater = kept;
	if (seq == g->next_seq)
		advance(g);
}

/* The thread: the notes, in the order they came, until told to quit. */
static void *group(void *arg)
{
	struct alongside *g = arg;
	struct note *mine = NULL;
	uint64_t cap = 0;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5);
	/* the chunks copied before it started */
	if (g->rm)
		merge_on(g);
	else
		advance(g);
	pthread_mutex_lock(&g->lock);
	for (;;) {
		size_t n;
		while (!g->nnotes && !__atomic_load_n(&g->quit, __ATOMIC_RELAXED))
			pthread_cond_wait(&g->wake, &g->lock);
		if (__atomic_load_n(&g->quit, __ATOMIC_RELAXED))
			break;
		if (scope_grow((void **)&mine, &cap, g->nnotes, sizeof *mine) != 0)
			break;
		n = g->nnotes;
		memcpy(mine, g->notes, n * sizeof *mine);
		g->nnotes = 0;
		pthread_mutex_unlock(&g->lock);
		for (size_t i = 0; i < n && g->gr && !__atomic_load_n(&g->quit, __ATOMIC_RELAXED);
		     i++)
			(mine[i].settled ? settled : stored)(g, mine[i].lane, mine[i].seq,
							     mine[i].at);
		pthread_mutex_lock(&g->lock);
		if (!g->gr)
			break;
	}
	g->done = !g->gr;
	pthread_mutex_unlock(&g->lock);
	free(mine);
	return NULL;
}

static void tell(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at, int settled)
{
	pthread_mutex_lock(&g->lock);
	if (scope_grow((void **)&g->notes, &g->cap, g->nnotes + 1, sizeof *g->notes) != 0) {
		__atomic_store_n(&g->quit, 1, __ATOMIC_RELAXED);
		g->done = 1; /* grouped at the end instead */
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->lock);
		return;
	}
	g->notes[g->nnotes++] = (struct note){lane, seq, at, settled};
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
}

void alongside_stored(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at)
{
	tell(g, lane, seq, at, 0);
}

void alongside_settled(struct alongside *g, uint32_t lane, uint32_t seq, uint64_t at)
{
	tell(g, lane, seq, at, 1);
}

void alongside_copy_begin(struct alongside *g)
{
	pthread_mutex_lock(&g->copy_lock);
}

void alongside_copy_end(struct alongside *g)
{
	pthread_mutex_unlock(&g->copy_lock);
}

int alongside_live(struct alongside *g)
{
	int done;

	pthread_mutex_lock(&g->lock);
	done = g->done;
	pthread_mutex_unlock(&g->lock);
	return !done;
}

uint64_t alongside_calls(const struct alongside *g)
{
	return !g->started && g->gr ? g->gr->n : 0;
}

static int alongside_room(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED) < MAX_LIVE;
}

/* Stops the thread; what it had not read is read at the end. */
void alongside_pause(struct alongside *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->lock);
	__atomic_store_n(&g->quit, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	g->started = 0;
}

/*
 * Grouping starts once the chunks copied hold a window of calls (fewer are
 * grouped fast at the end) and the process has run 10 ms: its start and
 * now then give a clock rate good to half a part per million (rates over
 * 10 ms spans were within 0.5 ppm of a 3 s span's here), which every later
 * write of the arena uses too (see tick_clock_init).
 */
#define GROUP_AFTER_NS 10000000u

int alongside_due(const struct scope_arena_header *h, uint64_t calls)
{
	const char *on = getenv("SCOPE_WRITER_ALONGSIDE");
	struct timespec now;

	if ((on && strcmp(on, "0") == 0) || !alongside_room() || calls <= window_calls() ||
	    clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 0;
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec >=
	       h->start_mono_ns + GROUP_AFTER_NS;
}

struct alongside *alongside_open(const char *path, int fd, int store_fd,
				 struct scope_arena_header *h, uint64_t size)
{
	struct alongside *g = calloc(1, sizeof *g);
	char dir[PATH_MAX];
	const char *dirs[2] = {NULL, NULL};
	const char *slash = strrchr(path, '/');
	uint64_t stored = __atomic_load_n(&h->store_chunks, __ATOMIC_ACQUIRE);

	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->copy_lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	g->store_fd = store_fd;
	g->a = (struct arena){
		.hdr = h,
		.base = (const char *)h,
		.size = size,
		.recs_per_chunk = (uint32_t)((h->chunk_bytes - sizeof(struct scope_chunk_head)) /
					     sizeof(struct scope_rec)),
		.fd = fd,
		.store_fd = -1};
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (h->ncounters || h->ntasks || !(g->buf = malloc(h->chunk_bytes))) {
		alongside_free(g);
		return NULL;
	}
	tick_clock_init(&g->clock, &g->a);
	dirs[0] = dir[0] ? dir : "/";
	if (!(g->gr = grouping_running(&g->a, &g->clock, dirs, window_calls()))) {
		alongside_free(g);
		return NULL;
	}
	see_lanes(g);
	if (g->a.nlanes > 1 &&
	    !(g->rm = running_merge_open(g->gr, &g->a, &g->clock, store_fd, &g->copy_lock))) {
		stop(g);
		alongside_free(g);
		return NULL;
	}
	__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	/* The chunks taken before: their heads in the store say which they are. */
	for (uint64_t k = 0; k < stored && g->gr; k++) {
		struct scope_chunk_head ch;
		if (pread(store_fd, &ch, sizeof ch, (off_t)(k * h->chunk_bytes)) !=
			    (ssize_t)sizeof ch ||
		    ch.magic != SCOPE_CHUNK_MAGIC || note(g, ch.lane, ch.seq, k) != 0)
			stop(g);
	}
	if (!g->gr || pthread_create(&g->thread, NULL, group, g) != 0) {
		alongside_free(g);
		return NULL;
	}
	g->started = 1;
	return g;
}

int alongside_collect(struct alongside *g, const struct arena *a, const struct tick_clock *c,
		      const struct module *mods, size_t nmods, uint64_t window, struct profile *p)
{
	alongside_pause(g);
	if (!g->gr)
		return -2;
	if (g->rm) {
		struct lane_pos pos[RUNNING_MERGE_LANES];
		uint32_t n = running_merge_positions(g->rm, pos);
		return collect_resume_lanes(g->gr, pos, n, a, c, mods, nmods, window, p);
	}
	return collect_resume(g->gr, g->lane, g->next_seq, g->next_slot, a, c, mods, nmods, window,
			      p);
}

void alongside_free(struct alongside *g)
{
	if (!g)
		return;
	alongside_pause(g);
	stop(g);
	free(g->notes);
	free(g->at);
	free(g->buf);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->copy_lock);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
