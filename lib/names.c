/* SPDX-License-Identifier: MIT */
/* Shortens demangled C++ names to their qualified names and numbers those that collide. */
#define _GNU_SOURCE
#include "names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST 256
#define NONE	 SIZE_MAX

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t k = strlen(tail);
	return n >= k && memcmp(s + n - k, tail, k) == 0;
}

/* ---- Before the walk: suffixes and the parameter list ------------------- */

/* Drops every "[abi:...]" tag, in place; returns the new length. */
static size_t drop_abi_tags(char *s, size_t n)
{
	size_t r = 0, w = 0;

	while (r < n) {
		if (strncmp(s + r, "[abi:", 5) == 0) {
			char *close = memchr(s + r, ']', n - r);
			if (close) {
				r = (size_t)(close - s) + 1;
				continue;
			}
		}
		s[w++] = s[r++];
	}
	s[w] = 0;
	return w;
}

/* The qualifiers a member function's parameter list may be followed by. */
static const char *const qualifiers[] = {" const",    " volatile",	  " &&", " &", " restrict",
					 " noexcept", " transaction_safe"};
#define NQUALIFIERS (sizeof qualifiers / sizeof qualifiers[0])

/* Drops trailing " [clone .cold]" suffixes and qualifiers; returns the new length. */
static size_t drop_tail(const char *s, size_t n)
{
	for (int again = 1; again;) {
		again = 0;
		while (n && s[n - 1] == ' ')
			n--;
		if (n && s[n - 1] == ']') {
			const char *open = NULL;
			for (size_t i = n; i-- > 0;)
				if (strncmp(s + i, " [clone ", 8) == 0) {
					open = s + i;
					break;
				}
			if (open && !memchr(open + 1, ']', (size_t)(s + n - 1 - (open + 1)))) {
				n = (size_t)(open - s);
				again = 1;
				continue;
			}
		}
		for (size_t q = 0; q < NQUALIFIERS; q++)
			if (ends_with(s, n, qualifiers[q])) {
				n -= strlen(qualifiers[q]);
				again = 1;
				break;
			}
	}
	return n;
}

/* Where the parameter list that ends s[0..n) opens; n when s does not end with one. */
static size_t params_start(const char *s, size_t n)
{
	size_t depth = 0;

	if (!n || s[n - 1] != ')')
		return n;
	for (size_t i = n; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			/* "X::operator()" alone is a name, not a call of "X::operator" */
			return ends_with(s, i, "operator") ? n : i;
	}
	return n;
}

/* ---- The walk ----------------------------------------------------------- */

/* Symbolic operator names, longest first where one begins another. */
static const char *const symbols[] = {
	"->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==",   "!=", "&&",
	"||",  "++",  "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<",    ">",  "+",
	"-",   "*",   "/",   "%",   "^",  "&",	"|",  "~",  "!",  "=",	",",  "\"\"",
};
static const char *const words[] = {" new[]", " delete[]", " new", " delete", " co_await"};

struct walk {
	const char *s;
	size_t n, i;
	char *out;
	size_t len;
	char stack[MAX_NEST]; /* the brackets open */
	size_t top;
	size_t hide;	/* output is hidden while top > hide; NONE: shown */
	int conversion; /* after "operator " + a type: spaces are part of it */
	int after_call; /* a parameter list was just hidden */
};

static int hidden(const struct walk *w)
{
	return w->hide != NONE && w->top > w->hide;
}

static void put(struct walk *w, const char *s, size_t k)
{
	if (hidden(w))
		return;
	memcpy(w->out + w->len, s, k);
	w->len += k;
}

/* "operator" at w->i, a whole word: consumes it and its operator. */
static int take_operator(struct walk *w)
{
	const char *s = w->s + w->i + 8;
	size_t left = w->n - w->i - 8, k = 0;

	if (w->i && is_ident(w->s[w->i - 1]))
		return 0;
	if (strncmp(w->s + w->i, "operator", 8) != 0 || (left && is_ident(s[0])))
		return 0;
	for (size_t j = 0; !k && j < sizeof symbols / sizeof symbols[0]; j++)
		if (strncmp(s, symbols[j], strlen(symbols[j])) == 0)
			k = strlen(symbols[j]);
	if (k == 2 && s[0] == '"') /* operator"" _km: the suffix is the name */
		for (k = 2; k < left && (s[k] == ' ' || is_ident(s[k])); k++)
			;
	for (size_t j = 0; !k && j < sizeof words / sizeof words[0]; j++)
		if (strncmp(s, words[j], strlen(words[j])) == 0 &&
		    (left == strlen(words[j]) || !is_ident(s[strlen(words[j])])))
			k = strlen(words[j]);
	if (!k && left && s[0] == ' ') { /* a conversion: the rest names a type */
		k = 1;
		w->conversion = !hidden(w);
	}
	put(w, w->s + w->i, 8 + k);
	w->i += 8 + k;
	if (w->top == 0)
		w->after_call = 0;
	return 1;
}

