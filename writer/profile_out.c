/* SPDX-License-Identifier: MIT */
/* Lays out schema 3 for one process or several: /metadata, /processes, /regions, /pairs,
 * /events and each process's group. */
#define _GNU_SOURCE
#include "profile_out.h"
#include "map.h"

#include "columns.h"
#include "libcalls.h"
#include "parents.h"
#include "schema.h"
#include "spill.h"
#include "symbolize.h"

#include <stdlib.h>
#include <string.h>

/*
 * The processes are laid out in the order of their start, as the merge of
 * their separate files would lay them out: their rows of /processes, their
 * pairs and their events one process after another, and one /regions for
 * all, a region of a later process that an earlier one has (same name,
 * module and offset) being that row.
 */

/* One process's regions as /regions has them, and their rows there. */
struct named {
	struct scope_sym *syms;
	const char **name, **file, **module, **kind;
	uint64_t *offset;
	uint32_t *line;
	uint32_t *row; /* in the file's /regions */
	uint32_t n;
};

struct layout {
	struct proc_out *procs;
	size_t n;
	struct named **named; /* per process: its proc_out's, or named here */
	uint64_t *first;      /* per process: its first row of /events */
	uint64_t nevents;
	uint32_t nregions;   /* rows of /regions */
	struct u64map index; /* hash of name, module and offset -> a row's process << 32 | region */
};

/* The preload library's regions are the calls it wraps: the C library's
 * (lib/libcalls.h) and MPI's. */
static const char *region_kind(const struct run_info *run, int module, const char *name)
{
	const char *path = module >= 0 ? run->mods[module].path : "", *slash = strrchr(path, '/');
	const char *libcall = scope_libcall_kind(name);

	if (strcmp(slash ? slash + 1 : path, "libscope_preload.so") != 0)
		return "function";
	return libcall ? libcall : "mpi";
}

/* A region the program named through the API (or the OpenMP runtime
 * did): its name from the arena's names area. */
static void named_region(const struct arena *a, uint64_t addr, const char **name, const char **kind)
{
	const struct scope_name *names = (const void *)(a->base + a->hdr->names_off);
	uint64_t slot = addr - SCOPE_REC_NAMED;

	*name = "(unnamed)";
	*kind = "user";
	if (addr < SCOPE_REC_NAMED || slot >= a->nnames || !names[slot].used ||
	    !memchr(names[slot].text, '\0', sizeof names[slot].text))
		return;
	*name = names[slot].text;
	*kind = names[slot].kind == SCOPE_NAME_OPENMP ? "openmp" : "user";
}

/*
 * The symbolizer of the last process named, with its modules, kept for the
 * next when that has the same (path, build-id and place): the children a
 * program forks have their parent's, and each would open the same files
 * and read the same DWARF.
 */
static struct {
	struct scope_sym_module *mods; /* its paths owned here */
	char **ids;		       /* the modules' build-ids */
	size_t n;
	struct scope_symbolizer *s;
} last;

static int same_modules(const struct scope_sym_module *sm, const struct run_info *run)
{
	if (last.n != run->nmods)
		return 0;
	for (size_t i = 0; i < last.n; i++) {
		const struct scope_sym_module *a = &last.mods[i], *b = &sm[i];
		if (strcmp(a->path, b->path) != 0 || strcmp(last.ids[i], run->mods[i].build_id) ||
		    a->bias != b->bias || a->lo != b->lo || a->hi != b->hi ||
		    a->unloaded != b->unloaded)
			return 0;
	}
	return 1;
}

void profile_names_done(void)
{
	scope_sym_close(last.s);
	for (size_t i = 0; i < last.n; i++) {
		free((char *)last.mods[i].path);
		free(last.ids[i]);
	}
	free(last.mods);
	free(last.ids);
	memset(&last, 0, sizeof last);
}

/* A symbolizer of run's modules: the last one when they are the same.
 * NULL without memory. */
static struct scope_symbolizer *symbolizer_for(const struct run_info *run)
{
	struct scope_sym_module *sm = run_sym_modules(run);
	size_t n = run->nmods;

