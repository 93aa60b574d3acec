/* SPDX-License-Identifier: MIT */
/* Resolves code addresses of a recorded process through libdw's dwfl. */
#define _GNU_SOURCE
#include "symbolize.h"
#include "index.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* From the C++ runtime; declared here so the symbolizer stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* One Dwfl per module, made when first needed: modules unloaded during the
 * run may overlap those mapped later, which one Dwfl cannot hold. Each
 * module's symbols and units are indexed when first asked about. */
struct scope_symbolizer {
	Dwfl **dwfl;
	struct scope_symtab **symtab;
	struct scope_units **units;
	const struct scope_sym_module *mods;
	size_t n;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path; /* libdwfl's search path; NULL: its default */
	char **dirs;	      /* extra debug directories, absolute */
	size_t ndirs;
};

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);

struct scope_symbolizer *scope_sym_open(const struct scope_sym_module *mods, size_t n)
{
	struct scope_symbolizer *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->mods = mods;
	s->n = n;
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &s->debuginfo_path,
	};
	s->dwfl = calloc(n + 1, sizeof *s->dwfl);
	s->symtab = calloc(n + 1, sizeof *s->symtab);
	s->units = calloc(n + 1, sizeof *s->units);
	if (!s->dwfl || !s->symtab || !s->units) {
		scope_sym_close(s);
		return NULL;
	}
	return s;
}

/* libdwfl's default search path, ":.debug:/usr/lib/debug" (the binary's
 * folder, its .debug subfolder, /usr/lib/debug), with dirs before the last. */
int scope_sym_debug_dirs(struct scope_symbolizer *s, const char *const *dirs, size_t n)
{
	size_t len = sizeof ":.debug:/usr/lib/debug";
	char *path;

	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	s->ndirs = 0;
	for (size_t i = 0; i < n; i++)
		len += strlen(dirs[i]) + 1;
	s->dirs = calloc(n + 1, sizeof *s->dirs);
	path = malloc(len);
	if (!s->dirs || !path) {
		free(path);
		return -1;
	}
	strcpy(path, ":.debug");
	for (size_t i = 0; i < n; i++) {
		if (!(s->dirs[i] = strdup(dirs[i]))) {
			free(path);
			return -1;
		}
		s->ndirs = i + 1;
		strcat(strcat(path, ":"), dirs[i]);
	}
	strcat(path, ":/usr/lib/debug");
	free(s->debuginfo_path);
	s->debuginfo_path = path;
	return 0;
}

/* The build-id note of the ELF file open as fd: its length, 0 when it has
 * none, -1 when fd is not an ELF file. */
static ssize_t elf_build_id(int fd, unsigned char *id, size_t cap)
{
	Elf *elf;
	const void *bits = NULL;
	ssize_t len = -1;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		len = dwelf_elf_gnu_build_id(elf, &bits);
		len = len > 0 && (size_t)len <= cap ? len : 0;
		if (len)
			memcpy(id, bits, (size_t)len);
	}
	if (elf)
		elf_end(elf);
	return len;
}

/* The CRC-32 of a whole file, as .gnu_debuglink records it. */
static int file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	ssize_t got;
	off_t off = 0;

	while ((got = pread(fd, buf, sizeof buf, off)) > 0) {
		c = crc32(c, buf, (uInt)got);
		off += got;
	}
	*crc = (uint32_t)c;
	return got < 0 ? -1 : 0;
}

/* Whether the file open as fd is the debug file of mod: the same build-id
 * when mod has one, else the CRC its debuglink records. */
static int debug_file_matches(Dwfl_Module *mod, int fd, GElf_Word crc)
{
	const unsigned char *want;
	GElf_Addr vaddr;
	unsigned char got[64];
	int want_len = dwfl_module_build_id(mod, &want, &vaddr);
	uint32_t c;

	if (want_len > 0)
		return elf_build_id(fd, got, sizeof got) == want_len &&
		       memcmp(got, want, (size_t)want_len) == 0;
	return file_crc(fd, &c) == 0 && c == crc;
}

