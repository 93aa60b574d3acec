/* SPDX-License-Identifier: MIT */
/* The run's writer: one scope-writer for every process of a scope-run, working while the program
 * runs. */
#define _GNU_SOURCE
#include "run_writer.h"

#include "writer_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int socket_address(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a->sun_path)
		return -1;
	strcpy(a->sun_path, path);
	return 0;
}

/* The writer's environment: scope-run's own, with nothing that would make
 * the library record it, and its C library tunables (writer_tunables.h). */
static char **writer_env(void)
{
	static char tunables[4096];
	const char *had = NULL, *t;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + 3, sizeof *env)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (is_tunables(environ[i]))
			had = environ[i];
		else if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
			 strncmp(environ[i], "SCOPE_OFF=", 10) != 0)
			env[k++] = environ[i];
	env[k++] = "SCOPE_OFF=1";
	if ((t = writer_tunables(had, tunables, sizeof tunables)))
		env[k++] = (char *)t;
	return env;
}

static int spawn(struct run_writer *w, int fd, int losses, const char *bindir, int at_exit)
{
	char writer[PATH_MAX + 16], fdarg[16], lossarg[16];
	char *argv[] = {writer,	       "--run-fd", fdarg,
			"--losses-fd", lossarg,	   at_exit ? "--at-exit" : NULL,
			NULL};
	char **env = writer_env();
	posix_spawn_file_actions_t fa;
	int rc;

	/* The writer the user names, as the library would run it; else ours. */
	if (getenv("SCOPE_WRITER") && *getenv("SCOPE_WRITER"))
		snprintf(writer, sizeof writer, "%s", getenv("SCOPE_WRITER"));
	else
		snprintf(writer, sizeof writer, "%s/scope-writer", bindir);
	snprintf(fdarg, sizeof fdarg, "%d", fd);
	snprintf(lossarg, sizeof lossarg, "%d", losses);
	if (!env || posix_spawn_file_actions_init(&fa) != 0) {
		free(env);
		return -1;
	}
	/* dup2 onto itself clears close-on-exec in the writer alone */
	rc = posix_spawn_file_actions_adddup2(&fa, fd, fd);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, losses, losses);
	if (rc == 0)
		rc = posix_spawn(&w->pid, writer, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	return rc == 0 ? 0 : -1;
}

void run_writer_start(struct run_writer *w, const char *arenas, const char *bindir, int at_exit)
{
	struct sockaddr_un a;
	int fd, losses[2];

	memset(w, 0, sizeof *w);
	w->parts = -1;
	w->losses_fd = -1;
	snprintf(w->socket, sizeof w->socket, "%s/writer.sock", arenas);
	if (socket_address(w->socket, &a) != 0 ||
	    (fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		goto none;
	if (pipe2(losses, O_CLOEXEC) != 0) {
		close(fd);
		goto none;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    spawn(w, fd, losses[1], bindir, at_exit) != 0) {
		close(fd);
		close(losses[0]);
		close(losses[1]);
		unlink(w->socket);
		goto none;
	}
	/* Only the writer holds it now: if the writer dies, the processes
	 * find the socket refusing and start writers of their own. */
	close(fd);
	close(losses[1]);
	w->losses_fd = losses[0];
	return;
none:
	w->pid = 0;
	w->socket[0] = '\0';
}

/* The writer's line, once it has ended: "PARTS LOST". Read once, not to
 * the end of the pipe: a process the writer left to evict its arenas
 * (writer/evict.h) may hold its end a while longer. */
static void read_losses(struct run_writer *w)
{
	char line[64];
	unsigned long long parts, lost;
	ssize_t n;

	fcntl(w->losses_fd, F_SETFL, O_NONBLOCK);
	n = read(w->losses_fd, line, sizeof line - 1);
	close(w->losses_fd);
	w->losses_fd = -1;
	if (n <= 0)
		return;
	line[n] = '\0';
	if (WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0 &&
	    sscanf(line, "%llu %llu", &parts, &lost) == 2 && parts < (1ull << 62)) {
		w->parts = (long long)parts;
		w->lost = lost;
	}
}

/* CPU seconds the process pid has used so far, all its threads, those
 * that ended too. Its CPU-time clock counts in ns: /proc's utime and stime
 * count in ticks of 10 ms, which a short run's writer reads as 0. */
static double cpu_of(pid_t pid)
{
	clockid_t clock;
	struct timespec ts;

	if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void run_writer_finish(struct run_writer *w)
{
	struct sockaddr_un a;
	struct rusage ru;
	int fd;

	if (!w->pid)
		return;
	w->cpu_during = cpu_of(w->pid);
	if (socket_address(w->socket, &a) == 0 &&
	    (fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		/* the empty message: the run has ended (fails if the writer is gone) */
		if (sendto(fd, "", 0, MSG_NOSIGNAL, (struct sockaddr *)&a, sizeof a) != 0)
			kill(w->pid, SIGTERM);
		close(fd);
	}
	while (wait4(w->pid, &w->status, 0, &ru) < 0 && errno == EINTR)
		;
	w->cpu_after = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6 -
		       w->cpu_during;
	if (w->cpu_after < 0)
		w->cpu_after = 0;
	read_losses(w);
	unlink(w->socket);
}

int run_writer_alone(const struct run_writer *w)
{
	char path[64], buf[4096], *p, *end;
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1; /* cannot tell: do not wait for the writer */
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	for (p = buf;; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			return 1;
		if (pid != w->pid)
			return 0;
	}
}
