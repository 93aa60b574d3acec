/* SPDX-License-Identifier: MIT */
/* Shared by the test programs: functions the compiler may neither inline nor clone. */
#ifndef SCOPE_TEST_PROGS_H
#define SCOPE_TEST_PROGS_H

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#include <time.h>

/* Nanoseconds from a to b; a millisecond count would truncate a negative
 * nanosecond part towards 0 and end a wait up to 1 ms early. Inlined and
 * not instrumented: no region of its own in the programs' profiles. */
__attribute__((always_inline, no_instrument_function)) static inline long
progs_ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000L + (b->tv_nsec - a->tv_nsec);
}

#endif