/*
 * libdwfl's own search first: by build-id under every absolute folder of
 * the path (DIR/.build-id/xx/rest.debug), then by debuglink name next to
 * the binary, in its .debug subfolder and in DIR/<the binary's folder>/.
 * Then each extra folder itself: DIR/NAME, for a debug file put there flat
 * (objcopy --only-keep-debug app DIR/app.debug).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct scope_symbolizer *s = *userdata;
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);

	for (size_t i = 0; fd < 0 && s && debuglink_file && i < s->ndirs; i++) {
		char *path = NULL;
		if (strchr(debuglink_file, '/') ||
		    asprintf(&path, "%s/%s", s->dirs[i], debuglink_file) < 0)
			break;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && debug_file_matches(mod, fd, debuglink_crc)) {
			*debuginfo_file_name = path;
			return fd;
		}
		if (fd >= 0)
			close(fd);
		fd = -1;
		free(path);
	}
	return fd;
}

static Dwfl *dwfl_of(struct scope_symbolizer *s, int m)
{
	Dwfl_Module *mod;
	void **userdata = NULL;

	if (!s->dwfl[m] && (s->dwfl[m] = dwfl_begin(&s->callbacks)) != NULL) {
		dwfl_report_begin(s->dwfl[m]);
		mod = dwfl_report_elf(s->dwfl[m], s->mods[m].path, s->mods[m].path, -1,
				      s->mods[m].bias, false);
		if (mod && dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
			*userdata = s;
		dwfl_report_end(s->dwfl[m], NULL, NULL);
	}
	return s->dwfl[m];
}

static int first_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	*(Dwfl_Module **)arg = mod;
	return DWARF_CB_ABORT;
}

const char *scope_sym_debug_file(struct scope_symbolizer *s, int module)
{
	Dwfl *d;
	Dwfl_Module *mod = NULL;
	const char *debugfile = NULL, *mainfile = NULL;
	Dwarf_Addr bias;

	if (module < 0 || (size_t)module >= s->n || !(d = dwfl_of(s, module)))
		return NULL;
	if (dwfl_getmodules(d, first_module, &mod, 0) < 0 || !mod ||
	    !dwfl_module_getdwarf(mod, &bias))
		return NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	return debugfile ? debugfile : mainfile;
}

int scope_sym_build_id(const char *path, char *hex, size_t cap)
{
	unsigned char id[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = elf_build_id(fd, id, sizeof id);
	close(fd);
	if (n < 0 || cap < 2 * (size_t)n + 1) {
		errno = n < 0 ? ENOEXEC : ERANGE;
		return -1;
	}
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * n] = '\0';
	return 0;
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

/* The name dwfl_module_addrinfo gives addr, through m's sorted symbols. */
static const char *name_of(struct scope_symbolizer *s, int module, Dwfl_Module *m, uint64_t addr)
{
	GElf_Off off;
	GElf_Sym sym;

	if (!s->symtab[module])
		s->symtab[module] = scope_symtab_build(m);
	if (s->symtab[module])
		return scope_symtab_name(s->symtab[module], m, addr);
	return dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
}

/*
 * The file and line of the function's own declaration: the line of its
 * definition, which the line table does not give reliably at -O2 (prologue
 * moved or merged); the line table's when there is none. The unit is
 * looked up in .debug_aranges, which clang does not emit: then by the
 * units' ranges.
 */
static int line_of(struct scope_symbolizer *s, int module, Dwfl_Module *m, uint64_t addr,
		   struct scope_sym *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	const char *file = NULL;
	int line = 0;

	if (!s->units[module] && !(s->units[module] = scope_units_new(m)))
		return -1;
	if (!(cu = scope_units_cu(s->units[module], addr, &bias)))
		return 0;
	if (!scope_units_decl(s->units[module], cu, addr - bias, &file, &line)) {
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
	return 0;
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
		name = name_of(s, out->module, m, addr);
		if (line_of(s, out->module, m, addr, out) != 0)
			return -1;
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

int scope_sym_call_line(struct scope_symbolizer *s, uint64_t addr, int resolve,
			struct scope_sym *out)
{
	Dwfl_Module *m;
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	Dwarf_Line *l;
	const char *file;
	char *copy;
	int line = 0;
	Dwfl *d;

	if (!resolve || out->module < 0 || !(d = dwfl_of(s, out->module)) ||
	    !(m = dwfl_addrmodule(d, addr)))
		return 0;
	if (!s->units[out->module] && !(s->units[out->module] = scope_units_new(m)))
		return -1;
	if (!(cu = scope_units_cu(s->units[out->module], addr, &bias)) ||
	    !(l = dwarf_getsrc_die(cu, addr - bias)) || !(file = dwarf_linesrc(l, NULL, NULL)))
		return 0;
	dwarf_lineno(l, &line);
	if (!(copy = strdup(file)))
		return -1;
	free(out->file);
	out->file = copy;
	out->line = line > 0 ? (uint32_t)line : 0;
	return 0;
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
	for (size_t i = 0; i < s->n; i++) {
		scope_symtab_free(s->symtab ? s->symtab[i] : NULL);
		scope_units_free(s->units ? s->units[i] : NULL);
		if (s->dwfl && s->dwfl[i])
			dwfl_end(s->dwfl[i]);
	}
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	free(s->debuginfo_path);
	free(s->dwfl);
	free(s->symtab);
	free(s->units);
	free(s);
}
