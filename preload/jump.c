/* SPDX-License-Identifier: MIT */
/* longjmp and siglongjmp: the calls they leave end at the jump, not at some later exit. */
#define _GNU_SOURCE
#include "record.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdlib.h>

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

static jump_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;

typedef void *(*begin_catch_fn)(void *);
static begin_catch_fn real_begin_catch;

/* Done from scope_init, before the program starts threads. */
void scope_jump_resolve(void)
{
	if (!real_begin_catch)
		real_begin_catch = (begin_catch_fn)dlsym(RTLD_NEXT, "__cxa_begin_catch");
	if (real_longjmp)
		return;
	real__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
	real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
}

/*
 * The stack pointer the jump returns to. glibc keeps it in the jmp_buf
 * mangled with the thread's pointer guard: on x86-64 xor-ed with it and
 * rotated left by 17 bits. 0 where the layout is not known: the calls left
 * then end at the next exit that finds its frame, as they would anyway.
 */
static SCOPE_NOINST uintptr_t jump_target(struct __jmp_buf_tag *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard;
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << (64 - 17))) ^ guard;
#else
	(void)env;
	return 0;
#endif
}

/* Closes, now, every open call whose frame lies below the target. */
static SCOPE_NOINST void leave_below(uintptr_t target)
{
	struct scope_thread *t = &scope_tls;
	uint64_t now = scope_now();

	if (!target || t->ignored)
		return;
	while (t->open) {
		uint32_t depth = (uint32_t)(t->open->fn >> SCOPE_REC_ADDR_BITS);
		if (t->frames[depth & (SCOPE_FRAME_SLOTS - 1)] >= target)
			break;
		scope_record_close(t, t->open, now);
	}
}

/* *fn is read after the look-up: a jump made before scope_init (from
 * another library's constructor) finds it too. */
static SCOPE_NOINST __attribute__((noreturn)) void jump(jump_fn *fn, struct __jmp_buf_tag *env,
							int val)
{
	scope_jump_resolve();
	leave_below(jump_target(env));
	if (*fn)
		(*fn)(env, val);
	abort(); /* no longjmp to call: nothing sane is left to do */
}

SCOPE_EXPORT void longjmp(jmp_buf env, int val)
{
	jump(&real_longjmp, env, val);
}

SCOPE_EXPORT void _longjmp(jmp_buf env, int val)
{
	jump(&real__longjmp, env, val);
}

SCOPE_EXPORT void siglongjmp(sigjmp_buf env, int val)
{
	jump(&real_siglongjmp, env, val);
}

SCOPE_EXPORT void __longjmp_chk(jmp_buf env, int val)
{
	jump(&real_longjmp_chk, env, val);
}

/* A C++ catch: the frames the exception unwound are left. gcc calls their
 * exit hooks while unwinding, clang does not; then they end here, below
 * the frame of the function that catches. */
SCOPE_EXPORT void *__cxa_begin_catch(void *exception)
{
	scope_jump_resolve();
	leave_below(scope_caller_frame());
	return real_begin_catch ? real_begin_catch(exception) : exception;
}
