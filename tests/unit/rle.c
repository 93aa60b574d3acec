/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/rle.c, read back with zlib's inflate (HDF5's), and of lib/chunks.c's choice
 * between it and deflate, read back through HDF5. */
#include "columns.h"
#include "rle.h"
#include "unit.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A small generator of its own, so every run codes the same bytes. */
static uint64_t rng = 88172645463325252u;
static unsigned next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

/* rle_zlib of in, inflated again: the size it made (0: it did not fit)
 * and whether inflate gave back the same bytes. */
static void round_trip(const unsigned char *in, size_t plane, int nplanes, const char *what)
{
	size_t n = plane * (size_t)nplanes, cap = n + 1024;
	unsigned char *out = malloc(cap), *back = malloc(n + 1);
	uint16_t *tokens = malloc(plane * sizeof *tokens);
	uLongf got = (uLongf)n;
	size_t size = out && back && tokens ? rle_zlib(in, plane, nplanes, tokens, out, cap) : 0;

	EXPECT_I64(1, size > 0, "rle_zlib(%s, plane %zu x %d): a stream", what, plane, nplanes);
	EXPECT_I64(Z_OK, size ? uncompress(back, &got, out, (uLong)size) : Z_DATA_ERROR,
		   "uncompress(rle_zlib(%s))", what);
	EXPECT_U64(n, got, "uncompress(rle_zlib(%s)): bytes", what);
	EXPECT_I64(0, got == n ? memcmp(back, in, n) != 0 : 1, "uncompress(rle_zlib(%s)): the same",
		   what);
	free(out);
	free(back);
	free(tokens);
}

static void round_trips(void)
{
	enum { P = 65536 };
	unsigned char *in = calloc(8, P);
	size_t k = 0;

	if (!in)
		return EXPECT_I64(0, 1, "calloc");
	round_trip(in, P, 4, "four planes of zeros");
	memset(in, 7, 4 * P);
	round_trip(in, P, 4, "one byte again and again");
	for (size_t i = 0; i < 4 * P; i++)
		in[i] = (unsigned char)next();
	round_trip(in, P, 4, "noise");
	for (size_t i = 0; i < 4 * P; i++)
		in[i] = i < P ? (unsigned char)(next() % 5) : i < 2 * P && next() % 50 == 0;
	round_trip(in, P, 4, "a low plane of five values, then near-zero planes");
	/* Fibonacci counts make a Huffman code deeper than deflate's 15 bits. */
	for (unsigned s = 0, f = 1, g = 1; s < 25 && k < P; s++, g += f, f = g - f)
		for (unsigned j = 0; j < f && k < P; j++)
			in[k++] = (unsigned char)(s * 7 + 1);
	while (k < P)
		in[k++] = 200;
	for (size_t i = P - 1; i > 0; i--) {
		size_t j = next() % (i + 1);
		unsigned char t = in[i];
		in[i] = in[j], in[j] = t;
	}
	round_trip(in, P, 1, "symbols of Fibonacci counts");
	for (size_t n = 1; n < 700; n += 53) {
		for (size_t i = 0; i < 3 * n; i++)
			in[i] = next() % 3 ? 0 : (unsigned char)next();
		round_trip(in, n, 3, "short planes");
	}
	for (size_t i = 0; i < 3 * P; i++)
		in[i] = next() % 4 ? in[i ? i - 1 : 0] : (unsigned char)next();
	round_trip(in, P, 3, "runs of every length");
	free(in);
}

/* No room: 0, and no byte written past cap. */
static void too_small(void)
{
	enum { P = 4096 };
	unsigned char in[P], out[P / 2 + 8];
	uint16_t tokens[P];

	for (size_t i = 0; i < P; i++)
		in[i] = (unsigned char)next();
	out[P / 2] = 0xee;
	EXPECT_U64(0, rle_zlib(in, P, 1, tokens, out, P / 2), "rle_zlib(noise, cap half its size)");
	EXPECT_U64(0xee, out[P / 2], "rle_zlib(noise, cap half its size): the byte after cap");
}

/* The stream of the chunk at row offset: runs say 0x78 0x01, libdeflate
 * at level 2 another second byte. */
static int coded_by_runs(hid_t d, hsize_t offset)
{
	hsize_t size = 0;
	uint32_t mask = 0;
	unsigned char *buf;
	int rle;

	if (H5Dget_chunk_storage_size(d, &offset, &size) < 0 || size < 2 || !(buf = malloc(size)))
		return -1;
	rle = H5Dread_chunk(d, H5P_DEFAULT, &offset, &mask, buf) < 0 ? -1 : buf[1] == 0x01;
	free(buf);
	return rle;
}

/* A column of noisy low bytes is coded by runs, one that repeats a
 * sequence of 100 values deflated (its matches pay); both read back as written, through HDF5. */
static void chosen(void)
{
	enum { N = 200000 };
	uint32_t *noise = malloc(N * sizeof *noise), *tune = malloc(N * sizeof *tune);
	uint32_t *back = malloc(N * sizeof *back), period[100];
	char path[] = "unit-rle-XXXXXX";
	struct storage st;
	struct columns c;
	int fd = mkstemp(path);
	hid_t f = -1, d;

	if (!noise || !tune || !back || fd < 0 || storage_parse(&st, "auto") != 0 ||
	    columns_init(&c, &st) != 0)
		return EXPECT_I64(0, 1, "setting up");
	close(fd);
	for (int i = 0; i < 100; i++)
		period[i] = 70000 + next() % 977;
	for (uint32_t i = 0; i < N; i++) {
		noise[i] = 200 + next() % 11 * (next() % 11) + (next() % 64 == 0 ? 70000 : 0);
		tune[i] = period[i % 100];
	}
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	EXPECT_I64(0, col_uint(&c, f, "noise", noise, N, 4), "col_uint(noise)");
	EXPECT_I64(0, col_uint(&c, f, "tune", tune, N, 4), "col_uint(tune)");
	columns_fini(&c);
	H5Fclose(f);
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	const char *names[2] = {"noise", "tune"};
	const uint32_t *want[2] = {noise, tune};
	for (int k = 0; k < 2; k++) {
		d = H5Dopen2(f, names[k], H5P_DEFAULT);
		/* a chunk past the first: each is judged by its own sample */
		EXPECT_I64(k == 0, coded_by_runs(d, column_chunk_elems(&st)),
			   "the second chunk of %s coded by runs", names[k]);
		memset(back, 0, N * sizeof *back);
		EXPECT_I64(0,
			   H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0,
			   "H5Dread(%s)", names[k]);
		EXPECT_I64(0, memcmp(back, want[k], N * sizeof *back) != 0, "%s read back",
			   names[k]);
		H5Dclose(d);
	}
	H5Fclose(f);
	unlink(path);
	free(noise);
	free(tune);
	free(back);
}

void unit_rle(void)
{
	round_trips();
	too_small();
	chosen();
}
