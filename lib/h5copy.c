/* SPDX-License-Identifier: MIT */
/* Copying HDF5 objects between files, keeping an object linked under two names one object. */
#include "h5copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void linked_copies_free(struct linked_copies *seen)
{
	for (size_t i = 0; i < seen->n; i++)
		free(seen->v[i].path);
	free(seen->v);
	*seen = (struct linked_copies){0};
}

/* One attribute of any type, variable-length ones included. */
static herr_t copy_attr(hid_t from, const char *name, const H5A_info_t *info, void *to_p)
{
	hid_t to = *(hid_t *)to_p;
	hid_t a = H5Aopen(from, name, H5P_DEFAULT);
	hid_t ft = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
	hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_DEFAULT) : -1, b = -1;
	hssize_t npoints = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
	size_t size = mt >= 0 ? H5Tget_size(mt) : 0;
	void *buf = npoints >= 0 && size ? calloc((size_t)npoints + 1, size) : NULL;
	herr_t rc = -1, have = -1;

	(void)info;
	if (buf && (have = H5Aread(a, mt, buf)) >= 0 &&
	    (b = H5Acreate2(to, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
	    H5Awrite(b, mt, buf) >= 0)
		rc = 0;
	if (have >= 0 && H5Tdetect_class(mt, H5T_VLEN) > 0)
		H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
	else if (have >= 0 && H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0)
		H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
	free(buf);
	if (b >= 0)
		H5Aclose(b);
	if (mt >= 0)
		H5Tclose(mt);
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	if (a >= 0)
		H5Aclose(a);
	return rc;
}

int h5_copy_attrs(hid_t from, hid_t to)
{
	hsize_t idx = 0;
	return H5Aiterate2(from, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_attr, &to) < 0 ? -1 : 0;
}

static const char *copy_of(const struct linked_copies *seen, uint64_t addr)
{
	for (size_t i = 0; i < seen->n; i++)
		if (seen->v[i].addr == addr)
			return seen->v[i].path;
	return NULL;
}

/* Remembers the copy of the object at addr: the path of as under to. */
static int remember(struct linked_copies *seen, uint64_t addr, hid_t to, const char *as)
{
	char at[1024];
	ssize_t n = H5Iget_name(to, at, sizeof at);
	size_t len = n > 0 ? (size_t)n + strlen(as) + 2 : 0;
	char *path = len && (size_t)n < sizeof at ? malloc(len) : NULL;

	if (!path)
		return -1;
	snprintf(path, len, "%s/%s", strcmp(at, "/") == 0 ? "" : at, as);
	if (seen->n == seen->cap) {
		size_t cap = seen->cap ? 2 * seen->cap : 16;
		struct linked_copy *v = realloc(seen->v, cap * sizeof *v);
		if (!v) {
			free(path);
			return -1;
		}
		seen->v = v;
		seen->cap = cap;
	}
	seen->v[seen->n++] = (struct linked_copy){addr, path};
	return 0;
}

struct member_ctx {
	hid_t to;
	struct linked_copies *seen;
};

static herr_t copy_member(hid_t g, const char *name, const H5L_info_t *info, void *cp)
{
	struct member_ctx *c = cp;
	char *val = NULL;
	int rc = -1;

	if (info->type == H5L_TYPE_HARD) {
		rc = h5_copy_linked(g, name, c->to, name, c->seen);
	} else if (info->type == H5L_TYPE_SOFT && (val = calloc(1, info->u.val_size + 1)) &&
		   H5Lget_val(g, name, val, info->u.val_size, H5P_DEFAULT) >= 0) {
		rc = H5Lcreate_soft(val, c->to, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
	}
	free(val);
	return rc;
}

/* The creation properties of scope's groups (columns.c's col_group): no
 * times, every attribute in the header. Made with those HDF5 1.10 reports
 * for a merged profile's group, the copy's members could not be found. */
static hid_t group_properties(void)
{
	hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
	if (gcpl >= 0 && (H5Pset_obj_track_times(gcpl, 0) < 0 ||
			  H5Pset_attr_phase_change(gcpl, UINT16_MAX, 0) < 0)) {
		H5Pclose(gcpl);
		gcpl = -1;
	}
	return gcpl;
}

static int copy_group(hid_t from, const char *name, hid_t to, const char *as,
		      struct linked_copies *seen)
{
	hid_t src = H5Gopen2(from, name, H5P_DEFAULT), gcpl = group_properties();
	hid_t dst = src >= 0 && gcpl >= 0 ? H5Gcreate2(to, as, H5P_DEFAULT, gcpl, H5P_DEFAULT) : -1;
	struct member_ctx c = {dst, seen};
	hsize_t idx = 0;
	int rc = dst >= 0 && h5_copy_attrs(src, dst) == 0 &&
				 H5Literate(src, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_member,
					    &c) >= 0
			 ? 0
			 : -1;

	if (dst >= 0 && H5Gclose(dst) < 0)
		rc = -1;
	if (gcpl >= 0)
		H5Pclose(gcpl);
	if (src >= 0)
		H5Gclose(src);
	return rc;
}

int h5_copy_linked(hid_t from, const char *name, hid_t to, const char *as,
		   struct linked_copies *seen)
{
	H5O_info_t info;
	const char *copy;
	int rc;

	if (H5Oget_info_by_name2(from, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
		return -1;
	if ((copy = copy_of(seen, info.addr)))
		return H5Lcreate_hard(to, copy, to, as, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
	rc = info.type == H5O_TYPE_GROUP
		     ? copy_group(from, name, to, as, seen)
		     : (H5Ocopy(from, name, to, as, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0);
	if (rc == 0 && info.rc > 1)
		rc = remember(seen, info.addr, to, as);
	return rc;
}
