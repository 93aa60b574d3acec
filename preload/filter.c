/* SPDX-License-Identifier: MIT */
/* Record-time filters: which calls are stored as records, and exact sums of the others. */
#define _GNU_SOURCE
#include "filter.h"
#include "filterspec.h"
#include "names.h"
#include "record.h"

#include <scope/aggregate.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * While a filter applies, every call comes here from the hooks' slow
 * branches, which costs a run without filters nothing: a thread that may
 * record has limit SCOPE_LIMIT_FILTER, so every enter fails the hooks'
 * test, and every call stored here has SCOPE_REC_MARKED in its record,
 * so every exit fails its test too. A call the filters keep is stored as
 * a record, as the hooks store it (in the slot the enter hook took); any
 * other is only summed, and its slot given back. Each thread keeps a
 * stack of its open calls (stored or not: a call's self time is its time
 * less that of every call it made), a table of sums by function, which
 * also keeps what the filters decided for the function, and a cache that
 * finds a function's sums at one slot by its address. The decision
 * itself, made once per address and process (names.c's short form and
 * the demangled name, matched against the regular expressions), needs
 * the name: the module's own symbol table (elfsyms.c), the library using
 * no debug-info reader.
 *
 * Worked example with -N b and the calls main > a > b > c: main and a
 * are stored at depths 0 and 1, b is summed (its self time is its time
 * less c's), c is stored at depth 3, its true depth, and a's stored
 * record gets b's time as hidden, which the writer takes off a's self.
 *
 * What a call summed costs, in instructions (bench/filters, -D): the
 * hooks' fast paths up to their failed tests and their jumps here (19 at
 * the enter, 25 at the exit, the two clock reads among them); at the
 * enter, the cache slot, the decision's tests, the slot given back and a
 * stack entry of six stores (33); at the exit, the match of the stack's
 * top, the five sums and the time given to the caller (31).
 */

int scope_filtering;

enum {
	DEC_KNOWN = 0x80,
	DEC_ONLY = 1,	/* matches an SCOPE_ONLY expression */
	DEC_NOT = 2,	/* matches an SCOPE_NOT expression */
	DEC_NOTSUB = 8, /* DEC_NOT with --not-subtree */
};

enum {
	F_STORED = 1,	/* has a record */
	F_PLAIN = 2,	/* went the hooks' way (ignored or dropped there) */
	F_UNSTORED = 4, /* not stored from its entry */
	F_ONLY = 8,	/* counted in only_open */
	F_NOTSUB = 16,	/* counted in notsub_open */
	F_COUNTED = 32, /* stored, and its counters are read (counters.c) */
};

/* A function's sums; its calls' self time is total_all less child, the
 * time of the calls they made. */
struct agg {
	uint64_t fn;
	uint32_t open; /* calls of fn open on the thread */
	uint8_t dec;
	uint64_t calls, total, total_all, child;
	uint64_t min, max, hidden;
};

/* One open call. hidden is the time of the calls it made that were summed
 * (only a stored call's is used). */
struct frame {
	uint64_t fn;
	uintptr_t frame;
	uint64_t start, child;
	struct agg *agg;
	uint64_t hidden; /* not beside child: two adds, not a vector's */
	struct scope_rec *rec;
	uint32_t flags;
	uint32_t unused; /* 64 bytes: an entry is found with a shift */
};
_Static_assert(sizeof(struct frame) == 64, "stack entries are 64 bytes");

#define AGG_BITS   12
#define AGG_CAP	   (1u << AGG_BITS)
#define AGG_FULL   (AGG_CAP / 4 * 3)
#define CACHE_BITS 14
#define CACHE_CAP  (1u << CACHE_BITS)
#define STACK_CAP  (1u << 18)

/* A function's place in the table, kept at one slot by its address: the
 * last function met there. The slot is the address's bits 4 to 17, two
 * instructions: functions start 16 bytes apart at least (aligned, or
 * instrumented and so longer), and code within 256 KiB never shares one. */
struct slot {
	uint64_t fn;
	struct agg *agg;
};
_Static_assert(sizeof(struct slot) == 16, "a slot is 16 bytes");

enum { BLOCK_LIVE = 1, BLOCK_DEAD = 2 };

/* One thread's state, in memory of its own (a few pages are touched). The
 * open calls are stack[1] to *top; stack[0], under the first, is never
 * matched (its fn is 0): every call has an entry below it to add its time
 * to, and an empty stack needs no test of its own. */
