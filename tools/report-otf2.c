/* SPDX-License-Identifier: MIT */
/* scope-report --otf2: an OTF2 trace archive of a profile's calls, for Vampir and the Score-P
 * tools.
 */
#define _GNU_SOURCE
#include "report.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "schema.h"

/* OTF2 keeps a location's events in chunks of OTF2_CHUNK bytes, and writes
 * them out when it can have no more: OTF2_CHUNKS of them, where its own pool
 * would take 128 MiB per location. The archive's memory is about OTF2_CHUNK
 * * OTF2_CHUNKS times the lanes written. */
#define OTF2_CHUNK     (256u << 10)
#define OTF2_CHUNKS    4
#define OTF2_DEF_CHUNK (4u << 20)

/* The bytes one call takes in the archive, measured (400002 calls: 23.4): an enter and a leave,
 * each a timestamp and a region reference, OTF2's compressed integers. */
#define OTF2_CALL_BYTES 23

/* OTF2's last error, kept for the one line scope-report prints. */
static char otf2_msg[256];

static OTF2_ErrorCode keep_error(void *data, const char *file, uint64_t line, const char *function,
				 OTF2_ErrorCode code, const char *fmt, va_list va)
{
	int n = snprintf(otf2_msg, sizeof otf2_msg, "%s: ", OTF2_Error_GetDescription(code));

	(void)data, (void)file, (void)line, (void)function;
	if (n > 0 && (size_t)n < sizeof otf2_msg && fmt)
		vsnprintf(otf2_msg + n, sizeof otf2_msg - (size_t)n, fmt, va);
	return code;
}

/* Rows of a pair's bytes read at once. */
#define BYTES_SLICE 4096

/* The bytes of an MPI pair's calls, a slice of rows at a time. */
struct pair_bytes {
	uint64_t off, n; /* the rows held: [off, off + n) of the pair's calls */
	uint64_t sent[BYTES_SLICE], received[BYTES_SLICE];
};

/* The attributes of an MPI call's Enter event. */
enum { ATTR_BYTES_SENT, ATTR_BYTES_RECEIVED };

struct otf2 {
	struct call_filter f;
	struct rd_profile *p;
	struct pair_bytes **bytes; /* per pair: NULL until an MPI call of it is written */
	unsigned char *mpi;	   /* per region: its calls carry bytes */
	OTF2_AttributeList *attrs;
	OTF2_Archive *a;
	OTF2_EvtWriter **w; /* per location */
	uint64_t *last;	    /* per location: its last timestamp */
	uint64_t *events;   /* per location */
	size_t *base;	    /* per process: its first location, SIZE_MAX when not written */
	size_t from;	    /* the first lane of a process written: --thread, else 0 */
	size_t nlocs;
	uint64_t origin, end; /* unix ns of the job's start; the last timestamp */
	uint32_t strings;     /* string definitions written */
	OTF2_GlobalDefWriter *g;
	int failed;
};

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *caller,
				bool final)
{
	(void)user, (void)type, (void)loc, (void)caller, (void) final;
	return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc)
{
	(void)user, (void)type, (void)loc;
	return 0;
}

static const OTF2_FlushCallbacks flush = {.otf2_pre_flush = pre_flush,
					  .otf2_post_flush = post_flush};

/* The chunks of one of OTF2's buffers. */
struct chunks {
	size_t n;
	void *chunk[OTF2_CHUNKS];
};

/* A new chunk, or NULL when the buffer has its OTF2_CHUNKS: OTF2 then
 * writes the buffer out, frees its chunks and asks again. */
static void *chunk_new(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per,
		       uint64_t size)
{
	struct chunks *c = *per;
	void *p;

	(void)user, (void)type, (void)loc;
	if (!c && !(c = *per = calloc(1, sizeof *c)))
		return NULL;
	if (c->n == OTF2_CHUNKS || !(p = malloc(size)))
		return NULL;
	return c->chunk[c->n++] = p;
}

static void chunks_free(void *user, OTF2_FileType type, OTF2_LocationRef loc, void **per,
			bool final)
{
	struct chunks *c = *per;

	(void)user, (void)type, (void)loc;
	for (size_t i = 0; c && i < c->n; i++)
		free(c->chunk[i]);
	if (c)
		c->n = 0;
	if (final) {
		free(c);
		*per = NULL;
	}
}

