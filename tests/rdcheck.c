/* SPDX-License-Identifier: MIT */
/* rdcheck FILE...: runs the reader's whole-file check (rd_check, a fuzzer's entry) on each file. */
#include "reader.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		char err[RD_ERR_MAX];
		if (rd_check(argv[i], err, sizeof err) != 0) {
			fprintf(stderr, "rdcheck: %s: %s\n", argv[i], err);
			bad = 1;
		}
	}
	return bad;
}
