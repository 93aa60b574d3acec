/* SPDX-License-Identifier: MIT */
/* Unit tests of the error convention in shared code: arena_open and merge_profiles print nothing,
 * and hand their reason to the program that called them. */
#include "merge.h"
#include "storage.h"
#include "unit.h"
#include "writer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], said[1024];
static int saved = -1, capture = -1;

/* stderr into a file of its own until heard(). */
static void hear(void)
{
	char path[128];

	fflush(stderr);
	snprintf(path, sizeof path, "%s/stderr", dir);
	capture = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	saved = dup(STDERR_FILENO);
	if (capture >= 0 && saved >= 0)
		dup2(capture, STDERR_FILENO);
}

/* What was printed on stderr since hear(). */
static const char *heard(void)
{
	ssize_t n = -1;

	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	if (capture >= 0) {
		n = pread(capture, said, sizeof said - 1, 0);
		close(capture);
	}
	said[n > 0 ? n : 0] = '\0';
	saved = capture = -1;
	return said;
}

static void write_file(const char *path, size_t bytes)
{
	char *zeros = calloc(1, bytes + 1);
	FILE *f = fopen(path, "wb");

	if (f && zeros)
		fwrite(zeros, 1, bytes, f);
	if (f)
		fclose(f);
	free(zeros);
}

/* arena_open refuses path with the cause noted, why, and prints nothing. */
static void arena_refuses(const char *path, const char *why)
{
	struct arena a;

	writer_fail_reset();
	hear();
	EXPECT_I64(-1, arena_open(&a, path), "arena_open(%s)", path);
	EXPECT_STR("", heard(), "what arena_open(%s) printed", path);
	EXPECT_STR(why, writer_failure(), "the cause arena_open(%s) noted", path);
}

static void arenas(void)
{
	char path[128], why[256];

	snprintf(path, sizeof path, "%s/missing.arena", dir);
	snprintf(why, sizeof why, "cannot open %s: No such file or directory", path);
	arena_refuses(path, why);
	snprintf(path, sizeof path, "%s/short.arena", dir);
	write_file(path, 16);
	snprintf(why, sizeof why, "%s is not a usable scope arena: too short", path);
	arena_refuses(path, why);
	snprintf(path, sizeof path, "%s/zeros.arena", dir);
	write_file(path, 2 * sizeof(struct scope_arena_header));
	snprintf(why, sizeof why, "%s is not a usable scope arena: wrong magic", path);
	arena_refuses(path, why);
}

/* merge_profiles refuses r with the reason why in err, prints nothing, writes nothing. */
static void merge_refuses(struct merge_request *r, const char *why, const char *what)
{
	char err[1024] = "";

	hear();
	EXPECT_I64(-1, merge_profiles(r, err, sizeof err), "merge_profiles(%s)", what);
	EXPECT_STR("", heard(), "what merge_profiles(%s) printed", what);
	EXPECT_STR(why, err, "the reason merge_profiles(%s) gave", what);
	EXPECT_I64(-1, access(r->output, F_OK), "access(the output of merge_profiles(%s))", what);
}

static void merges(void)
{
	char out[128], missing[128], arena[128], why[512];
	char *inputs[] = {missing, arena};
	struct storage st;
	struct merge_request r = {
		.output = out, .inputs = inputs, .st = &st, .quiet = 1, .who = "unit"};

	storage_parse(&st, NULL);
	snprintf(out, sizeof out, "%s/merged.h5", dir);
	snprintf(missing, sizeof missing, "%s/missing.h5", dir);
	snprintf(arena, sizeof arena, "%s/zeros.arena", dir);
	r.ninputs = 1;
	snprintf(why, sizeof why, "%s: No such file or directory", missing);
	merge_refuses(&r, why, "a missing input");
	inputs[0] = arena;
	snprintf(why, sizeof why, "%s: not an HDF5 file", arena);
	merge_refuses(&r, why, "an input that is no profile");
	r.ninputs = 0;
	snprintf(why, sizeof why, "no profiles to merge for %s", out);
	merge_refuses(&r, why, "an output with nothing beside it");
}

void unit_errors(void)
{
	static const char *const made[] = {"short.arena", "zeros.arena", "stderr"};
	char path[128];

	snprintf(dir, sizeof dir, "unit-errors-XXXXXX");
	if (!mkdtemp(dir)) {
		EXPECT_STR("a folder", NULL, "mkdtemp(%s)", dir);
		return;
	}
	arenas();
	merges();
	for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, made[i]);
		unlink(path);
	}
	EXPECT_I64(0, rmdir(dir), "rmdir(%s): only what the tests made was in it", dir);
}
