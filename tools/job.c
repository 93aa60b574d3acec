/* SPDX-License-Identifier: MIT */
/* Whether this scope-run is one rank of an MPI job, as the launcher's environment says. */
#include "job.h"

#include <scope/launcher.h>

#include <stdlib.h>

static int env_int(const char *const *names, size_t n, int fallback)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return fallback;
}

int job_detect(struct job *j, const char *output)
{
	static const char *const ranks[] = {SCOPE_RANK_VARS};
	static const char *const sizes[] = {SCOPE_SIZE_VARS};

	return job_init(j, output, env_int(ranks, sizeof ranks / sizeof *ranks, -1),
			env_int(sizes, sizeof sizes / sizeof *sizes, 0), "scope-run");
}
