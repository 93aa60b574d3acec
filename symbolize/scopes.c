/* SPDX-License-Identifier: MIT */
/* The compile units of a module and the code-holding DIEs of each, indexed by address. */
#define _GNU_SOURCE
#include "index.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * dwarf_getscopes(cu, pc) walks the unit's DIEs from its first child: at
 * each level it takes the first child (in DIE order) whose ranges contain
 * pc and goes down into it if its tag may hold scopes; the DIEs it stops
 * at, innermost first, are the scopes. A unit is read here once, in the
 * same order, keeping every DIE that has ranges (the others can never
 * contain pc) with the ranges of its children sorted by address: one
 * binary search per level then finds the same child.
 *
 * For pc inside an inlined instance, dwarf_getscopes continues with the
 * scopes around the instance's abstract origin, found by a second walk;
 * such addresses (rare at a function's entry) are still handed to it, as
 * are units whose DIEs libdw fails to read.
 */

struct snode {
	Dwarf_Die die;
	int parent; /* -1 for the unit itself */
	int tag;
	size_t kid0, nkids; /* its children's ranges: kids[kid0 .. kid0 + nkids) */
};

struct krange {
	Dwarf_Addr lo, hi;
	size_t parent, node; /* node: its index, also its order among its siblings */
};

struct unit {
	int bad; /* DIEs libdw could not read: ask dwarf_getscopes */
	struct snode *nodes;
	struct krange *kids;
	Dwarf_Addr *maxhi; /* the highest hi of kids[kid0 .. i] within a node's slice */
	size_t nnodes, nkids, capnodes, capkids;
};

struct cu_ref {
	Dwarf_Die *cu;
	size_t i; /* in dwfl_module_nextcu order */
};

struct scope_units {
	Dwfl_Module *mod;
	int listed; /* cus[] read */
	Dwarf_Addr bias;
	Dwarf_Die **cus;
	struct unit **units; /* parallel to cus, each read when first asked */
	struct cu_ref *by_ptr;
	struct krange *cu_ranges; /* parent unused; node: the unit's index */
	Dwarf_Addr *cu_maxhi;
	size_t ncus, ncu_ranges;
};

/* The tags __libdw_visit_scopes goes down into (elfutils 0.188). */
static int may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type: return 1;
	default: return 0;
	}
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;
	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(p = realloc(*arr, n * size)))
		return -1;
	*arr = p;
	*cap = n;
	return 0;
}

/* Adds die, a child of node parent, with its ranges: its node index, 0
 * when it has no range (no pc is in it), -1 on error. */
static long add_node(struct unit *u, size_t parent, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t first = u->nkids, node = u->nnodes;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (grow((void **)&u->kids, &u->capkids, u->nkids + 1, sizeof *u->kids) != 0)
			return -1;
		u->kids[u->nkids++] = (struct krange){lo, hi, parent, node};
	}
	if (off < 0)
		return -1; /* dwarf_getscopes may fail on it: let it */
	if (u->nkids == first)
		return 0;
	if (grow((void **)&u->nodes, &u->capnodes, u->nnodes + 1, sizeof *u->nodes) != 0)
		return -1;
	u->nodes[u->nnodes++] = (struct snode){*die, (int)parent, dwarf_tag(die), 0, 0};
	return (long)node;
}

/* An imported unit's children stand in for it among its siblings. */
struct import {
	const void *addr;
	const struct import *up;
};

static int walk_list(struct unit *u, size_t parent, Dwarf_Die *first, const struct import *imports);

static int walk_kids(struct unit *u, size_t parent, Dwarf_Die *die, const struct import *imports)
{
	Dwarf_Die child;
	int r = dwarf_child(die, &child);
	if (r != 0)
		return r < 0 ? -1 : 0;
	return walk_list(u, parent, &child, imports);
}

/* Follows one DW_TAG_imported_unit at *child; leaves *child at its sibling.
 * Returns 0, 1 when no sibling follows, -1 on error. */
static int walk_import(struct unit *u, size_t parent, Dwarf_Die *child,
		       const struct import *imports)
{
	Dwarf_Die orig = *child, kid;
	Dwarf_Attribute mem;
	int r;

	if (dwarf_formref_die(dwarf_attr(child, DW_AT_import, &mem), &kid) != NULL &&
	    dwarf_tag(&kid) != DW_TAG_compile_unit && dwarf_child(&kid, &kid) == 0) {
		struct import here = {orig.addr, imports};
		for (const struct import *i = imports; i; i = i->up)
			if (i->addr == orig.addr)
				return -1;
		if (walk_list(u, parent, &kid, &here) != 0)
			return -1;
	}
	r = dwarf_siblingof(&orig, child);
	return r < 0 ? -1 : r;
}

