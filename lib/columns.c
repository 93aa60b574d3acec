/* SPDX-License-Identifier: MIT */
/* Column storage: compact or contiguous when small, else shuffled and deflated on every core. */
#define _GNU_SOURCE
#include "columns.h"
#include "chunks.h"
#include "fresh.h"
#include "progress.h"
#include "schema.h"
#include "transfer.h"

#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_CHUNK_ELEMS 65536u
#define COMPACT_MAX_BYTES   16384u

static int describe_new(hid_t d, hid_t loc, const char *name);

int width_for(uint64_t max)
{
	return max <= UINT8_MAX ? 1 : max <= UINT16_MAX ? 2 : max <= UINT32_MAX ? 4 : 8;
}

void narrow(void *out, const uint64_t *in, uint64_t n, int width)
{
	switch (width) {
	case 1:
		for (uint64_t i = 0; i < n; i++)
			((uint8_t *)out)[i] = (uint8_t)in[i];
		break;
	case 2:
		for (uint64_t i = 0; i < n; i++)
			((uint16_t *)out)[i] = (uint16_t)in[i];
		break;
	case 4:
		for (uint64_t i = 0; i < n; i++)
			((uint32_t *)out)[i] = (uint32_t)in[i];
		break;
	default: memcpy(out, in, n * sizeof *in);
	}
}

uint64_t column_chunk_elems(const struct storage *st)
{
	return st->chunk_elems ? st->chunk_elems : DEFAULT_CHUNK_ELEMS;
}

int columns_init(struct columns *c, const struct storage *st)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	memset(c, 0, sizeof *c);
	c->st = *st;
	c->st.chunk_elems = column_chunk_elems(st);
	c->threads = cpus < 1 ? 1 : cpus > COLUMNS_MAX_THREADS ? COLUMNS_MAX_THREADS : (int)cpus;
	if (c->st.level <= 0)
		return 0;
	c->cz = calloc((size_t)c->threads, sizeof *c->cz);
	if (!c->cz)
		return -1;
	for (int i = 0; i < c->threads; i++)
		if (!(c->cz[i] = libdeflate_alloc_compressor(c->st.level)))
			return -1;
	return 0;
}

void columns_fini(struct columns *c)
{
	chunks_stop(c);
	for (int i = 0; c->cz && i < c->threads; i++)
		if (c->cz[i])
			libdeflate_free_compressor(c->cz[i]);
	free(c->cz);
	c->cz = NULL;
}

static hid_t uint_type(int width)
{
	return width == 1   ? H5T_STD_U8LE
	       : width == 2 ? H5T_STD_U16LE
	       : width == 4 ? H5T_STD_U32LE
			    : H5T_STD_U64LE;
}

/* Hands n values to the workers as the dataset's rows from base on, base a
 * whole number of chunks (lib/chunks.h). */
static int write_deflated(struct columns *c, hid_t dset, const void *data, uint64_t n, int width,
			  uint64_t chunk_elems, uint64_t base)
{
	const unsigned char *rows = data;
	int rc = 0;

	for (uint64_t first = 0; rc == 0 && first < n; first += chunk_elems) {
		uint64_t have = n - first < chunk_elems ? n - first : chunk_elems;
		rc = chunks_put(c, dset, base + first, rows + first * (uint64_t)width, have,
				chunk_elems, width);
	}
	return rc;
}

/* Creation properties of class cls without the object's times: HDF5
 * would write and keep updating four of them in every header, and the same
 * calls would not make the same file twice. */
static hid_t untimed(hid_t cls)
{
	hid_t pl = H5Pcreate(cls);
	if (pl >= 0)
		H5Pset_obj_track_times(pl, 0);
	return pl;
}

/* Creates a one-dimensional dataset of n elements laid out by the policy;
 * *deflated tells whether its chunks must be written compressed. */
