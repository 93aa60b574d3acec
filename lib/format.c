/* SPDX-License-Identifier: MIT */
/* Formats durations, JSON strings and CSV fields, and parses durations with units. */
#include "format.h"

#include <errno.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *fmt_ns(char *buf, size_t cap, double ns)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	const char *sign = ns < 0 ? "-" : "";
	int u = 0;

	ns = fabs(ns);
	/* the unit a rounded value stays under 1000 in */
	while (ns >= (u == 0 ? 999.5 : 999.9995) && u < 3) {
		ns /= 1000;
		u++;
	}
	snprintf(buf, cap, u == 0 ? "%s%.0f %s" : "%s%.3f %s", sign, ns, unit[u]);
	return buf;
}

const char *fmt_bytes(char *buf, size_t cap, uint64_t v)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double x = (double)v;
	size_t u = 0;

	if (v < 1024) {
		snprintf(buf, cap, "%llu B", (unsigned long long)v);
		return buf;
	}
	for (x /= 1024; x >= 1024 && u + 1 < sizeof units / sizeof *units; x /= 1024)
		u++;
	snprintf(buf, cap, "%.1f %s", x, units[u]);
	return buf;
}

int parse_bytes(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	char *end;
	double v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || strspn(s, "0123456789.") < (size_t)(end - s))
		return -1;
	if (*end && strchr(units, *end)) {
		shift = 10 * (int)(strchr(units, *end) - units + 1);
		end++;
		end += strcmp(end, "iB") == 0 ? 2 : strcmp(end, "B") == 0;
	}
	if (*end || ldexp(v, shift) >= 18446744073709551616.0)
		return -1;
	*bytes = (uint64_t)ldexp(v, shift);
	return 0;
}

int parse_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *name;
		double scale;
	} units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;
	size_t digits;

	if (!s || !*s || *s == '-' || *s == '+' || strspn(s, "0123456789.") == 0)
		return -1;
	v = strtod(s, &end);
	/* what strtod also takes and a duration is not: hex, inf, nan */
	if (strspn(s, "0123456789.eE+-") < (size_t)(end - s))
		return -1;
	digits = strspn(s, "0123456789");
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		double x = v * units[i].scale;
		if (strcmp(end, units[i].name) != 0)
			continue;
		/* whole nanoseconds are read exactly, past what a double holds */
		if (units[i].scale == 1 && s + digits == end) {
			unsigned long long n;
			errno = 0;
			n = strtoull(s, NULL, 10);
			if (errno)
				return -1;
			*ns = n;
			return 0;
		}
		if (!(x >= 0) || x >= 18446744073709551616.0)
			return -1;
		/* halves away from zero; past 2^53 a double holds no fraction */
		*ns = x < 9007199254740992.0 ? (uint64_t)llround(x) : (uint64_t)x;
		return 0;
	}
	return -1;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putc('"', out);
	while (*p) {
		size_t n = utf8_len(p);
		if (n == 0) {
			fputs("\\ufffd", out);
			p++;
		} else if (*p == '"' || *p == '\\') {
			putc('\\', out);
			putc(*p++, out);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, out);
			p += n;
		}
	}
	putc('"', out);
}

void csv_string(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out);
		putc(*s, out);
	}
	putc('"', out);
}
