/* SPDX-License-Identifier: MIT */
/* scope-report --otf2 where scope-report was built without the OTF2 library: it says so. */
#include "report.h"

int view_otf2(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	(void)in, (void)out;
	snprintf(err, cap,
		 "%s: this scope-report was built without OTF2: install libotf2-trace-dev and "
		 "build it again",
		 o->files[0]);
	return -1;
}

uint64_t size_otf2(const struct options *o, struct rd_profile *const *in, uint64_t *calls)
{
	(void)o, (void)in;
	*calls = 0;
	return 0;
}
