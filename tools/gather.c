/* SPDX-License-Identifier: MIT */
/* After the run: recover killed processes' arenas, merge the parts into the output. */
#define _GNU_SOURCE
#include "gather.h"

#include "arena_dir.h"
#include "job.h"
#include "merge.h"

#include <scope/arena.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *gather_tool = "scope-run";

int run_dirs_make(struct run_dirs *d, const char *output, const char *bindir, int at_exit)
{
	char dir[PATH_MAX], base[PATH_MAX];
	const char *tmp = getenv("SCOPE_TMPDIR"), *arenas;

	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	arenas = arena_dir_choose(getenv("SCOPE_ARENA_DIR"), getenv("SCOPE_TMPDIR"), tmp, at_exit);
	d->stores_apart = strcmp(arenas, tmp) != 0;
	snprintf(d->bindir, sizeof d->bindir, "%s", bindir);
	snprintf(dir, sizeof dir, "%s", output);
	snprintf(base, sizeof base, "%s", output);
	snprintf(d->parts, sizeof d->parts, "%s/.%s.parts-XXXXXX", dirname(dir), basename(base));
	if (!mkdtemp(d->parts)) {
		/* The output's folder is not writable: the parts wait in the
		 * temporary folder, and the final write says what is wrong. */
		snprintf(d->parts, sizeof d->parts, "%s/scope-parts-XXXXXX", tmp);
		if (!mkdtemp(d->parts)) {
			fprintf(stderr, "%s: cannot make a folder for the profile's parts: %s\n",
				gather_tool, strerror(errno));
			return -1;
		}
	}
	snprintf(d->arenas, sizeof d->arenas, "%s/scope-run-XXXXXX", arenas);
	if (!mkdtemp(d->arenas)) {
		fprintf(stderr,
			"%s: cannot make a folder in %s for recording: %s (set "
			"SCOPE_ARENA_DIR)\n",
			gather_tool, arenas, strerror(errno));
		rmdir(d->parts);
		return -1;
	}
	/* Orphans of the program become scope-run's children, so it can wait
	 * for a daemon the program started. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return 0;
}

void run_wait_all(pid_t child, struct run_writer *w, int *status, struct rusage *ru)
{
	int done = 0;

	/* The writer waits for the end of the run: it is the one child not
	 * waited for, once the program and all it left behind have ended. */
	while (!(done && w->pid && run_writer_alone(w))) {
		struct rusage r;
		int st;
		pid_t pid = wait4(-1, &st, 0, &r);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: nobody is left */
		}
		if (pid == child) {
			*status = st;
			*ru = r;
			done = 1;
		} else if (pid == w->pid) {
			w->status = st; /* died before the run ended */
			w->pid = 0;
		}
	}
}

/* What an arena still needs: nothing (published, or its writer said why
 * not), writing as it is (it stopped, but the run's writer was gone before
 * it wrote it), or recovering (it never stopped: killed). */
enum arena_need { ARENA_DONE, ARENA_WRITE, ARENA_RECOVER };

static enum arena_need arena_need(const char *arena, pid_t *pid)
{
	struct scope_arena_header h;
	int fd = open(arena, O_RDONLY | O_CLOEXEC);
	int ok = fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
		 memcmp(h.magic, SCOPE_ARENA_MAGIC, sizeof h.magic) == 0 && !h.published;
	enum arena_need need = ARENA_DONE;

	if (fd >= 0)
		close(fd);
	if (ok && h.state != SCOPE_ARENA_STOPPED)
		need = ARENA_RECOVER;
	else if (ok && !h.reported)
		need = ARENA_WRITE;
	*pid = ok ? h.pid : 0;
	return need;
}

/* A process killed by SIGKILL (or one that never reached its exit) left
 * its arena: write what it recorded as a part, marked incomplete. So is
 * one the run's writer did not live to write. */
static void recover(struct run_dirs *d, pid_t child, int status)
{
	char writer[PATH_MAX + 32];
	DIR *dir = opendir(d->arenas);
	struct dirent *e;

	if (!dir)
		return;
	snprintf(writer, sizeof writer, "%s/scope-writer", d->bindir);
	while ((e = readdir(dir)) != NULL) {
		char arena[2 * PATH_MAX], sig[16];
		size_t l = strlen(e->d_name);
		char *argv[] = {writer, "--recover", arena, NULL, NULL, NULL};
		enum arena_need need;
		pid_t pid;
		if (l < 7 || strcmp(e->d_name + l - 6, ".arena") != 0)
			continue;
		snprintf(arena, sizeof arena, "%s/%s", d->arenas, e->d_name);
		if ((need = arena_need(arena, &pid)) == ARENA_DONE)
			continue;
		if (need == ARENA_WRITE) {
			char *plain[] = {writer, arena, NULL};
			fprintf(stderr, "%s: the run's writer did not write %s; writing it now\n",
				gather_tool, e->d_name);
			run_tool(writer, plain);
			continue;
		}
		/* the program itself: scope-run saw what killed it */
		if (pid == child && WIFSIGNALED(status)) {
			char *with_signal[] = {writer, "--recover", "--exit-signal",
					       sig,    arena,	    NULL};
			snprintf(sig, sizeof sig, "%d", WTERMSIG(status));
			memcpy(argv, with_signal, sizeof with_signal);
		}
		fprintf(stderr, "%s: a process did not finish; writing what it recorded (%s)\n",
			gather_tool, e->d_name);
		run_tool(writer, argv);
	}
	closedir(dir);
}

