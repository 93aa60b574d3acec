/* SPDX-License-Identifier: MIT */
/* Record-time filters: which calls are stored as records, and exact sums of the others. */
#ifndef SCOPE_PRELOAD_FILTER_H
#define SCOPE_PRELOAD_FILTER_H

#include "state.h"

/* Nonzero while a filter applies: the hooks' slow branches then go
 * through filter.c. */
extern int scope_filtering SCOPE_HIDDEN;

/* Reads SCOPE_ONLY, SCOPE_NOT, SCOPE_NOT_SUBTREE, SCOPE_DEPTH and
 * SCOPE_MIN_DURATION; returns 0, or -1 after one line saying which one
 * is wrong (the process is then not profiled). */
int scope_filter_init(void) SCOPE_HIDDEN;
/* Recording has started: the filters apply from now. */
void scope_filter_start(void) SCOPE_HIDDEN;
/* The hooks' slow branches while filtering: frame is the caller's frame,
 * now the clock the hook read; taken, the slot the enter hook took (or
 * NULL), is given back unless the call is stored in it. Enter is called
 * only on a thread whose limit is SCOPE_LIMIT_FILTER. */
void scope_filter_enter(void *fn, struct scope_rec *taken, uintptr_t frame,
			uint64_t now) SCOPE_HIDDEN;
void scope_filter_exit(void *fn, uint64_t now, uintptr_t frame) SCOPE_HIDDEN;
/* Whether the calling thread is inside a call of the program (stored or
 * not) that is not a wrapped call (MPI's, the C library's): where a C
 * library call is a region while filtering. */
int scope_filter_in_call(void) SCOPE_HIDDEN;
/* The calling thread ends: its sums go into the arena. */
void scope_filter_thread_end(struct scope_thread *t) SCOPE_HIDDEN;
/* The process stops (on the stopping thread, before it stops recording):
 * every thread's sums go into the arena. */
void scope_filter_stop(void) SCOPE_HIDDEN;
/* A forked child: the sums of the parent's threads are the parent's. */
void scope_filter_forked(void) SCOPE_HIDDEN;

/* sample.c: SCOPE_SAMPLE, read with the filters (0, or -1 after one line);
 * the timers start with recording, and with each thread; a thread's goes
 * when it ends. */
int scope_sample_init(void) SCOPE_HIDDEN;
void scope_sample_start(void) SCOPE_HIDDEN;
void scope_sample_thread(void) SCOPE_HIDDEN;
void scope_sample_thread_end(void) SCOPE_HIDDEN;
/* The program's sigaction of the samples' signal, kept for it (signals.c):
 * returns 1 when sig is that signal and sampling is on, else 0. */
struct sigaction;
int scope_sample_sigaction(int sig, const struct sigaction *act,
			   struct sigaction *old) SCOPE_HIDDEN;

/* elfsyms.c: the name of the function at addr as its module's symbol
 * table has it (mangled), NULL when none covers it. */
const char *scope_elfsyms_name(uintptr_t addr) SCOPE_HIDDEN;
/* Reads the symbol tables of every module loaded now. */
void scope_elfsyms_load_all(void) SCOPE_HIDDEN;

#endif
