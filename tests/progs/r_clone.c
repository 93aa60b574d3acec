/* SPDX-License-Identifier: MIT */
/*
 * Tasks that share the parent's memory and TLS block: clone(CLONE_VM)
 * without CLONE_SETTLS, as runtimes with threads of their own make them,
 * through clone() or (raw*) the clone system call itself, which the
 * library does not see. The children and the parent call instrumented
 * functions at the same time; the children touch no libc state (they share
 * the parent's TLS).
 *
 * Usage: r_clone vm|thread|copy|exec|rawvm|rawthread|rawwait|rawspin N K
 *   vm         children are processes (CLONE_VM, no CLONE_THREAD), waited for
 *   thread     children are threads (CLONE_THREAD), waited for on their tid
 *   copy       children are processes with memory of their own (no CLONE_VM)
 *   exec       children share memory until they exec (CLONE_VM|CLONE_VFORK),
 *              after their calls, a program that does nothing
 *   rawvm      as vm, made by the clone system call (x86-64 only)
 *   rawthread  as thread, made by the clone system call
 *   rawwait    as rawthread, each child waited for (futex, uninstrumented)
 *              as soon as it is made: the parent calls nothing meanwhile
 *   rawspin    as rawwait, waited for by spinning, no system call
 * Child i calls child_work (which calls leaf) K * (i + 1) times; main
 * calls parent_work (which calls leaf) K times meanwhile (rawwait and
 * rawspin: after the children).
 *
 * Prints "child I tid=T calls child_work=N" per child and "calls NAME=N";
 * exits 3 when raw clones are not built for this machine.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

#define NOINSTR	  __attribute__((no_instrument_function))
#define MAX_TASKS 160
#define STACK	  (256u << 10)

static unsigned per_child;
static int go;
static int tids[MAX_TASKS];
static unsigned long done_work[MAX_TASKS + 1];
volatile unsigned long clone_sink;

NOINLINE void leaf(void)
{
	__atomic_fetch_add(&clone_sink, 1, __ATOMIC_RELAXED);
}

NOINLINE void child_work(int i)
{
	leaf();
	done_work[i]++;
}

NOINLINE void parent_work(void)
{
	leaf();
	done_work[MAX_TASKS]++;
}

static NOINSTR void wait_for_go(void)
{
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &go, FUTEX_WAIT, 0, NULL, NULL, 0);
}

static int mode_copy, mode_exec, mode_raw, mode_serial, mode_spin;
static int finished[MAX_TASKS];

NOINLINE int child_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned n = per_child * (unsigned)(i + 1);

	tids[i] = (int)syscall(SYS_gettid);
	if (!mode_copy && !mode_exec && !mode_serial)
		wait_for_go();
	for (unsigned k = 0; k < n; k++)
		child_work(i);
	if (mode_copy)
		printf("copy %d pid=%d calls child_work=%lu\n", i, (int)getpid(), done_work[i]);
	if (mode_exec) {
		char *argv[] = {"/bin/true", NULL};
		execv(argv[0], argv);
		_exit(127);
	}
	__atomic_store_n(&finished[i], 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * raw_clone(flags, stack, ptid, ctid, fn, arg): the clone system call
 * (no CLONE_SETTLS), the child calling fn(arg) on stack and ending with
 * the exit system call, as a runtime of its own would; no libc in
 * between. Returns the child's tid or -errno.
 */
#if defined(__x86_64__)
long raw_clone(unsigned long flags, void *stack, int *ptid, int *ctid, int (*fn)(void *),
	       void *arg);
__asm__(".pushsection .text\n"
	".globl raw_clone\n"
	".type raw_clone, @function\n"
	"raw_clone:\n"
	"	and $-16, %rsi\n"
	"	sub $16, %rsi\n"
	"	mov %r8, (%rsi)\n" /* fn and arg on the child's stack */
	"	mov %r9, 8(%rsi)\n"
	"	mov %rcx, %r10\n" /* ctid */
	"	xor %r8d, %r8d\n" /* tls: none */
	"	mov $56, %eax\n"  /* SYS_clone: flags, stack, ptid, ctid, tls */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	xor %ebp, %ebp\n"
	"	pop %rax\n"
	"	pop %rdi\n"
	"	call *%rax\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n" /* SYS_exit: this task alone */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size raw_clone, .-raw_clone\n"
	".popsection\n");
