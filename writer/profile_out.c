/* SPDX-License-Identifier: MIT */
/* Lays out schema 3: /metadata, /processes, /regions, /pairs, /events, /process0. */
#define _GNU_SOURCE
#include "profile_out.h"
#include "map.h"

#include "columns.h"
#include "libcalls.h"
#include "schema.h"
#include "spill.h"
#include "symbolize.h"
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

/* Writes the event columns of calls grouped in memory. They are narrowed
 * in place: p->ev is spent. */
static int write_events_held(struct columns *c, hid_t g, struct profile *p)
{
	struct events *ev = &p->ev;
	int rc = -1;

	/* A region's first call keeps its start; each later one, the gap to
	 * the call before it. */
	for (uint32_t r = 0; r < p->nregions; r++) {
		const struct region *reg = &p->regions[r];
		for (uint64_t i = reg->first + reg->count; i-- > reg->first + 1;)
			ev->start[i] -= ev->start[i - 1];
	}
	if (col_narrow(c, g, SC_EV(START_DELTA), ev->start, 8, ev->n) == 0 &&
	    col_narrow(c, g, SC_EV(DURATION), ev->duration, 8, ev->n) == 0 &&
	    col_narrow(c, g, SC_EV(THREAD), ev->thread, 4, ev->n) == 0 &&
	    col_narrow(c, g, SC_EV(TASK), ev->task, 4, ev->n) == 0 &&
	    col_narrow(c, g, SC_EV(DEPTH), ev->depth, 4, ev->n) == 0 &&
	    col_uint(c, g, SC_EV(FLAGS), ev->flags, ev->n, 1) == 0 &&
	    (!p->bytes || (col_narrow(c, g, SC_EV(BYTES_SENT), ev->sent, 8, ev->n) == 0 &&
			   col_narrow(c, g, SC_EV(BYTES_RECEIVED), ev->received, 8, ev->n) == 0)))
		rc = 0;
	for (uint32_t k = 0; rc == 0 && k < p->ncounters; k++)
		rc = col_narrow(c, g, sc_events[SC_EV_COUNTER0 + k].name, ev->counter[k], 8, ev->n);
	return rc;
}

/* The columns below list every event column by hand. */
_Static_assert(SC_NEV == 12,
	       "a new /events column: write it here, in write_events_held and in collect");
_Static_assert(SC_EV_COUNTER3 == SC_EV_COUNTER0 + 3 && SCOPE_MAX_COUNTERS == 4,
	       "counter columns follow each other");

/* Writes the event columns of spilled calls, window by window, each at the
 * width its largest value needs. */
