/* SPDX-License-Identifier: MIT */
/* A program that uses the API of scope.h: named regions, task lanes, pauses of a thread and of the
 * process. */
#include <scope/scope.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../progs/progs.h"

static volatile unsigned long sink;

NOINLINE void work(void)
{
	sink++;
}

NOINLINE void skipped(void)
{
	sink += 2;
}

/* regions: outer (1) holds inner (3), each holding 2 calls of work; then
 * "step 0" and "step 1" twice each, named from one reused buffer. */
NOINLINE static void regions(void)
{
	char name[32];

	scope_region_begin("outer");
	for (int i = 0; i < 3; i++) {
		scope_region_begin("inner");
		work();
		work();
		scope_region_end("inner");
	}
	scope_region_end("outer");
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "step %d", i % 2);
		scope_region_begin(name);
		work();
		memset(name, 'x', sizeof name - 1);
		snprintf(name, sizeof name, "step %d", i % 2);
		scope_region_end(name);
	}
}

/* pause: 5 calls of work recorded, 7 of skipped not, then 2 of work. */
NOINLINE static void pause_thread(void)
{
	for (int i = 0; i < 5; i++)
		work();
	scope_pause();
	for (int i = 0; i < 7; i++)
		skipped();
	scope_resume();
	for (int i = 0; i < 2; i++)
		work();
}

/* process: a worker calls work 3 times, 4 times while main has paused the
 * process, once after it resumed: 4 recorded (and none of skipped). */
static pthread_barrier_t step;

NOINLINE static void *worker(void *unused)
{
	(void)unused;
	for (int i = 0; i < 3; i++)
		work();
	pthread_barrier_wait(&step); /* main pauses */
	pthread_barrier_wait(&step);
	for (int i = 0; i < 4; i++)
		skipped();
	pthread_barrier_wait(&step); /* main resumes */
	pthread_barrier_wait(&step);
	work();
	return NULL;
}

NOINLINE static void pause_process(void)
{
	pthread_t th;

	pthread_barrier_init(&step, NULL, 2);
	pthread_create(&th, NULL, worker, NULL);
	pthread_barrier_wait(&step);
	scope_pause_process();
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	scope_resume_process();
	pthread_barrier_wait(&step);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&step);
}

/*
 * tasks: task 7 "relay", begun on main, calls task_step 3 times there, 4
 * times on the helper thread that takes it over, 5 times on main again;
 * task 8 "side" calls it twice on the helper, and task 7 begun again
 * ("relay again") once on main. Each thread calls work once outside any
 * task. The barriers order the hand-overs.
 */
NOINLINE void task_step(void)
{
	sink += 3;
}

NOINLINE static void *helper(void *unused)
{
	(void)unused;
	work();
	scope_task_begin(8, "side");
	task_step();
	task_step();
	scope_task_end(8);
	pthread_barrier_wait(&step); /* main has let go of task 7 */
	scope_task_switch(7);
	for (int i = 0; i < 4; i++)
		task_step();
	scope_task_switch(0);
	pthread_barrier_wait(&step);
	return NULL;
}

NOINLINE static void tasks(void)
{
	pthread_t th;

	pthread_barrier_init(&step, NULL, 2);
	pthread_create(&th, NULL, helper, NULL);
	work();
	scope_task_begin(7, "relay");
	for (int i = 0; i < 3; i++)
		task_step();
	scope_task_switch(0);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* the helper has let go of it */
	scope_task_switch(7);
	for (int i = 0; i < 5; i++)
		task_step();
	scope_task_end(7);
	scope_task_begin(7, "relay again");
	task_step();
	scope_task_end(7);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&step);
}

/* started: run paused from the start (SCOPE_START_PAUSED): 3 calls of
 * skipped before the resume, 2 of work after it. */
NOINLINE static void started_paused(void)
{
	for (int i = 0; i < 3; i++)
		skipped();
	scope_resume_process();
	for (int i = 0; i < 2; i++)
		work();
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "regions";

	if (strcmp(what, "regions") == 0)
		regions();
	else if (strcmp(what, "pause") == 0)
		pause_thread();
	else if (strcmp(what, "process") == 0)
		pause_process();
	else if (strcmp(what, "started") == 0)
		started_paused();
	else if (strcmp(what, "tasks") == 0)
		tasks();
	else {
		fprintf(stderr, "api: unknown mode %s\n", what);
		return 2;
	}
	printf("api %s ok\n", what);
	return 0;
}
