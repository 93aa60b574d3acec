/* SPDX-License-Identifier: MIT */
/* The stack of the thread a fatal signal hit, unwound from the arena's crash snapshot. */
#ifndef SCOPE_WRITER_UNWIND_H
#define SCOPE_WRITER_UNWIND_H

#include "writer.h"

#include <stddef.h>
#include <stdint.h>

/* The most frames named in a profile's crash stack. */
#define UNWIND_MAX_FRAMES 256

/*
 * Unwinds the registers and stack the library saved when a fatal signal
 * hit (see the arena's crash area) through the modules mapped at the end.
 * Fills pcs innermost first, up to max: the interrupted instruction, then
 * return addresses. Returns how many: 0 when nothing was saved (another
 * architecture than x86-64), 1 when only the registers could be used.
 */
size_t unwind_crash(const struct arena *a, const struct module *mods, size_t nmods, uint64_t *pcs,
		    size_t max);

#endif
