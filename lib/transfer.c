/* SPDX-License-Identifier: MIT */
/* HDF5 transfer lists with a conversion buffer sized to what one read or write moves. */
#include "transfer.h"

#define DEFAULT_BUFFER (1u << 20) /* HDF5's own */
#define SMALLEST       512u

hid_t transfer_for(uint64_t n)
{
	uint64_t bytes = n * 16; /* the widest value converted: a 64-bit number, a string */
	hid_t x;

	if (bytes >= DEFAULT_BUFFER)
		return H5P_DEFAULT;
	if ((x = H5Pcreate(H5P_DATASET_XFER)) < 0)
		return H5P_DEFAULT;
	if (H5Pset_buffer(x, bytes < SMALLEST ? SMALLEST : (size_t)bytes, NULL, NULL) < 0) {
		H5Pclose(x);
		return H5P_DEFAULT;
	}
	return x;
}

void transfer_done(hid_t x)
{
	if (x != H5P_DEFAULT)
		H5Pclose(x);
}
