/* SPDX-License-Identifier: MIT */
/* A call chain main -> a (3x) -> b (2x each) -> c (5x each): a=3, b=6, c=30 calls. */
#include <stdio.h>

#include "progs.h"

/* The "line:" markers let the checks find each definition's line. */

volatile unsigned long chain_work;

NOINLINE void c(void) /* line: c */
{
	chain_work += 1;
}

NOINLINE void b(void) /* line: b */
{
	for (int i = 0; i < 5; i++)
		c();
	chain_work += 10;
}

NOINLINE void a(void) /* line: a */
{
	for (int i = 0; i < 2; i++)
		b();
	chain_work += 100;
}

int main(void) /* line: main */
{
	for (int i = 0; i < 3; i++)
		a();
	printf("work %lu\n", chain_work);
	return 0;
}
