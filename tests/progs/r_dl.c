/* SPDX-License-Identifier: MIT */
/*
 * Libraries loaded with dlopen, called, and unloaded with dlclose before
 * the program ends (the second one often at the address the first had).
 *
 * Built twice more as the libraries themselves: with -DR_DL_PLUGIN=1 or 2,
 * -fPIC -shared, this file is libr_dl1.so / libr_dl2.so, whose functions
 * are pluginN_entry and pluginN_work.
 *
 * Usage: r_dl close|keep LIB1 LIB2. Prints "calls NAME=N ..." and whether
 * the two libraries had the same load address.
 */
#define _GNU_SOURCE
#include "progs.h"

#ifdef R_DL_PLUGIN

#define CAT_(a, b)   a##b
#define CAT(a, b)    CAT_(a, b)
#define PLUGIN(name) CAT(CAT(plugin, R_DL_PLUGIN), name)

volatile unsigned long PLUGIN(_sink);

NOINLINE void PLUGIN(_work)(void)
{
	PLUGIN(_sink)++;
}

/* Calls work() n times, returns n. */
NOINLINE int PLUGIN(_entry)(int n)
{
	for (int i = 0; i < n; i++)
		PLUGIN(_work)();
	return n;
}

#else

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

typedef int (*entry_fn)(int);

/* Loads LIB, calls SYMBOL(n), unloads it unless keep; returns its load
 * address (0 on failure). */
NOINLINE unsigned long use_library(const char *lib, const char *symbol, int n, int keep, int *calls)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	struct link_map *map = NULL;
	unsigned long base;
	entry_fn fn;

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
		return 0;
	}
	fn = (entry_fn)dlsym(h, symbol);
	if (!fn || dlinfo(h, RTLD_DI_LINKMAP, &map) != 0) {
		fprintf(stderr, "dlsym %s: %s\n", symbol, dlerror());
		return 0;
	}
	base = (unsigned long)map->l_addr;
	*calls = fn(n);
	if (!keep)
		dlclose(h);
	return base;
}

int main(int argc, char **argv)
{
	int keep, n1 = 0, n2 = 0;
	unsigned long base1, base2;

	if (argc != 4 || (strcmp(argv[1], "close") != 0 && strcmp(argv[1], "keep") != 0)) {
		fprintf(stderr, "usage: %s close|keep LIB1 LIB2\n", argv[0]);
		return 64;
	}
	keep = strcmp(argv[1], "keep") == 0;
	base1 = use_library(argv[2], "plugin1_entry", 3, keep, &n1);
	base2 = use_library(argv[3], "plugin2_entry", 5, keep, &n2);
	if (!base1 || !base2)
		return 1;
	printf("same address: %s\n", base1 == base2 ? "yes" : "no");
	printf("calls use_library=2 plugin1_entry=1 plugin1_work=%d plugin2_entry=1 "
	       "plugin2_work=%d\n",
	       n1, n2);
	return 0;
}

#endif
