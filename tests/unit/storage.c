/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/storage.c: every --compression and --chunk-size form, accepted or refused. */
#include "storage.h"
#include "unit.h"

#include <stddef.h>
#include <stdio.h>

/* An accepted --compression: its level, whether it is auto, and the rest untouched. */
static void accepts(const char *spec, int level, int automatic)
{
	struct storage s;

	EXPECT_I64(0, storage_parse(&s, spec), "storage_parse(\"%s\")", spec ? spec : "(NULL)");
	EXPECT_I64(level, s.level, "storage_parse(\"%s\").level", spec ? spec : "(NULL)");
	EXPECT_I64(automatic, s.automatic, "storage_parse(\"%s\").automatic",
		   spec ? spec : "(NULL)");
	EXPECT_U64(STORAGE_AUTO_MIN_EVENTS, s.auto_min, "storage_parse(\"%s\").auto_min",
		   spec ? spec : "(NULL)");
	EXPECT_U64(0, s.chunk_elems, "storage_parse(\"%s\").chunk_elems", spec ? spec : "(NULL)");
	EXPECT_I64(0, s.chunk_given, "storage_parse(\"%s\").chunk_given", spec ? spec : "(NULL)");
}

static void refuses(const char *spec)
{
	struct storage s;

	EXPECT_I64(-1, storage_parse(&s, spec), "storage_parse(\"%s\")", spec);
}

static void compression(void)
{
	static const char *const bad[] = {
		"gzip:0",  "gzip:10",  "gzip:",
		"gzip:x",  "gzip:1x",  "gzip:-1",
		"gzip:1 ", "gzip:1.0", "gzip:99999999999999999999",
		"gzip9",   "gzip:9:9", "GZIP",
		"Auto",	   "NONE",     "auto ",
		" auto",   "none:1",   "zip",
		"lzf",	   "szip",     "deflate",
		"gz",
	};
	char spec[8];

	accepts(NULL, STORAGE_AUTO_LEVEL, 1);
	accepts("", STORAGE_AUTO_LEVEL, 1);
	accepts("auto", STORAGE_AUTO_LEVEL, 1);
	accepts("none", 0, 0);
	accepts("gzip", STORAGE_DEFAULT_LEVEL, 0);
	for (int level = 1; level <= 9; level++) {
		snprintf(spec, sizeof spec, "gzip:%d", level);
		accepts(spec, level, 0);
	}
	accepts("gzip:05", 5, 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refuses(bad[i]);
}

/* An accepted --chunk-size of n elements. */
static void chunk_accepts(const char *v, uint64_t n)
{
	struct storage s = {.chunk_elems = 7};

	EXPECT_I64(0, storage_parse_chunk(&s, v), "storage_parse_chunk(\"%s\")", v);
	EXPECT_U64(n, s.chunk_elems, "storage_parse_chunk(\"%s\").chunk_elems", v);
	EXPECT_I64(1, s.chunk_given, "storage_parse_chunk(\"%s\").chunk_given", v);
}

/* A refused one leaves the setting as it was. */
static void chunk_refuses(const char *v)
{
	struct storage s = {.chunk_elems = 7};

	EXPECT_I64(-1, storage_parse_chunk(&s, v), "storage_parse_chunk(\"%s\")", v);
	EXPECT_U64(7, s.chunk_elems, "storage_parse_chunk(\"%s\").chunk_elems", v);
	EXPECT_I64(0, s.chunk_given, "storage_parse_chunk(\"%s\").chunk_given", v);
}

static void chunk_size(void)
{
	static const char *const bad[] = {
		"0",
		"00",
		"-0",
		"-1",
		"67108865",
		"4294967296",
		"18446744073709551615",
		"18446744073709551616",
		"99999999999999999999999",
		"12k",
		"1.5",
		"1e3",
		"0x10",
		"5 ",
		"x",
		"4096\n",
	};
	const char *none[] = {NULL, ""};

	for (size_t i = 0; i < 2; i++) {
		struct storage s = {.chunk_elems = 7};
		EXPECT_I64(0, storage_parse_chunk(&s, none[i]), "storage_parse_chunk(%s)",
			   none[i] ? "\"\"" : "NULL");
		EXPECT_U64(7, s.chunk_elems, "storage_parse_chunk(%s).chunk_elems",
			   none[i] ? "\"\"" : "NULL");
		EXPECT_I64(0, s.chunk_given, "storage_parse_chunk(%s).chunk_given",
			   none[i] ? "\"\"" : "NULL");
	}
	chunk_accepts("1", 1);
	chunk_accepts("4096", 4096);
	chunk_accepts("00012", 12);
	chunk_accepts("67108864", STORAGE_MAX_CHUNK);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		chunk_refuses(bad[i]);
}

void unit_storage(void)
{
	compression();
	chunk_size();
}
