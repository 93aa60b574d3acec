/* SPDX-License-Identifier: MIT */
/* Parses the storage settings every tool accepts: --compression and --chunk-size. */
#include "storage.h"

#include <stdlib.h>
#include <string.h>

int storage_parse(struct storage *s, const char *spec)
{
	char *end;
	long level;

	memset(s, 0, sizeof *s);
	s->auto_min = STORAGE_AUTO_MIN_EVENTS;
	if (!spec || !*spec || strcmp(spec, "auto") == 0) {
		s->automatic = 1;
		s->level = STORAGE_AUTO_LEVEL;
		return 0;
	}
	if (strcmp(spec, "none") == 0)
		return 0;
	if (strcmp(spec, "gzip") == 0) {
		s->level = STORAGE_DEFAULT_LEVEL;
		return 0;
	}
	if (strncmp(spec, "gzip:", 5) != 0)
		return -1;
	level = strtol(spec + 5, &end, 10);
	if (*end || end == spec + 5 || level < 1 || level > 9)
		return -1;
	s->level = (int)level;
	return 0;
}

int storage_parse_chunk(struct storage *s, const char *v)
{
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return 0;
	n = strtoull(v, &end, 10);
	if (*end || n == 0 || n > STORAGE_MAX_CHUNK)
		return -1;
	s->chunk_elems = n;
	s->chunk_given = 1;
	return 0;
}
