/* SPDX-License-Identifier: MIT */
/* The profile format, schema 3: its version and every group, column and attribute, in one table. */
#ifndef SCOPE_LIB_SCHEMA_H
#define SCOPE_LIB_SCHEMA_H

#include <stddef.h>

#define SC_SCHEMA	 3 /* the version written */
#define SC_SCHEMA_OLDEST 3 /* the oldest version read */
#define SC_TIME_UNIT	 "ns"

/* Groups (one path component each) and the name of /process<N>. */
#define SC_METADATA  "metadata"
#define SC_PROCESSES "processes"
#define SC_REGIONS   "regions"
#define SC_PAIRS     "pairs"
#define SC_EVENTS    "events"
#define SC_PROCESS_N "process%zu" /* /process<N>, N a row of /processes */
#define SC_LANES     "lanes"
#define SC_THREADS   "threads" /* in lanes */
#define SC_MODULES   "modules"
#define SC_CRASH     "crash"
#define SC_ENV_	     "env_" /* /metadata env_<VAR> */

enum sc_type {
	SC_INT32,
	SC_INT64,
	SC_UINT8,
	SC_UINT32,
	SC_UINT64,
	SC_FLOAT64,
	SC_STRING, /* variable-length UTF-8 */
	SC_NARROW, /* unsigned, the narrowest of 8, 16, 32 or 64 bits that holds the file's values
		    */
};

/* Required: every profile has it, and the reader refuses a file without
 * it. Optional: some profiles lack it (written by an older scope, or
 * only when there is something to say); readers take 0 or "". */
enum sc_need { SC_REQUIRED, SC_OPTIONAL };

struct sc_field {
	const char *name;
	enum sc_type type;
	enum sc_need need;
	const char *unit; /* "" when the value has none */
	const char *what;
};

/*
 * The fields of each group, as X(ID, name, type, need, unit, description).
 * Each list makes an enum (SC_EV_START_DELTA, ..., SC_NEV) and a table
 * (sc_events[]) in the same order; the writer, the merge, the symbolizer
 * and the reader name fields through them, and code that must list a
 * group's fields by hand asserts the group's count at compile time.
 * docs/SCHEMA.md documents the same fields: the schema test compares them.
 */
#define SC_ROOT_FIELDS(X)                                                                          \
	X(SCHEMA, "schema", SC_INT64, SC_REQUIRED, "", "the schema version, 3")                    \
	X(PRODUCER, "producer", SC_STRING, SC_REQUIRED, "", "the writing program and its version") \
	X(TIME_UNIT, "time_unit", SC_STRING, SC_REQUIRED, "", "the unit of every time, ns")

