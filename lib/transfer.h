/* SPDX-License-Identifier: MIT */
/* HDF5 transfer lists with a conversion buffer sized to what one read or write moves. */
#ifndef SCOPE_LIB_TRANSFER_H
#define SCOPE_LIB_TRANSFER_H

#include <hdf5.h>
#include <stdint.h>

/*
 * A transfer list for moving n values that need converting (a narrow
 * column read as 64-bit, strings). HDF5's default conversion buffer is
 * 1 MiB, zeroed for every such read or write: a profile's few dozen small
 * columns then cost milliseconds of memset and page faults. Close it with
 * transfer_done; H5P_DEFAULT when no smaller list could be made.
 */
hid_t transfer_for(uint64_t n);
void transfer_done(hid_t x);

#endif
