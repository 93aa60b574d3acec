#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""MPI jobs under Debian's Open MPI: every rank's calls in one file per job.

Usage: mpi.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]
"""

import os
import re
import shutil
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

RANKS = 4


# The launcher: Open MPI's mpirun (default), or MPICH's Hydra with --mpi mpich.
LAUNCHER = {"openmpi": ["mpirun", "--allow-run-as-root", "--oversubscribe"],
            "mpich": ["mpirun.mpich"]}
FLAVOUR = "openmpi"


def pass_env(name, value=None):
    """The launcher's arguments that pass one variable to every rank."""
    if FLAVOUR == "mpich":
        return ["-genv", name, value if value is not None else os.environ.get(name, "")]
    return ["-x", name if value is None else f"{name}={value}"]


def mpirun(t, *args, env=None):
    argv = [*LAUNCHER[FLAVOUR], "-np", str(RANKS), *args]
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


def per_rank_calls(f):
    """{rank: {region: facts}}: each pair's calls in start order, with the bytes of each call
    (zeros when the file has no bytes columns) and the pair's sums, the region's kind and module."""
    names, kinds = f["regions/name"].asstr()[:], f["regions/kind"].asstr()[:]
    modules = f["regions/module"].asstr()[:]
    ranks = f["processes/rank"][:]
    p, ev = f["pairs"], f["events"]
    cols = {c: ev[c][:] for c in ("depth", "bytes_sent", "bytes_received") if c in ev}
    out = {int(r): {} for r in ranks}
    for row in range(len(p["process"])):
        region, lo = int(p["region"][row]), int(p["first"][row])
        hi = lo + int(p["count"][row])
        sent = cols.get("bytes_sent", np.zeros(hi))[lo:hi]
        received = cols.get("bytes_received", np.zeros(hi))[lo:hi]
        out[int(ranks[p["process"][row]])][names[region]] = {
            "count": hi - lo, "kind": kinds[region], "module": os.path.basename(modules[region]),
            "depth": sorted({int(d) for d in cols["depth"][lo:hi]}),
            "bytes": [(int(a), int(b)) for a, b in zip(sent, received)],
            "pair": (int(p["bytes_sent"][row]) if "bytes_sent" in p else 0,
                     int(p["bytes_received"][row]) if "bytes_received" in p else 0)}
    return out


def check_mpi_regions(rank, calls, want):
    """Every region of the rank exactly as WANT says: {name: (depth, [(sent, received) per call])}
    for MPI calls, {name: (depth, count)} for the program's functions."""
    expect_eq(sorted(calls), sorted(want), f"regions on rank {rank}")
    for name, (depth, expected) in want.items():
        got = calls[name]
        mpi = isinstance(expected, list)
        count = len(expected) if mpi else expected
        expect_eq(got["count"], count, f"calls of {name} on rank {rank}")
        expect_eq(got["depth"], [depth], f"depth of {name} on rank {rank}")
        expect_eq(got["kind"], "mpi" if mpi else "function", f"kind of {name}")
        if mpi:
            expect_eq(got["module"], "libscope_preload.so", f"module of {name}")
            expect_eq(got["bytes"], expected, f"bytes (sent, received) of each {name} on rank {rank}")
        else:
            expect(all(b == (0, 0) for b in got["bytes"]), f"{name} on rank {rank} has bytes {got['bytes']}")
        expect_eq(got["pair"], (sum(b[0] for b in got["bytes"]), sum(b[1] for b in got["bytes"])),
                  f"/pairs bytes of {name} on rank {rank}")


def ring_regions(work):
    """What ring.c does on one rank: 10 steps, each a Sendrecv_replace of one int, WORK calls of
    work, one Allreduce of one double."""
    return {"main": (0, 1), "step": (1, 10), "work": (1, work),
            "MPI_Init": (1, [(0, 0)]), "MPI_Sendrecv_replace": (2, [(4, 4)] * 10),
            "MPI_Allreduce": (1, [(8, 8)]), "MPI_Finalize": (1, [(0, 0)])}


def case_ring(t):
    r, f = job(t)
    r.expect_rc(0)
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    said = {int(m[1]): int(m[2]) for m in re.finditer(rb"rank (\d+) calls step=10 work=(\d+)", r.stdout)}
    expect_eq(sorted(said), list(range(RANKS)), "ranks that printed their counts")
    for rank, calls in per_rank_calls(f).items():
        check_mpi_regions(rank, calls, ring_regions(said[rank]))
    expect_eq(f["metadata"].attrs["mpi_ranks"], RANKS, "/metadata mpi_ranks")
    expect_eq(f["metadata"].attrs["missing_ranks"], "", "/metadata missing_ranks")


