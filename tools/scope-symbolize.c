/* SPDX-License-Identifier: MIT */
/* scope-symbolize: names, files and lines for the unresolved regions of a profile, rewritten
 * atomically. */
#define _GNU_SOURCE
#include "h5guard.h"
#include "reader.h"
#include "symbolize.h"
#include "symfile.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
	"usage: scope-symbolize [options] PROFILE.h5\n"
	"Give the regions of a scope profile that have no function name, source file or\n"
	"line (written with SCOPE_SYMBOLIZE=0, or from a binary without debug info) their\n"
	"names, files and lines from the debug info of their modules, and rewrite the\n"
	"profile in place, atomically.\n"
	"\n"
	"  -d, --debug-dir DIR      look for separate debug info in DIR too: by build-id,\n"
	"                           DIR/.build-id/xx/rest.debug, and by the binary's\n"
	"                           .gnu_debuglink name, DIR/NAME (repeatable)\n"
	"  -f, --force              resolve modules whose build-id is not the one recorded\n"
	"                           (the binary was rebuilt: names and lines may be wrong)\n"
	"  -q, --quiet              print warnings and errors only\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n"
	"\n"
	"Debug info is looked for in the binary itself, then by .gnu_debuglink next to it\n"
	"and in its .debug folder, then under each DIR, then in /usr/lib/debug.\n"
	"Exit status: 0 when the profile was rewritten or had nothing to resolve; 1 when\n"
	"it cannot be read or written, a module was rebuilt since (without --force), or\n"
	"no region could be resolved; 2 for a usage error.\n";

struct options {
	char **dirs; /* absolute */
	size_t ndirs;
	int force, quiet;
	const char *file;
};

__attribute__((noreturn, format(printf, 1, 2))) static void die_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("scope-symbolize: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see scope-symbolize --help)\n", stderr);
	exit(2);
}

static void add_dir(struct options *o, const char *dir)
{
	char *abs = realpath(dir, NULL), **grown;
	struct stat st;

	if (!abs)
		die_usage("--debug-dir %s: %s", dir, strerror(errno));
	if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode))
		die_usage("--debug-dir %s: not a directory", dir);
	grown = realloc(o->dirs, (o->ndirs + 1) * sizeof *grown);
	if (!grown)
		die_usage("out of memory");
	o->dirs = grown;
	o->dirs[o->ndirs++] = abs;
}

