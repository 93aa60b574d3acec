/* SPDX-License-Identifier: MIT */
/* symcheck: checks the symbolizer's answers against libdw's own, and times its lookups. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static const char usage[] =
	"usage: symcheck same [--sweep N] ELF...\n"
	"       symcheck time [--repeat N] [--limit SECONDS] ELF\n"
	"same: for the code addresses of each ELF file (every function's first,\n"
	"second, middle and last byte and its end, and up to N addresses spread\n"
	"over its code sections, 65536 by default), the symbolizer's name, file\n"
	"and line must be those that libdw's own calls give (dwfl_module_addrinfo,\n"
	"dwarf_getscopes, the line table); prints the differences, exits 1 on any.\n"
	"time: looks up every sized function symbol of ELF in a new symbolizer, N\n"
	"times (default 1), prints the least CPU time one round took as\n"
	"'cpu SECONDS N' and then 'ADDRESS NAME FILE LINE' for each, tab-separated;\n"
	"exits 3 as soon as a round takes more than SECONDS of CPU time.\n";

struct addrs {
	uint64_t *v;
	size_t n, cap;
};

static void push(struct addrs *a, uint64_t v)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		if (!(a->v = realloc(a->v, a->cap * sizeof *a->v))) {
			fprintf(stderr, "symcheck: out of memory\n");
			exit(2);
		}
	}
	a->v[a->n++] = v;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The function symbols of path (funcs) and, when code is given, the
 * addresses worth checking: around every symbol, and sweep addresses
 * spread over the executable sections. */
static int read_elf(const char *path, struct addrs *funcs, struct addrs *code, size_t sweep)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t total = 0;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		fprintf(stderr, "symcheck: cannot read %s as ELF\n", path);
		return -1;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS)
			total += sh.sh_size;
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			if (GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_size &&
			    sh.sh_type == SHT_SYMTAB)
				push(funcs, s.st_value);
			if (!code)
				continue;
			uint64_t at[] = {s.st_value - 1,
					 s.st_value,
					 s.st_value + 1,
					 s.st_value + s.st_size / 2,
					 s.st_value + s.st_size - 1,
					 s.st_value + s.st_size};
			for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
				push(code, at[k]);
		}
	}
	for (scn = NULL; code && total && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		uint64_t step = total / (sweep ? sweep : 1) + 1;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type != SHT_PROGBITS)
			continue;
		for (uint64_t a = sh.sh_addr; a <= sh.sh_addr + sh.sh_size; a += step)
			push(code, a);
	}
	elf_end(elf);
	close(fd);
	if (funcs->n)
		qsort(funcs->v, funcs->n, sizeof *funcs->v, by_u64);
	if (code && code->n)
		qsort(code->v, code->n, sizeof *code->v, by_u64);
	return 0;
}

/* ---- the answers of libdw's own calls, one address at a time ---- */

static Dwfl *reference(const char *path, Dwfl_Callbacks *cb)
{
	Dwfl *d;
	*cb = (Dwfl_Callbacks){.find_elf = dwfl_build_id_find_elf,
			       .find_debuginfo = dwfl_standard_find_debuginfo,
			       .section_address = dwfl_offline_section_address};
	if (!(d = dwfl_begin(cb)))
		return NULL;
	dwfl_report_begin(d);
	dwfl_report_elf(d, path, path, -1, 0, false);
	dwfl_report_end(d, NULL, NULL);
	return d;
}

static Dwarf_Die *ref_cu(Dwfl_Module *m, uint64_t addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m, addr, bias);
	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(m, cu, bias)) != NULL)
		if (dwarf_haspc(cu, addr - *bias) > 0)
			return cu;
	return NULL;
}

static int ref_decl(Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes), found = 0;

	for (int i = 0; i < n && !found; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		found = dwarf_decl_line(&scopes[i], line) == 0;
		*file = dwarf_decl_file(&scopes[i]);
		if (found && !*file) {
			Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
			*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		}
		found = found && *file;
	}
	free(scopes);
	return found;
}

static void ref_lookup(Dwfl *d, uint64_t addr, char **name, const char **file, int *line)
{
	Dwfl_Module *m = dwfl_addrmodule(d, addr);
	Dwarf_Addr bias;
	Dwarf_Die *cu;
	GElf_Off off;
	GElf_Sym sym;
	const char *raw = m ? dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL) : NULL;
	int status = -1;

	*name = raw && raw[0] == '_' && raw[1] == 'Z' ? __cxa_demangle(raw, NULL, NULL, &status)
						      : NULL;
	if (raw && status != 0) {
		free(*name);
		*name = strdup(raw);
	}
	*file = "";
	*line = 0;
	if (!m || !(cu = ref_cu(m, addr, &bias)))
		return;
	if (!ref_decl(cu, addr - bias, file, line)) {
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - bias);
		*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (l)
			dwarf_lineno(l, line);
		if (!*file) {
			*file = "";
			*line = 0;
		}
	}
	if (*line < 0)
		*line = 0;
}

