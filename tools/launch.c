/* SPDX-License-Identifier: MIT */
/* Starting a program under libscope_preload.so: shared by scope-run and scope-bench. */
#define _GNU_SOURCE
#include "launch.h"

#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int launch_find_program(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;

	if (strchr(name, '/')) {
		snprintf(out, cap, "%s", name);
		return access(out, X_OK);
	}
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -1;
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		struct stat st;
		snprintf(out, cap, "%s/%s", *dir ? dir : ".", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) {
			free(copy);
			return 0;
		}
	}
	free(copy);
	return -1;
}

/* A program the dynamic loader never runs (static), or runs in secure mode
 * (setuid/setgid for someone else), never loads a preloaded library. */
const char *launch_cannot_preload(const char *path)
{
	Elf64_Ehdr eh;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *why = NULL;

	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		why = "is setuid or setgid: the loader ignores LD_PRELOAD for it";
	else if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
		 memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64) {
		int dynamic = 0;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof ph,
				  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof ph)
				break;
			dynamic |= ph.p_type == PT_INTERP;
		}
		if (!dynamic)
			why = "is statically linked: it never loads a preloaded library (link it "
			      "dynamically)";
	}
	close(fd);
	return why;
}

/* Where the running tool lives: BINDIR. */
static void self_dir(char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		snprintf(out, cap, ".");
		return;
	}
	exe[n] = '\0';
	snprintf(out, cap, "%s", dirname(exe));
}

int launch_locate(struct launch_paths *p, const char *tool)
{
	const char *env_lib = getenv("SCOPE_PRELOAD_LIB");

	self_dir(p->bindir, sizeof p->bindir);
	if (env_lib && *env_lib)
		snprintf(p->lib, sizeof p->lib, "%s", env_lib);
	else
		snprintf(p->lib, sizeof p->lib, "%s/../lib/libscope_preload.so", p->bindir);
	snprintf(p->writer, sizeof p->writer, "%s/scope-writer", p->bindir);
	if (access(p->lib, R_OK) != 0) {
		fprintf(stderr, "%s: cannot find %s (set SCOPE_PRELOAD_LIB to its path)\n", tool,
			p->lib);
		return -1;
	}
	return 0;
}

void launch_absolute(char *out, size_t cap, const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
		snprintf(out, cap, "%s", path);
	else
		snprintf(out, cap, "%s/%s", cwd, path);
}

int launch_env(const struct launch_paths *p, const char *output, const struct run_dirs *d,
	       const struct run_writer *w)
{
	const char *pre = getenv("LD_PRELOAD");
	char *value = (char *)p->lib;

	/* Libraries the user preloads (a sanitizer runtime, say) stay first. */
	if (pre && *pre && asprintf(&value, "%s %s", pre, p->lib) < 0)
		return -1;
	setenv("LD_PRELOAD", value, 1);
	setenv("SCOPE_OUTPUT", output, 1);
	setenv("SCOPE_PARTS", d->parts, 1);
	setenv("SCOPE_ARENA_DIR", d->arenas, 1);
	/* in the temporary folder, the stores go beside their arenas, in the run's folder */
	if (!d->stores_apart)
		setenv("SCOPE_TMPDIR", d->arenas, 1);
	unsetenv("SCOPE_ROOT");
	if (!getenv("SCOPE_WRITER"))
		setenv("SCOPE_WRITER", p->writer, 1);
	if (w->pid)
		setenv("SCOPE_RUN_WRITER", w->socket, 1);
	else
		unsetenv("SCOPE_RUN_WRITER");
	return 0;
}
