/* SPDX-License-Identifier: MIT */
/* scope-report's streamed exports: Chrome trace-event JSON and speedscope JSON. */
#define _GNU_SOURCE
#include "format.h"
#include "report.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- Fast numbers ------------------------------------------------------- */

/* Writes v in decimal at s; returns the end. */
static char *put_u64(char *s, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*s++ = tmp[--n];
	return s;
}

/* ns as microseconds with three decimals: 1234567 -> "1234.567", exact. */
static char *put_us(char *s, uint64_t ns)
{
	uint64_t frac = ns % 1000;
	s = put_u64(s, ns / 1000);
	*s++ = '.';
	*s++ = (char)('0' + frac / 100);
	*s++ = (char)('0' + frac / 10 % 10);
	*s++ = (char)('0' + frac % 10);
	return s;
}

/* ---- Chrome trace events ------------------------------------------------ */

/* A piece of text and its length. */
struct piece {
	char *s;
	size_t len;
};

/* What an event of a region starts and ends with, made once. */
struct chrome_region {
	struct piece head;    /* `,\n{"ph":"X","cat":"function","name":"main"` */
	struct piece tail[2]; /* `,"args":{"file":"a.c","line":12}}`; [1]: unfinished */
};

struct chrome {
	struct call_filter f;
	FILE *out;
	struct chrome_region *regions;
	int64_t pid;   /* of the process being walked */
	int64_t *tids; /* of its lanes */
	int lane_ids;  /* tids are lane indices */
	size_t ntasks; /* its task lanes */
	int hosts;     /* the processes ran on more than one host */
};

/* The track of task lane k: above any OS thread id (at most 2^22 on
 * Linux) and any lane index, so it never meets a thread's. */
#define TASK_TRACK(k) ((int64_t)(UINT64_C(1) << 22) + (int64_t)(k))

/* Whether every process has its own OS pid (else processes are numbered by row). */
static int pids_unique(const struct rd_profile *p)
{
	for (size_t i = 0; i < p->nprocesses; i++)
		for (size_t j = i + 1; j < p->nprocesses; j++)
			if (p->processes[i].pid == p->processes[j].pid)
				return 0;
	return 1;
}

static int tids_unique(const struct rd_process *pr)
{
	for (size_t i = 0; i < pr->nlanes; i++)
		for (size_t j = i + 1; j < pr->nlanes; j++)
			if (pr->lanes[i].tid == pr->lanes[j].tid)
				return 0;
	return 1;
}

static int chrome_enter(void *ctx, struct wk_lane *l)
{
	struct chrome *c = ctx;
	const struct wk_frame *f = &l->stack[l->n - 1];
	const struct chrome_region *r = &c->regions[f->region];
	const struct piece *tail = &r->tail[(f->flags & RD_FLAG_UNFINISHED) != 0];
	char buf[160], *s = buf;

	if (!filter_call(&c->f, l->process, f))
		return 0;
	s = stpcpy(s, ",\"pid\":");
	if (c->pid < 0)
		*s++ = '-';
	s = put_u64(s, c->pid < 0 ? -(uint64_t)c->pid : (uint64_t)c->pid);
	s = stpcpy(s, ",\"tid\":");
	/* a task's calls are on its own track, whichever thread ran them */
	s = put_u64(s, f->task && f->task <= c->ntasks ? (uint64_t)TASK_TRACK(f->task)
						       : (uint64_t)c->tids[l->lane]);
	s = stpcpy(s, ",\"ts\":");
	s = put_us(s, filter_at(&c->f, l->process, f->start));
	s = stpcpy(s, ",\"dur\":");
	s = put_us(s, f->duration);
	fwrite(r->head.s, 1, r->head.len, c->out);
	fwrite(buf, 1, (size_t)(s - buf), c->out);
	fwrite(tail->s, 1, tail->len, c->out);
	return 0;
}

