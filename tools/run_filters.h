/* SPDX-License-Identifier: MIT */
/* scope-run's record-time filter options, checked before the program starts and handed to the
 * library. */
#ifndef SCOPE_TOOLS_RUN_FILTERS_H
#define SCOPE_TOOLS_RUN_FILTERS_H

/* What the options say; NULL/0 for what they leave to SCOPE_* variables. */
struct run_filters {
	char *only, *exclude; /* regular expressions, one per line */
	const char *depth, *min_duration;
	const char *sample; /* --sample HZ */
	int not_subtree;
};

enum run_filter_kind { RUN_FILTER_ONLY, RUN_FILTER_NOT };

/* Adds one --only or --not expression; returns 0, or -1 after one line
 * (prefixed scope-run:) naming the expression and what is wrong with it. */
int run_filters_add(struct run_filters *f, enum run_filter_kind kind, const char *regex);

/* Checks the options and the SCOPE_* variables they would override, as
 * the library will read them; returns 0, or -1 after one line. */
int run_filters_check(const struct run_filters *f);

/* Sets the SCOPE_* variables for the options given (in the child). */
void run_filters_export(const struct run_filters *f);

#endif
