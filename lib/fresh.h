/* SPDX-License-Identifier: MIT */
/* Memory about to be written whole: mapped in one system call, not a fault a page. */
#ifndef SCOPE_FRESH_H
#define SCOPE_FRESH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Below this a buffer's pages fault in quickly enough. */
#define SCOPE_FRESH_MIN (256u << 10)

/*
 * The whole pages of [p, p + len), which the caller is about to fill. A
 * first write to a page is a fault, microseconds each in a virtual machine,
 * and the writer's columns are tens of MiB: huge pages, where the kernel
 * has them, and one MADV_POPULATE_WRITE map it all at once. Advice only:
 * a kernel without either leaves the pages to fault as before.
 */
static inline void scope_fresh(void *p, size_t len)
{
	uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)4095;

	if (len < SCOPE_FRESH_MIN || hi <= lo)
		return;
	(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

#endif
