/* SPDX-License-Identifier: MIT */
/* Maps an arena file read-only and checks that its layout is consistent. */
#define _GNU_SOURCE
#include "writer.h"

#include "clock_pair.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int bad(const char *path, const char *why)
{
	writer_fail("%s is not a usable scope arena: %s", path, why);
	return -1;
}

/* Whether [off, off + len) lies below end, written so that no sum can wrap. */
static int area_ok(uint64_t off, uint64_t len, uint64_t end)
{
	return off <= end && len <= end - off;
}

/* The areas follow one another in the file's order and stop before the
 * chunks, which start inside the mapping: every offset and length is the
 * file's to forge, so none is added to another unchecked. */
static int layout_ok(const struct scope_arena_header *h, uint64_t size)
{
	return h->cmdline_off >= sizeof *h && h->chunks_off <= size &&
	       area_ok(h->cmdline_off, h->cmdline_bytes, h->modules_off) &&
	       area_ok(h->modules_off, h->modules_cap, h->lanes_off) &&
	       area_ok(h->lanes_off, (uint64_t)h->lane_capacity * sizeof(struct scope_lane),
		       h->names_off) &&
	       area_ok(h->names_off, (uint64_t)h->names_cap * sizeof(struct scope_name),
		       h->tasks_off) &&
	       area_ok(h->tasks_off, (uint64_t)h->tasks_cap * sizeof(struct scope_task),
		       h->crash_off) &&
	       area_ok(h->crash_off, h->crash_cap, h->chunks_off) &&
	       (!h->heap_cap ||
		(h->heap_cap <= (1u << 24) && h->heap_off >= h->crash_off &&
		 h->heap_off - h->crash_off >= h->crash_cap &&
		 area_ok(h->heap_off, h->heap_cap * sizeof(struct scope_heap_region),
			 h->chunks_off) &&
		 h->heap_used <= h->heap_cap)) &&
	       h->chunk_bytes >= 2 * sizeof(struct scope_rec) && h->chunk_bytes <= (1u << 30);
}

/* The header's paths are read as C strings: each must end inside its field. */
static int strings_ok(const struct scope_arena_header *h)
{
	return memchr(h->exe, '\0', sizeof h->exe) && memchr(h->cwd, '\0', sizeof h->cwd) &&
	       memchr(h->output, '\0', sizeof h->output) &&
	       memchr(h->parts, '\0', sizeof h->parts) &&
	       memchr(h->compression, '\0', sizeof h->compression);
}

/* The file is as large as the arena may grow; only the chunks handed out
 * hold anything, so only they are mapped. */
static uint64_t mapped_size(int fd, uint64_t file_size)
{
	struct scope_arena_header h;
	uint64_t used;

	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || h.chunk_bytes == 0 ||
	    h.chunks_off >= file_size)
		return file_size;
	used = h.nchunks < h.chunk_capacity ? h.nchunks : h.chunk_capacity;
	if (h.fallocated >= h.chunks_off && used > (h.fallocated - h.chunks_off) / h.chunk_bytes)
		used = (h.fallocated - h.chunks_off) / h.chunk_bytes;
	if (used > (file_size - h.chunks_off) / h.chunk_bytes)
		return file_size;
	return h.chunks_off + used * h.chunk_bytes;
}

int arena_store_name(const struct scope_arena_header *h, const char *arena, char *out, size_t cap)
{
	if (scope_store_path(h, arena, out, cap) != 0)
		return -1;
	/* moved with its arena, both in one folder */
	if (h->store_dir[0] && access(out, F_OK) != 0) {
		char beside[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];
		if (snprintf(beside, sizeof beside, "%s%s", arena, SCOPE_STORE_SUFFIX) <
			    (int)sizeof beside &&
		    access(beside, F_OK) == 0)
			snprintf(out, cap, "%s", beside);
	}
	return 0;
}

