/* SPDX-License-Identifier: MIT */
/* Captures the module map: every mapped object's path, load bias, address range and build-id. */
#define _GNU_SOURCE
#include "clock.h"
#include "state.h"

#include <dlfcn.h>

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

/* Finds NT_GNU_BUILD_ID in the object's PT_NOTE segments; "" when it has none. */
SCOPE_NOINST void scope_module_build_id(const struct dl_phdr_info *info, char *out, size_t cap)
{
	out[0] = '\0';
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

/* The path as one line of the modules area: a newline or a backslash in
 * it (both allowed in file names) is written as \n or \\. Returns -1
 * when it does not fit. */
static SCOPE_NOINST int escape(char *out, size_t cap, const char *path)
{
	size_t n = 0;

	for (; *path; path++) {
		int special = *path == '\n' || *path == '\\';
		if (n + 2 >= cap)
			return -1;
		if (special)
			out[n++] = '\\';
		out[n++] = *path == '\n' ? 'n' : *path;
	}
	out[n] = '\0';
	return 0;
}

struct capture {
	struct scope_process *p;
	uintptr_t only;	 /* with unload: the load bias of the one object wanted */
	uint64_t unload; /* tick it goes away at, 0 = still mapped at exit */
};

static SCOPE_NOINST int one_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct capture *c = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	char path[PATH_MAX], id[130], line[2 * PATH_MAX + 200], escaped[2 * PATH_MAX];
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
	if (hi == 0 || (c->unload && info->dlpi_addr != c->only))
		return 0;
	if (!name || !*name) {
		/* The main program is the object without a name. */
		ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
		if (k <= 0)
			return 0;
		path[k] = '\0';
		name = path;
	}
	if (name[0] != '/') {
		/* dlopen("./lib.so") names it as given; the vDSO has no file */
		if (!realpath(name, path))
			return 0;
		name = path;
	}
	scope_module_build_id(info, id, sizeof id);
	if (!id[0])
		strcpy(id, "-");
	if (escape(escaped, sizeof escaped, name) != 0)
		return 0;
	n = snprintf(line, sizeof line, "%lx %lx %lx %s %llx %s\n", (unsigned long)info->dlpi_addr,
		     (unsigned long)(info->dlpi_addr + lo), (unsigned long)(info->dlpi_addr + hi),
		     id, (unsigned long long)c->unload, escaped);
	if (n > 0 && (size_t)n < sizeof line)
		scope_arena_append_module(c->p, line, (size_t)n);
	return 0;
}

void scope_modules_capture(struct scope_process *p)
{
	struct capture c = {p, 0, 0};
	dl_iterate_phdr(one_module, &c);
}

typedef int (*dlclose_fn)(void *);
static dlclose_fn real_dlclose;

/* Done from scope_init, before the program starts threads. */
void scope_modules_resolve(void)
{
	if (!real_dlclose)
		real_dlclose = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
}

/*
 * A library about to be closed is written down with the time it may go:
 * its functions are named from it even when it is unloaded before exit and
 * another library takes its place. Loads are not wrapped: dlopen resolves
 * $ORIGIN and RUNPATH against its caller, which a wrapper would change.
 */
SCOPE_EXPORT int dlclose(void *handle)
{
	struct scope_process *p = &scope_proc;
	struct link_map *lm = NULL;

	scope_modules_resolve();
	if (!real_dlclose)
		return -1;
	if (p->hdr && !scope_stopped() && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
		struct capture c = {p, (uintptr_t)lm->l_addr, scope_now()};
		scope_busy_begin(&scope_tls);
		dl_iterate_phdr(one_module, &c);
		scope_busy_end(&scope_tls);
	}
	return real_dlclose(handle);
}
