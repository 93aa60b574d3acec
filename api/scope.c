/* SPDX-License-Identifier: MIT */
/* libscope.so: the API of include/scope/scope.h doing nothing, for a program run without the
 * profiler. */
#include <scope/scope.h>

/* Under the profiler, libscope_preload.so defines the same functions and,
 * loaded first, is where the program's calls go: these run only without
 * it. Not instrumented, whatever the program's flags. */
#define NOOP __attribute__((no_instrument_function))

NOOP void scope_region_begin(const char *name)
{
	(void)name;
}

NOOP void scope_region_end(const char *name)
{
	(void)name;
}

NOOP void scope_pause(void)
{
}

NOOP void scope_resume(void)
{
}

NOOP void scope_pause_process(void)
{
}

NOOP void scope_resume_process(void)
{
}

NOOP void scope_task_begin(uint64_t task_id, const char *name)
{
	(void)task_id;
	(void)name;
}

NOOP void scope_task_switch(uint64_t task_id)
{
	(void)task_id;
}

NOOP void scope_task_end(uint64_t task_id)
{
	(void)task_id;
}