static hid_t create(struct columns *c, hid_t loc, const char *name, hid_t type, uint64_t n,
		    size_t elem_bytes, int may_compress, int *deflated, uint64_t *chunk_elems)
{
	hsize_t dims = n;
	hid_t space = H5Screate_simple(1, &dims, NULL), dcpl = untimed(H5P_DATASET_CREATE), d;
	const struct storage *st = &c->st;
	int compress =
		may_compress && n > 0 && st->level > 0 && (!st->automatic || n >= st->auto_min);

	*deflated = 0;
	*chunk_elems = st->chunk_elems < n ? st->chunk_elems : n;
	if (n > 0 && (compress || st->chunk_given)) {
		hsize_t cdim = *chunk_elems;
		H5Pset_chunk(dcpl, 1, &cdim);
		if (compress) {
			H5Pset_shuffle(dcpl);
			H5Pset_deflate(dcpl, (unsigned)st->level);
			*deflated = 1;
		}
	} else if (n * elem_bytes <= COMPACT_MAX_BYTES) {
		H5Pset_layout(dcpl, H5D_COMPACT);
	}
	d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	H5Sclose(space);
	if (d >= 0 && describe_new(d, loc, name) != 0) {
		H5Dclose(d);
		return -1;
	}
	return d;
}

int col_uint(struct columns *c, hid_t loc, const char *name, const void *data, uint64_t n,
	     int width)
{
	struct col_out o;
	int rc;

	if (col_begin(c, loc, name, width, n, &o) != 0)
		return -1;
	rc = col_put(c, &o, data, 0, n);
	return col_end(c, &o) != 0 ? -1 : rc;
}

int col_int64(struct columns *c, hid_t loc, const char *name, const int64_t *data, uint64_t n)
{
	int deflated, rc = 0;
	uint64_t chunk_elems;
	hid_t d = create(c, loc, name, H5T_STD_I64LE, n, 8, 0, &deflated, &chunk_elems);

	if (d < 0)
		return -1;
	if (n > 0)
		rc = H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -1
											    : 0;
	return H5Dclose(d) < 0 ? -1 : rc;
}

int col_int32(hid_t loc, const char *name, const int32_t *data, uint64_t n)
{
	hsize_t dims = n;
	hid_t space = H5Screate_simple(1, &dims, NULL), dcpl = untimed(H5P_DATASET_CREATE), d;
	int rc = -1;

	d = H5Dcreate2(loc, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	if (d >= 0 && describe_new(d, loc, name) == 0) {
		rc = n == 0 || H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >=
					     0
			     ? 0
			     : -1;
	}
	if (d >= 0 && H5Dclose(d) < 0)
		rc = -1;
	H5Sclose(space);
	return rc;
}

static hid_t str_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	return t;
}

int col_str(hid_t loc, const char *name, const char *const *data, uint64_t n)
{
	hsize_t dims = n;
	hid_t t = str_type(), space = H5Screate_simple(1, &dims, NULL), d, x = transfer_for(n);
	hid_t dcpl = untimed(H5P_DATASET_CREATE);
	int rc = -1;

	d = H5Dcreate2(loc, name, t, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	if (d >= 0 && describe_new(d, loc, name) == 0)
		rc = n == 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, x, data) >= 0 ? 0 : -1;
	if (d >= 0 && H5Dclose(d) < 0)
		rc = -1;
	transfer_done(x);
	H5Sclose(space);
	H5Tclose(t);
	return rc;
}

static int attr_write(hid_t loc, const char *name, hid_t type, const void *value)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
	int rc = a >= 0 && H5Awrite(a, type, value) >= 0 ? 0 : -1;
	if (a >= 0)
		H5Aclose(a);
	H5Sclose(space);
	return rc;
}

int attr_str(hid_t loc, const char *name, const char *value)
{
	hid_t t = str_type();
	int rc = attr_write(loc, name, t, &value);
	H5Tclose(t);
	return rc;
}

int attr_i64(hid_t loc, const char *name, int64_t value)
{
	return attr_write(loc, name, H5T_NATIVE_INT64, &value);
}

int attr_f64(hid_t loc, const char *name, double value)
{
	return attr_write(loc, name, H5T_NATIVE_DOUBLE, &value);
}

_Static_assert(SC_NREG == 6, "a new /regions column: add it to struct region_columns and "
			     "col_regions");

