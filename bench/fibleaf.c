/* SPDX-License-Identifier: MIT */
/* Micro-benchmark for scope: recursive fib(N) plus L calls of a tiny leaf function. */
//
// Build it with -O2 -g -finstrument-functions -fno-optimize-sibling-calls.
// Usage: fibleaf [N [L]]   (defaults: N = 30, L = 1000000)
// fib uses the base case n < 3, so fib(N) makes 2*F(N) - 1 calls
// (fib(30): 1,664,079 calls); with main, the run makes 2*F(N) - 1 + L + 1
// instrumented calls in all. The count is printed on stdout as "calls=...".
#include <stdio.h>
#include <stdlib.h>

#define NOINSTR __attribute__((no_instrument_function))

__attribute__((noinline, noclone)) unsigned long fib(unsigned n)
{
	if (n < 3)
		return 1;
	return fib(n - 1) + fib(n - 2);
}

__attribute__((noinline, noclone)) unsigned leaf(unsigned x)
{
	return x * 2654435761u + 1u;
}

/* Expected number of instrumented calls, computed without recursion. */
static NOINSTR unsigned long long expected_calls(unsigned n, unsigned long leaves)
{
	unsigned long long a = 1, b = 1; /* F(1), F(2) */
	for (unsigned i = 3; i <= n; i++) {
		unsigned long long c = a + b;
		a = b;
		b = c;
	}
	unsigned long long fib_calls = n < 1 ? 1 : 2 * b - 1;
	return fib_calls + leaves + 1; /* + main */
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 30;
	unsigned long leaves = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000ul;
	unsigned long r = fib(n);
	unsigned acc = 0;
	for (unsigned long i = 0; i < leaves; i++)
		acc += leaf(acc + (unsigned)i);
	printf("fib(%u)=%lu leaf=%u calls=%llu\n", n, r, acc, expected_calls(n, leaves));
	return 0;
}
