/* SPDX-License-Identifier: MIT */
/* The profile format, schema 3: its version and every group, column and attribute, in one table. */
#ifndef SCOPE_LIB_SCHEMA_H
#define SCOPE_LIB_SCHEMA_H

#include <stddef.h>

#define SC_SCHEMA	 3 /* the version written */
#define SC_SCHEMA_OLDEST 3 /* the oldest version read */
#define SC_TIME_UNIT	 "ns"

/* Groups (one path component each) and the name of /process<N>. */
#define SC_METADATA   "metadata"
#define SC_PROCESSES  "processes"
#define SC_REGIONS    "regions"
#define SC_PAIRS      "pairs"
#define SC_EVENTS     "events"
#define SC_PROCESS_N  "process%zu" /* /process<N>, N a row of /processes */
#define SC_LANES      "lanes"
#define SC_THREADS    "threads" /* in lanes */
#define SC_TASKS      "tasks"	/* in lanes */
#define SC_MODULES    "modules"
#define SC_AGGREGATES "aggregates"
#define SC_SAMPLES    "samples"
#define SC_CRASH      "crash"
#define SC_HEAP	      "heap"	   /* in /process<N>, with SCOPE_HEAP=1 */
#define SC_HEAP_SITES "heap_sites" /* in /process<N>, with SCOPE_HEAP=1 */
#define SC_ENV_	      "env_"	   /* /metadata env_<VAR> */

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
 * docs/SCHEMA.md documents the same fields, and a field's description is
 * its meaning there, word for word: the schema test compares them. The
 * writer and the merge write the descriptions (without their markup) and
 * units into the file (describe_profile, lib/columns.h).
 */
#define SC_ROOT_FIELDS(X)                                                                          \
	X(SCHEMA, "schema", SC_INT64, SC_REQUIRED, "", "the schema version, `3`")                  \
	X(PRODUCER, "producer", SC_STRING, SC_REQUIRED, "",                                        \
	  "the writing program and its version, such as `scope 0.1.0`")                            \
	X(TIME_UNIT, "time_unit", SC_STRING, SC_REQUIRED, "", "the unit of every time, `ns`")

