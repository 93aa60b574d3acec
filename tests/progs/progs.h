/* SPDX-License-Identifier: MIT */
/* Shared by the test programs: functions the compiler may neither inline nor clone. */
#ifndef SCOPE_TEST_PROGS_H
#define SCOPE_TEST_PROGS_H

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

#endif
