/* SPDX-License-Identifier: MIT */
/*
 * Every C library call scope records as a region, each made from a caller
 * of its own, a known number of times with known bytes (the table is in
 * tests/libcalls.py). A wait on another thread is made certain: the helper
 * lets go only once the main thread sleeps in the kernel. A .preinit_array
 * function (not instrumented), a constructor and a signal handler call
 * write too. Prints "libcalls ok" and exits 0 when every call did what it
 * should; "libcalls many N" makes N calls under one caller, one pread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define TMP "libcalls.tmp"

/* Sizes the compiler cannot see: with _FORTIFY_SOURCE, read, pread, fread,
 * poll and ppoll then go through __read_chk, __pread_chk, __fread_chk,
 * __poll_chk and __ppoll_chk. */
volatile size_t pipe_write = 5000, pipe_read = 3000, kick_bytes = 64;
volatile size_t file_bytes = 1000, file_pread = 600, file_read = 200;
volatile size_t item = 10, items_out = 30, items_in = 20;
volatile nfds_t npoll = 1;
volatile size_t slow_bytes = 100;

static char buf[8192];
static int failed;
static pthread_t main_thread;
static char main_stat[64];
static int kick_fd = -1;
volatile unsigned long sink;

static void fail(const char *what, long got, long want)
{
	printf("FAIL %s: got %ld, expected %ld\n", what, got, want);
	failed = 1;
}

static void check(const char *what, long got, long want)
{
	if (got != want)
		fail(what, got, want);
}

/* ---------------------------------------------------------------------- */
/* Before main                                                             */

/* Runs before the profiler has started: its write is passed on, unrecorded. */
__attribute__((no_instrument_function)) static void preinit(void)
{
	if (write(STDOUT_FILENO, "preinit\n", 8) != 8)
		failed = 1;
}

__attribute__((section(".preinit_array"), used)) static void (*preinit_p)(void) = preinit;

NOINLINE __attribute__((constructor)) void early(void)
{
	check("constructor's write", write(STDOUT_FILENO, "constructor\n", 12), 12);
}

/* ---------------------------------------------------------------------- */
/* Threads, sleeps, a pipe                                                 */

NOINLINE void *sleeper_thread(void *arg)
{
	struct timespec twenty_ms = {0, 20 * 1000 * 1000};

	check("thread's nanosleep", nanosleep(&twenty_ms, NULL), 0);
	return arg;
}

NOINLINE void joiner(void)
{
	pthread_t t[3];

	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, sleeper_thread, NULL);
	for (int i = 0; i < 3; i++)
		check("pthread_join", pthread_join(t[i], NULL), 0);
}

NOINLINE void napper(void)
{
	struct timespec ten_ms = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 5; i++)
		check("nanosleep", nanosleep(&ten_ms, NULL), 0);
}

NOINLINE void piper(void)
{
	int p[2];

	if (pipe(p) != 0)
		fail("pipe", errno, 0);
	check("pipe write", write(p[1], buf, pipe_write), (long)pipe_write);
	check("pipe read", read(p[0], buf, pipe_read), (long)pipe_read);
	close(p[0]);
	close(p[1]);
}

/* A signal handler's write, into the pipe the main thread is reading. */
NOINLINE void on_usr1(int sig)
{
	(void)sig;
	check("handler's write", write(kick_fd, buf, kick_bytes), (long)kick_bytes);
}

NOINLINE void *kicker(void *arg)
{
	pthread_kill(main_thread, SIGUSR1);
	return arg;
}

NOINLINE void signalled(void)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	pthread_t t;
	int p[2];

	if (pipe(p) != 0)
		fail("pipe", errno, 0);
	kick_fd = p[1];
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, kicker, NULL);
	check("read of what the handler wrote", read(p[0], buf, sizeof buf), (long)kick_bytes);
	check("kicker's join", pthread_join(t, NULL), 0);
	close(p[0]);
	close(p[1]);
}