#define SC_METADATA_FIELDS(X)                                                                      \
	X(COMMAND_LINE, "command_line", SC_STRING, SC_REQUIRED, "", "the profiled command line")   \
	X(WORKING_DIR, "working_dir", SC_STRING, SC_REQUIRED, "", "its working directory")         \
	X(START_TIME_UTC, "start_time_utc", SC_STRING, SC_REQUIRED, "",                            \
	  "start of the run, ISO 8601, UTC")                                                       \
	X(HOST, "host", SC_STRING, SC_REQUIRED, "", "host name")                                   \
	X(CPU_MODEL, "cpu_model", SC_STRING, SC_REQUIRED, "", "CPU model name")                    \
	X(LOGICAL_CORES, "logical_cores", SC_INT64, SC_REQUIRED, "",                               \
	  "logical CPUs (hardware threads)")                                                       \
	X(PHYSICAL_CORES, "physical_cores", SC_INT64, SC_REQUIRED, "", "physical cores")           \
	X(CPU_MHZ, "cpu_mhz", SC_FLOAT64, SC_REQUIRED, "MHz", "CPU frequency, MHz")                \
	X(MEMORY_BYTES, "memory_bytes", SC_INT64, SC_REQUIRED, "bytes", "installed memory, bytes") \
	X(KERNEL, "kernel", SC_STRING, SC_REQUIRED, "", "operating-system kernel")                 \
	X(PLATFORM, "platform", SC_STRING, SC_REQUIRED, "", "platform description")                \
	X(LIBC_VERSION, "libc_version", SC_STRING, SC_REQUIRED, "", "C library version")           \
	X(ENV, SC_ENV_ "<VAR>", SC_STRING, SC_OPTIONAL, "",                                        \
	  "value of a thread-count variable such as `OMP_NUM_THREADS` (`env_OMP_NUM_THREADS`); "   \
	  "one attribute per such variable that was set, none for those that were not")            \
	X(CLOCK_SOURCE, "clock_source", SC_STRING, SC_REQUIRED, "",                                \
	  "`tsc` or `monotonic`: the clock the calls were timed with")                             \
	X(CLOCK_FREQUENCY_HZ, "clock_frequency_hz", SC_FLOAT64, SC_REQUIRED, "Hz",                 \
	  "ticks per second (Hz) of that clock (stored times are already converted to ns)")        \
	X(EXIT_STATUS, "exit_status", SC_INT64, SC_REQUIRED, "",                                   \
	  "exit status of the program, `-1` if it was killed by a signal")                         \
	X(EXIT_SIGNAL, "exit_signal", SC_INT64, SC_REQUIRED, "",                                   \
	  "number of the signal that killed it, `0` if none")                                      \
	X(WALL_SECONDS, "wall_seconds", SC_FLOAT64, SC_REQUIRED, "s",                              \
	  "wall-clock time of the run, s")                                                         \
	X(CPU_SECONDS, "cpu_seconds", SC_FLOAT64, SC_REQUIRED, "s",                                \
	  "CPU time of the run (user + system), s")                                                \
	X(PEAK_RSS_BYTES, "peak_rss_bytes", SC_INT64, SC_REQUIRED, "bytes",                        \
	  "peak resident set size, bytes")                                                         \
	X(COMPRESSION, "compression", SC_STRING, SC_REQUIRED, "",                                  \
	  "the storage policy used (see *Storage*)")                                               \
	X(LOST_RECORDS, "lost_records", SC_INT64, SC_REQUIRED, "",                                 \
	  "calls dropped during recording, all processes together")                                \
	X(LOST_ARENA_FULL, "lost_arena_full", SC_INT64, SC_REQUIRED, "",                           \
	  "of those, dropped because no recording chunk could be had (arena full, disk full)")     \
	X(LOST_NO_LANE, "lost_no_lane", SC_INT64, SC_REQUIRED, "",                                 \
	  "of those, dropped because the process had more threads than lane slots")                \
	X(LOST_SHARED_TLS, "lost_shared_tls", SC_INT64, SC_REQUIRED, "",                           \
	  "of those, dropped because a task shared another's thread-local storage "                \
	  "(`clone(CLONE_VM)` without `CLONE_SETTLS`) and no recording state was left for it")     \
	X(OVERHEAD_NS_PER_CALL, "overhead_ns_per_call", SC_FLOAT64, SC_REQUIRED, "ns",             \
	  "what recording one call (its enter and exit hooks) cost, ns, measured at start-up; "    \
	  "reports may subtract it")                                                               \
	X(COMPLETE, "complete", SC_INT64, SC_REQUIRED, "",                                         \
	  "`1` when the run stopped normally, `0` when it was recovered from a killed process")    \
	X(PROCESSES, "processes", SC_INT64, SC_OPTIONAL, "",                                       \
	  "(merged profiles) number of processes in the file")                                     \
	X(MPI_RANKS, "mpi_ranks", SC_INT64, SC_OPTIONAL, "",                                       \
	  "(MPI jobs) number of ranks of the job, from the launcher's environment")                \
	X(MISSING_RANKS, "missing_ranks", SC_STRING, SC_OPTIONAL, "",                              \
	  "(merged MPI jobs) the job's ranks that left no profile, as `2,5`; `\"\"` when none")    \
	X(FILTER_ONLY, "filter_only", SC_STRING, SC_OPTIONAL, "",                                  \
	  "(filtered runs) the `--only` regular expressions (`SCOPE_ONLY`), one per line; `\"\"` " \
	  "when none")                                                                             \
	X(FILTER_NOT, "filter_not", SC_STRING, SC_OPTIONAL, "",                                    \
	  "(filtered runs) the `--not` regular expressions (`SCOPE_NOT`), one per line; `\"\"` "   \
	  "when none")                                                                             \
	X(FILTER_NOT_SUBTREE, "filter_not_subtree", SC_INT64, SC_OPTIONAL, "",                     \
	  "(filtered runs) `1` when `--not` left out the calls made below those functions too")    \
	X(FILTER_DEPTH, "filter_depth", SC_INT64, SC_OPTIONAL, "",                                 \
	  "(filtered runs) `--depth` (`SCOPE_DEPTH`), `0` when none")                              \
	X(FILTER_MIN_DURATION_NS, "filter_min_duration_ns", SC_INT64, SC_OPTIONAL, "ns",           \
	  "(filtered runs) `--min-duration` (`SCOPE_MIN_DURATION`), ns; `0` when none")            \
	X(CALLS_STORED, "calls_stored", SC_INT64, SC_OPTIONAL, "",                                 \
	  "(filtered runs) calls stored in `/events`, all processes together (the sum of "         \
	  "`/pairs/count`)")                                                                       \
	X(CALLS_AGGREGATED, "calls_aggregated", SC_INT64, SC_OPTIONAL, "",                         \
	  "(filtered runs) calls the filters kept out of `/events`, counted in `/pairs` only, "    \
	  "all "                                                                                   \
	  "processes together (the sum of `/pairs/aggregated`)")                                   \
	X(SAMPLE_HZ, "sample_hz", SC_INT64, SC_OPTIONAL, "Hz",                                     \
	  "(sampled runs) samples per second of each thread's CPU time (`SCOPE_SAMPLE`), Hz")

