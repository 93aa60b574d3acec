/* SPDX-License-Identifier: MIT */
/* Heap tracking (SCOPE_HEAP=1): the allocator's calls, each block charged to the innermost
 * recorded call of the thread that allocated it, counted per region in the arena. */
#define _GNU_SOURCE
#include "state.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* Exported and, unlike the other wrappers, not bound to the library's own
 * calls (heap.list): its allocations (strdup's, asprintf's, its own) go
 * through the global lookup as the C library's do, and meet the same
 * allocator, a sanitizer's preloaded first, or these. */
#define SCOPE_HEAP_EXPORT SCOPE_EXPORT

typedef void *malloc_fn(size_t);
typedef void *calloc_fn(size_t, size_t);
typedef void *realloc_fn(void *, size_t);
typedef void free_fn(void *);
typedef int posix_memalign_fn(void **, size_t, size_t);
typedef void *aligned_fn(size_t, size_t);

static malloc_fn *real_malloc;
static calloc_fn *real_calloc;
static realloc_fn *real_realloc;
static free_fn *real_free;
static posix_memalign_fn *real_posix_memalign;
static aligned_fn *real_aligned_alloc, *real_memalign;
static malloc_fn *real_new, *real_new_array;
static free_fn *real_delete, *real_delete_array;

/*
 * dlsym may allocate (its error buffer) while the originals are being
 * looked up: those calls are served from here, and their blocks are never
 * given back. Aligned to 16 as malloc's are.
 */
static char boot[64 << 10] __attribute__((aligned(64)));
static size_t boot_used;
static int resolving;

static SCOPE_NOINST void *boot_alloc(size_t n, size_t align)
{
	size_t at, end, used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);

	if (align < 16)
		align = 16;
	/* another thread may be served from here at the same time */
	do {
		at = (used + align - 1) & ~(align - 1);
		end = at + ((n + 15) & ~(size_t)15);
		if (end > sizeof boot || end < at)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &used, end, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return boot + at;
}

static SCOPE_NOINST int in_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

