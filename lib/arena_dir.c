/* SPDX-License-Identifier: MIT */
#include "arena_dir.h"

#include <stdint.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int memory_dir_usable(void)
{
	struct statvfs vs;

	return access(ARENA_MEMORY_DIR, W_OK | X_OK) == 0 && statvfs(ARENA_MEMORY_DIR, &vs) == 0 &&
	       (uint64_t)vs.f_bavail * vs.f_frsize >= ARENA_MEMORY_MIN;
}

const char *arena_dir_choose(const char *named, const char *tmpdir_named, const char *tmp,
			     int at_exit)
{
	if (named && *named)
		return named;
	if (tmpdir_named && *tmpdir_named)
		return tmpdir_named;
	if (!at_exit && memory_dir_usable())
		return ARENA_MEMORY_DIR;
	return tmp;
}