#define SC_PROCESS_FIELDS(X)                                                                       \
	X(PID, "pid", SC_INT64, SC_REQUIRED, "", "operating-system process id")                    \
	X(PPID, "ppid", SC_INT64, SC_OPTIONAL, "", "operating-system id of its parent process")    \
	X(PARENT, "parent", SC_INT64, SC_REQUIRED, "",                                             \
	  "row of the process it came from: the one that forked it, or, for a program started by " \
	  "`exec`, the image that exec'd it; `-1` for the run's first process")                    \
	X(RANK, "rank", SC_INT64, SC_REQUIRED, "", "MPI rank, `-1` if none")                       \
	X(EXECUTABLE, "executable", SC_STRING, SC_REQUIRED, "", "path of the executable")          \
	X(ARGUMENTS, "arguments", SC_STRING, SC_REQUIRED, "",                                      \
	  "its argv, joined with single spaces")                                                   \
	X(START, "start", SC_UINT64, SC_REQUIRED, "unix ns", "start of the process, unix ns")      \
	X(END, "end", SC_UINT64, SC_REQUIRED, "unix ns", "end of the process, unix ns")            \
	X(EXIT_STATUS, "exit_status", SC_INT64, SC_REQUIRED, "",                                   \
	  "exit status of the process, `-1` when a signal killed it or it went on by `exec`")      \
	X(EXIT_SIGNAL, "exit_signal", SC_INT64, SC_OPTIONAL, "",                                   \
	  "signal that killed it, `0` if none")                                                    \
	X(LOST, "lost", SC_UINT64, SC_REQUIRED, "", "calls dropped in this process")               \
	X(EXEC, "exec", SC_UINT8, SC_OPTIONAL, "",                                                 \
	  "`1` when this program image ended by `exec` (the next image is another row with the "   \
	  "same `pid`)")                                                                           \
	X(COMPLETE, "complete", SC_UINT8, SC_OPTIONAL, "",                                         \
	  "`1` when the process stopped normally; `0` when its calls were recovered after it was " \
	  "killed (`kill -9`): calls recorded in the last moments may be missing")                 \
	X(HOST, "host", SC_STRING, SC_OPTIONAL, "",                                                \
	  "name of the host the process ran on (its clock gave `start` and `end`)")                \
	X(COUNTERS, "counters", SC_STRING, SC_OPTIONAL, "",                                        \
	  "the counters read in it (see *Counters*), in column order, joined by commas "           \
	  "(`perf::TASK-CLOCK,PAPI_TOT_INS`); `\"\"` when none was; files without counters lack "  \
	  "the column")

#define SC_REGION_FIELDS(X)                                                                        \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "",                                                \
	  "function name, demangled; `module+0xOFFSET` when names were not resolved "              \
	  "(`SCOPE_SYMBOLIZE=0`)")                                                                 \
	X(MODULE, "module", SC_STRING, SC_REQUIRED, "",                                            \
	  "path of the executable or shared object holding the code")                              \
	X(OFFSET, "offset", SC_UINT64, SC_REQUIRED, "",                                            \
	  "address of the function minus the module's load bias, i.e. the address as the "         \
	  "module's ELF file and its debug info see it")                                           \
	X(FILE, "file", SC_STRING, SC_REQUIRED, "", "source file, `\"\"` if unknown")              \
	X(LINE, "line", SC_UINT32, SC_REQUIRED, "", "source line, `0` if unknown")                 \
	X(KIND, "kind", SC_STRING, SC_REQUIRED, "",                                                \
	  "`function`; `mpi` for an MPI call (see *MPI calls*); `wait` or `io` for a C library "   \
	  "call (see *C library calls*); `user` for a region the program named (see *Named "       \
	  "regions*); `openmp` for an OpenMP parallel region (see *OpenMP*)")

