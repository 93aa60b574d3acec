/* SPDX-License-Identifier: MIT */
/* scope-run's record-time filter options, checked before the program starts and handed to the
 * library. */
#define _GNU_SOURCE
#include "run_filters.h"
#include "filterspec.h"

#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const option_of[] = {"--only", "--not"};
static const char *const variable_of[] = {"SCOPE_ONLY", "SCOPE_NOT"};

/* Returns 0, or -1 after one line naming the expression and the problem. */
static int check_regex(const char *what, const char *regex)
{
	char why[256];
	regex_t re;
	int rc;

	if (!*regex || strchr(regex, '\n')) {
		fprintf(stderr, "scope-run: %s '%s': give one non-empty regular expression\n", what,
			regex);
		return -1;
	}
	if ((rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &re, why, sizeof why);
		fprintf(stderr, "scope-run: bad regular expression '%s' for %s: %s\n", regex, what,
			why);
		return -1;
	}
	regfree(&re);
	return 0;
}

int run_filters_add(struct run_filters *f, enum run_filter_kind kind, const char *regex)
{
	char **list = kind == RUN_FILTER_ONLY ? &f->only : &f->exclude;
	char *grown;
	int n = 0;

	if (check_regex(option_of[kind], regex) != 0)
		return -1;
	for (const char *p = *list; p && *p; p++)
		n += *p == '\n';
	if (*list && n + 1 >= FILTERSPEC_MAX_PATTERNS) {
		fprintf(stderr, "scope-run: more than %d %s expressions: join some with |\n",
			FILTERSPEC_MAX_PATTERNS, option_of[kind]);
		return -1;
	}
	if (asprintf(&grown, "%s%s%s", *list ? *list : "", *list ? "\n" : "", regex) < 0) {
		fprintf(stderr, "scope-run: out of memory\n");
		return -1;
	}
	free(*list);
	*list = grown;
	return 0;
}

/* Each line of a SCOPE_ONLY/SCOPE_NOT value. */
static int check_variable(enum run_filter_kind kind)
{
	const char *v = getenv(variable_of[kind]);
	char *copy, *line, *save = NULL;
	int rc = 0, n = 0;

	if (!v || !*v)
		return 0;
	if (!(copy = strdup(v)))
		return -1;
	for (line = strtok_r(copy, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save))
		rc = ++n > FILTERSPEC_MAX_PATTERNS ? -1 : check_regex(variable_of[kind], line);
	free(copy);
	if (n > FILTERSPEC_MAX_PATTERNS)
		fprintf(stderr, "scope-run: %s holds more than %d expressions: join some with |\n",
			variable_of[kind], FILTERSPEC_MAX_PATTERNS);
	return rc;
}

/* SCOPE_SAMPLE as the library reads it: 1 to 100000, or 0 for none ("0"). */
static long sample_rate(const char *v)
{
	char *end;
	long hz = strtol(v, &end, 10);
	return (*v >= '0' && *v <= '9' && !*end && hz >= 0 && hz <= 100000) ? (hz ? hz : 1) : 0;
}

int run_filters_check(const struct run_filters *f)
{
	const char *depth = f->depth ? f->depth : getenv("SCOPE_DEPTH");
	const char *min = f->min_duration ? f->min_duration : getenv("SCOPE_MIN_DURATION");
	const char *exclude = f->exclude ? f->exclude : getenv("SCOPE_NOT");
	const char *sample = f->sample ? f->sample : getenv("SCOPE_SAMPLE");
	uint64_t ns;
	uint32_t d;

	if ((!f->only && check_variable(RUN_FILTER_ONLY) != 0) ||
	    (!f->exclude && check_variable(RUN_FILTER_NOT) != 0))
		return -1;
	if (depth && *depth && filterspec_depth(depth, &d) != 0) {
		fprintf(stderr, "scope-run: bad %s '%s': give a depth from 1 to %u\n",
			f->depth ? "--depth" : "SCOPE_DEPTH", depth, FILTERSPEC_MAX_DEPTH);
		return -1;
	}
	if (min && *min && filterspec_duration(min, &ns) != 0) {
		fprintf(stderr,
			"scope-run: bad %s '%s': give a duration from 1 ns to a day, in ns or "
			"with us, ms or s (say 10us)\n",
			f->min_duration ? "--min-duration" : "SCOPE_MIN_DURATION", min);
		return -1;
	}
	if (sample && *sample && !sample_rate(sample)) {
		fprintf(stderr,
			"scope-run: bad %s '%s': give samples per second of CPU time, 1 to "
			"100000\n",
			f->sample ? "--sample" : "SCOPE_SAMPLE", sample);
		return -1;
	}
	if (f->not_subtree && (!exclude || !*exclude)) {
		fprintf(stderr, "scope-run: --not-subtree applies to the functions of --not: "
				"give --not REGEX too\n");
		return -1;
	}
	return 0;
}

void run_filters_export(const struct run_filters *f)
{
	if (f->only)
		setenv("SCOPE_ONLY", f->only, 1);
	if (f->exclude)
		setenv("SCOPE_NOT", f->exclude, 1);
	if (f->not_subtree)
		setenv("SCOPE_NOT_SUBTREE", "1", 1);
	if (f->depth)
		setenv("SCOPE_DEPTH", f->depth, 1);
	if (f->min_duration)
		setenv("SCOPE_MIN_DURATION", f->min_duration, 1);
	if (f->sample)
		setenv("SCOPE_SAMPLE", f->sample, 1);
}
