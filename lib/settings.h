/* SPDX-License-Identifier: MIT */
/* Every SCOPE_* environment variable that a scope program reads, in one table. */
#ifndef SCOPE_LIB_SETTINGS_H
#define SCOPE_LIB_SETTINGS_H

/*
 * X(name, values): the variable and what it accepts, as the one line about
 * a wrong name or value says it. The library warns about a SCOPE_* variable
 * that is not here (a likely typo) and names the nearest one; a variable a
 * program starts reading goes here first. man/scope.7 and the programs' man
 * pages document the same names: the test h-settings-docs compares them.
 */
#define SCOPE_SETTINGS(X)                                                                          \
	X("SCOPE_OUTPUT", "a file name")                                                           \
	X("SCOPE_COMPRESSION", "auto, none, gzip or gzip:1..9")                                    \
	X("SCOPE_CHUNK_SIZE", "1 to 4194304 elements")                                             \
	X("SCOPE_TMPDIR", "a folder")                                                              \
	X("SCOPE_ARENA_DIR", "a folder")                                                           \
	X("SCOPE_WRITER", "the path of scope-writer")                                              \
	X("SCOPE_SYMBOLIZE", "0 or 1")                                                             \
	X("SCOPE_CLOCK", "tsc or monotonic")                                                       \
	X("SCOPE_KEEP_ARENA", "0 or 1")                                                            \
	X("SCOPE_BUFFER_SIZE", "4K to 64M")                                                        \
	X("SCOPE_ARENA_MAX", "a size, as 64G")                                                     \
	X("SCOPE_LIBCALLS", "none, wait, io or all")                                               \
	X("SCOPE_DEBUG", "0 or 1")                                                                 \
	X("SCOPE_OFF", "0 or 1")                                                                   \
	X("SCOPE_HEAP", "0 or 1")                                                                  \
	X("SCOPE_START_PAUSED", "0 or 1")                                                          \
	X("SCOPE_COUNTERS",                                                                        \
	  "perf::TASK-CLOCK, perf::PAGE-FAULTS, ... or PAPI events, comma-separated")              \
	X("SCOPE_COUNTER_REGIONS", "an extended regular expression")                               \
	X("SCOPE_ONLY", "regular expressions, one per line")                                       \
	X("SCOPE_NOT", "regular expressions, one per line")                                        \
	X("SCOPE_NOT_SUBTREE", "0 or 1")                                                           \
	X("SCOPE_DEPTH", "1 to 65535")                                                             \
	X("SCOPE_MIN_DURATION", "a time: ns, or a number with ns, us, ms or s")                    \
	X("SCOPE_SAMPLE", "0, or 1 to 100000 samples a second")                                    \
	X("SCOPE_PROGRESS", "off, or the seconds of work before progress shows")                   \
	X("SCOPE_WRITE", "alongside or exit")                                                      \
	X("SCOPE_PRELOAD_LIB", "the path of libscope_preload.so")                                  \
	X("SCOPE_WRITER_WINDOW", "calls grouped in memory at once")                                \
	X("SCOPE_WRITER_ALONGSIDE", "0 to group each process's calls only at its end")             \
	X("SCOPE_WRITER_MERGE", "0 to group a threaded process lane after lane, in two passes")    \
	X("SCOPE_WRITER_BATCH", "processes the run's writer writes into one part (1 to 64)")       \
	X("SCOPE_WRITER_TIMES", "set to time the writer's phases")                                 \
	X("SCOPE_JOB_ID", "a name shared by the ranks of one MPI job")                             \
	X("SCOPE_RUN_WRITER", "set by scope-run and the library")                                  \
	X("SCOPE_ROOT", "set by the library")                                                      \
	X("SCOPE_PARTS", "set by scope-run")

#endif
