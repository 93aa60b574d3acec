/* SPDX-License-Identifier: MIT */
/* A run's working directory: a fresh copy of the stage, what the run wrote there, and its
 * removal. */
#define _GNU_SOURCE
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int say(char *err, size_t cap, const char *what, const char *path)
{
	snprintf(err, cap, "%s %s: %s", what, path, strerror(errno));
	return -1;
}

static int copy_file(int from_dir, int to_dir, const char *name, mode_t mode, char *err, size_t cap,
		     const char *path)
{
	int in = openat(from_dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int out = in < 0 ? -1 : openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	char buf[1 << 16];
	ssize_t n = 0;
	int rc = 0;

	if (in < 0 || out < 0) {
		rc = say(err, cap, "cannot copy", path);
		goto out;
	}
	/* copy_file_range shares extents where the file system can */
	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0)) > 0)
		;
	if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP))
		while ((n = read(in, buf, sizeof buf)) > 0)
			if (write(out, buf, (size_t)n) != n) {
				n = -1;
				break;
			}
	if (n < 0)
		rc = say(err, cap, "cannot copy", path);
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0 && rc == 0)
		rc = say(err, cap, "cannot copy", path);
	return rc;
}

/* Copies what the folder from holds into the folder to; path names from in messages. */
static int copy_dir(int from, int to, const char *path, char *err, size_t cap)
{
	int fd = dup(from);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return say(err, cap, "cannot read", path);
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char sub[PATH_MAX], link[PATH_MAX];
		struct stat st;
		ssize_t n;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (fstatat(from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = say(err, cap, "cannot read", sub);
		} else if (S_ISDIR(st.st_mode)) {
			int a, b;
			if (mkdirat(to, e->d_name, 0700) != 0)
				rc = say(err, cap, "cannot copy", sub);
			else if ((a = openat(from, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
				 0)
				rc = say(err, cap, "cannot read", sub);
			else if ((b = openat(to, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
				 0) {
				rc = say(err, cap, "cannot copy", sub);
				close(a);
			} else {
				rc = copy_dir(a, b, sub, err, cap);
				/* its own mode last: a read-only folder is filled first */
				if (rc == 0 && fchmod(b, st.st_mode & 07777) != 0)
					rc = say(err, cap, "cannot copy", sub);
				close(a);
				close(b);
			}
		} else if (S_ISREG(st.st_mode)) {
			rc = copy_file(from, to, e->d_name, st.st_mode & 07777, err, cap, sub);
		} else if (S_ISLNK(st.st_mode)) {
			n = readlinkat(from, e->d_name, link, sizeof link - 1);
			if (n < 0 || (link[n] = '\0', symlinkat(link, to, e->d_name) != 0))
				rc = say(err, cap, "cannot copy", sub);
		}
		/* sockets, FIFOs and devices are not a run's input: left out */
	}
	closedir(d);
	return rc;
}

int stage_copy(const char *stage, const char *dir, char *err, size_t cap)
{
	int from = -1, to = -1, rc;

	if (mkdir(dir, 0700) != 0)
		return say(err, cap, "cannot make", dir);
	if (!stage)
		return 0;
	if ((from = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return say(err, cap, "cannot read", stage);
	if ((to = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		close(from);
		return say(err, cap, "cannot open", dir);
	}
	rc = copy_dir(from, to, stage, err, cap);
	close(from);
	close(to);
	return rc;
}

static int64_t ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

static int by_ino(const void *a, const void *b)
{
	const struct stage_file *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The regular files under dirfd, each to seen (snap's list, sorted later) or,
 * with check, summed into *bytes when snap does not hold it unchanged. */
static int walk(int dirfd, struct stage_snap *snap, int check, uint64_t *bytes)
{
	int fd = dup(dirfd), rc = 0;
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct stat st;
		int sub;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub >= 0) {
				rc = walk(sub, snap, check, bytes);
				close(sub);
			}
		} else if (S_ISREG(st.st_mode) && check) {
			struct stage_file key = {(uint64_t)st.st_ino, ctime_ns(&st)}, *at;
			at = snap->n ? bsearch(&key, snap->v, snap->n, sizeof key, by_ino) : NULL;
			if (!at || at->ctime_ns != key.ctime_ns)
				*bytes += (uint64_t)st.st_size;
		} else if (S_ISREG(st.st_mode)) {
			struct stage_file *grown = realloc(snap->v, (snap->n + 1) * sizeof *grown);
			if (!grown) {
				rc = -1;
				break;
			}
			snap->v = grown;
			snap->v[snap->n++] =
				(struct stage_file){(uint64_t)st.st_ino, ctime_ns(&st)};
		}
	}
	closedir(d);
	return rc;
}

/*
 * What the stage put there, by inode and change time: a file the run
 * writes is a new inode or one whose change time moved. Timestamps alone
 * cannot tell (a copy made just before the run may be stamped later than
 * any clock read before the run starts), identities can.
 */
int stage_snapshot(const char *dir, struct stage_snap *snap)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	memset(snap, 0, sizeof *snap);
	if (fd < 0)
		return -1;
	rc = walk(fd, snap, 0, NULL);
	close(fd);
	if (snap->n)
		qsort(snap->v, snap->n, sizeof *snap->v, by_ino);
	return rc;
}

void stage_snapshot_free(struct stage_snap *snap)
{
	free(snap->v);
	memset(snap, 0, sizeof *snap);
}

uint64_t stage_written(const char *dir, const struct stage_snap *snap)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t bytes = 0;

	if (fd < 0)
		return 0;
	walk(fd, (struct stage_snap *)snap, 1, &bytes);
	close(fd);
	return bytes;
}

/* Empties the folder dirfd (path in messages); a run may have left folders
 * without write permission, which are given it back first. */
static int empty_dir(int dirfd, const char *path, char *err, size_t cap)
{
	int fd = dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return say(err, cap, "cannot read", path);
	}
	while ((e = readdir(d)) != NULL) {
		char sub[PATH_MAX];
		struct stat st;
		int fd2;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode)) {
			fd2 = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd2 < 0 || fchmod(fd2, 0700) != 0) {
				if (rc == 0)
					rc = say(err, cap, "cannot remove", sub);
			} else if (empty_dir(fd2, sub, err, cap) != 0) {
				rc = -1;
			}
			if (fd2 >= 0)
				close(fd2);
			if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) != 0 && rc == 0)
				rc = say(err, cap, "cannot remove", sub);
		} else if (unlinkat(dirfd, e->d_name, 0) != 0 && rc == 0) {
			rc = say(err, cap, "cannot remove", sub);
		}
	}
	closedir(d);
	return rc;
}

int stage_remove(const char *dir, char *err, size_t cap)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	int rc;

	if (fd < 0)
		return errno == ENOENT ? 0 : say(err, cap, "cannot remove", dir);
	fchmod(fd, 0700);
	rc = empty_dir(fd, dir, err, cap);
	close(fd);
	if (rc == 0 && rmdir(dir) != 0)
		rc = say(err, cap, "cannot remove", dir);
	return rc;
}