int arena_store_of(const char *arena, char *out, size_t cap)
{
	struct scope_arena_header *h = calloc(1, sizeof *h);
	int fd = open(arena, O_RDONLY | O_CLOEXEC), rc;

	if (!h) {
		if (fd >= 0)
			close(fd);
		return snprintf(out, cap, "%s%s", arena, SCOPE_STORE_SUFFIX) < (int)cap ? 0 : -1;
	}
	if (fd < 0 || pread(fd, h, sizeof *h, 0) != (ssize_t)sizeof *h)
		memset(h, 0, sizeof *h);
	if (fd >= 0)
		close(fd);
	rc = arena_store_name(h, arena, out, cap);
	free(h);
	return rc;
}

/* The arena's store, when the run's writer took chunks into it while the
 * program ran: without it those calls would be missing. */
static int open_store(struct arena *a, const char *path)
{
	char store[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];
	uint64_t n = __atomic_load_n(&a->hdr->store_chunks, __ATOMIC_ACQUIRE);
	struct stat st;
	int fd = -1;

	if (!n)
		return 0;
	if (arena_store_name(a->hdr, path, store, sizeof store) != 0)
		snprintf(store, sizeof store, "%s%s", path, SCOPE_STORE_SUFFIX);
	if ((fd = open(store, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
		writer_fail("cannot open %s, which holds %llu chunks of %s's records: %s (keep it "
			    "where the arena's header says, or beside the arena)",
			    store, (unsigned long long)n, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* A store cut short (a full disk) holds fewer. */
	if (n > (uint64_t)st.st_size / a->hdr->chunk_bytes)
		n = (uint64_t)st.st_size / a->hdr->chunk_bytes;
	a->store_size = n * a->hdr->chunk_bytes;
	a->store = n ? mmap(NULL, a->store_size, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	if (a->store == MAP_FAILED) {
		a->store = NULL;
		writer_fail("cannot map %s: %s", store, strerror(errno));
		close(fd);
		return -1;
	}
	a->store_fd = fd;
	a->store_nchunks = n;
	return 0;
}

int arena_open_fd(struct arena *a, const char *path, int fd)
{
	struct stat st;
	const struct scope_arena_header *h;

	memset(a, 0, sizeof *a);
	a->fd = fd >= 0 ? fd : open(path, O_RDWR | O_CLOEXEC);
	if (a->fd < 0 && (errno == EACCES || errno == EROFS))
		a->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (a->fd < 0) {
		writer_fail("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	/* The run's writer may be taking chunks into the store while the
	 * program runs: it does so holding this lock, and tries it without
	 * waiting, so this writer reads the store and the arena in a state
	 * that no copy is halfway through. */
	while (flock(a->fd, LOCK_EX) != 0 && errno == EINTR)
		;
	if (fstat(a->fd, &st) != 0 || (uint64_t)st.st_size < sizeof(struct scope_arena_header)) {
		close(a->fd);
		return bad(path, "too short");
	}
	a->size = mapped_size(a->fd, (uint64_t)st.st_size);
	a->base = mmap(NULL, a->size, PROT_READ, MAP_SHARED, a->fd, 0);
	if (a->base == MAP_FAILED) {
		writer_fail("cannot map %s: %s", path, strerror(errno));
		close(a->fd);
		return -1;
	}
	h = a->hdr = (const struct scope_arena_header *)a->base;
	if (memcmp(h->magic, SCOPE_ARENA_MAGIC, sizeof h->magic) != 0) {
		arena_close(a);
		return bad(path, "wrong magic");
	}
	if (h->version != SCOPE_ARENA_VERSION) {
		arena_close(a);
		return bad(path, "written by another version of scope");
	}
	if (!layout_ok(h, a->size)) {
		arena_close(a);
		return bad(path, "inconsistent layout");
	}
	if (!strings_ok(h)) {
		arena_close(a);
		return bad(path, "a path in its header has no end");
	}
	a->nchunks = __atomic_load_n(&h->nchunks, __ATOMIC_ACQUIRE);
	if (a->nchunks > h->chunk_capacity)
		a->nchunks = h->chunk_capacity;
	if (a->nchunks > (a->size - h->chunks_off) / h->chunk_bytes)
		a->nchunks = (a->size - h->chunks_off) / h->chunk_bytes;
	/* Chunks handed out when the disk was full were never backed: on tmpfs
	 * even reading them would fault. */
	if (h->fallocated >= h->chunks_off &&
	    a->nchunks > (h->fallocated - h->chunks_off) / h->chunk_bytes)
		a->nchunks = (h->fallocated - h->chunks_off) / h->chunk_bytes;
	a->nlanes = __atomic_load_n(&h->nlanes, __ATOMIC_ACQUIRE);
	if (a->nlanes > h->lane_capacity)
		a->nlanes = h->lane_capacity;
	a->nnames = __atomic_load_n(&h->nnames, __ATOMIC_ACQUIRE);
	if (a->nnames > h->names_cap)
		a->nnames = h->names_cap;
	a->ntasks = __atomic_load_n(&h->ntasks, __ATOMIC_ACQUIRE);
	if (a->ntasks > h->tasks_cap)
		a->ntasks = h->tasks_cap;
	/* counters whose names are not all whole are not read at all */
	a->ncounters = h->ncounters <= SCOPE_MAX_COUNTERS ? h->ncounters : 0;
	for (uint32_t k = 0; k < a->ncounters; k++)
		if (!memchr(h->counters[k], '\0', sizeof h->counters[k]))
			a->ncounters = 0;
	a->recs_per_chunk = (uint32_t)((h->chunk_bytes - sizeof(struct scope_chunk_head)) /
				       sizeof(struct scope_rec));
	if (open_store(a, path) != 0) {
		arena_close(a);
		return -1;
	}
	return 0;
}

int arena_open(struct arena *a, const char *path)
{
	return arena_open_fd(a, path, -1);
}

void arena_close(struct arena *a)
{
	if (a->base && a->base != MAP_FAILED)
		munmap((void *)a->base, a->size);
	if (a->store)
		munmap((void *)a->store, a->store_size);
	if (a->store && a->store_fd >= 0)
		close(a->store_fd);
	a->store = NULL;
	a->store_nchunks = 0;
	if (a->fd >= 0)
		close(a->fd);
	a->base = NULL;
	a->fd = -1;
}

void arena_release_records(const struct arena *a)
{
	uint64_t off = a->hdr->chunks_off;
	if (off < a->size)
		madvise((char *)a->base + off, a->size - off, MADV_DONTNEED);
	if (a->store)
		madvise((char *)a->store, a->store_size, MADV_DONTNEED);
}

static int by_lo(const void *x, const void *y)
{
	const struct module *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* A module line's path back as the file is named (see the arena's
 * modules area: \n and \\ stand for a newline and a backslash). */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == '\\'))
			*out++ = *++s == 'n' ? '\n' : '\\';
		else
			*out++ = *s;
	}
	*out = '\0';
}

static int is_known(const struct module *m, size_t n, uint64_t bias, uint64_t lo, uint64_t hi,
		    uint64_t unload, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].bias == bias && m[i].lo == lo && m[i].hi == hi && m[i].unload == unload &&
		    strcmp(m[i].path, path) == 0)
			return 1;
	return 0;
}

size_t modules_parse(const struct arena *a, struct module **out)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t len = h->modules_len < h->modules_cap ? h->modules_len : h->modules_cap;
	const char *p = a->base + h->modules_off, *end = p + len;
	size_t n = 0, cap = 0;
	struct module *m = NULL;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[2 * SCOPE_PATH_BYTES + 256], id[130];
		unsigned long bias, lo, hi;
		unsigned long long unload;
		int off = 0;
		if (!nl || (size_t)(nl - p) >= sizeof line)
			break; /* a line cut short when the area filled */
		memcpy(line, p, (size_t)(nl - p));
		line[nl - p] = '\0';
		p = nl + 1;
		if (sscanf(line, "%lx %lx %lx %129s %llx %n", &bias, &lo, &hi, id, &unload, &off) <
			    5 ||
		    !off)
			continue;
		unescape(line + off);
		if (is_known(m, n, bias, lo, hi, unload, line + off))
			continue; /* captured at start-up and again at exit */
		if (n == cap) {
			struct module *grown = realloc(m, (cap = cap ? 2 * cap : 32) * sizeof *m);
			if (!grown)
				break;
			m = grown;
		}
		m[n].path = strdup(line + off);
		m[n].build_id = strdup(strcmp(id, "-") == 0 ? "" : id);
		m[n].bias = bias;
		m[n].lo = lo;
		m[n].hi = hi;
		m[n].unload = unload;
		n++;
	}
	if (n)
		qsort(m, n, sizeof *m, by_lo);
	*out = m;
	return n;
}

