/* SPDX-License-Identifier: MIT */
/* Recursive fib(20): 21891 calls of fib, nested 20 deep below main. */
#include <stdio.h>

#include "progs.h"

volatile unsigned long fib_calls;

NOINLINE int fib(int n)
{
	fib_calls++;
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int main(void)
{
	int r = fib(20);

	printf("fib(20) = %d in %lu calls\n", r, fib_calls);
	return 0;
}
