// SPDX-License-Identifier: MIT
// Known heap use for SCOPE_HEAP=1: each function allocates, frees and leaks known blocks, from
// before main, several threads, a signal handler, C++'s new and delete (a new-handler too), and
// (with "fork") a forked child.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progs.h"

// Every block passes through here: the compiler may not drop an allocation
// whose pointer it cannot follow.
static void *volatile sink;

NOINLINE static void *keep(void *p)
{
	sink = p;
	return p; /* not sink, which another thread may have set meanwhile */
}

static void *early_block;

// Before main: 100 bytes, freed by main.
__attribute__((constructor)) NOINLINE static void early()
{
	early_block = keep(malloc(100));
}

// 3 blocks of 1000, one freed: 2000 bytes leak. A realloc that fails
// leaves its block as it was: still live, not freed.
NOINLINE void leaky()
{
	void *a = keep(malloc(1000)), *b = keep(malloc(1000));
	volatile size_t huge = SIZE_MAX / 2;
	keep(malloc(1000));
	if (keep(realloc(a, huge)))
		exit(7);
	free(keep(b));
}

// 64 KiB and 32 KiB live at once (peak 98304), then 4 KiB; nothing leaks.
NOINLINE void peaky()
{
	void *big = keep(malloc(65536)); // line: peaky-big
	void *mid = keep(calloc(1, 32768));
	memset(big, 1, 65536);
	free(keep(mid));
	free(keep(big));
	free(keep(malloc(4096)));
}

// malloc(100), grown to 400 by realloc, freed: 2 allocations, 500 bytes, peak 400.
NOINLINE void grows()
{
	void *p = keep(malloc(100));
	p = keep(realloc(p, 400));
	free(keep(p));
}

// The aligned allocators: 1024 + 2048 + 512 bytes live at once, all freed.
NOINLINE void aligned()
{
	void *a = nullptr;
	if (posix_memalign(&a, 64, 1024) != 0)
		exit(3);
	void *b = keep(aligned_alloc(64, 2048)), *c = keep(memalign(64, 512));
	free(keep(a));
	free(keep(b));
	free(keep(c));
}

struct Blob {
	char bytes[256];
};

// new and delete: 256 + 40 bytes freed, 77 leaked; a new that throws
// bad_alloc leaves tracking as it was: 33 more bytes after it.
NOINLINE void cxx()
{
	Blob *blob = static_cast<Blob *>(keep(new Blob));
	int *ints = static_cast<int *>(keep(new int[10]));
	keep(new char[77]);
	delete static_cast<Blob *>(keep(blob));
	delete[] static_cast<int *>(keep(ints));
	try {
		volatile size_t huge = SIZE_MAX / 2;
		keep(new char[huge]);
		exit(4);
	} catch (const std::bad_alloc &) {
	}
	delete[] static_cast<char *>(keep(new char[33]));
}

// A new-handler, run inside the runtime's new when malloc fails: it frees a
// reserve of 1000 bytes and gives up, so the runtime throws bad_alloc.
// The reserve's free counts; 20 bytes after it, allocated and freed.
static void *reserve;

NOINLINE void give_up()
{
	free(keep(reserve));
	reserve = nullptr;
	std::set_new_handler(nullptr);
}

NOINLINE void handled()
{
	reserve = keep(malloc(1000));
	std::set_new_handler(give_up);
	try {
		volatile size_t huge = SIZE_MAX / 2;
		keep(new char[huge]);
		exit(8);
	} catch (const std::bad_alloc &) {
	}
	if (reserve)
		exit(9);
	delete[] static_cast<char *>(keep(new char[20]));
}

// 10 blocks of 128 on each thread, all freed.
NOINLINE void *worker(void *)
{
	void *blocks[10];
	for (auto &b : blocks)
		b = keep(malloc(128));
	for (auto &b : blocks)
		free(keep(b));
	return nullptr;
}

NOINLINE void threads()
{
	pthread_t t[4];
	for (auto &x : t)
		if (pthread_create(&x, nullptr, worker, nullptr) != 0)
			exit(5);
	for (auto &x : t)
		pthread_join(x, nullptr);
}

// A handler that allocates 50 bytes and frees them.
NOINLINE void on_usr1(int)
{
	free(keep(malloc(50)));
}

NOINLINE void signalled()
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
}

// In a forked child: 5000 bytes leaked, and a block of the parent's freed
// (the child's tracking never saw it allocated).
NOINLINE void forked_child(void *parents)
{
	keep(malloc(5000));
	free(keep(parents));
}

NOINLINE void forks()
{
	void *parents = keep(malloc(64));
	pid_t pid = fork();

	if (pid == 0) {
		forked_child(parents);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, nullptr, 0) != pid)
		exit(6);
	free(keep(parents));
}

// Four threads allocating, growing and freeing at once ("churn"): a known
// mix of malloc, calloc, realloc and new[]/delete[], every block freed.
// Prints the totals it made, which the profile must hold exactly.
struct churned {
	unsigned seed;
	uint64_t allocations, frees, bytes;
};

NOINLINE void *churn(void *arg)
{
	churned *c = static_cast<churned *>(arg);
	void *held[64] = {};
	unsigned s = c->seed;

	for (int i = 0; i < 20000; i++) {
		s = s * 1103515245u + 12345u;
		void *&h = held[(s >> 8) & 63];
		size_t n = 16 + ((s >> 16) & 4095);
		c->allocations++;
		c->bytes += n;
		switch ((s >> 3) & 3) {
		case 0:
			c->frees += h != nullptr;
			free(h);
			h = keep(malloc(n));
			break;
		case 1:
			c->frees += h != nullptr; // a realloc frees its old block
			h = keep(realloc(h, n));
			break;
		case 2:
			c->frees++;
			delete[] static_cast<char *>(keep(new char[n]));
			break;
		default:
			c->frees += h != nullptr;
			free(h);
			h = keep(calloc(1, n));
			break;
		}
	}
	for (void *h : held) {
		c->frees += h != nullptr;
		free(h);
	}
	return nullptr;
}

NOINLINE int churning()
{
	pthread_t t[4];
	churned c[4] = {{1, 0, 0, 0}, {2, 0, 0, 0}, {3, 0, 0, 0}, {4, 0, 0, 0}};
	uint64_t allocations = 0, frees = 0, bytes = 0;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], nullptr, churn, &c[i]) != 0)
			return 5;
	for (auto &x : t)
		pthread_join(x, nullptr);
	for (auto &x : c) {
		allocations += x.allocations;
		frees += x.frees;
		bytes += x.bytes;
	}
	printf("churn %llu %llu %llu\n", (unsigned long long)allocations, (unsigned long long)frees,
	       (unsigned long long)bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "churn") == 0)
		return churning();
	free(keep(early_block));
	leaky();
	peaky();
	grows();
	aligned();
	cxx();
	handled();
	threads();
	signalled();
	if (argc > 1 && strcmp(argv[1], "fork") == 0)
		forks();
	puts("heap ok");
	return 0;
}