static int write_events_spilled(struct columns *c, hid_t g, struct profile *p)
{
	const int in_width[SC_NEV] = {
		[SC_EV_START_DELTA] = 8, [SC_EV_DURATION] = 8,	     [SC_EV_THREAD] = 4,
		[SC_EV_TASK] = 4,	 [SC_EV_DEPTH] = 4,	     [SC_EV_FLAGS] = 1,
		[SC_EV_BYTES_SENT] = 8,	 [SC_EV_BYTES_RECEIVED] = 8, [SC_EV_COUNTER0] = 8,
		[SC_EV_COUNTER1] = 8,	 [SC_EV_COUNTER2] = 8,	     [SC_EV_COUNTER3] = 8};
	const int width[SC_NEV] = {[SC_EV_START_DELTA] = width_for(p->max.start_delta),
				   [SC_EV_DURATION] = width_for(p->max.duration),
				   [SC_EV_THREAD] = width_for(p->max.thread),
				   [SC_EV_TASK] = width_for(p->max.task),
				   [SC_EV_DEPTH] = width_for(p->max.depth),
				   [SC_EV_FLAGS] = 1,
				   [SC_EV_BYTES_SENT] = width_for(p->max.sent),
				   [SC_EV_BYTES_RECEIVED] = width_for(p->max.received),
				   [SC_EV_COUNTER0] = width_for(p->max.counter[0]),
				   [SC_EV_COUNTER1] = width_for(p->max.counter[1]),
				   [SC_EV_COUNTER2] = width_for(p->max.counter[2]),
				   [SC_EV_COUNTER3] = width_for(p->max.counter[3])};
	int ncols = 0, rc = 0, k, col[SC_NEV];
	uint64_t *prev = calloc(p->nregions + 1, sizeof *prev), n = p->nevents;
	struct col_out out[SC_NEV];
	struct events win = {0};

	/* the columns this profile has: bytes when a call moved some, the
	 * counters read */
	for (k = 0; k < SC_NEV; k++)
		if (k < SC_EV_BYTES_SENT || (k <= SC_EV_BYTES_RECEIVED && p->bytes) ||
		    (k >= SC_EV_COUNTER0 && (uint32_t)(k - SC_EV_COUNTER0) < p->ncounters))
			col[ncols++] = k;
	for (k = 0; k < ncols && rc == 0; k++)
		if ((rc = col_begin(c, g, sc_events[col[k]].name, width[col[k]], n, &out[k])) != 0)
			break;
	ncols = k;
	if (!prev)
		rc = -1;
	for (uint64_t w = 0; rc == 0 && w < spill_windows(p->spill); w++) {
		void *data[SC_NEV] = {0};
		if (spill_read(p->spill, w, p->regions, p->nregions, prev, &win) != 0) {
			rc = -1;
			break;
		}
		data[SC_EV_START_DELTA] = win.start;
		data[SC_EV_DURATION] = win.duration;
		data[SC_EV_THREAD] = win.thread;
		data[SC_EV_DEPTH] = win.depth;
		data[SC_EV_TASK] = win.task;
		data[SC_EV_FLAGS] = win.flags;
		data[SC_EV_BYTES_SENT] = win.sent;
		data[SC_EV_BYTES_RECEIVED] = win.received;
		for (int i = 0; i < SCOPE_MAX_COUNTERS; i++)
			data[SC_EV_COUNTER0 + i] = win.counter[i];
		for (k = 0; k < ncols && rc == 0; k++) {
			narrow_to(data[col[k]], in_width[col[k]], width[col[k]], win.n);
			rc = col_put(c, &out[k], data[col[k]], w * spill_window_rows(p->spill),
				     win.n);
		}
	}
	for (k = 0; k < ncols; k++)
		if (col_end(&out[k]) != 0)
			rc = -1;
	events_free(&win);
	free(prev);
	return rc;
}