#define SC_METADATA_FIELDS(X)                                                                      \
	X(COMMAND_LINE, "command_line", SC_STRING, SC_REQUIRED, "", "the profiled command line")   \
	X(WORKING_DIR, "working_dir", SC_STRING, SC_REQUIRED, "", "its working directory")         \
	X(START_TIME_UTC, "start_time_utc", SC_STRING, SC_REQUIRED, "",                            \
	  "start of the run, ISO 8601, UTC")                                                       \
	X(HOST, "host", SC_STRING, SC_REQUIRED, "", "host name")                                   \
	X(CPU_MODEL, "cpu_model", SC_STRING, SC_REQUIRED, "", "CPU model name")                    \
	X(LOGICAL_CORES, "logical_cores", SC_INT64, SC_REQUIRED, "", "logical CPUs")               \
	X(PHYSICAL_CORES, "physical_cores", SC_INT64, SC_REQUIRED, "", "physical cores")           \
	X(CPU_MHZ, "cpu_mhz", SC_FLOAT64, SC_REQUIRED, "MHz", "CPU frequency")                     \
	X(MEMORY_BYTES, "memory_bytes", SC_INT64, SC_REQUIRED, "bytes", "installed memory")        \
	X(KERNEL, "kernel", SC_STRING, SC_REQUIRED, "", "operating-system kernel")                 \
	X(PLATFORM, "platform", SC_STRING, SC_REQUIRED, "", "platform description")                \
	X(LIBC_VERSION, "libc_version", SC_STRING, SC_REQUIRED, "", "C library version")           \
	X(ENV, SC_ENV_ "<VAR>", SC_STRING, SC_OPTIONAL, "",                                        \
	  "a thread-count variable's value, one per variable set")                                 \
	X(CLOCK_SOURCE, "clock_source", SC_STRING, SC_REQUIRED, "", "tsc or monotonic")            \
	X(CLOCK_FREQUENCY_HZ, "clock_frequency_hz", SC_FLOAT64, SC_REQUIRED, "Hz",                 \
	  "ticks per second of that clock")                                                        \
	X(EXIT_STATUS, "exit_status", SC_INT64, SC_REQUIRED, "", "exit status, -1 if killed")      \
	X(EXIT_SIGNAL, "exit_signal", SC_INT64, SC_REQUIRED, "", "the signal that killed it, 0")   \
	X(WALL_SECONDS, "wall_seconds", SC_FLOAT64, SC_REQUIRED, "s", "wall-clock time")           \
	X(CPU_SECONDS, "cpu_seconds", SC_FLOAT64, SC_REQUIRED, "s", "CPU time, user + system")     \
	X(PEAK_RSS_BYTES, "peak_rss_bytes", SC_INT64, SC_REQUIRED, "bytes", "peak resident set")   \
	X(COMPRESSION, "compression", SC_STRING, SC_REQUIRED, "", "the storage policy used")       \
	X(LOST_RECORDS, "lost_records", SC_INT64, SC_REQUIRED, "", "calls dropped, all processes") \
	X(LOST_ARENA_FULL, "lost_arena_full", SC_INT64, SC_REQUIRED, "",                           \
	  "of those, for want of a recording chunk")                                               \
	X(LOST_NO_LANE, "lost_no_lane", SC_INT64, SC_REQUIRED, "",                                 \
	  "of those, for want of a lane slot")                                                     \
	X(LOST_SHARED_TLS, "lost_shared_tls", SC_INT64, SC_REQUIRED, "",                           \
	  "of those, for want of recording state for a task sharing TLS")                          \
	X(OVERHEAD_NS_PER_CALL, "overhead_ns_per_call", SC_FLOAT64, SC_REQUIRED, "ns",             \
	  "what recording one call cost")                                                          \
	X(COMPLETE, "complete", SC_INT64, SC_REQUIRED, "", "1 when the run stopped normally")      \
	X(PROCESSES, "processes", SC_INT64, SC_OPTIONAL, "", "processes in a merged file")         \
	X(MPI_RANKS, "mpi_ranks", SC_INT64, SC_OPTIONAL, "", "ranks of the MPI job")               \
	X(MISSING_RANKS, "missing_ranks", SC_STRING, SC_OPTIONAL, "",                              \
	  "the job's ranks without a profile, \"2,5\"")                                            \
	X(FILTER_ONLY, "filter_only", SC_STRING, SC_OPTIONAL, "",                                  \
	  "the --only expressions, one per line, \"\" for none")                                   \
	X(FILTER_NOT, "filter_not", SC_STRING, SC_OPTIONAL, "",                                    \
	  "the --not expressions, one per line, \"\" for none")                                    \
	X(FILTER_NOT_SUBTREE, "filter_not_subtree", SC_INT64, SC_OPTIONAL, "",                     \
	  "1 when --not left out the calls below too")                                             \
	X(FILTER_DEPTH, "filter_depth", SC_INT64, SC_OPTIONAL, "", "--depth, 0 for none")          \
	X(FILTER_MIN_DURATION_NS, "filter_min_duration_ns", SC_INT64, SC_OPTIONAL, "ns",           \
	  "--min-duration, 0 for none")                                                            \
	X(CALLS_STORED, "calls_stored", SC_INT64, SC_OPTIONAL, "",                                 \
	  "calls stored in /events, all processes")                                                \
	X(CALLS_AGGREGATED, "calls_aggregated", SC_INT64, SC_OPTIONAL, "",                         \
	  "calls counted in /pairs only, all processes")

#define SC_PROCESS_FIELDS(X)                                                                       \
	X(PID, "pid", SC_INT64, SC_REQUIRED, "", "process id")                                     \
	X(PPID, "ppid", SC_INT64, SC_OPTIONAL, "", "its parent's process id")                      \
	X(PARENT, "parent", SC_INT64, SC_REQUIRED, "", "row of the process it came from, or -1")   \
	X(RANK, "rank", SC_INT64, SC_REQUIRED, "", "MPI rank, or -1")                              \
	X(EXECUTABLE, "executable", SC_STRING, SC_REQUIRED, "", "path of the executable")          \
	X(ARGUMENTS, "arguments", SC_STRING, SC_REQUIRED, "", "its argv, joined by spaces")        \
	X(START, "start", SC_UINT64, SC_REQUIRED, "unix ns", "start of the process")               \
	X(END, "end", SC_UINT64, SC_REQUIRED, "unix ns", "end of the process")                     \
	X(EXIT_STATUS, "exit_status", SC_INT64, SC_REQUIRED, "", "exit status, or -1")             \
	X(EXIT_SIGNAL, "exit_signal", SC_INT64, SC_OPTIONAL, "", "the signal that killed it, 0")   \
	X(LOST, "lost", SC_UINT64, SC_REQUIRED, "", "calls dropped in it")                         \
	X(EXEC, "exec", SC_UINT8, SC_OPTIONAL, "", "1 when this image ended by exec")              \
	X(COMPLETE, "complete", SC_UINT8, SC_OPTIONAL, "", "1 when it stopped normally")           \
	X(HOST, "host", SC_STRING, SC_OPTIONAL, "", "the host it ran on")

