/* SPDX-License-Identifier: MIT */
/* Reads the SCOPE_* environment variables once, at start-up. */
#define _GNU_SOURCE
#include "state.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CHUNK_BYTES (64u << 10)
#define DEFAULT_LANES	    16384u
#define DEFAULT_ARENA_MAX   (UINT64_C(64) << 30)

static SCOPE_NOINST void copy(char *dst, size_t cap, const char *src)
{
	if (src && strlen(src) < cap)
		strcpy(dst, src);
}

/* "64K", "16M", "2G" or plain bytes; 0 when unreadable. */
static SCOPE_NOINST uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	return *end ? 0 : v;
}

/* The writer installed beside this library: LIBDIR/../bin/scope-writer. */
static SCOPE_NOINST void default_writer(char *dst, size_t cap)
{
	Dl_info info;
	char *slash;
	char dir[SCOPE_PATH_BYTES];

	if (!dladdr((void *)&scope_config_read, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, dir))
		return;
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dst, cap, "%s/../bin/scope-writer", dir);
}

void scope_config_read(struct scope_config *cfg)
{
	const char *tmp = getenv("SCOPE_TMPDIR");
	uint64_t v;

	memset(cfg, 0, sizeof *cfg);
	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	copy(cfg->tmpdir, sizeof cfg->tmpdir, tmp && *tmp ? tmp : "/tmp");
	copy(cfg->output, sizeof cfg->output, getenv("SCOPE_OUTPUT"));
	copy(cfg->compression, sizeof cfg->compression, getenv("SCOPE_COMPRESSION"));
	copy(cfg->writer, sizeof cfg->writer, getenv("SCOPE_WRITER"));
	if (!cfg->writer[0])
		default_writer(cfg->writer, sizeof cfg->writer);

	v = parse_size(getenv("SCOPE_ARENA_CHUNK"));
	cfg->chunk_bytes = v >= 4096 && v <= (64u << 20) ? (uint32_t)v : DEFAULT_CHUNK_BYTES;
	cfg->lane_capacity = DEFAULT_LANES;
	v = parse_size(getenv("SCOPE_ARENA_MAX"));
	cfg->arena_max_bytes = v ? v : DEFAULT_ARENA_MAX;

	tmp = getenv("SCOPE_CLOCK");
	cfg->force_monotonic = tmp && strcmp(tmp, "monotonic") == 0;
	tmp = getenv("SCOPE_KEEP_ARENA");
	cfg->keep_arena = tmp && *tmp && strcmp(tmp, "0") != 0;
	tmp = getenv("SCOPE_DEBUG");
	cfg->debug = tmp && *tmp && strcmp(tmp, "0") != 0;
}