void scope_heap_resolve(void)
{
	if (real_free || __atomic_load_n(&resolving, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&resolving, 1, __ATOMIC_RELAXED);
	real_malloc = (malloc_fn *)dlsym(RTLD_NEXT, "malloc");
	real_calloc = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
	real_realloc = (realloc_fn *)dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = (posix_memalign_fn *)dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = (aligned_fn *)dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = (aligned_fn *)dlsym(RTLD_NEXT, "memalign");
	/* C++'s, when the program has a C++ runtime */
	real_new = (malloc_fn *)dlsym(RTLD_NEXT, "_Znwm");
	real_new_array = (malloc_fn *)dlsym(RTLD_NEXT, "_Znam");
	real_delete = (free_fn *)dlsym(RTLD_NEXT, "_ZdlPv");
	real_delete_array = (free_fn *)dlsym(RTLD_NEXT, "_ZdaPv");
	/* free last, and only with the three it goes with: ready() reads it */
	if (real_malloc && real_calloc && real_realloc)
		__atomic_store_n(&real_free, (free_fn *)dlsym(RTLD_NEXT, "free"), __ATOMIC_RELEASE);
	__atomic_store_n(&resolving, 0, __ATOMIC_RELAXED);
}

/* ---- The tables ---------------------------------------------------------- */

/* A live block: its address, size and the region it is charged to. */
struct block {
	uintptr_t ptr; /* 0: empty, 1: a block freed since */
	uint64_t size;
	uint32_t region;
};

#define TOMB ((uintptr_t)1)

static struct {
	int lock;
	int on;		 /* tracking: from scope_heap_start to scope_heap_stop */
	struct block *v; /* open addressing, linear probing, in private anonymous memory */
	size_t cap, used, tombs;
	struct scope_heap_region *regions; /* in the arena */
	uint64_t nregions, capacity;
	uint32_t *index; /* fn to region, private */
	size_t index_cap;
	struct site *sites; /* (region, call site) to its bytes, private */
	size_t sites_cap, nsites;
	uint64_t live, peak;
	struct scope_arena_header *hdr;
} heap;

/* Set while this thread is inside tracking: a signal handler that allocates
 * then passes its call on uncounted instead of waiting for itself. */
static __thread int heap_inside __attribute__((tls_model("initial-exec")));
/* What C++'s new or delete on this thread is doing while its original,
 * which calls malloc or free, runs: the block is counted once, at the
 * program's call (see cxx_new). heap_made is the block the original of
 * new made, not counted yet. */
enum { QUIET_NO, QUIET_NEW, QUIET_DELETE };
static __thread int heap_quiet __attribute__((tls_model("initial-exec")));
static __thread void *heap_made __attribute__((tls_model("initial-exec")));

static SCOPE_NOINST void lock(void)
{
	while (__atomic_exchange_n(&heap.lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&heap.lock, __ATOMIC_RELAXED))
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#else
			;
#endif
}

static SCOPE_NOINST void unlock(void)
{
	__atomic_store_n(&heap.lock, 0, __ATOMIC_RELEASE);
}

static SCOPE_NOINST size_t slot_of(uintptr_t ptr, size_t cap)
{
	uint64_t h = (uint64_t)ptr * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(h >> 20) & (cap - 1);
}

/* The table twice as large (or as large, rid of freed slots). */
static SCOPE_NOINST int grow(void)
{
	size_t cap = heap.used * 4 > heap.cap ? heap.cap * 2 : heap.cap;
	struct block *v = mmap(NULL, cap * sizeof *v, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (v == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < heap.cap; i++) {
		size_t k;
		if (heap.v[i].ptr <= TOMB)
			continue;
		for (k = slot_of(heap.v[i].ptr, cap); v[k].ptr; k = (k + 1) & (cap - 1))
			;
		v[k] = heap.v[i];
	}
	munmap(heap.v, heap.cap * sizeof *heap.v);
	heap.v = v;
	heap.cap = cap;
	heap.tombs = 0;
	return 0;
}

/* The region of fn, made when new; the last one when the table is full.
 * index maps fn to its region + 1 (0: empty), twice the regions' room. */
static SCOPE_NOINST uint32_t region_of(uint64_t fn)
{
	size_t mask = heap.index_cap - 1, k = slot_of((uintptr_t)fn, heap.index_cap);

	for (; heap.index[k]; k = (k + 1) & mask)
		if (heap.regions[heap.index[k] - 1].fn == fn)
			return heap.index[k] - 1;
	if (heap.nregions == heap.capacity)
		return (uint32_t)(heap.capacity - 1);
	heap.regions[heap.nregions].fn = fn;
	heap.index[k] = (uint32_t)++heap.nregions;
	__atomic_store_n(&heap.hdr->heap_used, heap.nregions, __ATOMIC_RELEASE);
	return (uint32_t)(heap.nregions - 1);
}

/* A call site's bytes in one region: site 0 is an empty slot. */
struct site {
	uint64_t site;
	uint64_t bytes, allocations;
	uint32_t region;
};

/* The site's entry in the table of sites, made when new; NULL when the
 * table is full and cannot grow. */
static SCOPE_NOINST struct site *site_of(uint32_t region, uint64_t site)
{
	uintptr_t key = (uintptr_t)(site ^ ((uint64_t)region << 48));
	size_t k;

	if ((heap.nsites + 1) * 2 > heap.sites_cap) {
		size_t cap = heap.sites_cap * 2;
		struct site *v = mmap(NULL, cap * sizeof *v, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v == MAP_FAILED)
			return NULL;
		for (size_t i = 0; i < heap.sites_cap; i++) {
			const struct site *x = &heap.sites[i];
			if (!x->site)
				continue;
			for (k = slot_of((uintptr_t)(x->site ^ ((uint64_t)x->region << 48)), cap);
			     v[k].site; k = (k + 1) & (cap - 1))
				;
			v[k] = *x;
		}
		munmap(heap.sites, heap.sites_cap * sizeof *heap.sites);
		heap.sites = v;
		heap.sites_cap = cap;
	}
	for (k = slot_of(key, heap.sites_cap); heap.sites[k].site;
	     k = (k + 1) & (heap.sites_cap - 1))
		if (heap.sites[k].site == site && heap.sites[k].region == region)
			return &heap.sites[k];
	heap.sites[k] = (struct site){site, 0, 0, region};
	heap.nsites++;
	return &heap.sites[k];
}

/* Counts size bytes from site in region r, and keeps g's sites those of
 * the most bytes: a site's bytes only grow, so it only moves up. */
static SCOPE_NOINST void note_site(struct scope_heap_region *g, uint32_t r, uint64_t size,
				   uint64_t site)
{
	struct site *x = site_of(r, site ? site : 1);
	int i;

	if (!x)
		return;
	x->bytes += size;
	x->allocations++;
	for (i = 0; i < SCOPE_HEAP_SITES; i++)
		if (g->sites[i].bytes && g->sites[i].address == x->site)
			break;
	if (i == SCOPE_HEAP_SITES) {
		if (x->bytes <= g->sites[SCOPE_HEAP_SITES - 1].bytes)
			return;
		i = SCOPE_HEAP_SITES - 1;
	}
	g->sites[i] = (struct scope_heap_site){x->bytes, x->allocations, x->site};
	for (; i > 0 && g->sites[i - 1].bytes < g->sites[i].bytes; i--) {
		struct scope_heap_site t = g->sites[i - 1];
		g->sites[i - 1] = g->sites[i];
		g->sites[i] = t;
	}
}

/* Forgets the block at ptr, counting its free; *was gets it (ptr 0: none). */
static SCOPE_NOINST void forget(uintptr_t ptr, struct block *was)
{
	size_t k;

	if (was)
		was->ptr = 0;
	for (k = slot_of(ptr, heap.cap); heap.v[k].ptr; k = (k + 1) & (heap.cap - 1)) {
		if (heap.v[k].ptr != ptr)
			continue;
		struct scope_heap_region *g = &heap.regions[heap.v[k].region];
		g->frees++;
		g->live -= heap.v[k].size;
		heap.live -= heap.v[k].size;
		if (was)
			*was = heap.v[k];
		heap.v[k].ptr = TOMB;
		heap.used--;
		heap.tombs++;
		return;
	}
}

static SCOPE_NOINST void remember(uintptr_t ptr, uint64_t size, uint64_t fn, uint64_t site)
{
	uint32_t r;
	size_t k;

	if ((heap.used + heap.tombs + 1) * 2 > heap.cap && grow() != 0) {
		heap.hdr->heap_untracked++;
		return;
	}
	/* an address the allocator gave out again, its free unseen: that free first */
	forget(ptr, NULL);
	r = region_of(fn);
	for (k = slot_of(ptr, heap.cap); heap.v[k].ptr > TOMB; k = (k + 1) & (heap.cap - 1))
		;
	heap.tombs -= heap.v[k].ptr == TOMB;
	heap.v[k] = (struct block){ptr, size, r};
	heap.used++;
	struct scope_heap_region *g = &heap.regions[r];
	g->allocations++;
	g->bytes += size;
	g->live += size;
	if (g->live > g->peak)
		g->peak = g->live;
	heap.live += size;
	if (heap.live > heap.peak)
		heap.peak = heap.live;
	note_site(g, r, size, site);
}

/* The function of the innermost recorded call open on this thread, 0 for
 * none. */
static SCOPE_NOINST uint64_t current_region(struct scope_thread *t)
{
	const struct scope_rec *open = t->shared ? NULL : t->open;
	return open ? scope_rec_addr(open) : 0;
}

/* Whether this call is tracked: on, not the library's own, not inside
 * another on this thread. Takes the lock when it is. */
static SCOPE_NOINST int enter(struct scope_thread *t)
{
	if (!__atomic_load_n(&heap.on, __ATOMIC_ACQUIRE) || t->busy || heap_quiet)
		return 0;
	if (heap_inside) {
		__atomic_fetch_add(&heap.hdr->heap_untracked, 1, __ATOMIC_RELAXED);
		return 0;
	}
	heap_inside = 1;
	lock();
	if (!heap.on) {
		unlock();
		heap_inside = 0;
		return 0;
	}
	return 1;
}

static SCOPE_NOINST void leave(void)
{
	unlock();
	heap_inside = 0;
}

static SCOPE_NOINST void track_alloc(void *p, uint64_t size, void *site)
{
	struct scope_thread *t = &scope_tls;

	if (heap_quiet == QUIET_NEW) {
		/* the first block made inside new's original: its own */
		if (p) {
			heap_made = p;
			heap_quiet = QUIET_NO;
		}
		return;
	}
	if (!p || !enter(t))
		return;
	remember((uintptr_t)p, size, current_region(t), (uint64_t)(uintptr_t)site);
	leave();
}

/* Counts p's free; *was gets its block when was is not NULL (ptr 0: not
 * tracked). */
static SCOPE_NOINST void track_free(void *p, struct block *was)
{
	if (was)
		was->ptr = 0;
	if (p == heap_made)
		heap_made = NULL;
	/* a free is counted even when the library frees the program's block,
	 * and inside new's original (a new-handler's) */
	if (!p || !__atomic_load_n(&heap.on, __ATOMIC_ACQUIRE) || heap_inside ||
	    heap_quiet == QUIET_DELETE)
		return;
	heap_inside = 1;
	lock();
	if (heap.on)
		forget((uintptr_t)p, was);
	leave();
}

/* A realloc that failed: its block, forgotten before, is live again. */
static SCOPE_NOINST void track_kept(const struct block *b)
{
	struct scope_heap_region *g;

	if (!b->ptr || heap_inside || heap_quiet == QUIET_DELETE)
		return;
	heap_inside = 1;
	lock();
	if (heap.on && heap.hdr) {
		g = &heap.regions[b->region];
		g->frees--;
		g->live += b->size;
		heap.live += b->size;
		if ((heap.used + heap.tombs + 1) * 2 <= heap.cap || grow() == 0) {
			size_t k = slot_of(b->ptr, heap.cap);
			for (; heap.v[k].ptr > TOMB; k = (k + 1) & (heap.cap - 1))
				;
			heap.tombs -= heap.v[k].ptr == TOMB;
			heap.v[k] = *b;
			heap.used++;
		}
	}
	leave();
}

/* Zeroed private memory of bytes, or NULL. */
static SCOPE_NOINST void *private_table(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The private tables, given back. */
static SCOPE_NOINST void release(void)
{
	if (heap.v)
		munmap(heap.v, heap.cap * sizeof *heap.v);
	if (heap.index)
		munmap(heap.index, heap.index_cap * sizeof *heap.index);
	if (heap.sites)
		munmap(heap.sites, heap.sites_cap * sizeof *heap.sites);
	heap.v = NULL;
	heap.index = NULL;
	heap.sites = NULL;
	heap.cap = heap.index_cap = heap.sites_cap = heap.nsites = 0;
}

void scope_heap_start(struct scope_process *p)
{
	struct scope_arena_header *h = p->hdr;

	if (!p->cfg.heap || !h || !h->heap_cap)
		return;
	scope_heap_resolve();
	release();
	heap.cap = 1u << 16;
	heap.index_cap = 1;
	while (heap.index_cap < 2 * h->heap_cap)
		heap.index_cap *= 2;
	heap.sites_cap = 1u << 10;
	heap.v = private_table(heap.cap * sizeof *heap.v);
	heap.index = private_table(heap.index_cap * sizeof *heap.index);
	heap.sites = private_table(heap.sites_cap * sizeof *heap.sites);
	if (!heap.v || !heap.index || !heap.sites) {
		scope_log("cannot make the heap tracking's tables: %s; the heap is not tracked",
			  strerror(errno));
		release();
		return;
	}
	heap.hdr = h;
	heap.regions = (struct scope_heap_region *)(p->base + h->heap_off);
	heap.capacity = h->heap_cap;
	heap.nregions = 0;
	heap.used = heap.tombs = 0;
	heap.live = heap.peak = 0;
	__atomic_store_n(&heap.on, 1, __ATOMIC_RELEASE);
}

void scope_heap_stop(struct scope_process *p)
{
	if (!heap.on)
		return;
	lock();
	heap.on = 0;
	p->hdr->heap_live = heap.live;
	p->hdr->heap_peak = heap.peak;
	unlock();
}

/* In a forked child: one thread, the parent's arena gone, its lock maybe
 * held by a thread that does not exist here. */
void scope_heap_forked(void)
{
	heap.lock = 0;
	heap_inside = 0;
	heap.on = 0;
	release();
}

/* ---- The wrappers -------------------------------------------------------- */

#define SITE() __builtin_extract_return_addr(__builtin_return_address(0))

static SCOPE_NOINST int ready(void)
{
	if (__atomic_load_n(&real_free, __ATOMIC_ACQUIRE))
		return 1;
	if (!__atomic_load_n(&resolving, __ATOMIC_RELAXED))
		scope_heap_resolve();
	return real_free != NULL;
}

SCOPE_HEAP_EXPORT void *malloc(size_t n)
{
	void *p;

	if (!ready())
		return boot_alloc(n, 16);
	p = real_malloc(n);
	track_alloc(p, n, SITE());
	return p;
}

SCOPE_HEAP_EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (!ready()) {
		if (size && n > SIZE_MAX / size)
			return NULL;
		return boot_alloc(n * size, 16); /* static: zeroed */
	}
	p = real_calloc(n, size);
	track_alloc(p, (uint64_t)n * size, SITE());
	return p;
}

SCOPE_HEAP_EXPORT void free(void *p)
{
	if (!p || in_boot(p))
		return;
	if (!ready())
		return;
	track_free(p, NULL);
	real_free(p);
}

SCOPE_HEAP_EXPORT void *realloc(void *old, size_t n)
{
	struct block was;
	void *p;

	if (!ready() || in_boot(old)) {
		/* a boot block moves to the real heap (its size is not kept: copy
		 * what can be there) */
		size_t have = old ? (size_t)(boot + sizeof boot - (char *)old) : 0;
		p = ready() ? real_malloc(n) : boot_alloc(n, 16);
		if (p && old)
			memcpy(p, old, have < n ? have : n);
		if (p && ready())
			track_alloc(p, n, SITE());
		return p;
	}
	if (old && n == 0) {
		track_free(old, NULL);
		return real_realloc(old, 0);
	}
	/* The old block is forgotten first: once realloc has moved it, another
	 * thread may be given its address, and that block must stay counted. */
	track_free(old, &was);
	p = real_realloc(old, n);
	if (p)
		track_alloc(p, n, SITE());
	else
		track_kept(&was);
	return p;
}

SCOPE_HEAP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	if (!ready()) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	if (!real_posix_memalign)
		return ENOSYS;
	rc = real_posix_memalign(out, align, n);
	if (rc == 0)
		track_alloc(*out, n, SITE());
	return rc;
}

SCOPE_HEAP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	if (!ready())
		return boot_alloc(n, align);
	if (!real_aligned_alloc) {
		errno = ENOSYS;
		return NULL;
	}
	p = real_aligned_alloc(align, n);
	track_alloc(p, n, SITE());
	return p;
}

