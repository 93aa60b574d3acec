/* SPDX-License-Identifier: MIT */
/* scope-report --tasks: one row per task lane, with its calls, the time threads ran it, and which.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

static const struct column task_cols[] = {
	{"process", "process", CELL_U64, 7, 0, 0, 0},
	{"task", "task", CELL_U64, 6, 0, 0, 0},
	{"id", "id", CELL_U64, 10, 0, 0, 0},
	{"name", "name", CELL_STR, 16, 0, 0, 0},
	{"calls", "calls", CELL_U64, 10, 0, 0, 0},
	{"busy", "busy_ns", CELL_NS, 11, 0, 0, 0},
	{"span", "span_ns", CELL_NS, 11, 0, 0, 0},
	{"nthreads", "nthreads", CELL_U64, 8, 0, 0, 0},
	{"threads", "threads", CELL_STR, 0, 0, 0, 0},
};

/* The calls of each task lane of process i, counts[k] for lane k; the
 * calls of no task in counts[0]. Returns 0, or -1 with the reason in p->err. */
static int count_calls(struct rd_profile *p, size_t i, uint64_t *counts)
{
	size_t ntasks = p->processes[i].ntasks;

	if (!p->has_events)
		return 0;
	for (size_t k = 0; k < p->npairs; k++) {
		struct rd_cursor c;
		struct rd_event e;
		int rc;
		if (p->pairs[k].process != i || !p->pairs[k].count)
			continue;
		if (rd_cursor_open(p, k, RD_TASK, 0, &c) != 0)
			return -1;
		while ((rc = rd_cursor_next(&c, &e)) == 1)
			counts[e.task <= ntasks ? e.task : 0]++;
		rd_cursor_close(&c);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* How many lanes a list "0,2,5" names. */
static uint64_t list_length(const char *s)
{
	uint64_t n = *s ? 1 : 0;

	for (; *s; s++)
		n += *s == ',';
	return n;
}

static int tasks_of_process(struct rd_profile *p, size_t i, struct table *t)
{
	const struct rd_process *pr = &p->processes[i];
	uint64_t *counts = calloc(pr->ntasks + 1, sizeof *counts);

	if (!counts)
		return snprintf(p->err, sizeof p->err, "out of memory"), -1;
	if (count_calls(p, i, counts) != 0) {
		free(counts);
		return -1;
	}
	for (size_t k = 0; k < pr->ntasks; k++) {
		const struct rd_task *tk = &pr->tasks[k];
		table_row(t, (union cell[]){
				     {.u = i},
				     {.u = k + 1},
				     {.u = tk->id},
				     {.s = tk->name},
				     {.u = counts[k + 1]},
				     {.u = tk->busy_ns},
				     {.u = tk->end > tk->start ? tk->end - tk->start : 0},
				     {.u = list_length(tk->threads)},
				     {.s = tk->threads},
			     });
	}
	free(counts);
	return 0;
}

int view_tasks(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	       size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct table t = {out, o->format, task_cols, NCOLS(task_cols), 0};
	int rc = 0;

	if (o->format == FMT_JSON)
		json_doc_begin(out, path, p);
	table_begin(&t, "tasks");
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++)
		if (want_process(o, p, i))
			rc = tasks_of_process(p, i, &t);
	table_end(&t);
	if (o->format == FMT_JSON)
		json_doc_end(out);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}
