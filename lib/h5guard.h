/* SPDX-License-Identifier: MIT */
/* A crash inside the HDF5 library while a tool reads a damaged file: one line, exit 1. */
#ifndef SCOPE_LIB_H5GUARD_H
#define SCOPE_LIB_H5GUARD_H

/* Catches SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT for the tool named
 * tool; a no-op in sanitizer builds, which keep their own reports. */
void h5guard_install(const char *tool);

/* The file being read now, named in the message; NULL when none. */
void h5guard_reading(const char *path);

/* Where the tool keeps the temporary file a crash must remove. */
char *volatile *h5guard_tmp(void);

#endif
