/* SPDX-License-Identifier: MIT */
/* How a profiled program ends and what it prints: modes print N, exit CODE, abort, touch FILE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progs.h"

volatile int behave_sink;

NOINLINE void say(int i)
{
	behave_sink += i;
	printf("line %d: %d\n", i, i * i);
}

NOINLINE void leave(int code)
{
	behave_sink += code;
	printf("leaving with %d", code); /* no newline: exit() must flush it once */
	exit(code);
}

NOINLINE void crash(void)
{
	behave_sink++;
	fflush(stdout);
	abort();
}

NOINLINE int touch(const char *path)
{
	FILE *f = fopen(path, "w");

	behave_sink++;
	if (!f)
		return 1;
	fputs("ran\n", f);
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "print") == 0) {
		int n = atoi(argv[2]);

		for (int i = 0; i < n; i++)
			say(i);
		printf("no newline at the end");
		fputs("behave: printed to stdout\n", stderr);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "exit") == 0) {
		say(1);
		leave(atoi(argv[2]));
	}
	if (argc == 2 && strcmp(argv[1], "abort") == 0) {
		say(2);
		crash();
	}
	if (argc == 3 && strcmp(argv[1], "touch") == 0)
		return touch(argv[2]);
	fprintf(stderr, "usage: %s print N | exit CODE | abort | touch FILE\n", argv[0]);
	return 64;
}
