/* SPDX-License-Identifier: MIT */
/* scope-report's call trees (--tree) and folded stacks (--folded), rebuilt from the events. */
#include "format.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* ---- Call-path trie ----------------------------------------------------- */

#define NONE UINT32_MAX

struct tnode {
	uint64_t region; /* UINT64_MAX for a root */
	uint32_t parent, first_child, next_sibling;
	uint64_t calls, total;
	int64_t self;
};

struct trie {
	struct tnode *n;
	size_t len, cap;
	struct u64map kids; /* parent << 32 | region -> child */
};

static uint32_t trie_add(struct trie *t, uint32_t parent, uint64_t region)
{
	struct tnode *x;

	if (t->len == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct tnode *n = cap < NONE ? realloc(t->n, cap * sizeof *n) : NULL;
		if (!n)
			return NONE;
		t->n = n;
		t->cap = cap;
	}
	x = &t->n[t->len];
	memset(x, 0, sizeof *x);
	x->region = region;
	x->parent = parent;
	x->first_child = NONE;
	x->next_sibling = parent == NONE ? NONE : t->n[parent].first_child;
	if (parent != NONE)
		t->n[parent].first_child = (uint32_t)t->len;
	return (uint32_t)t->len++;
}

/* The child of parent for region, made on first use; NONE when out of memory. */
static uint32_t trie_child(struct trie *t, uint32_t parent, uint64_t region)
{
	int added;
	uint32_t *slot =
		map_slot(&t->kids, (uint64_t)parent << 32 | region, (uint32_t)t->len, &added);

	if (!slot)
		return NONE;
	if (added && trie_add(t, parent, region) == NONE) {
		*slot = NONE; /* never used: the walk stops */
		return NONE;
	}
	return *slot;
}

static void trie_free(struct trie *t)
{
	free(t->n);
	map_free(&t->kids);
	memset(t, 0, sizeof *t);
}

static uint64_t self_of(const struct tnode *x)
{
	return x->self > 0 ? (uint64_t)x->self : 0;
}

/* ---- Building ----------------------------------------------------------- */

/* A frame's tag: the node its callees hang under, and whether the call itself is kept. */
#define TAG_KEPT (1ULL << 32)

struct builder {
	struct call_filter *filter;
	struct trie t;
	uint32_t *roots;      /* per lane (--per-thread), or roots[0] for all */
	uint64_t *lane_calls; /* calls kept per lane, or lane_calls[0] for all */
	int per_lane;
	int oom;
};

static uint32_t root_of(struct builder *b, const struct wk_lane *l)
{
	uint32_t *r = &b->roots[b->per_lane ? l->lane : 0];
	if (*r == NONE)
		*r = trie_add(&b->t, NONE, UINT64_MAX);
	return *r;
}

static int build_enter(void *ctx, struct wk_lane *l)
{
	struct builder *b = ctx;
	struct wk_frame *f = &l->stack[l->n - 1];
	uint32_t under = l->n > 1 ? (uint32_t)l->stack[l->n - 2].tag : root_of(b, l), node;

	if (under == NONE || !filter_call(b->filter, l->process, f)) {
		f->tag = under;
		b->oom = under == NONE;
		return b->oom ? -1 : 0;
	}
	node = trie_child(&b->t, under, f->region);
	if (node == NONE) {
		b->oom = 1;
		return -1;
	}
	b->t.n[node].calls++;
	b->lane_calls[b->per_lane ? l->lane : 0]++;
	f->tag = node | TAG_KEPT;
	return 0;
}

/* Times at the end of the call: less the recording's cost with --compensate. */
static int build_leave(void *ctx, struct wk_lane *l)
{
	struct builder *b = ctx;
	const struct wk_frame *f = &l->stack[l->n - 1];

	if (f->tag & TAG_KEPT) {
		b->t.n[(uint32_t)f->tag].total += f->total_ns;
		b->t.n[(uint32_t)f->tag].self += f->self_ns;
	}
	return 0;
}

