/* SPDX-License-Identifier: MIT */
/* Rewrites the /regions of a profile through a temporary sibling. */
#define _GNU_SOURCE
#include "symfile.h"

#include "columns.h"
#include "h5copy.h"
#include "publish.h"

#include "reader.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- Copying ------------------------------------------------------------ */

struct copy_ctx {
	hid_t to;
	struct linked_copies seen;
	const char *const *skip; /* NULL-terminated names not to copy */
	char *err;
	size_t cap;
	const char *where; /* the group, for errors */
};

static int skipped(const struct copy_ctx *c, const char *name)
{
	for (const char *const *s = c->skip; *s; s++)
		if (strcmp(*s, name) == 0)
			return 1;
	return 0;
}

/* Copies the link name of g into c->to: hard links with what they point to, soft links as they are.
 */
static herr_t copy_link(hid_t g, const char *name, const H5L_info_t *info, void *cp)
{
	struct copy_ctx *c = cp;
	char *val = NULL;
	int rc = -1;

	if (skipped(c, name))
		return 0;
	if (info->type == H5L_TYPE_HARD) {
		rc = h5_copy_linked(g, name, c->to, name, &c->seen);
	} else if (info->type == H5L_TYPE_SOFT && (val = calloc(1, info->u.val_size + 1)) &&
		   H5Lget_val(g, name, val, info->u.val_size, H5P_DEFAULT) >= 0) {
		rc = H5Lcreate_soft(val, c->to, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
	}
	free(val);
	if (rc != 0)
		fail(c->err, c->cap, "%s%s cannot be copied", c->where, name);
	return rc;
}

static int copy_members(hid_t from, struct copy_ctx *c)
{
	hsize_t idx = 0;
	herr_t rc = H5Literate(from, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_link, c);
	if (rc < 0 && !c->err[0])
		fail(c->err, c->cap, "the members of %s cannot be listed", c->where);
	return rc < 0 ? -1 : 0;
}

/* /regions anew, from r, with the storage and the descriptions of the
 * profile's other writers. */
static int write_regions(hid_t dst, const struct region_columns *r, char *err, size_t cap)
{
	struct storage st;
	struct columns c;
	int rc = -1;

	storage_parse(&st, NULL); /* the default, which always parses */
	if (columns_init(&c, &st) != 0)
		fail(err, cap, "out of memory");
	else if (col_regions(&c, dst, r) != 0)
		fail(err, cap, "/%s cannot be written", SC_REGIONS);
	else if (describe_profile(dst) != 0)
		fail(err, cap, "the descriptions of /%s cannot be written", SC_REGIONS);
	else
		rc = 0;
	columns_fini(&c);
	return rc;
}

/* Writes the whole new profile into tmp. */
static int write_copy(const char *path, const char *tmp, const struct region_columns *r, char *err,
		      size_t cap)
{
	static const char *const top_skip[] = {SC_REGIONS, NULL};
	hid_t src = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	hid_t fcpl = src >= 0 ? H5Fget_create_plist(src) : -1;
	hid_t dst = fcpl >= 0 ? profile_create(tmp, fcpl) : -1;
	struct copy_ctx c = {-1, {0}, top_skip, err, cap, "/"};
	int rc = -1;

	c.to = dst;
	if (dst < 0)
		fail(err, cap, "%s cannot be created", tmp);
	else if (h5_copy_attrs(src, dst) != 0)
		fail(err, cap, "the attributes of / cannot be copied");
	else if (copy_members(src, &c) == 0 && write_regions(dst, r, err, cap) == 0)
		rc = 0;
	if (dst >= 0 && H5Fclose(dst) < 0 && rc == 0)
		rc = fail(err, cap, "%s cannot be written", tmp);
	linked_copies_free(&c.seen);
	if (fcpl >= 0)
		H5Pclose(fcpl);
	if (src >= 0)
		H5Fclose(src);
	return rc;
}

/* ---- Publishing --------------------------------------------------------- */

/* The copy must read back as a profile with the same regions. */
static int verify(const char *tmp, size_t nregions, char *err, size_t cap)
{
	char why[RD_ERR_MAX];
	struct rd_profile *p = rd_open(tmp, why, sizeof why);
	int rc = 0;

	if (!p)
		return fail(err, cap, "the rewritten file does not read back: %s", why);
	if (p->nregions != nregions)
		rc = fail(err, cap, "the rewritten file has %zu regions, not %zu", p->nregions,
			  nregions);
	rd_close(p);
	return rc;
}

struct copy {
	const char *from;
	const struct region_columns *r;
	char *err;
	size_t cap;
};

static int copy_and_verify(const char *tmp, void *ctx)
{
	struct copy *c = ctx;
	return write_copy(c->from, tmp, c->r, c->err, c->cap) == 0 &&
			       verify(tmp, c->r->n, c->err, c->cap) == 0
		       ? 0
		       : -1;
}

int sf_rewrite(const char *path, const struct region_columns *r, char *volatile *tmp, char *err,
	       size_t cap)
{
	struct copy c = {path, r, err, cap};
	struct stat st;
	char *target;
	int rc;

	if (stat(path, &st) != 0)
		return fail(err, cap, "%s", strerror(errno));
	/* A link keeps pointing at the profile: the new file replaces the
	 * link's target, beside it, never the link itself. */
	if (!(target = realpath(path, NULL)))
		return fail(err, cap, "%s", strerror(errno));
	/* err is also publish_atomic's: the copy's own reason stays in it */
	rc = publish_atomic(target, copy_and_verify, &c, (int)(st.st_mode & 07777), tmp, err, cap);
	free(target);
	return rc;
}