/* One region's head and tails; returns 0, or -1 when out of memory. */
static int chrome_region(struct chrome_region *cr, const char *name, const struct rd_region *r)
{
	FILE *m = open_memstream(&cr->head.s, &cr->head.len);

	if (!m)
		return -1;
	fputs(",\n{\"ph\":\"X\",\"cat\":\"function\",\"name\":", m);
	json_string(m, name);
	if (fclose(m) != 0)
		return -1;
	for (int open = 0; open < 2; open++) {
		int where = *r->file || r->line;
		if (!(m = open_memstream(&cr->tail[open].s, &cr->tail[open].len)))
			return -1;
		if (where || open)
			fputs(",\"args\":{", m);
		if (where) {
			fputs("\"file\":", m);
			json_string(m, r->file);
			fprintf(m, ",\"line\":%llu", (unsigned long long)r->line);
		}
		if (open)
			fputs(where ? ",\"unfinished\":true" : "\"unfinished\":true", m);
		fputs(where || open ? "}}" : "}", m);
		if (fclose(m) != 0)
			return -1;
	}
	return 0;
}

/* Every region's pieces; NULL when out of memory. */
static struct chrome_region *chrome_regions(const struct options *o, const struct rd_profile *p)
{
	struct chrome_region *cr = calloc(p->nregions + 1, sizeof *cr);

	for (size_t i = 0; cr && i < p->nregions; i++)
		if (chrome_region(&cr[i], region_name(o, 0, i), &p->regions[i]) != 0)
			return NULL;
	return cr;
}

static void chrome_regions_free(struct chrome_region *cr, size_t n)
{
	for (size_t i = 0; cr && i < n; i++) {
		free(cr[i].head.s);
		free(cr[i].tail[0].s);
		free(cr[i].tail[1].s);
	}
	free(cr);
}

static void chrome_meta(FILE *out, const char *what, int64_t pid, int64_t tid, const char *name,
			int first)
{
	fprintf(out,
		"%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":",
		first ? "" : ",\n", what, (long long)pid, (long long)tid);
	json_string(out, name);
	fputs("}}", out);
}

/* A track per task lane, named and listed after the threads. */
static int chrome_tasks(struct chrome *c, const struct rd_process *pr)
{
	c->ntasks = pr->ntasks;
	for (size_t k = 0; k < pr->ntasks; k++) {
		const struct rd_task *t = &pr->tasks[k];
		char *name = NULL;
		if (asprintf(&name, "task %zu%s%s (id %llu)", k + 1, *t->name ? ": " : "", t->name,
			     (unsigned long long)t->id) < 0)
			return -1;
		chrome_meta(c->out, "thread_name", c->pid, TASK_TRACK(k + 1), name, 0);
		free(name);
		fprintf(c->out,
			",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%lld,"
			"\"tid\":%lld,\"args\":{\"sort_index\":%lld}}",
			(long long)c->pid, (long long)TASK_TRACK(k + 1),
			(long long)TASK_TRACK(k + 1));
	}
	return 0;
}

/* The process's name and its lanes' names, then its calls. */
static int chrome_process(struct chrome *c, struct rd_profile *p, size_t i, int pid_ids, int first)
{
	const struct rd_process *pr = &p->processes[i];
	char *label = NULL, *exe = strdup(pr->executable), rank[40] = "", pid[40] = "";
	int rc, on = c->hosts && *pr->host;

	c->pid = pid_ids ? pr->pid : (int64_t)i;
	c->lane_ids = !tids_unique(pr);
	c->tids = calloc(pr->nlanes + 1, sizeof *c->tids);
	if (pr->rank >= 0)
		snprintf(rank, sizeof rank, " rank %lld", (long long)pr->rank);
	/* Viewers show the pid beside the name already when it is the OS's;
	 * when process rows stand in for pids, the name carries the real one. */
	if (!pid_ids)
		snprintf(pid, sizeof pid, " (pid %lld)", (long long)pr->pid);
	if (!exe || !c->tids ||
	    asprintf(&label, "%s%s%s%s%s", basename(exe), rank, on ? " on " : "",
		     on ? pr->host : "", pid) < 0) {
		free(exe);
		free(c->tids);
		snprintf(p->err, sizeof p->err, "out of memory");
		return -1;
	}
	chrome_meta(c->out, "process_name", c->pid, 0, label, first);
	if (pr->rank >= 0) /* viewers list the ranks in order */
		fprintf(c->out,
			",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%lld,"
			"\"tid\":0,\"args\":{\"sort_index\":%lld}}",
			(long long)c->pid, (long long)pr->rank);
	for (size_t k = 0; k < pr->nlanes; k++) {
		c->tids[k] = c->lane_ids ? (int64_t)k : (int64_t)pr->lanes[k].tid;
		if (c->f.o->thread < 0 || (uint64_t)c->f.o->thread == k)
			chrome_meta(c->out, "thread_name", c->pid, c->tids[k], pr->lanes[k].name,
				    0);
	}
	if (chrome_tasks(c, pr) != 0) {
		free(label);
		free(exe);
		free(c->tids);
		snprintf(p->err, sizeof p->err, "out of memory");
		return -1;
	}
	rc = wk_process(p, i, c->f.o->thread,
			&(struct wk_visitor){.ctx = c, .enter = chrome_enter, .tasks = 1});
	free(label);
	free(exe);
	free(c->tids);
	return rc == 0 ? 0 : -1;
}

