/* SPDX-License-Identifier: MIT */
/* What the profile fuzzers share: the pre-check that tells libhdf5's own crashes apart, and the
 * check that every HDF5 object was closed. */
#ifndef SCOPE_TESTS_FUZZ_H5CHECK_H
#define SCOPE_TESTS_FUZZ_H5CHECK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Makes the file the harness named (its name prefixes every line) writes
 * each input to, in $TMPDIR, and starts the pre-check, h5walk, when
 * FUZZ_H5WALK names it. At exit the counts of inputs the pre-check skipped
 * are printed and the file removed. Exits on failure. Returns the file's path.
 */
const char *h5check_init(const char *name);

/*
 * Writes the input to the file h5check_init made and asks h5walk whether
 * libhdf5 survives it. Returns 1 when it does (or there is no pre-check);
 * 0 when it crashed or hung libhdf5, after keeping the input in
 * $FUZZ_HDF5_DIR (at most 50). Aborts when h5walk stops answering.
 */
int h5check_input(const uint8_t *data, size_t size);

/* Aborts, saying what code ("rd_check") left open and the reason it gave
 * (why), unless every HDF5 object is closed: one left open keeps the file
 * open, and the next input at the same path would be read through the
 * stale one. */
void h5check_all_closed(const char *code, const char *why);

#endif
