/* SPDX-License-Identifier: MIT */
/* The machine a run ran on, as /metadata and bench.json's manifest record it. */
#define _GNU_SOURCE
#include "machine.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

const char *const machine_thread_vars[] = {
	"OMP_NUM_THREADS",  "OMP_PROC_BIND",	   "OMP_PLACES",	   "OMP_DYNAMIC",
	"OMP_SCHEDULE",	    "OMP_STACKSIZE",	   "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
	"GOTO_NUM_THREADS", "BLIS_NUM_THREADS",	   "TBB_NUM_THREADS",	   "GOMP_CPU_AFFINITY",
	"KMP_AFFINITY",	    "NUMEXPR_NUM_THREADS",
};
const size_t machine_nthread_vars = sizeof machine_thread_vars / sizeof *machine_thread_vars;

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

void machine_read(struct machine *m)
{
	char os[256];
	struct utsname u;

	memset(m, 0, sizeof *m);
	cpuinfo(m->cpu_model, sizeof m->cpu_model, &m->cpu_mhz, &m->physical_cores);
	gethostname(m->host, sizeof m->host - 1);
	m->logical_cores = sysconf(_SC_NPROCESSORS_ONLN);
	m->memory_bytes = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	if (uname(&u) == 0) {
		snprintf(m->kernel, sizeof m->kernel, "%s", u.release);
		os_name(os, sizeof os);
		snprintf(m->platform, sizeof m->platform, "%s %s%s%s", u.sysname, u.machine,
			 os[0] ? ", " : "", os);
	}
	snprintf(m->libc, sizeof m->libc, "%s", gnu_get_libc_version());
}
