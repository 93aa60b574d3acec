/* SPDX-License-Identifier: MIT */
/* Address -> ELF symbol name by binary search, with dwfl_module_addrinfo's choice of symbol. */
#define _GNU_SOURCE
#include "index.h"

#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * libdwfl (elfutils 0.188, dwfl_module_addrsym.c) scans the symbols that
 * can name an address (a name, a section, not SECTION/FILE/TLS, value <=
 * address): first the global part of the table, then, when nothing was
 * found there, the local part. Folded into one rule:
 *
 *  1. the sized symbols of the global part that contain the address, if
 *     any: the best of them (below, in table order);
 *  2. else a sizeless symbol of the global part at exactly the address:
 *     the last one in table order;
 *  3. else the best sized symbol of the local part containing it;
 *  4. else let M be the highest end (value + size) of all symbols at or
 *     below the address: the last sizeless symbol (locals after globals)
 *     at M in the address's section (outside any section: M must be the
 *     address itself); none if there is none.
 *
 * For example, frame_dummy (a local FUNC without a size) names the
 * addresses from its start up to the next symbol, unless a sized symbol
 * that starts below it ends above its start.
 *
 * "Best" (try_sym_value): a candidate replaces the current one when the
 * current one starts lower or binds weaker (GLOBAL > WEAK > LOCAL > other),
 * or at the same value when it is smaller and binds no weaker.
 *
 * ppc64 function descriptors give symbols a second value; there libdwfl
 * is asked instead.
 */

struct tsym {
	GElf_Addr value;
	GElf_Xword size;
	const char *name;
	GElf_Word shndx; /* as dwfl_module_getsym_info gives it: -1 outside SHF_ALLOC */
	int pos;	 /* index in the table: the scan order within a part */
	int bind;	 /* libdwfl's binding_value */
};

/* The symbols of one part, sorted by value then pos; maxend[i] is the
 * highest end among the first i + 1 sized ones. */
struct part {
	struct tsym *sized, *sizeless;
	GElf_Addr *maxend;
	size_t nsized, nsizeless;
};

struct scope_symtab {
	int ask_libdwfl;		   /* descriptors, or a table too odd to index */
	struct part part[2];		   /* 0: the global part, 1: the local part */
	GElf_Addr *all_value, *all_maxend; /* every symbol of both parts, by value */
	size_t nall;
};

/* The most candidates collected for one address before libdwfl is asked. */
#define MAX_CANDIDATES 64

