/* SPDX-License-Identifier: MIT */
/* Consuming a running process's full chunks: copied to the store, then freed for reuse. */
#define _GNU_SOURCE
#include "tail.h"

#include "alongside.h"

#include <scope/arena.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/*
 * A chunk's life, as this writer sees it (each arena chunk has a slot):
 *
 *   UNSEEN  handed out, its head not written yet (or never: a full arena)
 *   LIVE    a thread's chunk, (lane, seq); sealed once the lane's thread
 *           has moved past it, as its lane's sealed field tells
 *   PINNED  copied to the store, but some call in it had not returned:
 *           its thread writes that call's end later, so the chunk stays
 *           until every call in it has returned, then is copied again
 *   FREE    marked SCOPE_CHUNK_FREE, zeroed, and on the free ring (or
 *           waiting for room there); LIVE again once a thread takes it
 *
 * A chunk is taken one poll after the poll that first saw it sealed: the
 * calls it holds have had that long to return, and a record a signal
 * handler interrupted has been finished.
 *
 * Example: a thread in chunk 7 (seq 3) moves to chunk 9 (seq 4); the next
 * poll sees lane sealed = 4 and remembers it; the poll after copies chunk
 * 7 to store slot k. main's call, open in it, pins it. When main returns
 * (or the process stops) chunk 7 is still in the arena, newer than store
 * slot k, and the profile reads it from there.
 */
enum { UNSEEN, LIVE, PINNED, FREE };

struct slot {
	uint32_t lane, seq;
	uint64_t store_at;
	uint32_t open_at; /* PINNED: records before it are whole and have returned */
	uint8_t state;
};

struct tail {
	char path[PATH_MAX];
	int fd, store_fd;
	char *base;
	uint64_t size;
	struct scope_arena_header *hdr;
	uint32_t recs;
	struct slot *slot;
	uint64_t nslots;
	uint32_t *sealed; /* per lane: sealed as the poll before saw it */
	uint32_t nsealed;
	uint32_t *waiting; /* freed chunks the ring had no room for */
	uint64_t nwaiting, waiting_cap;
	uint64_t stored, freed;
	uint64_t reserved; /* store bytes allocated ahead; UINT64_MAX: its file system cannot */
	uint64_t taken;	   /* free_head as the last poll saw it: ring slots before it were taken */
	int broken;	   /* the store cannot be written: consume nothing more */
	/* Grouping the calls as their chunks are copied (alongside.h), once
	 * there are enough of them to matter; tried once. */
	struct alongside *ag;
	int ag_tried;
	uid_t uid; /* the arena's owner: the store is made theirs */
	gid_t gid;
};

const char *tail_path(const struct tail *t)
{
	return t->path;
}

uint64_t tail_stored(const struct tail *t)
{
	return t->stored;
}

uint64_t tail_freed(const struct tail *t)
{
	return t->freed;
}

/* Whether the header's layout fits a file of size bytes. */
static int layout_fits(const struct scope_arena_header *h, uint64_t size)
{
	return memcmp(h->magic, SCOPE_ARENA_MAGIC, sizeof h->magic) == 0 &&
	       h->version == SCOPE_ARENA_VERSION && h->chunk_bytes >= 4096 &&
	       h->chunk_bytes <= (1u << 30) && h->chunks_off < size &&
	       h->chunk_capacity <= (size - h->chunks_off) / h->chunk_bytes &&
	       h->lanes_off < h->chunks_off &&
	       (uint64_t)h->lane_capacity * sizeof(struct scope_lane) <=
		       h->chunks_off - h->lanes_off;
}

static void say_unread(const struct tail *t)
{
	fprintf(stderr,
		"scope-writer: cannot read %s while its program runs: %s; it is written at "
		"its end\n",
		t->path, strerror(errno));
}

/* Opens the store, made the arena owner's, so that a writer the program
 * starts itself after giving up its privileges reads it as it reads the
 * arena. 0, or -1 with errno set. */