#define SC_PAIR_FIELDS(X)                                                                          \
	X(PROCESS, "process", SC_UINT32, SC_REQUIRED, "", "row in `/processes`")                   \
	X(REGION, "region", SC_UINT32, SC_REQUIRED, "", "row in `/regions`")                       \
	X(FIRST, "first", SC_UINT64, SC_REQUIRED, "",                                              \
	  "first row of this pair's calls in `/events`")                                           \
	X(COUNT, "count", SC_UINT64, SC_REQUIRED, "", "number of calls")                           \
	X(TOTAL_NS, "total_ns", SC_UINT64, SC_REQUIRED, "ns",                                      \
	  "sum of the durations of the outermost calls: those made while no call of the same "     \
	  "region was open on their thread lane, ns")                                              \
	X(TOTAL_ALL_NS, "total_all_ns", SC_UINT64, SC_OPTIONAL, "ns",                              \
	  "sum of every call's duration, the calls made inside a call of the same region "         \
	  "(recursion) included, ns; absent in files of older writers, whose `total_ns` is this "  \
	  "sum")                                                                                   \
	X(SELF_NS, "self_ns", SC_UINT64, SC_REQUIRED, "ns",                                        \
	  "the calls' durations (`total_all_ns`) less the time spent in recorded calls made from " \
	  "these calls, ns")                                                                       \
	X(MIN_NS, "min_ns", SC_UINT64, SC_REQUIRED, "ns", "shortest call, ns")                     \
	X(MAX_NS, "max_ns", SC_UINT64, SC_REQUIRED, "ns", "longest call, ns")                      \
	X(BYTES_SENT, "bytes_sent", SC_UINT64, SC_OPTIONAL, "",                                    \
	  "sum of the calls' `bytes_sent` in `/events`; only in files with MPI calls or I/O "      \
	  "calls (see *MPI calls*, *C library calls*)")                                            \
	X(BYTES_RECEIVED, "bytes_received", SC_UINT64, SC_OPTIONAL, "",                            \
	  "sum of the calls' `bytes_received` in `/events`; likewise")                             \
	X(AGGREGATED, "aggregated", SC_UINT64, SC_OPTIONAL, "",                                    \
	  "calls of the pair that record-time filters kept out of `/events`, counted in this row " \
	  "only; only in files recorded with filters (`0` for the processes of merged inputs "     \
	  "without it)")                                                                           \
	SC_COUNTER_PAIR(X, 0) SC_COUNTER_PAIR(X, 1) SC_COUNTER_PAIR(X, 2) SC_COUNTER_PAIR(X, 3)

/* Counter k's sums per pair (see *Counters*): every call's change, and its
 * self part, the change less its direct callees'. */
#define SC_COUNTER_PAIR(X, k)                                                                      \
	X(COUNTER##k##_TOTAL, "counter" #k "_total", SC_UINT64, SC_OPTIONAL, "",                   \
	  "sum of its calls' `counter" #k "`")                                                     \
	X(COUNTER##k##_SELF, "counter" #k "_self", SC_UINT64, SC_OPTIONAL, "",                     \
	  "sum of its calls' `counter" #k "`, each less that of the calls it made directly, at "   \
	  "least `0`")

/* One row per call; a new per-call column is one line here (see
 * SC_EVENT_COUNT for the lists that must follow it). */
#define SC_EVENT_FIELDS(X)                                                                         \
	X(START_DELTA, "start_delta", SC_NARROW, SC_REQUIRED, "ns",                                \
	  "first row of a pair: start of the call, relative ns (since `/processes/start` of the "  \
	  "pair's process); every later row: ns since the previous call's start in the same pair") \
	X(DURATION, "duration", SC_NARROW, SC_REQUIRED, "ns", "duration of the call, ns")          \
	X(THREAD, "thread", SC_NARROW, SC_REQUIRED, "",                                            \
	  "thread lane: row of `/process<N>/lanes/threads` for the pair's process")                \
	X(TASK, "task", SC_NARROW, SC_REQUIRED, "",                                                \
	  "task lane the call's thread ran when the call started: row `task - 1` of "              \
	  "`/process<N>/lanes/tasks`; `0` = none")                                                 \
	X(DEPTH, "depth", SC_NARROW, SC_REQUIRED, "",                                              \
	  "call depth on its thread, `0` = outermost recorded call (any depth: 32 bits once it "   \
	  "passes 65,535)")                                                                        \
	X(FLAGS, "flags", SC_UINT8, SC_REQUIRED, "",                                               \
	  "bit flags: bit 0 is set when the call never returned")                                  \
	X(BYTES_SENT, "bytes_sent", SC_NARROW, SC_OPTIONAL, "bytes",                               \
	  "bytes this call sent from this rank's buffers (an I/O call: bytes it wrote); `0` "      \
	  "for every call that is neither")                                                        \
	X(BYTES_RECEIVED, "bytes_received", SC_NARROW, SC_OPTIONAL, "bytes",                       \
	  "bytes this call received into this rank's buffers (an I/O call: bytes it read); "       \
	  "likewise")                                                                              \
	SC_COUNTER_EVENT(X, 0) SC_COUNTER_EVENT(X, 1) SC_COUNTER_EVENT(X, 2) SC_COUNTER_EVENT(X, 3)

/* Counter k's change over each call (see *Counters*). */
#define SC_COUNTER_EVENT(X, k)                                                                     \
	X(COUNTER##k, "counter" #k, SC_NARROW, SC_OPTIONAL, "",                                    \
	  "the change of the process's counter " #k " (`/processes/counters` names them) over "    \
	  "the call, `0` for a call not counted")

#define SC_THREAD_FIELDS(X)                                                                        \
	X(TID, "tid", SC_UINT32, SC_REQUIRED, "", "operating-system thread id")                    \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "", "thread name")                                 \
	X(PARENT, "parent", SC_INT32, SC_REQUIRED, "",                                             \
	  "lane of the thread that created it, `-1` if unknown")                                   \
	X(START, "start", SC_UINT64, SC_REQUIRED, "relative ns",                                   \
	  "start of the thread, relative ns")                                                      \
	X(END, "end", SC_UINT64, SC_REQUIRED, "relative ns", "end of the thread, relative ns")     \
	X(CPU_NS, "cpu_ns", SC_UINT64, SC_OPTIONAL, "ns",                                          \
	  "CPU time the thread used, user and system, from its own clock, ns; `0` when not known " \
	  "(a process killed before it could stop, a writer older than this column)")