	if (!sm)
		return NULL;
	if (last.s && same_modules(sm, run)) {
		free(sm);
		return last.s;
	}
	profile_names_done();
	last.mods = sm;
	if (!(last.ids = calloc(n + 1, sizeof *last.ids)))
		goto fail;
	for (size_t i = 0; i < n; i++, last.n++) {
		char *path = strdup(sm[i].path), *id = strdup(run->mods[i].build_id);
		if (!path || !id) {
			free(path);
			free(id);
			goto fail;
		}
		sm[i].path = path;
		last.ids[i] = id;
	}
	return last.s = scope_sym_open(sm, n);
fail:
	profile_names_done();
	return NULL;
}

struct named *profile_name(const struct run_info *run, const struct profile *p)
{
	uint32_t n = p->nregions;
	struct named *nm = calloc(1, sizeof *nm);
	struct scope_symbolizer *s;

	if (!nm)
		return NULL;
	nm->n = n;
	nm->syms = calloc(n + 1, sizeof *nm->syms);
	nm->name = calloc(n + 1, sizeof *nm->name);
	nm->file = calloc(n + 1, sizeof *nm->file);
	nm->module = calloc(n + 1, sizeof *nm->module);
	nm->kind = calloc(n + 1, sizeof *nm->kind);
	nm->offset = calloc(n + 1, sizeof *nm->offset);
	nm->line = calloc(n + 1, sizeof *nm->line);
	nm->row = calloc(n + 1, sizeof *nm->row);
	if (!nm->syms || !nm->name || !nm->file || !nm->module || !nm->kind || !nm->offset ||
	    !nm->line || !nm->row || !(s = symbolizer_for(run)))
		goto fail;
	for (uint32_t r = 0; r < n; r++) {
		struct scope_sym *y = &nm->syms[r];
		if (p->regions[r].addr < SCOPE_REC_CODE) {
			named_region(run->arena, p->regions[r].addr, &nm->name[r], &nm->kind[r]);
			nm->file[r] = nm->module[r] = "";
			continue;
		}
		if (scope_sym_lookup(s, p->regions[r].addr, p->regions[r].module, run->symbolize,
				     y) != 0)
			goto fail;
		nm->name[r] = y->name;
		nm->file[r] = y->file;
		nm->line[r] = y->line;
		nm->offset[r] = y->offset;
		nm->module[r] = y->module >= 0 ? run->mods[y->module].path : "";
		nm->kind[r] = region_kind(run, y->module, y->name);
	}
	return nm;
fail:
	profile_named_free(nm);
	return NULL;
}

void profile_named_free(struct named *nm)
{
	if (!nm)
		return;
	for (uint32_t r = 0; nm->syms && r < nm->n; r++)
		scope_sym_free(&nm->syms[r]);
	free(nm->syms);
	free(nm->name);
	free(nm->file);
	free(nm->module);
	free(nm->kind);
	free(nm->offset);
	free(nm->line);
	free(nm->row);
	free(nm);
}

static uint64_t region_hash(const struct named *nm, uint32_t r)
{
	uint64_t h =
		(map_hash_str(nm->name[r]) ^ map_hash_str(nm->module[r])) * UINT64_C(1099511628211);
	h ^= nm->offset[r];
	return h == UINT64_MAX ? 0 : h;
}

static int same_region(const struct layout *L, uint64_t owner, const struct named *nm, uint32_t r)
{
	const struct named *o = L->named[owner >> 32];
	uint32_t q = (uint32_t)owner;

	return o->offset[q] == nm->offset[r] && strcmp(o->name[q], nm->name[r]) == 0 &&
	       strcmp(o->module[q], nm->module[r]) == 0;
}

/* The row of a region with the name, module and offset of nm's region r:
 * the index's, or a new one, indexed (*added). NULL without memory. */
static uint32_t *index_slot(struct layout *L, const uint64_t *owner, const struct named *nm,
			    uint32_t r, int *added)
{
	for (uint64_t h = region_hash(nm, r);; h = h + 1 == UINT64_MAX ? 0 : h + 1) {
		uint32_t *row = map_slot(&L->index, h, L->nregions, added);
		if (!row || *added || same_region(L, owner[*row], nm, r))
			return row;
	}
}

/* Gives each process's regions their rows of /regions. The first process
 * has a row for each of its regions, as its own file would; a later one's
 * region takes the row of an earlier one's with the same name, module and
 * offset, else a row of its own. owner[row] is the process << 32 | region
 * that gives the row its values. */
