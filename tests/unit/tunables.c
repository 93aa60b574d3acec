/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/writer_tunables.c: the writer's GLIBC_TUNABLES, from none, empty or others. */
#include "unit.h"
#include "writer_tunables.h"

#include <string.h>

static void gives(const char *entry, const char *want)
{
	char buf[128];

	EXPECT_STR(want, writer_tunables(entry, buf, sizeof buf), "writer_tunables(\"%s\")",
		   entry ? entry : "(NULL)");
}

void unit_tunables(void)
{
	char small[40];
	const char *mine = "GLIBC_TUNABLES=glibc.malloc.check=0";

	gives(NULL, "GLIBC_TUNABLES=" WRITER_TUNABLE);
	gives("GLIBC_TUNABLES=", "GLIBC_TUNABLES=" WRITER_TUNABLE);
	gives(mine, "GLIBC_TUNABLES=glibc.malloc.check=0:" WRITER_TUNABLE);
	gives("GLIBC_TUNABLES=a=1:b=2", "GLIBC_TUNABLES=a=1:b=2:" WRITER_TUNABLE);
	/* too long for the buffer: the entry as it was, never a cut one */
	EXPECT_STR(mine, writer_tunables(mine, small, sizeof small), "writer_tunables, 40 bytes");
	EXPECT_STR(NULL, writer_tunables(NULL, small, 16), "writer_tunables(NULL), 16 bytes");
	EXPECT_STR("GLIBC_TUNABLES=" WRITER_TUNABLE,
		   writer_tunables(NULL, small, strlen("GLIBC_TUNABLES=" WRITER_TUNABLE) + 1),
		   "writer_tunables(NULL), exactly its room");
	EXPECT_STR(NULL, writer_tunables(NULL, small, strlen("GLIBC_TUNABLES=" WRITER_TUNABLE)),
		   "writer_tunables(NULL), a byte short");
	EXPECT_I64(1, is_tunables(mine), "is_tunables(\"%s\")", mine);
	EXPECT_I64(1, is_tunables("GLIBC_TUNABLES="), "is_tunables(\"GLIBC_TUNABLES=\")");
	EXPECT_I64(0, is_tunables("GLIBC_TUNABLESX=1"), "is_tunables(\"GLIBC_TUNABLESX=1\")");
	EXPECT_I64(0, is_tunables("GLIBC_TUNABLES"), "is_tunables(\"GLIBC_TUNABLES\")");
	EXPECT_I64(0, is_tunables("XGLIBC_TUNABLES=1"), "is_tunables(\"XGLIBC_TUNABLES=1\")");
}
