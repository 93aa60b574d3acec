/* SPDX-License-Identifier: MIT */
/* parent() only calls child() 5 times, and child() sleeps 10 ms: time belongs to child. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "progs.h"

NOINLINE void child(void)
{
	struct timespec left = {0, 10 * 1000 * 1000};

	while (nanosleep(&left, &left) == -1 && errno == EINTR)
		;
}

NOINLINE void parent(void)
{
	for (int i = 0; i < 5; i++)
		child();
}

int main(void)
{
	parent();
	puts("slept");
	return 0;
}
