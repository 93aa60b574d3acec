/* SPDX-License-Identifier: MIT */
/* A plain run's writer: started by the run's first process, joined by the processes it starts. */
#define _GNU_SOURCE
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Under scope-run the run has a writer already. Without it, the run's
 * first process starts one when it starts recording, as scope-run would:
 * every process it starts hands its arena over at its end instead of
 * starting a writer of its own, and when the first process ends, the
 * writer joins their profiles to the output. The writer leaves its starter
 * at once (the program never sees it among its children), and holds a
 * lock for as long as it lives, which the first process waits on at its
 * end, so that the profile is complete when the program has exited.
 */

static char folder[SCOPE_PATH_BYTES], lock[SCOPE_PATH_BYTES];
static int owner; /* this process started the run's writer */

static SCOPE_NOINST int make_socket(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof a.sun_path)
		return -1;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		scope_fd_close(fd);
		return -1;
	}
	return fd;
}

/* The writer, detached: it returns once the writer holds the lock. */
static SCOPE_NOINST int spawn(struct scope_process *p, int fd, char **envp)
{
	char sock_fd[16], watch[16];
	const char *when = scope_getenv("SCOPE_WRITE");
	char *argv[] = {p->cfg.writer, "--run-fd", sock_fd, "--detach", lock, "--merge",
			p->cfg.output, "--watch",  watch,   NULL,	NULL};
	pid_t pid;
	int status;

	/* SCOPE_WRITE=exit, as scope-run --write-at-exit: the writer takes
	 * no core from the program while it runs. */
	if (when && strcmp(when, "exit") == 0)
		argv[9] = "--at-exit";

	snprintf(sock_fd, sizeof sock_fd, "%d", fd);
	snprintf(watch, sizeof watch, "%d", (int)getpid());
	if (scope_spawn(&pid, p->cfg.writer, argv, envp, fd) != 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static SCOPE_NOINST void forget(void)
{
	char sock[SCOPE_PATH_BYTES + 16];

	snprintf(sock, sizeof sock, "%s/writer.sock", folder);
	unlink(sock);
	unlink(lock);
	rmdir(folder);
}

/*
 * An image the run's first process exec'd (a launcher such as env, sh -c
 * or valgrind that runs the program): the process is still the one that
 * started the writer, and its last image waits for it at the end. Its
 * SCOPE_ROOT, which the first image set, names its own pid.
 */
static SCOPE_NOINST void adopt(const struct scope_process *p)
{
	const char *root = scope_getenv("SCOPE_ROOT"), *slash;
	char *end;
	size_t len;

	if (!root || strtol(root, &end, 10) != (long)getpid() || *end || p->cfg.parts[0] ||
	    !(slash = strrchr(p->cfg.run_writer, '/')))
		return;
	len = (size_t)(slash - p->cfg.run_writer);
	if (len >= sizeof folder || snprintf(lock, sizeof lock, "%.*s/writer.lock", (int)len,
					     p->cfg.run_writer) >= (int)sizeof lock)
		return;
	memcpy(folder, p->cfg.run_writer, len);
	folder[len] = '\0';
	owner = 1;
}

void scope_run_start(struct scope_process *p)
{
	char sock[SCOPE_PATH_BYTES + 16];
	int fd = -1, lfd;

	if (p->cfg.role == SCOPE_ROLE_ROOT && p->cfg.run_writer[0] && p->hdr->rank < 0)
		adopt(p);
	/* scope-run's, a job's ranks (lib/ranks.c), and an image whose
	 * process started one already, have theirs */
	if (p->cfg.role != SCOPE_ROLE_ROOT || p->cfg.run_writer[0] || p->hdr->rank >= 0 ||
	    !environ || !scope_writer_env())
		return;
	if (snprintf(folder, sizeof folder, "%s/scope-run-XXXXXX", p->cfg.tmpdir) >=
		    (int)sizeof folder ||
	    !mkdtemp(folder))
		return;
	snprintf(sock, sizeof sock, "%s/writer.sock", folder);
	snprintf(lock, sizeof lock, "%s/writer.lock", folder);
	if ((lfd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0600)) >= 0)
		scope_fd_close(lfd);
	if (lfd < 0 || (fd = make_socket(sock)) < 0 || spawn(p, fd, scope_writer_env()) != 0) {
		if (fd >= 0)
			scope_fd_close(fd);
		forget();
		return; /* each process starts its own writer, as before */
	}
	scope_fd_close(fd); /* the writer's alone: gone with it */
	owner = 1;
	snprintf(p->cfg.run_writer, sizeof p->cfg.run_writer, "%s", sock);
	setenv("SCOPE_RUN_WRITER", sock, 1);
	scope_env_capture(&p->cfg); /* an exec with an environment of its own keeps it */
}

int scope_run_end(struct scope_process *p)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd, lfd;

	if (!owner || strlen(p->cfg.run_writer) >= sizeof a.sun_path)
		return -1;
	owner = 0;
	strcpy(a.sun_path, p->cfg.run_writer);
	/* the empty message ends the run (nobody to take it: the writer is gone) */
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		sendto(fd, "", 0, MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof a);
		scope_fd_close(fd);
	}
	/* the writer holds the lock until it has written and merged everything */
	if ((lfd = open(lock, O_RDWR | O_CLOEXEC)) >= 0) {
		while (flock(lfd, LOCK_SH) != 0 && errno == EINTR)
			;
		scope_fd_close(lfd);
	}
	forget();
	return 0;
}
