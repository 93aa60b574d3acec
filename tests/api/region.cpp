// SPDX-License-Identifier: MIT
// The C++ side of scope.h: scope::region around a block, named twice.
#include <scope/scope.h>

#include <cstdio>

#include "../progs/progs.h"

static volatile unsigned long sink;

NOINLINE void work()
{
	sink = sink + 1;
}

int main()
{
	for (int i = 0; i < 2; i++) {
		scope::region r("cxx block");
		work();
	}
	std::puts("region ok");
	return 0;
}