static int open_group(struct walk *w, char c)
{
	char last = w->len ? w->out[w->len - 1] : 0;
	int hide = c == '<';

	if (w->top == MAX_NEST)
		return -1;
	/* "f(int)::x": a parameter list; "(anonymous namespace)::x": a name */
	if (c == '(' && w->top == 0 && (is_ident(last) || strchr(")]}>", last ? last : ' ')))
		hide = 1;
	if (c == '(' && w->top == 1 && w->stack[0] == '{') /* {lambda(int)#1} */
		hide = 1;
	if (hide && !hidden(w)) {
		w->hide = w->top;
		w->after_call = c == '(';
	}
	w->stack[w->top++] = c;
	put(w, &c, 1);
	return 0;
}

/* A closing bracket: pops to its opener ('>' only closes a '<'). */
static int close_group(struct walk *w, char c)
{
	char open = c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '<';
	size_t k = w->top;

	while (k && w->stack[k - 1] != open && open != '<')
		k--; /* a '<' that was a less-than in an expression */
	if (!k || w->stack[k - 1] != open) {
		if (c != '>')
			return -1;
		put(w, &c, 1);
		return 0;
	}
	w->top = k;
	put(w, &c, 1);
	w->top = k - 1;
	if (w->hide != NONE && w->top <= w->hide)
		w->hide = NONE;
	return 0;
}

/* A space outside brackets: before template arguments, after a parameter
 * list's qualifier, or after a return type, which is dropped. */
static void space(struct walk *w)
{
	const char *s = w->s + w->i;

	if (w->conversion) {
		if (s[1] != '<')
			put(w, " ", 1);
		return;
	}
	if (s[1] == '<')
		return;
	if (w->after_call)
		for (size_t q = 0; q < NQUALIFIERS; q++) {
			size_t k = strlen(qualifiers[q]);
			if (strncmp(s, qualifiers[q], k) == 0 && !is_ident(s[k])) {
				w->i += k - 1;
				return;
			}
		}
	w->len = 0; /* what came before was the return type */
}

static int walk(struct walk *w)
{
	while (w->i < w->n) {
		char c = w->s[w->i];
		if (c == 'o' && take_operator(w))
			continue;
		if (c == '<' || c == '(' || c == '[' || c == '{') {
			if (open_group(w, c) != 0)
				return -1;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			if (close_group(w, c) != 0)
				return -1;
		} else if (c == ' ' && w->top == 0) {
			space(w);
		} else {
			put(w, &c, 1);
			if (w->top == 0)
				w->after_call = 0;
		}
		w->i++;
	}
	while (w->conversion && w->len && w->out[w->len - 1] == ' ')
		w->len--;
	return w->top == 0 ? 0 : -1;
}

char *name_short(const char *full)
{
	size_t n = strlen(full);
	char *s = strdup(full), *out = malloc(n + 1);
	struct walk w;

	if (!s || !out) {
		free(s);
		free(out);
		return NULL;
	}
	n = drop_abi_tags(s, n);
	n = drop_tail(s, n);
	n = params_start(s, n);
	n = drop_tail(s, n);
	memset(&w, 0, sizeof w);
	w.s = s;
	w.n = n;
	w.out = out;
	w.hide = NONE;
	if (walk(&w) != 0 || w.len == 0)
		strcpy(out, full);
	else
		out[w.len] = 0;
	free(s);
	return out;
}

/* ---- Keeping names apart ------------------------------------------------ */

struct entry {
	const char *shown, *full;
	size_t index;
};

static int by_shown(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->shown, b->shown);

	if (!c)
		c = strcmp(a->full, b->full);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Numbers the second and later of each run of equal short names: name#2, name#3. */
static int number(char **names, const struct entry *e, size_t n)
{
	/* the first of a run keeps its name: the others are compared with it */
	for (size_t i = 1, first = 0, k = 2; i < n; i++) {
		char *numbered;
		if (strcmp(e[i].shown, e[first].shown) != 0) {
			first = i;
			k = 2;
			continue;
		}
		if (asprintf(&numbered, "%s#%zu", e[i].shown, k++) < 0)
			return -1;
		free(names[e[i].index]);
		names[e[i].index] = numbered;
	}
	return 0;
}

char **names_shown(const char *const *full, size_t n, int shorten)
{
	char **names = calloc(n + 1, sizeof *names);
	struct entry *e = shorten ? malloc((n + 1) * sizeof *e) : NULL;
	int ok = names && (e || !shorten);

	for (size_t i = 0; ok && i < n; i++) {
		names[i] = shorten ? name_short(full[i]) : strdup(full[i]);
		ok = names[i] != NULL;
		if (ok && e)
			e[i] = (struct entry){names[i], full[i], i};
	}
	if (ok && e) {
		qsort(e, n, sizeof *e, by_shown);
		ok = number(names, e, n) == 0;
	}
	free(e);
	if (!ok) {
		names_free(names, n);
		return NULL;
	}
	return names;
}

void names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}
