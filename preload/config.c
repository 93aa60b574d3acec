/* SPDX-License-Identifier: MIT */
/* Reads the SCOPE_* environment variables once, at start-up. */
#define _GNU_SOURCE
#include "state.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CHUNK_BYTES (64u << 10)
#define DEFAULT_LANES	    16384u
#define DEFAULT_ARENA_MAX   (UINT64_C(64) << 30)

extern char **environ;

/* The environment before libc has set environ up (a .preinit_array
 * function, another library's constructor): the kernel's copy. */
static char early_env[64 << 10];
static size_t early_len;

static SCOPE_NOINST const char *early_getenv(const char *name)
{
	size_t n = strlen(name);
	if (!early_len) {
		int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
		ssize_t k;
		if (fd < 0)
			return NULL;
		while (early_len < sizeof early_env - 1 &&
		       (k = read(fd, early_env + early_len, sizeof early_env - 1 - early_len)) > 0)
			early_len += (size_t)k;
		close(fd);
	}
	for (size_t i = 0; i < early_len; i += strlen(early_env + i) + 1)
		if (strncmp(early_env + i, name, n) == 0 && early_env[i + n] == '=')
			return early_env + i + n + 1;
	return NULL;
}

const char *scope_getenv(const char *name)
{
	return environ ? getenv(name) : early_getenv(name);
}

static SCOPE_NOINST void copy(char *dst, size_t cap, const char *src)
{
	if (src && strlen(src) < cap)
		strcpy(dst, src);
}

/* "64K", "16M", "2G" or plain bytes; 0 when unreadable. */
static SCOPE_NOINST uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	return *end ? 0 : v;
}

/* This library's own path, and the writer installed beside it:
 * LIBDIR/../bin/scope-writer. */
static SCOPE_NOINST void locate(struct scope_config *cfg)
{
	Dl_info info;
	char *slash;
	char dir[SCOPE_PATH_BYTES];

	if (!dladdr((void *)&scope_config_read, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, cfg->self))
		return;
	memcpy(dir, cfg->self, sizeof dir);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (!cfg->writer[0])
		snprintf(cfg->writer, sizeof cfg->writer, "%s/../bin/scope-writer", dir);
}

/* Relative paths are taken from the folder the process started in, and
 * kept absolute: a daemon changes to / before it writes. */
static SCOPE_NOINST void absolute(char *path, size_t cap)
{
	char cwd[SCOPE_PATH_BYTES], joined[2 * SCOPE_PATH_BYTES + 2];
	if (!path[0] || path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return;
	snprintf(joined, sizeof joined, "%s/%s", cwd, path);
	copy(path, cap, joined);
}

/* scope-<program>-<YYYYmmdd-HHMMSS>-<host>-<pid>.h5 in the current folder:
 * a pid is unique on its host while it runs, the time tells two uses of one
 * pid apart. */
static SCOPE_NOINST void default_output(char *out, size_t cap)
{
	char exe[SCOPE_PATH_BYTES] = "program", when[32], host[128] = "host";
	const char *base;
	time_t t = time(NULL);
	struct tm tm;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n > 0)
		exe[n] = '\0';
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
	gethostname(host, sizeof host - 1);
	host[strcspn(host, ".")] = '\0';
	snprintf(out, cap, "scope-%s-%s-%s-%d.h5", base, when, host, (int)getpid());
}

/*
 * The run's first process writes the output; every later one -- a child, or
 * a program exec'd by any of them -- writes a part, in SCOPE_PARTS when
 * scope-run gave one, else beside the output, for scope-merge. The first
 * process marks the environment it hands down with SCOPE_ROOT and the
 * output's absolute name.
 */
static SCOPE_NOINST void choose_role(struct scope_config *cfg)
{
	char pid[32];

	cfg->role = cfg->parts[0] || scope_getenv("SCOPE_ROOT") ? SCOPE_ROLE_PART : SCOPE_ROLE_ROOT;
	if (!cfg->output[0])
		default_output(cfg->output, sizeof cfg->output);
	absolute(cfg->output, sizeof cfg->output);
	absolute(cfg->parts, sizeof cfg->parts);
	absolute(cfg->tmpdir, sizeof cfg->tmpdir);
	if (cfg->role != SCOPE_ROLE_ROOT)
		return;
	if (!environ) {
		cfg->export_later = 1; /* libc sets environ up after this */
		return;
	}
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	setenv("SCOPE_ROOT", pid, 1);
	setenv("SCOPE_OUTPUT", cfg->output, 1);
	if (scope_getenv("SCOPE_TMPDIR"))
		setenv("SCOPE_TMPDIR", cfg->tmpdir, 1);
}

/* What choose_role could not put into the environment yet. */
void scope_config_export(struct scope_config *cfg)
{
	if (!cfg->export_later || !environ)
		return;
	cfg->export_later = 0;
	choose_role(cfg);
}

void scope_config_read(struct scope_config *cfg)
{
	const char *tmp = scope_getenv("SCOPE_TMPDIR");
	uint64_t v;

	memset(cfg, 0, sizeof *cfg);
	if (!tmp || !*tmp)
		tmp = scope_getenv("TMPDIR");
	copy(cfg->tmpdir, sizeof cfg->tmpdir, tmp && *tmp ? tmp : "/tmp");
	copy(cfg->output, sizeof cfg->output, scope_getenv("SCOPE_OUTPUT"));
	copy(cfg->compression, sizeof cfg->compression, scope_getenv("SCOPE_COMPRESSION"));
	copy(cfg->writer, sizeof cfg->writer, scope_getenv("SCOPE_WRITER"));
	copy(cfg->parts, sizeof cfg->parts, scope_getenv("SCOPE_PARTS"));
	locate(cfg);
	choose_role(cfg);

	v = parse_size(scope_getenv("SCOPE_BUFFER_SIZE"));
	cfg->chunk_bytes = v >= 4096 && v <= (64u << 20) ? (uint32_t)v : DEFAULT_CHUNK_BYTES;
	cfg->lane_capacity = DEFAULT_LANES;
	v = parse_size(scope_getenv("SCOPE_ARENA_MAX"));
	cfg->arena_max_bytes = v ? v : DEFAULT_ARENA_MAX;

	tmp = scope_getenv("SCOPE_CLOCK");
	cfg->force_monotonic = tmp && strcmp(tmp, "monotonic") == 0;
	tmp = scope_getenv("SCOPE_KEEP_ARENA");
	cfg->keep_arena = tmp && *tmp && strcmp(tmp, "0") != 0;
	tmp = scope_getenv("SCOPE_DEBUG");
	cfg->debug = tmp && *tmp && strcmp(tmp, "0") != 0;
}
