#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""MPI jobs under Debian's Open MPI: every rank's calls in one file per job.

Usage: mpi.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]
"""

import argparse
import os
import re
import shutil
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402
from check import SKIP, Failure, Skipped, expect, expect_eq  # noqa: E402

RANKS = 4


def mpirun(t, *args, env=None):
    argv = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS), *args]
    return t.run(argv, env=env or t.env())


def job(t, *prog_args, complete=True):
    """Runs the program on RANKS ranks, each under scope-run; returns the run and the job's file.

    A job whose ranks did not all finish leaves their profiles in job.h5.ranks:
    scope-merge job.h5 then makes the file, as the README says."""
    t.need_prog()
    t.need_scope()
    r = mpirun(t, t.scope_run, "-q", "-o", t.path("job.h5"), "--", t.prog, *prog_args)
    if not complete and not os.path.exists(t.path("job.h5")):
        t.run([os.path.join(os.path.dirname(t.scope_run), "scope-merge"), t.path("job.h5")],
              env=t.env()).expect_rc(0)
    expect(not os.path.exists(t.path("job.h5.ranks")), "the ranks' folder is left behind")
    expect(os.path.exists(t.path("job.h5")), f"no job profile (mpirun exited {r.rc})")
    return r, h5py.File(t.path("job.h5"), "r")


def per_rank(f):
    """{rank: {region: calls}} from the file."""
    names = f["regions/name"].asstr()[:]
    ranks = f["processes/rank"][:]
    out = {int(r): {} for r in ranks}
    p = f["pairs"]
    for proc, region, count in zip(p["process"][:], p["region"][:], p["count"][:]):
        out[int(ranks[proc])][names[region]] = int(count)
    return out


def case_ring(t):
    r, f = job(t)
    r.expect_rc(0)
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    said = {int(m[1]): int(m[2]) for m in re.finditer(rb"rank (\d+) calls step=10 work=(\d+)", r.stdout)}
    expect_eq(sorted(said), list(range(RANKS)), "ranks that printed their counts")
    for rank, calls in per_rank(f).items():
        expect_eq(calls, {"main": 1, "step": 10, "work": said[rank]}, f"calls on rank {rank}")
    expect_eq(f["metadata"].attrs["mpi_ranks"], RANKS, "/metadata mpi_ranks")
    expect_eq(f["metadata"].attrs["missing_ranks"], "", "/metadata missing_ranks")


def case_nompi(t):
    """A program that never calls MPI, run by mpirun: still one file with every rank."""
    r, f = job(t)
    r.expect_rc(0)
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    for rank, calls in per_rank(f).items():
        expect_eq(calls.get("fib"), 21891, f"calls of fib on rank {rank}")


def case_kill(t):
    """Rank 2 dies by SIGKILL: every other rank's calls are in the file, and rank 2's
    as far as its arena held them, or it is listed missing."""
    r, f = job(t, "kill", "2", complete=False)
    expect(r.rc != 0, "mpirun reported success though a rank was killed")
    ranks = sorted(int(x) for x in f["processes/rank"][:])
    missing = f["metadata"].attrs["missing_ranks"]
    listed = sorted(int(x) for x in missing.split(",")) if missing else []
    expect_eq(sorted(ranks + listed), list(range(RANKS)), f"ranks present {ranks} and listed missing {listed}")
    for rank, calls in per_rank(f).items():
        expect_eq(calls.get("step"), 10, f"calls of step on rank {rank}")
    if 2 in ranks:
        row = list(f["processes/rank"][:]).index(2)
        expect_eq(int(f["processes/complete"][row]), 0, "rank 2 recovered from its arena: complete")
        expect_eq(int(f["processes/exit_signal"][row]), 9, "rank 2's exit signal")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    for opt in ("--prog", "--bin", "--lib", "--src", "--workdir", "--sanitized"):
        ap.add_argument(opt)
    a = ap.parse_args()
    if not shutil.which("mpirun"):
        print(f"SKIP {a.case}: no mpirun (Debian: openmpi-bin)")
        return SKIP
    return check.run_case(CASES, a.case, lambda: check.Test(a))


if __name__ == "__main__":
    sys.exit(main())
