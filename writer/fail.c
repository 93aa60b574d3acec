/* SPDX-License-Identifier: MIT */
/* The first reason the writer failed, said once by main with where the data is kept. */
#include "writer.h"

#include <stdarg.h>
#include <stdio.h>

/* Each thread's own: the grouping of a running process (alongside.c)
 * fails apart from the writing of another. */
static __thread char why[512];

void writer_fail(const char *fmt, ...)
{
	va_list ap;

	if (why[0])
		return; /* the first cause is the one to tell */
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
}

const char *writer_failure(void)
{
	return why[0] ? why : NULL;
}

void writer_fail_reset(void)
{
	why[0] = '\0';
}