int view_chrome(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct chrome c = {.out = out};
	int pid_ids = pids_unique(p), rc = 0, first = 1;

	for (size_t i = 1; i < p->nprocesses; i++)
		if (strcmp(p->processes[i].host, p->processes[0].host) != 0)
			c.hosts = 1;

	if (filter_init(&c.f, o, 0, p) != 0 || !(c.regions = chrome_regions(o, p))) {
		filter_free(&c.f);
		snprintf(err, cap, "%s: out of memory", path);
		return -1;
	}
	fputs("{\"traceEvents\":[\n", out);
	for (size_t i = 0; i < p->nprocesses && rc == 0; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		rc = chrome_process(&c, p, i, pid_ids, first);
		first = 0;
	}
	fprintf(out,
		"\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"scope-report %s\","
		"\"profile\":",
		SCOPE_VERSION);
	json_string(out, path);
	fputs("}}\n", out);
	chrome_regions_free(c.regions, p->nregions);
	filter_free(&c.f);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

/* ---- speedscope --------------------------------------------------------- */

/*
 * speedscope wants one profile per lane, each a list of open and close
 * events, but the walk interleaves lanes. Each lane's events are buffered
 * and appended, a block at a time, to one temporary spool file; at the end
 * every lane's blocks are copied out in order. Memory is a buffer per lane
 * and a list of blocks, whatever the number of calls.
 */
#define SPOOL_BUF (16u << 10)

struct block {
	off_t off;
	size_t len;
};

/* A call open on a task lane's own stack: its region and end. */
struct open_call {
	uint64_t region, end;
};

struct spool_lane {
	char *buf;
	size_t len, bufcap; /* the buffer grows to SPOOL_BUF: most task lanes are small */
	struct block *blocks;
	size_t nblocks, cap;
	uint64_t first_at, last_at; /* ns since the origin */
	uint64_t events;
	/* A task lane's calls come from several threads' walks, each closing
	 * its calls late (when its own next call starts): a task lane keeps
	 * its own stack and closes a call before the next one that starts
	 * after its end. */
	struct open_call *open;
	size_t nopen, opencap;
};

struct speedscope {
	struct call_filter f;
	FILE *spool;
	off_t spool_end;
	struct spool_lane *lanes; /* all lanes of all processes, process by process: the
				     thread lanes, then the task lanes */
	size_t *base;		  /* first lane of each process in lanes */
	int oom;
};

static int spool_flush(struct speedscope *s, struct spool_lane *l)
{
	if (!l->len)
		return 0;
	if (l->nblocks == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct block *b = realloc(l->blocks, cap * sizeof *b);
		if (!b)
			return -1;
		l->blocks = b;
		l->cap = cap;
	}
	if (fwrite(l->buf, 1, l->len, s->spool) != l->len)
		return -1;
	l->blocks[l->nblocks++] = (struct block){s->spool_end, l->len};
	s->spool_end += (off_t)l->len;
	l->len = 0;
	return 0;
}

/* Appends one event, `{"type":"O","frame":7,"at":1234}`, to a lane. */
static int spool_event(struct speedscope *s, struct spool_lane *l, char type, uint64_t region,
		       uint64_t at)
{
	char ev[80], *p = ev;

	if (l->len + sizeof ev > l->bufcap && l->bufcap < SPOOL_BUF) {
		size_t cap = l->bufcap ? 2 * l->bufcap : 512;
		char *grown = realloc(l->buf, cap);
		if (!grown)
			return -1;
		l->buf = grown;
		l->bufcap = cap;
	}
	if (at < l->last_at) /* keep "at" non-decreasing, as speedscope demands */
		at = l->last_at;
	if (!l->events++)
		l->first_at = at;
	l->last_at = at;
	if (l->events > 1)
		*p++ = ',';
	p = stpcpy(p, "{\"type\":\"");
	*p++ = type;
	p = stpcpy(p, "\",\"frame\":");
	p = put_u64(p, region);
	p = stpcpy(p, ",\"at\":");
	p = put_u64(p, at);
	*p++ = '}';
	if (l->len + (size_t)(p - ev) > l->bufcap && spool_flush(s, l) != 0)
		return -1;
	memcpy(l->buf + l->len, ev, (size_t)(p - ev));
	l->len += (size_t)(p - ev);
	return 0;
}

/* Closes the calls open on a task lane that ended by at (all: UINT64_MAX). */
static int task_close(struct speedscope *s, struct spool_lane *tl, uint64_t at)
{
	while (tl->nopen && tl->open[tl->nopen - 1].end <= at) {
		const struct open_call *o = &tl->open[--tl->nopen];
		if (spool_event(s, tl, 'C', o->region, o->end) != 0)
			return -1;
	}
	return 0;
}

/* A call of a task lane opens on its stack, cut to end within its caller's end. */
static int task_open(struct speedscope *s, struct spool_lane *tl, uint64_t region, uint64_t start,
		     uint64_t end)
{
	if (task_close(s, tl, start) != 0)
		return -1;
	if (tl->nopen && tl->open[tl->nopen - 1].end < end)
		end = tl->open[tl->nopen - 1].end;
	if (tl->nopen == tl->opencap) {
		size_t cap = tl->opencap ? 2 * tl->opencap : 8;
		struct open_call *grown = realloc(tl->open, cap * sizeof *grown);
		if (!grown)
			return -1;
		tl->open = grown;
		tl->opencap = cap;
	}
	tl->open[tl->nopen++] = (struct open_call){region, end};
	return spool_event(s, tl, 'O', region, start);
}

static int speedscope_enter(void *ctx, struct wk_lane *l)
{
	struct speedscope *s = ctx;
	struct wk_frame *f = &l->stack[l->n - 1];
	struct spool_lane *sl = &s->lanes[s->base[l->process] + l->lane];
	const struct rd_process *pr = &s->f.p->processes[l->process];

	f->tag = (uint64_t)filter_call(&s->f, l->process, f);
	if (f->tag && f->task && f->task <= pr->ntasks) {
		f->tag = 0; /* closed on the task lane's own stack, not at the walk's leave */
		if (task_open(s, &s->lanes[s->base[l->process] + pr->nlanes + f->task - 1],
			      f->region, filter_at(&s->f, l->process, f->start),
			      filter_at(&s->f, l->process, f->end)) != 0) {
			s->oom = 1;
			return -1;
		}
		return 0;
	}
	if (f->tag && spool_event(s, sl, 'O', f->region, filter_at(&s->f, l->process, f->start))) {
		s->oom = 1;
		return -1;
	}
	return 0;
}

static int speedscope_leave(void *ctx, struct wk_lane *l)
{
	struct speedscope *s = ctx;
	const struct wk_frame *f = &l->stack[l->n - 1];
	struct spool_lane *sl = &s->lanes[s->base[l->process] + l->lane];

	if (f->tag && spool_event(s, sl, 'C', f->region, filter_at(&s->f, l->process, f->end))) {
		s->oom = 1;
		return -1;
	}
	return 0;
}

static void speedscope_frames(FILE *out, const struct options *o, const struct rd_profile *p)
{
	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < p->nregions; i++) {
		const struct rd_region *r = &p->regions[i];
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_string(out, region_name(o, 0, i));
		if (*r->file) {
			fputs(",\"file\":", out);
			json_string(out, r->file);
		}
		if (r->line)
			fprintf(out, ",\"line\":%llu", (unsigned long long)r->line);
		putc('}', out);
	}
	fputs("]},\n", out);
}

