/* SPDX-License-Identifier: MIT */
/* The environment a program exec'd from a profiled one needs to be profiled too. */
#define _GNU_SOURCE
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#define MAX_SAVED 32

/* "NAME=value" strings captured at start-up: LD_PRELOAD with this library
 * in it, and every SCOPE_* variable. */
static char *saved[MAX_SAVED];
static size_t nsaved;
static const char *self;

static SCOPE_NOINST void save(const char *entry)
{
	if (nsaved < MAX_SAVED && (saved[nsaved] = strdup(entry)) != NULL)
		nsaved++;
}

void scope_env_capture(const struct scope_config *cfg)
{
	const char *pre = getenv("LD_PRELOAD");
	char *entry = NULL;
	int n = -1;

	while (nsaved > 0)
		free(saved[--nsaved]);
	self = cfg->self[0] ? cfg->self : NULL;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "SCOPE_", 6) == 0)
			save(*e);
	if (!self)
		return;
	if (pre && *pre && strstr(pre, self))
		n = asprintf(&entry, "LD_PRELOAD=%s", pre);
	else if (pre && *pre)
		n = asprintf(&entry, "LD_PRELOAD=%s:%s", pre, self);
	else
		n = asprintf(&entry, "LD_PRELOAD=%s", self);
	if (n >= 0) {
		save(entry);
		free(entry);
	}
}

static SCOPE_NOINST int has(char *const envp[], const char *entry)
{
	size_t n = strcspn(entry, "=") + 1;
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], entry, n) == 0)
			return 1;
	return 0;
}

/*
 * envp, plus what the profiler needs and envp lacks. A program that builds
 * its child's environment from scratch, or removes LD_PRELOAD, still gets
 * a profiled child; a LD_PRELOAD of its own keeps its libraries, with this
 * one added. Returns a new array (free it, not its strings), or NULL when
 * envp is right as it is or no memory was to be had.
 */
char **scope_env_for_exec(char *const envp[])
{
	size_t n = 0, k = 0;
	char **out;
	char *pre = NULL;

	while (envp && envp[n])
		n++;
	out = malloc((n + nsaved + 3) * sizeof *out);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0 && self && !strstr(envp[i], self)) {
			if (asprintf(&pre, "%s:%s", envp[i], self) < 0)
				pre = NULL;
			out[k++] = pre ? pre : envp[i];
			continue;
		}
		out[k++] = envp[i];
	}
	for (size_t i = 0; i < nsaved; i++)
		if (!has(envp, saved[i]))
			out[k++] = saved[i];
	out[k] = NULL;
	out[k + 1] = pre; /* for scope_env_free */
	return out;
}

void scope_env_free(char **env)
{
	size_t k = 0;
	if (!env)
		return;
	while (env[k])
		k++;
	free(env[k + 1]);
	free(env);
}