NOINLINE void sleeper(void)
{
	struct timespec ms = {0, 1000 * 1000};

	check("sleep(0)", (long)sleep(0), 0);
	check("usleep", usleep(1000), 0);
	check("clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL), 0);
}

static pid_t child(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	return pid;
}

NOINLINE void children(void)
{
	int st;
	pid_t pid = child();

	check("wait", wait(&st), pid);
	pid = child();
	check("waitpid", waitpid(pid, &st, 0), pid);
	pid = child();
	check("wait4", wait4(pid, &st, 0, NULL), pid);
}

NOINLINE void pollers(void)
{
	struct pollfd pf[1] = {{.fd = -1}};
	struct timespec ms = {0, 1000 * 1000};
	struct timeval tv = {0, 1000};
	struct epoll_event ev[1];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	check("poll", poll(pf, npoll, 1), 0);
	check("ppoll", ppoll(pf, npoll, &ms, NULL), 0);
	check("select", select(0, NULL, NULL, NULL, &tv), 0);
	check("pselect", pselect(0, NULL, NULL, NULL, &ms, NULL), 0);
	check("epoll_wait", epoll_wait(ep, ev, 1, 1), 0);
	check("epoll_pwait", epoll_pwait(ep, ev, 1, 1, NULL), 0);
	close(ep);
}

/* ---------------------------------------------------------------------- */
/* Locks that wait, and locks that do not                                  */

/* Whether the main thread sleeps in the kernel. Read with system calls,
 * not the C library's wrapped functions: the helper's calls are not part
 * of the pattern. */
static int main_sleeps(void)
{
	char text[512], *p;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, main_stat, O_RDONLY | O_CLOEXEC);
	long n = fd < 0 ? -1 : syscall(SYS_read, fd, text, sizeof text - 1);

	if (fd >= 0)
		syscall(SYS_close, fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	p = strrchr(text, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

struct helper {
	void (*pre)(void);  /* before the main thread waits */
	void (*post)(void); /* once it sleeps */
	atomic_int ready;
	pthread_t thread;
};

NOINLINE void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct timespec t0, t;

	if (h->pre)
		h->pre();
	atomic_store(&h->ready, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!main_sleeps()) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20) {
			printf("FAIL the main thread never slept\n");
			failed = 1;
			break;
		}
		sched_yield();
	}
	h->post();
	return NULL;
}

static void start_helper(struct helper *h, void (*pre)(void), void (*post)(void))
{
	h->pre = pre;
	h->post = post;
	atomic_store(&h->ready, 0);
	pthread_create(&h->thread, NULL, helper_main, h);
	while (!atomic_load(&h->ready))
		;
}

NOINLINE void join_helper(struct helper *h)
{
	check("helper's join", pthread_join(h->thread, NULL), 0);
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER, cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static sem_t sem;
static int cond_flag;

NOINLINE void take_mutex(void)
{
	pthread_mutex_lock(&mutex);
}

NOINLINE void drop_mutex(void)
{
	pthread_mutex_unlock(&mutex);
}

NOINLINE void take_write(void)
{
	pthread_rwlock_wrlock(&rwlock);
}

NOINLINE void take_read(void)
{
	pthread_rwlock_rdlock(&rwlock);
}

NOINLINE void drop_rwlock(void)
{
	pthread_rwlock_unlock(&rwlock);
}

NOINLINE void post_sem(void)
{
	sem_post(&sem);
}

NOINLINE void post_barrier(void)
{
	pthread_barrier_wait(&barrier);
}

NOINLINE void post_cond(void)
{
	pthread_mutex_lock(&cond_mutex);
	cond_flag = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_mutex);
}

NOINLINE void contend_mutex(struct helper *h)
{
	start_helper(h, take_mutex, drop_mutex);
	check("contended mutex", pthread_mutex_lock(&mutex), 0);
	pthread_mutex_unlock(&mutex);
	join_helper(h);
}

