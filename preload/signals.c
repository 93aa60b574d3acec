/* SPDX-License-Identifier: MIT */
/* Fatal signals: save the profile, then let the signal do what it would have done. */
#define _GNU_SOURCE
#include "state.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define SCOPE_EXPORT __attribute__((visibility("default"))) SCOPE_NOINST

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction;

/* Crashes: always caught; a handler the program sets is run in their place
 * and the profile is saved only when the signal would end the program. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Requests to stop: caught only while the program leaves them at their
 * default, which is to die. */
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

/* What the program asked for, for the signals the library holds. */
static struct sigaction wanted[NSIG];
static volatile sig_atomic_t held[NSIG];

static SCOPE_NOINST int is_crash(int sig)
{
	for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals; i++)
		if (crash_signals[i] == sig)
			return 1;
	return 0;
}

static SCOPE_NOINST int is_stop(int sig)
{
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
		if (stop_signals[i] == sig)
			return 1;
	return 0;
}

/* libunwind, loaded at start-up (never from the handler) if installed. */
static int (*unw_init2)(unw_cursor_t *, unw_context_t *, int);
static int (*unw_step_fn)(unw_cursor_t *);
static int (*unw_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

#define NAME_OF(fn) NAME_OF2(UNW_OBJ(fn))
#define NAME_OF2(x) NAME_OF3(x)
#define NAME_OF3(x) #x

static SCOPE_NOINST void load_unwinder(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	unw_step_fn = (int (*)(unw_cursor_t *))dlsym(h, NAME_OF(step));
	unw_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(h, NAME_OF(get_reg));
	unw_init2 = (int (*)(unw_cursor_t *, unw_context_t *, int))dlsym(h, NAME_OF(init_local2));
}

/* The crashing thread's stack, from the interrupted context, into the
 * arena's header. */
static SCOPE_NOINST void save_stack(int sig, void *ctx)
{
	struct scope_arena_header *h = scope_proc.hdr;
	unw_cursor_t cursor;
	uint32_t n = 0;

	if (!h || h->crash_signal)
		return;
	h->crash_signal = (uint32_t)sig;
	h->crash_lane = scope_thread_lane();
	if (!unw_init2 || !unw_step_fn || !unw_reg ||
	    unw_init2(&cursor, (unw_context_t *)ctx, UNW_INIT_SIGNAL_FRAME) != 0)
		return;
	do {
		unw_word_t ip;
		if (unw_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
		h->crash_stack[n++] = (uint64_t)ip;
	} while (n < SCOPE_CRASH_FRAMES && unw_step_fn(&cursor) > 0);
	h->crash_frames = n;
}

static SCOPE_NOINST void on_fatal(int sig, siginfo_t *info, void *ctx)
{
	const struct sigaction *w = &wanted[sig];

	if (w->sa_handler == SIG_IGN && !is_crash(sig))
		return;
	if (w->sa_handler != SIG_DFL && w->sa_handler != SIG_IGN) {
		if (w->sa_flags & SA_SIGINFO)
			w->sa_sigaction(sig, info, ctx);
		else
			w->sa_handler(sig);
		return;
	}
	save_stack(sig, ctx);
	scope_finish(SCOPE_EXIT_SIGNAL, sig);
	held[sig] = 0;
	real_sigaction(sig, w, NULL);
	/* A fault comes back when the instruction runs again, now with the
	 * default action; a sent signal has to be sent again. */
	if (info->si_code <= 0 || !is_crash(sig) || sig == SIGABRT)
		raise(sig);
}

/*
 * A stack for the handler, where the program has none of its own: a thread
 * that overflowed its stack can run no handler on it, and would die with
 * its calls unsaved. The main thread's is static; another thread's is
 * mapped when it starts (untouched pages cost nothing) and unmapped when
 * it ends.
 */
#define ALT_STACK_BYTES (128u << 10)

static char main_alt_stack[ALT_STACK_BYTES];
static int armed; /* the fatal signals are held: threads want a stack too */

static SCOPE_NOINST int alt_stack_on(void *sp)
{
	stack_t cur, st = {.ss_sp = sp, .ss_size = ALT_STACK_BYTES};

	if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
		return 0;
	return sigaltstack(&st, NULL) == 0;
}

void *scope_signals_thread_begin(void)
{
	void *sp;

	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED))
		return NULL;
	sp = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);

	if (sp == MAP_FAILED)
		return NULL;
	if (alt_stack_on(sp))
		return sp;
	munmap(sp, ALT_STACK_BYTES);
	return NULL;
}

void scope_signals_thread_end(void *sp)
{
	stack_t off = {.ss_flags = SS_DISABLE};

	if (!sp)
		return;
	sigaltstack(&off, NULL);
	munmap(sp, ALT_STACK_BYTES);
}

static SCOPE_NOINST void hold(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	if (real_sigaction(sig, &sa, &wanted[sig]) == 0)
		held[sig] = 1;
}

static SCOPE_NOINST int resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction ? 0 : -1;
}

void scope_signals_init(void)
{
	if (resolve() != 0)
		return;
	load_unwinder();
	alt_stack_on(main_alt_stack);
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals; i++)
		hold(crash_signals[i]);
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
		struct sigaction cur;
		if (real_sigaction(stop_signals[i], NULL, &cur) == 0 && cur.sa_handler == SIG_DFL &&
		    !(cur.sa_flags & SA_SIGINFO))
			hold(stop_signals[i]);
	}
}

/*
 * The program's view of the signals the library holds: it reads back what
 * it set, and what it sets is what on_fatal runs. A stop signal the
 * program takes over (a handler, or ignoring it) is handed to it whole;
 * set back to default, the library holds it again.
 */
SCOPE_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int takes_over;

	if (resolve() != 0)
		return -1;
	if (sig <= 0 || sig >= NSIG || (!is_crash(sig) && !is_stop(sig)) ||
	    !__atomic_load_n(&armed, __ATOMIC_RELAXED) ||
	    (!held[sig] && !(act && is_stop(sig) && act->sa_handler == SIG_DFL)))
		return real_sigaction(sig, act, old);
	if (!held[sig]) {
		/* a stop signal given back to its default: held again */
		int rc = real_sigaction(sig, NULL, old);
		if (rc == 0) {
			hold(sig);
			wanted[sig] = *act;
		}
		return rc;
	}
	if (old)
		*old = wanted[sig];
	if (!act)
		return 0;
	takes_over = is_stop(sig) && (act->sa_handler != SIG_DFL || (act->sa_flags & SA_SIGINFO));
	if (takes_over) {
		held[sig] = 0;
		return real_sigaction(sig, act, NULL);
	}
	wanted[sig] = *act;
	return 0;
}

SCOPE_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