/* The processes of the run whose profile is not among the parts. */
struct missing {
	int n;
	pid_t pid[5]; /* the first ones, named in the message */
};

/*
 * Every process of the run recorded into an arena in d->arenas, and its
 * writer publishes d->parts/PID-START.h5 (see the writer's resolve_output),
 * or a part of several processes named after the first of them, and marks
 * the arena published before it removes it. So an arena left there is a
 * process whose profile is missing, unless it is marked or its part is
 * there: a writer that could not remove the arena (SCOPE_KEEP_ARENA, or a
 * program that gave up the privileges to) wrote it all the same.
 */
static void find_missing(const struct run_dirs *d, struct missing *m)
{
	const char *keep = getenv("SCOPE_KEEP_ARENA");
	DIR *dir = opendir(d->arenas);
	struct dirent *e;

	memset(m, 0, sizeof *m);
	while (dir && (e = readdir(dir)) != NULL) {
		char arena[2 * PATH_MAX], part[2 * PATH_MAX];
		struct scope_arena_header h;
		size_t l = strlen(e->d_name);
		int fd, ok;
		if (l < 7 || strcmp(e->d_name + l - 6, ".arena") != 0)
			continue;
		snprintf(arena, sizeof arena, "%s/%s", d->arenas, e->d_name);
		fd = open(arena, O_RDONLY | O_CLOEXEC);
		ok = fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h &&
		     memcmp(h.magic, SCOPE_ARENA_MAGIC, sizeof h.magic) == 0;
		if (fd >= 0)
			close(fd);
		if (!ok)
			continue; /* a process that never began to record */
		snprintf(part, sizeof part, "%s/%d-%llu.h5", d->parts, (int)h.pid,
			 (unsigned long long)h.start_unix_ns);
		/* published: in its own part, or in one with other processes */
		if (h.published || access(part, F_OK) == 0) {
			if (!(keep && *keep && strcmp(keep, "0") != 0)) {
				char store[sizeof arena + sizeof SCOPE_STORE_SUFFIX];
				if (scope_store_path(&h, arena, store, sizeof store) == 0)
					unlink(store);
				unlink(arena);
			}
			continue;
		}
		if (m->n < (int)(sizeof m->pid / sizeof *m->pid))
			m->pid[m->n] = h.pid;
		m->n++;
	}
	if (dir)
		closedir(dir);
}

/* One line: the output is not written, which processes are missing, where
 * their records and the others' profiles are, and how to finish the job. */
static void say_missing(const struct run_dirs *d, const struct missing *m, int parts,
			const char *output)
{
	char pids[128] = "";
	size_t len = 0;
	int shown = m->n < (int)(sizeof m->pid / sizeof *m->pid)
			    ? m->n
			    : (int)(sizeof m->pid / sizeof *m->pid);

	for (int i = 0; i < shown; i++)
		len += (size_t)snprintf(pids + len, sizeof pids - len, "%s%d", i ? ", " : "",
					(int)m->pid[i]);
	if (m->n > shown)
		snprintf(pids + len, sizeof pids - len, " and %d more", m->n - shown);
	fprintf(stderr,
		"%s: %s was not written: %d of the run's %d processes left no profile "
		"(pid %s; %s kept in %s); the other profiles are kept in %s (to finish: "
		"scope-writer --recover -o %s/PID.h5 ARENA for each arena, then scope-merge "
		"--parts %s -o FILE)\n",
		gather_tool, output, m->n, m->n + parts, pids,
		m->n == 1 ? "its arena is" : "their arenas are", d->arenas, d->parts, d->parts,
		d->parts);
}

int run_gather(struct run_dirs *d, const char *output, pid_t child, int status)
{
	char only[2 * PATH_MAX];
	struct storage st;
	struct merge_request req = {
		.output = output, .parts = d->parts, .st = &st, .who = gather_tool};
	char err[1024];
	struct missing m;
	int n, rc;

	recover(d, child, status);
	n = d->nparts = count_h5(d->parts, "", only, sizeof only);
	find_missing(d, &m);
	rmdir(d->arenas);
	if (m.n > 0) {
		/* With no part at all, each writer has named the arena it kept. */
		if (n > 0)
			say_missing(d, &m, n, output);
		else
			rmdir(d->parts);
		return GATHER_KEPT;
	}
	if (n == 0) {
		rmdir(d->parts);
		return GATHER_NOTHING;
	}
	storage_parse(&st, NULL); /* the default, which always parses */
	if (n == 1 && rename(only, output) == 0)
		rc = 0;
	else
		rc = merge_profiles(&req, err, sizeof err);
	if (rc == 0) {
		rmdir(d->parts);
		return GATHER_PUBLISHED;
	}
	fprintf(stderr, "%s: %s\n", gather_tool, err);
	fprintf(stderr,
		"%s: the profiles of the run's processes are kept in %s "
		"(merge them with: scope-merge --parts %s -o FILE)\n",
		gather_tool, d->parts, d->parts);
	return GATHER_KEPT;
}
