/* SPDX-License-Identifier: MIT */
/* Starting a program under libscope_preload.so: finding it, the library and the writer, and the
 * environment the library reads. */
#ifndef SCOPE_TOOLS_LAUNCH_H
#define SCOPE_TOOLS_LAUNCH_H

#include "gather.h"

#include <limits.h>
#include <stddef.h>

/* Where scope's pieces are: BINDIR, the library in BINDIR/../lib (or
 * SCOPE_PRELOAD_LIB), the writer beside the tool. */
struct launch_paths {
	char bindir[PATH_MAX];
	char lib[PATH_MAX + 64];
	char writer[PATH_MAX + 64];
};

/* Fills p from where the calling tool lives. Returns 0, or -1 after one
 * line prefixed with tool saying the library is missing. */
int launch_locate(struct launch_paths *p, const char *tool);

/* PROGRAM as execvp would find it, into out. Returns 0, or -1 when there
 * is no such executable. */
int launch_find_program(const char *name, char *out, size_t cap);

/* Why the program at path cannot be profiled by preloading (static, or
 * setuid for someone else), or NULL when it can. */
const char *launch_cannot_preload(const char *path);

/* path made absolute against the working directory, into out. */
void launch_absolute(char *out, size_t cap, const char *path);

/*
 * In the child, before exec: the environment that makes the program record
 * into the run's folders d and hand its arenas to the run's writer w (when
 * it has one), writing output at the end. Libraries the user preloads stay
 * first in LD_PRELOAD. Returns 0, or -1 without memory.
 */
int launch_env(const struct launch_paths *p, const char *output, const struct run_dirs *d,
	       const struct run_writer *w);

#endif
