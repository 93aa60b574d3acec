/* SPDX-License-Identifier: MIT */
/* scope-schema-dump: prints lib/schema.h's table, one field a line, for the schema test. */
#include "schema.h"

#include <stdio.h>

int main(void)
{
	printf("schema\t%d\noldest\t%d\n", SC_SCHEMA, SC_SCHEMA_OLDEST);
	for (size_t g = 0; g < sc_ngroups; g++)
		for (size_t i = 0; i < sc_groups[g].n; i++) {
			const struct sc_field *f = &sc_groups[g].fields[i];
			printf("field\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sc_groups[g].path,
			       sc_groups[g].attributes ? "attribute" : "column", f->name,
			       sc_type_name(f->type),
			       f->need == SC_REQUIRED ? "required" : "optional", f->unit, f->what);
		}
	return ferror(stdout) ? 1 : 0;
}
