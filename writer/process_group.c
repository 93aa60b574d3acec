/* SPDX-License-Identifier: MIT */
/* A process's own group, /process<N>: its lanes, modules, crash stack, heap, samples and sums. */
#define _GNU_SOURCE
#include "profile_out.h"
#include "map.h"

#include "columns.h"
#include "schema.h"
#include "symbolize.h"
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

/* The run's modules, as the symbolizer takes them. */
struct scope_sym_module *run_sym_modules(const struct run_info *run)
{
	struct scope_sym_module *sm = calloc(run->nmods + 1, sizeof *sm);
	for (size_t i = 0; sm && i < run->nmods; i++)
		sm[i] = (struct scope_sym_module){run->mods[i].path, run->mods[i].bias,
						  run->mods[i].lo, run->mods[i].hi,
						  run->mods[i].unload != 0};
	return sm;
}

/* "0,2": the thread lanes that ran a task, ascending. */
static char *thread_list(const struct task_use *u)
{
	size_t cap = (size_t)u->nthreads * 11 + 1, at = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (uint32_t i = 0; i < u->nthreads; i++)
		at += (size_t)snprintf(s + at, cap - at, i ? ",%u" : "%u", u->threads[i]);
	return s;
}

/*
 * A table equal to one an earlier process's group holds is that table,
 * linked again: the empty task table of every process without tasks, the
 * module table of a forked child that mapped nothing of its own. Readers
 * see the same columns; the file holds them once, and a run of many
 * processes does not make them again for each.
 */
static int link_table(hid_t loc, const char *name, const char *first)
{
	return H5Lcreate_hard(loc, first, loc, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}

/* Keeps the path of loc's new table name in out, for the next to link. */
static void table_made(hid_t loc, const char *name, char *out, size_t cap)
{
	char at[SHARED_PATH_BYTES];
	ssize_t n = H5Iget_name(loc, at, sizeof at);

	out[0] = '\0';
	if (n > 0 && (size_t)n < sizeof at && (size_t)snprintf(out, cap, "%s/%s", at, name) >= cap)
		out[0] = '\0';
}

/* The task lanes, row k - 1 for lane k; an empty table when there are none. */
static int write_tasks(struct columns *c, hid_t lanes, const struct run_info *run,
		       const struct profile *p)
{
	const struct arena *a = run->arena;
	const struct scope_task *slots = (const void *)(a->base + a->hdr->tasks_off);
	const struct scope_name *names = (const void *)(a->base + a->hdr->names_off);
	uint32_t n = p->ntasks;
	uint64_t *id = calloc(n + 1, 8), *start = calloc(n + 1, 8), *end = calloc(n + 1, 8),
		 *busy = calloc(n + 1, 8);
	int32_t *parent = calloc(n + 1, sizeof *parent);
	const char **name = calloc(n + 1, sizeof *name);
	char **threads = calloc(n + 1, sizeof *threads);
	hid_t g = col_group(lanes, SC_TASKS);
	int rc = g >= 0 && id && start && end && busy && parent && name && threads ? 0 : -1;

	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		const struct scope_task *t = &slots[i];
		uint32_t nm = t->name;
		id[i] = t->id;
		parent[i] = t->parent;
		start[i] = tick_ns(run->clock, t->start);
		end[i] = t->end ? tick_ns(run->clock, t->end) : p->end_ns;
		end[i] = end[i] > p->end_ns ? p->end_ns : end[i] < start[i] ? start[i] : end[i];
		busy[i] = tick_ns(run->clock, run->clock->start_tick + p->tasks[i].busy_ticks);
		/* converted apart from start and end, it may round past their span */
		if (busy[i] > end[i] - start[i])
			busy[i] = end[i] - start[i];
		name[i] = nm < a->nnames && names[nm].used &&
					  memchr(names[nm].text, '\0', sizeof names[nm].text)
				  ? names[nm].text
				  : "";
		if (!(threads[i] = thread_list(&p->tasks[i])))
			rc = -1;
	}
	if (rc == 0 && (col_uint(c, g, SC_TASK(ID), id, n, 8) != 0 ||
			col_str(g, SC_TASK(NAME), name, n) != 0 ||
			col_int32(g, SC_TASK(PARENT), parent, n) != 0 ||
			col_uint(c, g, SC_TASK(START), start, n, 8) != 0 ||
			col_uint(c, g, SC_TASK(END), end, n, 8) != 0 ||
			col_str(g, SC_TASK(THREADS), (const char *const *)threads, n) != 0 ||
			col_uint(c, g, SC_TASK(BUSY_NS), busy, n, 8) != 0))
		rc = -1;
	for (uint32_t i = 0; threads && i < n; i++)
		free(threads[i]);
	free(threads);
	free(name);
	free(parent);
	free(id);
	free(start);
	free(end);
	free(busy);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}
