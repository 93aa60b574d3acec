/* SPDX-License-Identifier: MIT */
/* h5walk: every HDF5 call the profile reader and the merge make, on one file, to tell libhdf5's
 * crashes apart. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schema.h"

/*
 * usage: h5walk FILE...   walks each file in a child; prints FILE: ANSWER,
 *                         exits 1 when one was not "ok"
 *        h5walk --serve   reads one path a line; walks each in a child and
 *                         answers a line: "ok", "signal N", "timeout" or "exit N"
 *
 * The walk looks up from the root, by name, each name the reader looks up
 * (H5Lexists, H5Oopen) and reads what it finds; then it visits every object
 * (H5Ovisit) and does the same in each group. It reads every attribute, and
 * every dataset whole (those the reader would read) in the memory types the
 * reader uses, and a slice of each through a chunk cache as the reader's
 * cursors do. Last, it copies /metadata and each /process<N> group into a
 * file in memory, as the merge does, and reads the copy. It has no coverage instrumentation, so
 * fuzzing does not steer into it; it only answers whether libhdf5 itself survives an input. Built
 * with ASan, like the fuzzer, it sees the same out-of-bounds copies inside
 * libhdf5 (through ASan's memcpy and friends) that would otherwise crash the
 * fuzzer; in a child, ASan's report goes to /dev/null and its exit status
 * is the answer.
 */

/* Longer: libhdf5 hangs on the file (it spins on a damaged global heap, for
 * one). A seed takes 10 to 20 ms; each hang costs this much fuzzing time. */
#define WALK_MS	   200
#define READ_CAP   (64u << 20)	/* bytes of a dataset read whole */
#define MEMORY_CAP (4ull << 30) /* address space of a walk, without ASan */
#define SLICE_ROWS 65536u	/* the reader's default slice */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WALK_ASAN 1
/* No leak check (libhdf5 leaks on damaged files). An allocation past 2 GiB
 * (a forged length) ends the walk, as libFuzzer's malloc limit (its
 * -rss_limit_mb=2048) would end the fuzzer. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0:allocator_may_return_null=0:max_allocation_size_mb=2048:symbolize=0";
}
#endif
#endif

/*
 * Every link and attribute name the reader and the merge ask for: each
 * component of each group's path in lib/schema.h's table (/process<N> as
 * process0 to process2) and each field's name, columns as links and
 * attributes as attributes. Made once, from the table, so that a group or
 * field added to it is walked too.
 */
#define MAX_NAMES 512
static const char *link_names[MAX_NAMES], *attr_names[MAX_NAMES];
static size_t nlinks, nattrs;
#define N(a) (sizeof(a) / sizeof((a)[0]))

static void add_name(const char **names, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(names[i], name) == 0)
			return;
	if (*n < MAX_NAMES)
		names[(*n)++] = strdup(name);
}

static void collect_names(void)
{
	static const char *const processes[] = {"process0", "process1", "process2"};

	for (size_t g = 0; g < sc_ngroups; g++) {
		const struct sc_group *grp = &sc_groups[g];
		char *path = strdup(grp->path), *save = NULL;
		for (char *part = strtok_r(path, "/", &save); part;
		     part = strtok_r(NULL, "/", &save))
			if (strcmp(part, "process<N>") == 0)
				for (size_t i = 0; i < N(processes); i++)
					add_name(link_names, &nlinks, processes[i]);
			else
				add_name(link_names, &nlinks, part);
		free(path);
		for (size_t i = 0; i < grp->n; i++)
			if (grp->attributes)
				add_name(attr_names, &nattrs, grp->fields[i].name);
			else
				add_name(link_names, &nlinks, grp->fields[i].name);
	}
}

static hid_t vlen_string(hid_t like)
{
	hid_t mt = H5Tcopy(H5T_C_S1);
	H5Tset_size(mt, H5T_VARIABLE);
	H5Tset_cset(mt, H5Tget_cset(like));
	return mt;
}

static void read_attr(hid_t a)
{
	hid_t t = H5Aget_type(a), s = H5Aget_space(a), mt;
	hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;

	if (n == 1 && (c == H5T_INTEGER || c == H5T_FLOAT)) {
		int64_t i;
		double d;
		H5Aread(a, H5T_NATIVE_INT64, &i);
		H5Aread(a, H5T_NATIVE_DOUBLE, &d);
	} else if (n == 1 && c == H5T_STRING && H5Tis_variable_str(t) > 0) {
		char *v = NULL;
		mt = vlen_string(t);
		if (H5Aread(a, mt, &v) >= 0)
			H5free_memory(v);
		H5Tclose(mt);
	}
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
}