struct scope_filter_block {
	struct scope_filter_block *next; /* every block of the process */
	struct frame *top;		 /* the innermost open call, stack when none */
	struct frame *full;		 /* &stack[STACK_CAP]: top there, no room */
	struct frame *store_top;	 /* &stack[store_hi], at most one past full */
	uint32_t state;
	uint32_t nagg;
	uint32_t only_open, notsub_open, base;
	uint32_t store_hi; /* calls at stack depths below it are stored (see limits) */
	int32_t lane;	   /* the thread's, taken when it claimed the block */
	struct slot cache[CACHE_CAP];
	struct agg agg[AGG_CAP];
	struct agg spare[AGG_CAP]; /* the table being rebuilt */
	struct frame stack[1 + STACK_CAP];
};

static inline struct slot *slot_of(struct scope_filter_block *b, uint64_t fn)
{
	return (struct slot *)((char *)b->cache + (fn & ((CACHE_CAP - 1) << 4)));
}

static __thread uint8_t deciding __attribute__((tls_model("initial-exec")));

static struct {
	regex_t only[FILTERSPEC_MAX_PATTERNS], exclude[FILTERSPEC_MAX_PATTERNS];
	int nonly, nnot, not_subtree;
	uint32_t depth;	    /* 0: any */
	uint64_t min_ticks; /* 0: none */
	uint64_t min_ns;
} fc;

static struct scope_filter_block *blocks;
static pthread_mutex_t decide_lock = PTHREAD_MUTEX_INITIALIZER;
typedef char *demangle_fn(const char *, char *, size_t *, int *);
static demangle_fn *demangle;

/* Decisions by address for the whole process: the threads' tables ask
 * here first. Open addressing; a full table decides again. */
#define DEC_BITS 16
#define DEC_CAP	 (1u << DEC_BITS)
static uint64_t *dec_key;
static uint8_t *dec_val;