void modules_free(struct module *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].path);
		free(m[i].build_id);
	}
	free(m);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t read_tick(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return mono_ns();
#endif
}

/*
 * The tick rate comes from two readings of the tick counter and
 * CLOCK_MONOTONIC taken together (lib/clock_pair.h): at the program's
 * start and at its stop, or, for runs shorter than MIN_SPAN, now (the
 * writer runs on the same machine right after). Rates so taken over 1 ms
 * spans were within 4 to 10 parts per million of a 3 s span's here, over
 * 5 ms within 2, over 50 ms within 0.2: a time in a run that short or a
 * few times longer is off by tens of ns at most. A longer span would cost
 * every process shorter than it a wait of the writer's: a run of many
 * short processes (a build) waits for each in turn.
 */
#define MIN_SPAN_NS 1000000u

/* Keeps this writer's calibration reading in the arena (see calib_tick). */
static void save_calibration(const struct arena *a, uint64_t tick, uint64_t mono)
{
	uint64_t v[2] = {tick, mono};
	if (pwrite(a->fd, v, sizeof v, offsetof(struct scope_arena_header, calib_tick)) !=
	    (ssize_t)sizeof v)
		return; /* a read-only arena: the next writer calibrates anew */
}

void arena_mark_published(const struct arena *a)
{
	uint64_t one = 1;
	if (pwrite(a->fd, &one, sizeof one, offsetof(struct scope_arena_header, published)) !=
	    (ssize_t)sizeof one)
		return; /* read-only: a later recovery writes it once more, no harm */
}