/* Replays process i into b's trie; returns 0 or -1 with the reason in p->err. */
static int build(struct builder *b, const struct options *o, struct rd_profile *p, size_t i)
{
	struct wk_visitor v = {.ctx = b,
			       .enter = build_enter,
			       .leave = build_leave,
			       .overhead_ns = call_cost(o, 0)};
	int rc;

	if (p->nregions >= NONE) {
		snprintf(p->err, sizeof p->err, "too many regions for a call tree");
		return -1;
	}
	rc = wk_process(p, i, o->thread, &v);
	if (rc != 0 && b->oom)
		snprintf(p->err, sizeof p->err, "out of memory");
	return rc == 0 ? 0 : -1;
}

/* ---- Printing a tree ---------------------------------------------------- */

static const struct trie *sort_trie;
static const struct options *sort_options;
static enum sort_key sort_by;

static int by_key(const void *x, const void *y)
{
	const struct tnode *a = &sort_trie->n[*(const uint32_t *)x];
	const struct tnode *b = &sort_trie->n[*(const uint32_t *)y];
	uint64_t va, vb;
	int c;

	switch (sort_by) {
	case SORT_SELF: va = self_of(a), vb = self_of(b); break;
	case SORT_CALLS: va = a->calls, vb = b->calls; break;
	case SORT_NAME: va = vb = 0; break;
	default: va = a->total, vb = b->total; break;
	}
	if (va != vb)
		return va > vb ? -1 : 1;
	c = strcmp(region_name(sort_options, 0, a->region),
		   region_name(sort_options, 0, b->region));
	return c ? c : (a->region > b->region) - (a->region < b->region);
}

/* The children of node, sorted; *n of them. NULL when out of memory. */
static uint32_t *children(const struct trie *t, uint32_t node, size_t *n)
{
	size_t k = 0;
	uint32_t *kids;

	for (uint32_t c = t->n[node].first_child; c != NONE; c = t->n[c].next_sibling)
		k++;
	kids = malloc((k + 1) * sizeof *kids);
	if (!kids)
		return NULL;
	k = 0;
	for (uint32_t c = t->n[node].first_child; c != NONE; c = t->n[c].next_sibling)
		kids[k++] = c;
	qsort(kids, k, sizeof *kids, by_key);
	*n = k;
	return kids;
}

struct printer {
	const struct options *o;
	const struct rd_profile *p;
	const struct trie *t;
	FILE *out;
	size_t process, lane;
	int merged;	 /* the lanes of the process in one tree: no lane */
	int where_width; /* of the location column (--lines) */
	uint32_t *path;	 /* nodes from the root's child down to the current one */
	size_t depth, cap;
	int first; /* JSON: no comma before the next object */
};

/* The path "main;a;b" as one CSV field, always quoted (names may hold commas). */
static void csv_path(const struct printer *pr)
{
	putc('"', pr->out);
	for (size_t i = 0; i < pr->depth; i++) {
		if (i)
			putc(';', pr->out);
		for (const char *s = region_name(pr->o, 0, pr->t->n[pr->path[i]].region); *s; s++) {
			if (*s == '"')
				putc('"', pr->out);
			putc(*s, pr->out);
		}
	}
	putc('"', pr->out);
}

/* Opens a node's line or object; its children follow, then close_node. */
static void open_node(struct printer *pr, uint32_t node)
{
	const struct tnode *x = &pr->t->n[node];
	const struct rd_region *r = &pr->p->regions[x->region];
	const char *name = region_name(pr->o, 0, x->region);
	char b[2][32];
	size_t level = pr->depth - 1;

	switch (pr->o->format) {
	case FMT_TEXT:
		fprintf(pr->out, "%11s  %11s  %10llu  ", fmt_ns(b[0], 32, (double)x->total),
			fmt_ns(b[1], 32, (double)self_of(x)), (unsigned long long)x->calls);
		if (pr->o->lines)
			fprintf(pr->out, "%-*s  ", pr->where_width,
				pr->o->shown[0].where[x->region]);
		fprintf(pr->out, "%*s%s\n", (int)(2 * level), "", name);
		break;
	case FMT_CSV:
		fprintf(pr->out, "%zu,", pr->process);
		if (!pr->merged)
			fprintf(pr->out, "%zu", pr->lane);
		fprintf(pr->out, ",%zu,%llu,%llu,%llu,", level, (unsigned long long)x->calls,
			(unsigned long long)x->total, (unsigned long long)self_of(x));
		csv_string(pr->out, name);
		putc(',', pr->out);
		csv_path(pr);
		putc(',', pr->out);
		csv_string(pr->out, r->file);
		fprintf(pr->out, ",%llu\n", (unsigned long long)r->line);
		break;
	case FMT_JSON:
		fputs(pr->first ? "{\"region\":" : ",{\"region\":", pr->out);
		json_string(pr->out, name);
		fputs(",\"file\":", pr->out);
		json_string(pr->out, r->file);
		fprintf(pr->out,
			",\"line\":%llu,\"calls\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,"
			"\"children\":[",
			(unsigned long long)r->line, (unsigned long long)x->calls,
			(unsigned long long)x->total, (unsigned long long)self_of(x));
		pr->first = 1;
		break;
	}
}