#define SC_REGION_FIELDS(X)                                                                        \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "", "function name, or module+0xOFFSET")           \
	X(MODULE, "module", SC_STRING, SC_REQUIRED, "", "path of the object holding the code")     \
	X(OFFSET, "offset", SC_UINT64, SC_REQUIRED, "", "address less the module's load bias")     \
	X(FILE, "file", SC_STRING, SC_REQUIRED, "", "source file, or \"\"")                        \
	X(LINE, "line", SC_UINT32, SC_REQUIRED, "", "source line, or 0")                           \
	X(KIND, "kind", SC_STRING, SC_REQUIRED, "", "function, mpi, wait or io")

#define SC_PAIR_FIELDS(X)                                                                          \
	X(PROCESS, "process", SC_UINT32, SC_REQUIRED, "", "row in /processes")                     \
	X(REGION, "region", SC_UINT32, SC_REQUIRED, "", "row in /regions")                         \
	X(FIRST, "first", SC_UINT64, SC_REQUIRED, "", "first row of its calls in /events")         \
	X(COUNT, "count", SC_UINT64, SC_REQUIRED, "", "number of calls")                           \
	X(TOTAL_NS, "total_ns", SC_UINT64, SC_REQUIRED, "ns",                                      \
	  "sum of the durations of its outermost calls (none of its calls open around them)")      \
	X(TOTAL_ALL_NS, "total_all_ns", SC_UINT64, SC_OPTIONAL, "ns",                              \
	  "sum of every call's duration, recursive ones included")                                 \
	X(SELF_NS, "self_ns", SC_UINT64, SC_REQUIRED, "ns",                                        \
	  "each call's time less its recorded callees'")                                           \
	X(MIN_NS, "min_ns", SC_UINT64, SC_REQUIRED, "ns", "shortest call")                         \
	X(MAX_NS, "max_ns", SC_UINT64, SC_REQUIRED, "ns", "longest call")                          \
	X(BYTES_SENT, "bytes_sent", SC_UINT64, SC_OPTIONAL, "", "sum of its calls' bytes_sent")    \
	X(BYTES_RECEIVED, "bytes_received", SC_UINT64, SC_OPTIONAL, "",                            \
	  "sum of its calls' bytes_received")                                                      \
	X(AGGREGATED, "aggregated", SC_UINT64, SC_OPTIONAL, "",                                    \
	  "calls a filter kept out of /events, counted here only")

/* One row per call; a new per-call column is one line here (see
 * SC_EVENT_COUNT for the lists that must follow it). */
#define SC_EVENT_FIELDS(X)                                                                         \
	X(START_DELTA, "start_delta", SC_NARROW, SC_REQUIRED, "ns",                                \
	  "start, then the gap to the pair's previous start")                                      \
	X(DURATION, "duration", SC_NARROW, SC_REQUIRED, "ns", "duration of the call")              \
	X(THREAD, "thread", SC_NARROW, SC_REQUIRED, "", "thread lane")                             \
	X(TASK, "task", SC_NARROW, SC_REQUIRED, "", "task lane, 0 = none")                         \
	X(DEPTH, "depth", SC_NARROW, SC_REQUIRED, "", "call depth on its thread")                  \
	X(FLAGS, "flags", SC_UINT8, SC_REQUIRED, "", "bit 0: never returned")                      \
	X(BYTES_SENT, "bytes_sent", SC_NARROW, SC_OPTIONAL, "bytes",                               \
	  "bytes an MPI call sent or an I/O call wrote")                                           \
	X(BYTES_RECEIVED, "bytes_received", SC_NARROW, SC_OPTIONAL, "bytes",                       \
	  "bytes an MPI call received or an I/O call read")

#define SC_THREAD_FIELDS(X)                                                                        \
	X(TID, "tid", SC_UINT32, SC_REQUIRED, "", "operating-system thread id")                    \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "", "thread name")                                 \
	X(PARENT, "parent", SC_INT32, SC_REQUIRED, "", "lane of its creator, or -1")               \
	X(START, "start", SC_UINT64, SC_REQUIRED, "relative ns", "start of the thread")            \
	X(END, "end", SC_UINT64, SC_REQUIRED, "relative ns", "end of the thread")                  \
	X(CPU_NS, "cpu_ns", SC_UINT64, SC_OPTIONAL, "ns", "CPU time the thread used, 0 = unknown")