def case_nompi(t):
    """A program that never calls MPI, run by mpirun: still one file with every rank."""
    r, f = job(t)
    r.expect_rc(0)
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    for rank, calls in per_rank(f).items():
        expect_eq(calls.get("fib"), 21891, f"calls of fib on rank {rank}")
        expect(not any(name.startswith("MPI_") for name in calls), f"MPI regions on rank {rank}")
    expect(set(f["regions/kind"].asstr()[:]) == {"function"}, "regions of a kind other than function")
    for group in ("events", "pairs"):
        expect(not {"bytes_sent", "bytes_received"} & set(f[group]),
               f"/{group} has bytes columns though no process made MPI calls")


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


def case_rerun(t):
    """A job run again into the output of one whose ranks did not all finish: the earlier
    job's rank files and arrival count in job.h5.ranks do not start the merge early, and
    job.h5 holds the new job's four ranks only."""
    t.need_prog()
    t.need_scope()
    env = {k: v for k, v in t.env().items() if not k.startswith(("OMPI_", "PMIX_", "PMI_", "SLURM_"))}
    t.run([t.scope_run, "-q", "-o", t.path("stale.h5"), "--", t.prog], env=env).expect_rc(0)
    stale = {int(p) for p in h5py.File(t.path("stale.h5"), "r")["processes/pid"][:]}
    folder = t.path("job.h5.ranks")
    os.makedirs(folder)
    counter = os.path.join(folder, "arrivals-1234")
    open(counter, "w").close()
    for rank in range(RANKS - 1):
        shutil.copyfile(t.path("stale.h5"), os.path.join(folder, f"rank-{rank:06d}.h5"))
        os.link(counter, os.path.join(folder, f"arrived-1234-{rank:06d}"))
    r, f = job(t)
    r.expect_rc(0)
    pids = {int(p) for p in f["processes/pid"][:]}
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    expect(not pids & stale, f"processes of the earlier job were merged: {sorted(pids & stale)}")
    said = {int(m[1]): int(m[2]) for m in re.finditer(rb"rank (\d+) calls step=10 work=(\d+)", r.stdout)}
    for rank, calls in per_rank_calls(f).items():
        check_mpi_regions(rank, calls, ring_regions(said[rank]))


def calls_regions(r, n):
    """What calls.c does on rank R of N, call by call: (sent, received) bytes of each MPI call in
    the order made, by the rules of docs/SCHEMA.md ("MPI calls"). ints are 4 bytes, doubles 8."""
    tri = n * (n + 1) // 2  # the v-variants give rank i a block of i+1 elements
    none = (0, 0)
    return {
        "main": (0, 1), "ring": (1, 1), "nonblocking": (1, 1), "exchange": (1, 1), "collectives": (1, 1),
        "MPI_Init_thread": (1, [none]), "MPI_Finalize": (1, [none]),
        # round i: (i+1)*20 ints each way, then MPI_PROC_NULL both ways
        "MPI_Send": (2, [((i + 1) * 80, 0) for i in range(5)] + [none]),
        "MPI_Recv": (2, [(0, (i + 1) * 80) for i in range(5)] + [none]),
        # 3 x 50 doubles, 7 ints, 2 ints; the receive counts what it posted
        "MPI_Isend": (2, [(400, 0)] * 3 + [(28, 0), (8, 0)]),
        "MPI_Irecv": (2, [(0, 400)] * 3 + [(0, 28), (0, 8)]),
        "MPI_Waitall": (2, [none] * 3), "MPI_Wait": (2, [none] * 2), "MPI_Waitany": (2, [none] * 2),
        "MPI_Test": (2, [none]), "MPI_Testall": (2, [none]),
        "MPI_Sendrecv": (2, [(40, 40)] * 4), "MPI_Sendrecv_replace": (2, [(64, 64)] * 3),
        "MPI_Barrier": (2, [none] * 2),
        "MPI_Bcast": (2, [(1000, 0) if r == 0 else (0, 1000)] * 2),
        "MPI_Reduce": (2, [(128, 128 if r == 1 else 0)]),
        "MPI_Allreduce": (2, [(8, 8)] * 20 + [(32, 32)]),  # the last one in place
        "MPI_Gather": (2, [(12, 12 * n if r == 0 else 0)]),
        "MPI_Gatherv": (2, [(4 * (r + 1), 4 * tri if r == 0 else 0)]),
        "MPI_Scatter": (2, [(20 * n if r == 0 else 0, 20)]),
        "MPI_Scatterv": (2, [(8 * tri if r == 0 else 0, 8 * (r + 1))]),
        "MPI_Allgather": (2, [(8, 8 * n)]),
        "MPI_Allgatherv": (2, [(r + 1, tri)]),
        "MPI_Alltoall": (2, [(12 * n, 12 * n)]),
        "MPI_Alltoallv": (2, [(4 * tri, 4 * n * (r + 1))]),
    }