NOINLINE void contend_rdlock(struct helper *h)
{
	start_helper(h, take_write, drop_rwlock);
	check("contended rdlock", pthread_rwlock_rdlock(&rwlock), 0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

NOINLINE void contend_wrlock(struct helper *h)
{
	start_helper(h, take_read, drop_rwlock);
	check("contended wrlock", pthread_rwlock_wrlock(&rwlock), 0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

NOINLINE void contend_sem(struct helper *h)
{
	sem_init(&sem, 0, 0);
	start_helper(h, NULL, post_sem);
	check("contended sem_wait", sem_wait(&sem), 0);
	join_helper(h);
	sem_destroy(&sem);
}

NOINLINE void contend_barrier(struct helper *h)
{
	pthread_barrier_init(&barrier, NULL, 2);
	start_helper(h, NULL, post_barrier);
	pthread_barrier_wait(&barrier);
	join_helper(h);
	pthread_barrier_destroy(&barrier);
}

NOINLINE void contend_cond(struct helper *h)
{
	start_helper(h, NULL, post_cond);
	pthread_mutex_lock(&cond_mutex);
	while (!cond_flag)
		check("cond_wait", pthread_cond_wait(&cond, &cond_mutex), 0);
	pthread_mutex_unlock(&cond_mutex);
	join_helper(h);
}

/* A time ms from now on clock, as the timed waits take it. */
static struct timespec in_ms(clockid_t clock, long ms)
{
	struct timespec at;

	clock_gettime(clock, &at);
	at.tv_sec += ms / 1000;
	at.tv_nsec += ms % 1000 * 1000 * 1000;
	if (at.tv_nsec >= 1000 * 1000 * 1000) {
		at.tv_sec++;
		at.tv_nsec -= 1000 * 1000 * 1000;
	}
	return at;
}

/* The timed and clock rwlocks, each taken once the helper lets go. */
NOINLINE void contend_timedrdlock(struct helper *h)
{
	struct timespec at = in_ms(CLOCK_REALTIME, 20000);

	start_helper(h, take_write, drop_rwlock);
	check("contended timedrdlock", pthread_rwlock_timedrdlock(&rwlock, &at), 0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

NOINLINE void contend_timedwrlock(struct helper *h)
{
	struct timespec at = in_ms(CLOCK_REALTIME, 20000);

	start_helper(h, take_read, drop_rwlock);
	check("contended timedwrlock", pthread_rwlock_timedwrlock(&rwlock, &at), 0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

NOINLINE void contend_clockrdlock(struct helper *h)
{
	struct timespec at = in_ms(CLOCK_MONOTONIC, 20000);

	start_helper(h, take_write, drop_rwlock);
	check("contended clockrdlock", pthread_rwlock_clockrdlock(&rwlock, CLOCK_MONOTONIC, &at),
	      0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

NOINLINE void contend_clockwrlock(struct helper *h)
{
	struct timespec at = in_ms(CLOCK_MONOTONIC, 20000);

	start_helper(h, take_read, drop_rwlock);
	check("contended clockwrlock", pthread_rwlock_clockwrlock(&rwlock, CLOCK_MONOTONIC, &at),
	      0);
	pthread_rwlock_unlock(&rwlock);
	join_helper(h);
}

/* A reader that holds the lock until the main thread has given up on it. */
static atomic_int holding, given_up;

NOINLINE void *hold_read(void *arg)
{
	(void)arg;
	pthread_rwlock_rdlock(&rwlock);
	atomic_store(&holding, 1);
	while (!atomic_load(&given_up))
		sched_yield();
	pthread_rwlock_unlock(&rwlock);
	return NULL;
}

/* A timed wait that times out waited too: a region. */
NOINLINE void timed_out_wrlock(void)
{
	struct timespec at;
	pthread_t t;

	atomic_store(&holding, 0);
	atomic_store(&given_up, 0);
	pthread_create(&t, NULL, hold_read, NULL);
	while (!atomic_load(&holding))
		;
	at = in_ms(CLOCK_MONOTONIC, 1);
	check("timed-out clockwrlock", pthread_rwlock_clockwrlock(&rwlock, CLOCK_MONOTONIC, &at),
	      ETIMEDOUT);
	atomic_store(&given_up, 1);
	check("holder's join", pthread_join(t, NULL), 0);
}

NOINLINE void timed_wait(void)
{
	struct timespec at;

	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_nsec += 1000 * 1000;
	if (at.tv_nsec >= 1000 * 1000 * 1000) {
		at.tv_sec++;
		at.tv_nsec -= 1000 * 1000 * 1000;
	}
	pthread_mutex_lock(&cond_mutex);
	check("cond_timedwait", pthread_cond_timedwait(&cond, &cond_mutex, &at), ETIMEDOUT);
	pthread_mutex_unlock(&cond_mutex);
}

/* Every one of these is free: none waits, none is a region. */
NOINLINE void free_locks(void)
{
	sem_t s;

	check("free mutex", pthread_mutex_lock(&mutex), 0);
	pthread_mutex_unlock(&mutex);
	check("free rdlock", pthread_rwlock_rdlock(&rwlock), 0);
	pthread_rwlock_unlock(&rwlock);
	check("free wrlock", pthread_rwlock_wrlock(&rwlock), 0);
	pthread_rwlock_unlock(&rwlock);
	{
		struct timespec real = in_ms(CLOCK_REALTIME, 20000),
				mono = in_ms(CLOCK_MONOTONIC, 20000);
		check("free timedrdlock", pthread_rwlock_timedrdlock(&rwlock, &real), 0);
		pthread_rwlock_unlock(&rwlock);
		check("free timedwrlock", pthread_rwlock_timedwrlock(&rwlock, &real), 0);
		pthread_rwlock_unlock(&rwlock);
		check("free clockrdlock",
		      pthread_rwlock_clockrdlock(&rwlock, CLOCK_MONOTONIC, &mono), 0);
		pthread_rwlock_unlock(&rwlock);
		check("free clockwrlock",
		      pthread_rwlock_clockwrlock(&rwlock, CLOCK_MONOTONIC, &mono), 0);
		pthread_rwlock_unlock(&rwlock);
	}
	sem_init(&s, 0, 1);
	check("free sem_wait", sem_wait(&s), 0);
	sem_destroy(&s);
}

NOINLINE void locks(void)
{
	struct helper h;

	contend_mutex(&h);
	contend_rdlock(&h);
	contend_wrlock(&h);
	contend_sem(&h);
	contend_barrier(&h);
	contend_cond(&h);
	contend_timedrdlock(&h);
	contend_timedwrlock(&h);
	contend_clockrdlock(&h);
	contend_clockwrlock(&h);
	timed_out_wrlock();
	timed_wait();
	free_locks();
}

/* ---------------------------------------------------------------------- */
/* A read that waits                                                       */

static int slow_pipe[2];
static char slow_buf[256];

/* 50 ms after the main thread went to sleep in its read, through system
 * calls, which are no part of the pattern. */
NOINLINE void feed_late(void)
{
	struct timespec wait = {0, 50 * 1000 * 1000};

	syscall(SYS_nanosleep, &wait, NULL);
	syscall(SYS_write, slow_pipe[1], slow_buf, slow_bytes);
}

NOINLINE void slow_reader(void)
{
	struct helper h;

	if (pipe(slow_pipe) != 0)
		fail("pipe", errno, 0);
	start_helper(&h, NULL, feed_late);
	check("blocking read", read(slow_pipe[0], slow_buf + 128, slow_bytes), (long)slow_bytes);
	join_helper(&h);
	close(slow_pipe[0]);
	close(slow_pipe[1]);
}

/* ---------------------------------------------------------------------- */
/* Files                                                                   */

NOINLINE void files(void)
{
	struct iovec out[2] = {{buf, 50}, {buf + 50, 70}}, in[2] = {{buf, 30}, {buf + 30, 40}};
	int fd = open(TMP, O_CREAT | O_RDWR | O_TRUNC, 0600);

	check("pwrite", pwrite(fd, buf, file_bytes, 0), (long)file_bytes);
	check("fsync", fsync(fd), 0);
	check("fdatasync", fdatasync(fd), 0);
	check("pread", pread(fd, buf, file_pread, 100), (long)file_pread);
	lseek(fd, 0, SEEK_SET);
	check("writev", writev(fd, out, 2), 120);
	lseek(fd, 0, SEEK_SET);
	check("readv", readv(fd, in, 2), 70);
	check("close", close(fd), 0);
	fd = openat(AT_FDCWD, TMP, O_RDONLY);
	check("read", read(fd, buf, file_read), (long)file_read);
	check("close", close(fd), 0);
}

/* stdio's own reads and writes are inside the C library: only fread and
 * fwrite, the caller's buffer, are regions. */
NOINLINE void streams(void)
{
	FILE *f = fopen(TMP, "w+");

	if (!f) {
		fail("fopen", errno, 0);
		return;
	}
	check("fwrite", (long)fwrite(buf, item, items_out, f), (long)items_out);
	rewind(f);
	check("fread", (long)fread(buf, item, items_in, f), (long)items_in);
	fclose(f);
	unlink(TMP);
}

/* ---------------------------------------------------------------------- */

NOINLINE void leaf(void)
{
	sink++;
}

/* n calls under one open call, the library moving on from chunk to chunk
 * meanwhile (reading its arena), and one pread of the program's own. */
NOINLINE void many(long n)
{
	int p[2];

	for (long i = 0; i < n; i++)
		leaf();
	if (pipe(p) != 0 || write(p[1], "x", 1) != 1)
		fail("pipe", errno, 0);
	check("pread of a pipe", pread(p[0], buf, 1, 0), -1);
}

int main(int argc, char **argv)
{
	main_thread = pthread_self();
	snprintf(main_stat, sizeof main_stat, "/proc/self/task/%d/stat", (int)getpid());
	if (argc == 3 && strcmp(argv[1], "many") == 0) {
		many(atol(argv[2]));
	} else {
		joiner();
		napper();
		piper();
		signalled();
		sleeper();
		children();
		pollers();
		locks();
		slow_reader();
		files();
		streams();
	}
	printf(failed ? "libcalls failed\n" : "libcalls ok\n");
	return failed;
}