#define SC_MODULE_FIELDS(X)                                                                        \
	X(PATH, "path", SC_STRING, SC_REQUIRED, "", "path of the object")                          \
	X(BIAS, "bias", SC_UINT64, SC_REQUIRED, "", "load bias")                                   \
	X(LOW, "low", SC_UINT64, SC_OPTIONAL, "", "start of its run-time addresses")               \
	X(HIGH, "high", SC_UINT64, SC_OPTIONAL, "", "end of its run-time addresses")               \
	X(BUILD_ID, "build_id", SC_STRING, SC_REQUIRED, "", "GNU build-id in hex, or \"\"")

#define SC_CRASH_ATTRS(X)                                                                          \
	X(SIGNAL, "signal", SC_INT64, SC_REQUIRED, "", "the signal number")                        \
	X(LANE, "lane", SC_INT64, SC_REQUIRED, "", "the thread lane it hit")

#define SC_CRASH_FIELDS(X)                                                                         \
	X(ADDRESS, "address", SC_UINT64, SC_REQUIRED, "", "code addresses, innermost first")       \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "", "the functions they fall in")

/* clang-format off */
#define SC_ENUM_(prefix, id) SC_##prefix##_##id,
#define SC_ENUM_ROOT(id, ...)	  SC_ENUM_(ROOT, id)
#define SC_ENUM_META(id, ...)	  SC_ENUM_(META, id)
#define SC_ENUM_PROC(id, ...)	  SC_ENUM_(PROC, id)
#define SC_ENUM_REG(id, ...)	  SC_ENUM_(REG, id)
#define SC_ENUM_PAIR(id, ...)	  SC_ENUM_(PAIR, id)
#define SC_ENUM_EV(id, ...)	  SC_ENUM_(EV, id)
#define SC_ENUM_THR(id, ...)	  SC_ENUM_(THR, id)
#define SC_ENUM_MOD(id, ...)	  SC_ENUM_(MOD, id)
#define SC_ENUM_CRASHA(id, ...)	  SC_ENUM_(CRASHA, id)
#define SC_ENUM_CRASH(id, ...)	  SC_ENUM_(CRASH, id)
enum sc_root { SC_ROOT_FIELDS(SC_ENUM_ROOT) SC_NROOT };
enum sc_meta { SC_METADATA_FIELDS(SC_ENUM_META) SC_NMETA };
enum sc_proc { SC_PROCESS_FIELDS(SC_ENUM_PROC) SC_NPROC };
enum sc_reg { SC_REGION_FIELDS(SC_ENUM_REG) SC_NREG };
enum sc_pair { SC_PAIR_FIELDS(SC_ENUM_PAIR) SC_NPAIR };
enum sc_ev { SC_EVENT_FIELDS(SC_ENUM_EV) SC_NEV };
enum sc_thr { SC_THREAD_FIELDS(SC_ENUM_THR) SC_NTHR };
enum sc_mod { SC_MODULE_FIELDS(SC_ENUM_MOD) SC_NMOD };
enum sc_crasha { SC_CRASH_ATTRS(SC_ENUM_CRASHA) SC_NCRASHA };
enum sc_crash { SC_CRASH_FIELDS(SC_ENUM_CRASH) SC_NCRASH };
/* clang-format on */

extern const struct sc_field sc_root[SC_NROOT], sc_metadata[SC_NMETA], sc_processes[SC_NPROC],
	sc_regions[SC_NREG], sc_pairs[SC_NPAIR], sc_events[SC_NEV], sc_threads[SC_NTHR],
	sc_modules[SC_NMOD], sc_crash_attrs[SC_NCRASHA], sc_crash[SC_NCRASH];

/* The name of a field: SC_EV(START_DELTA) is "start_delta". */
#define SC_ROOT(id) (sc_root[SC_ROOT_##id].name)
#define SC_META(id) (sc_metadata[SC_META_##id].name)
#define SC_PROC(id) (sc_processes[SC_PROC_##id].name)
#define SC_REG(id)  (sc_regions[SC_REG_##id].name)
#define SC_PAIR(id) (sc_pairs[SC_PAIR_##id].name)
#define SC_EV(id)   (sc_events[SC_EV_##id].name)
#define SC_THR(id)  (sc_threads[SC_THR_##id].name)
#define SC_MOD(id)  (sc_modules[SC_MOD_##id].name)

/* A group of the table, for those who walk all of it (the schema test). */
struct sc_group {
	const char *path; /* "/events", "/process<N>/modules" */
	int attributes;	  /* fields are attributes of the group, else its columns */
	const struct sc_field *fields;
	size_t n;
};

extern const struct sc_group sc_groups[];
extern const size_t sc_ngroups;

/* "int64", "unsigned, narrowest", ...: the type as docs/SCHEMA.md spells it. */
const char *sc_type_name(enum sc_type t);

#endif
