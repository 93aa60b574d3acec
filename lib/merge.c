/* SPDX-License-Identifier: MIT */
/* The merge: combines the profiles of a run's processes into one file (scope-merge, the last rank).
 */
#define _GNU_SOURCE
#include "merge.h"
#include "map.h"

#include "columns.h"
#include "grow.h"
#include "h5copy.h"
#include "merge_parts.h"
#include "parents.h"
#include "progress.h"
#include "publish.h"
#include "reader.h"
#include "schema.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Merging is one pass over the inputs in the order of their first start,
 * one input open at a time. A scan before it reads only each input's sizes
 * and column types, so the output's event columns are created at their
 * final length and width, and each input's events are appended to them and
 * written a chunk at a time as chunks fill: events never all sit in memory.
 * The small tables (processes, pairs) are allocated once at their final
 * length and each input is read straight into its slice; regions are
 * deduplicated through a hash index of names. Time grows with the inputs'
 * rows, never with their product.
 */

/*
 * The columns are lib/schema.h's. A column the schema calls optional exists
 * only in some profiles (the bytes of MPI calls, the host a process ran
 * on): the merged file has such a column when any input has it, with 0 (or
 * "") in the rows of the inputs without it; /processes always has its
 * integer columns, with the reader's fill for older inputs.
 */
_Static_assert(SC_NREG == 6, "a new /regions column: read and keep it in add_regions, and write "
			     "it in write_tables");

static int is_string(enum sc_type t)
{
	return t == SC_STRING;
}

static int is_signed(enum sc_type t)
{
	return t == SC_INT32 || t == SC_INT64;
}

/* The region columns grow as new regions are found: reserved once per
 * input for all its regions, never per region. */
struct col {
	uint64_t *v;
	uint64_t n, cap;
};

struct strs {
	char **v;
	uint64_t n, cap;
};

/* An event column of the output, appended input after input: whole
 * chunks are written as they fill, so about two chunks of it are in memory. */
struct merged {
	uint64_t nproc, npairs, nevents; /* the totals, from the scan */
	uint64_t procs, pairs, events;	 /* rows filled so far */
	/* by column of lib/schema.h; an optional column no input has is
	 * NULL, its width 0; /processes/parent is computed, never read */
	uint64_t *proc[SC_NPROC]; /* integers, signed ones as int64 */
	char **pstr[SC_NPROC];	  /* strings */
	uint64_t *pair[SC_NPAIR];
	int has_proc[SC_NPROC], has_pair[SC_NPAIR];
	int ewidth[SC_NEV];		  /* the widest input's, 0 when none has it */
	struct col_stream *event[SC_NEV]; /* while the events are appended */
	struct strs rname, rmodule, rfile, rkind;
	struct col roffset, rline;
	struct u64map regions; /* hash of a region's name, module and offset -> merged id */
};

static uint64_t region_hash(const struct rd_region *r)
{
	uint64_t h = (map_hash_str(r->name) ^ map_hash_str(r->module)) * UINT64_C(1099511628211);
	h ^= r->offset;
	return h == UINT64_MAX ? 0 : h;
}

static int same_region(const struct merged *m, uint32_t id, const struct rd_region *r)
{
	return m->roffset.v[id] == r->offset && strcmp(m->rname.v[id], r->name) == 0 &&
	       strcmp(m->rmodule.v[id], r->module) == 0;
}

/*
 * The merged id of a region, by name, module and offset; *added tells when
 * it is new, and the caller then appends it as region m->rname.n. Keyed by a
 * hash of the three: a region whose hash an earlier one took moves on to
 * hash + 1. UINT32_MAX without memory.
 */
static uint32_t region_id(struct merged *m, const struct rd_region *r, int *added)
{
	for (uint64_t h = region_hash(r);; h = h + 1 == UINT64_MAX ? 0 : h + 1) {
		uint32_t *id = map_slot(&m->regions, h, (uint32_t)m->rname.n, added);
		if (!id)
			return UINT32_MAX;
		if (*added || same_region(m, *id, r))
			return *id;
	}
}

