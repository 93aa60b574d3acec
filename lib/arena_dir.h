/* SPDX-License-Identifier: MIT */
/* Which folder a process's recording arena goes to. */
#ifndef SCOPE_LIB_ARENA_DIR_H
#define SCOPE_LIB_ARENA_DIR_H

#include <stdint.h>

/* The memory file system an arena prefers, and the room it must have. */
#define ARENA_MEMORY_DIR "/dev/shm"
#define ARENA_MEMORY_MIN (UINT64_C(1) << 30)

/*
 * The arena's folder: named (SCOPE_ARENA_DIR), else the temporary folder
 * when one was named (SCOPE_TMPDIR: records and stores together, as
 * asked), else, while a writer drains the arena as the program runs,
 * ARENA_MEMORY_DIR when it is a writable folder with ARENA_MEMORY_MIN
 * free: the arena stays small there, and its pages are never written
 * back, which on a file system on disk costs the program a fault on the
 * next write of each page. Else tmp, where the store goes too.
 */
const char *arena_dir_choose(const char *named, const char *tmpdir_named, const char *tmp,
			     int at_exit);

#endif