static int open_store(struct tail *t)
{
	char store[PATH_MAX + sizeof SCOPE_STORE_SUFFIX];

	if (scope_store_path(t->hdr, t->path, store, sizeof store) != 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((t->store_fd = open(store, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return -1;
	if (fchown(t->store_fd, t->uid, t->gid) != 0 && errno != EPERM)
		return -1;
	t->reserved = t->stored * t->hdr->chunk_bytes; /* a writer before this one's */
	return 0;
}

struct tail *tail_open(const char *path)
{
	struct tail *t = calloc(1, sizeof *t);
	struct stat st;

	if (!t)
		return NULL;
	t->fd = t->store_fd = -1;
	snprintf(t->path, sizeof t->path, "%s", path);
	if ((t->fd = open(path, O_RDWR | O_CLOEXEC)) < 0 || fstat(t->fd, &st) != 0 ||
	    (uint64_t)st.st_size < SCOPE_ARENA_HEADER_BYTES)
		goto fail;
	t->size = (uint64_t)st.st_size;
	t->base = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->base == MAP_FAILED) {
		t->base = NULL;
		goto fail;
	}
	t->hdr = (struct scope_arena_header *)t->base;
	if (!layout_fits(t->hdr, t->size)) {
		errno = EINVAL;
		goto fail;
	}
	t->recs = (t->hdr->chunk_bytes - (uint32_t)sizeof(struct scope_chunk_head)) /
		  (uint32_t)sizeof(struct scope_rec);
	t->uid = st.st_uid;
	t->gid = st.st_gid;
	/* A writer before this one may have consumed some already; the
	 * chunks it left on the ring are not known to be free here, and are
	 * left there. */
	t->stored = __atomic_load_n(&t->hdr->store_chunks, __ATOMIC_ACQUIRE);
	t->taken = __atomic_load_n(&t->hdr->free_tail, __ATOMIC_ACQUIRE);
	if (t->stored && open_store(t) != 0)
		goto fail;
	return t;
fail:
	say_unread(t);
	tail_close(t);
	return NULL;
}

void tail_close(struct tail *t)
{
	if (!t)
		return;
	alongside_free(t->ag); /* its thread reads the mapping and the store */
	if (t->base)
		munmap(t->base, t->size);
	if (t->fd >= 0)
		close(t->fd);
	if (t->store_fd >= 0)
		close(t->store_fd);
	free(t->slot);
	free(t->sealed);
	free(t->waiting);
	free(t);
}

struct alongside *tail_take_grouping(struct tail *t)
{
	struct alongside *g = t->ag;

	if (g)
		alongside_pause(g); /* before the mapping and the store it reads go */
	t->ag = NULL;
	return g;
}

static struct scope_chunk_head *chunk_at(const struct tail *t, uint64_t i)
{
	return (struct scope_chunk_head *)(t->base + t->hdr->chunks_off + i * t->hdr->chunk_bytes);
}

/* This process's pages of chunk i go: they stay in the page cache. */
static void drop_pages(const struct tail *t, uint64_t i)
{
	madvise(chunk_at(t, i), t->hdr->chunk_bytes, MADV_DONTNEED);
}

/* Chunks handed out and backed by disk: reading past those could fault. */
static uint64_t chunks_out(const struct tail *t)
{
	const struct scope_arena_header *h = t->hdr;
	uint64_t n = __atomic_load_n(&h->nchunks, __ATOMIC_ACQUIRE);
	uint64_t backed = __atomic_load_n(&h->fallocated, __ATOMIC_ACQUIRE);

	if (n > h->chunk_capacity)
		n = h->chunk_capacity;
	backed = backed > h->chunks_off ? (backed - h->chunks_off) / h->chunk_bytes : 0;
	return n < backed ? n : backed;
}

static int grow_slots(struct tail *t, uint64_t n)
{
	struct slot *grown;

	if (n <= t->nslots)
		return 0;
	if (!(grown = realloc(t->slot, n * sizeof *grown)))
		return -1;
	memset(grown + t->nslots, 0, (n - t->nslots) * sizeof *grown);
	t->slot = grown;
	t->nslots = n;
	return 0;
}

/* Whether every call chunk i holds has returned and every record in it is
 * whole (a record a signal handler interrupted gets its start last). The
 * records before the slot's open_at are known to be, and the first that is
 * not is noted there: a chunk pinned under a deep recursion is not read
 * whole at every poll. */
static int settled(struct tail *t, uint64_t i)
{
	const struct scope_rec *r = (const struct scope_rec *)(chunk_at(t, i) + 1);
	uint32_t k = t->slot[i].open_at;

	for (; k < t->recs; k++) {
		uint64_t fn = __atomic_load_n(&r[k].fn, __ATOMIC_ACQUIRE);
		if (!fn)
			return 1;
		if ((fn & SCOPE_REC_ADDR_MASK) < SCOPE_REC_NAMED)
			continue; /* a side record (bytes, task, counters): no call */
		if (!__atomic_load_n(&r[k].start, __ATOMIC_RELAXED) ||
		    (__atomic_load_n(&r[k].end, __ATOMIC_RELAXED) & SCOPE_REC_OPEN)) {
			t->slot[i].open_at = k;
			return 0;
		}
	}
	return 1;
}

/*
 * The store's blocks are allocated ahead, RESERVE_BYTES at a time: a copy
 * into blocks the file system has already allocated costs a third less
 * than one it must allocate for as it goes (ext4: 10 us a 64 KiB chunk
 * instead of 14). The file's size stays that of the chunks copied.
 */
#define RESERVE_BYTES (UINT64_C(32) << 20)

static void reserve(struct tail *t, uint64_t end)
{
	uint64_t to;

	if (end <= t->reserved || t->reserved == UINT64_MAX)
		return;
	to = (end + RESERVE_BYTES - 1) / RESERVE_BYTES * RESERVE_BYTES;
	if (fallocate(t->store_fd, FALLOC_FL_KEEP_SIZE, (off_t)t->reserved,
		      (off_t)(to - t->reserved)) == 0)
		t->reserved = to;
	else
		t->reserved = UINT64_MAX; /* each copy allocates its own, as without */
}

/* Copies chunk i to store slot at; then the arena says the store holds it. */
static int copy_out(struct tail *t, uint64_t i, uint64_t at)
{
	uint64_t cb = t->hdr->chunk_bytes;
	const char *src = (const char *)chunk_at(t, i);
	uint64_t done = 0;

	reserve(t, (at + 1) * cb);
	while (done < cb) {
		ssize_t n = pwrite(t->store_fd, src + done, cb - done, (off_t)(at * cb + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr,
				"scope-writer: cannot copy %s's records out while it runs: %s; the "
				"rest stays in it\n",
				t->path, n < 0 ? strerror(errno) : "short write");
			t->broken = 1;
			return -1;
		}
		done += (uint64_t)n;
	}
	return 0;
}

/* Ring slots are filled again only once taken() has read them: the bound
 * is the head it saw, not the head now (nor, after a writer before this
 * one, slots that writer filled and no thread has taken yet). */
static void push_free(struct tail *t)
{
	struct scope_arena_header *h = t->hdr;
	uint64_t tail = h->free_tail, head = __atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE);
	uint64_t k = 0;

	if (t->taken < head)
		head = t->taken;

	for (; k < t->nwaiting && tail - head < SCOPE_FREE_RING; k++, tail++)
		__atomic_store_n(&h->free_ring[tail % SCOPE_FREE_RING], t->waiting[k],
				 __ATOMIC_RELAXED);
	__atomic_store_n(&h->free_tail, tail, __ATOMIC_RELEASE);
	if (k == 0)
		return; /* also when nothing waits and the list is not yet allocated */
	memmove(t->waiting, t->waiting + k, (t->nwaiting - k) * sizeof *t->waiting);
	t->nwaiting -= k;
}

/* Chunk i, in the store, leaves the arena: marked free before it is
 * zeroed, so that a writer that reads the arena meanwhile takes the
 * store's copy and never a half-zeroed chunk. */
static void free_chunk(struct tail *t, uint64_t i)
{
	struct scope_chunk_head *ch = chunk_at(t, i);

	if (t->nwaiting == t->waiting_cap) {
		uint64_t cap = t->waiting_cap ? 2 * t->waiting_cap : 256;
		uint32_t *grown = realloc(t->waiting, cap * sizeof *grown);
		if (!grown) {
			/* stays in the arena too, read from there; freed later */
			t->slot[i].state = PINNED;
			return;
		}
		t->waiting = grown;
		t->waiting_cap = cap;
	}
	__atomic_store_n(&ch->magic, SCOPE_CHUNK_FREE, __ATOMIC_SEQ_CST);
	memset(ch + 1, 0, t->hdr->chunk_bytes - sizeof *ch);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* The first chunks' pages stay mapped: they come back full, and
	 * dropping them would cost a TLB flush now and page faults then. */
	if (i >= SCOPE_RESIDENT_CHUNKS)
		drop_pages(t, i);
	t->slot[i].state = FREE;
	t->waiting[t->nwaiting++] = (uint32_t)i;
	t->freed++;
}

static void consume(struct tail *t, uint64_t i)
{
	struct slot *s = &t->slot[i];
	int done = settled(t, i);

	if (copy_out(t, i, t->stored) != 0)
		return;
	s->store_at = t->stored++;
	__atomic_store_n(&t->hdr->store_chunks, t->stored, __ATOMIC_RELEASE);
	if (t->ag)
		alongside_stored(t->ag, s->lane, s->seq, s->store_at);
	if (done) {
		free_chunk(t, i);
	} else {
		s->state = PINNED;
		drop_pages(t, i);
	}
}

/* A pinned chunk whose calls have all returned: its store copy made
 * final, it is freed. */
static void unpin(struct tail *t, uint64_t i)
{
	int rc;

	if (!settled(t, i)) {
		drop_pages(t, i);
		return;
	}
	if (t->ag)
		alongside_copy_begin(t->ag);
	rc = copy_out(t, i, t->slot[i].store_at);
	if (t->ag)
		alongside_copy_end(t->ag);
	if (rc != 0)
		return;
	if (t->ag)
		alongside_settled(t->ag, t->slot[i].lane, t->slot[i].seq, t->slot[i].store_at);
	free_chunk(t, i);
}

/* A chunk whose head says it is a thread's now. The head is read with
 * pread: touching the mapping would map the chunk's pages around it into
 * this process until the chunk is consumed. The thread stores the magic
 * last, so it is read first. */
static void see(struct tail *t, uint64_t i)
{
	off_t at = (off_t)((const char *)chunk_at(t, i) - t->base);
	uint64_t magic;
	uint32_t id[2];

	if (pread(t->fd, &magic, sizeof magic,
		  at + (off_t)offsetof(struct scope_chunk_head, magic)) != (ssize_t)sizeof magic ||
	    magic != SCOPE_CHUNK_MAGIC || pread(t->fd, id, sizeof id, at) != (ssize_t)sizeof id)
		return;
	t->slot[i].lane = id[0];
	t->slot[i].seq = id[1];
	t->slot[i].open_at = 0;
	t->slot[i].state = LIVE;
}

/* Each lane's sealed field, kept for the next poll; the previous poll's
 * values are what this one consumes by. */
static int read_sealed(struct tail *t, uint32_t **before)
{
	const struct scope_lane *lanes = (const void *)(t->base + t->hdr->lanes_off);
	uint32_t n = __atomic_load_n(&t->hdr->nlanes, __ATOMIC_ACQUIRE);
	uint32_t *now;

	if (n > t->hdr->lane_capacity)
		n = t->hdr->lane_capacity;
	if (!(now = calloc(n + 1, sizeof *now)))
		return -1;
	for (uint32_t l = 0; l < n; l++)
		if (__atomic_load_n(&lanes[l].used, __ATOMIC_ACQUIRE))
			now[l] = __atomic_load_n(&lanes[l].sealed, __ATOMIC_ACQUIRE);
	*before = t->sealed;
	t->sealed = now;
	t->nsealed = n;
	return 0;
}

/* The process is gone without handing its arena over (killed). */
static int gone(const struct tail *t)
{
	return kill(t->hdr->pid, 0) != 0 && errno == ESRCH;
}

/* The chunks threads took from the ring since the last poll: their heads
 * are read until a thread has claimed them. A chunk still on the ring is
 * not read at all (reading would map it into this process). */
static void taken(struct tail *t)
{
	struct scope_arena_header *h = t->hdr;
	uint64_t head = __atomic_load_n(&h->free_head, __ATOMIC_ACQUIRE);

	if (head < t->taken || head - t->taken > SCOPE_FREE_RING || head > h->free_tail)
		return; /* slots a writer before this one filled, or a forged head */
	for (; t->taken < head; t->taken++) {
		uint32_t i = h->free_ring[t->taken % SCOPE_FREE_RING];
		if (i < t->nslots && t->slot[i].state == FREE)
			t->slot[i].state = UNSEEN;
	}
}

/*
 * Whether the store's file system has room to spare. A chunk copied to the
 * store takes disk space of its own while the arena keeps the space it was
 * backed with, so a writer that copied on a nearly full disk could leave
 * the arena no room to grow, and calls would be lost that were not before.
 * It copies only while more than SPARE_BYTES and the arena's own size are
 * free; below that the arena grows as it would without this writer.
 */
#define SPARE_BYTES (UINT64_C(256) << 20)

static int room(const struct tail *t)
{
	struct statvfs vs;
	uint64_t free_bytes, backed = __atomic_load_n(&t->hdr->fallocated, __ATOMIC_RELAXED);

	if (fstatvfs(t->store_fd, &vs) != 0)
		return 0;
	free_bytes = (uint64_t)vs.f_bavail * vs.f_frsize;
	return free_bytes > SPARE_BYTES && free_bytes - SPARE_BYTES > backed;
}

static int consume_sealed(struct tail *t);

/* Starts grouping the calls as they are copied, once it is worth it
 * (alongside_due); tried once. */
static void maybe_group(struct tail *t)
{
	if (t->ag_tried || t->broken || !alongside_due(t->hdr, t->stored * t->recs))
		return;
	t->ag_tried = 1;
	t->ag = alongside_open(t->path, t->fd, t->store_fd, t->hdr, t->size);
}

int tail_poll(struct tail *t)
{
	int rc;

	if (gone(t))
		return 0;
	/* A writer that reads the arena to write it holds the lock (see
	 * arena_open_fd) from before it reads the store's size to the end. */
	if (flock(t->fd, LOCK_EX | LOCK_NB) != 0)
		return 1;
	rc = consume_sealed(t);
	flock(t->fd, LOCK_UN);
	return rc;
}

/* Chunks handed out before any is copied: 4 MiB of the default 64 KiB,
 * well within those that stay mapped in the program (SCOPE_RESIDENT_CHUNKS). */
#define TAIL_FROM_CHUNKS 64u

/* tail_poll's work, under the arena's lock. */
static int consume_sealed(struct tail *t)
{
	uint32_t nbefore = t->nsealed, *before = NULL;
	uint64_t n;

	/* Stopped: the rest is the writer's that writes it, once handed over. */
	if (t->broken || __atomic_load_n(&t->hdr->state, __ATOMIC_ACQUIRE) == SCOPE_ARENA_STOPPED)
		return 1;
	n = chunks_out(t);
	/* A short process ends before its first chunks would be worth
	 * copying: they stay in the arena, which has room for them, and
	 * the process has no store. */
	if (t->store_fd < 0) {
		if (n < TAIL_FROM_CHUNKS)
			return 1;
		if (open_store(t) != 0) {
			say_unread(t);
			t->broken = 1;
			return 1;
		}
	}
	if (grow_slots(t, n) != 0 || read_sealed(t, &before) != 0)
		return 1;
	taken(t);
	if (!room(t)) {
		free(before);
		push_free(t);
		return 1;
	}
	for (uint64_t i = 0; i < n && !t->broken; i++) {
		struct slot *s = &t->slot[i];
		if (s->state == UNSEEN)
			see(t, i);
		if (s->state == LIVE && s->lane < nbefore && s->seq < before[s->lane])
			consume(t, i);
		else if (s->state == PINNED)
			unpin(t, i);
	}
	free(before);
	push_free(t);
	maybe_group(t);
	if (t->ag && !alongside_live(t->ag)) {
		alongside_free(t->ag);
		t->ag = NULL;
	}
	return 1;
}
