/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/columns.c's narrowing: the width a column needs and values cut to it, in
 * place. */
#include "columns.h"
#include "unit.h"

#include <string.h>

static const uint64_t values[] = {
	0, 1, 255, 256, 65535, 65536, UINT32_MAX, UINT64_C(1) << 32, UINT64_MAX,
};
#define NVALUES (sizeof values / sizeof values[0])

static void widths(void)
{
	static const int want[NVALUES] = {1, 1, 1, 2, 2, 4, 4, 8, 8};

	for (size_t i = 0; i < NVALUES; i++)
		EXPECT_I64(want[i], width_for(values[i]), "width_for(%llu)",
			   (unsigned long long)values[i]);
}

/* narrow() keeps the low WIDTH bytes of each value: a column narrowed to
 * width_for(its max) loses nothing. */
static void copies(void)
{
	uint8_t u8[NVALUES + 1];
	uint16_t u16[NVALUES];
	uint32_t u32[NVALUES];
	uint64_t u64[NVALUES];

	memset(u8, 0xee, sizeof u8);
	narrow(u8, values, NVALUES, 1);
	narrow(u16, values, NVALUES, 2);
	narrow(u32, values, NVALUES, 4);
	narrow(u64, values, NVALUES, 8);
	for (size_t i = 0; i < NVALUES; i++) {
		unsigned long long v = (unsigned long long)values[i];
		EXPECT_U64(values[i] & 0xff, u8[i], "narrow(%llu, width 1)", v);
		EXPECT_U64(values[i] & 0xffff, u16[i], "narrow(%llu, width 2)", v);
		EXPECT_U64(values[i] & 0xffffffff, u32[i], "narrow(%llu, width 4)", v);
		EXPECT_U64(values[i], u64[i], "narrow(%llu, width 8)", v);
	}
	EXPECT_U64(0xee, u8[NVALUES], "narrow(width 1): the byte after the column");
	memset(u8, 0xee, sizeof u8);
	narrow(u8, values, 0, 1);
	EXPECT_U64(0xee, u8[0], "narrow(n 0): the first byte");
}

/* N values below TOP as IN_WIDTH-byte integers, narrowed in place to W
 * bytes: what narrow_to returns, and the values it leaves at that width. */
static uint64_t element(const unsigned char *b, int width, uint64_t i)
{
	uint64_t v = 0;

	memcpy(&v, b + i * (uint64_t)width, (size_t)width); /* little-endian */
	return v;
}

static void in_place(int in_width, int w, int want_width)
{
	enum { N = 300 };
	uint64_t buf[N];
	unsigned char *b = (unsigned char *)buf;
	uint64_t top = want_width == 1 ? 200 : want_width == 2 ? 60000 : 4000000000u, i;
	int got;

	for (i = 0; i < N; i++) {
		uint64_t v = top - i % 128;
		memcpy(b + i * (uint64_t)in_width, &v, (size_t)in_width);
	}
	got = narrow_to(buf, in_width, w, N);
	EXPECT_I64(want_width, got, "narrow_to(in_width %d, w %d, n %d)", in_width, w, N);
	for (i = 0; i < N && element(b, got, i) == top - i % 128; i++)
		;
	if (i < N)
		EXPECT_U64(top - i % 128, element(b, got, i),
			   "narrow_to(in_width %d, w %d) element %llu", in_width, w,
			   (unsigned long long)i);
	else
		EXPECT_U64(N, i, "narrow_to(in_width %d, w %d): elements that kept their value",
			   in_width, w);
}

static void narrowing(void)
{
	uint16_t one = 7;

	in_place(8, 4, 4);
	in_place(8, 2, 2);
	in_place(8, 1, 1);
	in_place(4, 2, 2);
	in_place(4, 1, 1);
	in_place(2, 1, 1);
	/* not narrower: left as it is */
	in_place(8, 8, 8);
	in_place(4, 4, 4);
	in_place(4, 8, 4);
	in_place(2, 4, 2);
	in_place(1, 1, 1);
	EXPECT_I64(1, narrow_to(&one, 2, 1, 0), "narrow_to(in_width 2, w 1, n 0)");
	EXPECT_U64(7, one, "narrow_to(n 0) leaves the data");
}

static void chunks(void)
{
	struct storage st = {0};

	EXPECT_U64(65536, column_chunk_elems(&st), "column_chunk_elems(chunk_elems 0)");
	st.chunk_elems = 1;
	EXPECT_U64(1, column_chunk_elems(&st), "column_chunk_elems(chunk_elems 1)");
	st.chunk_elems = STORAGE_MAX_CHUNK;
	EXPECT_U64(STORAGE_MAX_CHUNK, column_chunk_elems(&st),
		   "column_chunk_elems(chunk_elems 2^26)");
}

void unit_columns(void)
{
	widths();
	copies();
	narrowing();
	chunks();
}
