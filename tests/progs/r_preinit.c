/* SPDX-License-Identifier: MIT */
/*
 * Code that runs before main: a .preinit_array function (before every
 * constructor, the profiler's included) and a constructor, both
 * instrumented and both calling helper(). Prints "calls NAME=N ...".
 */
#include <stdio.h>

#include "progs.h"

static unsigned long n_pre, n_ctor, n_helper;
volatile unsigned long preinit_sink;

NOINLINE void helper(void)
{
	n_helper++;
	preinit_sink++;
}

NOINLINE void pre(void)
{
	n_pre++;
	helper();
}

__attribute__((section(".preinit_array"), used)) static void (*pre_p)(void) = pre;

NOINLINE __attribute__((constructor)) void ctor(void)
{
	n_ctor++;
	helper();
}

int main(void)
{
	helper();
	printf("calls pre=%lu ctor=%lu helper=%lu main=1\n", n_pre, n_ctor, n_helper);
	return 0;
}