static void close_node(struct printer *pr)
{
	if (pr->o->format == FMT_JSON) {
		fputs("]}", pr->out);
		pr->first = 0;
	}
}

struct level {
	uint32_t *kids;
	size_t n, i;
};

/* Depth-first, without recursion (call paths can be deep). Returns 0 or -1 (memory). */
static int print_subtree(struct printer *pr, uint32_t root)
{
	struct level *stack = NULL;
	size_t top = 0, cap = 0;
	int rc = 0;

	pr->depth = 0;
	for (;;) {
		struct level *lv;
		uint32_t node = top ? stack[top - 1].kids[stack[top - 1].i++] : root;
		size_t want = top + 1;
		if (want > cap || want > pr->cap) {
			size_t c = 2 * want + 16;
			struct level *s = realloc(stack, c * sizeof *s);
			uint32_t *path = s ? realloc(pr->path, c * sizeof *path) : NULL;
			if (s)
				stack = s;
			if (!s || !path) {
				rc = -1;
				break;
			}
			pr->path = path;
			cap = pr->cap = c;
		}
		if (top) {
			pr->path[pr->depth++] = node;
			open_node(pr, node);
		}
		lv = &stack[top++];
		lv->i = lv->n = 0;
		lv->kids = NULL;
		if (!pr->o->depth || pr->depth < pr->o->depth) {
			lv->kids = children(pr->t, node, &lv->n);
			if (!lv->kids) {
				rc = -1;
				break;
			}
		}
		while (top && stack[top - 1].i == stack[top - 1].n) {
			free(stack[--top].kids);
			if (top) {
				close_node(pr);
				pr->depth--;
			}
		}
		if (!top)
			break;
	}
	while (top)
		free(stack[--top].kids);
	free(stack);
	return rc;
}

static void column_heads(const struct printer *pr)
{
	fprintf(pr->out, "%11s  %11s  %10s  ", "total", "self", "calls");
	if (pr->o->lines)
		fprintf(pr->out, "%-*s  ", pr->where_width, "location");
	fputs("region\n", pr->out);
}

static void lane_heading(struct printer *pr, const struct rd_lane *ln, uint64_t calls)
{
	const struct rd_process *proc = &pr->p->processes[pr->process];

	switch (pr->o->format) {
	case FMT_TEXT:
		fprintf(pr->out, "process %zu (pid %lld) lane %zu (tid %llu) %s: %llu calls\n",
			pr->process, (long long)proc->pid, pr->lane, (unsigned long long)ln->tid,
			ln->name, (unsigned long long)calls);
		column_heads(pr);
		break;
	case FMT_CSV: break;
	case FMT_JSON:
		fprintf(pr->out,
			"%s{\"process\":%zu,\"pid\":%lld,\"lane\":%zu,\"tid\":%llu,\"name\":",
			pr->first ? "" : ",", pr->process, (long long)proc->pid, pr->lane,
			(unsigned long long)ln->tid);
		json_string(pr->out, ln->name);
		fputs(",\"calls\":[", pr->out);
		pr->first = 1;
		break;
	}
}

