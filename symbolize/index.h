/* SPDX-License-Identifier: MIT */
/* Per-module indexes that answer the symbolizer's libdw questions in O(log n) per address. */
#ifndef SCOPE_SYMBOLIZE_INDEX_H
#define SCOPE_SYMBOLIZE_INDEX_H

#include <elfutils/libdwfl.h>

/*
 * dwfl_module_addrinfo scans the whole symbol table on every call, and
 * dwarf_getscopes walks the compile unit's DIEs from its start: a profile
 * with n functions in a unit costs n^2. These indexes are built once per
 * module (symbols) and once per unit (subprograms), the first time they
 * are asked about, and give the same answers as those calls.
 */

/* The sorted symbol table of one module. */
struct scope_symtab;

/* Builds mod's index. Returns NULL only without memory. */
struct scope_symtab *scope_symtab_build(Dwfl_Module *mod);

/* The name dwfl_module_addrinfo(mod, addr, ...) gives, or NULL. */
const char *scope_symtab_name(struct scope_symtab *t, Dwfl_Module *mod, GElf_Addr addr);

void scope_symtab_free(struct scope_symtab *t);

/* The compile units of one module, each with its subprograms by address. */
struct scope_units;

/* Returns NULL only without memory; the units are read when first asked. */
struct scope_units *scope_units_new(Dwfl_Module *mod);

/* The unit holding addr (a module address, bias included): the one libdw
 * finds through .debug_aranges, else the first whose ranges cover it;
 * NULL when none. *bias is the module's DWARF bias. */
Dwarf_Die *scope_units_cu(struct scope_units *u, Dwarf_Addr addr, Dwarf_Addr *bias);

/*
 * The declaration of the function around pc (a DWARF address) in cu, as
 * the first DW_TAG_subprogram of dwarf_getscopes(cu, pc) that has a line
 * and a file gives it: *file and *line, 1; 0 when none has.
 */
int scope_units_decl(struct scope_units *u, Dwarf_Die *cu, Dwarf_Addr pc, const char **file,
		     int *line);

void scope_units_free(struct scope_units *u);

#endif
