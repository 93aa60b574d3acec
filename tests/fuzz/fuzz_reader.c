/* SPDX-License-Identifier: MIT */
/* libFuzzer harness of the profile reader: each input goes to a file that rd_check reads whole,
 * then through the raw reads scope-merge and scope-symbolize make. */
#include "h5check.h"
#include "reader.h"
#include "schema.h"

#include <hdf5.h>
#include <stdint.h>

/* Inputs that crash or hang libhdf5 itself never reach the reader: see h5check.c. */

static const char *path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	path = h5check_init("fuzz_reader");
	return 0;
}

/*
 * What scope-merge and scope-symbolize read besides: the modules, each
 * /events column raw at its stored width, and the copy of a group into
 * another file (an HDF5 file in memory here).
 */
static void raw_reads(void)
{
	char err[RD_ERR_MAX];
	struct rd_profile *p = rd_open(path, err, sizeof err);
	struct rd_module *mods = NULL;
	size_t nmods = 0;
	hid_t fapl, to;

	if (!p)
		return;
	if (rd_check_events(p, RD_CHECKED) == 0) {
		for (int col = 0; col < SC_NEV; col++) {
			int width = rd_event_width(p, col);
			uint64_t rows = p->nevents < 4096 ? p->nevents : 4096;
			uint64_t buf[4096];
			if (width > 0)
				rd_event_rows(p, col, 0, rows, width, buf);
		}
	}
	if (rd_modules(p, &mods, &nmods) == 0)
		rd_modules_free(mods, nmods);
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
	    (to = H5Fcreate("copy.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0) {
		if (rd_has(p, "/" SC_METADATA))
			rd_copy(p, "/" SC_METADATA, to, SC_METADATA, NULL);
		H5Fclose(to);
	}
	if (fapl >= 0)
		H5Pclose(fapl);
	rd_close(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[RD_ERR_MAX] = "";

	if (!h5check_input(data, size))
		return 0;
	if (rd_check(path, err, sizeof err) == 0)
		raw_reads();
	h5check_all_closed("rd_check", err);
	return 0;
}