static herr_t each_attr(hid_t o, const char *name, const H5A_info_t *info, void *data)
{
	hid_t a = H5Aopen(o, name, H5P_DEFAULT);
	(void)info;
	(void)data;
	if (a >= 0) {
		read_attr(a);
		H5Aclose(a);
	}
	return 0;
}

static void walk_attrs(hid_t o)
{
	hsize_t idx = 0;
	H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, each_attr, NULL);
	for (size_t i = 0; i < nattrs; i++) {
		hid_t a;
		if (H5Aexists(o, attr_names[i]) <= 0 ||
		    (a = H5Aopen(o, attr_names[i], H5P_DEFAULT)) < 0)
			continue;
		read_attr(a);
		H5Aclose(a);
	}
}

/* The reader's width-matched memory type of an integer column. */
static hid_t width_type(size_t w)
{
	return w == 1	? H5T_NATIVE_UINT8
	       : w == 2 ? H5T_NATIVE_UINT16
	       : w == 4 ? H5T_NATIVE_UINT32
			: H5T_NATIVE_UINT64;
}

/* Reads rows [n/2, n/2 + SLICE_ROWS) at most through a dataset opened again with a chunk cache. */
static void read_slice(hid_t d, hid_t mt, hsize_t n, size_t width)
{
	char name[1024];
	hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS), file, d2, space, mem;
	hsize_t off = n / 2, cnt = n - n / 2 < SLICE_ROWS ? n - n / 2 : SLICE_ROWS;
	void *buf;

	if (H5Iget_name(d, name, sizeof name) <= 0 || dapl < 0)
		return;
	H5Pset_chunk_cache(dapl, 1021, 1u << 20, 1.0);
	file = H5Iget_file_id(d);
	d2 = file >= 0 ? H5Dopen2(file, name, dapl) : -1;
	if (file >= 0)
		H5Fclose(file);
	H5Pclose(dapl);
	if (d2 < 0)
		return;
	space = H5Dget_space(d2);
	mem = H5Screate_simple(1, &cnt, NULL);
	buf = calloc(cnt + 1, width);
	if (space >= 0 && mem >= 0 && buf &&
	    H5Sselect_hyperslab(space, H5S_SELECT_SET, &off, NULL, &cnt, NULL) >= 0)
		H5Dread(d2, mt, mem, space, H5P_DEFAULT, buf);
	free(buf);
	if (mem >= 0)
		H5Sclose(mem);
	if (space >= 0)
		H5Sclose(space);
	H5Dclose(d2);
}

/* Whether the reader would read d whole: it refuses a table whose rows
 * could not fit in its storage (lib/reader.c, MAX_PACKING), and reading
 * such a one here would only time the walk out. */
static int plausible(hid_t d, hssize_t n)
{
	return (uint64_t)n / 1100 <= H5Dget_storage_size(d) + 4096 && (uint64_t)n <= READ_CAP / 8;
}