/* Task lane k (the /events/task value k, k >= 1) is row k - 1. */
#define SC_TASK_FIELDS(X)                                                                          \
	X(ID, "id", SC_UINT64, SC_REQUIRED, "",                                                    \
	  "the task's id: the program's, or the OpenMP runtime's task number")                     \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "",                                                \
	  "the task's name (cut to 119 bytes), `\"\"` when it has none")                           \
	X(PARENT, "parent", SC_INT32, SC_REQUIRED, "",                                             \
	  "thread lane that began the task, `-1` if unknown")                                      \
	X(START, "start", SC_UINT64, SC_REQUIRED, "relative ns",                                   \
	  "when the task began, relative ns")                                                      \
	X(END, "end", SC_UINT64, SC_REQUIRED, "relative ns",                                       \
	  "when it ended, relative ns; the process's end for a task that never did")               \
	X(THREADS, "threads", SC_STRING, SC_REQUIRED, "",                                          \
	  "the thread lanes that ran it, comma-separated, ascending (`\"0,2\"`); `\"\"` when "     \
	  "none "                                                                                  \
	  "ran it")                                                                                \
	X(BUSY_NS, "busy_ns", SC_UINT64, SC_REQUIRED, "ns",                                        \
	  "time threads spent running the task, summed over them, ns")

#define SC_MODULE_FIELDS(X)                                                                        \
	X(PATH, "path", SC_STRING, SC_REQUIRED, "", "path of the object")                          \
	X(BIAS, "bias", SC_UINT64, SC_REQUIRED, "",                                                \
	  "load bias (run-time address minus ELF address)")                                        \
	X(LOW, "low", SC_UINT64, SC_OPTIONAL, "",                                                  \
	  "start of the run-time address range its loadable segments cover")                       \
	X(HIGH, "high", SC_UINT64, SC_OPTIONAL, "",                                                \
	  "end of the run-time address range its loadable segments cover (exclusive)")             \
	X(BUILD_ID, "build_id", SC_STRING, SC_REQUIRED, "", "GNU build-id in hex, `\"\"` if none")

#define SC_AGGREGATE_FIELDS(X)                                                                     \
	X(REGION, "region", SC_UINT32, SC_REQUIRED, "", "row in `/regions`")                       \
	X(THREAD, "thread", SC_UINT32, SC_REQUIRED, "",                                            \
	  "thread lane: row of `/process<N>/lanes/threads`")                                       \
	X(CALLS, "calls", SC_UINT64, SC_REQUIRED, "",                                              \
	  "calls of the region on the lane that were not stored in `/events`")                     \
	X(TOTAL_NS, "total_ns", SC_UINT64, SC_REQUIRED, "ns",                                      \
	  "sum of the durations of those of them made while no call of the region was open on "    \
	  "the lane, ns")                                                                          \
	X(TOTAL_ALL_NS, "total_all_ns", SC_UINT64, SC_REQUIRED, "ns",                              \
	  "sum of their durations, ns")                                                            \
	X(SELF_NS, "self_ns", SC_UINT64, SC_REQUIRED, "ns",                                        \
	  "their durations less those of every call they made, stored or not, ns")                 \
	X(MIN_NS, "min_ns", SC_UINT64, SC_REQUIRED, "ns", "shortest of them, ns")                  \
	X(MAX_NS, "max_ns", SC_UINT64, SC_REQUIRED, "ns", "longest of them, ns")