#define HAVE_RAW_CLONE 1
#else
#define HAVE_RAW_CLONE 0
static long raw_clone(unsigned long flags, void *stack, int *ptid, int *ctid, int (*fn)(void *),
		      void *arg)
{
	(void)flags, (void)stack, (void)ptid, (void)ctid, (void)fn, (void)arg;
	return -38;
}
#endif

static NOINSTR void wait_thread(pid_t *ctid)
{
	pid_t v;
	while ((v = __atomic_load_n(ctid, __ATOMIC_ACQUIRE)) != 0)
		syscall(SYS_futex, ctid, FUTEX_WAIT, v, NULL, NULL, 0);
}

/* Until child i has returned from child_main, without a system call. */
static NOINSTR void spin_for(int i)
{
	while (!__atomic_load_n(&finished[i], __ATOMIC_ACQUIRE))
		__asm__ volatile("" ::: "memory");
}

NOINLINE int run(int threads, int n)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_SYSVSEM;
	static pid_t pid[MAX_TASKS], ctid[MAX_TASKS];

	if (threads)
		flags |= CLONE_THREAD | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	else
		flags |= SIGCHLD;
	if (mode_copy)
		flags = SIGCHLD;
	if (mode_exec)
		flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
	for (int i = 0; i < n; i++) {
		char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (stack == MAP_FAILED)
			return 1;
		if (mode_raw) {
			long rc = raw_clone((unsigned long)flags, stack + STACK, &ctid[i], &ctid[i],
					    child_main, (void *)(intptr_t)i);
			pid[i] = rc < 0 ? -1 : (pid_t)rc;
		} else {
			pid[i] = clone(child_main, stack + STACK, flags, (void *)(intptr_t)i,
				       &ctid[i], NULL, &ctid[i]);
		}
		if (pid[i] < 0) {
			perror("clone");
			return 1;
		}
		if (mode_spin)
			spin_for(i);
		else if (mode_serial)
			wait_thread(&ctid[i]);
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &go, FUTEX_WAKE, MAX_TASKS, NULL, NULL, 0);
	for (unsigned k = 0; k < per_child; k++)
		parent_work();
	for (int i = 0; i < n; i++) {
		if (threads) {
			wait_thread(&ctid[i]);
		} else {
			int status;
			if (waitpid(pid[i], &status, __WALL) != pid[i] || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0)
				return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n, rc;
	unsigned long children = 0, leaves;

	static const char *const modes[] = {"vm",    "thread",	  "copy",    "exec",
					    "rawvm", "rawthread", "rawwait", "rawspin"};
	int known = 0;

	for (size_t m = 0; argc == 4 && m < sizeof modes / sizeof *modes; m++)
		known |= strcmp(argv[1], modes[m]) == 0;
	if (!known) {
		fprintf(stderr,
			"usage: r_clone vm|thread|copy|exec|rawvm|rawthread|rawwait|rawspin N "
			"K\n");
		return 2;
	}
	mode_copy = strcmp(argv[1], "copy") == 0;
	mode_exec = strcmp(argv[1], "exec") == 0;
	mode_raw = strncmp(argv[1], "raw", 3) == 0;
	mode_spin = strcmp(argv[1], "rawspin") == 0;
	mode_serial = mode_spin || strcmp(argv[1], "rawwait") == 0;
	if (mode_raw && !HAVE_RAW_CLONE) {
		fprintf(stderr, "r_clone: raw clones are built for x86-64 only\n");
		return 3;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	n = atoi(argv[2]);
	per_child = (unsigned)strtoul(argv[3], NULL, 10);
	if (n < 1 || n > MAX_TASKS)
		return 2;
	rc = run(strcmp(argv[1], "thread") == 0 || strcmp(argv[1], "rawthread") == 0 || mode_serial,
		 n);
	for (int i = 0; i < n; i++) {
		printf("child %d tid=%d calls child_work=%lu\n", i, tids[i], done_work[i]);
		children += done_work[i];
	}
	leaves = children + done_work[MAX_TASKS];
	printf("calls main=1 run=1 child_main=%d child_work=%lu parent_work=%lu leaf=%lu\n", n,
	       children, done_work[MAX_TASKS], leaves);
	return rc;
}
