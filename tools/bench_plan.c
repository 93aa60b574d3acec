/* SPDX-License-Identifier: MIT */
/* scope-bench's plan: lists of strings, a variant's arguments split into words. */
#define _GNU_SOURCE
#include "bench.h"

#include <stdlib.h>
#include <string.h>

int strings_add(struct strings *s, const char *value)
{
	char **grown = realloc(s->v, (s->n + 2) * sizeof *grown);
	char *copy = strdup(value);

	if (!grown || !copy) {
		free(copy);
		if (grown)
			s->v = grown;
		return -1;
	}
	s->v = grown;
	s->v[s->n++] = copy;
	s->v[s->n] = NULL;
	return 0;
}

void strings_free(struct strings *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/*
 * Words as a shell splits them, without expanding anything: blanks
 * separate, 'single quotes' keep everything, "double quotes" keep all but
 * \" and \\, and a backslash outside quotes keeps the next character.
 * "-DOPT=3 --name 'a b'" is three words. Returns 0, 1 for an unterminated
 * quote, -1 without memory.
 */
int split_words(const char *s, struct strings *out)
{
	char *word = malloc(strlen(s) + 1);
	size_t len = 0;
	int in_word = 0, rc = 0;

	if (!word)
		return -1;
	for (; *s && rc == 0; s++) {
		char q = *s;
		if (q == ' ' || q == '\t' || q == '\n') {
			if (in_word) {
				word[len] = '\0';
				rc = strings_add(out, word);
			}
			in_word = 0;
			len = 0;
			continue;
		}
		in_word = 1;
		if (q == '\\' && s[1]) {
			word[len++] = *++s;
		} else if (q == '\'' || q == '"') {
			for (s++; *s && *s != q; s++) {
				if (q == '"' && *s == '\\' && (s[1] == '"' || s[1] == '\\'))
					s++;
				word[len++] = *s;
			}
			if (!*s) {
				rc = 1;
				break;
			}
		} else {
			word[len++] = q;
		}
	}
	if (rc == 0 && in_word) {
		word[len] = '\0';
		rc = strings_add(out, word);
	}
	free(word);
	return rc;
}
