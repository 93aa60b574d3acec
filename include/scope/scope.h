/* SPDX-License-Identifier: MIT */
/* The API a program calls to tell the scope profiler more: its own regions, its tasks, when to
 * record. */
#ifndef SCOPE_SCOPE_H
#define SCOPE_SCOPE_H

/*
 * Link with libscope (pkg-config scope, or CMake's scope::scope). Its
 * functions do nothing: a program runs unchanged without the profiler.
 * Under the profiler (scope-run, or LD_PRELOAD=libscope_preload.so) the
 * preloaded library's functions of the same names take their place, the
 * dynamic linker finding them first.
 *
 * Every function may be called from any thread at any time, before or
 * after recording starts or stops; a call the profiler cannot honour (not
 * recording, out of room for names) does nothing.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCOPE_API_VERSION 1

/*
 * A region of the program's own, recorded like a call of a function named
 * name (kind "user" in the profile): begin and end on the same thread, and
 * it nests with the instrumented calls around and inside it. end names
 * the region to close; a region still open when the function that began
 * it returns ends there. Names are compared by content (up to 119 bytes),
 * so a name built in a reused buffer is fine.
 */
void scope_region_begin(const char *name);
void scope_region_end(const char *name);

/*
 * Task lanes: a logical task (a job, a coroutine, a request) whose calls
 * are recorded on a lane of its own, whichever threads run it in turn.
 * scope_task_begin starts task task_id (any id the program chooses; an id
 * begun again starts a new task lane) and runs it on the calling thread;
 * scope_task_switch(task_id) makes it the calling thread's task from now
 * on (0: none), so a task suspended on one thread resumes on another;
 * scope_task_end ends it (the calling thread then runs no task, if it ran
 * this one). A call belongs to the task its thread ran when it started.
 */
void scope_task_begin(uint64_t task_id, const char *name);
void scope_task_switch(uint64_t task_id);
void scope_task_end(uint64_t task_id);

/*
 * Recording on the calling thread, or in the whole process, pauses and
 * resumes. Calls made while paused are not recorded; calls open at the
 * pause go on and end when they return. scope_resume_process does not
 * undo a thread's own scope_pause. SCOPE_START_PAUSED=1 (scope-run
 * --paused) starts every process of the run paused, as if it had called
 * scope_pause_process first.
 */
void scope_pause(void);
void scope_resume(void);
void scope_pause_process(void);
void scope_resume_process(void);

#ifdef __cplusplus
}

namespace scope
{
/* A region for the lifetime of a scope: { scope::region r("solve"); ... }
 * (not itself instrumented: the region is the only record of it). */
class region
{
      public:
	__attribute__((no_instrument_function)) explicit region(const char *name) : name_(name)
	{
		scope_region_begin(name_);
	}
	__attribute__((no_instrument_function)) ~region()
	{
		scope_region_end(name_);
	}
	region(const region &) = delete;
	region &operator=(const region &) = delete;

      private:
	const char *name_;
};
} // namespace scope
#endif

#endif
