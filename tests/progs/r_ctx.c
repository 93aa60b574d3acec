/* SPDX-License-Identifier: MIT */
/*
 * Stack switches with swapcontext: main resumes a coroutine four times; the
 * coroutine (co_entry -> co_body) calls co_leaf() and yields back three
 * times, then returns, which ends its context. Both sides make calls while
 * the other side's frames are suspended on another stack.
 *
 * Prints "calls NAME=N ..." for what it counts.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "progs.h"

static ucontext_t main_ctx, co_ctx;
static unsigned long n_co_entry, n_co_body, n_co_leaf, n_main_leaf, n_resume;
volatile unsigned long ctx_sink;

NOINLINE void co_leaf(void)
{
	n_co_leaf++;
	ctx_sink++;
}

NOINLINE void co_body(void)
{
	n_co_body++;
	for (int i = 0; i < 3; i++) {
		co_leaf();
		swapcontext(&co_ctx, &main_ctx); /* yield */
	}
}

NOINLINE void co_entry(void)
{
	n_co_entry++;
	co_body();
}

NOINLINE void main_leaf(void)
{
	n_main_leaf++;
	ctx_sink++;
}

NOINLINE void resume(void)
{
	n_resume++;
	swapcontext(&main_ctx, &co_ctx);
}

int main(void)
{
	static char stack[256 * 1024];

	if (getcontext(&co_ctx) != 0)
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof stack;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_entry, 0);
	for (int i = 0; i < 4; i++) {
		main_leaf();
		resume();
	}
	main_leaf();
	printf("calls co_entry=%lu co_body=%lu co_leaf=%lu main_leaf=%lu resume=%lu main=1\n",
	       n_co_entry, n_co_body, n_co_leaf, n_main_leaf, n_resume);
	return 0;
}
