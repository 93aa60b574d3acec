/* SPDX-License-Identifier: MIT */
/* Atomic publication: temporary sibling, fsync, rename, fsync of the folder. */
#define _GNU_SOURCE
#include "profile_out.h"

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

/*
 * Writes final through a temporary sibling: the write callback fills the
 * sibling, which is synced and renamed over final, and the folder synced,
 * so final holds either what it held before or the complete new file.
 * Returns 0, or -1 with the reason in why.
 */
int publish_atomic(const char *final, int (*write)(const char *tmp, void *ctx), void *ctx,
		   char *why, size_t cap)
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
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	close(fd);
	errno = 0;
	if (write(tmp, ctx) != 0) {
		snprintf(why, cap, "%s", errno ? strerror(errno) : "HDF5 could not write the file");
		unlink(tmp);
		return -1;
	}
	phase("close");
	if (fsync_path(tmp, O_RDONLY) != 0 || rename(tmp, final) != 0) {
		snprintf(why, cap, "%s", strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(dir, sizeof dir, "%s", final);
	fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	phase("fsync");
	return 0;
}
