/* SPDX-License-Identifier: MIT */
/* Fatal signals: save the profile, then let the signal do what it would have done. */
#define _GNU_SOURCE
#include "filter.h"
#include "state.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

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

/*
 * The crash snapshot. The handler only copies what the writer needs to
 * unwind the crashing thread offline (libdw): the interrupted registers
 * and the top of its stack. Loading an unwinder here would be too late
 * (dlopen and malloc after heap corruption deadlock) and loading it at
 * start-up puts it into every program.
 */
#define SNAP_PAGE 4096u

#if defined(__x86_64__)
/* ucontext's registers in DWARF order: rax, rdx, rcx, rbx, rsi, rdi, rbp,
 * rsp, r8-r15, then rip as the return address column. */
static const int dwarf_gregs[] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
				  REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
				  REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
#define DWARF_SP 7

/* Returns the stack pointer, or 0 when the registers are not saved. */
static SCOPE_NOINST uintptr_t save_regs(struct scope_arena_header *h, const ucontext_t *uc)
{
	uint32_t n = sizeof dwarf_gregs / sizeof *dwarf_gregs;

	for (uint32_t i = 0; i < n; i++)
		h->crash_regs[i] = (uint64_t)uc->uc_mcontext.gregs[dwarf_gregs[i]];
	h->crash_nregs = n;
	return (uintptr_t)h->crash_regs[DWARF_SP];
}
#else
/* Elsewhere the crash stack is left empty rather than guessed. */
static SCOPE_NOINST uintptr_t save_regs(struct scope_arena_header *h, const ucontext_t *uc)
{
	(void)h;
	(void)uc;
	return 0;
}
#endif

/*
 * Reads [from, to) of this process into dst with process_vm_readv, one
 * remote piece per page, so that it stops cleanly before the first page
 * that cannot be read (the end of the stack's mapping, a guard page)
 * where a load would fault inside the handler. Returns the bytes read, or
 * -1 with errno.
 */
static SCOPE_NOINST ssize_t read_self(char *dst, uintptr_t from, uintptr_t to)
{
	struct iovec local = {dst, to - from};
	struct iovec remote[SCOPE_CRASH_STACK_BYTES / SNAP_PAGE + 1];
	unsigned long n = 0;

	for (uintptr_t a = from; a < to && n < sizeof remote / sizeof *remote; n++) {
		uintptr_t next = (a & ~(uintptr_t)(SNAP_PAGE - 1)) + SNAP_PAGE;
		if (next > to)
			next = to;
		remote[n] = (struct iovec){(void *)a, next - a};
		a = next;
	}
	return process_vm_readv(getpid(), &local, 1, remote, n, 0);
}

/* Where process_vm_readv is refused (a seccomp filter): plain loads, only
 * inside the thread's own known stack, where every page is mapped. Not
 * checked by ASan: the stack holds its poisoned redzones. */
__attribute__((no_sanitize_address)) static SCOPE_NOINST size_t copy_own_stack(char *dst,
									       uintptr_t from,
									       uintptr_t to)
{
	const struct scope_thread *t = &scope_tls;
	size_t n = 0;

	if (!t->stack_hi || from < t->stack_lo || from >= t->stack_hi)
		return 0;
	if (to > t->stack_hi)
		to = t->stack_hi;
	for (uintptr_t a = from; a + 8 <= to; a += 8, n += 8)
		*(uint64_t *)(dst + n) = *(const volatile uint64_t *)a;
	return n;
}

/*
 * Copies the stack from sp upward into the crash area: at most its size,
 * and not past the thread's stack top when that is known. A stack
 * pointer inside an unreadable page (an overflow into the guard page)
 * starts the copy at the next readable page.
 */
static SCOPE_NOINST void save_stack_bytes(struct scope_arena_header *h, uintptr_t sp)
{
	const struct scope_thread *t = &scope_tls;
	char *dst = scope_proc.base + h->crash_off;
	uint64_t cap =
		h->crash_cap < SCOPE_CRASH_STACK_BYTES ? h->crash_cap : SCOPE_CRASH_STACK_BYTES;
	uintptr_t to = sp + cap < sp ? UINTPTR_MAX : sp + cap;

	if (t->stack_hi && sp < t->stack_hi && to > t->stack_hi)
		to = t->stack_hi;
	for (uintptr_t from = sp; from < to;
	     from = (from & ~(uintptr_t)(SNAP_PAGE - 1)) + SNAP_PAGE) {
		ssize_t got = read_self(dst, from, to);
		if (got > 0) {
			h->crash_sp = from;
			h->crash_stack_bytes = (uint64_t)got;
			return;
		}
		if (got < 0 && errno != EFAULT) {
			h->crash_sp = sp;
			h->crash_stack_bytes = copy_own_stack(dst, sp, to);
			return;
		}
	}
}

/* The crashing thread's registers and stack, for the writer to unwind. */
static SCOPE_NOINST void save_stack(int sig, void *ctx)
{
	struct scope_arena_header *h = scope_proc.hdr;
	int saved_errno = errno;
	uintptr_t sp;

	if (!h || h->crash_signal)
		return;
	h->crash_signal = (uint32_t)sig;
	h->crash_lane = scope_thread_lane();
	if (ctx && (sp = save_regs(h, ctx)) != 0)
		save_stack_bytes(h, sp);
	errno = saved_errno;
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
	if (scope_sample_sigaction(sig, act, old))
		return 0;
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
