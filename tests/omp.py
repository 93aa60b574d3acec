#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about OpenMP programs: explicit tasks as task lanes through OMPT.

Usage: omp.py CASE --prog PATH --bin DIR --lib DIR --workdir DIR [--sanitized LIBASAN]

tests/omp/tasks.c runs two parallel regions of two threads. In the first, one
thread creates 8 untied tasks; task i calls untied_step i + 1 times in each of
its 4 parts and yields between parts, so a task may go on on the other thread;
each part notes its OS thread, and so does the part that ends the task
(after the last yield), and the program prints them. In the second, 4
tied tasks call tied_step 10, 20, 30, 40 times, yielding every 5 calls. Built
with clang (LLVM's libomp, which has OMPT) every task is a task lane; built
with gcc (libgomp, no OMPT) the calls are recorded on their threads only.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402
from profile_checks import check_nesting, expect_counts  # noqa: E402

UNTIED, PARTS, TIED = 8, 4, 4
RUNS = 10  # runs tried for one in which an untied task went on on another thread


def need_built(t):
    if not (t.prog and os.access(t.prog, os.X_OK)):
        raise Skipped(f"{os.path.basename(t.prog)} was not built: its compiler cannot build OpenMP "
                      "programs here (clang needs libomp-dev)")


def run(t, out):
    """The program under scope-run: its profile and, per untied task, its parts' OS threads."""
    r = t.scope("-q", "-o", out, "--", t.prog, env={"OMP_NUM_THREADS": "2"})
    r.expect_rc(0)
    parts = {}
    for line in t.text(r).splitlines():
        head, tids = line.split(":")
        parts[int(head.split()[1])] = [int(x) for x in tids.split()]
    expect_eq(sorted(parts), list(range(UNTIED)), "tasks the program printed")
    p = t.load(out)
    check_nesting(p)
    return p, parts


def lanes_by_id(p):
    """OpenMP's task number -> task lane."""
    tk = p.tasks[0]
    expect(tk, "/process0/lanes/tasks is missing")
    return {int(i): k + 1 for k, i in enumerate(tk["id"])}


def check_untied(p, parts, lanes, tid_of_lane):
    """Task i (OpenMP's task i + 1: one thread creates them in order) holds (i + 1) * PARTS calls
    of untied_step, each part's on the thread the program saw that part run on."""
    steps = p.calls("untied_step")
    order = np.argsort(steps["start"], kind="stable")
    tk = p.tasks[0]
    calls = {"thread": p.events["thread"].astype(np.int64), "task": p.events["task"].astype(np.int64)}
    for i in range(UNTIED):
        lane = lanes[i + 1]
        mine = [k for k in order if steps["task"][k] == lane]
        expect_eq(len(mine), (i + 1) * PARTS, f"calls of untied_step in the task lane of task {i}")
        ran = [tid_of_lane[int(steps["thread"][k])] for k in mine]
        expect_eq(ran, [tid for tid in parts[i][:PARTS] for _ in range(i + 1)],
                  f"OS threads of task {i}'s calls, in order")
        listed = [int(x) for x in str(tk["threads"][lane - 1]).split(",")]
        expect_eq(listed, sorted(listed), f"lanes/tasks threads of task {i}: ascending")
        # every thread a part of it ran on; a part may also run on a thread
        # and end before any statement that notes it (its calls say so)
        expect(set(parts[i]) <= {tid_of_lane[x] for x in listed},
               f"lanes/tasks threads of task {i} {[tid_of_lane[x] for x in listed]} lack some of "
               f"the program's {sorted(set(parts[i]))}")
        expect_eq(set(listed), set(int(x) for x in calls["thread"][calls["task"] == lane]),
                  f"lanes/tasks threads of task {i} and the lanes of its calls")
        expect_eq(str(tk["name"][lane - 1]), "omp task", f"name of task {i}")


def check_tied(p, lanes):
    """Tied task j (OpenMP's task UNTIED + j + 1) holds 10 * (j + 1) calls of tied_step, on one
    thread, even when another task ran on top of it at a taskyield."""
    steps = p.calls("tied_step")
    tk = p.tasks[0]
    for j in range(TIED):
        lane = lanes[UNTIED + j + 1]
        mine = steps["task"] == lane
        expect_eq(int(mine.sum()), 10 * (j + 1), f"calls of tied_step in the task lane of tied task {j}")
        expect_eq(len(set(steps["thread"][mine].tolist())), 1, f"threads of tied task {j}")
        expect_eq(len(str(tk["threads"][lane - 1]).split(",")), 1, f"lanes/tasks threads of tied task {j}")


def case_ompt(t):
    """Under LLVM's libomp every explicit task is a task lane with its exact calls, untied tasks
    that go on on another thread keep theirs, calls outside tasks are in none, and each parallel
    region is a region of kind openmp on the thread that started it."""
    need_built(t)
    for attempt in range(RUNS):
        p, parts = run(t, f"out{attempt}.h5")
        if any(len(set(tids)) > 1 for tids in parts.values()):
            break
    else:
        raise AssertionError(f"in {RUNS} runs no untied task went on on another thread: {parts}")
    tid_of_lane = [int(x) for x in p.lanes[0]["tid"]]
    lanes = lanes_by_id(p)
    expect_eq(sorted(lanes), list(range(1, UNTIED + TIED + 1)), "OpenMP task numbers of the task lanes")
    expect_counts(p, {"untied_step": UNTIED * (UNTIED + 1) // 2 * PARTS, "tied_step": 100,
                      "outside": 2, "omp parallel": 2})
    check_untied(p, parts, lanes, tid_of_lane)
    check_tied(p, lanes)
    expect_eq(set(p.calls("outside")["task"].tolist()), {0}, "task lane of calls outside any task")
    par = p.calls("omp parallel")
    expect_eq(p.regions["kind"][p.region_row("omp parallel")], "openmp", "kind of omp parallel")
    expect_eq(set(par["thread"].tolist()), {0}, "lane of the parallel regions (the main thread's)")
    for fn in ("untied", "tied"):
        call = p.calls(fn)
        inside = [d for s, d in zip(par["start"], par["depth"])
                  if call["start"][0] <= s < call["start"][0] + call["duration"][0]]
        expect_eq(inside, [int(call["depth"][0]) + 1], f"the parallel region inside {fn}")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--tasks", "--format", "csv", p.path])
    rep.expect_rc(0)
    expect_eq(len(t.text(rep).splitlines()), UNTIED + TIED + 1, "rows of scope-report --tasks")


def case_libgomp(t):
    """GCC's libgomp has no OMPT: the same program is recorded as threads only, every call
    counted, no task lane and no parallel region."""
    need_built(t)
    p, _ = run(t, "out.h5")
    expect_counts(p, {"untied_step": UNTIED * (UNTIED + 1) // 2 * PARTS, "tied_step": 100,
                      "outside": 2, "omp parallel": 0})
    expect_eq(len(p.tasks[0].get("id", [])), 0, "task lanes under libgomp")
    expect_eq(set(p.events["task"].tolist()), {0}, "/events/task under libgomp")
    expect(len(p.lanes[0]["tid"]) >= 2, "libgomp's second thread has no lane")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