static int place_regions(struct layout *L, uint64_t *owner)
{
	for (size_t k = 0; k < L->n; k++) {
		struct named *nm = L->named[k];
		for (uint32_t r = 0; r < nm->n; r++) {
			int added = 1;
			uint32_t *row = L->n > 1 ? index_slot(L, owner, nm, r, &added) : NULL;
			if (L->n > 1 && !row)
				return -1;
			if (!added && k > 0) {
				nm->row[r] = *row;
				continue;
			}
			owner[L->nregions] = (uint64_t)k << 32 | r;
			nm->row[r] = L->nregions++;
		}
	}
	return 0;
}

static int write_regions(struct columns *c, hid_t file, struct layout *L)
{
	uint64_t total = 0, *owner, *offset, *line;
	const char **name, **module, **source, **kind;
	int rc = -1;

	for (size_t k = 0; k < L->n; k++)
		total += L->named[k]->n;
	owner = calloc(total + 1, sizeof *owner);
	offset = calloc(total + 1, sizeof *offset);
	line = calloc(total + 1, sizeof *line);
	name = calloc(total + 1, sizeof *name);
	module = calloc(total + 1, sizeof *module);
	source = calloc(total + 1, sizeof *source);
	kind = calloc(total + 1, sizeof *kind);
	if (!owner || !offset || !line || !name || !module || !source || !kind ||
	    place_regions(L, owner) != 0)
		goto out;
	for (uint32_t i = 0; i < L->nregions; i++) {
		const struct named *o = L->named[owner[i] >> 32];
		uint32_t q = (uint32_t)owner[i];
		name[i] = o->name[q];
		module[i] = o->module[q];
		source[i] = o->file[q];
		kind[i] = o->kind[q];
		offset[i] = o->offset[q];
		line[i] = o->line[q];
	}
	rc = col_regions(
		c, file,
		&(struct region_columns){name, module, source, kind, offset, line, L->nregions});
out:
	free(owner);
	free(offset);
	free(line);
	free(name);
	free(module);
	free(source);
	free(kind);
	return rc;
}
_Static_assert(SC_NREG == 6, "a new /regions column: name it in profile_name, give it here");

/* What the processes have between them: a column any has is in the file,
 * 0 for the others. */
static int any_bytes(const struct layout *L)
{
	for (size_t k = 0; k < L->n; k++)
		if (L->procs[k].p->bytes)
			return 1;
	return 0;
}

static int any_aggregates(const struct layout *L)
{
	for (size_t k = 0; k < L->n; k++)
		if (L->procs[k].p->aggregates)
			return 1;
	return 0;
}

static uint32_t most_counters(const struct layout *L)
{
	uint32_t most = 0;
	for (size_t k = 0; k < L->n; k++)
		if (L->procs[k].p->ncounters > most)
			most = L->procs[k].p->ncounters;
	return most;
}

/* One value of a pair's row, the pair being region r of process k. */
typedef uint64_t pair_value(const struct layout *L, size_t k, uint32_t r, int col);

static uint64_t pair_of(const struct layout *L, size_t k, uint32_t r, int col)
{
	const struct profile *p = L->procs[k].p;
	const struct region *g = &p->regions[r];

	switch (col) {
	case SC_PAIR_PROCESS: return k;
	case SC_PAIR_REGION: return L->named[k]->row[r];
	case SC_PAIR_FIRST: return L->first[k] + g->first;
	case SC_PAIR_COUNT: return g->count;
	case SC_PAIR_TOTAL_NS: return g->total_ns;
	case SC_PAIR_TOTAL_ALL_NS: return g->total_all_ns;
	case SC_PAIR_SELF_NS: return g->self_ns > 0 ? (uint64_t)g->self_ns : 0;
	case SC_PAIR_MIN_NS: return g->count || g->aggregated ? g->min_ns : 0;
	case SC_PAIR_MAX_NS: return g->max_ns;
	case SC_PAIR_BYTES_SENT: return g->sent;
	case SC_PAIR_BYTES_RECEIVED: return g->received;
	case SC_PAIR_AGGREGATED: return g->aggregated;
	default: break;
	}
	col -= SC_PAIR_COUNTER0_TOTAL;
	if ((uint32_t)(col / 2) >= p->ncounters)
		return 0;
	return col % 2 ? (g->counter_self[col / 2] > 0 ? (uint64_t)g->counter_self[col / 2] : 0)
		       : g->counter_total[col / 2];
}
_Static_assert(SC_PAIR_COUNTER0_SELF == SC_PAIR_COUNTER0_TOTAL + 1 &&
		       SC_PAIR_COUNTER3_SELF == SC_PAIR_COUNTER0_TOTAL + 7 &&
		       SC_NPAIR == SC_PAIR_COUNTER3_SELF + 1,
	       "a new /pairs column: give its value in pair_of");

