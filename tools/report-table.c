/* SPDX-License-Identifier: MIT */
/* Prints scope-report's tables as aligned text, CSV or JSON from one description of columns. */
#include "format.h"
#include "report.h"

#include <math.h>
#include <string.h>

/* ---- Text --------------------------------------------------------------- */

static const char *text_cell(char *buf, size_t cap, const struct column *c, const union cell *v)
{
	switch (c->kind) {
	case CELL_STR: return v->s;
	case CELL_U64: snprintf(buf, cap, "%llu", (unsigned long long)v->u); break;
	case CELL_I64: snprintf(buf, cap, "%lld", (long long)v->i); break;
	case CELL_NS: return fmt_ns(buf, cap, (double)v->u);
	case CELL_NSF: return isnan(v->f) ? "-" : fmt_ns(buf, cap, v->f);
	case CELL_DNS:
		buf[0] = '+';
		fmt_ns(buf + (v->i >= 0), cap - 1, (double)v->i);
		break;
	case CELL_PCT: snprintf(buf, cap, isnan(v->f) ? "-" : "%.1f%%", v->f); break;
	case CELL_DPCT: snprintf(buf, cap, isnan(v->f) ? "-" : "%+.1f%%", v->f); break;
	case CELL_RATIO: snprintf(buf, cap, isnan(v->f) ? "-" : "%.2f", v->f); break;
	case CELL_BYTES: return fmt_bytes(buf, cap, v->u);
	}
	return buf;
}

/* Whether column i appears in the table's format. */
static int shown(const struct table *t, size_t i)
{
	if (t->cols[i].off)
		return 0;
	return t->format == FMT_TEXT ? !t->cols[i].no_text : !t->cols[i].only_text;
}

/* The last text column: left-aligned, unpadded (it holds names). */
static size_t last_text_column(const struct table *t)
{
	size_t last = 0;
	for (size_t i = 0; i < t->ncols; i++)
		if (!t->cols[i].no_text && !t->cols[i].off)
			last = i;
	return last;
}

static void text_field(const struct table *t, size_t i, const char *s)
{
	const struct column *c = &t->cols[i];
	if (i == last_text_column(t))
		fprintf(t->out, "%s\n", s);
	else if (c->kind == CELL_STR)
		fprintf(t->out, "%-*s  ", c->width, s);
	else
		fprintf(t->out, "%*s  ", c->width, s);
}

/* ---- CSV and JSON ------------------------------------------------------- */

/* A number as CSV and JSON show it; NULL when there is none (NaN). */
static const char *plain_number(char *buf, size_t cap, const struct column *c, const union cell *v)
{
	switch (c->kind) {
	case CELL_STR: return NULL;
	case CELL_U64:
	case CELL_BYTES:
	case CELL_NS: snprintf(buf, cap, "%llu", (unsigned long long)v->u); break;
	case CELL_I64:
	case CELL_DNS: snprintf(buf, cap, "%lld", (long long)v->i); break;
	case CELL_NSF:
		if (!isfinite(v->f))
			return NULL;
		snprintf(buf, cap, "%.1f", v->f);
		break;
	case CELL_PCT:
	case CELL_DPCT:
	case CELL_RATIO:
		if (!isfinite(v->f))
			return NULL;
		snprintf(buf, cap, "%.3f", v->f);
		break;
	}
	return buf;
}

static void csv_cell(const struct table *t, size_t i, int first, const union cell *v)
{
	char buf[64];
	const char *n;

	if (!first)
		putc(',', t->out);
	if (t->cols[i].kind == CELL_STR)
		csv_string(t->out, v->s);
	else if ((n = plain_number(buf, sizeof buf, &t->cols[i], v)))
		fputs(n, t->out);
}

static void json_cell(const struct table *t, size_t i, int first, const union cell *v)
{
	char buf[64];
	const char *n;

	fputs(first ? "{" : ",", t->out);
	json_string(t->out, t->cols[i].key);
	putc(':', t->out);
	if (t->cols[i].kind == CELL_STR)
		json_string(t->out, v->s);
	else
		fputs((n = plain_number(buf, sizeof buf, &t->cols[i], v)) ? n : "null", t->out);
}

/* ---- Tables ------------------------------------------------------------- */

void table_begin(struct table *t, const char *json_key)
{
	t->rows = 0;
	switch (t->format) {
	case FMT_TEXT:
		for (size_t i = 0; i < t->ncols; i++)
			if (shown(t, i))
				text_field(t, i, t->cols[i].head);
		break;
	case FMT_CSV:
		for (size_t i = 0, first = 1; i < t->ncols; i++) {
			if (!shown(t, i))
				continue;
			if (!first)
				putc(',', t->out);
			csv_string(t->out, t->cols[i].key);
			first = 0;
		}
		putc('\n', t->out);
		break;
	case FMT_JSON:
		putc(',', t->out);
		json_string(t->out, json_key);
		fputs(":[", t->out);
		break;
	}
}

void table_row(struct table *t, const union cell *cells)
{
	char buf[64];

	switch (t->format) {
	case FMT_TEXT:
		for (size_t i = 0; i < t->ncols; i++)
			if (shown(t, i))
				text_field(t, i,
					   text_cell(buf, sizeof buf, &t->cols[i], &cells[i]));
		break;
	case FMT_CSV:
		for (size_t i = 0, first = 1; i < t->ncols; i++)
			if (shown(t, i))
				csv_cell(t, i, first, &cells[i]), first = 0;
		putc('\n', t->out);
		break;
	case FMT_JSON:
		if (t->rows)
			putc(',', t->out);
		for (size_t i = 0, first = 1; i < t->ncols; i++)
			if (shown(t, i))
				json_cell(t, i, first, &cells[i]), first = 0;
		putc('}', t->out);
		break;
	}
	t->rows++;
}

void table_end(struct table *t)
{
	if (t->format == FMT_JSON)
		putc(']', t->out);
}

/* ---- JSON documents ----------------------------------------------------- */

static void json_key(FILE *out, const char *key)
{
	putc(',', out);
	json_string(out, key);
	putc(':', out);
}

void json_doc_begin(FILE *out, const char *path, const struct rd_profile *p)
{
	fprintf(out, "{\"producer\":\"scope-report %s\",\"schema\":%d", SCOPE_VERSION, RD_SCHEMA);
	json_key(out, "profile");
	json_string(out, path);
	json_key(out, "command_line");
	json_string(out, p->meta.command_line);
	json_key(out, "host");
	json_string(out, p->meta.host);
	json_key(out, "start_time_utc");
	json_string(out, p->meta.start_time_utc);
	json_key(out, "wall_seconds");
	json_double(out, p->meta.wall_seconds);
	json_key(out, "cpu_seconds");
	json_double(out, p->meta.cpu_seconds);
	json_key(out, "peak_rss_bytes");
	json_double(out, p->meta.peak_rss_bytes);
	fprintf(out, ",\"lost_records\":%llu", (unsigned long long)p->meta.lost_records);
}

void json_double(FILE *out, double v)
{
	fprintf(out, "%.10g", isfinite(v) ? v : 0.0);
}

void json_doc_end(FILE *out)
{
	fputs("}\n", out);
}
