#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Profiles programs under ThreadSanitizer and checks the profiles they write.

Usage: tsan.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR

libscope_preload.so, scope-writer and the programs (tests/tsan/tsan_threads.c
for threads, tests/progs/calls.c for writer) are built with -fsanitize=thread
(cmake -DSCOPE_TSAN=ON). Any TSan report fails the case; so does any call
count that is not exact.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

TSAN_EXIT = 66
# TSan stops the program at its first report, with an exit status of its own.
TSAN_OPTIONS = f"halt_on_error=1:exitcode={TSAN_EXIT}"

# As in tsan_threads.c: its threads in the order they are numbered.
KINDS = (("wave", 4 * 8), ("pool", 24), ("relay", 16), ("detached", 8))
SPIN_MIN = 5000
BUFFER = 16384  # SCOPE_BUFFER_SIZE: 681 records a chunk, so every thread fills several


def calls_for(n):
    return 2000 + 131 * n


def per_lane(p, name, nlanes):
    return np.bincount(p.calls(name)["thread"].astype(np.int64), minlength=nlanes)


def case_threads(t):
    t.need_prog()
    # --write-at-exit: while the program runs, the run's writer (another process, which TSan
    # cannot see) frees full chunks for other threads to reuse, so a chunk's accesses by its
    # first thread and its next would look unordered. The reuse is tested by r-tail-*.
    r = t.scope("-q", "--write-at-exit", "-o", "out.h5", "--", t.prog,
                env={"TSAN_OPTIONS": TSAN_OPTIONS, "SCOPE_BUFFER_SIZE": str(BUFFER)})
    reports = re.findall(r"WARNING: ThreadSanitizer: .*|SUMMARY: ThreadSanitizer: .*", r.stderr)
    expect(not reports and r.rc != TSAN_EXIT,
           "ThreadSanitizer reported: " + ("; ".join(reports) or f"exit status {r.rc}"))
    r.expect_rc(0)
    m = re.search(rb"calls work=(\d+)", r.stdout)
    expect(m, f"the program did not say how many calls it made: {r.stdout!r}")
    p = t.load("out.h5")

    expect_eq(len(p.processes["pid"]), 1, "processes")
    expect_eq(int(p.processes["lost"][0]), 0, "lost records")
    lanes = p.lanes[0]
    names = list(lanes["name"])
    nthreads = sum(n for _, n in KINDS)
    expect_eq(len(names), nthreads + 2, "thread lanes (main, the spinner, the workers)")
    expect_eq(int(lanes["parent"][0]), -1, "parent of the main lane")
    lane_of = {}
    for k, name in enumerate(names):
        expect(name not in lane_of, f"two lanes are named {name!r}")
        lane_of[name] = k

    work = per_lane(p, "work", len(names))
    leaf = per_lane(p, "leaf", len(names))
    run = per_lane(p, "run", len(names))
    expect_eq(int(work[0]), 0, "calls of work on the main lane")
    n, total = 0, 0
    span = p.span()
    for kind, count in KINDS:
        entry = per_lane(p, f"{kind}_thread", len(names))
        for i in range(count):
            name = f"{kind}-{i}"
            expect(name in lane_of, f"no lane named {name!r}; lanes: {names}")
            k = lane_of[name]
            want = calls_for(n)
            expect_eq(int(work[k]), want, f"calls of work on lane {k} ({name})")
            expect_eq(int(leaf[k]), want, f"calls of leaf on lane {k} ({name})")
            expect_eq(int(run[k]), 1, f"calls of run on lane {k} ({name})")
            expect_eq(int(entry[k]), 1, f"calls of {kind}_thread on lane {k} ({name})")
            # Each relay thread is started by the one before it.
            parent = lane_of[f"relay-{i - 1}"] if kind == "relay" and i else 0
            expect_eq(int(lanes["parent"][k]), parent, f"parent of lane {k} ({name})")
            expect(0 < int(lanes["start"][k]) <= int(lanes["end"][k]) <= span,
                   f"lane {k} ({name}) runs [{lanes['start'][k]}, {lanes['end'][k]}] outside (0, {span}]")
            total += want
            n += 1
    expect_eq(int(m.group(1)), total, "calls of work the program counted")

    # The spinner was still calling when the process stopped: its calls
    # are at least those main waited for, and a work() left open at the
    # stop may lack its leaf().
    k = lane_of.get("spinner")
    expect(k is not None, f"no lane named 'spinner'; lanes: {names}")
    expect(int(work[k]) >= SPIN_MIN, f"the spinner's calls of work: {int(work[k])}, fewer than {SPIN_MIN}")
    expect(int(work[k]) - int(leaf[k]) in (0, 1),
           f"the spinner called work {int(work[k])} times but leaf {int(leaf[k])} times")

    # Nesting: thread function, run, work, leaf on every worker lane.
    workers = np.array([k for name, k in lane_of.items() if "-" in name])
    for name, depth in (("run", 1), ("work", 2), ("leaf", 3)):
        ev = p.calls(name)
        on_workers = np.isin(ev["thread"].astype(np.int64), workers)
        expect_eq(sorted(set(int(d) for d in ev["depth"][on_workers])), [depth],
                  f"depths of {name} on the worker lanes")
    expect_eq(os.listdir(t.tmp), [], "arena files left after a good run")


WRITER_CALLS = 3_000_000  # calls.c: past a window of 65536 calls and 50 ms, even under TSan


def case_writer(t):
    """One long process: the run's writer groups its calls while it runs, on a thread of its own that
    reads the store the taking thread writes; TSan watches the writer's threads meet."""
    t.need_prog()
    r = t.scope("-q", "-o", "out.h5", "--", t.prog, str(WRITER_CALLS),
                env={"TSAN_OPTIONS": TSAN_OPTIONS, "SCOPE_BUFFER_SIZE": "4096",
                     "SCOPE_WRITER_WINDOW": "65536", "SCOPE_WRITER_TIMES": "1"})
    reports = re.findall(r"WARNING: ThreadSanitizer: .*|SUMMARY: ThreadSanitizer: .*", r.stderr)
    expect(not reports and r.rc != TSAN_EXIT,
           "ThreadSanitizer reported: " + ("; ".join(reports) or f"exit status {r.rc}"))
    r.expect_rc(0)
    m = re.search(r"(\d+) calls grouped", r.stderr)
    expect(m and int(m.group(1)) > 0, "the run's writer grouped no call while the program ran: "
           + (m.group(0) if m else "it did not say (SCOPE_WRITER_TIMES=1)"))
    p = t.load("out.h5")
    for name, n in (("main", 1), ("run", 1), ("outer", WRITER_CALLS // 100), ("leaf", WRITER_CALLS // 100 * 99)):
        expect_eq(p.count(name), n, f"calls of {name}")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir",
               prog="the test program, built with -fsanitize=thread",
               lib="directory of libscope_preload.so (built with TSan)").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