int col_regions(struct columns *c, hid_t file, const struct region_columns *r)
{
	hid_t g = col_group(file, SC_REGIONS);
	uint64_t max = 0;
	int width, rc = -1;
	void *lines;

	for (uint64_t i = 0; i < r->n; i++)
		max = r->line[i] > max ? r->line[i] : max;
	width = max <= UINT32_MAX ? 4 : 8;
	lines = malloc((r->n + 1) * (size_t)width);
	if (g >= 0 && lines) {
		narrow(lines, r->line, r->n, width);
		if (col_str(g, SC_REG(NAME), r->name, r->n) == 0 &&
		    col_str(g, SC_REG(MODULE), r->module, r->n) == 0 &&
		    col_uint(c, g, SC_REG(OFFSET), r->offset, r->n, 8) == 0 &&
		    col_str(g, SC_REG(FILE), r->file, r->n) == 0 &&
		    col_uint(c, g, SC_REG(LINE), lines, r->n, width) == 0 &&
		    col_str(g, SC_REG(KIND), r->kind, r->n) == 0)
			rc = 0;
	}
	free(lines);
	if (g >= 0 && H5Gclose(g) < 0)
		rc = -1;
	return rc;
}

hid_t profile_create(const char *path, hid_t fcpl)
{
	/* The 1.8 format keeps a small group's links in its own header, where
	 * the oldest gives each group a B-tree and a heap: a run of many
	 * processes has a quarter fewer bytes. Any HDF5 from 1.8 on reads it. */
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = -1;
	hid_t own = fcpl == H5P_DEFAULT ? H5Pcreate(H5P_FILE_CREATE) : H5Pcopy(fcpl);

	if (fapl >= 0 && own >= 0 && H5Pset_obj_track_times(own, 0) >= 0 &&
	    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0)
		file = H5Fcreate(path, H5F_ACC_TRUNC, own, fapl);
	if (own >= 0)
		H5Pclose(own);
	if (fapl >= 0)
		H5Pclose(fapl);
	return file;
}

int attr_root(hid_t file)
{
	char producer[64];
	snprintf(producer, sizeof producer, "scope %s", SCOPE_VERSION);
	return attr_i64(file, SC_ROOT(SCHEMA), SC_SCHEMA) == 0 &&
			       attr_str(file, SC_ROOT(PRODUCER), producer) == 0 &&
			       attr_str(file, SC_ROOT(TIME_UNIT), SC_TIME_UNIT) == 0
		       ? 0
		       : -1;
}

/* ---- Descriptions ------------------------------------------------------ */

/* Sets loc's new string attribute name to text without its Markdown
 * markup (the backquotes and asterisks of docs/SCHEMA.md). */
static int attr_doc(hid_t loc, const char *name, const char *text)
{
	char *plain = malloc(strlen(text) + 1), *o = plain;
	int rc;

	if (!plain)
		return -1;
	for (const char *s = text; *s; s++)
		if (*s != '`' && *s != '*')
			*o++ = *s;
	*o = '\0';
	rc = attr_str(loc, name, plain);
	free(plain);
	return rc;
}

/* The same, replacing the attribute when loc has it. */
static int attr_plain(hid_t loc, const char *name, const char *text)
{
	if (H5Aexists(loc, name) > 0 && H5Adelete(loc, name) < 0)
		return -1;
	return attr_doc(loc, name, text);
}

/* Describes the dataset d, column f of the table group table_group, with
 * attr (attr_doc when d is new, attr_plain to replace). */
static int describe_dataset(hid_t d, const struct sc_field *f, const char *table_group,
			    int (*attr)(hid_t, const char *, const char *))
{
	int rc = attr(d, SC_DESCRIPTION, f->what);

	if (rc == 0 && f->unit[0])
		rc = attr(d, SC_UNIT, f->unit);
	for (size_t e = 0; rc == 0 && e < sc_nenum_docs; e++) {
		const struct sc_enum_doc *x = &sc_enum_docs[e];
		if (strcmp(x->group, table_group) == 0 && strcmp(x->column, f->name) == 0)
			rc = attr(d, x->attribute, x->text);
	}
	return rc;
}

/* The path of the group loc as lib/schema.h spells it: "/process7/lanes"
 * is "/process<N>/lanes". Returns 0, or -1 when it has none that fits. */
static int schema_path(hid_t loc, char *out, size_t cap)
{
	char path[256];
	ssize_t n = H5Iget_name(loc, path, sizeof path);
	size_t digits;
	int len;

	if (n <= 0 || (size_t)n >= sizeof path)
		return -1;
	digits = strncmp(path, "/process", 8) == 0 ? strspn(path + 8, "0123456789") : 0;
	len = digits ? snprintf(out, cap, "/process<N>%s", path + 8 + digits)
		     : snprintf(out, cap, "%s", path);
	return len > 0 && (size_t)len < cap ? 0 : -1;
}

