/* SPDX-License-Identifier: MIT */
/* The exit path: stop recording, capture the module map, run scope-writer and wait. */
#define _GNU_SOURCE
#include "clock.h"
#include "clock_pair.h"
#include "filter.h"
#include "state.h"
#include "writer_tunables.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *writer_argv[6];
static char writer_fd[16];

/* The store the run's writer copied chunks to, which goes with the arena. */
static SCOPE_NOINST void unlink_store(const struct scope_process *p)
{
	char store[SCOPE_PATH_BYTES + sizeof SCOPE_STORE_SUFFIX];

	if (scope_store_path(p->hdr, p->arena_path, store, sizeof store) == 0)
		unlink(store);
}

/* The writer gets the program's environment without LD_PRELOAD, and with
 * SCOPE_OFF, so that nothing records it, however the library is loaded.
 * Built at start-up: the exit path allocates nothing. */
static char **writer_envp;

char **scope_writer_env(void)
{
	return writer_envp;
}

static SCOPE_NOINST int for_writer(const struct scope_config *cfg, const char *entry)
{
	return strncmp(entry, "LD_PRELOAD=", 11) != 0 && strncmp(entry, "SCOPE_OFF=", 10) != 0 &&
	       !is_tunables(entry) &&
	       !(cfg->chunk_size_bad && strncmp(entry, "SCOPE_CHUNK_SIZE=", 17) == 0);
}

int scope_finish_prepare(struct scope_process *p)
{
	static char off[] = "SCOPE_OFF=1", tunables[4096];
	const char *had = NULL, *t;
	size_t n = 0, k = 0;

	if (!p->cfg.writer[0] || access(p->cfg.writer, X_OK) != 0) {
		scope_log("cannot find scope-writer (looked for %s); this run is not profiled "
			  "(set SCOPE_WRITER to its path)",
			  p->cfg.writer[0] ? p->cfg.writer : "it beside libscope_preload.so");
		goto fail;
	}
	while (environ && environ[n])
		n++;
	free(writer_envp);
	writer_envp = calloc(n + 3, sizeof *writer_envp);
	if (!writer_envp)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (for_writer(&p->cfg, environ[i]))
			writer_envp[k++] = environ[i];
		else if (is_tunables(environ[i]))
			had = environ[i];
	writer_envp[k++] = off;
	if ((t = writer_tunables(had, tunables, sizeof tunables)))
		writer_envp[k] = (char *)t;
	/* The arena is handed over open: a process that gave up its user id
	 * since it made the file can no longer open it by name. */
	snprintf(writer_fd, sizeof writer_fd, "%d", p->fd);
	writer_argv[0] = p->cfg.writer;
	writer_argv[1] = "--arena-fd";
	writer_argv[2] = writer_fd;
	writer_argv[3] = p->arena_path;
	return 0;
fail:
	scope_set_stopped(1);
	unlink_store(p); /* its name is in the header */
	munmap(p->base, p->map_bytes);
	scope_fd_close(p->fd);
	unlink(p->arena_path);
	p->hdr = NULL;
	p->base = NULL;
	return -1;
}

static SCOPE_NOINST uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

static SCOPE_NOINST void record_stop(struct scope_process *p, int kind, int code)
{
	struct scope_arena_header *h = p->hdr;
	struct rusage ru;
	struct timespec ts;

	clock_pair(scope_now, scope_mono_ns, &h->stop_tick, &h->stop_mono_ns);
	clock_gettime(CLOCK_REALTIME, &ts);
	h->stop_unix_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h->exit_kind = kind;
	h->exit_code = code;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		h->cpu_user_ns = tv_ns(ru.ru_utime);
		h->cpu_sys_ns = tv_ns(ru.ru_stime);
		h->max_rss_kib = (uint64_t)ru.ru_maxrss;
	}
}

/* Descriptors the writer needs: its libraries, the output, a spill file. */
#define WRITER_FDS 32

/* A program that lowered its descriptor limit to what it uses gets it
 * raised while its process ends (the hand-over's socket, the run's lock,
 * a writer of its own), and back afterwards. Returns 1 when raised, 0 when
 * it is enough as it is, -1 when the writer cannot start. */
static SCOPE_NOINST int descriptors_for_writer(struct rlimit *old)
{
	struct rlimit more;

	if (getrlimit(RLIMIT_NOFILE, old) != 0 || old->rlim_cur >= WRITER_FDS)
		return 0;
	more = *old;
	more.rlim_cur = old->rlim_max < WRITER_FDS ? old->rlim_max : WRITER_FDS;
	if (more.rlim_cur < WRITER_FDS || setrlimit(RLIMIT_NOFILE, &more) != 0) {
		errno = EMFILE;
		return -1;
	}
	return 1;
}

/* Runs the writer and waits for it; returns its wait status, or -1 with
 * errno when it could not be started (EMFILE: fds, descriptors_for_writer's
 * answer, says too few). SIGCHLD is put to its default while waiting, so a
 * program that ignores it or reaps children in a handler cannot take the
 * writer's status away. */
