/* SPDX-License-Identifier: MIT */
/* Captures the module map: every mapped object's path, load bias, address range and build-id. */
#define _GNU_SOURCE
#include "state.h"

#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static SCOPE_NOINST void hex(char *out, const unsigned char *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Finds NT_GNU_BUILD_ID in the object's PT_NOTE segments. */
static SCOPE_NOINST void build_id(const struct dl_phdr_info *info, char *out, size_t cap)
{
	strcpy(out, "-");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *n;
			const unsigned char *desc =
				(const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz * 2 + 1 <= cap &&
			    (const char *)desc + n->n_descsz <= end) {
				hex(out, desc, n->n_descsz);
				return;
			}
			p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static SCOPE_NOINST int one_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scope_process *p = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char path[PATH_MAX], id[130], line[PATH_MAX + 200];
	const char *name = info->dlpi_name;
	int n;
	(void)size;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < lo)
			lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > hi)
			hi = ph->p_vaddr + ph->p_memsz;
	}
	if (hi == 0)
		return 0;
	if (!name || !*name) {
		/* The main program is the object without a name. */
		ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
		if (k <= 0)
			return 0;
		path[k] = '\0';
		name = path;
	}
	if (name[0] != '/')
		return 0; /* the vDSO: nothing to symbolize from a file */
	build_id(info, id, sizeof id);
	n = snprintf(line, sizeof line, "%lx %lx %lx %s %s\n", (unsigned long)info->dlpi_addr,
		     (unsigned long)(info->dlpi_addr + lo), (unsigned long)(info->dlpi_addr + hi),
		     id, name);
	if (n > 0 && (size_t)n < sizeof line)
		scope_arena_append_module(p, line, (size_t)n);
	return 0;
}

void scope_modules_capture(struct scope_process *p)
{
	dl_iterate_phdr(one_module, p);
}