static int write_events(struct columns *c, hid_t file, struct profile *p)
{
	hid_t g = H5Gcreate2(file, SC_EVENTS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int rc = g < 0 ? -1 : p->spill ? write_events_spilled(c, g, p) : write_events_held(c, g, p);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

static int write_pairs(struct columns *c, hid_t file, const struct profile *p)
{
	uint32_t n = p->nregions;
	hid_t g = H5Gcreate2(file, SC_PAIRS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	uint32_t *u32 = malloc((n + 1) * sizeof *u32);
	uint64_t *u64 = malloc((n + 1) * sizeof *u64);
	int rc = g >= 0 && u32 && u64 ? 0 : -1;

#define COLUMN(name, expr, arr, width)                                                             \
	if (rc == 0) {                                                                             \
		for (uint32_t i = 0; i < n; i++)                                                   \
			arr[i] = (expr);                                                           \
		rc = col_uint(c, g, name, arr, n, width);                                          \
	}
	COLUMN(SC_PAIR(PROCESS), 0, u32, 4)
	COLUMN(SC_PAIR(REGION), i, u32, 4)
	COLUMN(SC_PAIR(FIRST), p->regions[i].first, u64, 8)
	COLUMN(SC_PAIR(COUNT), p->regions[i].count, u64, 8)
	COLUMN(SC_PAIR(TOTAL_NS), p->regions[i].total_ns, u64, 8)
	COLUMN(SC_PAIR(TOTAL_ALL_NS), p->regions[i].total_all_ns, u64, 8)
	COLUMN(SC_PAIR(SELF_NS), p->regions[i].self_ns > 0 ? (uint64_t)p->regions[i].self_ns : 0,
	       u64, 8)
	COLUMN(SC_PAIR(MIN_NS),
	       p->regions[i].count || p->regions[i].aggregated ? p->regions[i].min_ns : 0, u64, 8)
	COLUMN(SC_PAIR(MAX_NS), p->regions[i].max_ns, u64, 8)
	if (p->bytes) {
		COLUMN(SC_PAIR(BYTES_SENT), p->regions[i].sent, u64, 8)
		COLUMN(SC_PAIR(BYTES_RECEIVED), p->regions[i].received, u64, 8)
	}
	if (p->aggregates)
		COLUMN(SC_PAIR(AGGREGATED), p->regions[i].aggregated, u64, 8)
	for (uint32_t k = 0; k < p->ncounters; k++) {
		COLUMN(sc_pairs[SC_PAIR_COUNTER0_TOTAL + 2 * k].name,
		       p->regions[i].counter_total[k], u64, 8)
		COLUMN(sc_pairs[SC_PAIR_COUNTER0_SELF + 2 * k].name,
		       p->regions[i].counter_self[k] > 0 ? (uint64_t)p->regions[i].counter_self[k]
							 : 0,
		       u64, 8)
	}
#undef COLUMN
	free(u32);
	free(u64);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

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

static int write_regions(struct columns *c, hid_t file, const struct run_info *run,
			 const struct profile *p)
{
	uint32_t n = p->nregions;
	struct scope_sym_module *sm = run_sym_modules(run);
	struct scope_sym *syms = calloc(n + 1, sizeof *syms);
	const char **names = calloc(n + 1, sizeof *names), **files = calloc(n + 1, sizeof *files);
	const char **modules = calloc(n + 1, sizeof *modules),
		   **kinds = calloc(n + 1, sizeof *kinds);
	uint64_t *offsets = calloc(n + 1, sizeof *offsets);
	uint32_t *lines = calloc(n + 1, sizeof *lines);
	struct scope_symbolizer *s = NULL;
	hid_t g = -1;
	int rc = -1;

	if (!sm || !syms || !names || !files || !modules || !kinds || !offsets || !lines)
		goto out;
	s = scope_sym_open(sm, run->nmods);
	if (!s)
		goto out;
	for (uint32_t r = 0; r < n; r++) {
		if (p->regions[r].addr < SCOPE_REC_CODE) {
			named_region(run->arena, p->regions[r].addr, &names[r], &kinds[r]);
			files[r] = modules[r] = "";
			continue;
		}
		if (scope_sym_lookup(s, p->regions[r].addr, p->regions[r].module, run->symbolize,
				     &syms[r]) != 0)
			goto out;
		names[r] = syms[r].name;
		files[r] = syms[r].file;
		lines[r] = syms[r].line;
		offsets[r] = syms[r].offset;
		modules[r] = syms[r].module >= 0 ? run->mods[syms[r].module].path : "";
		kinds[r] = region_kind(run, syms[r].module, syms[r].name);
	}
	g = H5Gcreate2(file, SC_REGIONS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g >= 0 && col_str(g, SC_REG(NAME), names, n) == 0 &&
	    col_str(g, SC_REG(MODULE), modules, n) == 0 &&
	    col_uint(c, g, SC_REG(OFFSET), offsets, n, 8) == 0 &&
	    col_str(g, SC_REG(FILE), files, n) == 0 &&
	    col_uint(c, g, SC_REG(LINE), lines, n, 4) == 0 &&
	    col_str(g, SC_REG(KIND), kinds, n) == 0)
		rc = 0;
out:
	for (uint32_t r = 0; syms && r < n; r++)
		scope_sym_free(&syms[r]);
	scope_sym_close(s);
	free(sm);
	free(syms);
	free(names);
	free(files);
	free(modules);
	free(kinds);
	free(offsets);
	free(lines);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

static int write_processes(struct columns *c, hid_t file, const struct run_info *run,
			   const struct profile *p)
{
	const struct scope_arena_header *h = run->hdr;
	hid_t g = H5Gcreate2(file, SC_PROCESSES, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int64_t pid = h->pid, ppid = h->ppid, parent = -1, rank = h->rank;
	uint64_t lost = p->lost;
	uint8_t exec = run->exit_kind == SCOPE_EXIT_EXEC,
		complete = h->state == SCOPE_ARENA_STOPPED;
	int64_t status = run->exit_kind == SCOPE_EXIT_STATUS ? run->exit_code : -1;
	int64_t sig = run->exit_kind == SCOPE_EXIT_SIGNAL ? run->exit_code : 0;
	uint64_t start = h->start_unix_ns;
	uint64_t end = p->end_ns > UINT64_MAX - start ? UINT64_MAX : start + p->end_ns;
	const char *exe = h->exe, *args = run->command_line, *host = run->host;
	char counters[SCOPE_MAX_COUNTERS * SCOPE_COUNTER_NAME_BYTES] = "";
	const char *cnames = counters;
	int rc = -1;

	for (uint32_t k = 0; k < p->ncounters; k++) {
		if (k)
			strcat(counters, ",");
		strcat(counters, h->counters[k]);
	}

	if (g >= 0 && col_int64(c, g, SC_PROC(PID), &pid, 1) == 0 &&
	    col_int64(c, g, SC_PROC(PPID), &ppid, 1) == 0 &&
	    col_int64(c, g, SC_PROC(PARENT), &parent, 1) == 0 &&
	    col_int64(c, g, SC_PROC(RANK), &rank, 1) == 0 &&
	    col_str(g, SC_PROC(EXECUTABLE), &exe, 1) == 0 &&
	    col_str(g, SC_PROC(ARGUMENTS), &args, 1) == 0 &&
	    col_uint(c, g, SC_PROC(START), &start, 1, 8) == 0 &&
	    col_uint(c, g, SC_PROC(END), &end, 1, 8) == 0 &&
	    col_int64(c, g, SC_PROC(EXIT_STATUS), &status, 1) == 0 &&
	    col_int64(c, g, SC_PROC(EXIT_SIGNAL), &sig, 1) == 0 &&
	    col_uint(c, g, SC_PROC(LOST), &lost, 1, 8) == 0 &&
	    col_uint(c, g, SC_PROC(EXEC), &exec, 1, 1) == 0 &&
	    col_uint(c, g, SC_PROC(COMPLETE), &complete, 1, 1) == 0 &&
	    col_str(g, SC_PROC(HOST), &host, 1) == 0 &&
	    (!p->ncounters || col_str(g, SC_PROC(COUNTERS), &cnames, 1) == 0))
		rc = 0;
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

int profile_write(const char *path, const struct run_info *run, struct profile *p,
		  const struct storage *st)
{
	struct columns c;
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file;
	int rc = -1;

	/* The oldest format that has everything used: any reader from
	 * HDF5 1.8 on opens the file. */
	H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
	file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (file < 0)
		return -1;
	if (columns_init(&c, st) == 0 && attr_root(file) == 0 && metadata_write(file, run) == 0 &&
	    write_processes(&c, file, run, p) == 0 && (phase("metadata"), 1) &&
	    write_regions(&c, file, run, p) == 0 && (phase("regions"), 1) &&
	    write_pairs(&c, file, p) == 0 && write_events(&c, file, p) == 0 &&
	    (phase("events"), 1) && process_group_write(&c, file, 0, run, p) == 0 &&
	    describe_profile(file) == 0)
		rc = 0;
	if (rc == 0 && metadata_filters(file, p) != 0)
		rc = -1;
	columns_fini(&c);
	if (H5Fclose(file) < 0)
		rc = -1;
	return rc;
}