/* The heading of a process's tree, its lanes merged. */
static void process_heading(struct printer *pr, uint64_t calls)
{
	const struct rd_process *proc = &pr->p->processes[pr->process];
	const char *exe = strrchr(proc->executable, '/');
	uint64_t wall = proc->end - proc->start;

	exe = exe ? exe + 1 : proc->executable;
	switch (pr->o->format) {
	case FMT_TEXT:
		fprintf(pr->out, "process %zu (pid %lld) %s: %llu calls on %zu thread lane%s",
			pr->process, (long long)proc->pid, exe, (unsigned long long)calls,
			proc->nlanes, proc->nlanes == 1 ? "" : "s");
		print_recording(pr->o, 0, pr->p, (int64_t)pr->process, wall, pr->out);
		column_heads(pr);
		break;
	case FMT_CSV: break;
	case FMT_JSON:
		fprintf(pr->out,
			"%s{\"process\":%zu,\"pid\":%lld,\"executable\":", pr->first ? "" : ",",
			pr->process, (long long)proc->pid);
		json_string(pr->out, proc->executable);
		fprintf(pr->out, ",\"lanes\":%zu", proc->nlanes);
		json_recording(pr->o, 0, pr->p, (int64_t)pr->process, wall, pr->out);
		fputs(",\"calls\":[", pr->out);
		pr->first = 1;
		break;
	}
}

/* The width of the widest "file:line" in the trie, at least that of "location". */
static int where_width(const struct options *o, const struct trie *t)
{
	size_t w = strlen("location");

	for (size_t i = 0; i < t->len; i++)
		if (t->n[i].region != UINT64_MAX && strlen(o->shown[0].where[t->n[i].region]) > w)
			w = strlen(o->shown[0].where[t->n[i].region]);
	return w > 4096 ? 4096 : (int)w;
}

/* Prints one tree from root, after its heading; *printed counts the trees shown. */
static int print_tree(struct printer *pr, const struct builder *b, uint32_t root, size_t *printed)
{
	const struct rd_process *proc = &pr->p->processes[pr->process];

	if (root == NONE || b->t.n[root].first_child == NONE)
		return 0;
	if (pr->o->format == FMT_TEXT && (*printed)++)
		putc('\n', pr->out);
	if (pr->o->format == FMT_JSON)
		pr->first = (*printed)++ == 0;
	if (pr->merged)
		process_heading(pr, b->lane_calls[0]);
	else
		lane_heading(pr, &proc->lanes[pr->lane], b->lane_calls[pr->lane]);
	if (print_subtree(pr, root) != 0)
		return -1;
	if (pr->o->format == FMT_JSON) {
		fputs("]}", pr->out);
		pr->first = 0;
	}
	return 0;
}

/* Prints the trees of process i: one, or one per lane. */
static int print_process(struct printer *pr, const struct builder *b, size_t *printed)
{
	const struct rd_process *proc = &pr->p->processes[pr->process];

	pr->where_width = where_width(pr->o, &b->t);
	if (pr->merged)
		return print_tree(pr, b, b->roots[0], printed);
	for (size_t lane = 0; lane < proc->nlanes; lane++) {
		pr->lane = lane;
		if (print_tree(pr, b, b->roots[lane], printed) != 0)
			return -1;
	}
	return 0;
}

/* ---- Views -------------------------------------------------------------- */

static int builder_init(struct builder *b, struct call_filter *f, size_t nroots, int per_lane)
{
	memset(b, 0, sizeof *b);
	b->filter = f;
	b->per_lane = per_lane;
	b->roots = malloc((nroots + 1) * sizeof *b->roots);
	b->lane_calls = calloc(nroots + 1, sizeof *b->lane_calls);
	if (!b->roots || !b->lane_calls)
		return -1;
	for (size_t i = 0; i <= nroots; i++)
		b->roots[i] = NONE;
	return 0;
}

static void builder_free(struct builder *b)
{
	trie_free(&b->t);
	free(b->roots);
	free(b->lane_calls);
}