static void read_numbers(hid_t d, hid_t s, hssize_t n, size_t w)
{
	if (plausible(d, n)) {
		void *buf = calloc((size_t)n + 1, 8);
		H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		H5Dread(d, width_type(w), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		free(buf);
	}
	/* The reader's cursors read event columns a slice at a time. */
	if (H5Sget_simple_extent_ndims(s) == 1)
		read_slice(d, width_type(w), (hsize_t)n, 8);
}

static void read_strings(hid_t d, hid_t t, hid_t s, hssize_t n)
{
	/* Not only plausible ones: the reader reads every column of a table
	 * whose first column is plausible, and strings are where libhdf5 breaks
	 * (global heap). */
	char **v = (uint64_t)n <= READ_CAP / 8 ? calloc((size_t)n + 1, sizeof *v) : NULL;
	hid_t mt = vlen_string(t);

	if (v && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0)
		H5Dvlen_reclaim(mt, s, H5P_DEFAULT, v);
	free(v);
	H5Tclose(mt);
}

static void read_dataset(hid_t d)
{
	hid_t t = H5Dget_type(d), s = H5Dget_space(d), plist = H5Dget_create_plist(d);
	hssize_t n = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
	H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
	hsize_t chunk;

	if (plist >= 0 && H5Pget_layout(plist) == H5D_CHUNKED)
		H5Pget_chunk(plist, 1, &chunk);
	if (n > 0 && c == H5T_INTEGER)
		read_numbers(d, s, n, H5Tget_size(t));
	else if (n > 0 && c == H5T_STRING && H5Tis_variable_str(t) > 0)
		read_strings(d, t, s, n);
	if (plist >= 0)
		H5Pclose(plist);
	if (s >= 0)
		H5Sclose(s);
	if (t >= 0)
		H5Tclose(t);
}

/* Looks up in g each name the reader looks up, as it does (by name, which
 * H5Ovisit's iteration does not do), and reads what it finds, down to depth
 * levels more: /process0/lanes/threads/tid is three below the root. Only
 * the attributes of the root and of /metadata are read here; H5Ovisit reads
 * the rest. */
static void lookup_names(hid_t g, int depth)
{
	for (size_t i = 0; i < nlinks; i++) {
		hid_t o;
		H5I_type_t type;
		if (H5Lexists(g, link_names[i], H5P_DEFAULT) <= 0 ||
		    (o = H5Oopen(g, link_names[i], H5P_DEFAULT)) < 0)
			continue;
		type = H5Iget_type(o);
		if (type == H5I_DATASET)
			read_dataset(o);
		else if (type == H5I_GROUP && depth > 0)
			lookup_names(o, depth - 1);
		if (strcmp(link_names[i], "metadata") == 0)
			walk_attrs(o);
		H5Oclose(o);
	}
}

static herr_t each_object(hid_t root, const char *name, const H5O_info_t *info, void *data)
{
	hid_t o = H5Oopen(root, name, H5P_DEFAULT);
	(void)data;
	if (o < 0)
		return 0;
	walk_attrs(o);
	if (info->type == H5O_TYPE_GROUP)
		lookup_names(o, 0);
	else if (info->type == H5O_TYPE_DATASET)
		read_dataset(o);
	H5Oclose(o);
	return 0;
}

/* The merge's copies: /metadata and each /process<N> group into another file. */
static herr_t copy_link(hid_t g, const char *name, const H5L_info_t *info, void *to)
{
	size_t n;
	(void)info;
	if (strcmp(name, "metadata") == 0 ||
	    (sscanf(name, "process%zu", &n) == 1 && strncmp(name, "processes", 9) != 0))
		H5Ocopy(g, name, *(hid_t *)to, name, H5P_DEFAULT, H5P_DEFAULT);
	return 0;
}

/* Copies what the merge copies into a file in memory, and reads the copy as the merge
 * then does (it renumbers the region columns of the copy). */
static void walk_copy(hid_t f)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), to = -1;
	hsize_t idx = 0;

	if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0)
		to = H5Fcreate("copy.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (to >= 0) {
		H5Literate(f, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_link, &to);
		H5Ovisit2(to, H5_INDEX_NAME, H5_ITER_NATIVE, each_object, NULL, H5O_INFO_BASIC);
		H5Fclose(to);
	}
	if (fapl >= 0)
		H5Pclose(fapl);
}

static void walk(const char *path)
{
	hid_t f;

	if (H5Fis_hdf5(path) <= 0)
		return;
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0)
		return;
	walk_attrs(f);
	lookup_names(f, 3);
	H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, each_object, NULL, H5O_INFO_BASIC);
	walk_copy(f);
	H5Fclose(f);
}

/* Walks path in a child; the answer line. */
static const char *walk_in_child(const char *path, int quiet, char *buf, size_t cap)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return "exit 126";
	if (pid == 0) {
		struct itimerval limit = {{0, 0}, {WALK_MS / 1000, WALK_MS % 1000 * 1000}};
#ifndef WALK_ASAN
		struct rlimit rl = {MEMORY_CAP, MEMORY_CAP};
		setrlimit(RLIMIT_AS, &rl);
#endif
		if (quiet)
			dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
		signal(SIGALRM, SIG_DFL);
		setitimer(ITIMER_REAL, &limit, NULL);
		walk(path);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return "exit 126";
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		return "timeout";
	if (WIFSIGNALED(status))
		snprintf(buf, cap, "signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		snprintf(buf, cap, "exit %d", WEXITSTATUS(status));
	else
		return "ok";
	return buf;
}

static int serve(void)
{
	char path[4096], answer[64];

	while (fgets(path, sizeof path, stdin)) {
		path[strcspn(path, "\n")] = '\0';
		printf("%s\n", walk_in_child(path, 1, answer, sizeof answer));
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit no_core = {0, 0};
	int bad = 0;

	setrlimit(RLIMIT_CORE, &no_core);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	collect_names();
	if (argc == 2 && strcmp(argv[1], "--serve") == 0)
		return serve();
	if (argc < 2) {
		fputs("usage: h5walk FILE... | h5walk --serve\n", stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		char buf[64];
		const char *answer = walk_in_child(argv[i], 0, buf, sizeof buf);
		printf("%s: %s\n", argv[i], answer);
		bad |= strcmp(answer, "ok") != 0;
	}
	return bad;
}