static const OTF2_MemoryCallbacks memory = {.otf2_allocate = chunk_new,
					    .otf2_free_all = chunks_free};

/* ---- Events ------------------------------------------------------------- */

/* A timestamp of location l: unix ns, never before the location's last one
 * (a callee may end a few ns after its caller, by the clock's rounding). */
static uint64_t stamp(struct otf2 *o, size_t l, size_t process, uint64_t rel)
{
	uint64_t t = o->origin + filter_at(&o->f, process, rel);

	if (t < o->last[l])
		t = o->last[l];
	o->last[l] = t;
	if (t > o->end)
		o->end = t;
	return t;
}

/* An MPI call's bytes as its event's attributes; 0, or -1 when they cannot be read. */
static int call_bytes(struct otf2 *o, const struct wk_frame *f)
{
	const struct rd_pair *pr = &o->p->pairs[f->pair];
	struct pair_bytes *b = o->bytes[f->pair];

	if (!b && !(b = o->bytes[f->pair] = calloc(1, sizeof *b)))
		return -1;
	if (f->index < b->off || f->index >= b->off + b->n) {
		b->off = f->index;
		b->n = pr->count - f->index < BYTES_SLICE ? pr->count - f->index : BYTES_SLICE;
		if (rd_event_rows(o->p, SC_EV_BYTES_SENT, pr->first + b->off, b->n, 8, b->sent) !=
			    0 ||
		    rd_event_rows(o->p, SC_EV_BYTES_RECEIVED, pr->first + b->off, b->n, 8,
				  b->received) != 0)
			return -1;
	}
	if (OTF2_AttributeList_AddUint64(o->attrs, ATTR_BYTES_SENT, b->sent[f->index - b->off]) !=
		    OTF2_SUCCESS ||
	    OTF2_AttributeList_AddUint64(o->attrs, ATTR_BYTES_RECEIVED,
					 b->received[f->index - b->off]) != OTF2_SUCCESS)
		return -1;
	return 0;
}

static int otf2_enter(void *ctx, struct wk_lane *wl)
{
	struct otf2 *o = ctx;
	struct wk_frame *f = &wl->stack[wl->n - 1];
	size_t l = o->base[wl->process] + wl->lane - o->from;
	int with = o->mpi[f->region];

	f->tag = (uint64_t)filter_call(&o->f, wl->process, f);
	if (!f->tag)
		return 0;
	if (with && call_bytes(o, f) != 0) {
		o->failed = 1;
		return -1;
	}
	if (OTF2_EvtWriter_Enter(o->w[l], with ? o->attrs : NULL,
				 stamp(o, l, wl->process, f->start),
				 (OTF2_RegionRef)f->region) != OTF2_SUCCESS) {
		o->failed = 1;
		return -1;
	}
	o->events[l]++;
	return 0;
}

static int otf2_leave(void *ctx, struct wk_lane *wl)
{
	struct otf2 *o = ctx;
	const struct wk_frame *f = &wl->stack[wl->n - 1];
	size_t l = o->base[wl->process] + wl->lane - o->from;

	if (!f->tag)
		return 0;
	if (OTF2_EvtWriter_Leave(o->w[l], NULL, stamp(o, l, wl->process, f->end),
				 (OTF2_RegionRef)f->region) != OTF2_SUCCESS) {
		o->failed = 1;
		return -1;
	}
	o->events[l]++;
	return 0;
}

/* Whether process i is written, and its lanes. */
static int lanes_of(const struct options *opt, const struct rd_profile *p, size_t i, size_t *from,
		    size_t *to)
{
	size_t n = p->processes[i].nlanes;

	if (!want_process(opt, p, i) || (opt->thread >= 0 && (uint64_t)opt->thread >= n))
		return 0;
	*from = opt->thread >= 0 ? (size_t)opt->thread : 0;
	*to = opt->thread >= 0 ? *from + 1 : n;
	return 1;
}

