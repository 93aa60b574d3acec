/* SPDX-License-Identifier: MIT */
/* Copying HDF5 objects between files, keeping an object linked under two names one object. */
#ifndef SCOPE_LIB_H5COPY_H
#define SCOPE_LIB_H5COPY_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The objects of one source file linked under more than one name that a
 * copy has met, with the path of their copy: a later link to one links
 * its copy again. A profile's processes share tables so (the module
 * table of a forked child is its parent's), and a copy keeps them shared.
 * Zeroed to start; one per source file and destination file.
 */
struct linked_copies {
	struct linked_copy {
		uint64_t addr;
		char *path;
	} * v;
	size_t n, cap;
};

void linked_copies_free(struct linked_copies *seen);

/* Copies every attribute of from to to, variable-length ones included.
 * Returns 0 or -1. */
int h5_copy_attrs(hid_t from, hid_t to);

/* Copies the object name of from into to as as: a group member by member,
 * with its attributes and creation properties, an object seen already as
 * another link to its copy, any other object whole (H5Ocopy). Returns 0 or
 * -1. */
int h5_copy_linked(hid_t from, const char *name, hid_t to, const char *as,
		   struct linked_copies *seen);

#endif
