/* SPDX-License-Identifier: MIT */
/* scope-merge: combines the profiles of a run's processes into one file. */
#define _GNU_SOURCE
#include "columns.h"
#include "profile_out.h"
#include "publish.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-merge [options] OUTPUT\n"
	"       scope-merge [options] -o OUTPUT INPUT...\n"
	"       scope-merge [options] --parts DIR -o OUTPUT\n"
	"Combine the profiles of a run's processes into one. With OUTPUT alone, merge\n"
	"OUTPUT and the parts its run left beside it (OUTPUT-STEM.*.part.h5).\n"
	"\n"
	"  -o, --output FILE        the merged profile\n"
	"      --parts DIR          merge every .h5 file in DIR\n"
	"      --compression SPEC   auto (default), none, gzip or gzip:LEVEL (1-9)\n"
	"      --chunk-size N       elements per HDF5 chunk\n"
	"      --keep               keep the inputs (default: parts are removed once merged)\n"
	"      --ranks N            an MPI job of N ranks: list the ranks missing in /metadata\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n";

/* One column of every input, appended: values as 64-bit integers. */
struct col {
	uint64_t *v;
	uint64_t n, cap;
};

static int col_push(struct col *c, const uint64_t *v, uint64_t n)
{
	if (c->n + n > c->cap) {
		uint64_t cap = c->cap ? c->cap : 1024;
		uint64_t *grown;
		while (cap < c->n + n)
			cap *= 2;
		if (!(grown = realloc(c->v, cap * sizeof *grown)))
			return -1;
		c->v = grown;
		c->cap = cap;
	}
	memcpy(c->v + c->n, v, n * sizeof *v);
	c->n += n;
	return 0;
}

struct strs {
	char **v;
	uint64_t n, cap;
};

static int strs_push(struct strs *s, const char *v)
{
	if (s->n == s->cap) {
		uint64_t cap = s->cap ? 2 * s->cap : 256;
		char **grown = realloc(s->v, cap * sizeof *grown);
		if (!grown)
			return -1;
		s->v = grown;
		s->cap = cap;
	}
	return (s->v[s->n++] = strdup(v ? v : "")) ? 0 : -1;
}

static const char *const process_ints[] = {"pid",  "ppid",	  "rank",	 "start",
					   "end",  "exit_status", "exit_signal", "lost",
					   "exec", "complete"};
#define NPROC_INTS (sizeof process_ints / sizeof *process_ints)
static const char *const pair_cols[] = {"process",  "region",  "first",	 "count",
					"total_ns", "self_ns", "min_ns", "max_ns"};
#define NPAIR (sizeof pair_cols / sizeof *pair_cols)
static const char *const event_cols[] = {"start_delta", "duration", "thread",
					 "task",	"depth",    "flags"};
#define NEVENT (sizeof event_cols / sizeof *event_cols)

