/* SPDX-License-Identifier: MIT */
/* Processes: forked children, exec'd programs, spawned ones and _exit all keep their calls. */
#define _GNU_SOURCE
#include "filter.h"
#include "libcall.h"
#include "state.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
typedef void (*exit_fn)(int);

static execve_fn real_execve, real_execvpe;
static fexecve_fn real_fexecve;
static spawn_fn real_posix_spawn, real_posix_spawnp;
static exit_fn real__exit, real__Exit;

/* Resolves every original at once; one missing gives ENOSYS, not a crash. */
static SCOPE_NOINST void resolve(void)
{
	if (real_execve)
		return;
	real_execvpe = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	real_posix_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
	real_posix_spawnp = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
	real__exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	real__Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
	__atomic_store_n(&real_execve, (execve_fn)dlsym(RTLD_NEXT, "execve"), __ATOMIC_RELEASE);
}

/* The calling thread, the only one a new process image or forked child
 * has, starts recording as a new process of the run: fresh thread state
 * and a new arena. */
static SCOPE_NOINST void record_as_new_process(void)
{
	struct scope_thread *t = &scope_tls;
	int busy = t->busy, paused = t->paused;

	scope_counters_forget(t); /* the parent's, counting the parent */
	memset(t, 0, sizeof *t);
	t->lane = -1;
	t->busy = (uint8_t)busy;
	t->paused = (uint8_t)paused;
	scope_threads_forget();
	scope_names_forget();
	scope_task_forget();
	scope_wrapped = NULL; /* a record of the old arena, whose addresses the new one may take */
	scope_busy_begin(t);
	scope_start_recording();
	scope_busy_end(t);
}

/* Lets go of the arena this process image recorded into: written already
 * (a failed exec), or the parent's (a forked child). Left mapped, it would
 * stay in memory and in a core dump for the rest of the process. */
static SCOPE_NOINST void drop_arena(struct scope_process *p)
{
	munmap(p->base, p->map_bytes);
	scope_fd_close(p->fd);
	p->hdr = NULL;
	p->base = NULL;
	p->fd = -1;
}

/* The child of fork records into an arena of its own, as a new process:
 * the parent's calls still open are not the child's, and their exits in
 * the child touch nothing. Its parent is taken from the parent's arena
 * before anything else: by the time the child asked the kernel, a parent
 * that exits at once (daemon) would have left it to another. */
void scope_process_forked(void)
{
	struct scope_process *p = &scope_proc;

	if (!p->hdr || p->stopped)
		return;
	p->parent_pid = p->hdr->pid;
	p->cfg.role = SCOPE_ROLE_PART;
	scope_heap_forked();
	scope_filter_forked();
	drop_arena(p);
	record_as_new_process();
}

/* The writer is started with the original posix_spawn: the wrapper would
 * put the profiler back into its environment. */
int scope_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int keep_fd)
{
	int flags, rc;

	resolve();
	if (!real_posix_spawn)
		return ENOSYS;
	/* Not a file action: adding one allocates, and this runs from a fatal
	 * signal's handler too. The descriptor is inheritable only meanwhile. */
	flags = fcntl(keep_fd, F_GETFD);
	if (flags < 0 || fcntl(keep_fd, F_SETFD, flags & ~FD_CLOEXEC) != 0)
		return errno;
	rc = real_posix_spawn(pid, path, NULL, NULL, argv, envp);
	fcntl(keep_fd, F_SETFD, flags);
	return rc;
}

void scope_process_init(void)
{
	resolve();
	pthread_atfork(NULL, NULL, scope_process_forked);
}

/* An exec that works ends this program: its calls are written first. One
 * that fails goes on as a new process with a new arena. */
static SCOPE_NOINST void before_exec(void)
{
	scope_finish(SCOPE_EXIT_EXEC, 0);
}

static SCOPE_NOINST void after_failed_exec(void)
{
	struct scope_process *p = &scope_proc;
	int saved = errno;

	if (p->stopped && p->hdr && p->cfg.writer[0]) {
		drop_arena(p);
		record_as_new_process();
	}
	errno = saved;
}

/* Around the original exec: the environment to give it (free it with
 * exec_end), this image's calls written first; after a failed exec,
 * recording goes on. */
static SCOPE_NOINST char **exec_begin(char *const envp[])
{
	char **env = scope_env_for_exec(envp);
	before_exec();
	return env;
}

