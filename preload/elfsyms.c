/* SPDX-License-Identifier: MIT */
/* Function names of loaded code from the modules' own ELF symbol tables, for the filters. */
#define _GNU_SOURCE
#include "filter.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A function symbol: [value, value + size) in the module's link-time addresses. */
struct elfsym {
	uint64_t value, size;
	const char *name;
};

struct elfmod {
	uintptr_t bias;
	uintptr_t lo, hi; /* the loaded segments' span */
	void *map[2];	  /* the file, and its separate debug file */
	size_t maplen[2];
	struct elfsym *syms;
	size_t nsyms;
};

#define MAX_MODULES 512
static struct elfmod modules[MAX_MODULES];
static size_t nmodules;

struct found {
	uintptr_t addr, bias, lo, hi;
	char path[SCOPE_PATH_BYTES];
	char build_id[81];
};

static SCOPE_NOINST int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int inside = 0;
	(void)size;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		lo = a < lo ? a : lo;
		hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
		if (f->addr >= a && f->addr < a + ph->p_memsz)
			inside = 1;
	}
	if (!inside)
		return 0;
	f->bias = info->dlpi_addr;
	f->lo = lo;
	f->hi = hi;
	snprintf(f->path, sizeof f->path, "%s",
		 info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
	scope_module_build_id(info, f->build_id, sizeof f->build_id);
	return 1;
}

static SCOPE_NOINST void *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return m;
}

/* The section of type in the ELF image m, NULL when it has none or is not
 * one this library can read. */
static SCOPE_NOINST const ElfW(Shdr) * section(const void *m, size_t len, uint32_t type)
{
	const ElfW(Ehdr) *e = m;
	const ElfW(Shdr) * sh;

	if (memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 || e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_shentsize != sizeof(ElfW(Shdr)) || e->e_shoff >= len ||
	    e->e_shnum > (len - e->e_shoff) / sizeof(ElfW(Shdr)))
		return NULL;
	sh = (const ElfW(Shdr) *)((const char *)m + e->e_shoff);
	for (size_t i = 0; i < e->e_shnum; i++)
		if (sh[i].sh_type == type && sh[i].sh_link < e->e_shnum &&
		    sh[i].sh_offset + sh[i].sh_size <= len &&
		    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size <= len)
			return &sh[i];
	return NULL;
}

static int by_value(const void *x, const void *y)
{
	const struct elfsym *a = x, *b = y;
	return a->value < b->value ? -1 : a->value > b->value;
}

/* Reads the function symbols of table sym (in image m) into mod. */
static SCOPE_NOINST void read_symbols(struct elfmod *mod, const void *m, const ElfW(Shdr) * sym)
{
	const ElfW(Ehdr) *e = m;
	const ElfW(Shdr) *str = (const ElfW(Shdr) *)((const char *)m + e->e_shoff) + sym->sh_link;
	const ElfW(Sym) *s = (const ElfW(Sym) *)((const char *)m + sym->sh_offset);
	const char *names = (const char *)m + str->sh_offset;
	size_t n = sym->sh_size / sizeof *s, k = 0;

	mod->syms = malloc((n ? n : 1) * sizeof *mod->syms);
	if (!mod->syms)
		return;
	for (size_t i = 0; i < n; i++) {
		int type = ELF64_ST_TYPE(s[i].st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s[i].st_shndx == SHN_UNDEF ||
		    !s[i].st_value || s[i].st_name >= str->sh_size)
			continue;
		mod->syms[k++] = (struct elfsym){s[i].st_value, s[i].st_size, names + s[i].st_name};
	}
	qsort(mod->syms, k, sizeof *mod->syms, by_value);
	mod->nsyms = k;
}

/* Loads f's symbols: .symtab, else the build-id-linked debug file's, else
 * .dynsym. */
static SCOPE_NOINST void load(struct elfmod *mod, const struct found *f)
{
	const ElfW(Shdr) * sym;
	char debug[128];

	mod->bias = f->bias;
	mod->lo = f->lo;
	mod->hi = f->hi;
	mod->map[0] = map_file(f->path, &mod->maplen[0]);
	if (!mod->map[0])
		return;
	if ((sym = section(mod->map[0], mod->maplen[0], SHT_SYMTAB))) {
		read_symbols(mod, mod->map[0], sym);
		return;
	}
	if (strlen(f->build_id) > 2) {
		snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", f->build_id,
			 f->build_id + 2);
		mod->map[1] = map_file(debug, &mod->maplen[1]);
		if (mod->map[1] && (sym = section(mod->map[1], mod->maplen[1], SHT_SYMTAB))) {
			read_symbols(mod, mod->map[1], sym);
			return;
		}
	}
	if ((sym = section(mod->map[0], mod->maplen[0], SHT_DYNSYM)))
		read_symbols(mod, mod->map[0], sym);
}

static SCOPE_NOINST struct elfmod *module_of(uintptr_t addr)
{
	struct found f = {.addr = addr};

	for (size_t i = 0; i < nmodules; i++)
		if (addr >= modules[i].lo && addr < modules[i].hi)
			return &modules[i];
	if (!dl_iterate_phdr(find_module, &f) || nmodules == MAX_MODULES)
		return NULL;
	load(&modules[nmodules], &f);
	return &modules[nmodules++];
}

static SCOPE_NOINST int load_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found f = {0};
	(void)arg;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			f.addr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	if (!f.addr || nmodules == MAX_MODULES)
		return 0;
	for (size_t i = 0; i < nmodules; i++)
		if (f.addr >= modules[i].lo && f.addr < modules[i].hi)
			return 0;
	if (find_module(info, size, &f))
		load(&modules[nmodules++], &f);
	return 0;
}

/* Called with the filter's lock held, at start-up: the symbol tables of
 * the modules loaded then are read before the program runs, not during
 * the call that first needs one. */
void scope_elfsyms_load_all(void)
{
	dl_iterate_phdr(load_one, NULL);
}

/* Called with the filter's lock held. A module unloaded and another
 * loaded at its place would keep the old names: dlclose is rare and the
 * filters decide once per address anyway. */
const char *scope_elfsyms_name(uintptr_t addr)
{
	struct elfmod *m = module_of(addr);
	uint64_t off;
	size_t lo = 0, hi;

	if (!m || !m->nsyms)
		return NULL;
	off = addr - m->bias;
	hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].value <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Of several symbols at one address, the first has the name. */
	while (lo > 1 && m->syms[lo - 2].value == m->syms[lo - 1].value)
		lo--;
	if (m->syms[lo - 1].size && off >= m->syms[lo - 1].value + m->syms[lo - 1].size)
		return NULL;
	return m->syms[lo - 1].name;
}
