/* SPDX-License-Identifier: MIT */
/* scope-schema-dump: prints lib/schema.h's fields, groups and enumerations, one a line. */
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
	for (size_t g = 0; g < sc_ngroup_docs; g++)
		printf("group\t%s\t%s\n", sc_group_docs[g].path, sc_group_docs[g].what);
	for (size_t e = 0; e < sc_nenum_docs; e++)
		printf("enum\t%s\t%s\t%s\t%s\n", sc_enum_docs[e].group, sc_enum_docs[e].column,
		       sc_enum_docs[e].attribute, sc_enum_docs[e].text);
	printf("attributes\t%s\t%s\n", SC_DESCRIPTION, SC_UNIT);
	return ferror(stdout) ? 1 : 0;
}