static SCOPE_NOINST int exec_end(int rc, char **env)
{
	after_failed_exec();
	scope_env_free(env);
	return rc;
}

static SCOPE_NOINST int exec_with(execve_fn fn, const char *path, char *const argv[],
				  char *const envp[])
{
	char **env;

	resolve();
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	env = exec_begin(envp);
	return exec_end(fn(path, argv, env ? env : envp), env);
}

SCOPE_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	resolve();
	return exec_with(real_execve, path, argv, envp);
}

SCOPE_EXPORT int execv(const char *path, char *const argv[])
{
	resolve();
	return exec_with(real_execve, path, argv, environ);
}

SCOPE_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	resolve();
	return exec_with(real_execvpe, file, argv, envp);
}

SCOPE_EXPORT int execvp(const char *file, char *const argv[])
{
	resolve();
	return exec_with(real_execvpe, file, argv, environ);
}

SCOPE_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char **env;

	resolve();
	if (!real_fexecve) {
		errno = ENOSYS;
		return -1;
	}
	env = exec_begin(envp);
	return exec_end(real_fexecve(fd, argv, env ? env : envp), env);
}

/* execl and friends: the arguments, gathered into an argv. */
#define GATHER(first, ap, argv, envp_out)                                                          \
	size_t argc = 1;                                                                           \
	va_list count;                                                                             \
	va_copy(count, ap);                                                                        \
	while (va_arg(count, char *))                                                              \
		argc++;                                                                            \
	va_end(count);                                                                             \
	char *argv[argc + 1];                                                                      \
	argv[0] = (char *)(first);                                                                 \
	for (size_t i = 1; i <= argc; i++)                                                         \
		argv[i] = va_arg(ap, char *);                                                      \
	envp_out

SCOPE_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER(arg, ap, argv, );
	va_end(ap);
	resolve();
	return exec_with(real_execve, path, argv, environ);
}

SCOPE_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER(arg, ap, argv, );
	va_end(ap);
	resolve();
	return exec_with(real_execvpe, file, argv, environ);
}

SCOPE_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	GATHER(arg, ap, argv, char *const *envp = va_arg(ap, char *const *));
	va_end(ap);
	resolve();
	return exec_with(real_execve, path, argv, envp);
}

#undef GATHER

static SCOPE_NOINST int spawn_with(spawn_fn fn, pid_t *pid, const char *path,
				   const posix_spawn_file_actions_t *actions,
				   const posix_spawnattr_t *attr, char *const argv[],
				   char *const envp[])
{
	char **env;
	int rc;

	resolve();
	if (!fn)
		return ENOSYS;
	env = scope_env_for_exec(envp);
	rc = fn(pid, path, actions, attr, argv, env ? env : envp);
	scope_env_free(env);
	return rc;
}

SCOPE_EXPORT int posix_spawn(pid_t *pid, const char *path,
			     const posix_spawn_file_actions_t *actions,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	resolve();
	return spawn_with(real_posix_spawn, pid, path, actions, attr, argv, envp);
}

SCOPE_EXPORT int posix_spawnp(pid_t *pid, const char *file,
			      const posix_spawn_file_actions_t *actions,
			      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	resolve();
	return spawn_with(real_posix_spawnp, pid, file, actions, attr, argv, envp);
}

/* vfork's child shares the parent's memory until it execs, and would stop
 * the parent's recording with its own. A fork gives the same result to a
 * program that uses vfork as POSIX allows (exec or _exit at once). */
SCOPE_EXPORT pid_t vfork(void)
{
	return fork();
}

/* glibc's daemon() leaves its parent with an internal _exit this library
 * cannot see; this one uses the visible calls. */
SCOPE_EXPORT int daemon(int nochdir, int noclose)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -1;
	if (!nochdir && chdir("/") != 0)
		return -1;
	if (!noclose && (fd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return 0;
}

static SCOPE_NOINST __attribute__((noreturn)) void leave(exit_fn fn, int status)
{
	scope_finish(SCOPE_EXIT_STATUS, status & 0xff);
	resolve();
	if (fn)
		fn(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SCOPE_EXPORT void _exit(int status)
{
	resolve();
	leave(real__exit, status);
}

SCOPE_EXPORT void _Exit(int status)
{
	resolve();
	leave(real__Exit, status);
}
