/* SPDX-License-Identifier: MIT */
/* Resolves code addresses of a recorded process through libdw's dwfl. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the C++ runtime; declared here so the symbolizer stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* One Dwfl per module, made when first needed: modules unloaded during the
 * run may overlap those mapped later, which one Dwfl cannot hold. */
struct scope_symbolizer {
	Dwfl **dwfl;
	const struct scope_sym_module *mods;
	size_t n;
};

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct scope_symbolizer *scope_sym_open(const struct scope_sym_module *mods, size_t n)
{
	struct scope_symbolizer *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->mods = mods;
	s->n = n;
	s->dwfl = calloc(n + 1, sizeof *s->dwfl);
	if (!s->dwfl) {
		free(s);
		return NULL;
	}
	return s;
}

static Dwfl *dwfl_of(struct scope_symbolizer *s, int m)
{
	if (!s->dwfl[m] && (s->dwfl[m] = dwfl_begin(&callbacks)) != NULL) {
		dwfl_report_begin(s->dwfl[m]);
		dwfl_report_elf(s->dwfl[m], s->mods[m].path, s->mods[m].path, -1, s->mods[m].bias,
				false);
		dwfl_report_end(s->dwfl[m], NULL, NULL);
	}
	return s->dwfl[m];
}

/* The module mapped at addr at the end of the run; one that was unloaded
 * only when nothing else covers the address. */
static int find_module(const struct scope_symbolizer *s, uint64_t addr)
{
	int found = -1;
	for (size_t i = 0; i < s->n; i++) {
		if (addr < s->mods[i].lo || addr >= s->mods[i].hi)
			continue;
		if (!s->mods[i].unloaded)
			return (int)i;
		if (found < 0)
			found = (int)i;
	}
	return found;
}

static char *demangle(const char *name)
{
	int status = 0;
	char *d;
	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

/* The compile unit holding addr. libdw looks it up in .debug_aranges,
 * which clang does not emit: then every unit's ranges are asked. */
static Dwarf_Die *cu_of(Dwfl_Module *m, uint64_t addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m, addr, bias);
	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(m, cu, bias)) != NULL)
		if (dwarf_haspc(cu, addr - *bias) > 0)
			return cu;
	return NULL;
}

/* The function's own declaration: the line of its definition, which the
 * line table does not give reliably at -O2 (prologue moved or merged). */
static int decl_of(Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes), found = 0;

	for (int i = 0; i < n && !found; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		*file = dwarf_decl_file(&scopes[i]);
		found = *file && dwarf_decl_line(&scopes[i], line) == 0;
	}
	free(scopes);
	return found;
}

static void line_of(Dwfl_Module *m, uint64_t addr, struct scope_sym *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = cu_of(m, addr, &bias);
	const char *file = NULL;
	int line = 0;

	if (!cu)
		return;
	if (!decl_of(cu, addr - bias, &file, &line)) {
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - bias);
		file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (l)
			dwarf_lineno(l, &line);
	}
	if (file) {
		free(out->file);
		out->file = strdup(file);
		out->line = line > 0 ? (uint32_t)line : 0;
	}
}

int scope_sym_lookup(struct scope_symbolizer *s, uint64_t addr, int module, int resolve,
		     struct scope_sym *out)
{
	Dwfl_Module *m = NULL;
	Dwfl *d;
	const char *name = NULL, *base;
	char fallback[512];

	memset(out, 0, sizeof *out);
	out->module = module >= 0 && (size_t)module < s->n ? module : find_module(s, addr);
	out->offset = out->module >= 0 ? addr - s->mods[out->module].bias : addr;
	if (resolve && out->module >= 0 && (d = dwfl_of(s, out->module)) != NULL &&
	    (m = dwfl_addrmodule(d, addr)) != NULL) {
		GElf_Off off;
		GElf_Sym sym;
		name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
		line_of(m, addr, out);
	}
	if (name) {
		out->name = demangle(name);
	} else {
		base = out->module >= 0 ? strrchr(s->mods[out->module].path, '/') : NULL;
		base = base ? base + 1 : out->module >= 0 ? s->mods[out->module].path : "?";
		snprintf(fallback, sizeof fallback, "%s+0x%llx", base,
			 (unsigned long long)out->offset);
		out->name = strdup(fallback);
	}
	if (!out->file)
		out->file = strdup("");
	return out->name && out->file ? 0 : -1;
}

void scope_sym_free(struct scope_sym *sym)
{
	free(sym->name);
	free(sym->file);
	memset(sym, 0, sizeof *sym);
}

void scope_sym_close(struct scope_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->dwfl[i])
			dwfl_end(s->dwfl[i]);
	free(s->dwfl);
	free(s);
}
