/* SPDX-License-Identifier: MIT */
/* The /metadata attributes: the run, the machine and the clock. */
#define _GNU_SOURCE
#include "columns.h"
#include "machine.h"
#include "profile_out.h"
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void iso_utc(char *out, size_t cap, uint64_t unix_ns)
{
	time_t s = (time_t)(unix_ns / 1000000000u);
	struct tm tm;
	char base[32];
	gmtime_r(&s, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%06uZ", base, (unsigned)(unix_ns % 1000000000u / 1000u));
}

static void machine(hid_t g)
{
	struct machine m;

	machine_read(&m);
	attr_str(g, SC_META(HOST), m.host);
	attr_str(g, SC_META(CPU_MODEL), m.cpu_model);
	attr_i64(g, SC_META(LOGICAL_CORES), m.logical_cores);
	attr_i64(g, SC_META(PHYSICAL_CORES), m.physical_cores);
	attr_f64(g, SC_META(CPU_MHZ), m.cpu_mhz);
	attr_i64(g, SC_META(MEMORY_BYTES), m.memory_bytes);
	if (m.kernel[0]) {
		attr_str(g, SC_META(KERNEL), m.kernel);
		attr_str(g, SC_META(PLATFORM), m.platform);
	}
	attr_str(g, SC_META(LIBC_VERSION), m.libc);
	for (size_t i = 0; i < machine_nthread_vars; i++) {
		const char *v = getenv(machine_thread_vars[i]);
		char key[64];
		if (!v)
			continue;
		snprintf(key, sizeof key, SC_ENV_ "%s", machine_thread_vars[i]);
		attr_str(g, key, v);
	}
}

int metadata_write(hid_t file, const struct run_info *run)
{
	const struct scope_arena_header *h = run->hdr;
	hid_t g = col_group(file, SC_METADATA);
	char when[64];

	if (g < 0)
		return -1;
	attr_str(g, SC_META(COMMAND_LINE), run->command_line);
	attr_str(g, SC_META(WORKING_DIR), h->cwd);
	iso_utc(when, sizeof when, h->start_unix_ns);
	attr_str(g, SC_META(START_TIME_UTC), when);
	machine(g);
	attr_str(g, SC_META(CLOCK_SOURCE),
		 h->clock_source == SCOPE_CLOCK_TSC ? "tsc" : "monotonic");
	attr_f64(g, SC_META(CLOCK_FREQUENCY_HZ), run->clock_hz);
	attr_i64(g, SC_META(EXIT_STATUS),
		 run->exit_kind == SCOPE_EXIT_STATUS ? run->exit_code : -1);
	attr_i64(g, SC_META(EXIT_SIGNAL), run->exit_kind == SCOPE_EXIT_SIGNAL ? run->exit_code : 0);
	attr_f64(g, SC_META(WALL_SECONDS), (double)run->end_ns / 1e9);
	attr_f64(g, SC_META(CPU_SECONDS), (double)(h->cpu_user_ns + h->cpu_sys_ns) / 1e9);
	attr_i64(g, SC_META(PEAK_RSS_BYTES), (int64_t)h->max_rss_kib * 1024);
	attr_str(g, SC_META(COMPRESSION), run->compression);
	attr_i64(g, SC_META(LOST_RECORDS), (int64_t)run->lost);
	attr_i64(g, SC_META(LOST_ARENA_FULL), (int64_t)h->lost[SCOPE_LOST_ARENA_FULL]);
	attr_i64(g, SC_META(LOST_NO_LANE), (int64_t)h->lost[SCOPE_LOST_NO_LANE]);
	attr_i64(g, SC_META(LOST_SHARED_TLS), (int64_t)h->lost[SCOPE_LOST_SHARED_TLS]);
	/* what recording one call cost, enter and exit, for reports to subtract */
	attr_f64(g, SC_META(OVERHEAD_NS_PER_CALL), (double)h->overhead_ticks * 1e9 / run->clock_hz);
	attr_i64(g, SC_META(COMPLETE), h->state == SCOPE_ARENA_STOPPED);
	if (h->ranks > 0)
		attr_i64(g, SC_META(MPI_RANKS), h->ranks);
	return H5Gclose(g) < 0 ? -1 : 0;
}
