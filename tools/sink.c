/* SPDX-License-Identifier: MIT */
/* scope-report's output stream: byte counts, gzip compression and --max-size. */
#define _GNU_SOURCE
#include "sink.h"

#include <errno.h>
#include <string.h>

/* Sends what the buffer holds to under; returns 0, or -1. */
static int drain(struct sink *s, size_t n)
{
	if (!n)
		return 0;
	if (s->limit && s->out + n > s->limit) {
		s->over = 1;
		errno = EFBIG;
		return -1;
	}
	if (fwrite(s->buf, 1, n, s->under) != n) {
		s->failed = 1;
		return -1;
	}
	s->out += n;
	return 0;
}

/* Deflates what z holds in with flush; returns 0, or -1. */
static int deflate_all(struct sink *s, int flush)
{
	int rc;

	do {
		s->z.next_out = s->buf;
		s->z.avail_out = sizeof s->buf;
		rc = deflate(&s->z, flush);
		if (rc == Z_STREAM_ERROR) {
			s->failed = 1;
			errno = EIO;
			return -1;
		}
		if (drain(s, sizeof s->buf - s->z.avail_out) != 0)
			return -1;
	} while (s->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
	return 0;
}

static ssize_t sink_write(void *cookie, const char *data, size_t n)
{
	struct sink *s = cookie;

	if (s->over || s->failed) {
		errno = s->over ? EFBIG : EIO;
		return -1;
	}
	s->in += n;
	if (!s->gzip) {
		for (size_t done = 0; done < n;) {
			size_t k = n - done < sizeof s->buf ? n - done : sizeof s->buf;
			memcpy(s->buf, data + done, k);
			if (drain(s, k) != 0)
				return -1;
			done += k;
		}
		return (ssize_t)n;
	}
	s->z.next_in = (unsigned char *)data;
	s->z.avail_in = (uInt)n; /* stdio hands over a buffer at a time, far below 4 GiB */
	return deflate_all(s, Z_NO_FLUSH) == 0 ? (ssize_t)n : -1;
}

static int sink_close(void *cookie)
{
	struct sink *s = cookie;
	int rc = 0;

	if (s->gzip) {
		if (!s->over && !s->failed)
			rc = deflate_all(s, Z_FINISH);
		deflateEnd(&s->z);
	}
	return s->over || s->failed ? -1 : rc;
}

FILE *sink_open(struct sink *s, FILE *under, int gzip, uint64_t limit)
{
	FILE *f;

	memset(s, 0, sizeof *s);
	s->under = under;
	s->gzip = gzip;
	s->limit = limit;
	/* windowBits 15 + 16: the gzip wrapper, which Perfetto and speedscope open */
	if (gzip && deflateInit2(&s->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	f = fopencookie(s, "w", (cookie_io_functions_t){.write = sink_write, .close = sink_close});
	if (!f) {
		if (gzip)
			deflateEnd(&s->z);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	return f;
}

int sink_gzip_name(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}