/* Copies a lane's spooled events to out. */
static int copy_lane(struct speedscope *s, struct spool_lane *l, FILE *out)
{
	char buf[1 << 16];

	for (size_t b = 0; b < l->nblocks; b++) {
		for (size_t done = 0; done < l->blocks[b].len;) {
			size_t want = l->blocks[b].len - done;
			ssize_t got =
				pread(fileno(s->spool), buf, want < sizeof buf ? want : sizeof buf,
				      l->blocks[b].off + (off_t)done);
			if (got <= 0)
				return -1;
			fwrite(buf, 1, (size_t)got, out);
			done += (size_t)got;
		}
	}
	fwrite(l->buf, 1, l->len, out);
	return 0;
}

/* "pid 12, task 3: relay (id 7, threads 0,1)" for task row k. */
static int lane_name_task(char **name, const struct rd_process *pr, size_t k)
{
	const struct rd_task *t = &pr->tasks[k];

	return asprintf(name, "pid %lld, task %zu%s%s (id %llu, threads %s)", (long long)pr->pid,
			k + 1, *t->name ? ": " : "", t->name, (unsigned long long)t->id,
			t->threads);
}

/* One evented profile per thread lane, then per task lane, that has events. */
static int speedscope_profiles(struct speedscope *s, const struct rd_profile *p, FILE *out)
{
	int first = 1;

	if (fflush(s->spool) != 0)
		return -1;
	fputs("\"profiles\":[", out);
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct rd_process *pr = &p->processes[i];
		for (size_t k = 0; k < pr->nlanes + pr->ntasks; k++) {
			struct spool_lane *l = &s->lanes[s->base[i] + k];
			char *name = NULL;
			int named;
			if (!l->events)
				continue;
			fputs(first ? "\n{\"type\":\"evented\",\"name\":"
				    : ",\n{\"type\":\"evented\",\"name\":",
			      out);
			first = 0;
			if (k < pr->nlanes)
				named = asprintf(&name, "pid %lld, lane %zu: %s (tid %llu)",
						 (long long)pr->pid, k, pr->lanes[k].name,
						 (unsigned long long)pr->lanes[k].tid);
			else
				named = lane_name_task(&name, pr, k - pr->nlanes);
			if (named < 0)
				return -1;
			json_string(out, name);
			free(name);
			fprintf(out,
				",\"unit\":\"nanoseconds\",\"startValue\":%llu,\"endValue\":%llu,"
				"\"events\":[",
				(unsigned long long)l->first_at, (unsigned long long)l->last_at);
			if (copy_lane(s, l, out) != 0)
				return -1;
			fputs("]}", out);
		}
	}
	fputs("\n]", out);
	return 0;
}

