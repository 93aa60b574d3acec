/* SPDX-License-Identifier: MIT */
/* The library's only output: one line on stderr, never stdout. */
#define _GNU_SOURCE
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void scope_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "scope[%d/%d]: ", (int)getpid(), (int)gettid());

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
