/* SPDX-License-Identifier: MIT */
/* A small JSON reader (RFC 8259): recursive descent into a tree, depth bounded. */
#define _GNU_SOURCE
#include "json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting than scope ever writes is refused, not recursed into. */
#define MAX_DEPTH 64

struct parser {
	const char *start, *s, *end;
	char *err;
	size_t cap;
	int failed;
};

/* The line p is at, counting from 1. */
static int line_of(const struct parser *p)
{
	int line = 1;
	for (const char *c = p->start; c < p->s && c < p->end; c++)
		line += *c == '\n';
	return line;
}

static int fail(struct parser *p, const char *what)
{
	if (!p->failed)
		snprintf(p->err, p->cap, "line %d: %s", line_of(p), what);
	p->failed = 1;
	return -1;
}

static void skip_space(struct parser *p)
{
	while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0)
		return fail(p, "unknown word (expected a value)");
	p->s += n;
	return 0;
}

static int hex4(struct parser *p, unsigned *v)
{
	*v = 0;
	if (p->end - p->s < 4)
		return fail(p, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = *p->s++;
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;
		if (d == 16)
			return fail(p, "bad \\u escape");
		*v = *v << 4 | d;
	}
	return 0;
}

static size_t utf8(char *out, unsigned cp)
{
	if (cp < 0x80)
		return out[0] = (char)cp, 1;
	if (cp < 0x800)
		return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* One escape after the backslash, appended at *o. */
static int escape(struct parser *p, char **o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	unsigned cp, lo;

	if (p->s >= p->end)
		return fail(p, "unterminated string");
	if (*p->s != 'u') {
		if (!(k = strchr(from, *p->s)) || !*p->s)
			return fail(p, "bad escape in a string");
		*(*o)++ = to[k - from];
		p->s++;
		return 0;
	}
	p->s++;
	if (hex4(p, &cp) != 0)
		return -1;
	if (cp >= 0xd800 && cp < 0xdc00 && p->end - p->s >= 6 && p->s[0] == '\\' &&
	    p->s[1] == 'u') {
		p->s += 2;
		if (hex4(p, &lo) != 0)
			return -1;
		cp = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
						 : 0xfffd;
	} else if (cp >= 0xd800 && cp < 0xe000) {
		cp = 0xfffd;
	}
	*o += utf8(*o, cp);
	return 0;
}

static int string(struct parser *p, char **out)
{
	const char *q = ++p->s;
	char *buf, *o;

	while (q < p->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= p->end)
		return fail(p, "unterminated string");
	/* an escape never takes more room than it is written in */
	if (!(buf = o = malloc((size_t)(q - p->s) + 1)))
		return fail(p, "out of memory");
	while (*p->s != '"') {
		if ((unsigned char)*p->s < 0x20) {
			free(buf);
			return fail(p, "control character in a string");
		}
		if (*p->s != '\\') {
			*o++ = *p->s++;
			continue;
		}
		p->s++;
		if (escape(p, &o) != 0) {
			free(buf);
			return -1;
		}
	}
	p->s++;
	*o = '\0';
	*out = buf;
	return 0;
}

static int number(struct parser *p, double *v)
{
	char tmp[64], *end;
	size_t n = 0;

	while (p->s + n < p->end && n < sizeof tmp - 1 && strchr("+-.eE0123456789", p->s[n]))
		n++;
	memcpy(tmp, p->s, n);
	tmp[n] = '\0';
	errno = 0;
	*v = strtod(tmp, &end);
	if (!n || *end || (tmp[0] == '-' ? tmp[1] : tmp[0]) == '.')
		return fail(p, "bad number");
	p->s += n;
	return 0;
}

static int value(struct parser *p, struct json *j, int depth);

/* Appends a zeroed item to j's items; NULL without memory. */
static struct json *add_item(struct parser *p, struct json *j, size_t *cap)
{
	if (j->n == *cap) {
		size_t grown = *cap ? 2 * *cap : 4;
		struct json *items = realloc(j->items, grown * sizeof *items);
		if (!items)
			return fail(p, "out of memory"), NULL;
		j->items = items;
		*cap = grown;
	}
	memset(&j->items[j->n], 0, sizeof *j->items);
	return &j->items[j->n++];
}

/* An array or an object: items separated by ',' up to close. */
static int container(struct parser *p, struct json *j, int depth, char close)
{
	size_t cap = 0;

	j->type = close == ']' ? JSON_ARRAY : JSON_OBJECT;
	p->s++;
	skip_space(p);
	if (p->s < p->end && *p->s == close)
		return p->s++, 0;
	for (;;) {
		struct json *item = add_item(p, j, &cap);
		if (!item)
			return -1;
		skip_space(p);
		if (close == '}') {
			if (p->s >= p->end || *p->s != '"')
				return fail(p, "expected a member name");
			if (string(p, &item->key) != 0)
				return -1;
			skip_space(p);
			if (p->s >= p->end || *p->s != ':')
				return fail(p, "expected ':'");
			p->s++;
		}
		if (value(p, item, depth + 1) != 0)
			return -1;
		skip_space(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close)
			return p->s++, 0;
		return fail(p, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
	}
}

static int value(struct parser *p, struct json *j, int depth)
{
	skip_space(p);
	if (depth > MAX_DEPTH)
		return fail(p, "nested too deep");
	if (p->s >= p->end)
		return fail(p, "unexpected end (expected a value)");
	switch (*p->s) {
	case '{': return container(p, j, depth, '}');
	case '[': return container(p, j, depth, ']');
	case '"': j->type = JSON_STRING; return string(p, &j->string);
	case 't': j->type = JSON_BOOL, j->boolean = 1; return literal(p, "true");
	case 'f': j->type = JSON_BOOL; return literal(p, "false");
	case 'n': j->type = JSON_NULL; return literal(p, "null");
	default: j->type = JSON_NUMBER; return number(p, &j->number);
	}
}

static void free_items(struct json *j)
{
	for (size_t i = 0; i < j->n; i++)
		free_items(&j->items[i]);
	free(j->items);
	free(j->string);
	free(j->key);
}

void json_free(struct json *j)
{
	if (!j)
		return;
	free_items(j);
	free(j);
}

struct json *json_parse(const char *text, size_t n, char *err, size_t cap)
{
	struct parser p = {text, text, text + n, err, cap, 0};
	struct json *j = calloc(1, sizeof *j);

	if (!j) {
		snprintf(err, cap, "out of memory");
		return NULL;
	}
	if (value(&p, j, 0) == 0) {
		skip_space(&p);
		if (p.s == p.end)
			return j;
		fail(&p, "text after the value");
	}
	json_free(j);
	return NULL;
}

struct json *json_parse_file(const char *path, char *err, size_t cap)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	struct json *j;

	if (!f) {
		snprintf(err, cap, "%s", strerror(errno));
		return NULL;
	}
	{
		FILE *mem = open_memstream(&buf, &len);
		char chunk[65536];
		size_t got;
		while (mem && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
			fwrite(chunk, 1, got, mem);
		if (!mem || ferror(f) || fclose(mem) != 0) {
			snprintf(err, cap, "cannot read it: %s", strerror(errno));
			fclose(f);
			free(buf);
			return NULL;
		}
	}
	fclose(f);
	j = json_parse(buf, len, err, cap);
	free(buf);
	return j;
}

const struct json *json_get(const struct json *j, const char *key)
{
	if (!j || j->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->items[i].key, key) == 0)
			return &j->items[i];
	return NULL;
}

double json_number(const struct json *j, double fallback)
{
	return j && j->type == JSON_NUMBER ? j->number : fallback;
}

const char *json_text(const struct json *j, const char *fallback)
{
	return j && j->type == JSON_STRING ? j->string : fallback;
}

double json_get_number(const struct json *j, const char *key, double fallback)
{
	return json_number(json_get(j, key), fallback);
}

const char *json_get_text(const struct json *j, const char *key, const char *fallback)
{
	return json_text(json_get(j, key), fallback);
}
