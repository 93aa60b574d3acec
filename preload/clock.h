/* SPDX-License-Identifier: MIT */
/* The clock the hooks read: the TSC where it is invariant, else CLOCK_MONOTONIC. */
#ifndef SCOPE_PRELOAD_CLOCK_H
#define SCOPE_PRELOAD_CLOCK_H

#include <stdint.h>
#include <time.h>

extern int scope_clock_is_tsc;

static inline uint64_t scope_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Out of line, so the hooks' fast path needs no stack frame for it. */
uint64_t scope_mono_ns_cold(void) __attribute__((noinline, cold, visibility("hidden")));

/* The counter, where scope_clock_is_tsc says it is the clock. */
static inline uint64_t scope_tsc(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return scope_mono_ns_cold(); /* never the clock here */
#endif
}

static inline uint64_t scope_now(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	if (__builtin_expect(scope_clock_is_tsc, 1))
		return scope_tsc();
#endif
	return scope_mono_ns_cold();
}

/* Chooses the clock; returns enum scope_clock_source. */
int scope_clock_init(void);

#endif
