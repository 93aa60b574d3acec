/* SPDX-License-Identifier: MIT */
/* The C library's settings the writer runs with: malloc's memory in transparent huge pages. */
#ifndef SCOPE_LIB_WRITER_TUNABLES_H
#define SCOPE_LIB_WRITER_TUNABLES_H

#include <stddef.h>

/*
 * The writer fills tens of MiB of fresh memory for every profile (a window
 * of calls, the chunks in flight, the spill), and a first write to a page
 * is a fault: 10 us a page in the virtual machines measured here, 3 to 5
 * with MADV_POPULATE_WRITE, 0.2 in a transparent huge page. glibc 2.35 and
 * later give malloc's memory huge pages when GLIBC_TUNABLES says
 * glibc.malloc.hugetlb=1 (an older one ignores it); the tunables are read
 * at start-up, so whoever starts the writer puts it in its environment.
 */
#define WRITER_TUNABLE "glibc.malloc.hugetlb=1"

/*
 * The GLIBC_TUNABLES entry for the writer's environment, given the one the
 * environment has (NULL: none): its tunables and WRITER_TUNABLE, in buf of
 * cap bytes. Returns buf, or entry when that does not fit (the writer then
 * runs as it would have).
 */
const char *writer_tunables(const char *entry, char *buf, size_t cap);

/* Whether an environment entry is GLIBC_TUNABLES's. */
int is_tunables(const char *entry);

#endif
