/* SPDX-License-Identifier: MIT */
/* A small JSON reader: the whole text into a tree, for the files scope writes itself (bench.json).
 */
#ifndef SCOPE_LIB_JSON_H
#define SCOPE_LIB_JSON_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	int boolean;
	double number;
	char *string;	    /* JSON_STRING: UTF-8, NUL-terminated (a \u0000 ends it early) */
	char *key;	    /* the member's name, in an object */
	struct json *items; /* an array's elements, an object's members, in order */
	size_t n;
};

/* Parses the n bytes at text. Returns the tree (json_free), or NULL with a
 * one-line reason in err ("line 3: expected ',' or '}'"). */
struct json *json_parse(const char *text, size_t n, char *err, size_t cap);
/* The same for the file at path; the reason names no path. */
struct json *json_parse_file(const char *path, char *err, size_t cap);
void json_free(struct json *j);

/* The member key of object j; NULL when j is no object or has none. */
const struct json *json_get(const struct json *j, const char *key);
/* j's number, or fallback when j is NULL or not a number. */
double json_number(const struct json *j, double fallback);
/* j's string, or fallback when j is NULL or not a string. */
const char *json_text(const struct json *j, const char *fallback);
/* Member key of j as a number or a string, with the same fallbacks. */
double json_get_number(const struct json *j, const char *key, double fallback);
const char *json_get_text(const struct json *j, const char *key, const char *fallback);

#endif