static void parse(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"debug-dir", required_argument, NULL, 'd'}, {"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},	     {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},	     {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof *o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:fqhV", longs, NULL)) != -1) {
		switch (c) {
		case 'd': add_dir(o, optarg); break;
		case 'f': o->force = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-symbolize %s\n", SCOPE_VERSION); exit(0);
		case ':': die_usage("%s needs a value", argv[optind - 1]);
		default: die_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		die_usage("no profile given");
	if (argc - optind > 1)
		die_usage("one profile at a time ('%s' is one too many)", argv[optind + 1]);
	o->file = argv[optind];
}

static void options_free(struct options *o)
{
	for (size_t i = 0; i < o->ndirs; i++)
		free(o->dirs[i]);
	free(o->dirs);
}

/* ---- What to resolve ---------------------------------------------------- */

/* A module that holds regions to resolve. */
struct target {
	const char *path;
	const struct rd_module *m; /* its first row in the module tables; NULL: none */
	size_t regions;		   /* to resolve */
	int usable;		   /* its file is there and is the one recorded (or --force) */
};

struct work {
	const struct options *o;
	struct rd_profile *p;
	const struct rd_module *mods;
	size_t nmods;
	struct target *targets;
	size_t ntargets;
	long *target_of; /* per region: its target, -1 when it needs nothing */
	char **name, **file;
	uint64_t *line;
};

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	va_list ap;
	fputs("scope-symbolize: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Whether name is the module+0xOFFSET the writer gives a region it did not resolve. */
static int is_fallback(const char *name, const char *module, uint64_t offset)
{
	const char *base = strrchr(module, '/');
	char buf[PATH_MAX + 32];

	snprintf(buf, sizeof buf, "%s+0x%llx", base ? base + 1 : module,
		 (unsigned long long)offset);
	return strcmp(name, buf) == 0;
}

static int unresolved(const struct rd_region *r)
{
	return is_fallback(r->name, r->module, r->offset) || !r->file[0];
}

/* The target of module path, added when new; -1 without memory. */
static long target_for(struct work *w, const char *path)
{
	struct target *grown;
	size_t i;

	for (i = 0; i < w->ntargets; i++)
		if (strcmp(w->targets[i].path, path) == 0)
			return (long)i;
	grown = realloc(w->targets, (w->ntargets + 1) * sizeof *grown);
	if (!grown)
		return -1;
	w->targets = grown;
	memset(&grown[i], 0, sizeof grown[i]);
	grown[i].path = path;
	for (size_t m = 0; m < w->nmods && !grown[i].m; m++)
		if (strcmp(w->mods[m].path, path) == 0)
			grown[i].m = &w->mods[m];
	w->ntargets++;
	return (long)i;
}

/* Finds the regions to resolve and their modules; returns how many, or -1. */
static long find_work(struct work *w)
{
	size_t n = w->p->nregions;
	long wanted = 0;

	w->target_of = calloc(n + 1, sizeof *w->target_of);
	w->name = calloc(n + 1, sizeof *w->name);
	w->file = calloc(n + 1, sizeof *w->file);
	w->line = calloc(n + 1, sizeof *w->line);
	if (!w->target_of || !w->name || !w->file || !w->line)
		return -1;
	for (size_t r = 0; r < n; r++) {
		const struct rd_region *reg = &w->p->regions[r];
		w->target_of[r] = -1;
		w->name[r] = strdup(reg->name);
		w->file[r] = strdup(reg->file);
		w->line[r] = reg->line;
		if (!w->name[r] || !w->file[r])
			return -1;
		if (!reg->module[0] || !unresolved(reg))
			continue;
		if ((w->target_of[r] = target_for(w, reg->module)) < 0)
			return -1;
		w->targets[w->target_of[r]].regions++;
		wanted++;
	}
	return wanted;
}

/* Checks each target's file against the build-id recorded for it; returns
 * the number refused (rebuilt, without --force). */
static size_t check_targets(struct work *w)
{
	size_t refused = 0;

	for (size_t i = 0; i < w->ntargets; i++) {
		struct target *t = &w->targets[i];
		const char *why;
		char now[160];
		if (!t->m) {
			say("%s: not in the profile's module tables: its %zu regions stay "
			    "unresolved",
			    t->path, t->regions);
			continue;
		}
		/* libdw would wait forever on a FIFO at the module's path */
		if ((why = rd_not_a_file(t->path)) != NULL) {
			say("%s: %s: its %zu regions stay unresolved", t->path, why, t->regions);
			continue;
		}
		if (scope_sym_build_id(t->path, now, sizeof now) != 0) {
			say("%s: %s: its %zu regions stay unresolved", t->path,
			    errno == ENOEXEC ? "not an ELF file" : strerror(errno), t->regions);
			continue;
		}
		if (!t->m->build_id[0] || strcmp(now, t->m->build_id) == 0) {
			t->usable = 1;
		} else if (w->o->force) {
			say("%s: build-id %s is not the one recorded in %s (%s); resolving it "
			    "anyway "
			    "(--force)",
			    t->path, now[0] ? now : "(none)", w->o->file, t->m->build_id);
			t->usable = 1;
		} else {
			say("%s: build-id %s is not the one recorded in %s (%s): the binary was "
			    "rebuilt since it was profiled, and its names would be wrong (--force "
			    "resolves it anyway)",
			    t->path, now[0] ? now : "(none)", w->o->file, t->m->build_id);
			refused++;
		}
	}
	return refused;
}

/* Replaces s with a copy of v. */
static int set(char **s, const char *v)
{
	char *copy = strdup(v);
	if (!copy)
		return -1;
	free(*s);
	*s = copy;
	return 0;
}

/* Looks region r up; keeps what it had where the lookup finds less. */
static int resolve_one(struct work *w, struct scope_symbolizer *s, size_t r)
{
	const struct rd_region *reg = &w->p->regions[r];
	long t = w->target_of[r];
	struct scope_sym sym;
	int rc = 0;

	if (scope_sym_lookup(s, reg->offset + w->targets[t].m->bias, (int)t, 1, &sym) != 0)
		return -1;
	if (!is_fallback(sym.name, reg->module, reg->offset))
		rc = set(&w->name[r], sym.name);
	if (rc == 0 && sym.file[0]) {
		rc = set(&w->file[r], sym.file);
		w->line[r] = sym.line;
	}
	scope_sym_free(&sym);
	return rc;
}

/* Says where each usable module's debug info came from, or that none was found. */
static void tell_sources(struct work *w, struct scope_symbolizer *s)
{
	for (size_t i = 0; i < w->ntargets; i++) {
		const struct target *t = &w->targets[i];
		const char *from = t->usable ? scope_sym_debug_file(s, (int)i) : NULL;
		if (!t->usable)
			continue;
		if (!from)
			say("%s: no debug info found (build-id %s): its %zu regions get no file "
			    "and line",
			    t->path, t->m->build_id[0] ? t->m->build_id : "none", t->regions);
		else if (!w->o->quiet)
			say("%s: debug info from %s", t->path, from);
	}
}

static int resolve_all(struct work *w)
{
	struct scope_sym_module *sm = calloc(w->ntargets + 1, sizeof *sm);
	struct scope_symbolizer *s = NULL;
	int rc = -1;

	if (!sm)
		return -1;
	for (size_t i = 0; i < w->ntargets; i++) {
		const struct rd_module *m = w->targets[i].m;
		sm[i] = (struct scope_sym_module){w->targets[i].path, m ? m->bias : 0,
						  m ? m->lo : 0, m ? m->hi : 0, 0};
	}
	s = scope_sym_open(sm, w->ntargets);
	if (s && scope_sym_debug_dirs(s, (const char *const *)w->o->dirs, w->o->ndirs) == 0) {
		rc = 0;
		for (size_t r = 0; r < w->p->nregions && rc == 0; r++)
			if (w->target_of[r] >= 0 && w->targets[w->target_of[r]].usable)
				rc = resolve_one(w, s, r);
		if (rc == 0)
			tell_sources(w, s);
	}
	scope_sym_close(s);
	free(sm);
	return rc;
}

/* Counts the regions that changed and those that are whole now. */
static void count(const struct work *w, size_t *changed, size_t *whole)
{
	*changed = *whole = 0;
	for (size_t r = 0; r < w->p->nregions; r++) {
		const struct rd_region *reg = &w->p->regions[r];
		if (w->target_of[r] < 0)
			continue;
		*changed += strcmp(w->name[r], reg->name) != 0 ||
			    strcmp(w->file[r], reg->file) != 0 || w->line[r] != reg->line;
		*whole += !is_fallback(w->name[r], reg->module, reg->offset) && w->file[r][0];
	}
}

static void work_free(struct work *w)
{
	for (size_t r = 0; w->p && r < w->p->nregions; r++) {
		free(w->name ? w->name[r] : NULL);
		free(w->file ? w->file[r] : NULL);
	}
	free(w->name);
	free(w->file);
	free(w->line);
	free(w->target_of);
	free(w->targets);
}

/* ---- Crashes in the HDF5 library ---------------------------------------- */

/* ---- Main --------------------------------------------------------------- */

/* Resolves and rewrites; returns the exit status. */
/* The profile anew with the names, files and lines found, its regions' other columns as
 * they were. Returns 0, or -1 with the reason in err. */
static int rewrite(const struct work *w, char *err, size_t cap)
{
	size_t n = w->p->nregions;
	const char **module = calloc(n + 1, sizeof *module), **kind = calloc(n + 1, sizeof *kind);
	uint64_t *offset = calloc(n + 1, sizeof *offset);
	int rc = -1;

	if (!module || !kind || !offset) {
		snprintf(err, cap, "out of memory");
	} else {
		for (size_t r = 0; r < n; r++) {
			module[r] = w->p->regions[r].module;
			kind[r] = w->p->regions[r].kind;
			offset[r] = w->p->regions[r].offset;
		}
		rc = sf_rewrite(w->o->file,
				&(struct region_columns){(const char *const *)w->name, module,
							 (const char *const *)w->file, kind, offset,
							 w->line, n},
				h5guard_tmp(), err, cap);
	}
	free(module);
	free(kind);
	free(offset);
	return rc;
}

static int symbolize(struct work *w)
{
	const char *file = w->o->file;
	char err[RD_ERR_MAX + 64];
	size_t changed, whole;
	long wanted = find_work(w);

	if (wanted < 0)
		return say("%s: out of memory", file), 1;
	if (wanted == 0) {
		if (!w->o->quiet)
			say("%s: nothing to resolve: every region has a name, file and line", file);
		return 0;
	}
	if (check_targets(w) > 0)
		return say("%s: left as it was", file), 1;
	if (resolve_all(w) != 0)
		return say("%s: out of memory", file), 1;
	count(w, &changed, &whole);
	if (changed == 0)
		return say("%s: none of its %ld unresolved regions could be resolved; left as it "
			   "was",
			   file, wanted),
		       1;
	if (rewrite(w, err, sizeof err) != 0)
		return say("%s: %s; left as it was", file, err), 1;
	if (!w->o->quiet || whole < (size_t)wanted)
		say("%s: %zu of %ld unresolved regions resolved%s", file, whole, wanted,
		    whole < (size_t)wanted ? " (the others lack a name, file or line still)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct work w;
	char err[RD_ERR_MAX];
	struct rd_module *mods = NULL;
	size_t nmods = 0;
	int rc;

	parse(argc, argv, &o);
	h5guard_install("scope-symbolize");
	h5guard_reading(o.file);
	memset(&w, 0, sizeof w);
	w.o = &o;
	w.p = rd_open(o.file, err, sizeof err);
	if (!w.p) {
		say("%s: %s", o.file, err);
		options_free(&o);
		return 1;
	}
	if (rd_modules(w.p, &mods, &nmods) != 0) {
		say("%s: %s", o.file, w.p->err);
		rc = 1;
	} else {
		w.mods = mods;
		w.nmods = nmods;
		rc = symbolize(&w);
	}
	work_free(&w);
	rd_modules_free(mods, nmods);
	rd_close(w.p);
	options_free(&o);
	return rc;
}
