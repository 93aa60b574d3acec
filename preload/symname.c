/* SPDX-License-Identifier: MIT */
/* The name of a region while the program runs, for SCOPE_COUNTER_REGIONS: its given name, or its
 * symbol. */
#define _GNU_SOURCE
#include "state.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * dladdr knows the dynamic symbols only; a program's own functions are in
 * its static symbol table (.symtab), read here from the file. Each object
 * is mapped once and kept: the question is asked once per function.
 */
#define OBJECTS 32

static struct object {
	const void *base; /* dli_fbase */
	const char *map;
	size_t bytes;
} objects[OBJECTS];
static int nobjects, objects_lock;

static SCOPE_NOINST const struct object *object_of(const Dl_info *info)
{
	const struct object *found = NULL;
	struct stat st;
	long fd;
	void *map;

	while (__atomic_exchange_n(&objects_lock, 1, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < nobjects && !found; i++)
		if (objects[i].base == info->dli_fbase)
			found = &objects[i];
	if (found || nobjects == OBJECTS)
		goto out;
	fd = syscall(SYS_openat, AT_FDCWD,
		     info->dli_fname && *info->dli_fname ? info->dli_fname : "/proc/self/exe",
		     O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (fstat((int)fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr) &&
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, (int)fd, 0)) !=
		    MAP_FAILED) {
		objects[nobjects] = (struct object){info->dli_fbase, map, (size_t)st.st_size};
		found = &objects[nobjects++];
	}
	scope_fd_close((int)fd);
out:
	__atomic_store_n(&objects_lock, 0, __ATOMIC_RELEASE);
	return found;
}

/* The function symbol at offset addr of object o (its .symtab); 0 or -1. */
static SCOPE_NOINST int symtab_name(const struct object *o, uint64_t addr, char *out, size_t cap)
{
	const Elf64_Ehdr *e = (const void *)o->map;
	const Elf64_Shdr *sh;

	if (memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 || e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_shoff + (uint64_t)e->e_shnum * sizeof *sh > o->bytes)
		return -1;
	sh = (const void *)(o->map + e->e_shoff);
	for (unsigned i = 0; i < e->e_shnum; i++) {
		const Elf64_Shdr *strs;
		const Elf64_Sym *syms;
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= e->e_shnum)
			continue;
		strs = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > o->bytes ||
		    strs->sh_offset + strs->sh_size > o->bytes)
			return -1;
		syms = (const void *)(o->map + sh[i].sh_offset);
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof *syms; k++) {
			if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC ||
			    syms[k].st_value != addr || syms[k].st_name >= strs->sh_size)
				continue;
			strncpy(out, o->map + strs->sh_offset + syms[k].st_name, cap - 1);
			out[cap - 1] = '\0';
			return 0;
		}
	}
	return -1;
}

int scope_symbol_name(void *fn, char *out, size_t cap)
{
	uintptr_t a = (uintptr_t)fn;
	const struct object *o;
	Dl_info info;

	if (a < SCOPE_REC_CODE) {
		const struct scope_name *names;
		if (!scope_proc.hdr || a < SCOPE_REC_NAMED ||
		    a - SCOPE_REC_NAMED >= scope_proc.hdr->names_cap)
			return -1;
		names = (const void *)(scope_proc.base + scope_proc.hdr->names_off);
		strncpy(out, names[a - SCOPE_REC_NAMED].text, cap - 1);
		out[cap - 1] = '\0';
		return 0;
	}
	if (!dladdr(fn, &info))
		return -1;
	if (info.dli_sname && info.dli_saddr == fn) {
		strncpy(out, info.dli_sname, cap - 1);
		out[cap - 1] = '\0';
		return 0;
	}
	if (!(o = object_of(&info)))
		return -1;
	if (((const Elf64_Ehdr *)(const void *)o->map)->e_type == ET_DYN)
		a -= (uintptr_t)info.dli_fbase;
	return symtab_name(o, a, out, cap);
}