struct merged {
	struct col proc[NPROC_INTS];
	struct strs exe, args;
	struct strs rname, rmodule, rfile, rkind;
	struct col roffset, rline;
	struct col pair[NPAIR];
	struct col event[NEVENT];
	/* region key -> id */
	char **keys;
	uint32_t *ids;
	uint64_t mask, nkeys;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

static int key_grow(struct merged *m)
{
	uint64_t cap = m->mask ? 2 * (m->mask + 1) : 1024;
	char **keys = calloc(cap, sizeof *keys);
	uint32_t *ids = calloc(cap, sizeof *ids);
	if (!keys || !ids) {
		free(keys);
		free(ids);
		return -1;
	}
	for (uint64_t i = 0; m->mask && i <= m->mask; i++) {
		uint64_t j;
		if (!m->keys[i])
			continue;
		for (j = hash_str(m->keys[i]) & (cap - 1); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		ids[j] = m->ids[i];
	}
	free(m->keys);
	free(m->ids);
	m->keys = keys;
	m->ids = ids;
	m->mask = cap - 1;
	return 0;
}

/* The merged id of a region, by name, module and offset; *added tells when
 * it is new. UINT32_MAX without memory. */
static uint32_t region_id(struct merged *m, const char *key, int *added)
{
	uint64_t i;
	*added = 0;
	if ((m->nkeys + 1) * 2 > m->mask + 1 && key_grow(m) != 0)
		return UINT32_MAX;
	for (i = hash_str(key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
		if (strcmp(m->keys[i], key) == 0)
			return m->ids[i];
	if (!(m->keys[i] = strdup(key)))
		return UINT32_MAX;
	m->ids[i] = (uint32_t)m->nkeys++;
	*added = 1;
	return m->ids[i];
}

/* Reading one input. */
struct input {
	const char *path;
	hid_t file;
	uint64_t start; /* of its first process */
	char err[256];
};

static int in_fail(struct input *in, const char *what, const char *name)
{
	snprintf(in->err, sizeof in->err, "%s %s", name, what);
	return -1;
}

static uint64_t *read_u64(struct input *in, const char *name, hsize_t *n, int is_signed)
{
	hid_t d = H5Dopen2(in->file, name, H5P_DEFAULT), s;
	uint64_t *v = NULL;

	if (d < 0) {
		in_fail(in, "is missing", name);
		return NULL;
	}
	s = H5Dget_space(d);
	if (H5Sget_simple_extent_ndims(s) == 1) {
		H5Sget_simple_extent_dims(s, n, NULL);
		v = malloc((*n + 1) * sizeof *v);
		if (v && H5Dread(d, is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64, H5S_ALL,
				 H5S_ALL, H5P_DEFAULT, v) < 0) {
			free(v);
			v = NULL;
		}
	}
	if (!v)
		in_fail(in, "cannot be read as integers", name);
	H5Sclose(s);
	H5Dclose(d);
	return v;
}

static char **read_strs(struct input *in, const char *name, hsize_t *n)
{
	hid_t d = H5Dopen2(in->file, name, H5P_DEFAULT), s, t;
	char **v = NULL;

	if (d < 0) {
		in_fail(in, "is missing", name);
		return NULL;
	}
	s = H5Dget_space(d);
	t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	H5Sget_simple_extent_dims(s, n, NULL);
	v = calloc(*n + 1, sizeof *v);
	if (v && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
		free(v);
		v = NULL;
		in_fail(in, "cannot be read as strings", name);
	}
	H5Tclose(t);
	H5Sclose(s);
	H5Dclose(d);
	return v;
}

static void free_strs(hid_t file, char **v, hsize_t n)
{
	for (hsize_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	(void)file;
}

static int add_processes(struct merged *m, struct input *in, hsize_t *nproc)
{
	hsize_t n = 0, k;
	char **exe = read_strs(in, "/processes/executable", &n), **args;
	int rc = -1;

	if (!exe || !(args = read_strs(in, "/processes/arguments", &k)) || k != n) {
		free_strs(in->file, exe, n);
		return -1;
	}
	for (size_t c = 0; c < NPROC_INTS; c++) {
		char name[64];
		uint64_t *v;
		snprintf(name, sizeof name, "/processes/%s", process_ints[c]);
		if (H5Lexists(in->file, name, H5P_DEFAULT) <= 0) {
			/* an older part without this column: -1 or 0 */
			uint64_t fill = c < 3 ? (uint64_t)-1 : 0;
			for (hsize_t i = 0; i < n; i++)
				if (col_push(&m->proc[c], &fill, 1) != 0)
					goto out;
			continue;
		}
		if (!(v = read_u64(in, name, &k, c != 3 && c != 4 && c < 7)) || k != n) {
			free(v);
			goto out;
		}
		rc = col_push(&m->proc[c], v, n);
		free(v);
		if (rc != 0)
			goto out;
		rc = -1;
	}
	for (hsize_t i = 0; i < n; i++)
		if (strs_push(&m->exe, exe[i]) != 0 || strs_push(&m->args, args[i]) != 0)
			goto out;
	*nproc = n;
	rc = 0;
out:
	free_strs(in->file, exe, n);
	free_strs(in->file, args, n);
	return rc;
}

/* Reads the input's regions and returns its id -> merged id table. */
static uint32_t *add_regions(struct merged *m, struct input *in, hsize_t *nreg)
{
	hsize_t n = 0, k[5];
	char **name = read_strs(in, "/regions/name", &n);
	char **module = name ? read_strs(in, "/regions/module", &k[0]) : NULL;
	char **file = module ? read_strs(in, "/regions/file", &k[1]) : NULL;
	char **kind = file ? read_strs(in, "/regions/kind", &k[2]) : NULL;
	uint64_t *offset = kind ? read_u64(in, "/regions/offset", &k[3], 0) : NULL;
	uint64_t *line = offset ? read_u64(in, "/regions/line", &k[4], 0) : NULL;
	uint32_t *map = NULL;

	if (!line)
		goto out;
	for (int i = 0; i < 5; i++)
		if (k[i] != n) {
			in_fail(in, "have different lengths", "/regions columns");
			goto out;
		}
	map = malloc((n + 1) * sizeof *map);
	for (hsize_t r = 0; map && r < n; r++) {
		char *key;
		int added;
		if (asprintf(&key, "%s%c%s%c%llx", name[r], 0, module[r], 0,
			     (unsigned long long)offset[r]) < 0) {
			free(map);
			map = NULL;
			break;
		}
		/* the key holds NULs: hash and compare name, module, offset as one */
		for (char *p = key; p < key + strlen(name[r]) + 1 + strlen(module[r]) + 1; p++)
			if (!*p)
				*p = '\x1f';
		map[r] = region_id(m, key, &added);
		free(key);
		if (map[r] == UINT32_MAX ||
		    (added &&
		     (strs_push(&m->rname, name[r]) || strs_push(&m->rmodule, module[r]) ||
		      strs_push(&m->rfile, file[r]) || strs_push(&m->rkind, kind[r]) ||
		      col_push(&m->roffset, &offset[r], 1) || col_push(&m->rline, &line[r], 1)))) {
			free(map);
			map = NULL;
			break;
		}
	}
	*nreg = n;
out:
	free_strs(in->file, name, n);
	free_strs(in->file, module, n);
	free_strs(in->file, file, n);
	free_strs(in->file, kind, n);
	free(offset);
	free(line);
	return map;
}

static int add_pairs_events(struct merged *m, struct input *in, const uint32_t *rmap, hsize_t nreg,
			    uint64_t proc_base, hsize_t nproc)
{
	uint64_t *pc[NPAIR] = {0}, *ec[NEVENT] = {0}, event_base = m->event[0].n;
	hsize_t np = 0, ne = 0, k;
	int rc = -1;

	for (size_t c = 0; c < NPAIR; c++) {
		char name[64];
		snprintf(name, sizeof name, "/pairs/%s", pair_cols[c]);
		if (!(pc[c] = read_u64(in, name, &k, 0)) || (c > 0 && k != np))
			goto out;
		np = k;
	}
	for (size_t c = 0; c < NEVENT; c++) {
		char name[64];
		snprintf(name, sizeof name, "/events/%s", event_cols[c]);
		if (!(ec[c] = read_u64(in, name, &k, 0)) || (c > 0 && k != ne))
			goto out;
		ne = k;
	}
	for (hsize_t i = 0; i < np; i++) {
		if (pc[0][i] >= nproc || pc[1][i] >= nreg || pc[2][i] > ne ||
		    pc[3][i] > ne - pc[2][i]) {
			in_fail(in, "point outside the file's processes, regions or events",
				"/pairs");
			goto out;
		}
		pc[0][i] += proc_base;
		pc[1][i] = rmap[pc[1][i]];
		pc[2][i] += event_base;
	}
	for (size_t c = 0; c < NPAIR; c++)
		if (col_push(&m->pair[c], pc[c], np) != 0)
			goto out;
	for (size_t c = 0; c < NEVENT; c++)
		if (col_push(&m->event[c], ec[c], ne) != 0)
			goto out;
	rc = 0;
out:
	for (size_t c = 0; c < NPAIR; c++)
		free(pc[c]);
	for (size_t c = 0; c < NEVENT; c++)
		free(ec[c]);
	return rc;
}

/* Everything one input adds; its process<N> groups are copied at write. */
static int add_input(struct merged *m, struct input *in)
{
	uint64_t base = m->proc[0].n;
	hsize_t nproc = 0, nreg = 0;
	uint32_t *rmap;
	int rc;

	if (add_processes(m, in, &nproc) != 0 || !(rmap = add_regions(m, in, &nreg)))
		return -1;
	rc = add_pairs_events(m, in, rmap, nreg, base, nproc);
	free(rmap);
	return rc;
}

/* The process each one came from: for a program an exec started, the one
 * that exec'd it (same pid, earlier, ended by exec); else the newest
 * earlier process whose pid is its ppid. */
static void link_parents(struct merged *m, int64_t *parent)
{
	const uint64_t *pid = m->proc[0].v, *ppid = m->proc[1].v, *start = m->proc[3].v;
	const uint64_t *exec = m->proc[8].v;
	uint64_t n = m->proc[0].n;

	for (uint64_t r = 0; r < n; r++) {
		int64_t best = -1;
		for (uint64_t q = 0; q < n; q++) {
			int from_exec = pid[q] == pid[r] && exec[q] && start[q] < start[r];
			int from_fork = pid[q] == ppid[r] && start[q] <= start[r];
			if (q != r && (from_exec || from_fork) &&
			    (best < 0 || start[q] > start[(uint64_t)best]))
				best = (int64_t)q;
		}
		parent[r] = best;
	}
}

struct job {
	struct merged *m;
	struct input *inputs;
	size_t n;
	const struct storage *st;
	int ranks; /* the job's size, 0 when not an MPI job */
};

static int write_strs(hid_t g, const char *name, const struct strs *s)
{
	return col_str(g, name, (const char *const *)s->v, s->n);
}

static int write_processes(struct columns *c, hid_t file, struct merged *m)
{
	uint64_t n = m->proc[0].n;
	int64_t *parent = malloc((n + 1) * sizeof *parent);
	hid_t g = H5Gcreate2(file, "processes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int rc = g >= 0 && parent ? 0 : -1;

	if (rc == 0)
		link_parents(m, parent);
	for (size_t k = 0; rc == 0 && k < NPROC_INTS; k++) {
		int is_signed = k < 3 || k == 5 || k == 6;
		if (is_signed)
			rc = col_int64(c, g, process_ints[k], (const int64_t *)m->proc[k].v, n);
		else
			rc = col_uint(c, g, process_ints[k], m->proc[k].v, n, 8);
		if (rc == 0 && k == 1)
			rc = col_int64(c, g, "parent", parent, n);
	}
	if (rc == 0)
		rc = write_strs(g, "executable", &m->exe) | write_strs(g, "arguments", &m->args);
	free(parent);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

static int write_tables(struct columns *c, hid_t file, struct merged *m)
{
	hid_t g = H5Gcreate2(file, "regions", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	int rc = g >= 0 && write_strs(g, "name", &m->rname) == 0 &&
				 write_strs(g, "module", &m->rmodule) == 0 &&
				 col_uint(c, g, "offset", m->roffset.v, m->roffset.n, 8) == 0 &&
				 write_strs(g, "file", &m->rfile) == 0 &&
				 col_narrow(c, g, "line", m->rline.v, 8, m->rline.n) == 0 &&
				 write_strs(g, "kind", &m->rkind) == 0
			 ? 0
			 : -1;

	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	g = rc == 0 ? H5Gcreate2(file, "pairs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
	for (size_t k = 0; g >= 0 && rc == 0 && k < NPAIR; k++)
		rc = k < 2 ? col_narrow(c, g, pair_cols[k], m->pair[k].v, 8, m->pair[k].n)
			   : col_uint(c, g, pair_cols[k], m->pair[k].v, m->pair[k].n, 8);
	if (g < 0 || H5Gclose(g) < 0)
		rc = -1;
	g = rc == 0 ? H5Gcreate2(file, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
	for (size_t k = 0; g >= 0 && rc == 0 && k < NEVENT; k++)
		rc = col_narrow(c, g, event_cols[k], m->event[k].v, 8, m->event[k].n);
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
	for (uint64_t i = 0; i < j->m->proc[2].n; i++) {
		int64_t r = (int64_t)j->m->proc[2].v[i];
		if (r >= 0 && r < j->ranks)
			seen[r] = 1;
	}
	for (int r = 0; r < j->ranks && len + 12 < sizeof list; r++)
		if (!seen[r])
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%d",
						len ? "," : "", r);
	attr_i64(g, "mpi_ranks", j->ranks);
	attr_str(g, "missing_ranks", list);
	free(seen);
}

/* /metadata of the run's first process, with the run's losses summed. */
static int write_metadata(hid_t out, struct job *j)
{
	uint64_t lost = 0;
	hid_t g;

	if (H5Ocopy(j->inputs[0].file, "metadata", out, "metadata", H5P_DEFAULT, H5P_DEFAULT) < 0)
		return -1;
	for (uint64_t i = 0; i < j->m->proc[7].n; i++)
		lost += j->m->proc[7].v[i];
	g = H5Gopen2(out, "metadata", H5P_DEFAULT);
	if (g < 0)
		return -1;
	if (H5Aexists(g, "lost_records") > 0)
		H5Adelete(g, "lost_records");
	attr_i64(g, "lost_records", (int64_t)lost);
	attr_i64(g, "processes", (int64_t)j->m->proc[0].n);
	if (j->ranks > 0)
		missing_ranks(g, j);
	return H5Gclose(g);
}

/* Each input's process<N> groups, renumbered in the merged order. */
static int copy_process_groups(hid_t out, struct job *j)
{
	uint64_t base = 0;
	for (size_t i = 0; i < j->n; i++) {
		hsize_t n = 0;
		hid_t d = H5Dopen2(j->inputs[i].file, "/processes/pid", H5P_DEFAULT);
		hid_t s = H5Dget_space(d);
		H5Sget_simple_extent_dims(s, &n, NULL);
		H5Sclose(s);
		H5Dclose(d);
		for (hsize_t p = 0; p < n; p++) {
			char from[32], to[32];
			snprintf(from, sizeof from, "process%llu", (unsigned long long)p);
			snprintf(to, sizeof to, "process%llu", (unsigned long long)(base + p));
			if (H5Lexists(j->inputs[i].file, from, H5P_DEFAULT) > 0 &&
			    H5Ocopy(j->inputs[i].file, from, out, to, H5P_DEFAULT, H5P_DEFAULT) < 0)
				return -1;
		}
		base += n;
	}
	return 0;
}

static int write_merged(const char *path, void *ctx)
{
	struct job *j = ctx;
	struct columns c;
	char producer[64];
	hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	int rc = -1;

	if (file < 0)
		return -1;
	snprintf(producer, sizeof producer, "scope %s", SCOPE_VERSION);
	if (columns_init(&c, j->st) == 0 && attr_i64(file, "schema", 3) == 0 &&
	    attr_str(file, "producer", producer) == 0 && attr_str(file, "time_unit", "ns") == 0 &&
	    write_metadata(file, j) == 0 && write_processes(&c, file, j->m) == 0 &&
	    write_tables(&c, file, j->m) == 0 && copy_process_groups(file, j) == 0)
		rc = 0;
	columns_fini(&c);
	if (H5Fclose(file) < 0)
		rc = -1;
	return rc;
}

static uint64_t first_start(struct input *in)
{
	hsize_t n = 0;
	uint64_t *v = read_u64(in, "/processes/start", &n, 0), s = UINT64_MAX;
	if (v && n > 0)
		s = v[0];
	free(v);
	return s;
}

static int open_input(struct input *in, const char *path)
{
	int64_t schema = 0;
	hid_t a;

	memset(in, 0, sizeof *in);
	in->path = path;
	if (H5Fis_hdf5(path) <= 0) {
		snprintf(in->err, sizeof in->err, "not an HDF5 file");
		return -1;
	}
	in->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (in->file < 0) {
		snprintf(in->err, sizeof in->err, "cannot be opened");
		return -1;
	}
	a = H5Aexists(in->file, "schema") > 0 ? H5Aopen(in->file, "schema", H5P_DEFAULT) : -1;
	if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &schema) < 0 || schema != 3) {
		snprintf(in->err, sizeof in->err, "not a scope schema-3 profile");
		if (a >= 0)
			H5Aclose(a);
		return -1;
	}
	H5Aclose(a);
	return 0;
}

/* The MPI job's size its first profile recorded, 0 when none. */
static int job_size(struct input *in)
{
	int64_t v = 0;
	hid_t a;
	if (H5Aexists_by_name(in->file, "metadata", "mpi_ranks", H5P_DEFAULT) <= 0)
		return 0;
	a = H5Aopen_by_name(in->file, "metadata", "mpi_ranks", H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
			v = 0;
		H5Aclose(a);
	}
	return (int)v;
}

static int by_start(const void *x, const void *y)
{
	const struct input *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int push_path(char ***v, size_t *n, size_t *cap, char *path)
{
	if (!path)
		return -1;
	if (*n == *cap) {
		char **grown = realloc(*v, (*cap = *cap ? 2 * *cap : 16) * sizeof *grown);
		if (!grown) {
			free(path);
			return -1;
		}
		*v = grown;
	}
	(*v)[(*n)++] = path;
	return 0;
}

/* The files in dir named STEM.*.part.h5, or, without a stem, *.h5. */
static int list_parts(const char *dir, const char *stem, char ***v, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t len = stem ? strlen(stem) : 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		int rank_file = stem && strcmp(stem, "rank") == 0;
		const char *tail = stem && !rank_file ? ".part.h5" : ".h5";
		char sep = rank_file ? '-' : '.';
		char *path;
		if (l <= strlen(tail) || strcmp(e->d_name + l - strlen(tail), tail) != 0 ||
		    (stem && (strncmp(e->d_name, stem, len) != 0 || e->d_name[len] != sep)))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0 ||
		    push_path(v, n, cap, path) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/* Temporary files a killed writer left half-written: nothing to merge. */
static void remove_unfinished(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[8400];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".tmp-") && snprintf(path, sizeof path, "%.4000s/%.255s", dir,
							   e->d_name) < (int)sizeof path)
			unlink(path);
	closedir(d);
}

/* OUTPUT.ranks once merged: empty but for the empty folders of ranks whose
 * scope-run was killed while it gathered. */
static void remove_ranks_folder(const char *output)
{
	char ranks[4200], sub[8400];
	DIR *d;
	struct dirent *e;

	snprintf(ranks, sizeof ranks, "%s.ranks", output);
	if (!(d = opendir(ranks)))
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", ranks, e->d_name);
		remove_unfinished(sub);
		rmdir(sub);
	}
	closedir(d);
	if (rmdir(ranks) != 0)
		fprintf(stderr, "scope-merge: %s still holds files it did not merge\n", ranks);
}

/* The complete parts in OUTPUT.ranks/.rank-*.parts-* folders. */
static int list_gathering(const char *ranks, char ***v, size_t *n, size_t *cap)
{
	DIR *d = opendir(ranks);
	struct dirent *e;
	char sub[8400];
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, ".rank-", 6) != 0 || !strstr(e->d_name, ".parts-"))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", ranks, e->d_name);
		rc = list_parts(sub, NULL, v, n, cap);
	}
	closedir(d);
	return rc;
}

struct options {
	const char *output, *parts, *compression, *chunk;
	int keep, ranks;
	char **inputs;
	int ninputs;
};

static void parse(int argc, char **argv, struct options *o)
{
	enum { PARTS = 256, COMPRESSION, CHUNK, KEEP, RANKS };
	static const struct option longs[] = {{"output", required_argument, 0, 'o'},
					      {"parts", required_argument, 0, PARTS},
					      {"compression", required_argument, 0, COMPRESSION},
					      {"chunk-size", required_argument, 0, CHUNK},
					      {"keep", no_argument, 0, KEEP},
					      {"ranks", required_argument, 0, RANKS},
					      {"help", no_argument, 0, 'h'},
					      {"version", no_argument, 0, 'V'},
					      {0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof *o);
	while ((c = getopt_long(argc, argv, "o:hV", longs, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case PARTS: o->parts = optarg; break;
		case COMPRESSION: o->compression = optarg; break;
		case CHUNK: o->chunk = optarg; break;
		case KEEP: o->keep = 1; break;
		case RANKS: o->ranks = atoi(optarg); break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-merge %s\n", SCOPE_VERSION); exit(0);
		default: fputs("scope-merge: see scope-merge --help\n", stderr); exit(2);
		}
	}
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (!o->output && !o->parts && o->ninputs == 1) {
		o->output = o->inputs[0];
		o->ninputs = 0;
	}
	if (!o->output || (o->parts && o->ninputs) || (!o->parts && !o->ninputs && !o->output)) {
		fputs("scope-merge: give OUTPUT, or -o OUTPUT with inputs or --parts DIR (see "
		      "scope-merge --help)\n",
		      stderr);
		exit(2);
	}
}

/* The inputs: those named; those in the parts folder; or the output and
 * the parts its run left beside it. *owned tells whether they are parts
 * to remove once merged. */
static int gather(const struct options *o, char ***v, size_t *n, int *owned)
{
	size_t cap = 0;
	*v = NULL;
	*n = 0;
	*owned = 0;
	if (o->ninputs) {
		for (int i = 0; i < o->ninputs; i++)
			if (push_path(v, n, &cap, strdup(o->inputs[i])) != 0)
				return -1;
		return 0;
	}
	*owned = 1;
	if (o->parts)
		return list_parts(o->parts, NULL, v, n, &cap);
	{
		char dir[4096], base[4096], *stem;
		size_t len;
		snprintf(dir, sizeof dir, "%s", o->output);
		snprintf(base, sizeof base, "%s", o->output);
		stem = basename(base);
		len = strlen(stem);
		if (len > 3 && strcmp(stem + len - 3, ".h5") == 0)
			stem[len - 3] = '\0';
		char ranks[4200];
		if (access(o->output, F_OK) == 0 && push_path(v, n, &cap, strdup(o->output)) != 0)
			return -1;
		/* an MPI job some of whose ranks never merged: their folder, and
		 * the parts of ranks whose scope-run was killed while it gathered */
		snprintf(ranks, sizeof ranks, "%s.ranks", o->output);
		if (access(ranks, F_OK) == 0 && (list_parts(ranks, "rank", v, n, &cap) != 0 ||
						 list_gathering(ranks, v, n, &cap) != 0))
			return -1;
		return list_parts(dirname(dir), stem, v, n, &cap);
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct storage st;
	struct merged m = {0};
	struct input *in;
	char **paths, why[512];
	size_t n;
	int owned, rc = 1;

	parse(argc, argv, &o);
	if (storage_parse(&st, o.compression) != 0 || storage_parse_chunk(&st, o.chunk) != 0) {
		fputs("scope-merge: bad storage setting: use auto, none, gzip or gzip:1..9\n",
		      stderr);
		return 2;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (gather(&o, &paths, &n, &owned) != 0 || n == 0) {
		fprintf(stderr, "scope-merge: no profiles to merge for %s\n", o.output);
		return 1;
	}
	in = calloc(n, sizeof *in);
	for (size_t i = 0; in && i < n; i++) {
		if (open_input(&in[i], paths[i]) != 0) {
			fprintf(stderr, "scope-merge: %s: %s\n", paths[i], in[i].err);
			goto out;
		}
		in[i].start = first_start(&in[i]);
	}
	qsort(in, n, sizeof *in, by_start);
	for (size_t i = 0; i < n; i++)
		if (add_input(&m, &in[i]) != 0) {
			fprintf(stderr, "scope-merge: %s: %s\n", in[i].path,
				in[i].err[0] ? in[i].err : "out of memory");
			goto out;
		}
	{
		struct job j = {&m, in, n, &st, o.ranks ? o.ranks : job_size(&in[0])};
		if (publish_atomic(o.output, write_merged, &j, -1, NULL, why, sizeof why) != 0) {
			fprintf(stderr, "scope-merge: cannot write %s: %s; the inputs are kept\n",
				o.output, why);
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; in && i < n; i++) {
		if (in[i].file > 0)
			H5Fclose(in[i].file);
		if (rc == 0 && owned && !o.keep && strcmp(in[i].path, o.output) != 0)
			unlink(in[i].path);
	}
	if (rc == 0 && owned && !o.keep && !o.parts && !o.ninputs)
		remove_ranks_folder(o.output);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(in);
	return rc;
}