/* Describes d, just created as the column name of the group loc, when the
 * schema has that column: every writer's columns are described as they
 * are made, not opened again for it. */
static int describe_new(hid_t d, hid_t loc, const char *name)
{
	char table[256];

	if (schema_path(loc, table, sizeof table) != 0)
		return 0;
	for (size_t i = 0; i < sc_ngroups; i++) {
		const struct sc_group *t = &sc_groups[i];
		if (t->attributes || strcmp(t->path, table) != 0)
			continue;
		for (size_t k = 0; k < t->n; k++)
			if (strcmp(t->fields[k].name, name) == 0)
				return describe_dataset(d, &t->fields[k], t->path, attr_doc);
	}
	return 0;
}

hid_t col_group(hid_t loc, const char *name)
{
	hid_t gcpl = untimed(H5P_GROUP_CREATE), g = -1;
	char path[256];

	/* Attributes stay in the group's header however many (/metadata has
	 * some thirty): HDF5 1.10's H5Ocopy, which the merge uses, crashes on
	 * string attributes kept apart in a heap, as past 8 they would be. */
	if (gcpl >= 0 && H5Pset_attr_phase_change(gcpl, UINT16_MAX, 0) >= 0)
		g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
	if (gcpl >= 0)
		H5Pclose(gcpl);

	if (g < 0 || schema_path(g, path, sizeof path) != 0)
		return g;
	for (size_t i = 0; i < sc_ngroup_docs; i++)
		if (strcmp(sc_group_docs[i].path, path) == 0) {
			if (attr_doc(g, SC_DESCRIPTION, sc_group_docs[i].what) == 0)
				break;
			H5Gclose(g);
			return -1;
		}
	return g;
}

/* Whether every component of path (absolute, or relative to loc) exists. */
static int path_exists(hid_t loc, const char *path)
{
	char buf[256];
	size_t n = strlen(path);

	if (n >= sizeof buf)
		return 0;
	memcpy(buf, path, n + 1);
	for (char *slash = buf + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		if (H5Lexists(loc, buf, H5P_DEFAULT) <= 0)
			return 0;
		*slash = '/';
	}
	return strcmp(buf, "/") == 0 || H5Lexists(loc, buf, H5P_DEFAULT) > 0;
}

/* The table's path with <N> replaced by n: "/process<N>/modules" -> "/process3/modules". */
static void with_n(char *out, size_t cap, const char *path, size_t n)
{
	const char *at = strstr(path, "<N>");
	if (at)
		snprintf(out, cap, "%.*s%zu%s", (int)(at - path), path, n, at + 3);
	else
		snprintf(out, cap, "%s", path);
}

/* Describes the dataset name of the group g when g has it. */
static int describe_column(hid_t g, const struct sc_field *f, const char *table_group)
{
	hid_t d;
	int rc;

	if (H5Lexists(g, f->name, H5P_DEFAULT) <= 0)
		return 0;
	if ((d = H5Dopen2(g, f->name, H5P_DEFAULT)) < 0)
		return -1;
	rc = describe_dataset(d, f, table_group, attr_plain);
	return H5Dclose(d) < 0 ? -1 : rc;
}

/* Describes the group of the table at path (with <N> as n) and its columns,
 * when the file has it and it has no description: one that has was made
 * by col_group, its columns described as they were made. The group is
 * opened once and its columns found in it: a file of many processes has
 * thousands of them. */
static int describe_group(hid_t file, const struct sc_group_doc *doc, size_t n)
{
	char path[256];
	hid_t g;
	int rc;

	with_n(path, sizeof path, doc->path, n);
	if (!path_exists(file, path))
		return 0;
	if ((g = H5Oopen(file, path, H5P_DEFAULT)) < 0)
		return -1;
	if (H5Aexists(g, SC_DESCRIPTION) > 0)
		return H5Oclose(g) < 0 ? -1 : 0;
	rc = attr_plain(g, SC_DESCRIPTION, doc->what);
	for (size_t i = 0; rc == 0 && i < sc_ngroups; i++) {
		const struct sc_group *t = &sc_groups[i];
		if (t->attributes || strcmp(t->path, doc->path) != 0)
			continue;
		for (size_t k = 0; rc == 0 && k < t->n; k++)
			rc = describe_column(g, &t->fields[k], t->path);
	}
	return H5Oclose(g) < 0 ? -1 : rc;
}