/* Which /pairs columns the file has: the required ones, the bytes when a
 * call moved some, the sums of calls filters kept out, the counters read. */
static int has_pair_column(const struct layout *L, int col)
{
	if (col == SC_PAIR_BYTES_SENT || col == SC_PAIR_BYTES_RECEIVED)
		return any_bytes(L);
	if (col == SC_PAIR_AGGREGATED)
		return any_aggregates(L);
	if (col >= SC_PAIR_COUNTER0_TOTAL)
		return (uint32_t)(col - SC_PAIR_COUNTER0_TOTAL) / 2 < most_counters(L);
	return 1;
}

static int write_pairs(struct columns *c, hid_t file, const struct layout *L)
{
	uint64_t n = 0, *v;
	hid_t g = col_group(file, SC_PAIRS);
	int rc;

	for (size_t k = 0; k < L->n; k++)
		n += L->procs[k].p->nregions;
	v = malloc((n + 1) * sizeof *v);
	rc = g >= 0 && v ? 0 : -1;
	for (int col = 0; rc == 0 && col < SC_NPAIR; col++) {
		uint64_t i = 0;
		if (!has_pair_column(L, col))
			continue;
		for (size_t k = 0; k < L->n; k++)
			for (uint32_t r = 0; r < L->procs[k].p->nregions; r++)
				v[i++] = pair_of(L, k, r, col);
		/* process and region in 32 bits; in a file of several
		 * processes at the narrowest width, as the merge has them */
		if ((col == SC_PAIR_PROCESS || col == SC_PAIR_REGION) && L->n > 1)
			rc = col_narrow(c, g, sc_pairs[col].name, v, 8, n);
		else if (col == SC_PAIR_PROCESS || col == SC_PAIR_REGION)
			rc = (narrow(v, v, n, 4), col_uint(c, g, sc_pairs[col].name, v, n, 4));
		else
			rc = col_uint(c, g, sc_pairs[col].name, v, n, 8);
	}
	free(v);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* A process's row of /processes: column col, signed ones as int64. */
static uint64_t process_of(const struct proc_out *po, int col)
{
	const struct run_info *run = po->run;
	const struct scope_arena_header *h = run->hdr;
	uint64_t start = h->start_unix_ns, end_ns = po->p->end_ns;

	switch (col) {
	case SC_PROC_PID: return (uint64_t)(int64_t)h->pid;
	case SC_PROC_PPID: return (uint64_t)(int64_t)h->ppid;
	case SC_PROC_RANK: return (uint64_t)(int64_t)h->rank;
	case SC_PROC_START: return start;
	case SC_PROC_END: return end_ns > UINT64_MAX - start ? UINT64_MAX : start + end_ns;
	case SC_PROC_EXIT_STATUS:
		return (uint64_t)(run->exit_kind == SCOPE_EXIT_STATUS ? (int64_t)run->exit_code
								      : -1);
	case SC_PROC_EXIT_SIGNAL:
		return (uint64_t)(run->exit_kind == SCOPE_EXIT_SIGNAL ? (int64_t)run->exit_code
								      : 0);
	case SC_PROC_LOST: return po->p->lost;
	case SC_PROC_EXEC: return run->exit_kind == SCOPE_EXIT_EXEC;
	case SC_PROC_COMPLETE: return h->state == SCOPE_ARENA_STOPPED;
	default: return 0;
	}
}

/* The counters a process read, "PAPI_TOT_INS,perf::TASK-CLOCK". */
static void counter_names(const struct proc_out *po, char *out, size_t cap)
{
	size_t at = 0;

	out[0] = '\0';
	for (uint32_t k = 0; k < po->p->ncounters && at < cap; k++)
		at += (size_t)snprintf(out + at, cap - at, "%s%.*s", k ? "," : "",
				       SCOPE_COUNTER_NAME_BYTES, po->run->hdr->counters[k]);
}

static int write_process_strings(hid_t g, const struct layout *L, const char **v, char *names,
				 size_t cap)
{
	int rc = 0;

	for (size_t k = 0; k < L->n; k++)
		v[k] = L->procs[k].run->hdr->exe;
	rc |= col_str(g, SC_PROC(EXECUTABLE), v, L->n);
	for (size_t k = 0; k < L->n; k++)
		v[k] = L->procs[k].run->command_line;
	rc |= col_str(g, SC_PROC(ARGUMENTS), v, L->n);
	for (size_t k = 0; k < L->n; k++)
		v[k] = L->procs[k].run->host;
	rc |= col_str(g, SC_PROC(HOST), v, L->n);
	if (most_counters(L)) {
		for (size_t k = 0; k < L->n; k++) {
			counter_names(&L->procs[k], names + k * cap, cap);
			v[k] = names + k * cap;
		}
		rc |= col_str(g, SC_PROC(COUNTERS), v, L->n);
	}
	return rc ? -1 : 0;
}

/* The columns in the order they always had: pid, ppid, parent, rank,
 * the strings between, then the unsigned ones. */
static int write_processes(struct columns *c, hid_t file, const struct layout *L)
{
	enum { CAP = SCOPE_MAX_COUNTERS * (SCOPE_COUNTER_NAME_BYTES + 1) + 1 };
	size_t n = L->n;
	uint64_t *v[SC_NPROC] = {0};
	int64_t *parent = malloc((n + 1) * sizeof *parent);
	const char **strs = calloc(n + 1, sizeof *strs);
	char *names = calloc(n + 1, CAP);
	hid_t g = col_group(file, SC_PROCESSES);
	int rc = g >= 0 && parent && strs && names ? 0 : -1;

	for (int col = 0; rc == 0 && col < SC_NPROC; col++) {
		if (!(v[col] = malloc((n + 1) * sizeof *v[col]))) {
			rc = -1;
			break;
		}
		for (size_t k = 0; k < n; k++)
			v[col][k] = process_of(&L->procs[k], col);
	}
	if (rc == 0)
		rc = parents_link(v[SC_PROC_PID], v[SC_PROC_PPID], v[SC_PROC_START],
				  v[SC_PROC_EXEC], n, parent);
	if (rc == 0 && (col_int64(c, g, SC_PROC(PID), (const int64_t *)v[SC_PROC_PID], n) != 0 ||
			col_int64(c, g, SC_PROC(PPID), (const int64_t *)v[SC_PROC_PPID], n) != 0 ||
			col_int64(c, g, SC_PROC(PARENT), parent, n) != 0 ||
			col_int64(c, g, SC_PROC(RANK), (const int64_t *)v[SC_PROC_RANK], n) != 0 ||
			col_uint(c, g, SC_PROC(START), v[SC_PROC_START], n, 8) != 0 ||
			col_uint(c, g, SC_PROC(END), v[SC_PROC_END], n, 8) != 0 ||
			col_int64(c, g, SC_PROC(EXIT_STATUS),
				  (const int64_t *)v[SC_PROC_EXIT_STATUS], n) != 0 ||
			col_int64(c, g, SC_PROC(EXIT_SIGNAL),
				  (const int64_t *)v[SC_PROC_EXIT_SIGNAL], n) != 0 ||
			col_uint(c, g, SC_PROC(LOST), v[SC_PROC_LOST], n, 8) != 0))
		rc = -1;
	if (rc == 0) {
		narrow(v[SC_PROC_EXEC], v[SC_PROC_EXEC], n, 1);
		narrow(v[SC_PROC_COMPLETE], v[SC_PROC_COMPLETE], n, 1);
		if (col_uint(c, g, SC_PROC(EXEC), v[SC_PROC_EXEC], n, 1) != 0 ||
		    col_uint(c, g, SC_PROC(COMPLETE), v[SC_PROC_COMPLETE], n, 1) != 0 ||
		    write_process_strings(g, L, strs, names, CAP) != 0)
			rc = -1;
	}
	for (int col = 0; col < SC_NPROC; col++)
		free(v[col]);
	free(parent);
	free(strs);
	free(names);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* Column col of calls e, its values in_width bytes each; NULL when e has
 * no such column (its rows are 0). */
static void *event_column(const struct events *e, int col, int *in_width)
{
	*in_width = 8;
	switch (col) {
	case SC_EV_START_DELTA: return e->start;
	case SC_EV_DURATION: return e->duration;
	case SC_EV_THREAD: *in_width = 4; return e->thread;
	case SC_EV_TASK: *in_width = 4; return e->task;
	case SC_EV_DEPTH: *in_width = 4; return e->depth;
	case SC_EV_FLAGS: *in_width = 1; return e->flags;
	case SC_EV_BYTES_SENT: return e->sent;
	case SC_EV_BYTES_RECEIVED: return e->received;
	default: return e->counter[col - SC_EV_COUNTER0];
	}
}
_Static_assert(SC_NEV == 12 && SC_EV_COUNTER0 == 8 && SCOPE_MAX_COUNTERS == 4,
	       "a new /events column: give it in event_column and in collect");

/* The largest value of column col in a profile, which its grouping noted
 * as it spilled the calls. */
static uint64_t spilled_max(const struct event_max *m, int col)
{
	switch (col) {
	case SC_EV_START_DELTA: return m->start_delta;
	case SC_EV_DURATION: return m->duration;
	case SC_EV_THREAD: return m->thread;
	case SC_EV_TASK: return m->task;
	case SC_EV_DEPTH: return m->depth;
	case SC_EV_FLAGS: return 1;
	case SC_EV_BYTES_SENT: return m->sent;
	case SC_EV_BYTES_RECEIVED: return m->received;
	default: return m->counter[col - SC_EV_COUNTER0];
	}
}

static int has_event_column(const struct layout *L, int col)
{
	if (col == SC_EV_BYTES_SENT || col == SC_EV_BYTES_RECEIVED)
		return any_bytes(L);
	if (col >= SC_EV_COUNTER0)
		return (uint32_t)(col - SC_EV_COUNTER0) < most_counters(L);
	return 1;
}

/* Each column's width: the narrowest that holds every process's values. */
static void event_widths(const struct layout *L, int width[SC_NEV])
{
	for (int col = 0; col < SC_NEV; col++) {
		width[col] = 1;
		for (size_t k = 0; has_event_column(L, col) && k < L->n; k++) {
			uint64_t max = spilled_max(&L->procs[k].p->max, col);
			if (width_for(max) > width[col])
				width[col] = width_for(max);
		}
	}
}

/* Appends the rows of calls e (n of them) to the columns, narrowed in
 * place to their widths: e is spent. */
static int put_events(struct columns *c, struct col_stream *out, const int has[SC_NEV],
		      const struct events *e, uint64_t n)
{
	for (int col = 0; col < SC_NEV; col++) {
		int in_width;
		void *v = event_column(e, col, &in_width);
		if (!has[col])
			continue;
		if (v) {
			narrow_to(v, in_width, out[col].o.width, n);
			if (col_stream_put(c, &out[col], v, n) != 0)
				return -1;
			continue;
		}
		for (uint64_t done = 0; done < n;) {
			uint64_t len = n - done < out[col].grain ? n - done : out[col].grain;
			memset(col_stream_room(&out[col]), 0, len * (uint64_t)out[col].o.width);
			if (col_stream_commit(c, &out[col], len) != 0)
				return -1;
			done += len;
		}
	}
	return 0;
}

/* A profile's calls, read back from its spill a window at a time. */
static int put_spilled(struct columns *c, struct col_stream *out, const int has[SC_NEV],
		       struct profile *p)
{
	uint64_t *prev = calloc(p->nregions + 1, sizeof *prev);
	struct events win = {0};
	int rc = prev ? 0 : -1;

	for (uint64_t w = 0; rc == 0 && w < spill_windows(p->spill); w++)
		if (spill_read(p->spill, w, p->regions, p->nregions, prev, &win) != 0 ||
		    put_events(c, out, has, &win, win.n) != 0)
			rc = -1;
	events_free(&win);
	free(prev);
	return rc;
}

/* The event columns, process after process, each at the width its largest
 * value needs. */
static int write_events(struct columns *c, hid_t file, struct layout *L)
{
	int width[SC_NEV], has[SC_NEV], rc = 0;
	struct col_stream out[SC_NEV];
	hid_t g = col_group(file, SC_EVENTS);

	event_widths(L, width);
	for (int col = 0; col < SC_NEV; col++) {
		has[col] = has_event_column(L, col);
		out[col] = (struct col_stream){.o = {.d = -1}};
		if (has[col] && rc == 0)
			rc = g < 0 ? -1
				   : col_stream_begin(c, g, sc_events[col].name, width[col],
						      L->nevents, &out[col]);
	}
	for (size_t k = 0; rc == 0 && k < L->n; k++) {
		struct profile *p = L->procs[k].p;
		rc = put_spilled(c, out, has, p);
	}
	for (int col = 0; col < SC_NEV; col++)
		if (has[col] && col_stream_end(c, &out[col], rc == 0) != 0)
			rc = -1;
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* /metadata is the first process's, with the losses of all; a file of
 * several says how many. */
static int write_metadata(hid_t file, const struct layout *L)
{
	struct run_info first = *L->procs[0].run;
	hid_t g;
	int rc;

	for (size_t k = 1; k < L->n; k++)
		first.lost += L->procs[k].run->lost;
	if (metadata_write(file, &first) != 0)
		return -1;
	if (L->n == 1)
		return 0;
	if ((g = H5Gopen2(file, SC_METADATA, H5P_DEFAULT)) < 0)
		return -1;
	rc = attr_i64(g, SC_META(PROCESSES), (int64_t)L->n);
	return H5Gclose(g) < 0 ? -1 : rc;
}

/* The groups of each process, their region ids those of /regions. */
static int write_groups(struct columns *c, hid_t file, struct layout *L)
{
	struct shared_tables sh = {.nmods = 0};

	for (size_t k = 0; k < L->n; k++) {
		struct profile *p = L->procs[k].p;
		const uint32_t *row = L->named[k]->row;
		for (uint64_t i = 0; i < p->nlane_sums; i++)
			if (p->lane_sums[i].region < p->nregions)
				p->lane_sums[i].region = row[p->lane_sums[i].region];
		for (uint64_t i = 0; i < p->nsamples; i++)
			if (p->samples[i].region < p->nregions)
				p->samples[i].region = row[p->samples[i].region];
		if (process_group_write(c, file, k, L->procs[k].run, p, &sh) != 0)
			return -1;
	}
	return 0;
}

static int by_start(const void *x, const void *y)
{
	const struct scope_arena_header *a = ((const struct proc_out *)x)->run->hdr,
					*b = ((const struct proc_out *)y)->run->hdr;
	if (a->start_unix_ns != b->start_unix_ns)
		return a->start_unix_ns < b->start_unix_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int write_file(const char *path, struct layout *L, const struct storage *st)
{
	struct columns c;
	hid_t file = profile_create(path, H5P_DEFAULT);
	int rc = -1;

	if (file < 0)
		return -1;
	if (columns_init(&c, st) == 0 && attr_root(file) == 0 && write_metadata(file, L) == 0 &&
	    write_processes(&c, file, L) == 0 && (phase("metadata"), 1) &&
	    write_regions(&c, file, L) == 0 && (phase("regions"), 1) &&
	    write_pairs(&c, file, L) == 0 && write_events(&c, file, L) == 0 &&
	    (phase("events"), 1) && write_groups(&c, file, L) == 0 && (phase("groups"), 1) &&
	    describe_profile(file) == 0 && metadata_filters(file, L->procs, L->n) == 0)
		rc = 0;
	columns_fini(&c);
	if (H5Fclose(file) < 0)
		rc = -1;
	return rc;
}

int profile_write(const char *path, struct proc_out *procs, size_t n, const struct storage *st)
{
	struct layout L = {
		procs, n,  calloc(n + 1, sizeof *L.named), calloc(n + 1, sizeof *L.first), 0,
		0,     {0}};
	int rc = L.named && L.first ? 0 : -1;

	qsort(procs, n, sizeof *procs, by_start);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		L.first[k] = L.nevents;
		L.nevents += procs[k].p->nevents;
		L.named[k] =
			procs[k].named ? procs[k].named : profile_name(procs[k].run, procs[k].p);
		rc = L.named[k] ? 0 : -1;
	}
	/* the names are copied out: the file is written without the DWARF */
	profile_names_done();
	if (rc == 0)
		rc = write_file(path, &L, st);
	for (size_t k = 0; L.named && k < n; k++)
		if (!procs[k].named)
			profile_named_free(L.named[k]);
	free(L.named);
	free(L.first);
	map_free(&L.index);
	return rc;
}