/* One input: what the scan found, then the profile while it is read. */
struct input {
	const char *path;
	struct rd_profile *p;
	uint64_t start; /* of its first process */
	uint64_t nproc, npairs, nevents;
	int64_t mpi_ranks; /* the job's size its /metadata gives, 0 when none */
	char err[RD_ERR_MAX];
};

static int in_fail(struct input *in, const char *what, const char *name)
{
	snprintf(in->err, sizeof in->err, "%s %s", name, what);
	return -1;
}

static void free_strs(char **v, uint64_t n)
{
	for (uint64_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Opens an input that validate_input passed, through the reader. */
static int open_input(struct input *in)
{
	in->p = rd_open(in->path, in->err, sizeof in->err);
	return in->p ? 0 : -1;
}

static void close_input(struct input *in)
{
	rd_close(in->p);
	in->p = NULL;
}

/*
 * Reads the input as every reader of the merged file will: its tables and
 * their ranges (rd_open), every call's thread lane, start and end
 * (rd_check_events), and the tables of its processes that are copied
 * (rd_check_tables: the region columns copied are renumbered in place), so
 * that what the merge writes reads back. Notes its first process's start
 * (the merge's order), its rows and its job's size.
 */
static int validate_input(struct input *in)
{
	int rc = 0;

	if (open_input(in) != 0)
		return -1;
	if (rd_check_events(in->p, RD_CHECKED) != 0 || rd_check_tables(in->p) != 0)
		rc = -1, snprintf(in->err, sizeof in->err, "%s", in->p->err);
	else if (in->p->nprocesses == 0)
		rc = in_fail(in, "is empty", "/" SC_PROCESSES);
	else {
		in->start = in->p->processes[0].start;
		in->nproc = in->p->nprocesses;
		in->npairs = in->p->npairs;
		in->nevents = in->p->nevents;
		in->mpi_ranks = in->p->meta.mpi_ranks;
	}
	return rc;
}

/* The first pass over an input: validated, then which optional columns it
 * has and the widths of its event columns. */
static int scan_input(struct merged *m, struct input *in)
{
	char name[64];
	int rc = -1;

	if (validate_input(in) != 0)
		goto out;
	for (int c = 0; c < SC_NPROC; c++) {
		snprintf(name, sizeof name, "/%s/%s", SC_PROCESSES, sc_processes[c].name);
		if (sc_processes[c].need == SC_OPTIONAL && rd_has(in->p, name))
			m->has_proc[c] = 1;
	}
	for (int c = 0; c < SC_NPAIR; c++) {
		snprintf(name, sizeof name, "/%s/%s", SC_PAIRS, sc_pairs[c].name);
		if (rd_has(in->p, name))
			m->has_pair[c] = 1;
	}
	for (int c = 0; c < SC_NEV; c++)
		if (rd_event_width(in->p, c) > m->ewidth[c])
			m->ewidth[c] = rd_event_width(in->p, c);
	m->nproc += in->nproc;
	m->npairs += in->npairs;
	m->nevents += in->nevents;
	rc = 0;
out:
	close_input(in);
	return rc;
}

/* Every column at its final length, zeroed: rows of an input without an
 * optional column stay 0. */
static int allocate(struct merged *m)
{
	for (int c = 0; c < SC_NPROC; c++) {
		const struct sc_field *f = &sc_processes[c];
		if (c == SC_PROC_PARENT)
			continue;
		if (!is_string(f->type) && !(m->proc[c] = calloc(m->nproc + 1, sizeof *m->proc[c])))
			return -1;
		if (is_string(f->type) && (f->need == SC_REQUIRED || m->has_proc[c]) &&
		    !(m->pstr[c] = calloc(m->nproc + 1, sizeof *m->pstr[c])))
			return -1;
	}
	for (int c = 0; c < SC_NPAIR; c++)
		if ((sc_pairs[c].need == SC_REQUIRED || m->has_pair[c]) &&
		    !(m->pair[c] = calloc(m->npairs + 1, sizeof *m->pair[c])))
			return -1;
	for (int c = 0; c < SC_NEV; c++)
		if (sc_events[c].need == SC_REQUIRED && !m->ewidth[c])
			m->ewidth[c] = 1; /* every input lacks it: reading one says so */
	return 0;
}

static void merged_free(struct merged *m)
{
	for (int c = 0; c < SC_NPROC; c++) {
		free(m->proc[c]);
		free_strs(m->pstr[c], m->nproc);
	}
	for (int c = 0; c < SC_NPAIR; c++)
		free(m->pair[c]);
	free_strs(m->rname.v, m->rname.n);
	free_strs(m->rmodule.v, m->rmodule.n);
	free_strs(m->rfile.v, m->rfile.n);
	free_strs(m->rkind.v, m->rkind.n);
	free(m->roffset.v);
	free(m->rline.v);
	map_free(&m->regions);
}

static int add_processes(struct merged *m, struct input *in)
{
	uint64_t base = m->procs, n = in->nproc;

	if (base + n > m->nproc)
		return in_fail(in, "changed since it was scanned", "/" SC_PROCESSES);
	for (int c = 0; c < SC_NPROC; c++) {
		for (uint64_t i = 0; m->proc[c] && i < n; i++)
			memcpy(&m->proc[c][base + i], rd_process_field(&in->p->processes[i], c),
			       sizeof(uint64_t));
		for (uint64_t i = 0; m->pstr[c] && i < n; i++) {
			/* the merged table owns the reader's copy */
			char **v = (char **)rd_process_field(&in->p->processes[i], c);
			m->pstr[c][base + i] = *v;
			*v = NULL;
		}
	}
	m->procs += n;
	return 0;
}

/* Reads the input's regions and returns its id -> merged id table. */
static uint32_t *add_regions(struct merged *m, struct input *in, uint64_t *nreg)
{
	uint64_t n = in->p->nregions;
	struct rd_region *reg = in->p->regions;
	uint32_t *map = NULL;

	/* room for every region being new: no column grows inside the loop */
	if (scope_grow((void **)&m->rname.v, &m->rname.cap, m->rname.n + n, sizeof(char *)) ||
	    scope_grow((void **)&m->rmodule.v, &m->rmodule.cap, m->rmodule.n + n, sizeof(char *)) ||
	    scope_grow((void **)&m->rfile.v, &m->rfile.cap, m->rfile.n + n, sizeof(char *)) ||
	    scope_grow((void **)&m->rkind.v, &m->rkind.cap, m->rkind.n + n, sizeof(char *)) ||
	    scope_grow((void **)&m->roffset.v, &m->roffset.cap, m->roffset.n + n, 8) ||
	    scope_grow((void **)&m->rline.v, &m->rline.cap, m->rline.n + n, 8) ||
	    !(map = malloc((n + 1) * sizeof *map)))
		goto out;
	for (uint64_t r = 0; r < n; r++) {
		int added;
		map[r] = region_id(m, &reg[r], &added);
		if (map[r] == UINT32_MAX)
			goto fail;
		if (!added)
			continue;
		m->rname.v[m->rname.n++] = reg[r].name;
		m->rmodule.v[m->rmodule.n++] = reg[r].module;
		m->rfile.v[m->rfile.n++] = reg[r].file;
		m->rkind.v[m->rkind.n++] = reg[r].kind;
		/* the merged tables own the reader's copies */
		reg[r].name = reg[r].module = reg[r].file = reg[r].kind = NULL;
		m->roffset.v[m->roffset.n++] = reg[r].offset;
		m->rline.v[m->rline.n++] = reg[r].line;
	}
	*nreg = n;
	goto out;
fail:
	free(map);
	map = NULL;
out:
	return map;
}

/* The input's pairs, pointing at the merged processes, regions and events. */
static int add_pairs(struct merged *m, struct input *in, const uint32_t *rmap, uint64_t nreg)
{
	uint64_t base = m->pairs, n = in->npairs, ne = in->nevents;
	uint64_t *process, *region, *first, *count;

	if (base + n > m->npairs)
		return in_fail(in, "changed since it was scanned", "/" SC_PAIRS);
	/* an optional column this input lacks reads as 0 */
	for (int c = 0; c < SC_NPAIR; c++)
		for (uint64_t i = 0; m->pair[c] && i < n; i++)
			memcpy(&m->pair[c][base + i], rd_pair_field(&in->p->pairs[i], c),
			       sizeof(uint64_t));
	process = m->pair[SC_PAIR_PROCESS] + base;
	region = m->pair[SC_PAIR_REGION] + base;
	first = m->pair[SC_PAIR_FIRST] + base;
	count = m->pair[SC_PAIR_COUNT] + base;
	for (uint64_t i = 0; i < n; i++) {
		if (process[i] >= in->nproc || region[i] >= nreg || first[i] > ne ||
		    count[i] > ne - first[i])
			return in_fail(in, "point outside the file's processes, regions or events",
				       "/" SC_PAIRS);
		process[i] += m->procs - in->nproc;
		region[i] = rmap[region[i]];
		first[i] += m->events;
	}
	m->pairs += n;
	return 0;
}

/* Appends one column of the input's events, a chunk's rows at a time; an
 * input without an optional column adds zeros. */
static int append_event_column(struct columns *c, struct merged *m, struct input *in, int k)
{
	struct col_stream *e = m->event[k];
	uint64_t n = in->nevents;
	int have = rd_event_width(in->p, k) > 0, rc = 0;
	char name[64];

	snprintf(name, sizeof name, "/%s/%s", SC_EVENTS, sc_events[k].name);
	if (sc_events[k].need == SC_REQUIRED && !have)
		return in_fail(in, "is missing", name);
	for (uint64_t off = 0; rc == 0 && off < n;) {
		uint64_t len = n - off < e->grain ? n - off : e->grain;
		unsigned char *to = col_stream_room(e);
		if (!have) {
			memset(to, 0, len * (uint64_t)e->o.width);
			progress_add(len); /* as if read, as the progress line counts it */
		} else if (rd_event_rows(in->p, k, off, len, e->o.width, to) != 0)
			rc = in_fail(in, "cannot be read", name);
		off += len;
		if (rc == 0 && col_stream_commit(c, e, len) != 0)
			rc = in_fail(in, "cannot be appended to the output", name);
	}
	return rc;
}

static int add_events(struct columns *c, struct merged *m, struct input *in)
{
	if (m->events + in->nevents > m->nevents)
		return in_fail(in, "changed since it was scanned", "/" SC_EVENTS);
	for (int k = 0; k < SC_NEV; k++)
		if (m->event[k] && append_event_column(c, m, in, k) != 0)
			return -1;
	m->events += in->nevents;
	return 0;
}

/* The output's event columns, created at their final length and width:
 * the widest any input has, which is the narrowest that holds every
 * value when the inputs are narrowed as the writer narrows them. */
static int events_begin(struct columns *c, hid_t file, struct merged *m)
{
	hid_t g = col_group(file, SC_EVENTS);
	int rc = g >= 0 ? 0 : -1;

	for (int k = 0; rc == 0 && k < SC_NEV; k++) {
		if (!m->ewidth[k])
			continue;
		if (!(m->event[k] = calloc(1, sizeof *m->event[k]))) {
			rc = -1;
			break;
		}
		rc = col_stream_begin(c, g, sc_events[k].name, m->ewidth[k], m->nevents,
				      m->event[k]);
	}
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* Writes what the event columns still hold and closes them; returns -1
 * when a write failed (after every column is closed). */
static int events_end(struct columns *c, struct merged *m, int write)
{
	int rc = 0;
	for (int k = 0; k < SC_NEV; k++) {
		if (!m->event[k])
			continue;
		if (col_stream_end(c, m->event[k], write) != 0)
			rc = -1;
		free(m->event[k]);
		m->event[k] = NULL;
	}
	return rc;
}

/* The input's process<N> groups, renumbered in the merged order. */
static int copy_process_groups(hid_t out, struct input *in, uint64_t base)
{
	struct linked_copies seen = {0};
	int rc = 0;

	for (uint64_t p = 0; rc == 0 && p < in->nproc; p++) {
		char from[32], to[32];
		snprintf(from, sizeof from, SC_PROCESS_N, (size_t)p);
		snprintf(to, sizeof to, SC_PROCESS_N, (size_t)(base + p));
		if (rd_has(in->p, from) && rd_copy(in->p, from, out, to, &seen) != 0)
			rc = in_fail(in, "cannot be copied", from);
	}
	linked_copies_free(&seen);
	return rc;
}

/* The region columns of the input's /process<N>/aggregates and samples,
 * copied as they were, in the merged region ids. */
static int remap_aggregates(hid_t out, struct input *in, uint64_t base, const uint32_t *rmap,
			    uint64_t nreg)
{
	for (uint64_t p = 0; p < 2 * in->nproc; p++) { /* aggregates, samples */
		char name[64];
		hid_t d, space;
		hssize_t n;
		uint32_t *v;
		int rc = 0;
		snprintf(name, sizeof name, "/" SC_PROCESS_N "/%s/%s", (size_t)(base + p / 2),
			 p % 2 ? SC_SAMPLES : SC_AGGREGATES,
			 p % 2 ? SC_SMP(REGION) : SC_AGG(REGION));
		if (H5Lexists(out, name, H5P_DEFAULT) <= 0)
			continue;
		d = H5Dopen2(out, name, H5P_DEFAULT);
		space = d >= 0 ? H5Dget_space(d) : -1;
		n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
		v = n >= 0 ? malloc(((size_t)n + 1) * sizeof *v) : NULL;
		if (!v || H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
			rc = -1;
		for (hssize_t i = 0; rc == 0 && i < n; i++)
			if (v[i] < nreg)
				v[i] = rmap[v[i]];
		if (rc == 0 && H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
			rc = -1;
		free(v);
		if (space >= 0)
			H5Sclose(space);
		if (d >= 0)
			H5Dclose(d);
		if (rc != 0)
			return in_fail(in, "cannot be renumbered", name);
	}
	return 0;
}

/* Everything one input adds: the rows of its tables into memory, its
 * process<N> groups (and, for the first, /metadata) into the output. */
static int add_input(struct columns *c, struct merged *m, struct input *in, hid_t out, int first)
{
	uint64_t base = m->procs, nreg = 0;
	uint32_t *rmap = NULL;
	int rc = -1;

	if (open_input(in) != 0)
		goto out;
	if (first && rd_copy(in->p, SC_METADATA, out, SC_METADATA, NULL) != 0) {
		in_fail(in, "cannot be copied", "/" SC_METADATA);
		goto out;
	}
	if (add_processes(m, in) == 0 && (rmap = add_regions(m, in, &nreg)) != NULL &&
	    add_pairs(m, in, rmap, nreg) == 0 && add_events(c, m, in) == 0 &&
	    copy_process_groups(out, in, base) == 0 &&
	    remap_aggregates(out, in, base, rmap, nreg) == 0)
		rc = 0;
out:
	free(rmap);
	close_input(in);
	return rc;
}

struct job {
	struct merged *m;
	struct input *inputs;
	size_t n;
	const struct storage *st;
	int ranks;	     /* the job's size, 0 when not an MPI job */
	struct input *fault; /* the input that could not be read */
};

static int write_strs(hid_t g, const char *name, char **v, uint64_t n)
{
	return col_str(g, name, (const char *const *)v, n);
}

/* In the order the columns always had: signed integers (parent after
 * ppid), unsigned ones, strings. */
static int write_processes(struct columns *c, hid_t file, struct merged *m)
{
	uint64_t n = m->procs;
	int64_t *parent = malloc((n + 1) * sizeof *parent);
	hid_t g = col_group(file, SC_PROCESSES);
	int rc = g >= 0 && parent &&
				 parents_link(m->proc[SC_PROC_PID], m->proc[SC_PROC_PPID],
					      m->proc[SC_PROC_START], m->proc[SC_PROC_EXEC], n,
					      parent) == 0
			 ? 0
			 : -1;

	for (int k = 0; rc == 0 && k < SC_NPROC; k++)
		if (k == SC_PROC_PARENT)
			rc = col_int64(c, g, sc_processes[k].name, parent, n);
		else if (is_signed(sc_processes[k].type))
			rc = col_int64(c, g, sc_processes[k].name, (const int64_t *)m->proc[k], n);
	for (int k = 0; rc == 0 && k < SC_NPROC; k++) {
		const struct sc_field *f = &sc_processes[k];
		if (is_signed(f->type) || is_string(f->type))
			continue;
		if (f->type == SC_UINT8) {
			/* flags: one byte, as the writer stores them */
			narrow(m->proc[k], m->proc[k], n, 1);
			rc = col_uint(c, g, f->name, m->proc[k], n, 1);
		} else
			rc = col_uint(c, g, f->name, m->proc[k], n, 8);
	}
	for (int k = 0; rc == 0 && k < SC_NPROC; k++)
		if (m->pstr[k])
			rc = write_strs(g, sc_processes[k].name, m->pstr[k], n);
	free(parent);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

static int write_tables(struct columns *c, hid_t file, struct merged *m)
{
	const struct region_columns regions = {(const char *const *)m->rname.v,
					       (const char *const *)m->rmodule.v,
					       (const char *const *)m->rfile.v,
					       (const char *const *)m->rkind.v,
					       m->roffset.v,
					       m->rline.v,
					       m->rname.n};
	int rc = col_regions(c, file, &regions);
	hid_t g = rc == 0 ? col_group(file, SC_PAIRS) : -1;

	/* process and region at the narrowest width that holds them (the
	 * writer's are 32 bits), the rest at 64 */
	for (int k = 0; g >= 0 && rc == 0 && k < SC_NPAIR; k++)
		if (m->pair[k])
			rc = k == SC_PAIR_PROCESS || k == SC_PAIR_REGION
				     ? col_narrow(c, g, sc_pairs[k].name, m->pair[k], 8, m->pairs)
				     : col_uint(c, g, sc_pairs[k].name, m->pair[k], m->pairs, 8);
	if (g < 0 || H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

/* An MPI job's ranks that left no profile (killed with their scope-run),
 * listed as "2,5" in /metadata missing_ranks; "" when none. */
static void missing_ranks(hid_t g, struct job *j)
{
	char *seen = calloc((size_t)j->ranks, 1), list[4096] = "";
	size_t len = 0;

	if (!seen)
		return;
	for (uint64_t i = 0; i < j->m->procs; i++) {
		int64_t r = (int64_t)j->m->proc[SC_PROC_RANK][i];
		if (r >= 0 && r < j->ranks)
			seen[r] = 1;
	}
	for (int r = 0; r < j->ranks && len + 12 < sizeof list; r++)
		if (!seen[r])
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%d",
						len ? "," : "", r);
	attr_i64(g, SC_META(MPI_RANKS), j->ranks);
	attr_str(g, SC_META(MISSING_RANKS), list);
	free(seen);
}

static void replace_i64(hid_t g, const char *name, int64_t v)
{
	if (H5Aexists(g, name) > 0)
		H5Adelete(g, name);
	attr_i64(g, name, v);
}

/* /metadata is the run's first process's (copied with it), with the run's
 * losses summed. */
static int finish_metadata(hid_t out, struct job *j)
{
	uint64_t lost = 0;
	hid_t g = H5Gopen2(out, SC_METADATA, H5P_DEFAULT);

	if (g < 0)
		return -1;
	for (uint64_t i = 0; i < j->m->procs; i++)
		lost += j->m->proc[SC_PROC_LOST][i];
	replace_i64(g, SC_META(LOST_RECORDS), (int64_t)lost);
	replace_i64(g, SC_META(PROCESSES), (int64_t)j->m->procs);
	if (H5Aexists(g, SC_META(CALLS_STORED)) > 0 || j->m->has_pair[SC_PAIR_AGGREGATED]) {
		uint64_t stored = 0, summed = 0;
		for (uint64_t i = 0; i < j->m->pairs; i++) {
			stored += j->m->pair[SC_PAIR_COUNT][i];
			summed += j->m->pair[SC_PAIR_AGGREGATED] ? j->m->pair[SC_PAIR_AGGREGATED][i]
								 : 0;
		}
		replace_i64(g, SC_META(CALLS_STORED), (int64_t)stored);
		replace_i64(g, SC_META(CALLS_AGGREGATED), (int64_t)summed);
	}
	if (j->ranks > 0) {
		if (H5Aexists(g, SC_META(MPI_RANKS)) > 0)
			H5Adelete(g, SC_META(MPI_RANKS));
		if (H5Aexists(g, SC_META(MISSING_RANKS)) > 0)
			H5Adelete(g, SC_META(MISSING_RANKS));
		missing_ranks(g, j);
	}
	return H5Gclose(g);
}

static int write_merged(const char *path, void *ctx)
{
	struct job *j = ctx;
	struct columns c;
	hid_t file = profile_create(path, H5P_DEFAULT);
	int rc = -1;

	if (file < 0)
		return -1;
	if (columns_init(&c, j->st) != 0 || attr_root(file) != 0 ||
	    events_begin(&c, file, j->m) != 0)
		goto out;
	for (size_t i = 0; i < j->n; i++)
		if (add_input(&c, j->m, &j->inputs[i], file, i == 0) != 0) {
			j->fault = &j->inputs[i];
			goto out;
		}
	if (j->m->events == j->m->nevents && events_end(&c, j->m, 1) == 0 &&
	    finish_metadata(file, j) == 0 && write_processes(&c, file, j->m) == 0 &&
	    write_tables(&c, file, j->m) == 0 && describe_profile(file) == 0)
		rc = 0;
out:
	events_end(&c, j->m, 0);
	columns_fini(&c);
	if (H5Fclose(file) < 0)
		rc = -1;
	return rc;
}

/* The calls of the profiles at paths, as their /pairs and /events say (0 for one that cannot be
 * opened: the merge says why). */
static uint64_t calls_in(char **paths, size_t n)
{
	char err[RD_ERR_MAX];
	uint64_t calls = 0;

	for (size_t i = 0; i < n; i++) {
		struct rd_profile *p = rd_open(paths[i], err, sizeof err);
		if (p)
			calls += p->nevents;
		rd_close(p);
	}
	return calls;
}

/* The event columns the output has: each input's are read once more to be copied. */
static int columns_of(const struct merged *m)
{
	int n = 0;
	for (int k = 0; k < SC_NEV; k++)
		n += m->ewidth[k] != 0;
	return n;
}

static int by_start(const void *x, const void *y)
{
	const struct input *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

int merge_profiles(const struct merge_request *r, char *err, size_t cap)
{
	struct merge_request o = *r;
	struct merged m = {0};
	struct input *in = NULL;
	char **paths, why[512];
	size_t n;
	int owned, rc = -1;
	struct progress pg;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (parts_gather(o.output, o.parts, o.inputs, o.ninputs, &paths, &n, &owned) != 0 ||
	    n == 0) {
		snprintf(err, cap, "no profiles to merge for %s", o.output);
		return -1;
	}
	/* the line's total from the start: each input's calls, some 6 columns */
	progress_start(&pg, o.who, o.output,
		       progress_wanted(o.quiet) ? calls_in(paths, n) * (1 + 2 * 6) : 0, o.quiet);
	if (!(in = calloc(n, sizeof *in))) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		in[i].path = paths[i];
		if (scan_input(&m, &in[i]) != 0) {
			snprintf(err, cap, "%s: %s", paths[i], in[i].err);
			goto out;
		}
	}
	qsort(in, n, sizeof *in, by_start);
	if (allocate(&m) != 0) {
		snprintf(err, cap, "out of memory");
		goto out;
	}
	/* each column read to check it, read again and written */
	progress_total(&pg, m.nevents * (1 + 2 * (uint64_t)columns_of(&m)));
	{
		struct job j = {&m, in, n, o.st, o.ranks ? o.ranks : (int)in[0].mpi_ranks, NULL};
		if (publish_atomic(o.output, write_merged, &j, -1, NULL, why, sizeof why) != 0) {
			if (j.fault)
				snprintf(err, cap, "%s: %s; nothing was written", j.fault->path,
					 j.fault->err[0] ? j.fault->err : "out of memory");
			else
				snprintf(err, cap, "cannot write %s: %s; the inputs are kept",
					 o.output, why);
			goto out;
		}
	}
	rc = 0;
out:
	progress_end(&pg);
	for (size_t i = 0; in && i < n; i++)
		if (rc == 0 && owned && !o.keep && strcmp(in[i].path, o.output) != 0)
			unlink(in[i].path);
	merged_free(&m);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(in);
	return rc;
}

int merge_ranks(const char *dir, int ranks, const char *output, const char *who, char *err,
		size_t cap)
{
	struct storage st;
	struct merge_request r = {
		.output = output, .parts = dir, .st = &st, .ranks = ranks, .who = who};

	storage_parse(&st, NULL); /* the default, which always parses */
	return merge_profiles(&r, err, cap);
}
