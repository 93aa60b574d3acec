/* SPDX-License-Identifier: MIT */
/* Atomic publication: temporary sibling, fsync, rename, fsync of the folder. */
#define _GNU_SOURCE
#include "publish.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fsync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC), rc;
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int discard(const char *tmp, char *volatile *tmp_slot)
{
	unlink(tmp);
	if (tmp_slot)
		*tmp_slot = NULL;
	return -1;
}

int publish_atomic(const char *final, int (*write)(const char *tmp, void *ctx), void *ctx, int mode,
		   char *volatile *tmp_slot, char *why, size_t cap)
{
	return publish_file(final, write, ctx, mode, tmp_slot, why, cap, 0);
}

int publish_file(const char *final, int (*write)(const char *tmp, void *ctx), void *ctx, int mode,
		 char *volatile *tmp_slot, char *why, size_t cap, unsigned flags)
{
	char tmp[4096], dir[4096];
	mode_t mask;
	int fd;

	if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", final) >= (int)sizeof tmp) {
		snprintf(why, cap, "path too long");
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	if (mode < 0) {
		mask = umask(0);
		umask(mask);
		mode = 0666 & ~(int)mask;
	}
	fchmod(fd, (mode_t)mode);
	close(fd);
	if (tmp_slot)
		*tmp_slot = tmp;
	errno = 0;
	why[0] = '\0';
	if (write(tmp, ctx) != 0) {
		/* the callback may have said why in this same buffer */
		if (!why[0])
			snprintf(why, cap, "%s",
				 errno ? strerror(errno) : "HDF5 could not write the file");
		return discard(tmp, tmp_slot);
	}
	if ((!(flags & PUBLISH_NO_SYNC) && fsync_path(tmp, O_RDONLY) != 0) ||
	    rename(tmp, final) != 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return discard(tmp, tmp_slot);
	}
	if (tmp_slot)
		*tmp_slot = NULL;
	if (flags & PUBLISH_NO_SYNC)
		return 0;
	snprintf(dir, sizeof dir, "%s", final);
	fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	return 0;
}
