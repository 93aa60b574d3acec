/* SPDX-License-Identifier: MIT */
/* The /metadata attributes of the record-time filters: what they were, and the calls stored and
 * summed. */
#include "columns.h"
#include "filterspec.h"
#include "profile_out.h"
#include "schema.h"

#include <stdlib.h>
#include <string.h>

/* The writer runs with the recorded program's SCOPE_* variables (the
 * library or scope-run hands them on), which the library read too. */
static const char *setting(const char *name)
{
	const char *v = getenv(name);
	return v ? v : "";
}

/* SCOPE_SAMPLE as the library read it: the rate, 0 when none. */
static int64_t sample_hz(void)
{
	const char *v = setting("SCOPE_SAMPLE");
	char *end;
	long hz = strtol(v, &end, 10);
	return *v && !*end && hz >= 1 && hz <= 100000 ? hz : 0;
}

int metadata_filters(hid_t file, const struct proc_out *procs, size_t n)
{
	const char *only = setting("SCOPE_ONLY"), *exclude = setting("SCOPE_NOT");
	const char *sub = setting("SCOPE_NOT_SUBTREE");
	uint64_t min_ns = 0, stored = 0, summed = 0;
	uint32_t depth = 0;
	int aggregates = 0;
	hid_t g;

	if (filterspec_depth(setting("SCOPE_DEPTH"), &depth) != 0)
		depth = 0;
	if (filterspec_duration(setting("SCOPE_MIN_DURATION"), &min_ns) != 0)
		min_ns = 0;
	if (sample_hz() && (g = H5Gopen2(file, SC_METADATA, H5P_DEFAULT)) >= 0) {
		attr_i64(g, SC_META(SAMPLE_HZ), sample_hz());
		if (H5Gclose(g) < 0)
			return -1;
	}
	for (size_t k = 0; k < n; k++) {
		const struct profile *p = procs[k].p;
		aggregates |= p->aggregates;
		for (uint32_t i = 0; i < p->nregions; i++) {
			stored += p->regions[i].count;
			summed += p->regions[i].aggregated;
		}
	}
	if (!*only && !*exclude && !depth && !min_ns && !aggregates)
		return 0;
	if ((g = H5Gopen2(file, SC_METADATA, H5P_DEFAULT)) < 0)
		return -1;
	attr_str(g, SC_META(FILTER_ONLY), only);
	attr_str(g, SC_META(FILTER_NOT), exclude);
	attr_i64(g, SC_META(FILTER_NOT_SUBTREE), *exclude && *sub && strcmp(sub, "0") != 0);
	attr_i64(g, SC_META(FILTER_DEPTH), depth);
	attr_i64(g, SC_META(FILTER_MIN_DURATION_NS), (int64_t)min_ns);
	attr_i64(g, SC_META(CALLS_STORED), (int64_t)stored);
	attr_i64(g, SC_META(CALLS_AGGREGATED), (int64_t)summed);
	return H5Gclose(g) < 0 ? -1 : 0;
}
