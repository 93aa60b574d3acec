/* SPDX-License-Identifier: MIT */
/* Text shared by the tools: durations for people, JSON and CSV strings. */
#ifndef SCOPE_LIB_FORMAT_H
#define SCOPE_LIB_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1234567 ns -> "1.235 ms": three decimals in the largest fitting unit up to s;
 * whole ns below 1 us. Negative values get a '-'. Returns buf. */
const char *fmt_ns(char *buf, size_t cap, double ns);

/* 1536 -> "1.5 KiB": one decimal in the largest fitting binary unit up to TiB;
 * whole bytes below 1 KiB. Returns buf. */
const char *fmt_bytes(char *buf, size_t cap, uint64_t bytes);

/* "4096", "64K", "1.5M", "2G", "1T" (also "2GiB", "2GB": binary units) -> bytes.
 * Returns 0, or -1 when s is not a non-negative number with an optional unit
 * or the value passes 2^64. */
int parse_bytes(const char *s, uint64_t *bytes);

/* "1500", "1500ns", "1.5us", "2ms", "0.5s" -> ns. Returns 0, or -1 when s is
 * not a non-negative number with an optional unit or the value passes 2^64. */
int parse_ns(const char *s, uint64_t *ns);

/* Writes s as a JSON string, quotes included: '"', '\' and control
 * characters escaped, bytes that are not UTF-8 replaced by U+FFFD. */
void json_string(FILE *out, const char *s);

/* Writes s as one CSV field (RFC 4180): quoted when it holds a comma, a
 * quote or a line break, quotes doubled. */
void csv_string(FILE *out, const char *s);

#endif
