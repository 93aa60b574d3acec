/* SPDX-License-Identifier: MIT */
/* The tables of lib/schema.h: every group and field of schema 3, typed and described. */
#include "schema.h"

#define SC_ROW(id, name, type, need, unit, what) {name, type, need, unit, what},

const struct sc_field sc_root[SC_NROOT] = {SC_ROOT_FIELDS(SC_ROW)};
const struct sc_field sc_metadata[SC_NMETA] = {SC_METADATA_FIELDS(SC_ROW)};
const struct sc_field sc_processes[SC_NPROC] = {SC_PROCESS_FIELDS(SC_ROW)};
const struct sc_field sc_regions[SC_NREG] = {SC_REGION_FIELDS(SC_ROW)};
const struct sc_field sc_pairs[SC_NPAIR] = {SC_PAIR_FIELDS(SC_ROW)};
const struct sc_field sc_events[SC_NEV] = {SC_EVENT_FIELDS(SC_ROW)};
const struct sc_field sc_threads[SC_NTHR] = {SC_THREAD_FIELDS(SC_ROW)};
const struct sc_field sc_tasks[SC_NTASK] = {SC_TASK_FIELDS(SC_ROW)};
const struct sc_field sc_modules[SC_NMOD] = {SC_MODULE_FIELDS(SC_ROW)};
const struct sc_field sc_aggregates[SC_NAGG] = {SC_AGGREGATE_FIELDS(SC_ROW)};
const struct sc_field sc_samples[SC_NSMP] = {SC_SAMPLE_FIELDS(SC_ROW)};
const struct sc_field sc_crash_attrs[SC_NCRASHA] = {SC_CRASH_ATTRS(SC_ROW)};
const struct sc_field sc_crash[SC_NCRASH] = {SC_CRASH_FIELDS(SC_ROW)};
const struct sc_field sc_heap_attrs[SC_NHEAPA] = {SC_HEAP_ATTRS(SC_ROW)};
const struct sc_field sc_heap[SC_NHEAP] = {SC_HEAP_FIELDS(SC_ROW)};
const struct sc_field sc_heap_sites[SC_NSITE] = {SC_HEAP_SITE_FIELDS(SC_ROW)};

#define GROUP(path, attributes, table)                                                             \
	{                                                                                          \
		path, attributes, table, sizeof table / sizeof *table                              \
	}

const struct sc_group sc_groups[] = {
	GROUP("/", 1, sc_root),
	GROUP("/metadata", 1, sc_metadata),
	GROUP("/processes", 0, sc_processes),
	GROUP("/regions", 0, sc_regions),
	GROUP("/pairs", 0, sc_pairs),
	GROUP("/events", 0, sc_events),
	GROUP("/process<N>/lanes/threads", 0, sc_threads),
	GROUP("/process<N>/lanes/tasks", 0, sc_tasks),
	GROUP("/process<N>/modules", 0, sc_modules),
	GROUP("/process<N>/aggregates", 0, sc_aggregates),
	GROUP("/process<N>/samples", 0, sc_samples),
	GROUP("/process<N>/crash", 1, sc_crash_attrs),
	GROUP("/process<N>/crash", 0, sc_crash),
	GROUP("/process<N>/heap", 1, sc_heap_attrs),
	GROUP("/process<N>/heap", 0, sc_heap),
	GROUP("/process<N>/heap_sites", 0, sc_heap_sites),
};
const size_t sc_ngroups = sizeof sc_groups / sizeof *sc_groups;

#define SC_GROUP_DOC(path, what)		    {path, what},
#define SC_ENUM_DOC(group, column, attribute, text) {group, column, attribute, text},

const struct sc_group_doc sc_group_docs[] = {SC_GROUP_DOCS(SC_GROUP_DOC)};
const size_t sc_ngroup_docs = sizeof sc_group_docs / sizeof *sc_group_docs;
const struct sc_enum_doc sc_enum_docs[] = {SC_ENUM_DOCS(SC_ENUM_DOC)};
const size_t sc_nenum_docs = sizeof sc_enum_docs / sizeof *sc_enum_docs;

const char *sc_type_name(enum sc_type t)
{
	switch (t) {
	case SC_INT32: return "int32";
	case SC_INT64: return "int64";
	case SC_UINT8: return "uint8";
	case SC_UINT32: return "uint32";
	case SC_UINT64: return "uint64";
	case SC_FLOAT64: return "float64";
	case SC_STRING: return "string";
	case SC_NARROW: return "unsigned, narrowest";
	}
	return "?";
}