_Static_assert(SC_NTASK == 7, "a new lanes/tasks column: write it in write_tasks");

static int lane_tasks(struct columns *c, hid_t lanes, const struct run_info *run,
		      const struct profile *p, struct shared_tables *sh)
{
	if (!p->ntasks && sh->tasks[0])
		return link_table(lanes, SC_TASKS, sh->tasks);
	if (write_tasks(c, lanes, run, p) != 0)
		return -1;
	if (!p->ntasks)
		table_made(lanes, SC_TASKS, sh->tasks, sizeof sh->tasks);
	return 0;
}

static int write_lanes(struct columns *c, hid_t proc, const struct run_info *run,
		       const struct profile *p, struct shared_tables *sh)
{
	const struct arena *a = run->arena;
	const struct scope_lane *lanes = (const void *)(a->base + a->hdr->lanes_off);
	uint32_t n = a->nlanes;
	uint32_t *tid = calloc(n + 1, sizeof *tid);
	int32_t *parent = calloc(n + 1, sizeof *parent);
	uint64_t *start = calloc(n + 1, sizeof *start), *end = calloc(n + 1, sizeof *end);
	uint64_t *cpu = calloc(n + 1, sizeof *cpu);
	char(*names)[17] = calloc(n + 1, sizeof *names);
	const char **name_ptrs = calloc(n + 1, sizeof *name_ptrs);
	hid_t lg = col_group(proc, SC_LANES), g = -1;
	int rc = -1;

	if (lg < 0 || !tid || !parent || !start || !end || !cpu || !names || !name_ptrs)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		tid[i] = lanes[i].tid;
		parent[i] = lanes[i].parent;
		start[i] = tick_ns(run->clock, lanes[i].start);
		end[i] = lanes[i].end ? tick_ns(run->clock, lanes[i].end) : p->end_ns;
		if (end[i] > p->end_ns)
			end[i] = p->end_ns;
		/* still running: its process was killed before it could stop */
		cpu[i] = lanes[i].cpu_ns & SCOPE_LANE_CPU_RUNNING ? 0 : lanes[i].cpu_ns;
		memcpy(names[i], lanes[i].name, 16);
		names[i][16] = '\0';
		name_ptrs[i] = names[i];
	}
	g = col_group(lg, SC_THREADS);
	if (g >= 0 && col_uint(c, g, SC_THR(TID), tid, n, 4) == 0 &&
	    col_str(g, SC_THR(NAME), name_ptrs, n) == 0 &&
	    col_int32(g, SC_THR(PARENT), parent, n) == 0 &&
	    col_uint(c, g, SC_THR(START), start, n, 8) == 0 &&
	    col_uint(c, g, SC_THR(END), end, n, 8) == 0 &&
	    col_uint(c, g, SC_THR(CPU_NS), cpu, n, 8) == 0 && lane_tasks(c, lg, run, p, sh) == 0)
		rc = 0;
out:
	free(tid);
	free(cpu);
	free(parent);
	free(start);
	free(end);
	free(names);
	free(name_ptrs);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	if (lg >= 0 && H5Gclose(lg) < 0)
		rc = -1;
	return rc;
}

