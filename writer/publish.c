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

static int fail(const struct run_info *run, const char *final, const char *tmp, const char *what)
{
	fprintf(stderr,
		"scope-writer: cannot write %s: %s; the recorded data is kept in %s (write it "
		"with: scope-writer%s -o FILE %s)\n",
		final, what, run->arena_path, run->recover ? " --recover" : "", run->arena_path);
	if (tmp)
		unlink(tmp);
	return -1;
}

int publish(const char *final, const struct run_info *run, struct profile *p,
	    const struct storage *st)
{
	char tmp[4096], dir[4096];
	mode_t mask;
	int fd;

	if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", final) >= (int)sizeof tmp)
		return fail(run, final, NULL, "path too long");
	fd = mkstemp(tmp);
	if (fd < 0)
		return fail(run, final, NULL, strerror(errno));
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	close(fd);
	errno = 0;
	if (profile_write(tmp, run, p, st) != 0)
		return fail(run, final, tmp,
			    errno ? strerror(errno) : "HDF5 could not write the file");
	phase("close");
	if (fsync_path(tmp, O_RDONLY) != 0 || rename(tmp, final) != 0)
		return fail(run, final, tmp, strerror(errno));
	snprintf(dir, sizeof dir, "%s", final);
	fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY);
	phase("fsync");
	return 0;
}
