/* SPDX-License-Identifier: MIT */
/* libFuzzer harness of the merge: each input is merged with a good profile by merge_profiles, which
 * must refuse it with a reason or write a profile that reads back whole. */
#define _GNU_SOURCE
#include "h5check.h"
#include "merge.h"
#include "reader.h"
#include "storage.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * FUZZ_MERGE_GOOD names the good profile (a seed); the input comes first
 * on the command line, and the merge orders them by their first start as
 * it always does. What the merge accepts it has read as the reader does
 * (rd_open, rd_check_events), and then copied, renumbered and rewritten:
 * the merged file must pass rd_check, the whole of what a reader may meet.
 * Inputs that crash or hang libhdf5 itself never reach the merge: see
 * h5check.c.
 */

static const char *path, *good;
static char out[PATH_MAX];
static struct storage st;

static void remove_output(void)
{
	unlink(out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	path = h5check_init("fuzz_merge");
	good = getenv("FUZZ_MERGE_GOOD");
	if (!good || !*good || rd_not_a_file(good)) {
		fprintf(stderr, "fuzz_merge: FUZZ_MERGE_GOOD names no profile\n");
		exit(1);
	}
	snprintf(out, sizeof out, "%s.merged.h5", path);
	atexit(remove_output);
	storage_parse(&st, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *inputs[] = {(char *)path, (char *)good};
	struct merge_request r = {.output = out,
				  .inputs = inputs,
				  .ninputs = 2,
				  .st = &st,
				  .keep = 1,
				  .quiet = 1,
				  .who = "fuzz_merge"};
	char err[1024] = "", back[RD_ERR_MAX];

	if (!h5check_input(data, size))
		return 0;
	if (merge_profiles(&r, err, sizeof err) == 0) {
		if (rd_check(out, back, sizeof back) != 0) {
			fprintf(stderr,
				"fuzz_merge: the merge accepted an input and wrote a profile that "
				"does not read back: %s\n",
				back);
			abort();
		}
		unlink(out);
	}
	h5check_all_closed("merge_profiles", err);
	return 0;
}
