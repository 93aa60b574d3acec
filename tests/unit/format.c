/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/format.c: durations written for people and read with units, JSON and CSV
 * strings. */
#include "format.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>

static void shows(double ns, const char *want)
{
	char buf[64];

	EXPECT_STR(want, fmt_ns(buf, sizeof buf, ns), "fmt_ns(%.17g)", ns);
}

static void durations_out(void)
{
	char small[4];

	shows(0, "0 ns");
	shows(-0.0, "0 ns");
	shows(1, "1 ns");
	shows(999, "999 ns");
	shows(999.4, "999 ns");
	shows(999.5, "1.000 us"); /* would round to 1000 ns */
	shows(1000, "1.000 us");
	shows(1500, "1.500 us");
	shows(-1500, "-1.500 us");
	shows(999999.4, "999.999 us");
	shows(999999.6, "1.000 ms"); /* would round to 1000.000 us */
	shows(1234567, "1.235 ms");
	shows(1e9, "1.000 s");
	shows(999999999.4, "1.000 s");
	shows(3.6e12, "3600.000 s"); /* no unit above s */
	shows(1e21, "1000000000000.000 s");
	shows(18446744073709551615.0, "18446744073.710 s");
	shows(INFINITY, "inf s");
	shows(-INFINITY, "-inf s");
	shows(NAN, "nan ns");
	/* cut to the buffer, and still its start */
	EXPECT_STR("1.5", fmt_ns(small, sizeof small, 1500), "fmt_ns(1500) into 4 bytes");
	EXPECT_U64((uintptr_t)small, (uintptr_t)fmt_ns(small, sizeof small, 1),
		   "fmt_ns(1)'s return");
}

static void reads(const char *s, uint64_t want)
{
	uint64_t ns = 12345;

	EXPECT_I64(0, parse_ns(s, &ns), "parse_ns(\"%s\")", s);
	EXPECT_U64(want, ns, "parse_ns(\"%s\") value", s);
}

static void refuses(const char *s)
{
	uint64_t ns = 12345;

	EXPECT_I64(-1, parse_ns(s, &ns), "parse_ns(\"%s\")", s ? s : "(NULL)");
	EXPECT_U64(12345, ns, "parse_ns(\"%s\") leaves the value", s ? s : "(NULL)");
}

static void durations_in(void)
{
	static const char *const bad[] = {
		NULL,
		"",
		"-1",
		"+1",
		"-0",
		"ms",
		"abc",
		".",
		"1 ms",
		" 1",
		"1us ",
		"1m",
		"1h",
		"1min",
		"1NS",
		"1Ms",
		"1e",
		"1e+",
		"1.5.5",
		"1ns5",
		"inf",
		"nan",
		"1e400",
		"18446744073709551616",
		"18446744073709551617",
		"1e20",
		"18446744074s",
		"1\n",
		"0x10",
		"0x10ns",
	};

	reads("0", 0);
	reads("0ns", 0);
	reads("0.0s", 0);
	reads("1500", 1500);
	reads("1500ns", 1500);
	reads("1.5us", 1500);
	reads("2ms", 2000000);
	reads("0.5s", 500000000);
	reads("1s", 1000000000);
	reads(".5us", 500);
	reads("5.", 5);
	reads("0.4", 0);
	reads("1.5", 2); /* halves round away from zero */
	reads("2.5", 3);
	reads("1e3", 1000);
	reads("1.5e3us", 1500000);
	reads("1e-400", 0);
	reads("000042", 42);
	/* whole nanoseconds exactly, to the last one below 2^64 */
	reads("9223372036854774784", UINT64_C(9223372036854774784));
	reads("9223372036854775808", UINT64_C(9223372036854775808));
	reads("18446744073709551615", UINT64_MAX);
	reads("18446744073709551615ns", UINT64_MAX);
	/* past 2^63 through a fraction or a unit: the double's value */
	reads("1e19", UINT64_C(10000000000000000000));
	reads("10000000000s", UINT64_C(10000000000000000000));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		refuses(bad[i]);
}

/* What WRITE puts in a file for S. */
static char *written(void (*write)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	write(f, s);
	fclose(f);
	return buf;
}

static void json(const char *s, const char *want, const char *what)
{
	char *got = written(json_string, s);

	EXPECT_STR(want, got, "json_string(%s)", what);
	free(got);
}

static void csv(const char *s, const char *want)
{
	char *got = written(csv_string, s);

	EXPECT_STR(want, got, "csv_string(\"%s\")", s);
	free(got);
}

static void strings(void)
{
	json("", "\"\"", "\"\"");
	json("main", "\"main\"", "\"main\"");
	json("a\"b\\c", "\"a\\\"b\\\\c\"", "a quote and a backslash");
	json("\n\t\x01\x1f\x7f", "\"\\u000a\\u0009\\u0001\\u001f\\u007f\"", "control characters");
	json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "2-, 3- and 4-byte UTF-8");
	json("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"", "U+10FFFF");
	json("a\xff", "\"a\\ufffd\"", "a byte that is never UTF-8");
	json("\xc0\xaf", "\"\\ufffd\\ufffd\"", "an overlong '/'");
	json("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"", "an overlong 3-byte '/'");
	json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", "a UTF-16 surrogate");
	json("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "U+110000");
	json("\xe2\x82", "\"\\ufffd\\ufffd\"", "a sequence cut by the end");
	json("\xe2(", "\"\\ufffd(\"", "a sequence cut by ASCII");
	csv("", "");
	csv("main", "main");
	csv("geo::area() const", "geo::area() const");
	csv("a,b", "\"a,b\"");
	csv("say \"hi\"", "\"say \"\"hi\"\"\"");
	csv("a\nb", "\"a\nb\"");
	csv("a\rb", "\"a\rb\"");
	csv("\"", "\"\"\"\"");
}

void unit_format(void)
{
	durations_out();
	durations_in();
	strings();
}