static int walk_list(struct unit *u, size_t parent, Dwarf_Die *first, const struct import *imports)
{
	Dwarf_Die child = *first;
	int r;

	do {
		long node;
		while (dwarf_tag(&child) == DW_TAG_imported_unit)
			if ((r = walk_import(u, parent, &child, imports)) != 0)
				return r < 0 ? -1 : 0;
		if ((node = add_node(u, parent, &child)) < 0)
			return -1;
		if (node > 0 && may_have_scopes(dwarf_tag(&child)) &&
		    dwarf_haschildren(&child) > 0 &&
		    walk_kids(u, (size_t)node, &child, imports) != 0)
			return -1;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return r < 0 ? -1 : 0;
}

static int by_parent_lo(const void *a, const void *b)
{
	const struct krange *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* Sorts the ranges by parent then address, points each node at its slice
 * and fills maxhi. */
static int slice_kids(struct unit *u)
{
	if (u->nkids)
		qsort(u->kids, u->nkids, sizeof *u->kids, by_parent_lo);
	if (!(u->maxhi = malloc((u->nkids + 1) * sizeof *u->maxhi)))
		return -1;
	for (size_t i = 0; i < u->nkids; i++) {
		struct snode *p = &u->nodes[u->kids[i].parent];
		int first = i == 0 || u->kids[i - 1].parent != u->kids[i].parent;
		if (first)
			p->kid0 = i;
		p->nkids++;
		u->maxhi[i] =
			!first && u->maxhi[i - 1] > u->kids[i].hi ? u->maxhi[i - 1] : u->kids[i].hi;
	}
	return 0;
}

static void unit_free(struct unit *u)
{
	if (!u)
		return;
	free(u->nodes);
	free(u->kids);
	free(u->maxhi);
	free(u);
}

/* Reads cu's DIEs as dwarf_getscopes walks them. NULL without memory. */
static struct unit *unit_build(Dwarf_Die *cu)
{
	struct unit *u = calloc(1, sizeof *u);

	if (!u || grow((void **)&u->nodes, &u->capnodes, 1, sizeof *u->nodes) != 0) {
		unit_free(u);
		return NULL;
	}
	u->nodes[u->nnodes++] = (struct snode){*cu, -1, dwarf_tag(cu), 0, 0};
	u->bad = walk_kids(u, 0, cu, NULL) != 0;
	if (!u->bad && slice_kids(u) != 0) {
		unit_free(u);
		return NULL;
	}
	return u;
}

/* The first (in DIE order) child of node n whose ranges contain pc, or -1. */
static long child_at(const struct unit *u, size_t n, Dwarf_Addr pc)
{
	const struct snode *p = &u->nodes[n];
	size_t lo = p->kid0, hi = p->kid0 + p->nkids;
	long best = -1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->kids[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > p->kid0 && u->maxhi[j] > pc;)
		if (u->kids[j].hi > pc && (best < 0 || u->kids[j].node < (size_t)best))
			best = (long)u->kids[j].node;
	return best;
}

/* The declaration of subprogram die, as decl_of reads it; 1 when it has
 * both a line and a file. */
static int decl_in(Dwarf_Die *cu, Dwarf_Die *die, Dwarf_Addr pc, const char **file, int *line)
{
	int found = dwarf_decl_line(die, line) == 0;
	*file = dwarf_decl_file(die);
	/* libdw finds no name for file 0 of a DWARF 5 line table, which
	 * clang uses for the main source when it lies outside the compile
	 * directory: the line table names it. */
	if (found && !*file) {
		Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
		*file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	}
	return found && *file;
}

/* The first subprogram of dwarf_getscopes(cu, pc) with a declaration. */
static int decl_by_scopes(Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes), found = 0;

	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			found = decl_in(cu, &scopes[i], pc, file, line);
	free(scopes);
	return found;
}

/* decl_by_scopes through the index: 1 or 0 as it, -1 when pc is inside
 * an inlined instance (the scopes continue around its abstract origin). */
static int decl_by_index(const struct unit *u, Dwarf_Die *cu, Dwarf_Addr pc, const char **file,
			 int *line)
{
	long n = 0, kid;

	while ((kid = child_at(u, (size_t)n, pc)) >= 0)
		n = kid;
	if (n == 0)
		return 0; /* no scope at all */
	for (long i = n; i >= 0; i = u->nodes[i].parent)
		if (u->nodes[i].tag == DW_TAG_inlined_subroutine)
			return -1;
	for (long i = n; i >= 0; i = u->nodes[i].parent)
		if (u->nodes[i].tag == DW_TAG_subprogram &&
		    decl_in(cu, (Dwarf_Die *)&u->nodes[i].die, pc, file, line))
			return 1;
	return 0;
}

struct scope_units *scope_units_new(Dwfl_Module *mod)
{
	struct scope_units *s = calloc(1, sizeof *s);
	if (s)
		s->mod = mod;
	return s;
}

static int by_ptr(const void *a, const void *b)
{
	const struct cu_ref *x = a, *y = b;
	return (x->cu > y->cu) - (x->cu < y->cu);
}

static int by_lo(const void *a, const void *b)
{
	const struct krange *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* Every unit's ranges, sorted, for units .debug_aranges does not cover. */
static int list_ranges(struct scope_units *s)
{
	size_t cap = 0;

	for (size_t i = 0; i < s->ncus; i++) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(s->cus[i], off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (grow((void **)&s->cu_ranges, &cap, s->ncu_ranges + 1,
				 sizeof *s->cu_ranges) != 0)
				return -1;
			s->cu_ranges[s->ncu_ranges++] = (struct krange){lo, hi, 0, i};
		}
	}
	if (s->ncu_ranges)
		qsort(s->cu_ranges, s->ncu_ranges, sizeof *s->cu_ranges, by_lo);
	if (!(s->cu_maxhi = malloc((s->ncu_ranges + 1) * sizeof *s->cu_maxhi)))
		return -1;
	for (size_t i = 0; i < s->ncu_ranges; i++)
		s->cu_maxhi[i] = i && s->cu_maxhi[i - 1] > s->cu_ranges[i].hi ? s->cu_maxhi[i - 1]
									      : s->cu_ranges[i].hi;
	return 0;
}

/* cus[], by_ptr[] and the units' ranges, once. */
static int list_units(struct scope_units *s)
{
	Dwarf_Die *cu = NULL;
	size_t cap = 0;

	if (s->listed)
		return s->listed > 0 ? 0 : -1;
	s->listed = -1;
	while ((cu = dwfl_module_nextcu(s->mod, cu, &s->bias)) != NULL) {
		if (grow((void **)&s->cus, &cap, s->ncus + 1, sizeof *s->cus) != 0)
			return -1;
		s->cus[s->ncus++] = cu;
	}
	s->units = calloc(s->ncus + 1, sizeof *s->units);
	s->by_ptr = malloc((s->ncus + 1) * sizeof *s->by_ptr);
	if (!s->units || !s->by_ptr)
		return -1;
	for (size_t i = 0; i < s->ncus; i++)
		s->by_ptr[i] = (struct cu_ref){s->cus[i], i};
	qsort(s->by_ptr, s->ncus, sizeof *s->by_ptr, by_ptr);
	if (list_ranges(s) != 0)
		return -1;
	s->listed = 1;
	return 0;
}

Dwarf_Die *scope_units_cu(struct scope_units *s, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(s->mod, addr, bias);
	size_t lo = 0, hi;
	long best = -1;

	if (cu)
		return cu;
	if (list_units(s) != 0) {
		/* without memory: ask every unit, as libdw would */
		while ((cu = dwfl_module_nextcu(s->mod, cu, bias)) != NULL)
			if (dwarf_haspc(cu, addr - *bias) > 0)
				return cu;
		return NULL;
	}
	if (s->ncus)
		*bias = s->bias;
	hi = s->ncu_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->cu_ranges[mid].lo <= addr - *bias)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && s->cu_maxhi[j] > addr - *bias;)
		if (s->cu_ranges[j].hi > addr - *bias &&
		    (best < 0 || s->cu_ranges[j].node < (size_t)best))
			best = (long)s->cu_ranges[j].node;
	return best >= 0 ? s->cus[best] : NULL;
}

/* cu's index, read the first time; NULL when cu is not one of the module's
 * units as listed or without memory. */
static struct unit *unit_of(struct scope_units *s, Dwarf_Die *cu)
{
	struct cu_ref key = {cu, 0}, *r;

	if (list_units(s) != 0)
		return NULL;
	r = bsearch(&key, s->by_ptr, s->ncus, sizeof *s->by_ptr, by_ptr);
	if (!r)
		return NULL;
	if (!s->units[r->i])
		s->units[r->i] = unit_build(cu);
	return s->units[r->i];
}

int scope_units_decl(struct scope_units *s, Dwarf_Die *cu, Dwarf_Addr pc, const char **file,
		     int *line)
{
	struct unit *u = unit_of(s, cu);
	int found = u && !u->bad ? decl_by_index(u, cu, pc, file, line) : -1;
	return found >= 0 ? found : decl_by_scopes(cu, pc, file, line);
}

void scope_units_free(struct scope_units *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->units && i < s->ncus; i++)
		unit_free(s->units[i]);
	free(s->units);
	free(s->cus);
	free(s->by_ptr);
	free(s->cu_ranges);
	free(s->cu_maxhi);
	free(s);
}
