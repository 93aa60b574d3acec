/* SPDX-License-Identifier: MIT */
/* Sampling: a CPU-time timer per thread whose signal records the interrupted stack (libunwind). */
#define _GNU_SOURCE
#include "filter.h"
#include "record.h"

#include <scope/sample.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/*
 * SCOPE_SAMPLE=HZ: each thread gets a timer on its own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID), delivered to it alone (SIGEV_THREAD_ID) with
 * a real-time signal no program is likely to use. The handler takes the
 * interrupted stack with libunwind's local unwinder, loaded with dlopen
 * (the library links libc only), and appends it to the thread's chunk as
 * the hooks append a call: no lock, no allocation. A thread the library
 * itself is running on (busy), or whose chunk is full, skips the sample.
 */

#define SAMPLE_SIGNAL (SIGRTMAX - 5)
#define SAMPLE_MARK   0x5c09e /* sigev_value of our timers: tells them from the program's */

typedef int backtrace_fn(void **, int);
typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);

static long sample_hz;
static backtrace_fn *backtrace;
static sigaction_fn *real_sa;
/* What the program asked for SAMPLE_SIGNAL (signals.c's sigaction asks
 * here): it gets the signals our timers did not send. */
static struct sigaction program_sa;
static int armed;
static __thread timer_t my_timer __attribute__((tls_model("initial-exec")));
static __thread int has_timer __attribute__((tls_model("initial-exec")));

int scope_sample_init(void)
{
	const char *v = scope_getenv("SCOPE_SAMPLE");
	char *end;

	if (!v || !*v || strcmp(v, "0") == 0)
		return 0;
	sample_hz = strtol(v, &end, 10);
	if (*end || sample_hz < 1 || sample_hz > 100000) {
		scope_log("SCOPE_SAMPLE='%s' is not a rate from 1 to 100000 Hz; this run is not "
			  "profiled",
			  v);
		sample_hz = 0;
		return -1;
	}
	return 0;
}

/* The slot after the thread's last record, n records long, or NULL. */
static inline struct scope_rec *take_slots(struct scope_thread *t, uint32_t n)
{
#if defined(__x86_64__)
	uintptr_t r = n * sizeof(struct scope_rec);
	__asm__ volatile("xaddq %0, %1" : "+r"(r), "+m"(t->cur));
	struct scope_rec *first = (struct scope_rec *)r;
#else
	struct scope_rec *first = t->cur;
	t->cur = first + n;
	scope_signal_fence();
#endif
	if (first + n <= scope_room(t))
		return first;
	if (t->cur == first + n)
		t->cur = first;
	return NULL;
}

int scope_sample_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE) || sig != SAMPLE_SIGNAL)
		return 0;
	if (old)
		*old = program_sa;
	if (act)
		program_sa = *act;
	return 1;
}

/* A SAMPLE_SIGNAL that is not a sample: the program's, handled as it asked;
 * by default the signal ends the process, as it would have. */
static SCOPE_NOINST void forward(int sig, siginfo_t *si, void *ctx)
{
	struct sigaction a = program_sa, dfl;

	if (a.sa_flags & SA_SIGINFO) {
		a.sa_sigaction(sig, si, ctx);
	} else if (a.sa_handler == SIG_DFL) {
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		real_sa(sig, &dfl, NULL);
		raise(sig); /* delivered when this handler returns */
	} else if (a.sa_handler != SIG_IGN) {
		a.sa_handler(sig);
	}
}

static SCOPE_NOINST void on_sample(int sig, siginfo_t *si, void *ctx)
{
	struct scope_thread *t = &scope_tls;
	void *pcs[SCOPE_SAMPLE_MAX_FRAMES + 8];
	const ucontext_t *uc = ctx;
	uintptr_t ip;
	struct scope_rec *r, *open;
	int saved = errno, n, k = 0, m;
	uint64_t now = scope_now();

	if (si->si_code != SI_TIMER || si->si_value.sival_int != SAMPLE_MARK) {
		forward(sig, si, ctx);
		goto out;
	}
	if (__atomic_load_n(&t->shared, __ATOMIC_RELAXED) || t->busy || t->lane < 0 || !t->limit)
		goto out;
	t->busy++; /* calls libunwind makes (an instrumented malloc) are not the program's */
	n = backtrace(pcs, (int)(sizeof pcs / sizeof *pcs));
	t->busy--;
#if defined(__x86_64__)
	ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	ip = (uintptr_t)uc->uc_mcontext.pc;
#else
	ip = 0;
#endif
	/* the handler's own frames and the signal's come first */
	while (k < n && k < 8 && (uintptr_t)pcs[k] != ip)
		k++;
	if (k == n || k == 8) {
		pcs[0] = (void *)ip;
		k = 0;
		n = ip ? 1 : 0;
	}
	m = n - k > SCOPE_SAMPLE_MAX_FRAMES ? SCOPE_SAMPLE_MAX_FRAMES : n - k;
	if (m <= 0 || !(r = take_slots(t, 1 + (uint32_t)(m + 1) / 2)))
		goto out;
	for (int i = 0; i < m; i += 2)
		r[1 + i / 2] =
			(struct scope_rec){SCOPE_REC_SAMPLE_2, (uint64_t)(uintptr_t)pcs[k + i],
					   i + 1 < m ? (uint64_t)(uintptr_t)pcs[k + i + 1] : 0};
	open = t->open;
	r[0].start = now;
	r[0].end = open ? scope_rec_addr(open) : 0;
	__atomic_store_n(&r[0].fn, SCOPE_REC_SAMPLE | (uint64_t)m << SCOPE_REC_ADDR_BITS,
			 __ATOMIC_RELEASE);
out:
	errno = saved;
}

void scope_sample_thread(void)
{
	struct sigevent ev;
	struct itimerspec every;
	long ns;

	if (!sample_hz || !backtrace || has_timer)
		return;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SAMPLE_SIGNAL;
	ev.sigev_value.sival_int = SAMPLE_MARK;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &my_timer) != 0)
		return;
	ns = 1000000000L / sample_hz;
	every.it_interval.tv_sec = every.it_value.tv_sec = ns / 1000000000L;
	every.it_interval.tv_nsec = every.it_value.tv_nsec = ns % 1000000000L;
	if (timer_settime(my_timer, 0, &every, NULL) != 0) {
		timer_delete(my_timer);
		return;
	}
	has_timer = 1;
}

void scope_sample_thread_end(void)
{
	if (!has_timer)
		return;
	timer_delete(my_timer);
	has_timer = 0;
}

/* Timers are not inherited: the child's thread gets its own. */
static SCOPE_NOINST void sample_forked(void)
{
	has_timer = 0;
	scope_sample_thread();
}

void scope_sample_start(void)
{
	static int once;
	struct sigaction sa;
	sigaction_fn *real;
	void *lib, *warm[4];

	if (!sample_hz || once)
		return;
	once = 1;
	lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	backtrace = lib ? (backtrace_fn *)dlsym(lib, "unw_backtrace") : NULL;
	real = real_sa = (sigaction_fn *)dlsym(RTLD_NEXT, "sigaction");
	if (!backtrace || !real) {
		scope_log(
			"SCOPE_SAMPLE: cannot load libunwind.so.8 (install libunwind8); no samples "
			"are taken");
		backtrace = NULL;
		return;
	}
	backtrace(warm, 4); /* its first call sets itself up, outside any handler */
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (real(SAMPLE_SIGNAL, &sa, &program_sa) != 0) {
		backtrace = NULL;
		return;
	}
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	pthread_atfork(NULL, NULL, sample_forked);
	scope_sample_thread();
}