static int same(const char *path, size_t sweep)
{
	struct addrs funcs = {0}, code = {0};
	struct scope_sym_module mod = {path, 0, 0, UINT64_MAX, 0};
	struct scope_symbolizer *s;
	Dwfl_Callbacks cb;
	Dwfl *d;
	size_t bad = 0, checked = 0;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	if (read_elf(path, &funcs, &code, sweep) != 0)
		return 2;
	if (!(s = scope_sym_open(&mod, 1)) || !(d = reference(path, &cb))) {
		fprintf(stderr, "symcheck: cannot open %s\n", path);
		return 2;
	}
	for (size_t i = 0; i < code.n; i++) {
		struct scope_sym got;
		char *name;
		const char *file;
		int line;
		if (i && code.v[i] == code.v[i - 1])
			continue;
		if (scope_sym_lookup(s, code.v[i], 0, 1, &got) != 0) {
			fprintf(stderr, "symcheck: out of memory\n");
			return 2;
		}
		ref_lookup(d, code.v[i], &name, &file, &line);
		if (!name && asprintf(&name, "%s+0x%llx", base, (unsigned long long)code.v[i]) < 0)
			name = NULL;
		checked++;
		if (!name || strcmp(name, got.name) != 0 || strcmp(file, got.file) != 0 ||
		    (uint32_t)line != got.line) {
			if (bad++ < 20)
				printf("%s: 0x%llx: got %s %s:%u, libdw gives %s %s:%d\n", path,
				       (unsigned long long)code.v[i], got.name, got.file, got.line,
				       name ? name : "(none)", file, line);
		}
		free(name);
		scope_sym_free(&got);
	}
	printf("%s: %zu addresses, %zu differ\n", path, checked, bad);
	scope_sym_close(s);
	dwfl_end(d);
	free(funcs.v);
	free(code.v);
	return bad ? 1 : 0;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One round: every function looked up in a new symbolizer. Returns the
 * CPU seconds, or -1 past limit (> 0). */
static double round_of(const char *path, const struct addrs *funcs, struct scope_sym *out,
		       double limit)
{
	struct scope_sym_module mod = {path, 0, 0, UINT64_MAX, 0};
	double t0 = cpu_now();
	struct scope_symbolizer *s = scope_sym_open(&mod, 1);

	for (size_t i = 0; s && i < funcs->n; i++) {
		scope_sym_free(&out[i]);
		if (scope_sym_lookup(s, funcs->v[i], 0, 1, &out[i]) != 0) {
			fprintf(stderr, "symcheck: out of memory\n");
			exit(2);
		}
		if (limit > 0 && i % 64 == 63 && cpu_now() - t0 > limit) {
			scope_sym_close(s);
			return -1;
		}
	}
	scope_sym_close(s);
	return cpu_now() - t0;
}

static int timed(const char *path, int repeat, double limit)
{
	struct addrs funcs = {0};
	struct scope_sym *out;
	double best = -1;

	if (read_elf(path, &funcs, NULL, 0) != 0)
		return 2;
	if (!(out = calloc(funcs.n + 1, sizeof *out))) {
		fprintf(stderr, "symcheck: out of memory\n");
		return 2;
	}
	/* The least round counts: a first round that reads the file cold may
	 * pass the limit where the next does not. */
	for (int r = 0; r < repeat; r++) {
		double t = round_of(path, &funcs, out, limit);
		if (t >= 0)
			best = best < 0 || t < best ? t : best;
	}
	if (best < 0) {
		printf("cpu-limit %.3f %zu\n", limit, funcs.n);
		return 3;
	}
	printf("cpu %.6f %zu\n", best, funcs.n);
	for (size_t i = 0; i < funcs.n; i++) {
		printf("0x%llx\t%s\t%s\t%u\n", (unsigned long long)funcs.v[i], out[i].name,
		       out[i].file, out[i].line);
		scope_sym_free(&out[i]);
	}
	free(out);
	free(funcs.v);
	return 0;
}

int main(int argc, char **argv)
{
	size_t sweep = 65536;
	int repeat = 1, i = 2, rc = 0;
	double limit = 0;

	if (argc < 3 || (strcmp(argv[1], "same") != 0 && strcmp(argv[1], "time") != 0)) {
		fputs(usage, stderr);
		return 2;
	}
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "--sweep") == 0)
			sweep = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--repeat") == 0)
			repeat = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--limit") == 0)
			limit = strtod(argv[i + 1], NULL);
		else
			break;
	}
	if (i >= argc || argv[i][0] == '-' || repeat < 1) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "time") == 0)
		return i + 1 == argc ? timed(argv[i], repeat, limit) : (fputs(usage, stderr), 2);
	for (; i < argc; i++) {
		int r = same(argv[i], sweep);
		rc = r > rc ? r : rc;
	}
	return rc;
}
