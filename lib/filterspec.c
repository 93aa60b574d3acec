/* SPDX-License-Identifier: MIT */
/* The values of the record-time filter options, parsed alike by scope-run and the preload library.
 */
#include "filterspec.h"

#include <stdlib.h>
#include <string.h>

#define DAY_NS (86400.0 * 1e9)

int filterspec_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
		double t = v * units[i].ns;
		if (strcmp(end, units[i].unit) != 0)
			continue;
		if (!(t >= 1 && t <= DAY_NS))
			return -1;
		*ns = (uint64_t)(t + 0.5);
		return 0;
	}
	return -1;
}

int filterspec_depth(const char *s, uint32_t *depth)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < 1 || v > FILTERSPEC_MAX_DEPTH)
		return -1;
	*depth = (uint32_t)v;
	return 0;
}
