/* SPDX-License-Identifier: MIT */
/* Chooses the hooks' clock once, at start-up. */
#include "clock.h"

#include <scope/arena.h>

int scope_clock_is_tsc;

#if defined(__x86_64__)
#include <cpuid.h>

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every
 * power state, so ticks convert to time with one factor. */
static int tsc_is_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
}
#endif

int scope_clock_init(void)
{
#if defined(__x86_64__)
	scope_clock_is_tsc = tsc_is_invariant();
#elif defined(__aarch64__)
	scope_clock_is_tsc = 1; /* the generic timer is constant-rate by definition */
#endif
	return scope_clock_is_tsc ? SCOPE_CLOCK_TSC : SCOPE_CLOCK_MONOTONIC;
}

__attribute__((no_instrument_function)) uint64_t scope_mono_ns_cold(void)
{
	return scope_mono_ns();
}
