/* SPDX-License-Identifier: MIT */
/*
 * Non-local exits through instrumented frames: four longjmps through two
 * jmp_bufs (two to the inner one, two to the outer one, skipping the frame
 * that set the inner one), then a siglongjmp out of an instrumented signal
 * handler. After every jump probe() is called, at a depth the program
 * knows: main 0, outer_b 1, middle_a 2, probe 3 (or outer_b 1, probe 2).
 *
 * Prints "calls NAME=N ..." for every function it counts.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "progs.h"

static jmp_buf jb_a, jb_b;
static sigjmp_buf jb_sig;
static unsigned long n_outer_b, n_middle_a, n_level1, n_level2, n_level3, n_probe, n_handler,
	n_raiser, n_sig_guard;
static int jumps;
volatile unsigned long jump_sink;

NOINLINE void probe(void)
{
	n_probe++;
	jump_sink++;
}

/* level1 -> level2 -> level3, which jumps to *where. */
NOINLINE void level3(jmp_buf *where)
{
	n_level3++;
	jumps++;
	longjmp(*where, jumps);
}

NOINLINE void level2(jmp_buf *where)
{
	n_level2++;
	level3(where);
}

NOINLINE void level1(jmp_buf *where)
{
	n_level1++;
	level2(where);
}

/* Sets jb_a; the first two passes jump back here, the third jumps past
 * it to jb_b. */
NOINLINE void middle_a(int pass)
{
	volatile int round = 0;

	n_middle_a++;
	if (setjmp(jb_a) != 0) {
		probe(); /* depth 3 */
		round++;
	}
	if (pass == 0 && round < 2)
		level1(&jb_a);
	level1(&jb_b);
}

/* Sets jb_b; middle_a jumps here twice. */
NOINLINE void outer_b(void)
{
	volatile int pass = 0;

	n_outer_b++;
	if (setjmp(jb_b) != 0) {
		probe(); /* depth 2 */
		pass++;
	}
	if (pass < 2)
		middle_a(pass);
}

NOINLINE void handler(int sig)
{
	(void)sig;
	n_handler++;
	siglongjmp(jb_sig, 1);
}

NOINLINE void raiser(void)
{
	n_raiser++;
	raise(SIGUSR1);
}

NOINLINE void sig_guard(void)
{
	n_sig_guard++;
	if (sigsetjmp(jb_sig, 1) == 0)
		raiser();
	probe(); /* depth 2 */
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);

	outer_b();
	sig_guard();
	sig_guard();
	printf("jumps=%d\n", jumps);
	printf("calls outer_b=%lu middle_a=%lu level1=%lu level2=%lu level3=%lu probe=%lu "
	       "handler=%lu raiser=%lu sig_guard=%lu\n",
	       n_outer_b, n_middle_a, n_level1, n_level2, n_level3, n_probe, n_handler, n_raiser,
	       n_sig_guard);
	return 0;
}