static int binding_value(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static int by_value(const void *a, const void *b)
{
	const struct tsym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static GElf_Addr end_of(const struct tsym *s)
{
	return s->value + s->size < s->value ? UINT64_MAX : s->value + s->size;
}

/* Appends symbol i of mod to part p when it can name an address. */
static int add_symbol(struct part *p, Dwfl_Module *mod, int i)
{
	GElf_Sym sym;
	GElf_Addr value;
	GElf_Word shndx;
	const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
	int type = GELF_ST_TYPE(sym.st_info);
	struct tsym **arr;
	size_t *n;

	if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
	    type == STT_FILE || type == STT_TLS)
		return 0;
	arr = sym.st_size ? &p->sized : &p->sizeless;
	n = sym.st_size ? &p->nsized : &p->nsizeless;
	(*arr)[(*n)++] =
		(struct tsym){value, sym.st_size, name, shndx, i, binding_value(sym.st_info)};
	return 0;
}

static int fill_part(struct part *p, Dwfl_Module *mod, int from, int to)
{
	size_t cap = to > from ? (size_t)(to - from) : 0;

	p->sized = malloc((cap + 1) * sizeof *p->sized);
	p->sizeless = malloc((cap + 1) * sizeof *p->sizeless);
	p->maxend = malloc((cap + 1) * sizeof *p->maxend);
	if (!p->sized || !p->sizeless || !p->maxend)
		return -1;
	for (int i = from; i < to; i++)
		add_symbol(p, mod, i);
	qsort(p->sized, p->nsized, sizeof *p->sized, by_value);
	qsort(p->sizeless, p->nsizeless, sizeof *p->sizeless, by_value);
	for (size_t i = 0; i < p->nsized; i++) {
		GElf_Addr e = end_of(&p->sized[i]);
		p->maxend[i] = i && p->maxend[i - 1] > e ? p->maxend[i - 1] : e;
	}
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const GElf_Addr *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* all_value/all_maxend: every symbol's (value, end), by value. */
static int fill_all(struct scope_symtab *t)
{
	size_t n = 0;
	GElf_Addr *pairs;

	for (int k = 0; k < 2; k++)
		n += t->part[k].nsized + t->part[k].nsizeless;
	pairs = malloc((2 * n + 1) * sizeof *pairs);
	t->all_value = malloc((n + 1) * sizeof *t->all_value);
	t->all_maxend = malloc((n + 1) * sizeof *t->all_maxend);
	if (!pairs || !t->all_value || !t->all_maxend) {
		free(pairs);
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		const struct part *p = &t->part[k];
		for (size_t i = 0; i < p->nsized; i++) {
			pairs[2 * t->nall] = p->sized[i].value;
			pairs[2 * t->nall++ + 1] = end_of(&p->sized[i]);
		}
		for (size_t i = 0; i < p->nsizeless; i++) {
			pairs[2 * t->nall] = p->sizeless[i].value;
			pairs[2 * t->nall++ + 1] = p->sizeless[i].value;
		}
	}
	qsort(pairs, t->nall, 2 * sizeof *pairs, by_addr);
	for (size_t i = 0; i < t->nall; i++) {
		t->all_value[i] = pairs[2 * i];
		t->all_maxend[i] = i && t->all_maxend[i - 1] > pairs[2 * i + 1]
					   ? t->all_maxend[i - 1]
					   : pairs[2 * i + 1];
	}
	free(pairs);
	return 0;
}

/* Whether libdwfl can give a symbol a second value (function descriptors). */
static int has_descriptors(Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	return elf && gelf_getehdr(elf, &eh) && eh.e_machine == EM_PPC64;
}

struct scope_symtab *scope_symtab_build(Dwfl_Module *mod)
{
	struct scope_symtab *t = calloc(1, sizeof *t);
	int n, first_global;

	if (!t)
		return NULL;
	n = dwfl_module_getsymtab(mod);
	first_global = n < 0 ? -1 : dwfl_module_getsymtab_first_global(mod);
	if (first_global < 0)
		return t; /* no table: no names, as libdwfl gives none */
	t->ask_libdwfl = has_descriptors(mod);
	if (fill_part(&t->part[0], mod, first_global == 0 ? 1 : first_global, n) != 0 ||
	    fill_part(&t->part[1], mod, 1, first_global) != 0 || fill_all(t) != 0) {
		scope_symtab_free(t);
		return NULL;
	}
	return t;
}

/* The number of entries of values[0..n) (stride bytes apart) at or below addr. */
static size_t count_at_or_below(const void *values, size_t n, size_t stride, GElf_Addr addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (*(const GElf_Addr *)((const char *)values + mid * stride) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct tsym *better(const struct tsym *cur, const struct tsym *s)
{
	if (!cur || cur->value < s->value || cur->bind < s->bind)
		return s;
	if (cur->value == s->value && ((cur->size > s->size && cur->bind <= s->bind) ||
				       (cur->size >= s->size && cur->bind < s->bind)))
		return s;
	return cur;
}

/* The best sized symbol of p containing addr; *overflow when there are
 * too many to weigh here. */
static const struct tsym *best_containing(const struct part *p, GElf_Addr addr, int *overflow)
{
	const struct tsym *cand[MAX_CANDIDATES], *best = NULL;
	size_t n = 0;

	for (size_t j = count_at_or_below(p->sized, p->nsized, sizeof *p->sized, addr);
	     j-- > 0 && p->maxend[j] > addr;) {
		if (addr - p->sized[j].value >= p->sized[j].size)
			continue;
		if (n == MAX_CANDIDATES) {
			*overflow = 1;
			return NULL;
		}
		cand[n++] = &p->sized[j];
	}
	/* table order: those found walking down by value, sorted by pos */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && cand[k - 1]->pos > cand[k]->pos; k--) {
			const struct tsym *x = cand[k];
			cand[k] = cand[k - 1];
			cand[k - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		best = better(best, cand[i]);
	return best;
}

/* The last (by pos) sizeless symbol of p at value v that libdwfl's
 * same_section accepts: in the address's section (same_scn), or for a
 * symbol outside any (SHN_ABS, not SHF_ALLOC), at the address itself. */
static const struct tsym *last_sizeless_at(const struct part *p, GElf_Addr v, int same_scn,
					   int at_addr)
{
	size_t j = count_at_or_below(p->sizeless, p->nsizeless, sizeof *p->sizeless, v);
	for (; j-- > 0 && p->sizeless[j].value == v;)
		if (p->sizeless[j].shndx >= SHN_LORESERVE ? at_addr : same_scn)
			return &p->sizeless[j];
	return NULL;
}

/* The index of the section holding addr as libdwfl finds it, SHN_UNDEF
 * when none does. */
static GElf_Word section_of(Dwfl_Module *mod, GElf_Addr addr)
{
	Dwarf_Addr a = addr, bias;
	Elf_Scn *scn = dwfl_module_address_section(mod, &a, &bias);
	return scn ? (GElf_Word)elf_ndxscn(scn) : SHN_UNDEF;
}

const char *scope_symtab_name(struct scope_symtab *t, Dwfl_Module *mod, GElf_Addr addr)
{
	const struct tsym *s;
	int overflow = 0, same_scn;
	size_t k;
	GElf_Addr m;
	GElf_Off off;
	GElf_Sym sym;

	if (t->ask_libdwfl)
		return dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	if ((s = best_containing(&t->part[0], addr, &overflow)) != NULL ||
	    (!overflow && (s = last_sizeless_at(&t->part[0], addr, 1, 1)) != NULL) ||
	    (!overflow && (s = best_containing(&t->part[1], addr, &overflow)) != NULL))
		return s->name;
	if (overflow)
		return dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	k = count_at_or_below(t->all_value, t->nall, sizeof *t->all_value, addr);
	if (k == 0)
		return NULL;
	m = t->all_maxend[k - 1];
	same_scn = section_of(mod, m) == section_of(mod, addr);
	if ((s = last_sizeless_at(&t->part[1], m, same_scn, m == addr)) != NULL ||
	    (s = last_sizeless_at(&t->part[0], m, same_scn, m == addr)) != NULL)
		return s->name;
	return NULL;
}

void scope_symtab_free(struct scope_symtab *t)
{
	if (!t)
		return;
	for (int k = 0; k < 2; k++) {
		free(t->part[k].sized);
		free(t->part[k].sizeless);
		free(t->part[k].maxend);
	}
	free(t->all_value);
	free(t->all_maxend);
	free(t);
}