/* The rows of /processes, as the length of its first column; 0 without it. */
static size_t process_rows(hid_t file)
{
	char path[64];
	hsize_t dims = 0;
	hid_t d, space;

	snprintf(path, sizeof path, "/%s/%s", SC_PROCESSES, sc_processes[0].name);
	if (!path_exists(file, path) || (d = H5Dopen2(file, path, H5P_DEFAULT)) < 0)
		return 0;
	if ((space = H5Dget_space(d)) >= 0) {
		if (H5Sget_simple_extent_ndims(space) != 1 ||
		    H5Sget_simple_extent_dims(space, &dims, NULL) < 0)
			dims = 0;
		H5Sclose(space);
	}
	H5Dclose(d);
	return (size_t)dims;
}

/* Whether the object at path has a description already. */
static int described(hid_t file, const char *path)
{
	hid_t o = H5Oopen(file, path, H5P_DEFAULT);
	int yes = o >= 0 && H5Aexists(o, SC_DESCRIPTION) > 0;
	if (o >= 0)
		H5Oclose(o);
	return yes;
}

int describe_profile(hid_t file)
{
	size_t nproc = process_rows(file);
	char path[64];

	for (size_t i = 0; i < sc_ngroup_docs; i++)
		if (!strstr(sc_group_docs[i].path, "<N>") &&
		    describe_group(file, &sc_group_docs[i], 0) != 0)
			return -1;
	for (size_t n = 0; n < nproc; n++) {
		snprintf(path, sizeof path, "/" SC_PROCESS_N, n);
		if (!path_exists(file, path) || described(file, path))
			continue;
		for (size_t i = 0; i < sc_ngroup_docs; i++)
			if (strstr(sc_group_docs[i].path, "<N>") &&
			    describe_group(file, &sc_group_docs[i], n) != 0)
				return -1;
	}
	return 0;
}

/* Stores an unsigned column in the narrowest width its values fit,
 * narrowing in place: element i moves to a lower or equal address only
 * after every element before it has been read. */
#define NARROW(IN, OUT)                                                                            \
	do {                                                                                       \
		const IN *in = v;                                                                  \
		OUT *out = v;                                                                      \
		for (uint64_t i = 0; i < n; i++)                                                   \
			out[i] = (OUT)in[i];                                                       \
	} while (0)

#define MAX_OF(IN)                                                                                 \
	do {                                                                                       \
		const IN *in = v;                                                                  \
		for (uint64_t i = 0; i < n; i++)                                                   \
			max = in[i] > max ? in[i] : max;                                           \
	} while (0)

int narrow_to(void *v, int in_width, int w, uint64_t n)
{
	if (in_width == 8 && w == 4)
		NARROW(uint64_t, uint32_t);
	else if (in_width == 8 && w == 2)
		NARROW(uint64_t, uint16_t);
	else if (in_width == 8 && w == 1)
		NARROW(uint64_t, uint8_t);
	else if (in_width == 4 && w == 2)
		NARROW(uint32_t, uint16_t);
	else if (in_width == 4 && w == 1)
		NARROW(uint32_t, uint8_t);
	else if (in_width == 2 && w == 1)
		NARROW(uint16_t, uint8_t);
	else
		return in_width;
	return w;
}

int col_narrow(struct columns *c, hid_t g, const char *name, void *v, int in_width, uint64_t n)
{
	uint64_t max = 0;

	switch (in_width) {
	case 8: MAX_OF(uint64_t); break;
	case 4: MAX_OF(uint32_t); break;
	default: MAX_OF(uint16_t); break;
	}
	return col_uint(c, g, name, v, n, narrow_to(v, in_width, width_for(max), n));
}

#undef NARROW
#undef MAX_OF