static inline uint32_t hash(uint64_t fn, unsigned bits)
{
	return (uint32_t)((fn * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

/* ---------------------------------------------------------------------- */
/* Configuration                                                           */

static SCOPE_NOINST int compile_list(const char *var, regex_t *re, int *n)
{
	const char *v = scope_getenv(var), *line, *nl;
	char pattern[1024], why[256];
	int rc;

	if (!v)
		return 0;
	for (line = v; *line; line = nl + (*nl != '\0')) {
		size_t len;
		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		len = (size_t)(nl - line);
		if (!len)
			continue;
		if (len >= sizeof pattern || *n == FILTERSPEC_MAX_PATTERNS) {
			scope_log("%s holds a pattern over %zu bytes or more than %d patterns; "
				  "this run is not profiled",
				  var, sizeof pattern - 1, FILTERSPEC_MAX_PATTERNS);
			return -1;
		}
		memcpy(pattern, line, len);
		pattern[len] = '\0';
		if ((rc = regcomp(&re[*n], pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
			regerror(rc, &re[*n], why, sizeof why);
			scope_log("%s: bad regular expression '%s': %s; this run is not profiled",
				  var, pattern, why);
			return -1;
		}
		++*n;
	}
	return 0;
}

int scope_filter_init(void)
{
	const char *v;

	if (scope_sample_init() != 0)
		return -1;
	if (compile_list("SCOPE_ONLY", fc.only, &fc.nonly) != 0 ||
	    compile_list("SCOPE_NOT", fc.exclude, &fc.nnot) != 0)
		return -1;
	v = scope_getenv("SCOPE_NOT_SUBTREE");
	fc.not_subtree = v && *v && strcmp(v, "0") != 0;
	if ((v = scope_getenv("SCOPE_DEPTH")) && *v && filterspec_depth(v, &fc.depth) != 0) {
		scope_log("SCOPE_DEPTH='%s' is not a depth from 1 to %u; this run is not profiled",
			  v, FILTERSPEC_MAX_DEPTH);
		return -1;
	}
	if ((v = scope_getenv("SCOPE_MIN_DURATION")) && *v &&
	    filterspec_duration(v, &fc.min_ns) != 0) {
		scope_log("SCOPE_MIN_DURATION='%s' is not a duration (say 500, 10us, 2ms or 1s); "
			  "this run is not profiled",
			  v);
		return -1;
	}
	return 0;
}

/* Ticks per ns, measured over a millisecond: only the threshold needs it. */
static SCOPE_NOINST uint64_t ns_to_ticks(uint64_t ns)
{
	uint64_t m0, t0, m1, t1;

	if (!scope_clock_is_tsc)
		return ns;
	m0 = scope_mono_ns();
	t0 = scope_now();
	do
		m1 = scope_mono_ns();
	while (m1 - m0 < 1000000);
	t1 = scope_now();
	return (uint64_t)((double)ns * (double)(t1 - t0) / (double)(m1 - m0) + 0.5);
}

void scope_filter_start(void)
{
	static int once;

	scope_sample_start();
	if (!fc.nonly && !fc.nnot && !fc.depth && !fc.min_ns)
		return;
	if (!once) {
		void *k = mmap(NULL, DEC_CAP * (sizeof *dec_key + 1), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (k == MAP_FAILED) {
			scope_log("no memory for the filters; every call is recorded");
			return;
		}
		dec_key = k;
		dec_val = (uint8_t *)(dec_key + DEC_CAP);
		if (fc.min_ns)
			fc.min_ticks = ns_to_ticks(fc.min_ns);
		if (fc.nonly || fc.nnot) {
			/* C++'s demangler, where the program has one (a C++ runtime
			 * loaded later is not looked for: the names stay mangled) */
			demangle = (demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
			pthread_mutex_lock(&decide_lock);
			scope_elfsyms_load_all();
			pthread_mutex_unlock(&decide_lock);
		}
		once = 1;
	}
	__atomic_store_n(&scope_filtering, 1, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------------- */
/* Decisions                                                               */

static SCOPE_NOINST int matches(const regex_t *re, int n, const char *full, const char *shrt)
{
	for (int i = 0; i < n; i++)
		if (regexec(&re[i], full, 0, NULL, 0) == 0 ||
		    (shrt && regexec(&re[i], shrt, 0, NULL, 0) == 0))
			return 1;
	return 0;
}

static SCOPE_NOINST uint8_t compute(uint64_t fn)
{
	const char *raw;
	char *full = NULL, *shrt;
	uint8_t dec = DEC_KNOWN;
	int status;

	pthread_mutex_lock(&decide_lock);
	raw = scope_elfsyms_name((uintptr_t)fn);
	if (!raw)
		goto out;
	if (demangle && raw[0] == '_' && raw[1] == 'Z')
		full = demangle(raw, NULL, NULL, &status);
	shrt = name_short(full ? full : raw);
	if (matches(fc.only, fc.nonly, full ? full : raw, shrt))
		dec |= DEC_ONLY;
	if (matches(fc.exclude, fc.nnot, full ? full : raw, shrt))
		dec |= fc.not_subtree ? DEC_NOT | DEC_NOTSUB : DEC_NOT;
	free(shrt);
	free(full);
out:
	pthread_mutex_unlock(&decide_lock);
	return dec;
}

/* What the filters say of fn, decided once for the process. A signal
 * handler that interrupts a decision on its thread gets the answer
 * without a name, not cached. */
static SCOPE_NOINST uint8_t decide(uint64_t fn)
{
	uint32_t h = hash(fn, DEC_BITS);
	uint8_t dec;

	if (deciding)
		return DEC_KNOWN;
	for (uint32_t i = 0; i < 64; i++, h = (h + 1) & (DEC_CAP - 1)) {
		uint64_t key = __atomic_load_n(&dec_key[h], __ATOMIC_ACQUIRE), none = 0;
		if (key == fn && (dec = __atomic_load_n(&dec_val[h], __ATOMIC_ACQUIRE)))
			return dec;
		if (key == fn)
			break; /* another thread is deciding it */
		if (key)
			continue;
		if (!__atomic_compare_exchange_n(&dec_key[h], &none, fn, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			if (none != fn)
				continue;
			break;
		}
		deciding = 1;
		dec = compute(fn);
		deciding = 0;
		__atomic_store_n(&dec_val[h], dec, __ATOMIC_RELEASE);
		return dec;
	}
	deciding = 1;
	dec = compute(fn);
	deciding = 0;
	return dec;
}

/* ---------------------------------------------------------------------- */
/* Sums into the arena                                                     */

/* n contiguous slots of t's chunk, moving it to a new chunk when they do
 * not fit; NULL when the arena has none. The thread is busy: no signal
 * handler records on it meanwhile. */
static SCOPE_NOINST struct scope_rec *slots(struct scope_thread *t, uint32_t n)
{
	struct scope_process *p = &scope_proc;
	struct scope_chunk_head *ch;
	struct scope_rec *r = t->cur;

	if (t->chunk_end && r && r + n <= t->chunk_end) {
		t->cur = r + n;
		return r;
	}
	if (t->lane < 0 || !(ch = scope_arena_chunk(p)))
		return NULL;
	ch->lane = (uint32_t)t->lane;
	ch->seq = __atomic_fetch_add(&t->seq, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ch->magic, SCOPE_CHUNK_MAGIC, __ATOMIC_RELEASE);
	r = (struct scope_rec *)(ch + 1);
	t->cur = r + n;
	t->chunk_end = r + p->recs_per_chunk;
	return r;
}

static SCOPE_NOINST void emit(struct scope_thread *t, int32_t lane, const struct agg *a)
{
	struct scope_rec *r;

	if (!a->calls && !a->hidden)
		return;
	if (!(r = slots(t, SCOPE_AGG_RECS))) {
		scope_arena_lost(&scope_proc, SCOPE_LOST_ARENA_FULL);
		return;
	}
	r[0].start = a->fn;
	r[0].end = a->calls;
	r[1] = (struct scope_rec){SCOPE_REC_AGG_2, a->total, a->total_all};
	r[2] = (struct scope_rec){SCOPE_REC_AGG_2, a->total_all - a->child, a->min};
	r[3] = (struct scope_rec){SCOPE_REC_AGG_2, a->max, a->hidden};
	r[4] = (struct scope_rec){SCOPE_REC_AGG_2, (uint64_t)(uint32_t)lane, 0};
	__atomic_store_n(&r[0].fn, SCOPE_REC_AGG, __ATOMIC_RELEASE);
}

static SCOPE_NOINST void clear_sums(struct agg *a)
{
	a->calls = a->total = a->total_all = a->child = a->max = a->hidden = 0;
	a->min = UINT64_MAX;
}

/* Counts b's calls still open (the thread exits or the process stops in
 * them) as calls that end now; only the thread's own stack. */
static SCOPE_NOINST void count_open(struct scope_filter_block *b, uint64_t now)
{
	for (struct frame *e = b->top; e > b->stack; e--) {
		struct agg *a = e->agg;
		uint64_t dur = now > e->start ? now - e->start : 0;
		if (e->flags & F_STORED)
			a->hidden += e->hidden; /* the call stays open in the arena */
		if (!(e->flags & F_UNSTORED))
			continue;
		a->calls++;
		a->total_all += dur;
		a->total += dur; /* approximately: recursions count more than once */
		a->child += e->child;
		a->min = dur < a->min ? dur : a->min;
		a->max = dur > a->max ? dur : a->max;
	}
	b->top = b->stack;
}

/* Puts b's sums into t's chunk, as lane's; they start again from 0. */
static SCOPE_NOINST void flush(struct scope_thread *t, int32_t lane, struct scope_filter_block *b)
{
	for (uint32_t i = 0; i < AGG_CAP; i++) {
		if (!b->agg[i].fn)
			continue;
		emit(t, lane, &b->agg[i]);
		clear_sums(&b->agg[i]);
	}
}

/* ---------------------------------------------------------------------- */
/* The thread's table                                                      */

/* Which depths of b's stack are stored, the functions' own decisions
 * aside: none outside --only's functions or inside a --not-subtree one,
 * and --depth levels from the outermost --only call (or the thread's
 * first). The fast path compares the stack's top with store_top alone. */
static inline void limits(struct scope_filter_block *b)
{
	if ((fc.nonly && !b->only_open) || b->notsub_open)
		b->store_hi = 0;
	else
		b->store_hi = fc.depth ? b->base + fc.depth : UINT32_MAX;
	b->store_top = b->stack + (b->store_hi > STACK_CAP ? STACK_CAP + 1 : b->store_hi);
}

/* The calls open on b's stack: the position of the next. */
static inline uint32_t depth_of(const struct scope_filter_block *b)
{
	return (uint32_t)(b->top - b->stack);
}

static SCOPE_NOINST struct scope_filter_block *claim_block(struct scope_thread *t)
{
	struct scope_filter_block *b;

	for (b = __atomic_load_n(&blocks, __ATOMIC_ACQUIRE); b; b = b->next) {
		uint32_t dead = BLOCK_DEAD;
		if (__atomic_compare_exchange_n(&b->state, &dead, BLOCK_LIVE, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			memset(b->agg, 0, sizeof b->agg);
			memset(b->cache, 0, sizeof b->cache);
			goto ready;
		}
	}
	b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b == MAP_FAILED) {
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			scope_log("no memory for the filters' state of a thread (%zu KiB): its "
				  "calls are recorded as without filters",
				  sizeof *b >> 10);
		return NULL;
	}
	b->state = BLOCK_LIVE;
	b->next = __atomic_load_n(&blocks, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&blocks, &b->next, b, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
ready:
	b->nagg = b->only_open = b->notsub_open = b->base = 0;
	b->top = b->stack;
	b->full = &b->stack[STACK_CAP];
	b->stack[0].fn = 0;
	limits(b);
	b->lane = t->lane;
	return b;
}

static SCOPE_NOINST uint32_t insert(struct agg *table, uint64_t fn)
{
	uint32_t i = hash(fn, AGG_BITS);

	while (table[i].fn && table[i].fn != fn)
		i = (i + 1) & (AGG_CAP - 1);
	table[i].fn = fn;
	return i;
}

/* A full table: its sums go to the arena, and only the functions with
 * calls open stay, at new places (the stack's entries are moved to them,
 * and the cache forgets the old ones). */
static SCOPE_NOINST void rebuild(struct scope_thread *t, struct scope_filter_block *b)
{
	flush(t, t->lane, b);
	memset(b->spare, 0, sizeof b->spare);
	b->nagg = 0;
	for (uint32_t i = 0; i < AGG_CAP; i++) {
		if (!b->agg[i].fn || !b->agg[i].open)
			continue;
		b->spare[insert(b->spare, b->agg[i].fn)] = b->agg[i];
		b->nagg++;
	}
	memcpy(b->agg, b->spare, sizeof b->agg);
	memset(b->cache, 0, sizeof b->cache);
	for (struct frame *e = b->stack + 1; e <= b->top; e++)
		e->agg = &b->agg[insert(b->agg, e->fn)];
}

/* fn's place in b's table, put in the cache; NULL when b has none yet. */
static inline struct agg *find(struct scope_filter_block *b, uint64_t fn)
{
	uint32_t i = hash(fn, AGG_BITS);

	while (b->agg[i].fn && b->agg[i].fn != fn)
		i = (i + 1) & (AGG_CAP - 1);
	if (b->agg[i].fn != fn)
		return NULL;
	*slot_of(b, fn) = (struct slot){fn, &b->agg[i]};
	return &b->agg[i];
}

/* A new place in b's table for fn, which is not there (the filters decide
 * now), put in the cache. The thread is busy meanwhile. */
static SCOPE_NOINST struct agg *lookup_slow(struct scope_thread *t, struct scope_filter_block *b,
					    uint64_t fn)
{
	uint8_t dec = decide(fn);
	uint32_t i;

	if (find(b, fn)) /* put there meanwhile, by a signal handler's call */
		return find(b, fn);
	if (b->nagg >= AGG_FULL)
		rebuild(t, b);
	i = insert(b->agg, fn);
	b->agg[i].dec = dec;
	b->agg[i].open = 0;
	clear_sums(&b->agg[i]);
	b->nagg++;
	*slot_of(b, fn) = (struct slot){fn, &b->agg[i]};
	return &b->agg[i];
}

/* ---------------------------------------------------------------------- */
/* Stored calls                                                            */

/* Opens a record for fn at depth (its depth as the filters count it), in
 * taken when nothing has moved the thread's next slot since the enter
 * hook took it, else through the hooks' slow path; returns it, or NULL
 * when the slow path did not record the call. *start becomes the
 * record's start when the slow path read it later. */
static inline __attribute__((always_inline)) struct scope_rec *
store_open(struct scope_thread *t, void *fn, uintptr_t frame, struct scope_rec *taken, uint64_t now,
	   uint32_t depth, uint64_t *start, uint32_t *flags)
{
	struct scope_rec *r = taken;

	if (unlikely(t->cur != taken + 1 || taken >= t->chunk_end || t->ctr)) {
		r = scope_enter_record(fn, frame, taken);
		if (!r)
			return NULL;
		if (r->fn & SCOPE_REC_MARKED)
			*flags |= F_COUNTED;
		t->frames[depth & (SCOPE_FRAME_SLOTS - 1)] = frame;
		/* the address only: the slow path put its own depth above it */
		r->fn = (r->fn & SCOPE_REC_ADDR_MASK) | SCOPE_REC_MARKED |
			(uint64_t)depth << SCOPE_REC_ADDR_BITS;
		*start = r->start; /* the slow path's own work is not the call's */
		return r;
	}
	t->frames[depth & (SCOPE_FRAME_SLOTS - 1)] = frame;
	r->fn = (uint64_t)(uintptr_t)fn | SCOPE_REC_MARKED | (uint64_t)depth << SCOPE_REC_ADDR_BITS;
	r->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)t->open;
	r->start = now;
	scope_signal_fence();
	t->depth++;
	t->open = r;
	return r;
}

/* Ends e's stored record at now: nothing when it is not the innermost open
 * record (a longjmp closed it, or the thread stopped recording). */
static inline __attribute__((always_inline)) void store_close(struct scope_thread *t,
							      const struct frame *e, uint64_t now)
{
	struct scope_rec *r = e->rec;

	if (t->open != r)
		return;
	if (unlikely(e->flags & F_COUNTED))
		scope_counters_exit(t, r->fn & ~SCOPE_REC_ADDR_MASK);
	scope_record_close(t, r, now);
}

/* Takes back r, the thread's last record, innermost and open, so that
 * the slot is free again; returns 0 when a signal handler has recorded
 * after it meanwhile, and r stays. The slot is emptied before cur moves
 * back, in one instruction on x86-64, which a signal cannot split. */
static inline __attribute__((always_inline)) int take_back(struct scope_thread *t,
							   struct scope_rec *r)
{
	struct scope_rec *expect = r + 1;
	uint64_t fn = r->fn;

	if (t->open != r || t->cur != expect)
		return 0;
	r->fn = 0;
	scope_signal_fence();
#if defined(__x86_64__)
	__asm__ volatile("cmpxchgq %2, %1" : "+a"(expect), "+m"(t->cur) : "r"(r) : "cc");
#else
	if (t->cur == expect)
		t->cur = r;
	else
		expect = t->cur;
#endif
	scope_signal_fence();
	if (expect != r + 1) {
		r->fn = fn;
		return 0;
	}
	t->open = scope_record_parent(r);
	t->depth--;
	return 1;
}

/* ---------------------------------------------------------------------- */
/* The hooks                                                               */

/* The call's entry on the thread's stack of open calls, pushed before it
 * is filled in: a signal handler that comes meanwhile stacks above it. */
static inline __attribute__((always_inline)) struct frame *
push(struct scope_filter_block *b, void *fn, uintptr_t frame, uint64_t now, struct agg *a)
{
	struct frame *e = b->top + 1;

	b->top = e;
	scope_signal_fence();
	e->fn = (uint64_t)(uintptr_t)fn;
	e->frame = frame;
	e->start = now;
	e->child = e->hidden = 0;
	e->agg = a;
	return e;
}

/* A call that may be stored, or that changes what is stored below it, or
 * whose slot could not be given back at once (six arguments: the fast
 * path's calls are jumps). */
static SCOPE_NOINST __attribute__((noinline)) void enter_full(void *fn, struct scope_rec *taken,
							      uintptr_t frame, uint64_t now,
							      struct scope_filter_block *b,
							      struct agg *a)
{
	struct scope_thread *t = &scope_tls;
	struct frame *e;
	uint32_t flags = 0, depth, sp = depth_of(b);
	uint8_t dec = a->dec;

	if (dec & DEC_ONLY) {
		if (b->only_open++ == 0)
			b->base = sp;
		flags |= F_ONLY;
	}
	if (dec & DEC_NOTSUB) {
		b->notsub_open++;
		flags |= F_NOTSUB;
	}
	if (flags)
		limits(b);
	depth = sp - b->base;
	e = push(b, fn, frame, now, a);
	e->rec = NULL;
	a->open++;
	if (sp < b->store_hi && !(dec & DEC_NOT)) {
		e->rec = store_open(t, fn, frame, taken, now, depth, &e->start, &flags);
		flags |= e->rec ? F_STORED : F_PLAIN;
	} else {
		scope_give_back(t, taken);
		flags |= F_UNSTORED;
	}
	e->flags = flags;
}

/* A function the thread has not met, or its first call while filtering:
 * the thread's block, and the decision. */
static SCOPE_NOINST __attribute__((noinline)) void
enter_new(struct scope_thread *t, void *fn, uintptr_t frame, struct scope_rec *taken)
{
	struct scope_filter_block *b;
	struct agg *a = NULL;
	uint64_t now;
	int saved_errno = errno;

	/* The slot comes back while the library works (a full table's sums
	 * go into the chunk); the call takes one again after. */
	scope_give_back(t, taken);
	scope_busy_begin(t);
	if (!(b = t->filter))
		b = t->filter = claim_block(t);
	if (b && b->top < b->full)
		a = lookup_slow(t, b, (uint64_t)(uintptr_t)fn);
	scope_busy_end(t);
	errno = saved_errno;
	if (!a) /* no block, or a stack full: recorded as without filters */
		scope_enter_record(fn, frame, scope_take_slot(t));
	else if (t->limit != SCOPE_LIMIT_FILTER) /* paused meanwhile */
		scope_enter_slow(fn, frame, scope_take_slot(t));
	else {
		now = scope_now(); /* the decision is not the call's time */
		taken = scope_take_slot(t);
		enter_full(fn, taken, frame, now, b, a);
	}
}

/* Every enter but the fast path's and enter_full's: a function not in the
 * cache, a stack full, no block. */
static SCOPE_NOINST __attribute__((noinline)) void enter_other(void *fn, struct scope_rec *taken,
							       uintptr_t frame, uint64_t now)
{
	struct scope_thread *t = &scope_tls;
	struct scope_filter_block *b = t->filter;
	struct agg *a;

	if (b && b->top < b->full && (a = find(b, (uint64_t)(uintptr_t)fn))) {
		enter_full(fn, taken, frame, now, b, a);
		return;
	}
	enter_new(t, fn, frame, taken);
}

/* A call stored at its depth, and nothing more: what enter_full does for
 * it, written out, when the slot the enter hook took is still the
 * thread's last and nothing else (counters, a new chunk) applies. */
static SCOPE_NOINST __attribute__((noinline)) void enter_stored(void *fn, struct scope_rec *taken,
								uintptr_t frame, uint64_t now,
								struct scope_filter_block *b,
								struct agg *a)
{
	struct scope_thread *t = &scope_tls;
	struct frame *e = b->top + 1;
	uint32_t depth = depth_of(b) - b->base;

	if (unlikely(t->cur != taken + 1 || taken >= t->chunk_end || t->ctr)) {
		enter_full(fn, taken, frame, now, b, a);
		return;
	}
	push(b, fn, frame, now, a);
	e->rec = taken;
	e->flags = F_STORED;
	a->open++;
	t->frames[depth & (SCOPE_FRAME_SLOTS - 1)] = frame;
	taken->fn =
		(uint64_t)(uintptr_t)fn | SCOPE_REC_MARKED | (uint64_t)depth << SCOPE_REC_ADDR_BITS;
	taken->end = SCOPE_REC_OPEN | (uint64_t)(uintptr_t)t->open;
	taken->start = now;
	scope_signal_fence();
	t->depth++;
	t->open = taken;
}

/* The fast path is a call that is not stored and changes nothing below it,
 * of a function in the thread's cache: a stack entry and, at its exit,
 * five sums. A call stored and nothing more goes to enter_stored, anything
 * else to enter_full or enter_other, as a tail call. */
void scope_filter_enter(void *fn, struct scope_rec *taken, uintptr_t frame, uint64_t now)
{
	struct scope_thread *t = &scope_tls;
	struct scope_filter_block *b = t->filter;
	const struct slot *s;
	struct frame *top, *e;
	struct agg *a;
	uint8_t dec;

	if (unlikely(!b)) {
		enter_other(fn, taken, frame, now);
		return;
	}
	top = b->top;
	s = slot_of(b, (uint64_t)(uintptr_t)fn);
	if (unlikely(s->fn != (uint64_t)(uintptr_t)fn || top >= b->full)) {
		enter_other(fn, taken, frame, now);
		return;
	}
	a = s->agg;
	dec = a->dec;
	if (dec & (DEC_ONLY | DEC_NOTSUB)) {
		enter_full(fn, taken, frame, now, b, a);
		return;
	}
	if (top < b->store_top && !(dec & DEC_NOT)) {
		enter_stored(fn, taken, frame, now, b, a);
		return;
	}
	if (unlikely(!scope_try_give_back(t, taken))) {
		enter_full(fn, taken, frame, now, b, a);
		return;
	}
	e = top + 1;
	b->top = e;
	scope_signal_fence();
	e->fn = (uint64_t)(uintptr_t)fn;
	e->frame = frame;
	e->start = now;
	e->child = 0;
	e->agg = a;
	e->flags = F_UNSTORED;
	a->open++;
}

/* Sums e's call, not stored, which lasted dur, and gives its time to the
 * call below it as time not stored; outer: the call was no other's of its
 * function. */
static inline __attribute__((always_inline)) void sum(struct agg *a, const struct frame *e,
						      struct frame *parent, uint64_t dur, int outer)
{
	a->calls++;
	a->total_all += dur;
	if (outer) /* no other call of a's function is open */
		a->total += dur;
	a->child += e->child;
	if (dur < a->min)
		a->min = dur;
	if (dur > a->max)
		a->max = dur;
	parent->hidden += dur;
}

/* Ends e, the top of b's stack, at now. */
static SCOPE_NOINST __attribute__((noinline)) void
pop(struct scope_thread *t, struct scope_filter_block *b, struct frame *e, uint64_t now)
{
	struct agg *a = e->agg;
	struct frame *parent = e - 1;
	uint64_t dur = now - e->start;
	uint32_t flags = e->flags;

	if (flags & (F_ONLY | F_NOTSUB)) {
		b->only_open -= (flags & F_ONLY) != 0;
		b->notsub_open -= (flags & F_NOTSUB) != 0;
		limits(b);
	}
	a->open--;
	if ((flags & F_STORED) && (!fc.min_ticks || dur >= fc.min_ticks || !take_back(t, e->rec))) {
		store_close(t, e, now);
		a->hidden += e->hidden;
	} else if (flags & F_PLAIN) {
		scope_exit_slow((void *)(uintptr_t)e->fn, now, e->frame);
	} else {
		sum(a, e, parent, dur, !a->open);
	}
	parent->child += dur;
	scope_signal_fence();
	b->top = parent;
}

/* An exit that is not the top's: calls left by longjmp or an exception
 * that ran no exit hooks end now with the one returning; an exit of a
 * call the stack never had goes the hooks' way. */
static SCOPE_NOINST void exit_unmatched(struct scope_thread *t, struct scope_filter_block *b,
					void *fn, uint64_t now, uintptr_t frame)
{
	struct frame *k = b->top;

	while (k > b->stack && !(k->fn == (uint64_t)(uintptr_t)fn && k->frame == frame))
		k--;
	if (k == b->stack) {
		scope_exit_slow(fn, now, frame);
		return;
	}
	while (b->top >= k)
		pop(t, b, b->top, now);
}

/* Every exit but the fast path's and pop's: one the filters' stack does
 * not have on top. Calls ignored, calls of a task sharing the thread's
 * block and calls deeper than the stack keeps go the hooks' way. */
static SCOPE_NOINST __attribute__((noinline)) void exit_other(struct scope_thread *t,
							      struct scope_filter_block *b,
							      void *fn, uint64_t now,
							      uintptr_t frame)
{
	if (!b || b->top == b->stack || t->ignored || t->shared || b->top == b->full)
		scope_exit_slow(fn, now, frame);
	else
		exit_unmatched(t, b, fn, now, frame);
}

/* The exit of e, stored and nothing more (pop does the rest): its record
 * ends, or is taken back when the threshold says so and it still can be. */
static SCOPE_NOINST __attribute__((noinline)) void exit_stored(struct scope_filter_block *b,
							       struct frame *e, uint64_t now)
{
	struct scope_thread *t = &scope_tls;
	struct scope_rec *r = e->rec;
	struct frame *parent = e - 1;
	struct agg *a = e->agg;
	uint64_t dur = now - e->start;

	if (unlikely(e->flags != F_STORED)) {
		pop(t, b, e, now);
		return;
	}
	a->open--;
	if (fc.min_ticks && dur < fc.min_ticks && take_back(t, r)) {
		sum(a, e, parent, dur, !a->open);
	} else {
		if (likely(t->open == r))
			scope_record_close(t, r, now);
		a->hidden += e->hidden;
	}
	parent->child += dur;
	scope_signal_fence();
	b->top = parent;
}

void scope_filter_exit(void *fn, uint64_t now, uintptr_t frame)
{
	struct scope_thread *t = &scope_tls;
	struct scope_filter_block *b = t->filter;
	struct frame *e;
	struct agg *a;
	uint64_t dur;

	if (unlikely(!b)) {
		exit_other(t, b, fn, now, frame);
		return;
	}
	e = b->top;
	if (unlikely(e->fn != (uint64_t)(uintptr_t)fn || e->frame != frame)) {
		exit_other(t, b, fn, now, frame);
		return;
	}
	if (e->flags != F_UNSTORED) {
		exit_stored(b, e, now);
		return;
	}
	a = e->agg;
	dur = now - e->start;
	sum(a, e, e - 1, dur, --a->open == 0);
	(e - 1)->child += dur;
	scope_signal_fence();
	b->top = e - 1;
}

extern const char __ehdr_start[] SCOPE_HIDDEN;
extern const char _end[] SCOPE_HIDDEN;

int scope_filter_in_call(void)
{
	const struct scope_filter_block *b = scope_tls.filter;
	const char *top;

	if (!b || b->top == b->stack)
		return 0;
	top = (const char *)(uintptr_t)b->top->fn;
	return !(top >= __ehdr_start && top < _end); /* the wrappers' regions are the library's */
}

/* ---------------------------------------------------------------------- */
/* Threads, processes                                                      */

void scope_filter_thread_end(struct scope_thread *t)
{
	struct scope_filter_block *b = t->filter;

	if (t == &scope_tls)
		scope_sample_thread_end();
	if (!b || t != &scope_tls)
		return;
	if (!scope_stopped() && scope_proc.hdr && t->lane >= 0) {
		scope_busy_begin(t);
		count_open(b, scope_now());
		flush(t, t->lane, b);
		scope_busy_end(t);
	}
	t->filter = NULL;
	__atomic_store_n(&b->state, BLOCK_DEAD, __ATOMIC_RELEASE);
}

/* Every live thread's sums: the others' are read as they are (a thread
 * still running may be counting a call meanwhile). */
void scope_filter_stop(void)
{
	struct scope_thread *t = &scope_tls;
	struct scope_filter_block *own = t->filter;

	if (!scope_filtering || !scope_proc.hdr)
		return;
	scope_busy_begin(t);
	if (!t->registered)
		scope_thread_register(-1);
	if (own)
		count_open(own, scope_now());
	for (struct scope_filter_block *b = __atomic_load_n(&blocks, __ATOMIC_ACQUIRE); b;
	     b = b->next) {
		int32_t lane = b == own ? t->lane : b->lane;
		if (__atomic_load_n(&b->state, __ATOMIC_ACQUIRE) != BLOCK_LIVE || lane < 0)
			continue;
		flush(t, lane, b);
	}
	scope_busy_end(t);
}

/* The child of a fork has the forking thread only, and none of the
 * parent's sums: they are the parent's to write. Its thread starts again
 * with a block of its own, the calls open at the fork being the parent's. */
void scope_filter_forked(void)
{
	/* another thread may have held it at the fork */
	pthread_mutex_init(&decide_lock, NULL);
	for (struct scope_filter_block *b = blocks; b; b = b->next)
		b->state = BLOCK_DEAD;
	scope_tls.filter = NULL;
}
