/* SPDX-License-Identifier: MIT */
/* An OMPT tool: OpenMP explicit tasks as task lanes, parallel regions as regions of kind openmp. */
#define _GNU_SOURCE
#include "state.h"

#include <stddef.h>

/*
 * The few declarations of the OpenMP 5.0 tools interface (omp-tools.h)
 * this file uses, written out so the library builds and links without any
 * OpenMP runtime's headers: the interface is a binary one, its values fixed
 * by the specification. A runtime that has OMPT (LLVM's libomp) looks up
 * ompt_start_tool in the process when it starts; GCC's libgomp has no OMPT
 * and never calls it, so its programs are recorded as threads only.
 */
typedef union ompt_data_t {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef void (*ompt_callback_t)(void);
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num,
				 ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);

typedef struct ompt_start_tool_result_t {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum {
	OMPT_CALLBACK_PARALLEL_BEGIN = 3,
	OMPT_CALLBACK_PARALLEL_END = 4,
	OMPT_CALLBACK_TASK_CREATE = 5,
	OMPT_CALLBACK_TASK_SCHEDULE = 6,
};
enum { OMPT_SET_NEVER = 1 }; /* set_callback results above it: registered */
enum { OMPT_TASK_EXPLICIT = 0x4 };
enum {
	OMPT_TASK_COMPLETE = 1,
	OMPT_TASK_CANCEL = 3,
	OMPT_TASK_LATE_FULFILL = 6,
};

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version);

/* OpenMP's own number for each explicit task: the order they were created in. */
static uint64_t created;

/* The region "omp parallel" (kind openmp), as named.c keys named regions;
 * NULL when it has none. */
static SCOPE_NOINST void *parallel_key(void)
{
	uint32_t slot = scope_name_slot("omp parallel", SCOPE_NAME_OPENMP);

	if (slot == UINT32_MAX || SCOPE_REC_NAMED + slot >= SCOPE_REC_CODE)
		return NULL;
	return (void *)(uintptr_t)(SCOPE_REC_NAMED + slot);
}

/* A parallel region is a call on the thread that starts it, around the
 * calls its own share of the work makes. */
static SCOPE_NOINST void on_parallel_begin(ompt_data_t *encountering, const void *frame,
					   ompt_data_t *parallel, unsigned int requested, int flags,
					   const void *codeptr)
{
	void *key = parallel_key();

	(void)encountering, (void)frame, (void)requested, (void)flags, (void)codeptr;
	parallel->value = (uint64_t)(uintptr_t)key;
	if (key)
		__cyg_profile_func_enter(key, NULL);
}

static SCOPE_NOINST void on_parallel_end(ompt_data_t *parallel, ompt_data_t *encountering,
					 int flags, const void *codeptr)
{
	(void)encountering, (void)flags, (void)codeptr;
	if (parallel->value)
		__cyg_profile_func_exit((void *)(uintptr_t)parallel->value, NULL);
}

/* An explicit task gets a task lane when it is created; the runtime keeps
 * the lane in the task's data. Implicit and initial tasks keep 0: a thread
 * running one runs no task lane. */
static SCOPE_NOINST void on_task_create(ompt_data_t *encountering, const void *frame,
					ompt_data_t *task, int flags, int has_dependences,
					const void *codeptr)
{
	(void)encountering, (void)frame, (void)has_dependences, (void)codeptr;
	task->value = 0;
	if (flags & OMPT_TASK_EXPLICIT)
		task->value = scope_task_new(__atomic_add_fetch(&created, 1, __ATOMIC_RELAXED),
					     "omp task");
}

/* The calling thread leaves prior (suspended, or done when its status
 * says so) and runs next from now on, wherever prior ran before. */
static SCOPE_NOINST void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	uint32_t lane = next ? (uint32_t)next->value : 0;

	if (prior && prior->value &&
	    (status == OMPT_TASK_COMPLETE || status == OMPT_TASK_CANCEL ||
	     status == OMPT_TASK_LATE_FULFILL))
		scope_task_ended((uint32_t)prior->value);
	if (lane != scope_tls.task)
		scope_task_run(lane);
}

static SCOPE_NOINST int set(ompt_set_callback_t set_callback, int event, void *fn)
{
	return set_callback(event, (ompt_callback_t)fn) > OMPT_SET_NEVER;
}

static SCOPE_NOINST int ompt_initialize(ompt_function_lookup_t lookup, int device,
					ompt_data_t *tool)
{
	ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	int tasks, parallel;

	(void)device, (void)tool;
	if (!set_callback)
		return 0;
	tasks = set(set_callback, OMPT_CALLBACK_TASK_CREATE, on_task_create) &&
		set(set_callback, OMPT_CALLBACK_TASK_SCHEDULE, on_task_schedule);
	parallel = set(set_callback, OMPT_CALLBACK_PARALLEL_BEGIN, on_parallel_begin) &&
		   set(set_callback, OMPT_CALLBACK_PARALLEL_END, on_parallel_end);
	if (!tasks)
		scope_log("the OpenMP runtime does not report its tasks: they are recorded as "
			  "calls of their threads, with no task lanes");
	return tasks || parallel;
}

static SCOPE_NOINST void ompt_finalize(ompt_data_t *tool)
{
	(void)tool;
}

/* Called by an OpenMP runtime with OMPT as it starts; NULL (no tool) when
 * this process is not recorded, so the runtime runs without callbacks. */
SCOPE_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
						       const char *runtime_version)
{
	static ompt_start_tool_result_t tool = {ompt_initialize, ompt_finalize, {0}};

	(void)omp_version, (void)runtime_version;
	if (!scope_proc.initialized)
		scope_init();
	return scope_proc.hdr && !scope_stopped() ? &tool : NULL;
}
