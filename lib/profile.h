/* SPDX-License-Identifier: MIT */
/* Reading schema-3 profiles: shared by the tools. */
#ifndef SCOPE_LIB_PROFILE_H
#define SCOPE_LIB_PROFILE_H

#include <stdint.h>
#include <stdio.h>

/* One region's calls summed over every process of the profile. */
struct region_stats {
	char *name;
	uint64_t calls, total_ns, self_ns, min_ns, max_ns;
	uint64_t total_all_ns; /* recursive calls included: the mean's */
};

struct summary {
	struct region_stats *regions; /* named as people read them (lib/names.h) */
	size_t n;
	/* The program's own figures, as the profile recorded them. */
	double wall_seconds, cpu_seconds;
	double peak_rss_bytes;
	uint64_t events, lost;
	uint64_t aggregated; /* calls the recording's filters counted but kept out of /events */
	/* What recording the calls cost: the calls, those the filters kept out
	 * too (they ran the hooks), times the cost of one call, ns. */
	double recording_ns;
};

/* Reads /regions, /pairs and /metadata of the profile at path. Returns 0,
 * or -1 with a one-line reason in err. */
int summary_read(const char *path, struct summary *s, char *err, size_t errcap);
void summary_free(struct summary *s);

/* Prints the top regions by self time as a table, names last and whole. */
void summary_print(FILE *out, const struct summary *s, size_t top);

#endif
