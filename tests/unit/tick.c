/* SPDX-License-Identifier: MIT */
/* Unit tests of the writer's tick clock: the rate tick_clock_init finds in an arena's header,
 * tick_ns, and the pairs of readings the rates come from (clock_pair). */
#include "clock_pair.h"
#include "unit.h"
#include "writer.h"

#include <string.h>

static struct scope_arena_header hdr;

/* The clock of an arena whose header says what SET does; no clock is read
 * (the header is stopped over 1 ms or calibrated). */
static struct tick_clock clock_of(void (*set)(struct scope_arena_header *))
{
	struct arena a = {.hdr = &hdr, .fd = -1};
	struct tick_clock c;

	memset(&hdr, 0, sizeof hdr);
	hdr.state = SCOPE_ARENA_STOPPED;
	set(&hdr);
	tick_clock_init(&c, &a);
	return c;
}

static void monotonic(struct scope_arena_header *h)
{
	h->clock_source = SCOPE_CLOCK_MONOTONIC;
	h->start_tick = 777;
	h->start_mono_ns = 777;
}

/* 3 GHz, from the calibration a writer saved. */
static void calibrated(struct scope_arena_header *h)
{
	h->clock_source = SCOPE_CLOCK_TSC;
	h->start_tick = 1000;
	h->start_mono_ns = 5000000000u;
	h->calib_tick = 1000 + 3000000000u;
	h->calib_mono_ns = 6000000000u;
}

/* 2 GHz, from the start and stop readings 10 ms apart. */
static void stopped(struct scope_arena_header *h)
{
	h->clock_source = SCOPE_CLOCK_TSC;
	h->start_tick = 100;
	h->start_mono_ns = 1000;
	h->stop_tick = 100 + 20000000;
	h->stop_mono_ns = 1000 + 10000000;
}

/* 0.5 GHz: 2 ns a tick, so far ticks pass 2^64 ns. */
static void slow(struct scope_arena_header *h)
{
	h->clock_source = SCOPE_CLOCK_TSC;
	h->start_tick = 10;
	h->calib_tick = 10 + 1000000000u;
	h->calib_mono_ns = 2000000000u;
}

/* Readings that went backwards: 1 ns a tick rather than a rate from them. */
static void tick_backwards(struct scope_arena_header *h)
{
	calibrated(h);
	h->calib_tick = h->start_tick;
}

static void mono_backwards(struct scope_arena_header *h)
{
	calibrated(h);
	h->calib_mono_ns = h->start_mono_ns;
}

static void rates(void)
{
	static const struct {
		const char *what;
		void (*set)(struct scope_arena_header *);
		uint64_t start, mult;
		double hz;
	} cases[] = {
		{"monotonic", monotonic, 777, UINT64_C(1) << 32, 1e9},
		{"calibrated 3 GHz", calibrated, 1000, 1431655765, 3e9}, /* 2^32 / 3, cut */
		{"stopped 2 GHz", stopped, 100, UINT64_C(1) << 31, 2e9},
		{"0.5 GHz", slow, 10, UINT64_C(1) << 33, 5e8},
		{"tick backwards", tick_backwards, 1000, UINT64_C(1) << 32, 1e9},
		{"monotonic backwards", mono_backwards, 1000, UINT64_C(1) << 32, 1e9},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tick_clock c = clock_of(cases[i].set);
		EXPECT_U64(cases[i].start, c.start_tick, "tick_clock_init(%s).start_tick",
			   cases[i].what);
		EXPECT_U64(cases[i].mult, c.mult, "tick_clock_init(%s).mult", cases[i].what);
		EXPECT_DBL(cases[i].hz, c.hz, "tick_clock_init(%s).hz", cases[i].what);
	}
}

static void ns(const struct tick_clock *c, const char *what, uint64_t tick, uint64_t want)
{
	EXPECT_U64(want, tick_ns(c, tick), "tick_ns(%s, %llu)", what, (unsigned long long)tick);
}

static void conversions(void)
{
	struct tick_clock mono = clock_of(monotonic), ghz3 = clock_of(calibrated),
			  ghz2 = clock_of(stopped), half = clock_of(slow);

	ns(&mono, "monotonic", 0, 0);
	ns(&mono, "monotonic", 776, 0); /* before the start */
	ns(&mono, "monotonic", 777, 0);
	ns(&mono, "monotonic", 778, 1);
	ns(&mono, "monotonic", 777 + 123456789, 123456789);
	ns(&mono, "monotonic", UINT64_MAX, UINT64_MAX - 777);
	ns(&ghz3, "3 GHz", 1003, 0); /* 0.99999... ns, cut */
	ns(&ghz3, "3 GHz", 1004, 1);
	ns(&ghz3, "3 GHz", 1000 + 3000000000u, 999999999);
	ns(&ghz3, "3 GHz", UINT64_MAX, 6148914689804861106);
	ns(&ghz2, "2 GHz", 101, 0);
	ns(&ghz2, "2 GHz", 102, 1);
	ns(&ghz2, "2 GHz", 100 + 20000000, 10000000);
	ns(&half, "0.5 GHz", 11, 2);
	ns(&half, "0.5 GHz", 10 + (UINT64_C(1) << 63) - 1, UINT64_MAX - 1);
	ns(&half, "0.5 GHz", 10 + (UINT64_C(1) << 63), UINT64_MAX); /* 2^64 ns: stops there */
	ns(&half, "0.5 GHz", UINT64_MAX, UINT64_MAX);
}

/* Scripted readings: the counter's, then the clock's, one after another. */
static const uint64_t *ticks, *monos;
static size_t nticks, nmonos;

static uint64_t fake_tick(void)
{
	return ticks[nticks++];
}

static uint64_t fake_mono(void)
{
	return monos[nmonos++];
}

static void pair_of(const char *what, const uint64_t *t, const uint64_t *m, uint64_t want_tick,
		    uint64_t want_ns, size_t reads)
{
	uint64_t tick = 0, ns = 0;

	ticks = t;
	monos = m;
	nticks = nmonos = 0;
	clock_pair(fake_tick, fake_mono, &tick, &ns);
	EXPECT_U64(want_tick, tick, "clock_pair(%s): tick", what);
	EXPECT_U64(want_ns, ns, "clock_pair(%s): ns", what);
	EXPECT_U64(reads, nticks, "clock_pair(%s): counter readings", what);
}

static void pairs(void)
{
	/* Brackets 10, 3, 20 and 2 ticks wide: the last, its middle tick. */
	static const uint64_t t[] = {100, 110, 200, 203, 300, 320, 400, 402};
	static const uint64_t m[] = {1000, 2000, 3000, 4000};
	/* The first bracket is the tightest: a later one as tight does not replace it. */
	static const uint64_t first[] = {100, 101, 200, 201, 300, 340, 400, 450};
	/* Every bracket backwards (a counter that jumped back): one more reading. */
	static const uint64_t back[] = {9, 8, 7, 6, 5, 4, 3, 2, 77};
	static const uint64_t mback[] = {1, 2, 3, 4, 55};

	pair_of("tightest last", t, m, 401, 4000, 8);
	pair_of("tightest first", first, m, 100, 1000, 8);
	pair_of("backwards", back, mback, 77, 55, 9);
}

void unit_tick(void)
{
	rates();
	conversions();
	pairs();
}