/* The calls still open on process i's task lanes end. */
static int close_tasks(struct speedscope *s, const struct rd_profile *p, size_t i)
{
	const struct rd_process *pr = &p->processes[i];

	for (size_t k = 0; k < pr->ntasks; k++)
		if (task_close(s, &s->lanes[s->base[i] + pr->nlanes + k], UINT64_MAX) != 0) {
			s->oom = 1;
			return -1;
		}
	return 0;
}

static int speedscope_walk(struct speedscope *s, const struct options *o, struct rd_profile *p)
{
	struct wk_visitor v = {
		.ctx = s, .enter = speedscope_enter, .leave = speedscope_leave, .tasks = 1};
	size_t nlanes = 0;

	s->base = calloc(p->nprocesses + 1, sizeof *s->base);
	for (size_t i = 0; s->base && i < p->nprocesses; i++) {
		s->base[i] = nlanes;
		nlanes += p->processes[i].nlanes + p->processes[i].ntasks;
	}
	s->lanes = s->base ? calloc(nlanes + 1, sizeof *s->lanes) : NULL;
	s->spool = s->lanes ? tmpfile() : NULL;
	if (!s->spool) {
		snprintf(p->err, sizeof p->err, "cannot make a temporary file");
		return -1;
	}
	for (size_t i = 0; i < p->nprocesses; i++) {
		if (!want_process(o, p, i) ||
		    (o->thread >= 0 && (uint64_t)o->thread >= p->processes[i].nlanes))
			continue;
		if (wk_process(p, i, o->thread, &v) != 0 || close_tasks(s, p, i) != 0) {
			if (s->oom)
				snprintf(p->err, sizeof p->err,
					 "out of memory or temporary space for the lanes");
			return -1;
		}
	}
	return 0;
}

static void speedscope_free(struct speedscope *s, const struct rd_profile *p)
{
	size_t nlanes = 0;

	for (size_t i = 0; s->base && i < p->nprocesses; i++)
		nlanes += p->processes[i].nlanes + p->processes[i].ntasks;
	for (size_t i = 0; s->lanes && i < nlanes; i++) {
		free(s->lanes[i].buf);
		free(s->lanes[i].blocks);
		free(s->lanes[i].open);
	}
	free(s->lanes);
	free(s->base);
	if (s->spool)
		fclose(s->spool);
	filter_free(&s->f);
}