#define SC_SAMPLE_FIELDS(X)                                                                        \
	X(TIME, "time", SC_UINT64, SC_REQUIRED, "relative ns",                                     \
	  "when the thread's CPU-time timer fired, relative ns")                                   \
	X(THREAD, "thread", SC_UINT32, SC_REQUIRED, "",                                            \
	  "thread lane: row of `/process<N>/lanes/threads`")                                       \
	X(REGION, "region", SC_UINT32, SC_REQUIRED, "",                                            \
	  "row in `/regions` of the innermost recorded call open on the lane, `4294967295` when "  \
	  "none was")                                                                              \
	X(STACK, "stack", SC_STRING, SC_REQUIRED, "",                                              \
	  "the functions on the thread's stack, outermost first, separated by `;`: instrumented "  \
	  "or not, demangled, or `module+0xOFFSET`")

#define SC_CRASH_ATTRS(X)                                                                          \
	X(SIGNAL, "signal", SC_INT64, SC_REQUIRED, "", "the signal number")                        \
	X(LANE, "lane", SC_INT64, SC_REQUIRED, "", "the thread lane it hit")

#define SC_CRASH_FIELDS(X)                                                                         \
	X(ADDRESS, "address", SC_UINT64, SC_REQUIRED, "",                                          \
	  "code addresses of the frames (return addresses for all but the first)")                 \
	X(NAME, "name", SC_STRING, SC_REQUIRED, "",                                                \
	  "the functions they fall in, demangled, or `module+0xOFFSET`")

/*
 * The groups, as X(path, description): the paragraph that opens the
 * group's section of docs/SCHEMA.md. The writer and the merge write each
 * description as the group's "description" attribute, and each field's
 * description (and unit) as its dataset's "description" (and "unit").
 */
#define SC_GROUP_DOCS(X)                                                                           \
	X("/", "A scope profile, HDF5 schema 3: the calls of a run's processes and what is known " \
	       "of the run; every group and dataset says what it holds in its `description` "      \
	       "attribute, and a dataset whose values have a unit names it in its `unit` "         \
	       "attribute.")                                                                       \
	X("/metadata", "A group with attributes only, describing the run as a whole.")             \
	X("/processes", "Columns, one row per profiled process.")                                  \
	X("/regions", "Columns, one row per region; the row index is the region id.")              \
	X("/pairs", "Columns, one row per (process, region) that has at least one call.")          \
	X("/events",                                                                               \
	  "Columns, one row per call. The calls of a pair are contiguous: **pair *p*'s "           \
	  "calls are the rows `[first[p], first[p] + count[p])`**, ordered by start "              \
	  "time. Ranges of different pairs do not overlap.")                                       \
	X("/process<N>", "Auxiliary tables of one process; `N` is the process's row in "           \
			 "`/processes` (`/process0` for the first).")                              \
	X("/process<N>/lanes", "The process's lanes: the threads it ran, in `threads`, and its "   \
			       "task lanes, in `tasks`.")                                          \
	X("/process<N>/lanes/threads", "Columns, one row per thread of the process; the row "      \
				       "index is the thread lane that `/events/thread` refers "    \
				       "to.")                                                      \
	X("/process<N>/lanes/tasks",                                                               \
	  "Columns, one row per task lane of the process: a logical task that may run on one "     \
	  "thread after another (a task of the program's, begun with `scope_task_begin`, or an "   \
	  "OpenMP task). Task lane `k` (the `/events/task` value `k`, `k >= 1`) is row `k - 1`. "  \
	  "The table has no rows when the process had no task; files of older writers do not "     \
	  "have it.")                                                                              \
	X("/process<N>/modules",                                                                   \
	  "Columns, one row per executable or shared object mapped into the process.")             \
	X("/process<N>/aggregates",                                                                \
	  "Present in profiles recorded with filters: columns, one row per (region, thread lane) " \
	  "of the process with calls that the filters kept out of `/events`, and their sums, "     \
	  "which `/pairs` includes.")                                                              \
	X("/process<N>/samples",                                                                   \
	  "Present in profiles recorded with `SCOPE_SAMPLE` (`scope-run --sample`): columns, one " \
	  "row per sample, each taken when a thread of the process had used another period of "    \
	  "CPU time (`1 / sample_hz` s).")                                                         \
	X("/process<N>/crash", "Present when a fatal signal ended the process: the stack of the "  \
			       "thread it hit, innermost frame first, up to 256 frames.")          \
	X("/process<N>/heap", "Present when the process ran with its heap tracked "                \
			      "(`SCOPE_HEAP=1`): one row per region that allocated, with what "    \
			      "its blocks came to.")                                               \
	X("/process<N>/heap_sites", "With `heap`: the call sites (up to four per region) that "    \
				    "allocated most of each region's bytes.")

