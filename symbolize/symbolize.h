/* SPDX-License-Identifier: MIT */
/* Address -> function name, source file and line, with libdw. */
#ifndef SCOPE_SYMBOLIZE_H
#define SCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct scope_sym_module {
	const char *path;
	uint64_t bias; /* load bias: runtime address - ELF address */
	uint64_t lo, hi;
	int unloaded; /* closed before the end: its range may hold another */
};

struct scope_sym {
	char *name; /* demangled; "module+0xOFFSET" when no symbol covers it */
	char *file; /* "" when unknown */
	uint32_t line;
	int module;	 /* index into the modules given, -1 when none */
	uint64_t offset; /* address - bias of its module */
};

struct scope_symbolizer;

/* Reports every module to libdw; a module whose file is gone is skipped
 * (its addresses get module+offset names). Returns NULL only without memory. */
struct scope_symbolizer *scope_sym_open(const struct scope_sym_module *mods, size_t n);

/* Fills out (strings owned by the caller) for addr in module (an index,
 * or -1: the module mapped there at the end); resolve = 0 skips libdw and
 * names the address module+0xOFFSET. Returns 0, or -1 without memory.
 * The first lookup in a module sorts its symbols, the first in a compile
 * unit reads the unit's DIEs once; then each is a binary search. */
int scope_sym_lookup(struct scope_symbolizer *s, uint64_t addr, int module, int resolve,
		     struct scope_sym *out);

/* After a lookup of addr into out: out's file and line become those of the
 * code at addr itself (a call's), from the line table, where it has them.
 * Returns 0, or -1 without memory. */
int scope_sym_call_line(struct scope_symbolizer *s, uint64_t addr, int resolve,
			struct scope_sym *out);

/* Looks for separate debug info under each of dirs too (absolute paths),
 * besides libdwfl's default places: by build-id, DIR/.build-id/xx/rest.debug;
 * by .gnu_debuglink name, DIR/NAME and DIR/<the binary's folder>/NAME. The
 * order: the binary's folder and its .debug subfolder, dirs, /usr/lib/debug.
 * Call before the first lookup. Returns 0, or -1 without memory. */
int scope_sym_debug_dirs(struct scope_symbolizer *s, const char *const *dirs, size_t n);

/* The file module's DWARF was read from (its separate debug file, or the
 * module itself), or NULL when it has none; owned by s. */
const char *scope_sym_debug_file(struct scope_symbolizer *s, int module);

/* The GNU build-id of the ELF file at path in hex, "" when it has none.
 * Returns 0, or -1 with errno (ENOEXEC: not ELF; ERANGE: cap too small). */
int scope_sym_build_id(const char *path, char *hex, size_t cap);

void scope_sym_free(struct scope_sym *sym);
void scope_sym_close(struct scope_symbolizer *s);

#endif