void arena_mark_reported(const struct arena *a)
{
	uint32_t one = 1;
	if (pwrite(a->fd, &one, sizeof one, offsetof(struct scope_arena_header, reported)) !=
	    (ssize_t)sizeof one)
		return; /* read-only: the library says its own line too */
}

void tick_clock_init(struct tick_clock *c, const struct arena *a)
{
	const struct scope_arena_header *h = a->hdr;
	uint64_t t1 = h->stop_tick, n1 = h->stop_mono_ns;

	c->start_tick = h->start_tick;
	if (h->clock_source != SCOPE_CLOCK_TSC) {
		c->mult = UINT64_C(1) << 32;
		c->hz = 1e9;
		return;
	}
	if (h->calib_tick) {
		t1 = h->calib_tick;
		n1 = h->calib_mono_ns;
	} else if (h->state != SCOPE_ARENA_STOPPED || n1 < h->start_mono_ns + MIN_SPAN_NS) {
		uint64_t now;
		/* a start ahead of now is another boot's clock (or a damaged
		 * arena): not waited for, the fallback below applies */
		while ((now = mono_ns()) < h->start_mono_ns + MIN_SPAN_NS &&
		       now >= h->start_mono_ns) {
			struct timespec ts = {0, (long)(h->start_mono_ns + MIN_SPAN_NS - now)};
			nanosleep(&ts, NULL);
		}
		clock_pair(read_tick, mono_ns, &t1, &n1);
		save_calibration(a, t1, n1);
	}
	if (t1 <= h->start_tick || n1 <= h->start_mono_ns) {
		c->mult = UINT64_C(1) << 32;
		c->hz = 1e9;
		return;
	}
	c->mult = (uint64_t)((((unsigned __int128)(n1 - h->start_mono_ns)) << 32) /
			     (t1 - h->start_tick));
	c->hz = (double)(t1 - h->start_tick) * 1e9 / (double)(n1 - h->start_mono_ns);
}