/* Numbers the locations and opens a writer for each; 0, or -1. */
static int open_locations(struct otf2 *o, const struct options *opt, const struct rd_profile *p)
{
	size_t from, to;
	int bytes = rd_event_width(p, SC_EV_BYTES_SENT) > 0 &&
		    rd_event_width(p, SC_EV_BYTES_RECEIVED) > 0;

	o->mpi = calloc(p->nregions + 1, 1);
	o->bytes = calloc(p->npairs + 1, sizeof *o->bytes);
	if (!o->mpi || !o->bytes || !(o->attrs = OTF2_AttributeList_New()))
		return -1;
	for (size_t r = 0; bytes && r < p->nregions; r++)
		o->mpi[r] = strcmp(p->regions[r].kind, "mpi") == 0;

	if (!(o->base = malloc((p->nprocesses + 1) * sizeof *o->base)))
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		o->base[i] = SIZE_MAX;
		if (lanes_of(opt, p, i, &from, &to)) {
			o->base[i] = o->nlocs;
			o->from = from;
			o->nlocs += to - from;
		}
	}
	o->w = calloc(o->nlocs + 1, sizeof *o->w);
	o->last = calloc(o->nlocs + 1, sizeof *o->last);
	o->events = calloc(o->nlocs + 1, sizeof *o->events);
	if (!o->w || !o->last || !o->events)
		return -1;
	for (size_t l = 0; l < o->nlocs; l++)
		if (!(o->w[l] = OTF2_Archive_GetEvtWriter(o->a, (OTF2_LocationRef)l)))
			return -1;
	return 0;
}

static int events(struct otf2 *o, const struct options *opt, struct rd_profile *p)
{
	struct wk_visitor v = {.ctx = o, .enter = otf2_enter, .leave = otf2_leave};

	for (size_t i = 0; i < p->nprocesses; i++)
		if (o->base[i] != SIZE_MAX && wk_process(p, i, opt->thread, &v) != 0)
			return -1;
	for (size_t l = 0; l < o->nlocs; l++)
		if (OTF2_Archive_CloseEvtWriter(o->a, o->w[l]) != OTF2_SUCCESS)
			return -1;
	return 0;
}

/* ---- Definitions -------------------------------------------------------- */

/* Defines a string; returns its reference. */
static OTF2_StringRef string(struct otf2 *o, const char *s)
{
	OTF2_StringRef ref = o->strings++;

	if (OTF2_GlobalDefWriter_WriteString(o->g, ref, s) != OTF2_SUCCESS)
		o->failed = 1;
	return ref;
}

static OTF2_StringRef stringf(struct otf2 *o, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	OTF2_StringRef ref;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	ref = string(o, s ? s : "?");
	free(s);
	return ref;
}

/* Regions: compiled functions, MPI calls, and the C library's waits and I/O. */
static void regions(struct otf2 *o, const struct options *opt, const struct rd_profile *p)
{
	for (size_t i = 0; i < p->nregions && !o->failed; i++) {
		const struct rd_region *r = &p->regions[i];
		OTF2_Paradigm paradigm = OTF2_PARADIGM_COMPILER;
		OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
		OTF2_StringRef name = string(o, region_name(opt, 0, i));
		OTF2_StringRef full = string(o, r->name);
		OTF2_StringRef kind = string(o, r->kind);
		OTF2_StringRef file = string(o, r->file);

		if (strcmp(r->kind, "mpi") == 0)
			paradigm = OTF2_PARADIGM_MPI;
		else if (strcmp(r->kind, "io") == 0)
			paradigm = OTF2_PARADIGM_UNKNOWN, role = OTF2_REGION_ROLE_FILE_IO;
		else if (strcmp(r->kind, "wait") == 0)
			paradigm = OTF2_PARADIGM_UNKNOWN, role = OTF2_REGION_ROLE_WRAPPER;
		if (OTF2_GlobalDefWriter_WriteRegion(o->g, (OTF2_RegionRef)i, name, full, kind,
						     role, paradigm, OTF2_REGION_FLAG_NONE, file,
						     r->line <= UINT32_MAX ? (uint32_t)r->line : 0,
						     0) != OTF2_SUCCESS)
			o->failed = 1;
	}
}

/* The system tree: the job, one node per host. Returns each process's node in nodes. */
static void system_tree(struct otf2 *o, const struct rd_profile *p, uint32_t *nodes)
{
	OTF2_StringRef node = string(o, "node"), job = string(o, "job");
	uint32_t n = 1;

	if (OTF2_GlobalDefWriter_WriteSystemTreeNode(o->g, 0, job, string(o, "machine"),
						     OTF2_UNDEFINED_SYSTEM_TREE_NODE) !=
	    OTF2_SUCCESS)
		o->failed = 1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		size_t j = 0;
		while (j < i && strcmp(p->processes[j].host, p->processes[i].host) != 0)
			j++;
		if (j < i) {
			nodes[i] = nodes[j];
			continue;
		}
		nodes[i] = n++;
		if (OTF2_GlobalDefWriter_WriteSystemTreeNode(
			    o->g, nodes[i],
			    string(o, *p->processes[i].host ? p->processes[i].host : "host"), node,
			    0) != OTF2_SUCCESS)
			o->failed = 1;
	}
}