int view_speedscope(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
		    size_t cap)
{
	struct rd_profile *p = in[0];
	const char *path = o->files[0];
	struct speedscope s = {0};
	char *copy = strdup(path);
	int rc = -1;

	if (!copy || filter_init(&s.f, o, 0, p) != 0)
		snprintf(p->err, sizeof p->err, "out of memory");
	else if (speedscope_walk(&s, o, p) == 0) {
		fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n",
		      out);
		fprintf(out, "\"exporter\":\"scope-report %s\",\"name\":", SCOPE_VERSION);
		json_string(out, basename(copy));
		fputs(",\"activeProfileIndex\":0,\n", out);
		speedscope_frames(out, o, p);
		rc = speedscope_profiles(&s, p, out);
		if (rc != 0)
			snprintf(p->err, sizeof p->err, "cannot read back the temporary file");
		fputs("}\n", out);
	}
	speedscope_free(&s, p);
	free(copy);
	if (rc != 0)
		snprintf(err, cap, "%s: %s", path, p->err);
	return rc;
}

/* ---- Sizes, estimated before writing ------------------------------------ */

static uint64_t digits(uint64_t v)
{
	uint64_t n = 1;
	while (v >= 10)
		v /= 10, n++;
	return n;
}

/* The length of s as a JSON string, quotes included, escapes not counted. */
static uint64_t json_len(const char *s)
{
	return strlen(s) + 2;
}

/*
 * Calls each pair of a selected process and region will write, summed with
 * per_call(pair) bytes each. Estimates from /pairs: --since, --until and
 * --thread can only make the output smaller.
 */
static uint64_t size_of_pairs(const struct options *o, struct rd_profile *p, uint64_t *calls,
			      uint64_t (*per_call)(const struct options *, struct rd_profile *,
						   const struct rd_pair *))
{
	unsigned char *wanted = region_mask(o, 0, p);
	uint64_t bytes = 0;

	*calls = 0;
	for (size_t i = 0; wanted && i < p->npairs; i++) {
		const struct rd_pair *pr = &p->pairs[i];
		if (!wanted[pr->region] || !want_process(o, p, pr->process))
			continue;
		*calls += pr->count;
		bytes += pr->count * per_call(o, p, pr);
	}
	free(wanted);
	return bytes;
}

/* A Chrome trace event: its region's head and tail, and pid, tid, ts and dur. */
static uint64_t chrome_call_bytes(const struct options *o, struct rd_profile *p,
				  const struct rd_pair *pair)
{
	const struct rd_region *r = &p->regions[pair->region];
	const struct rd_process *pr = &p->processes[pair->process];
	uint64_t at = (pr->end - p->origin) / 1000, tid = pr->nlanes ? pr->lanes[0].tid : 0;
	uint64_t mean = pair->count ? pair->total_all_ns / pair->count / 1000 : 0;
	uint64_t head = 34 + json_len(region_name(o, 0, pair->region));
	uint64_t tail = *r->file || r->line ? 34 + json_len(r->file) + digits(r->line) : 1;

	return head + tail + 7 + digits((uint64_t)llabs(pr->pid)) + 7 + digits(tid) + 6 +
	       digits(at) + 4 + 7 + digits(mean) + 4;
}

uint64_t size_chrome(const struct options *o, struct rd_profile *const *in, uint64_t *calls)
{
	return size_of_pairs(o, in[0], calls, chrome_call_bytes) + 64 * in[0]->nprocesses;
}

/* Two speedscope events, an open and a close. */
static uint64_t speedscope_call_bytes(const struct options *o, struct rd_profile *p,
				      const struct rd_pair *pair)
{
	const struct rd_process *pr = &p->processes[pair->process];

	(void)o;
	return 2 * (22 + digits(pair->region) + 6 + digits(pr->end - p->origin) + 1);
}

uint64_t size_speedscope(const struct options *o, struct rd_profile *const *in, uint64_t *calls)
{
	struct rd_profile *p = in[0];
	uint64_t bytes = size_of_pairs(o, p, calls, speedscope_call_bytes);

	for (size_t i = 0; i < p->nregions; i++)
		bytes += 12 + json_len(region_name(o, 0, i)) + json_len(p->regions[i].file) + 20;
	return bytes;
}