def case_calls(t):
    """Every wrapped MPI call a known number of times: exact counts, kind mpi, bytes per call
    in /events and per pair in /pairs, on each of the 4 ranks."""
    r, f = job(t)
    r.expect_rc(0)
    done = sorted(int(m[1]) for m in re.finditer(rb"rank (\d+) of \d+ done", r.stdout))
    expect_eq(done, list(range(RANKS)), "ranks that finished")
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    for group in ("events", "pairs"):
        for col in ("bytes_sent", "bytes_received"):
            expect(col in f[group], f"/{group}/{col} is missing")
    for rank, calls in per_rank_calls(f).items():
        check_mpi_regions(rank, calls, calls_regions(rank, RANKS))


def case_singleton(t):
    """No launcher, so no rank in the environment: MPI_Init runs as a singleton and its
    MPI_Comm_rank gives the process rank 0."""
    t.need_prog()
    env = {k: v for k, v in t.env().items() if not k.startswith(("OMPI_", "PMIX_", "PMI_", "SLURM_"))}
    r = t.run([t.scope_run, "-q", "-o", t.path("single.h5"), "--", t.prog], env=env)
    r.expect_rc(0)
    f = h5py.File(t.path("single.h5"), "r")
    # Open MPI starts its daemon (orted) from a singleton: that child is a process of its own
    rows = [i for i, exe in enumerate(f["processes/executable"].asstr()[:]) if exe == t.prog]
    main = [i for i in rows if f["processes/parent"][i] == -1]
    expect_eq(len(main), 1, "the program's own row in /processes")
    expect_eq(int(f["processes/rank"][main[0]]), 0, "rank from MPI_Comm_rank")
    calls = {name: c for name, c in per_rank_calls(f)[0].items()}
    check_mpi_regions(0, calls, ring_regions(2))


def case_preload(t):
    """The plain form, without scope-run: mpirun -x LD_PRELOAD -x SCOPE_PARTS, then
    scope-merge --parts --ranks, as the README says."""
    t.need_prog()
    t.need_scope()
    os.makedirs(t.path("job.parts"))
    preload = ":".join(lib for lib in (t.asan, t.preload) if lib)
    r = mpirun(t, *pass_env("LD_PRELOAD", preload), *pass_env("SCOPE_PARTS", t.path("job.parts")),
               *pass_env("SCOPE_TMPDIR", t.tmp), t.prog)
    r.expect_rc(0)
    expect_eq(len(os.listdir(t.path("job.parts"))), RANKS, "parts written")
    merge = os.path.join(os.path.dirname(t.scope_run), "scope-merge")
    t.run([merge, "--parts", t.path("job.parts"), "--ranks", RANKS, "-o", t.path("job.h5")],
          env=t.env()).expect_rc(0)
    f = h5py.File(t.path("job.h5"), "r")
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    said = {int(m[1]): int(m[2]) for m in re.finditer(rb"rank (\d+) calls step=10 work=(\d+)", r.stdout)}
    for rank, calls in per_rank_calls(f).items():
        check_mpi_regions(rank, calls, ring_regions(said[rank]))


def case_plain(t):
    """The plainest form: mpirun -x LD_PRELOAD -x SCOPE_OUTPUT=job.h5. Each rank writes
    job.h5.ranks/rank-N.h5 and the last to finish merges them into job.h5."""
    t.need_prog()
    t.need_scope()
    preload = ":".join(lib for lib in (t.asan, t.preload) if lib)
    r = mpirun(t, *pass_env("LD_PRELOAD", preload), *pass_env("SCOPE_OUTPUT", t.path("job.h5")),
               *pass_env("SCOPE_TMPDIR", t.tmp), t.prog)
    r.expect_rc(0)
    expect(not os.path.exists(t.path("job.h5.ranks")), "the ranks' folder is left behind")
    expect(os.path.exists(t.path("job.h5")), "no job profile")
    f = h5py.File(t.path("job.h5"), "r")
    expect_eq(sorted(int(x) for x in f["processes/rank"][:]), list(range(RANKS)), "ranks in /processes")
    expect_eq(f["metadata"].attrs.get("missing_ranks"), "", "missing ranks")
    said = {int(m[1]): int(m[2]) for m in re.finditer(rb"rank (\d+) calls step=10 work=(\d+)", r.stdout)}
    for rank, calls in per_rank_calls(f).items():
        check_mpi_regions(rank, calls, ring_regions(said[rank]))


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized")
    ap.add_argument("--mpi", choices=sorted(LAUNCHER), default="openmpi", help="the MPI the program was built with")
    a = ap.parse_args()
    global FLAVOUR
    FLAVOUR = a.mpi
    if not shutil.which(LAUNCHER[FLAVOUR][0]):
        print(f"SKIP {a.case}: no {LAUNCHER[FLAVOUR][0]} (Debian: openmpi-bin, or mpich)")
        return SKIP
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