/* A process's group and its lanes' locations, and what its MPI calls moved
 * as properties of its first location (the profile has them per process
 * and region, not per call). */
static void process_defs(struct otf2 *o, const struct options *opt, const struct rd_profile *p,
			 size_t i, uint32_t node)
{
	const struct rd_process *pr = &p->processes[i];
	char *exe = strdup(pr->executable), rank[32] = "";
	OTF2_StringRef name;
	size_t from, to;

	if (!lanes_of(opt, p, i, &from, &to))
		return;
	if (pr->rank >= 0)
		snprintf(rank, sizeof rank, ", rank %lld", (long long)pr->rank);
	name = stringf(o, "%s (pid %lld%s)", exe ? basename(exe) : "?", (long long)pr->pid, rank);
	free(exe);
	if (OTF2_GlobalDefWriter_WriteLocationGroup(o->g, (OTF2_LocationGroupRef)i, name,
						    OTF2_LOCATION_GROUP_TYPE_PROCESS, node,
						    OTF2_UNDEFINED_LOCATION_GROUP) != OTF2_SUCCESS)
		o->failed = 1;
	for (size_t k = from; k < to; k++) {
		size_t l = o->base[i] + k - from;
		if (OTF2_GlobalDefWriter_WriteLocation(
			    o->g, (OTF2_LocationRef)l,
			    stringf(o, "%s (lane %zu, tid %llu)", pr->lanes[k].name, k,
				    (unsigned long long)pr->lanes[k].tid),
			    OTF2_LOCATION_TYPE_CPU_THREAD, o->events[l],
			    (OTF2_LocationGroupRef)i) != OTF2_SUCCESS)
			o->failed = 1;
	}
	for (size_t j = 0; p->has_bytes && j < p->npairs; j++) {
		const struct rd_pair *r = &p->pairs[j];
		const uint64_t moved[2] = {r->bytes_sent, r->bytes_received};
		const char *what[2] = {"bytes_sent", "bytes_received"};
		if (r->process != i)
			continue;
		for (int d = 0; d < 2; d++) {
			OTF2_AttributeValue v = {.uint64 = moved[d]};
			if (moved[d] &&
			    OTF2_GlobalDefWriter_WriteLocationProperty(
				    o->g, (OTF2_LocationRef)o->base[i],
				    stringf(o, "%s %s", region_name(opt, 0, r->region), what[d]),
				    OTF2_TYPE_UINT64, v) != OTF2_SUCCESS)
				o->failed = 1;
		}
	}
}

static int definitions(struct otf2 *o, const struct options *opt, const struct rd_profile *p)
{
	uint32_t *nodes = calloc(p->nprocesses + 1, sizeof *nodes);

	if (!nodes || !(o->g = OTF2_Archive_GetGlobalDefWriter(o->a))) {
		free(nodes);
		return -1;
	}
	/* ns since the Unix epoch: the archive's times are the profile's own */
	if (OTF2_GlobalDefWriter_WriteClockProperties(
		    o->g, 1000000000, o->origin, o->end - o->origin + 1, o->origin) != OTF2_SUCCESS)
		o->failed = 1;
	string(o, "");
	if (OTF2_GlobalDefWriter_WriteAttribute(o->g, ATTR_BYTES_SENT, string(o, "bytes_sent"),
						string(o, "bytes the MPI call sent"),
						OTF2_TYPE_UINT64) != OTF2_SUCCESS ||
	    OTF2_GlobalDefWriter_WriteAttribute(
		    o->g, ATTR_BYTES_RECEIVED, string(o, "bytes_received"),
		    string(o, "bytes the MPI call received"), OTF2_TYPE_UINT64) != OTF2_SUCCESS)
		o->failed = 1;
	regions(o, opt, p);
	system_tree(o, p, nodes);
	for (size_t i = 0; i < p->nprocesses && !o->failed; i++)
		process_defs(o, opt, p, i, nodes[i]);
	free(nodes);
	if (OTF2_Archive_CloseGlobalDefWriter(o->a, o->g) != OTF2_SUCCESS || o->failed)
		return -1;
	/* every location has its (empty) local definitions, as readers expect */
	if (OTF2_Archive_OpenDefFiles(o->a) != OTF2_SUCCESS)
		return -1;
	for (size_t l = 0; l < o->nlocs; l++) {
		OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(o->a, (OTF2_LocationRef)l);
		if (!d || OTF2_Archive_CloseDefWriter(o->a, d) != OTF2_SUCCESS)
			return -1;
	}
	return OTF2_Archive_CloseDefFiles(o->a) == OTF2_SUCCESS ? 0 : -1;
}