SCOPE_HEAP_EXPORT void *memalign(size_t align, size_t n)
{
	void *p;

	if (!ready())
		return boot_alloc(n, align);
	if (!real_memalign) {
		errno = ENOSYS;
		return NULL;
	}
	p = real_memalign(align, n);
	track_alloc(p, n, SITE());
	return p;
}

/*
 * C++'s operator new and delete. The runtime's own calls malloc, where the
 * block would be counted with the runtime as its site: the block is
 * counted here instead, at the program's call. While new's original runs
 * (QUIET_NEW), the first block made on the thread is taken as its own:
 * not counted, kept in heap_made, and the quiet ends there. An exception
 * leaving the original must not leave the thread quiet, and this file has
 * no cleanup to run as it passes (that would need the unwinder, libgcc_s):
 * the quiet has already ended by then, when the runtime made the
 * exception's block. For example, new char[huge]:
 *
 *   _Znam -> QUIET_NEW -> libstdc++'s _Znam -> _Znwm (here, nested) ->
 *   libstdc++'s _Znwm -> malloc(huge): NULL, still QUIET_NEW -> no
 *   new-handler -> __cxa_allocate_exception -> malloc(e): the first block,
 *   not counted, QUIET_NO -> thrown through all of these frames.
 *
 * e is freed after the catch (not found in the table: nothing changes),
 * and the thread's next new is counted. A runtime whose new calls no
 * malloc (an allocator's own) makes nothing: the quiet lasts until the
 * original returns, or the exception's block. A new-handler's frees are
 * counted; the first block it makes before the retry is not, and the
 * block the retry then makes is counted with the runtime as its site.
 */

