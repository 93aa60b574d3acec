/* SPDX-License-Identifier: MIT */
/* Unwinds the crashing thread offline from the arena's crash snapshot, with libdw. */
#define _GNU_SOURCE
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <string.h>

/*
 * What the library saved: registers in DWARF numbering and a copy of the
 * stack from sp upward. libdw asks for the registers once and for stack
 * words while it unwinds; a word outside the copy is unknown, which ends
 * the walk there instead of guessing.
 */
struct snapshot {
	const uint64_t *regs;
	unsigned nregs;
	const unsigned char *stack;
	uint64_t sp, bytes;
	pid_t tid;
};

struct frames {
	uint64_t *pcs;
	size_t n, max;
};

#if defined(__x86_64__)
#define UNWIND_NREGS 17 /* rax..r15, rip */
#define UNWIND_PC    16
#endif

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	const struct snapshot *s = arg;
	(void)dwfl;

	if (*thread_arg)
		return 0; /* one thread only: the one the signal hit */
	*thread_arg = arg;
	return s->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out, void *arg)
{
	const struct snapshot *s = arg;
	uint64_t word;
	(void)dwfl;

	if (addr < s->sp || s->bytes < sizeof word || addr - s->sp > s->bytes - sizeof word)
		return false;
	memcpy(&word, s->stack + (addr - s->sp), sizeof word);
	*out = word;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct snapshot *s = arg;
	Dwarf_Word regs[SCOPE_CRASH_REGS];

	for (unsigned i = 0; i < s->nregs; i++)
		regs[i] = s->regs[i];
	return dwfl_thread_state_registers(thread, 0, s->nregs, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int one_frame(Dwfl_Frame *state, void *arg)
{
	struct frames *f = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	f->pcs[f->n++] = pc;
	return f->n < f->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Every module still mapped at the end, at its load address: the crash
 * happened then, so those are the ones its stack runs through. */
static Dwfl *report_modules(const struct module *mods, size_t nmods)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	for (size_t i = 0; i < nmods; i++)
		if (!mods[i].unload)
			dwfl_report_elf(dwfl, mods[i].path, mods[i].path, -1, mods[i].bias, false);
	if (dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* The saved snapshot, when the arena holds one this writer can unwind. */
static int snapshot_of(const struct arena *a, struct snapshot *s)
{
#if defined(UNWIND_NREGS)
	const struct scope_arena_header *h = a->hdr;

	if (h->crash_nregs != UNWIND_NREGS)
		return -1;
	s->regs = h->crash_regs;
	s->nregs = h->crash_nregs;
	s->sp = h->crash_sp;
	/* the crash area's place was checked when the arena was opened */
	s->bytes = h->crash_stack_bytes <= h->crash_cap ? h->crash_stack_bytes : 0;
	s->stack = (const unsigned char *)a->base + h->crash_off;
	s->tid = h->pid > 0 ? h->pid : 1;
	return 0;
#else
	(void)a;
	(void)s;
	return -1;
#endif
}

size_t unwind_crash(const struct arena *a, const struct module *mods, size_t nmods, uint64_t *pcs,
		    size_t max)
{
	struct snapshot s;
	struct frames f = {pcs, 0, max};
	Dwfl *dwfl;

	if (max == 0 || snapshot_of(a, &s) != 0)
		return 0;
	dwfl = report_modules(mods, nmods);
	if (dwfl && dwfl_attach_state(dwfl, NULL, s.tid, &thread_callbacks, &s))
		dwfl_getthread_frames(dwfl, s.tid, one_frame, &f);
	if (dwfl)
		dwfl_end(dwfl);
#if defined(UNWIND_PC)
	/* no module to unwind through: the interrupted instruction is still known */
	if (f.n == 0 && s.regs[UNWIND_PC] != 0)
		pcs[f.n++] = s.regs[UNWIND_PC];
#endif
	return f.n;
}