/* ---- The archive -------------------------------------------------------- */

static int archive(struct otf2 *o, const struct options *opt, struct rd_profile *p, const char *dir)
{
	char creator[64];

	o->a = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, OTF2_CHUNK, OTF2_DEF_CHUNK,
				 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o->a)
		return -1;
	snprintf(creator, sizeof creator, "scope-report %s", SCOPE_VERSION);
	if (OTF2_Archive_SetFlushCallbacks(o->a, &flush, o) != OTF2_SUCCESS ||
	    OTF2_Archive_SetMemoryCallbacks(o->a, &memory, o) != OTF2_SUCCESS ||
	    OTF2_Archive_SetSerialCollectiveCallbacks(o->a) != OTF2_SUCCESS ||
	    OTF2_Archive_SetCreator(o->a, creator) != OTF2_SUCCESS ||
	    OTF2_Archive_SetDescription(o->a, opt->files[0]) != OTF2_SUCCESS ||
	    (*p->meta.host && OTF2_Archive_SetMachineName(o->a, p->meta.host) != OTF2_SUCCESS) ||
	    OTF2_Archive_OpenEvtFiles(o->a) != OTF2_SUCCESS || open_locations(o, opt, p) != 0)
		return -1;
	if (events(o, opt, p) != 0)
		return -1;
	if (OTF2_Archive_CloseEvtFiles(o->a) != OTF2_SUCCESS)
		return -1;
	return definitions(o, opt, p);
}

int view_otf2(const struct options *o, struct rd_profile *const *in, FILE *out, char *err,
	      size_t cap)
{
	struct rd_profile *p = in[0];
	struct otf2 w = {.p = p, .origin = p->origin, .end = p->origin};
	int rc;

	(void)out;
	otf2_msg[0] = 0;
	p->err[0] = 0;
	OTF2_Error_RegisterCallback(keep_error, NULL);
	if (filter_init(&w.f, o, 0, p) != 0) {
		snprintf(err, cap, "%s: out of memory", o->files[0]);
		return -1;
	}
	rc = archive(&w, o, p, o->dir);
	if (w.a && OTF2_Archive_Close(w.a) != OTF2_SUCCESS)
		rc = -1;
	if (rc != 0)
		snprintf(err, cap, "%s: %s", o->files[0],
			 p->err[0]     ? p->err
			 : otf2_msg[0] ? otf2_msg
				       : "out of memory");
	free(w.w);
	free(w.last);
	free(w.events);
	free(w.base);
	for (size_t i = 0; w.bytes && i < p->npairs; i++)
		free(w.bytes[i]);
	free(w.bytes);
	free(w.mpi);
	if (w.attrs)
		OTF2_AttributeList_Delete(w.attrs);
	filter_free(&w.f);
	return rc;
}

uint64_t size_otf2(const struct options *o, struct rd_profile *const *in, uint64_t *calls)
{
	struct rd_profile *p = in[0];
	unsigned char *wanted = region_mask(o, 0, p);
	uint64_t bytes = 4096;

	*calls = 0;
	for (size_t i = 0; wanted && i < p->npairs; i++) {
		const struct rd_pair *pr = &p->pairs[i];
		if (wanted[pr->region] && want_process(o, p, pr->process))
			*calls += pr->count;
	}
	for (size_t i = 0; i < p->nregions; i++)
		bytes += 16 + 2 * strlen(p->regions[i].name) + strlen(p->regions[i].file);
	free(wanted);
	return bytes + *calls * OTF2_CALL_BYTES;
}
