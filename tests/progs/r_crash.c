/* SPDX-License-Identifier: MIT */
/*
 * Crash stacks: a fault at the bottom of a recursion whose depth is known,
 * with small frames (all of the stack fits the snapshot the profiler takes)
 * or large ones (it does not), on the main thread or another one, with
 * process_vm_readv allowed or refused; and the objects mapped into a
 * running profiled program.
 *
 * Usage: r_crash deep N | wide N | thread N | sealed N | maps
 *   deep N    dive() N frames deep, then crash_here() writes through NULL
 *   wide N    the same with 4 KiB of locals in every dive_wide() frame
 *   thread N  deep N on a second thread, below crash_thread()
 *   sealed N  deep N after a seccomp filter made process_vm_readv fail
 *   maps      prints /proc/self/maps from inside an instrumented call
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "progs.h"

volatile unsigned long crash_sink;
volatile int *crash_null;
volatile char *volatile crash_pad; /* its frame's locals escape: they stay 4 KiB */

NOINLINE void crash_here(void)
{
	crash_sink++;
	*crash_null = 1;
	crash_sink++;
}

/* The second increment keeps the call from being a tail call. */
NOINLINE void dive(int n)
{
	crash_sink++;
	if (n > 1)
		dive(n - 1);
	else
		crash_here();
	crash_sink++;
}

NOINLINE void dive_wide(int n)
{
	volatile char pad[4096];

	crash_pad = pad;
	pad[0] = (char)n;
	pad[sizeof pad - 1] = (char)n;
	crash_sink += (unsigned long)pad[0];
	if (n > 1)
		dive_wide(n - 1);
	else
		crash_here();
	crash_sink += (unsigned long)pad[sizeof pad - 1];
}

NOINLINE void *crash_thread(void *arg)
{
	dive((int)(long)arg);
	return NULL;
}

/* process_vm_readv fails with EPERM from now on, as under a container's
 * seccomp profile; every other system call is allowed. */
static int seal(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof code / sizeof *code, code};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("r_crash: seccomp");
		return -1;
	}
	return 0;
}

NOINLINE int show_maps(void)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f) {
		perror("r_crash: /proc/self/maps");
		return 1;
	}
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;

	if (argc == 3 && strcmp(mode, "deep") == 0 && n > 0) {
		dive(n);
		return 0;
	}
	if (argc == 3 && strcmp(mode, "wide") == 0 && n > 0) {
		dive_wide(n);
		return 0;
	}
	if (argc == 3 && strcmp(mode, "thread") == 0 && n > 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, crash_thread, (void *)(long)n) != 0)
			return 1;
		pthread_join(t, NULL);
		return 0;
	}
	if (argc == 3 && strcmp(mode, "sealed") == 0 && n > 0) {
		if (seal() != 0)
			return 1;
		dive(n);
		return 0;
	}
	if (argc == 2 && strcmp(mode, "maps") == 0)
		return show_maps();
	fprintf(stderr, "usage: %s deep N | wide N | thread N | sealed N | maps\n", argv[0]);
	return 64;
}
