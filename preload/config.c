/* SPDX-License-Identifier: MIT */
/* Reads the SCOPE_* environment variables once, at start-up. */
#define _GNU_SOURCE
#include "arena_dir.h"
#include "libcall.h"
#include "settings.h"
#include "state.h"
#include "storage.h"

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

static SCOPE_NOINST void early_load(void)
{
	int fd;
	ssize_t k;

	if (early_len || (fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC)) < 0)
		return;
	while (early_len < sizeof early_env - 1 &&
	       (k = read(fd, early_env + early_len, sizeof early_env - 1 - early_len)) > 0)
		early_len += (size_t)k;
	close(fd);
}

static SCOPE_NOINST const char *early_getenv(const char *name)
{
	size_t n = strlen(name);

	early_load();
	for (size_t i = 0; i < early_len; i += strlen(early_env + i) + 1)
		if (strncmp(early_env + i, name, n) == 0 && early_env[i + n] == '=')
			return early_env + i + n + 1;
	return NULL;
}

const char *scope_getenv(const char *name)
{
	return environ ? getenv(name) : early_getenv(name);
}

/* Returns -1 when src does not fit: no path the system accepts is that
 * long, so the setting cannot be honoured as given. */
static SCOPE_NOINST int copy(char *dst, size_t cap, const char *src)
{
	if (!src)
		return 0;
	if (strlen(src) >= cap)
		return -1;
	strcpy(dst, src);
	return 0;
}

/* A path setting, or one line saying why this process is not profiled. */
static SCOPE_NOINST int copy_path(char *dst, const char *var, const char *value)
{
	if (copy(dst, SCOPE_PATH_BYTES, value) == 0)
		return 0;
	scope_log("%s is longer than any path can be (%zu bytes); this process is not profiled",
		  var, strlen(value));
	return -1;
}

/* "64K", "16M", "2G" or plain bytes; 0 when unreadable (a sign, a
 * fraction, an unknown unit, or more than 2^63). */
static SCOPE_NOINST uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k':
	case 'K': shift = 10; break;
	case 'm':
	case 'M': shift = 20; break;
	case 'g':
	case 'G': shift = 30; break;
	default: break;
	}
	end += shift != 0;
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || v > (UINT64_C(1) << 63) >> shift)
		return 0;
	return (uint64_t)v << shift;
}

/* A size setting: the default when unset, and when unreadable or out of
 * [lo, hi] one line saying the default is used instead. */
