/* SPDX-License-Identifier: MIT */
/* Atomic publication of a file: a temporary sibling, fsync, rename, fsync of the folder. */
#ifndef SCOPE_LIB_PUBLISH_H
#define SCOPE_LIB_PUBLISH_H

#include <stddef.h>

/*
 * Writes final through a temporary sibling: write fills the sibling, which
 * is synced and renamed over final, and the folder synced, so final holds
 * either what it held before or the complete new file. mode: the new file's
 * permission bits, or -1 for 0666 less the umask. tmp_slot, when not NULL,
 * holds the sibling's path while it exists (a crash handler removes it).
 * Returns 0, or -1 with the reason in why; write may put its own reason
 * there (pass it the same buffer) before returning nonzero.
 */
int publish_atomic(const char *final, int (*write)(const char *tmp, void *ctx), void *ctx, int mode,
		   char *volatile *tmp_slot, char *why, size_t cap);

/* Not synced to disk: a part of a run, which the run's merge reads back at
 * once and publishes durably. */
#define PUBLISH_NO_SYNC 1u

/* publish_atomic, with flags (PUBLISH_*). */
int publish_file(const char *final, int (*write)(const char *tmp, void *ctx), void *ctx, int mode,
		 char *volatile *tmp_slot, char *why, size_t cap, unsigned flags);

#endif