static int write_modules(struct columns *c, hid_t proc, const struct run_info *run)
{
	size_t n = run->nmods;
	const char **paths = calloc(n + 1, sizeof *paths), **ids = calloc(n + 1, sizeof *ids);
	uint64_t *bias = calloc(n + 1, 8), *lo = calloc(n + 1, 8), *hi = calloc(n + 1, 8);
	hid_t g = col_group(proc, SC_MODULES);
	int rc = -1;

	if (g >= 0 && paths && ids && bias && lo && hi) {
		for (size_t i = 0; i < n; i++) {
			paths[i] = run->mods[i].path;
			ids[i] = run->mods[i].build_id;
			bias[i] = run->mods[i].bias;
			lo[i] = run->mods[i].lo;
			hi[i] = run->mods[i].hi;
		}
		if (col_str(g, SC_MOD(PATH), paths, n) == 0 &&
		    col_uint(c, g, SC_MOD(BIAS), bias, n, 8) == 0 &&
		    col_uint(c, g, SC_MOD(LOW), lo, n, 8) == 0 &&
		    col_uint(c, g, SC_MOD(HIGH), hi, n, 8) == 0 &&
		    col_str(g, SC_MOD(BUILD_ID), ids, n) == 0)
			rc = 0;
	}
	free(paths);
	free(ids);
	free(bias);
	free(lo);
	free(hi);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

static int same_string(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Whether a and b have the same module table. */
static int same_modules(const struct run_info *a, const struct run_info *b)
{
	if (a->nmods != b->nmods)
		return 0;
	for (size_t i = 0; i < a->nmods; i++) {
		const struct module *x = &a->mods[i], *y = &b->mods[i];
		if (x->bias != y->bias || x->lo != y->lo || x->hi != y->hi ||
		    !same_string(x->path, y->path) || !same_string(x->build_id, y->build_id))
			return 0;
	}
	return 1;
}

static int process_modules(struct columns *c, hid_t proc, const struct run_info *run,
			   struct shared_tables *sh)
{
	for (size_t i = 0; i < sh->nmods; i++)
		if (same_modules(sh->mods[i].run, run))
			return link_table(proc, SC_MODULES, sh->mods[i].path);
	if (write_modules(c, proc, run) != 0)
		return -1;
	if (sh->nmods < SHARED_MODULES) {
		struct shared_modules *m = &sh->mods[sh->nmods];
		table_made(proc, SC_MODULES, m->path, sizeof m->path);
		m->run = run;
		sh->nmods += m->path[0] != '\0';
	}
	return 0;
}

/* The stack of the thread a fatal signal hit: addresses, innermost first,
 * with their names. */
static int write_crash(struct columns *c, hid_t proc, const struct run_info *run)
{
	const struct scope_arena_header *h = run->hdr;
	struct scope_sym_module *sm;
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct scope_sym syms[UNWIND_MAX_FRAMES];
	const char *names[UNWIND_MAX_FRAMES];
	struct scope_symbolizer *s = NULL;
	hid_t g = -1;
	size_t n = 0;
	int rc = -1;

	if (!h->crash_signal)
		return 0;
	memset(syms, 0, sizeof syms);
	if (!(sm = run_sym_modules(run)))
		return -1;
	if (!(s = scope_sym_open(sm, run->nmods)))
		goto out;
	n = unwind_crash(run->arena, run->mods, run->nmods, pcs, UNWIND_MAX_FRAMES);
	for (size_t i = 0; i < n; i++) {
		/* a return address points after the call: look up the call */
		uint64_t pc = pcs[i] - (i > 0);
		if (scope_sym_lookup(s, pc, -1, run->symbolize, &syms[i]) != 0)
			goto out;
		names[i] = syms[i].name;
	}
	g = col_group(proc, SC_CRASH);
	if (g >= 0 && attr_i64(g, sc_crash_attrs[SC_CRASHA_SIGNAL].name, h->crash_signal) == 0 &&
	    attr_i64(g, sc_crash_attrs[SC_CRASHA_LANE].name, h->crash_lane) == 0 &&
	    col_uint(c, g, sc_crash[SC_CRASH_ADDRESS].name, pcs, n, 8) == 0 &&
	    col_str(g, sc_crash[SC_CRASH_NAME].name, names, n) == 0)
		rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		scope_sym_free(&syms[i]);
	scope_sym_close(s);
	free(sm);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* Names for the heap's regions and sites, from one symbolizer. */
struct heap_names {
	struct scope_sym *syms;
	size_t n;
};

static const char *heap_name(struct scope_symbolizer *s, const struct run_info *run,
			     struct heap_names *hn, uint64_t addr, const char **file,
			     uint32_t *line)
{
	struct scope_sym *y = &hn->syms[hn->n];

	if (scope_sym_lookup(s, addr, -1, run->symbolize, y) != 0 ||
	    (file && scope_sym_call_line(s, addr, run->symbolize, y) != 0))
		return NULL;
	hn->n++;
	if (file)
		*file = y->file;
	if (line)
		*line = y->line;
	return y->name;
}

/* Columns of the heap group's n regions and the sites group's ns sites. */
struct heap_cols {
	const char **region, **site_region, **function, **file;
	uint64_t *allocs, *frees, *bytes, *peak, *leaked, *site_bytes, *site_allocs, *address;
	uint32_t *line;
};

static void heap_cols_free(struct heap_cols *h)
{
	free(h->region);
	free(h->site_region);
	free(h->function);
	free(h->file);
	free(h->allocs);
	free(h->frees);
	free(h->bytes);
	free(h->peak);
	free(h->leaked);
	free(h->site_bytes);
	free(h->site_allocs);
	free(h->address);
	free(h->line);
}

static int heap_cols_alloc(struct heap_cols *h, size_t n, size_t ns)
{
	memset(h, 0, sizeof *h);
	h->region = calloc(n + 1, sizeof *h->region);
	h->allocs = calloc(n + 1, 8), h->frees = calloc(n + 1, 8), h->bytes = calloc(n + 1, 8);
	h->peak = calloc(n + 1, 8), h->leaked = calloc(n + 1, 8);
	h->site_region = calloc(ns + 1, sizeof *h->site_region);
	h->function = calloc(ns + 1, sizeof *h->function);
	h->file = calloc(ns + 1, sizeof *h->file);
	h->site_bytes = calloc(ns + 1, 8), h->address = calloc(ns + 1, 8);
	h->site_allocs = calloc(ns + 1, 8);
	h->line = calloc(ns + 1, 4);
	return h->region && h->allocs && h->frees && h->bytes && h->peak && h->leaked &&
			       h->site_region && h->function && h->file && h->site_bytes &&
			       h->site_allocs && h->address && h->line
		       ? 0
		       : -1;
}

/* Fills h from the arena's n regions; names through s into hn. */
static int heap_fill(struct heap_cols *h, const struct scope_heap_region *g, size_t n,
		     struct scope_symbolizer *s, const struct run_info *run, struct heap_names *hn,
		     size_t *ns)
{
	*ns = 0;
	for (size_t i = 0; i < n; i++) {
		h->region[i] = g[i].fn ? heap_name(s, run, hn, g[i].fn, NULL, NULL) : "";
		if (!h->region[i])
			return -1;
		h->allocs[i] = g[i].allocations;
		h->frees[i] = g[i].frees;
		h->bytes[i] = g[i].bytes;
		h->peak[i] = g[i].peak;
		h->leaked[i] = g[i].live;
		for (size_t k = 0; k < SCOPE_HEAP_SITES && g[i].sites[k].bytes; k++) {
			size_t j = (*ns)++;
			h->site_region[j] = h->region[i];
			h->site_bytes[j] = g[i].sites[k].bytes;
			h->site_allocs[j] = g[i].sites[k].allocations;
			h->address[j] = g[i].sites[k].address;
			/* a return address follows the call: name the call */
			h->function[j] = heap_name(s, run, hn, g[i].sites[k].address - 1,
						   &h->file[j], &h->line[j]);
			if (!h->function[j])
				return -1;
		}
	}
	return 0;
}

/* The heap tracking's figures per region (SCOPE_HEAP=1) and their main call sites. */
static int write_heap(struct columns *c, hid_t proc, const struct run_info *run)
{
	const struct scope_arena_header *hd = run->hdr;
	const struct scope_heap_region *g =
		(const void *)(run->arena->base + (hd->heap_cap ? hd->heap_off : 0));
	size_t n = hd->heap_cap ? (size_t)hd->heap_used : 0, ns = 0;
	struct heap_names hn = {0};
	struct heap_cols h;
	struct scope_sym_module *sm = NULL;
	struct scope_symbolizer *s = NULL;
	hid_t hg = -1, sg = -1;
	int rc = -1;

	if (!hd->heap_cap)
		return 0;
	if (n > hd->heap_cap)
		n = hd->heap_cap;
	if (heap_cols_alloc(&h, n, n * SCOPE_HEAP_SITES) != 0 ||
	    !(hn.syms = calloc(n * (SCOPE_HEAP_SITES + 1) + 1, sizeof *hn.syms)) ||
	    !(sm = run_sym_modules(run)) || !(s = scope_sym_open(sm, run->nmods)) ||
	    heap_fill(&h, g, n, s, run, &hn, &ns) != 0)
		goto out;
	hg = col_group(proc, SC_HEAP);
	sg = hg < 0 ? -1 : col_group(proc, SC_HEAP_SITES);
	if (sg >= 0 &&
	    attr_i64(hg, sc_heap_attrs[SC_HEAPA_PEAK_LIVE].name, (int64_t)hd->heap_peak) == 0 &&
	    attr_i64(hg, sc_heap_attrs[SC_HEAPA_LIVE_AT_EXIT].name, (int64_t)hd->heap_live) == 0 &&
	    attr_i64(hg, sc_heap_attrs[SC_HEAPA_UNTRACKED].name, (int64_t)hd->heap_untracked) ==
		    0 &&
	    col_str(hg, sc_heap[SC_HEAP_REGION].name, h.region, n) == 0 &&
	    col_uint(c, hg, sc_heap[SC_HEAP_ALLOCATIONS].name, h.allocs, n, 8) == 0 &&
	    col_uint(c, hg, sc_heap[SC_HEAP_FREES].name, h.frees, n, 8) == 0 &&
	    col_uint(c, hg, sc_heap[SC_HEAP_BYTES].name, h.bytes, n, 8) == 0 &&
	    col_uint(c, hg, sc_heap[SC_HEAP_PEAK].name, h.peak, n, 8) == 0 &&
	    col_uint(c, hg, sc_heap[SC_HEAP_LEAKED].name, h.leaked, n, 8) == 0 &&
	    col_str(sg, sc_heap_sites[SC_SITE_REGION].name, h.site_region, ns) == 0 &&
	    col_uint(c, sg, sc_heap_sites[SC_SITE_BYTES].name, h.site_bytes, ns, 8) == 0 &&
	    col_uint(c, sg, sc_heap_sites[SC_SITE_ALLOCATIONS].name, h.site_allocs, ns, 8) == 0 &&
	    col_uint(c, sg, sc_heap_sites[SC_SITE_ADDRESS].name, h.address, ns, 8) == 0 &&
	    col_str(sg, sc_heap_sites[SC_SITE_FUNCTION].name, h.function, ns) == 0 &&
	    col_str(sg, sc_heap_sites[SC_SITE_FILE].name, h.file, ns) == 0 &&
	    col_uint(c, sg, sc_heap_sites[SC_SITE_LINE].name, h.line, ns, 4) == 0)
		rc = 0;
out:
	for (size_t i = 0; i < hn.n; i++)
		scope_sym_free(&hn.syms[i]);
	free(hn.syms);
	scope_sym_close(s);
	free(sm);
	heap_cols_free(&h);
	if (sg >= 0 && H5Gclose(sg) < 0)
		rc = -1;
	if (hg >= 0 && H5Gclose(hg) < 0)
		rc = -1;
	return rc;
}

/* The function each distinct sampled address falls in: names[i] for the
 * address at map row i. Return addresses (all frames but a sample's
 * first) are looked up one byte back, in the call. */
static char **sample_names(const struct run_info *run, const struct profile *p, struct u64map *m)
{
	struct scope_sym_module *sm = run_sym_modules(run);
	struct scope_symbolizer *s = sm ? scope_sym_open(sm, run->nmods) : NULL;
	char **names = calloc(p->nsample_pcs + 1, sizeof *names);
	int ok = s && names;

	for (uint64_t i = 0; ok && i < p->nsamples; i++)
		for (uint32_t k = 0; ok && k < p->samples[i].n; k++) {
			uint64_t pc = p->sample_pcs[p->samples[i].first + k] - (k > 0);
			struct scope_sym sym;
			int added;
			uint32_t *row = map_slot(m, pc, (uint32_t)m->n, &added);
			if (!row || !added)
				ok = row != NULL;
			else if (scope_sym_lookup(s, pc, -1, run->symbolize, &sym) != 0)
				ok = 0;
			else {
				names[*row] = sym.name;
				sym.name = NULL;
				scope_sym_free(&sym);
			}
		}
	scope_sym_close(s);
	free(sm);
	if (!ok && names) {
		for (uint64_t i = 0; i < p->nsample_pcs; i++)
			free(names[i]);
		free(names);
		names = NULL;
	}
	return names;
}

/* Each sample's stack, outermost frame first, names joined by ';'. */
static char *sample_stack(const struct profile *p, const struct sample *x, struct u64map *m,
			  char **names)
{
	size_t len = 1, at = 0;
	char *out;

	for (uint32_t k = 0; k < x->n; k++) {
		int added;
		uint32_t *row = map_slot(m, p->sample_pcs[x->first + k] - (k > 0), 0, &added);
		len += strlen(names[*row]) + 1;
	}
	if (!(out = malloc(len)))
		return NULL;
	out[0] = '\0';
	for (uint32_t k = x->n; k-- > 0;) {
		int added;
		uint32_t *row = map_slot(m, p->sample_pcs[x->first + k] - (k > 0), 0, &added);
		at += (size_t)snprintf(out + at, len - at, "%s%s", names[*row], k ? ";" : "");
	}
	return out;
}

/* SCOPE_SAMPLE's samples: time, thread lane, innermost recorded call, stack. */
static int write_samples(struct columns *c, hid_t proc, const struct run_info *run,
			 const struct profile *p)
{
	uint64_t n = p->nsamples, *time = calloc(n + 1, sizeof *time);
	uint32_t *lane = calloc(n + 1, sizeof *lane), *region = calloc(n + 1, sizeof *region);
	const char **stacks = calloc(n + 1, sizeof *stacks);
	struct u64map m = {0};
	char **names = NULL;
	hid_t g = -1;
	int rc = -1;

	if (!n) {
		rc = 0;
		goto out;
	}
	if (!time || !lane || !region || !stacks || !(names = sample_names(run, p, &m)))
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		time[i] = p->samples[i].time_ns;
		lane[i] = p->samples[i].lane;
		region[i] = p->samples[i].region;
		if (!(stacks[i] = sample_stack(p, &p->samples[i], &m, names)))
			goto out;
	}
	g = col_group(proc, SC_SAMPLES);
	if (g >= 0 && col_uint(c, g, SC_SMP(TIME), time, n, 8) == 0 &&
	    col_uint(c, g, SC_SMP(THREAD), lane, n, 4) == 0 &&
	    col_uint(c, g, SC_SMP(REGION), region, n, 4) == 0 &&
	    col_str(g, SC_SMP(STACK), stacks, n) == 0)
		rc = 0;
out:
	for (uint64_t i = 0; stacks && i < n; i++)
		free((char *)stacks[i]);
	for (uint64_t i = 0; names && i < m.n; i++)
		free(names[i]);
	free(names);
	map_free(&m);
	free(time);
	free(lane);
	free(region);
	free(stacks);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* The sums of the calls filters kept out of the events, by region and lane. */
static int write_aggregates(struct columns *c, hid_t proc, const struct profile *p)
{
	uint64_t n = p->nlane_sums, *v = malloc((n + 1) * sizeof *v);
	uint32_t *u = malloc((n + 1) * sizeof *u);
	hid_t g = p->nlane_sums ? col_group(proc, SC_AGGREGATES) : -1;
	int rc = g >= 0 && u && v ? 0 : -1;

	if (!p->nlane_sums) {
		free(u);
		free(v);
		return 0;
	}
#define COLUMN(name, expr, arr, width)                                                             \
	if (rc == 0) {                                                                             \
		for (uint64_t i = 0; i < n; i++)                                                   \
			arr[i] = (expr);                                                           \
		rc = col_uint(c, g, name, arr, n, width);                                          \
	}
	COLUMN(SC_AGG(REGION), p->lane_sums[i].region, u, 4)
	COLUMN(SC_AGG(THREAD), p->lane_sums[i].lane, u, 4)
	COLUMN(SC_AGG(CALLS), p->lane_sums[i].calls, v, 8)
	COLUMN(SC_AGG(TOTAL_NS), p->lane_sums[i].total_ns, v, 8)
	COLUMN(SC_AGG(TOTAL_ALL_NS), p->lane_sums[i].total_all_ns, v, 8)
	COLUMN(SC_AGG(SELF_NS), p->lane_sums[i].self_ns > 0 ? (uint64_t)p->lane_sums[i].self_ns : 0,
	       v, 8)
	COLUMN(SC_AGG(MIN_NS), p->lane_sums[i].min_ns, v, 8)
	COLUMN(SC_AGG(MAX_NS), p->lane_sums[i].max_ns, v, 8)
#undef COLUMN
	free(u);
	free(v);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

int process_group_write(struct columns *c, hid_t file, size_t index, const struct run_info *run,
			const struct profile *p, struct shared_tables *sh)
{
	char name[32];
	hid_t g = (snprintf(name, sizeof name, SC_PROCESS_N, index), col_group(file, name));
	int rc = g >= 0 && write_lanes(c, g, run, p, sh) == 0 &&
				 process_modules(c, g, run, sh) == 0 &&
				 write_crash(c, g, run) == 0 && write_heap(c, g, run) == 0 &&
				 write_aggregates(c, g, p) == 0 && write_samples(c, g, run, p) == 0
			 ? 0
			 : -1;
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}
