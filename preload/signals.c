/* SPDX-License-Identifier: MIT */
/* Fatal signals: save the profile, then let the signal do what it would have done. */
#define _GNU_SOURCE
#include "state.h"

#include <signal.h>
#include <string.h>

/* Crashes: always ours to catch, the program's own handlers are chained. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Requests to stop: caught only while the program leaves them at their
 * default, which is to die. */
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

static struct sigaction previous[NSIG];

static SCOPE_NOINST void on_fatal(int sig, siginfo_t *info, void *ctx)
{
	const struct sigaction *old = &previous[sig];

	scope_finish(SCOPE_EXIT_SIGNAL, sig);
	sigaction(sig, old, NULL);
	if (old->sa_handler == SIG_IGN)
		return;
	if (old->sa_handler != SIG_DFL) {
		if (old->sa_flags & SA_SIGINFO)
			old->sa_sigaction(sig, info, ctx);
		else
			old->sa_handler(sig);
		return;
	}
	/* A fault comes back when the instruction runs again, now with the
	 * default action; a sent signal has to be sent again. */
	if (info->si_code <= 0 || sig == SIGABRT || sig == SIGTERM || sig == SIGINT ||
	    sig == SIGHUP)
		raise(sig);
}

static SCOPE_NOINST void catch (int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigaction(sig, &sa, &previous[sig]);
}

void scope_signals_init(void)
{
	for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals; i++)
		catch (crash_signals[i]);
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
		struct sigaction cur;
		if (sigaction(stop_signals[i], NULL, &cur) == 0 && cur.sa_handler == SIG_DFL &&
		    !(cur.sa_flags & SA_SIGINFO))
			catch (stop_signals[i]);
	}
}