int col_begin(struct columns *c, hid_t loc, const char *name, int width, uint64_t n,
	      struct col_out *o)
{
	o->type = uint_type(width);
	o->width = width;
	o->n = n;
	o->d = create(c, loc, name, o->type, n, (size_t)width, 1, &o->deflated, &o->chunk_elems);
	return o->d < 0 ? -1 : 0;
}

int col_put(struct columns *c, struct col_out *o, const void *data, uint64_t off, uint64_t len)
{
	hsize_t start = off, count = len;
	hid_t mem, file;
	int rc;

	if (len == 0)
		return 0;
	progress_add(len);
	if (o->deflated)
		return write_deflated(c, o->d, data, len, o->width, o->chunk_elems, off);
	mem = H5Screate_simple(1, &count, NULL);
	file = H5Dget_space(o->d);
	rc = mem >= 0 && file >= 0 &&
			     H5Sselect_hyperslab(file, H5S_SELECT_SET, &start, NULL, &count,
						 NULL) >= 0 &&
			     H5Dwrite(o->d, o->type, mem, file, H5P_DEFAULT, data) >= 0
		     ? 0
		     : -1;
	if (mem >= 0)
		H5Sclose(mem);
	if (file >= 0)
		H5Sclose(file);
	return rc;
}

int col_end(struct columns *c, struct col_out *o)
{
	int rc = o->deflated ? chunks_drain(c) : 0;

	return o->d >= 0 && H5Dclose(o->d) < 0 ? -1 : rc;
}

/* What a column written in pieces keeps at most before writing them. */
#define STREAM_BYTES (UINT64_C(1) << 20)

int col_stream_begin(struct columns *c, hid_t loc, const char *name, int width, uint64_t n,
		     struct col_stream *s)
{
	*s = (struct col_stream){.o = {.d = -1, .width = width}};
	if (col_begin(c, loc, name, width, n, &s->o) != 0)
		return -1;
	s->grain =
		s->o.deflated && s->o.chunk_elems ? s->o.chunk_elems : column_chunk_elems(&c->st);
	/* Whole chunks are written up to STREAM_BYTES at a time; never
	 * fewer than two. */
	s->cap = STREAM_BYTES / (s->grain * (uint64_t)width);
	s->cap = (s->cap < 2 ? 2 : s->cap) * s->grain;
	if (!(s->buf = malloc(s->cap * (uint64_t)width)))
		return -1;
	scope_fresh(s->buf, (s->cap < n ? s->cap : n) * (uint64_t)width);
	return 0;
}

/* Writes the whole chunks the column holds, or with all, every row. */
static int stream_flush(struct columns *c, struct col_stream *s, int all)
{
	uint64_t k = all ? s->have : s->have / s->grain * s->grain;
	size_t w = (size_t)s->o.width;

	if (k == 0)
		return 0;
	if (col_put(c, &s->o, s->buf, s->done, k) != 0)
		return -1;
	memmove(s->buf, s->buf + k * w, (s->have - k) * w);
	s->done += k;
	s->have -= k;
	return 0;
}

int col_stream_commit(struct columns *c, struct col_stream *s, uint64_t len)
{
	s->have += len;
	return s->have + s->grain > s->cap ? stream_flush(c, s, 0) : 0;
}

int col_stream_put(struct columns *c, struct col_stream *s, const void *data, uint64_t len)
{
	const unsigned char *from = data;
	size_t w = (size_t)s->o.width;
	uint64_t whole = s->have || !s->o.deflated ? 0 : len / s->grain * s->grain;

	/* Whole chunks at a chunk's start go to the workers as they are:
	 * chunks_put copies them. */
	if (whole) {
		if (col_put(c, &s->o, from, s->done, whole) != 0)
			return -1;
		s->done += whole;
		from += whole * w;
		len -= whole;
	}
	while (len) {
		uint64_t k = len < s->grain ? len : s->grain;
		memcpy(col_stream_room(s), from, k * w);
		if (col_stream_commit(c, s, k) != 0)
			return -1;
		from += k * w;
		len -= k;
	}
	return 0;
}

int col_stream_end(struct columns *c, struct col_stream *s, int write)
{
	int rc = write && s->buf && stream_flush(c, s, 1) != 0 ? -1 : 0;

	if (col_end(c, &s->o) != 0)
		rc = -1;
	free(s->buf);
	s->buf = NULL;
	s->o.d = -1;
	return rc;
}