/*
 * Values of a column that mean something of their own, as X(group, column,
 * attribute, text); each is an attribute of the column's dataset. bit_N:
 * what bit N means (docs/SCHEMA.md's table of the column's bits); values:
 * the values a string column takes, comma-separated.
 */
#define SC_ENUM_DOCS(X)                                                                            \
	X("/events", "flags", "bit_0",                                                             \
	  "the call never returned (the program exited, crashed or was killed inside it, or its "  \
	  "thread ended inside it); its `duration` runs to the end of its thread, or of the "      \
	  "process")                                                                               \
	X("/regions", "kind", "values", "function, mpi, wait, io, user, openmp")

#define SC_HEAP_ATTRS(X)                                                                           \
	X(PEAK_LIVE, "peak_live_bytes", SC_INT64, SC_REQUIRED, "bytes",                            \
	  "the most heap bytes live at once in the process, bytes")                                \
	X(LIVE_AT_EXIT, "live_bytes_at_exit", SC_INT64, SC_REQUIRED, "bytes",                      \
	  "heap bytes not freed when recording stopped (at exit: leaks), bytes")                   \
	X(UNTRACKED, "untracked", SC_INT64, SC_REQUIRED, "",                                       \
	  "allocator calls not counted (made inside another's tracking on its thread)")

#define SC_HEAP_FIELDS(X)                                                                          \
	X(REGION, "region", SC_STRING, SC_REQUIRED, "",                                            \
	  "the region, as `/regions` names it; `\"\"` outside any recorded call")                  \
	X(ALLOCATIONS, "allocations", SC_UINT64, SC_REQUIRED, "", "blocks allocated")              \
	X(FREES, "frees", SC_UINT64, SC_REQUIRED, "", "of them, freed")                            \
	X(BYTES, "bytes_allocated", SC_UINT64, SC_REQUIRED, "bytes",                               \
	  "bytes allocated in all, bytes")                                                         \
	X(PEAK, "peak_live_bytes", SC_UINT64, SC_REQUIRED, "bytes",                                \
	  "the most of its bytes live at once, bytes")                                             \
	X(LEAKED, "live_bytes_at_exit", SC_UINT64, SC_REQUIRED, "bytes",                           \
	  "its bytes not freed when recording stopped, bytes")

#define SC_HEAP_SITE_FIELDS(X)                                                                     \
	X(REGION, "region", SC_STRING, SC_REQUIRED, "", "the region, as in `heap`")                \
	X(BYTES, "bytes", SC_UINT64, SC_REQUIRED, "bytes",                                         \
	  "bytes the call site allocated in the region, bytes")                                    \
	X(ALLOCATIONS, "allocations", SC_UINT64, SC_REQUIRED, "", "blocks it allocated there")     \
	X(ADDRESS, "address", SC_UINT64, SC_REQUIRED, "",                                          \
	  "the return address of the allocating call")                                             \
	X(FUNCTION, "function", SC_STRING, SC_REQUIRED, "",                                        \
	  "the function that made the call, demangled, or `module+0xOFFSET`")                      \
	X(FILE, "file", SC_STRING, SC_REQUIRED, "", "its source file, or `\"\"`")                  \
	X(LINE, "line", SC_UINT32, SC_REQUIRED, "", "the line of the call, 0 = unknown")

