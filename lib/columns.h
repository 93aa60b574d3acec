/* SPDX-License-Identifier: MIT */
/* Writing one-dimensional columns to HDF5 with the storage policy of the profile. */
#ifndef SCOPE_LIB_COLUMNS_H
#define SCOPE_LIB_COLUMNS_H

#include "storage.h"

#include <stdint.h>

#include <hdf5.h>

/* Threads a profile's columns are deflated on, at most: one per core. */
#define COLUMNS_MAX_THREADS 16

struct columns {
	struct storage st;
	int threads;			   /* 1 to COLUMNS_MAX_THREADS */
	struct libdeflate_compressor **cz; /* one per thread */
	struct chunk_pool *pool;	   /* lib/chunks.h: from the first deflated chunk */
};

int columns_init(struct columns *c, const struct storage *st);

/* Elements per HDF5 chunk of a chunked column under st. */
uint64_t column_chunk_elems(const struct storage *st);
void columns_fini(struct columns *c);

/* Unsigned column: values of width bytes (1, 2, 4, 8) stored as they are;
 * compressed when the policy says so. Returns 0 or -1. */
int col_uint(struct columns *c, hid_t loc, const char *name, const void *data, uint64_t n,
	     int width);

/* Unsigned column of in_width-byte values stored in the narrowest width
 * that holds them all; narrows v in place. Returns 0 or -1. */
int col_narrow(struct columns *c, hid_t loc, const char *name, void *v, int in_width, uint64_t n);

/* Narrows n values of in_width bytes to w bytes in place, when w is
 * narrower; returns the width they then have. */
int narrow_to(void *v, int in_width, int w, uint64_t n);

/* A column written a slice at a time, for data never in memory at once. */
struct col_out {
	hid_t d, type;
	int width, deflated;
	uint64_t chunk_elems, n;
};

int col_begin(struct columns *c, hid_t loc, const char *name, int width, uint64_t n,
	      struct col_out *o);
/* Writes rows [off, off + len); off is a whole number of chunks. */
int col_put(struct columns *c, struct col_out *o, const void *data, uint64_t off, uint64_t len);
/* Writes what is left of the column and closes it. */
int col_end(struct columns *c, struct col_out *o);

/* A column appended to in pieces of any length: rows wait in a buffer
 * until they make whole chunks, which are written as they fill. */
struct col_stream {
	struct col_out o;
	unsigned char *buf; /* rows [done, done + have) */
	uint64_t done, have;
	uint64_t grain; /* rows of a chunk: the most col_stream_room takes */
	uint64_t cap;	/* rows buf holds: whole chunks, written together */
};

/* Creates the column of n rows of width bytes. Returns 0 or -1; s is
 * ready for col_stream_end either way. */
int col_stream_begin(struct columns *c, hid_t loc, const char *name, int width, uint64_t n,
		     struct col_stream *s);
/* Room for up to the column's grain rows, to fill and then hand to
 * col_stream_commit. */
static inline void *col_stream_room(struct col_stream *s)
{
	return s->buf + s->have * (uint64_t)s->o.width;
}
/* The len rows written at col_stream_room (len at most the grain). */
int col_stream_commit(struct columns *c, struct col_stream *s, uint64_t len);
/* Appends len rows of the column's width. */
int col_stream_put(struct columns *c, struct col_stream *s, const void *data, uint64_t len);
/* Writes the rows left (when write) and closes the column; -1 when a write
 * failed. */
int col_stream_end(struct columns *c, struct col_stream *s, int write);

/* The narrowest width (1, 2, 4, 8 bytes) that holds max. */
int width_for(uint64_t max);

/* Copies n values of 64 bits into out at the given width. */
void narrow(void *out, const uint64_t *in, uint64_t n, int width);

int col_int64(struct columns *c, hid_t loc, const char *name, const int64_t *data, uint64_t n);
int col_int32(hid_t loc, const char *name, const int32_t *data, uint64_t n);
int col_str(hid_t loc, const char *name, const char *const *data, uint64_t n);

int attr_str(hid_t loc, const char *name, const char *value);
int attr_i64(hid_t loc, const char *name, int64_t value);
int attr_f64(hid_t loc, const char *name, double value);

/* The rows of /regions, a column each (lib/schema.h's SC_REGION_FIELDS). */
struct region_columns {
	const char *const *name, *const *module, *const *file, *const *kind;
	const uint64_t *offset, *line;
	uint64_t n;
};

/* Creates /regions in file with r's rows: offsets at 64 bits, lines at 32
 * (at 64 only when one does not fit), the rest strings. The one writer of
 * /regions: the writer's, the merge's and scope-symbolize's files have it
 * alike. Returns 0 or -1. */
int col_regions(struct columns *c, hid_t file, const struct region_columns *r);

/* Creates the profile file at path (truncating it) with the file creation
 * properties fcpl (H5P_DEFAULT for HDF5's), in the format every profile
 * has; as H5Fcreate, a negative id on failure. */
hid_t profile_create(const char *path, hid_t fcpl);

/* The root's attributes: the schema version, the producer (this scope)
 * and the time unit. Returns 0 or -1. */
int attr_root(hid_t file);

/* Creates the group name in loc with its description from lib/schema.h,
 * when the schema has one; as H5Gcreate2, a negative id on failure. The
 * columns made by this file's functions are described so as they are made:
 * a "description" attribute, a "unit" when their values have one, and the
 * attributes that explain a column's values (SC_ENUM_DOCS). */
hid_t col_group(hid_t loc, const char *name);

/*
 * Writes lib/schema.h's descriptions into file where they are missing (a
 * group not made by col_group, copied from an older profile): on every
 * group and dataset the table knows, replacing those there. A group that
 * has its description already is left as it is, with its columns.
 * Returns 0 or -1.
 */
int describe_profile(hid_t file);

#endif