static int tree_of_process(struct printer *pr, struct call_filter *f, struct rd_profile *p,
			   size_t *printed)
{
	struct builder b;
	int rc = -1;

	if (builder_init(&b, f, p->processes[pr->process].nlanes, !pr->merged) != 0)
		snprintf(p->err, sizeof p->err, "out of memory");
	else if (build(&b, pr->o, p, pr->process) == 0) {
		pr->t = &b.t;
		sort_trie = &b.t;
		rc = print_process(pr, &b, printed);
		if (rc != 0)
			snprintf(p->err, sizeof p->err, "out of memory");
	}
	builder_free(&b);
	return rc;
}

int view_tree(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	/* one lane (--thread) is a tree per lane too */
	struct printer pr = {.o = o, .p = p, .out = out, .merged = !o->per_thread && o->thread < 0};
	struct call_filter f;
	size_t printed = 0;
	int rc = 0;

	if (filter_init(&f, o, 0, p) != 0) {
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
	sort_options = o;
	sort_by = o->sort_given ? o->sort : SORT_TOTAL;
	if (o->format == FMT_JSON) {
		json_doc_begin(out, path, p);
		json_recording(o, 0, p, -1, selected_wall(o, p), out);
		fputs(pr.merged ? ",\"processes\":[" : ",\"lanes\":[", out);
	} else if (o->format == FMT_CSV) {
		fputs("process,lane,level,calls,total_ns,self_ns,region,path,file,line\n", out);
	}
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		pr.process = i;
		rc = tree_of_process(&pr, &f, p, &printed);
	}
	if (o->format == FMT_JSON) {
		fputs("]", out);
		json_doc_end(out);
	}
	free(pr.path);
	filter_free(&f);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

/* ---- Folded stacks ------------------------------------------------------ */

/* A name in a folded line: ';' separates frames and a line ends the stack. */
static void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		putc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* Every node with self time, as "root;...;node SELF_NS", depth first. */
static int print_folded(const struct options *o, const struct trie *t, FILE *out)
{
	uint32_t *path = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->len; i++) {
		size_t depth = 0;
		if (t->n[i].region == UINT64_MAX || t->n[i].self <= 0)
			continue;
		for (uint32_t x = (uint32_t)i; t->n[x].region != UINT64_MAX; x = t->n[x].parent) {
			if (depth == cap) {
				size_t c = 2 * cap + 16;
				uint32_t *grown = realloc(path, c * sizeof *grown);
				if (!grown) {
					free(path);
					return -1;
				}
				path = grown;
				cap = c;
			}
			path[depth++] = x;
		}
		while (depth--) {
			folded_name(out, region_name(o, 0, t->n[path[depth]].region));
			putc(depth ? ';' : ' ', out);
		}
		fprintf(out, "%llu\n", (unsigned long long)t->n[i].self);
	}
	free(path);
	return 0;
}

int view_folded(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct call_filter f;
	struct builder b;
	int rc = 0;

	sort_options = o;
	if (filter_init(&f, o, 0, p) != 0 || builder_init(&b, &f, 0, 0) != 0) {
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		rc = build(&b, o, p, i);
	}
	if (rc == 0 && print_folded(o, &b.t, out) != 0) {
		snprintf(p->err, sizeof p->err, "out of memory");
		rc = -1;
	}
	builder_free(&b);
	filter_free(&f);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

/* ---- The merged tree, for other views ----------------------------------- */

int call_tree_merged(const struct options *o, struct rd_profile *p, struct call_tree *out)
{
	struct call_filter f;
	struct builder b;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (filter_init(&f, o, 0, p) != 0 || builder_init(&b, &f, 0, 0) != 0) {
		snprintf(p->err, sizeof p->err, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		rc = build(&b, o, p, i);
	}
	if (rc == 0 && b.t.len && !(out->nodes = calloc(b.t.len, sizeof *out->nodes))) {
		snprintf(p->err, sizeof p->err, "out of memory");
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < b.t.len; i++) {
		const struct tnode *x = &b.t.n[i];
		out->nodes[i] = (struct call_node){.region = x->region,
						   .parent = x->parent,
						   .calls = x->calls,
						   .total = x->total,
						   .self = self_of(x)};
	}
	out->n = rc == 0 ? b.t.len : 0;
	builder_free(&b);
	filter_free(&f);
	return rc;
}