static SCOPE_NOINST int run_writer(struct scope_process *p, int fds)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	pid_t pid;
	int status = -1, rc;

	if (fds < 0) {
		errno = EMFILE;
		return -1;
	}
	sigaction(SIGCHLD, &dfl, &old);
	rc = scope_spawn(&pid, p->cfg.writer, writer_argv, writer_envp, p->fd);
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	sigaction(SIGCHLD, &old, NULL);
	errno = rc;
	return rc == 0 ? status : -1;
}

/* Whether the writer published the arena: it removes the file, or marks
 * it when asked to keep it. */
static SCOPE_NOINST int published(const struct scope_process *p)
{
	struct stat st;
	return __atomic_load_n(&p->hdr->published, __ATOMIC_ACQUIRE) ||
	       (fstat(p->fd, &st) == 0 && st.st_nlink == 0);
}

/* Sends the run's writer msg: one datagram on the run's socket. Returns -1
 * when there is no such writer, or it is gone. */
static SCOPE_NOINST int tell_writer(const struct scope_process *p, const char *msg, size_t len,
				    int flags)
{
	struct sockaddr_un to = {.sun_family = AF_UNIX};
	size_t plen = strlen(p->cfg.run_writer);
	int fd, rc;

	if (!plen || plen >= sizeof to.sun_path)
		return -1;
	memcpy(to.sun_path, p->cfg.run_writer, plen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = sendto(fd, msg, len, MSG_NOSIGNAL | flags, (const struct sockaddr *)&to, sizeof to) < 0
		     ? -1
		     : 0;
	scope_fd_close(fd);
	return rc;
}

/* Hands the arena to the run's writer (scope-run's), which writes it while
 * this process goes on to its end: one message on the run's socket, with
 * nothing to wait for. Returns -1 when there is no such writer, or it is
 * gone: then this process starts a writer of its own. */
static SCOPE_NOINST int hand_over(const struct scope_process *p)
{
	return tell_writer(p, p->arena_path, strlen(p->arena_path), 0);
}

/* The run's writer reads the arena while this process records into it:
 * the path after a NUL byte. Not waited for: a writer too busy to take the
 * message gets the arena at the end, as hand_over gives it. */
void scope_run_join(const struct scope_process *p)
{
	char msg[SCOPE_PATH_BYTES + 1];
	size_t len = strlen(p->arena_path);

	msg[0] = '\0';
	memcpy(msg + 1, p->arena_path, len);
	tell_writer(p, msg, len + 1, MSG_DONTWAIT);
}

/* One line when the profile was not written and nothing has said why: the
 * writer could not start, died, or ended without writing (a wrong
 * SCOPE_WRITER). A writer that failed on its own has said it already. */
static SCOPE_NOINST void write_profile(struct scope_process *p, int fds)
{
	char what[96];
	int status = run_writer(p, fds);

	if (status < 0 && errno == EMFILE)
		snprintf(what, sizeof what,
			 "cannot start: the program's descriptor limit is under %d", WRITER_FDS);
	else if (status < 0)
		snprintf(what, sizeof what, "could not be started: %s", strerror(errno));
	else if (published(p) || p->hdr->reported)
		return;
	else if (WIFSIGNALED(status))
		snprintf(what, sizeof what, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(what, sizeof what, "exited with status %d without writing the profile",
			 WEXITSTATUS(status));
	scope_log("%s %s; what was recorded is kept in %s (write it with: scope-writer --recover "
		  "%s)",
		  p->cfg.writer, what, p->arena_path, p->arena_path);
}

void scope_finish(int kind, int code)
{
	struct scope_process *p = &scope_proc;
	struct rlimit limit;
	int raised;

	/* Exactly one thread stops it, when two exit or crash at once; a
	 * process sharing another's memory (clone) that exits or execs ends
	 * only itself. */
	if (!p->hdr || scope_clone_process() ||
	    __atomic_exchange_n(&p->stopped, 1, __ATOMIC_RELAXED))
		return;
	scope_busy_begin(&scope_tls);
	scope_filter_stop();
	scope_heap_stop(p);
	scope_thread_stop_self();
	record_stop(p, kind, code);
	/* An image that execs another is a part: the process's last image
	 * writes the output, so a launcher (a shell script, valgrind) does
	 * not take the place of the program it runs. */
	if (kind == SCOPE_EXIT_EXEC)
		p->hdr->role = SCOPE_ROLE_PART;
	scope_thread_finish();
	scope_threads_cpu_at_stop();
	scope_modules_capture(p);
	__atomic_store_n(&p->hdr->state, SCOPE_ARENA_STOPPED, __ATOMIC_RELEASE);
	/* A hand-over that failed for want of a descriptor would leave the
	 * arena to a writer of this process's own while the run's reads it. */
	raised = descriptors_for_writer(&limit);
	if (hand_over(p) != 0) {
		write_profile(p, raised);
	} else if (kind != SCOPE_EXIT_EXEC && p->cfg.role == SCOPE_ROLE_ROOT &&
		   scope_run_end(p) == 0 && !published(p) && !p->hdr->reported) {
		write_profile(p, raised); /* the run's writer was gone before it got to it */
	}
	if (raised > 0)
		setrlimit(RLIMIT_NOFILE, &limit);
	scope_busy_end(&scope_tls);
}