static SCOPE_NOINST uint64_t size_setting(const char *var, uint64_t lo, uint64_t hi, uint64_t dflt)
{
	const char *s = scope_getenv(var);
	uint64_t v;

	if (!s || !*s)
		return dflt;
	v = parse_size(s);
	if (v >= lo && v <= hi)
		return v;
	scope_log("%s='%s' is not a size from %llu to %llu bytes (say 64K, 16M or 2G); using "
		  "%llu",
		  var, s, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)dflt);
	return dflt;
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
static SCOPE_NOINST int absolute(char *path, const char *var)
{
	char cwd[SCOPE_PATH_BYTES], joined[2 * SCOPE_PATH_BYTES + 2];
	if (!path[0] || path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return 0;
	snprintf(joined, sizeof joined, "%s/%s", cwd, path);
	return copy_path(path, var, joined);
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

/* Whether another process of the run wrote, or will write, the output: a
 * profiled process set SCOPE_ROOT to its pid for those it starts. The
 * same pid is the run's first process itself, in a program it exec'd: its
 * last image writes the output. Anything else there is a mistake, said
 * once and ignored. */
static SCOPE_NOINST int started_by_root(void)
{
	const char *v = scope_getenv("SCOPE_ROOT");
	char *end;
	long pid;

	if (!v)
		return 0;
	pid = *v >= '1' && *v <= '9' ? strtol(v, &end, 10) : 0;
	if (pid > 0 && !*end)
		return pid != (long)getpid();
	scope_log("SCOPE_ROOT='%s' is not a process id (the library sets it for the processes a "
		  "profiled one starts); ignored: this process writes the output",
		  v);
	return 0;
}

/*
 * The run's first process writes the output; every later one -- a child, or
 * a program exec'd by any of them -- writes a part, in SCOPE_PARTS when
 * scope-run gave one, else beside the output, for scope-merge. The first
 * process marks the environment it hands down with SCOPE_ROOT and the
 * output's absolute name.
 */
static SCOPE_NOINST int choose_role(struct scope_config *cfg)
{
	char pid[32];

	cfg->role = cfg->parts[0] || started_by_root() ? SCOPE_ROLE_PART : SCOPE_ROLE_ROOT;
	if (!cfg->output[0])
		default_output(cfg->output, sizeof cfg->output);
	if (absolute(cfg->output, "SCOPE_OUTPUT") != 0 ||
	    absolute(cfg->parts, "SCOPE_PARTS") != 0 ||
	    absolute(cfg->tmpdir, "SCOPE_TMPDIR") != 0 ||
	    absolute(cfg->arena_dir, "SCOPE_ARENA_DIR") != 0)
		return -1;
	if (cfg->role != SCOPE_ROLE_ROOT)
		return 0;
	if (!environ) {
		cfg->export_later = 1; /* libc sets environ up after this */
		return 0;
	}
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	setenv("SCOPE_ROOT", pid, 1);
	setenv("SCOPE_OUTPUT", cfg->output, 1);
	if (scope_getenv("SCOPE_TMPDIR"))
		setenv("SCOPE_TMPDIR", cfg->tmpdir, 1);
	if (scope_getenv("SCOPE_ARENA_DIR"))
		setenv("SCOPE_ARENA_DIR", cfg->arena_dir, 1);
	return 0;
}

/* What choose_role could not put into the environment yet. */
void scope_config_export(struct scope_config *cfg)
{
	if (!cfg->export_later || !environ)
		return;
	cfg->export_later = 0;
	(void)choose_role(cfg); /* the paths were checked the first time */
}

/* A switch: set, and neither empty nor 0. */
static SCOPE_NOINST int flag(const char *var)
{
	const char *v = scope_getenv(var);
	return v && *v && strcmp(v, "0") != 0;
}

/* The storage settings the writer will take, checked now: a mistake gets
 * one line at start-up and the default, not a profile lost at exit. */
static SCOPE_NOINST void storage_settings(struct scope_config *cfg)
{
	const char *v = scope_getenv("SCOPE_COMPRESSION");
	struct storage st;

	if (v && *v && storage_parse(&st, v) != 0)
		scope_log("SCOPE_COMPRESSION='%s' is not auto, none, gzip or gzip:1..9; using auto",
			  v);
	else
		copy(cfg->compression, sizeof cfg->compression, v);
	v = scope_getenv("SCOPE_CHUNK_SIZE");
	cfg->chunk_size_bad = storage_parse_chunk(&st, v) != 0;
	if (cfg->chunk_size_bad)
		scope_log("SCOPE_CHUNK_SIZE='%s' is not 1 to %u elements; using the default", v,
			  STORAGE_MAX_CHUNK);
}

/* SCOPE_LIBCALLS: the kinds of C library calls recorded as regions. By
 * default the waits, which are time a thread spent blocked, not working;
 * I/O calls can be many and short, each one more row in the profile. */
static SCOPE_NOINST int libcalls_setting(void)
{
	static const struct {
		const char *name;
		int kinds;
	} values[] = {{"none", 0},
		      {"wait", SCOPE_LIBCALL_WAIT},
		      {"io", SCOPE_LIBCALL_IO},
		      {"all", SCOPE_LIBCALL_WAIT | SCOPE_LIBCALL_IO}};
	const char *v = scope_getenv("SCOPE_LIBCALLS");

	if (!v || !*v)
		return SCOPE_LIBCALL_WAIT;
	for (size_t i = 0; i < sizeof values / sizeof *values; i++)
		if (strcmp(v, values[i].name) == 0)
			return values[i].kinds;
	scope_log("SCOPE_LIBCALLS='%s' is not none, wait, io or all; using wait", v);
	return SCOPE_LIBCALL_WAIT;
}

/* Edits (insertions, deletions, substitutions) from a to the first n bytes
 * of b, for names shorter than 64 bytes; 64 for longer ones. */
static SCOPE_NOINST size_t distance(const char *a, const char *b, size_t n)
{
	size_t m = strlen(a), row[64], diag, up;

	if (m >= 64 || n >= 64)
		return 64;
	for (size_t j = 0; j <= n; j++)
		row[j] = j;
	for (size_t i = 1; i <= m; i++) {
		diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= n; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[n];
}

/* One line for a SCOPE_* variable that no scope program reads (entry is
 * "NAME=value"), naming the known one nearest to it when it is a likely
 * typo. */
static SCOPE_NOINST void check_name(const char *entry)
{
#define SETTING(name, values) {name, values},
	static const struct {
		const char *name, *values;
	} known[] = {SCOPE_SETTINGS(SETTING)};
#undef SETTING
	size_t n = strcspn(entry, "="), best = 0, d = 64;

	if (strncmp(entry, "SCOPE_", 6) != 0)
		return;
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		size_t k = distance(known[i].name, entry, n);
		if (k == 0)
			return;
		if (k < d)
			d = k, best = i;
	}
	if (d <= 3)
		scope_log("%.*s='%s' is not a scope variable; did you mean %s (%s)? It is ignored "
			  "(scope(7) lists the variables)",
			  (int)n, entry, entry + n + (entry[n] == '='), known[best].name,
			  known[best].values);
	else
		scope_log("%.*s='%s' is not a scope variable; it is ignored (scope(7) lists the "
			  "variables)",
			  (int)n, entry, entry + n + (entry[n] == '='));
}

/* Every SCOPE_* variable of the environment is one a scope program reads. */
static SCOPE_NOINST void check_names(void)
{
	if (environ) {
		for (char **e = environ; *e; e++)
			check_name(*e);
		return;
	}
	early_load();
	for (size_t i = 0; i < early_len; i += strlen(early_env + i) + 1)
		check_name(early_env + i);
}

/* SCOPE_CLOCK: 1 for monotonic, 0 for the default. */
static SCOPE_NOINST int monotonic_setting(void)
{
	const char *v = scope_getenv("SCOPE_CLOCK");

	if (!v || !*v || strcmp(v, "tsc") == 0)
		return 0;
	if (strcmp(v, "monotonic") == 0)
		return 1;
	scope_log("SCOPE_CLOCK='%s' is not tsc or monotonic; using tsc where it is invariant", v);
	return 0;
}

/* SCOPE_PROGRESS, which the writer reads at exit: checked now, as the
 * storage settings are, so that a mistake is said at start. */
static SCOPE_NOINST void progress_setting(void)
{
	const char *v = scope_getenv("SCOPE_PROGRESS");
	char *end;
	double s;

	if (!v || !*v || strcmp(v, "off") == 0)
		return;
	s = strtod(v, &end);
	if (*end || !(s >= 0))
		scope_log("SCOPE_PROGRESS='%s' is not off or a number of seconds; using 1", v);
}

/* SCOPE_WRITE=exit: no writer drains the arena while the program runs. */
static SCOPE_NOINST int writes_at_exit(void)
{
	const char *when = scope_getenv("SCOPE_WRITE");

	return when && strcmp(when, "exit") == 0;
}

int scope_config_read(struct scope_config *cfg)
{
	const char *tmp = scope_getenv("SCOPE_TMPDIR");

	memset(cfg, 0, sizeof *cfg);
	check_names();
	if (!tmp || !*tmp)
		tmp = scope_getenv("TMPDIR");
	if (copy_path(cfg->tmpdir, "SCOPE_TMPDIR", tmp && *tmp ? tmp : "/tmp") != 0 ||
	    copy_path(cfg->output, "SCOPE_OUTPUT", scope_getenv("SCOPE_OUTPUT")) != 0 ||
	    copy_path(cfg->writer, "SCOPE_WRITER", scope_getenv("SCOPE_WRITER")) != 0 ||
	    copy_path(cfg->parts, "SCOPE_PARTS", scope_getenv("SCOPE_PARTS")) != 0 ||
	    copy_path(cfg->run_writer, "SCOPE_RUN_WRITER", scope_getenv("SCOPE_RUN_WRITER")) != 0 ||
	    copy_path(cfg->arena_dir, "SCOPE_ARENA_DIR",
		      arena_dir_choose(scope_getenv("SCOPE_ARENA_DIR"),
				       scope_getenv("SCOPE_TMPDIR"), cfg->tmpdir,
				       writes_at_exit())) != 0)
		return -1;
	storage_settings(cfg);
	locate(cfg);
	if (choose_role(cfg) != 0)
		return -1;

	cfg->chunk_bytes =
		(uint32_t)size_setting("SCOPE_BUFFER_SIZE", 4096, 64u << 20, DEFAULT_CHUNK_BYTES);
	cfg->lane_capacity = DEFAULT_LANES;
	cfg->arena_max_bytes =
		size_setting("SCOPE_ARENA_MAX", 1, UINT64_C(1) << 50, DEFAULT_ARENA_MAX);

	cfg->force_monotonic = monotonic_setting();
	cfg->keep_arena = flag("SCOPE_KEEP_ARENA");
	cfg->debug = flag("SCOPE_DEBUG");
	cfg->libcalls = libcalls_setting();
	cfg->start_paused = flag("SCOPE_START_PAUSED");
	cfg->heap = flag("SCOPE_HEAP");
	progress_setting();
	return 0;
}