/* clang-format off */
#define SC_ENUM_(prefix, id) SC_##prefix##_##id,
#define SC_ENUM_ROOT(id, ...)	  SC_ENUM_(ROOT, id)
#define SC_ENUM_META(id, ...)	  SC_ENUM_(META, id)
#define SC_ENUM_PROC(id, ...)	  SC_ENUM_(PROC, id)
#define SC_ENUM_REG(id, ...)	  SC_ENUM_(REG, id)
#define SC_ENUM_PAIR(id, ...)	  SC_ENUM_(PAIR, id)
#define SC_ENUM_EV(id, ...)	  SC_ENUM_(EV, id)
#define SC_ENUM_THR(id, ...)	  SC_ENUM_(THR, id)
#define SC_ENUM_TASK(id, ...)	  SC_ENUM_(TASK, id)
#define SC_ENUM_MOD(id, ...)	  SC_ENUM_(MOD, id)
#define SC_ENUM_AGG(id, ...)	  SC_ENUM_(AGG, id)
#define SC_ENUM_SMP(id, ...)	  SC_ENUM_(SMP, id)
#define SC_ENUM_CRASHA(id, ...)	  SC_ENUM_(CRASHA, id)
#define SC_ENUM_CRASH(id, ...)	  SC_ENUM_(CRASH, id)
#define SC_ENUM_HEAPA(id, ...)	  SC_ENUM_(HEAPA, id)
#define SC_ENUM_HEAP(id, ...)	  SC_ENUM_(HEAP, id)
#define SC_ENUM_SITE(id, ...)	  SC_ENUM_(SITE, id)
enum sc_root { SC_ROOT_FIELDS(SC_ENUM_ROOT) SC_NROOT };
enum sc_meta { SC_METADATA_FIELDS(SC_ENUM_META) SC_NMETA };
enum sc_proc { SC_PROCESS_FIELDS(SC_ENUM_PROC) SC_NPROC };
enum sc_reg { SC_REGION_FIELDS(SC_ENUM_REG) SC_NREG };
enum sc_pair { SC_PAIR_FIELDS(SC_ENUM_PAIR) SC_NPAIR };
enum sc_ev { SC_EVENT_FIELDS(SC_ENUM_EV) SC_NEV };
enum sc_thr { SC_THREAD_FIELDS(SC_ENUM_THR) SC_NTHR };
enum sc_task { SC_TASK_FIELDS(SC_ENUM_TASK) SC_NTASK };
enum sc_mod { SC_MODULE_FIELDS(SC_ENUM_MOD) SC_NMOD };
enum sc_agg { SC_AGGREGATE_FIELDS(SC_ENUM_AGG) SC_NAGG };
enum sc_smp { SC_SAMPLE_FIELDS(SC_ENUM_SMP) SC_NSMP };
enum sc_crasha { SC_CRASH_ATTRS(SC_ENUM_CRASHA) SC_NCRASHA };
enum sc_crash { SC_CRASH_FIELDS(SC_ENUM_CRASH) SC_NCRASH };
enum sc_heapa { SC_HEAP_ATTRS(SC_ENUM_HEAPA) SC_NHEAPA };
enum sc_heap { SC_HEAP_FIELDS(SC_ENUM_HEAP) SC_NHEAP };
enum sc_site { SC_HEAP_SITE_FIELDS(SC_ENUM_SITE) SC_NSITE };
/* clang-format on */

extern const struct sc_field sc_root[SC_NROOT], sc_metadata[SC_NMETA], sc_processes[SC_NPROC],
	sc_regions[SC_NREG], sc_pairs[SC_NPAIR], sc_events[SC_NEV], sc_threads[SC_NTHR],
	sc_tasks[SC_NTASK], sc_modules[SC_NMOD], sc_aggregates[SC_NAGG], sc_samples[SC_NSMP],
	sc_crash_attrs[SC_NCRASHA], sc_crash[SC_NCRASH], sc_heap_attrs[SC_NHEAPA],
	sc_heap[SC_NHEAP], sc_heap_sites[SC_NSITE];

/* The name of a field: SC_EV(START_DELTA) is "start_delta". */
#define SC_ROOT(id) (sc_root[SC_ROOT_##id].name)
#define SC_META(id) (sc_metadata[SC_META_##id].name)
#define SC_PROC(id) (sc_processes[SC_PROC_##id].name)
#define SC_REG(id)  (sc_regions[SC_REG_##id].name)
#define SC_PAIR(id) (sc_pairs[SC_PAIR_##id].name)
#define SC_EV(id)   (sc_events[SC_EV_##id].name)
#define SC_THR(id)  (sc_threads[SC_THR_##id].name)
#define SC_TASK(id) (sc_tasks[SC_TASK_##id].name)
#define SC_MOD(id)  (sc_modules[SC_MOD_##id].name)
#define SC_AGG(id)  (sc_aggregates[SC_AGG_##id].name)
#define SC_SMP(id)  (sc_samples[SC_SMP_##id].name)

/* A group of the table, for those who walk all of it (the schema test). */
struct sc_group {
	const char *path; /* "/events", "/process<N>/modules" */
	int attributes;	  /* fields are attributes of the group, else its columns */
	const struct sc_field *fields;
	size_t n;
};

extern const struct sc_group sc_groups[];
extern const size_t sc_ngroups;

/* A group's description (SC_GROUP_DOCS). */
struct sc_group_doc {
	const char *path, *what;
};

/* An attribute that explains values of a column (SC_ENUM_DOCS). */
struct sc_enum_doc {
	const char *group, *column, *attribute, *text;
};

extern const struct sc_group_doc sc_group_docs[];
extern const size_t sc_ngroup_docs;
extern const struct sc_enum_doc sc_enum_docs[];
extern const size_t sc_nenum_docs;

/* The names of the attributes that describe a group or dataset. */
#define SC_DESCRIPTION "description"
#define SC_UNIT	       "unit"

/* "int64", "unsigned, narrowest", ...: the type as docs/SCHEMA.md spells it. */
const char *sc_type_name(enum sc_type t);

#endif
