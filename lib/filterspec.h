/* SPDX-License-Identifier: MIT */
/* The values of the record-time filter options, parsed alike by scope-run and the preload library.
 */
#ifndef SCOPE_LIB_FILTERSPEC_H
#define SCOPE_LIB_FILTERSPEC_H

#include <stdint.h>

/* Most regular expressions one of SCOPE_ONLY and SCOPE_NOT holds. */
#define FILTERSPEC_MAX_PATTERNS 32
#define FILTERSPEC_MAX_DEPTH	65535u

/* "T" in ns, or with a unit: ns, us, ms, s ("10us", "1.5ms"); returns 0,
 * or -1 when it is not a duration from 1 ns to a day. */
int filterspec_duration(const char *s, uint64_t *ns);

/* A depth from 1 to FILTERSPEC_MAX_DEPTH; returns 0 or -1. */
int filterspec_depth(const char *s, uint32_t *depth);

#endif
