/* SPDX-License-Identifier: MIT */
/* The machine a run ran on: CPU, cores, memory, kernel, C library, thread-count variables. */
#ifndef SCOPE_LIB_MACHINE_H
#define SCOPE_LIB_MACHINE_H

#include <stddef.h>
#include <stdint.h>

struct machine {
	char host[256];
	char cpu_model[256]; /* "" when /proc/cpuinfo names none */
	double cpu_mhz;	     /* 0 when not known */
	long logical_cores, physical_cores;
	int64_t memory_bytes;
	char kernel[256];   /* "" when uname fails */
	char platform[700]; /* "Linux x86_64, Debian GNU/Linux 13 (trixie)" */
	char libc[64];
};

/* Fills m for the machine this runs on; what cannot be read stays "" or 0. */
void machine_read(struct machine *m);

/* The thread-count variables of the common runtimes (OMP_NUM_THREADS, ...):
 * they decide how many cores a run used, so figures are not comparable
 * without them. */
extern const char *const machine_thread_vars[];
extern const size_t machine_nthread_vars;

#endif
