/* SPDX-License-Identifier: MIT */
/* scope-merge: combines the profiles of a run's processes into one file. */
#define _GNU_SOURCE
#include "merge.h"
#include "merge_parts.h"
#include "reader.h"

#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: scope-merge [options] OUTPUT\n"
	"       scope-merge [options] -o OUTPUT INPUT...\n"
	"       scope-merge [options] --parts DIR -o OUTPUT\n"
	"Combine the profiles of a run's processes into one. With OUTPUT alone, merge\n"
	"OUTPUT and the parts its run left beside it (OUTPUT-STEM.*.part.h5).\n"
	"\n"
	"  -o, --output FILE        the merged profile\n"
	"      --parts DIR          merge every .h5 file in DIR\n"
	"      --compression SPEC   auto (default), none, gzip or gzip:LEVEL (1-9)\n"
	"      --chunk-size N       elements per HDF5 chunk\n"
	"      --keep               keep the inputs (default: parts are removed once merged)\n"
	"      --ranks N            an MPI job of N ranks: list the ranks missing in /metadata\n"
	"  -q, --quiet              no progress line on a terminal\n"
	"  -h, --help               this text\n"
	"  -V, --version            the version\n";

struct options {
	const char *output, *parts, *compression, *chunk;
	int keep, ranks, quiet;
	char **inputs;
	int ninputs;
};

static void parse(int argc, char **argv, struct options *o)
{
	enum { PARTS = 256, COMPRESSION, CHUNK, KEEP, RANKS };
	static const struct option longs[] = {{"output", required_argument, 0, 'o'},
					      {"parts", required_argument, 0, PARTS},
					      {"compression", required_argument, 0, COMPRESSION},
					      {"chunk-size", required_argument, 0, CHUNK},
					      {"keep", no_argument, 0, KEEP},
					      {"ranks", required_argument, 0, RANKS},
					      {"quiet", no_argument, 0, 'q'},
					      {"help", no_argument, 0, 'h'},
					      {"version", no_argument, 0, 'V'},
					      {0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof *o);
	while ((c = getopt_long(argc, argv, "o:qhV", longs, NULL)) != -1) {
		switch (c) {
		case 'o': o->output = optarg; break;
		case PARTS: o->parts = optarg; break;
		case COMPRESSION: o->compression = optarg; break;
		case CHUNK: o->chunk = optarg; break;
		case KEEP: o->keep = 1; break;
		case 'q': o->quiet = 1; break;
		case RANKS: o->ranks = atoi(optarg); break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("scope-merge %s\n", SCOPE_VERSION); exit(0);
		default: fputs("scope-merge: see scope-merge --help\n", stderr); exit(2);
		}
	}
	o->inputs = argv + optind;
	o->ninputs = argc - optind;
	if (!o->output && !o->parts && o->ninputs == 1) {
		o->output = o->inputs[0];
		o->ninputs = 0;
	}
	if (!o->output || (o->parts && o->ninputs) || (!o->parts && !o->ninputs && !o->output)) {
		fputs("scope-merge: give OUTPUT, or -o OUTPUT with inputs or --parts DIR (see "
		      "scope-merge --help)\n",
		      stderr);
		exit(2);
	}
}

/* Exits when the output would replace what it is made of: one of the
 * inputs named (or a link to it), or a file of the parts folder. */
static void refuse_overwrite(const struct options *o)
{
	char *dir = strdup(o->output);

	for (int i = 0; i < o->ninputs; i++)
		if (rd_same_file(o->output, o->inputs[i])) {
			fprintf(stderr, "scope-merge: -o %s is the input %s: give another output\n",
				o->output, o->inputs[i]);
			exit(2);
		}
	if (o->parts && dir && rd_same_file(dirname(dir), o->parts)) {
		fprintf(stderr,
			"scope-merge: -o %s is inside --parts %s, whose files it merges: give an "
			"output outside it\n",
			o->output, o->parts);
		exit(2);
	}
	free(dir);
}

int main(int argc, char **argv)
{
	struct options o;
	struct storage st;
	struct merge_request r;
	char err[1024];

	parse(argc, argv, &o);
	refuse_overwrite(&o);
	if (storage_parse(&st, o.compression) != 0 || storage_parse_chunk(&st, o.chunk) != 0) {
		fputs("scope-merge: bad storage setting: use auto, none, gzip or gzip:1..9\n",
		      stderr);
		return 2;
	}
	r = (struct merge_request){o.output, o.parts, o.inputs, o.ninputs,    &st,
				   o.keep,   o.ranks, o.quiet,	"scope-merge"};
	if (merge_profiles(&r, err, sizeof err) != 0) {
		fprintf(stderr, "scope-merge: %s\n", err);
		return 1;
	}
	/* OUTPUT alone merged what its run left, an MPI job's ranks included */
	if (!o.parts && !o.ninputs && !o.keep && parts_remove_ranks_folder(o.output) != 0)
		fprintf(stderr, "scope-merge: %s.ranks still holds files it did not merge\n",
			o.output);
	return 0;
}