/* The original of name, looked up again while missing: a C++ runtime
 * loaded later with dlopen. */
static SCOPE_NOINST void *original(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!f && (f = dlsym(RTLD_NEXT, name)) != NULL)
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	return f;
}

static SCOPE_NOINST void *cxx_new(void **slot, const char *name, size_t n, void *site)
{
	malloc_fn *real = (malloc_fn *)original(slot, name);
	int was = heap_quiet;
	void *p;

	if (!real)
		return malloc(n ? n : 1); /* no C++ runtime to ask: the block is malloc's */
	if (was == QUIET_NO)
		heap_made = NULL;
	heap_quiet = QUIET_NEW;
	p = real(n);
	if (heap_quiet != QUIET_NEW && (!p || p != heap_made)) {
		/* counted as it was made: a new-handler made a block first */
		heap_quiet = was == QUIET_NEW ? QUIET_NO : was;
		return p;
	}
	/* the original's own block, not counted yet; nested in another new
	 * (new[] calls new), that one counts it */
	heap_quiet = was;
	if (was != QUIET_NEW)
		track_alloc(p, n, site);
	return p;
}

static SCOPE_NOINST void cxx_delete(void **slot, const char *name, void *p)
{
	free_fn *real = (free_fn *)original(slot, name);
	int was;

	if (!p)
		return;
	track_free(p, NULL);
	was = heap_quiet;
	heap_quiet = QUIET_DELETE;
	if (real)
		real(p);
	else
		free(p);
	heap_quiet = was;
}

SCOPE_HEAP_EXPORT void *_Znwm(size_t n)
{
	ready();
	return cxx_new((void **)&real_new, "_Znwm", n, SITE());
}

SCOPE_HEAP_EXPORT void *_Znam(size_t n)
{
	ready();
	return cxx_new((void **)&real_new_array, "_Znam", n, SITE());
}

SCOPE_HEAP_EXPORT void _ZdlPv(void *p)
{
	cxx_delete((void **)&real_delete, "_ZdlPv", p);
}

SCOPE_HEAP_EXPORT void _ZdaPv(void *p)
{
	cxx_delete((void **)&real_delete_array, "_ZdaPv", p);
}

SCOPE_HEAP_EXPORT void _ZdlPvm(void *p, size_t n)
{
	(void)n;
	cxx_delete((void **)&real_delete, "_ZdlPv", p);
}

SCOPE_HEAP_EXPORT void _ZdaPvm(void *p, size_t n)
{
	(void)n;
	cxx_delete((void **)&real_delete_array, "_ZdaPv", p);
}
