/* SPDX-License-Identifier: MIT */
/* The /metadata attributes: the run, the machine and the clock. */
#define _GNU_SOURCE
#include "columns.h"
#include "profile_out.h"
#include "schema.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* The thread-count variables of the common runtimes: they decide how many
 * cores a run used, so a profile is not comparable without them. */
static const char *const thread_vars[] = {
	"OMP_NUM_THREADS",  "OMP_PROC_BIND",	   "OMP_PLACES",	   "OMP_DYNAMIC",
	"OMP_SCHEDULE",	    "OMP_STACKSIZE",	   "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
	"GOTO_NUM_THREADS", "BLIS_NUM_THREADS",	   "TBB_NUM_THREADS",	   "GOMP_CPU_AFFINITY",
	"KMP_AFFINITY",	    "NUMEXPR_NUM_THREADS",
};

/* The value of "key : value" lines in /proc/cpuinfo. */
static void cpuinfo(char *model, size_t cap, double *mhz, long *physical)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512], seen[4096] = "";
	long phys = -1, cores = 0;

	model[0] = '\0';
	*mhz = 0;
	*physical = 0;
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *v = colon + 1 + (colon[1] == ' ');
		v[strcspn(v, "\n")] = '\0';
		if (!model[0] && strncmp(line, "model name", 10) == 0)
			snprintf(model, cap, "%s", v);
		else if (*mhz == 0 && strncmp(line, "cpu MHz", 7) == 0)
			*mhz = atof(v);
		else if (strncmp(line, "physical id", 11) == 0)
			phys = atol(v);
		else if (strncmp(line, "core id", 7) == 0) {
			char key[64];
			snprintf(key, sizeof key, "[%ld:%ld]", phys, atol(v));
			if (!strstr(seen, key) && strlen(seen) + strlen(key) < sizeof seen) {
				strcat(seen, key);
				cores++;
			}
		}
	}
	fclose(f);
	*physical = cores;
}

static void os_name(char *out, size_t cap)
{
	FILE *f = fopen("/etc/os-release", "re");
	char line[256];
	out[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
			char *v = line + 12 + (line[12] == '"');
			v[strcspn(v, "\"\n")] = '\0';
			snprintf(out, cap, "%s", v);
		}
	}
	if (f)
		fclose(f);
}

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
	char model[256], os[256], host[256] = "", platform[700];
	double mhz;
	long physical;
	struct utsname u;

	cpuinfo(model, sizeof model, &mhz, &physical);
	gethostname(host, sizeof host - 1);
	attr_str(g, SC_META(HOST), host);
	attr_str(g, SC_META(CPU_MODEL), model);
	attr_i64(g, SC_META(LOGICAL_CORES), sysconf(_SC_NPROCESSORS_ONLN));
	attr_i64(g, SC_META(PHYSICAL_CORES), physical);
	attr_f64(g, SC_META(CPU_MHZ), mhz);
	attr_i64(g, SC_META(MEMORY_BYTES),
		 (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE));
	if (uname(&u) == 0) {
		attr_str(g, SC_META(KERNEL), u.release);
		os_name(os, sizeof os);
		snprintf(platform, sizeof platform, "%s %s%s%s", u.sysname, u.machine,
			 os[0] ? ", " : "", os);
		attr_str(g, SC_META(PLATFORM), platform);
	}
	attr_str(g, SC_META(LIBC_VERSION), gnu_get_libc_version());
	for (size_t i = 0; i < sizeof thread_vars / sizeof *thread_vars; i++) {
		const char *v = getenv(thread_vars[i]);
		char key[64];
		if (!v)
			continue;
		snprintf(key, sizeof key, SC_ENV_ "%s", thread_vars[i]);
		attr_str(g, key, v);
	}
}

int metadata_write(hid_t file, const struct run_info *run)
{
	const struct scope_arena_header *h = run->hdr;
	hid_t g = H5Gcreate2(file, SC_METADATA, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
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
