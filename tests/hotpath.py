#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about the limits of scope's recording path on one test program.

Usage: hotpath.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR
                  [--sanitized LIBASAN]

The cases: tasks that share their parent's TLS block (clone without
CLONE_SETTLS, through clone() or the system call itself), calls left open across many chunks in bounded memory,
recursions deeper than 65,535 levels (in memory and through a spill), and
threads still recording while the writer reads their arena. The programs
(tests/progs/r_clone.c, r_deep.c, r_thr.c) print what they know; the
checks compare the file with it exactly, and memory against bounds. One
function per case (case_deep_spill is CASE "deep-spill").
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SPILL, Failure, Skipped, Test, cases_of, expect, expect_eq, kept_arena, parser, run_case, \
    write_arena  # noqa: E402
from profile_checks import check_nesting, check_processes, col, expect_counts, expect_same_profile, \
    rows_of  # noqa: E402
import robust  # noqa: E402  (live-arena runs its threads-running case)

CLONE_RUNS = 20  # half with CLONE_THREAD, half without
CLONE_TASKS = 4
CLONE_CALLS = 20_000  # child i calls child_work (i + 1) times this, main parent_work this
CLONE_STATES = 128  # tasks sharing TLS blocks that get a state of their own (preload/clone.c)
FULL_TASKS, FULL_CALLS = 130, 100
RAW_MODES = ("rawvm", "rawthread", "rawwait", "rawspin")  # r_clone's clones made by the system call
RAW_RUNS = 6  # of each mode
DEEP = 100_000  # r_deep deep: a recursion this deep, on the main thread
MIB = 1024  # KiB
RSS_BASE_KIB = 8 * MIB  # the library, the arena's header and lanes, main's chunk
RSS_THREAD_KIB = 6 * MIB  # per recording thread: its chunks and what returning calls bring back
LIVE_RUNS = 20


# ---------------------------------------------------------------------------
# What the file says


def lane_counts(p, process=0):
    """{lane: {region name: calls}} in PROCESS."""
    out = {}
    names = p.regions["name"]
    for row in range(len(p.pairs["region"])):
        if int(p.pairs["process"][row]) != process:
            continue
        ev = p.events_of(row)
        lanes, n = np.unique(ev["thread"].astype(np.int64), return_counts=True)
        for lane, c in zip(lanes, n):
            lane_map = out.setdefault(int(lane), {})
            name = names[p.pairs["region"][row]]
            lane_map[name] = lane_map.get(name, 0) + int(c)
    return out


def expect_no_loss(p, what):
    expect_eq((int(p.processes["lost"][0]), int(p.meta["lost_records"])), (0, 0),
              f"lost calls in /processes and /metadata ({what})")


def peak_kib(t, r, what):
    m = re.search(r"hwm_kib=(\d+)", t.text(r))
    expect(m and int(m.group(1)) > 0, f"{what} printed no peak memory:\n{t.text(r)}")
    return int(m.group(1))


# ---------------------------------------------------------------------------
# Cases: tasks sharing a TLS block (r_clone)


def check_clone_run(t, run, mode, r, p):
    said = [(int(i), int(tid), int(n)) for i, tid, n in
            re.findall(r"child (\d+) tid=(\d+) calls child_work=(\d+)", t.text(r))]
    expect_eq(len(said), CLONE_TASKS, f"children the program reported (run {run}, {mode})")
    lanes = p.lanes[0]
    tids = [int(x) for x in lanes["tid"]]
    expect_eq(len(tids), CLONE_TASKS + 1, f"thread lanes (run {run}, {mode})")
    counts = lane_counts(p)
    # in vm modes the parent waits for each child with waitpid, a region of kind wait
    waits = {"waitpid": CLONE_TASKS} if mode in ("vm", "rawvm") else {}
    expect_eq(counts.get(0), {"main": 1, "run": 1, "parent_work": CLONE_CALLS, "leaf": CLONE_CALLS, **waits},
              f"calls on the main lane (run {run}, {mode})")
    for i, tid, n in said:
        want = CLONE_CALLS * (i + 1)
        expect_eq(n, want, f"child {i}'s own count (run {run}, {mode})")
        expect(tid in tids, f"child {i} (tid {tid}) has no lane; lanes have tids {tids} (run {run}, {mode})")
        lane = tids.index(tid)
        expect_eq(int(lanes["parent"][lane]), 0, f"parent lane of child {i} (run {run}, {mode})")
        expect_eq(counts.get(lane), {"child_main": 1, "child_work": want, "leaf": want},
                  f"calls on child {i}'s lane {lane} (run {run}, {mode})")
    expect_no_loss(p, f"run {run}, {mode}")


def case_clone(t):
    """clone(CLONE_VM) children without CLONE_SETTLS, with and without CLONE_THREAD, recording
    while their parent does: 20 runs, none crashes, every task's calls exact on a lane of its own."""
    t.need_prog()
    for run in range(CLONE_RUNS):
        mode = ("vm", "thread")[run % 2]
        out = f"run{run}.h5"
        r = t.scope("-q", "-o", out, "--", t.prog, mode, CLONE_TASKS, CLONE_CALLS)
        expect(r.rc == 0, f"run {run} ({mode}) ended with status {r.rc} (0 without the profiler)")
        p = t.load(out)
        check_clone_run(t, run, mode, r, p)
        if run < 2:
            check_nesting(p)


def run_raw(t, out, mode, tasks, calls):
    """Profiles r_clone MODE (a raw clone mode) into OUT; skips where raw clones are not built."""
    r = t.scope("-q", "-o", out, "--", t.prog, mode, tasks, calls)
    if r.rc == 3 and "x86-64 only" in r.stderr:
        raise Skipped("r_clone makes raw clones on x86-64 only")
    return r


def case_clone_raw(t):
    """Tasks made by the clone system call itself (CLONE_VM, no CLONE_SETTLS), which the library
    does not see made: processes and threads, recording while their parent does, or while it waits
    for each in a system call, or spins without one. 24 runs: none crashes, no warning, the program's
    own counts right, every task's calls exact on a lane of its own, nothing lost."""
    t.need_prog()
    for run in range(RAW_RUNS * len(RAW_MODES)):
        mode = RAW_MODES[run % len(RAW_MODES)]
        out = f"raw{run}.h5"
        r = run_raw(t, out, mode, CLONE_TASKS, CLONE_CALLS)
        expect(r.rc == 0, f"run {run} ({mode}) ended with status {r.rc} (0 without the profiler):\n"
               f"{r.stderr}")
        expect_eq(r.stderr, "", f"stderr of run {run} ({mode})")
        want = sum(CLONE_CALLS * (i + 1) for i in range(CLONE_TASKS))
        expect(f"calls main=1 run=1 child_main={CLONE_TASKS} child_work={want} parent_work={CLONE_CALLS} "
               f"leaf={want + CLONE_CALLS}" in t.text(r), f"the program's own counts (run {run}, {mode}):\n"
               f"{t.text(r)}")
        p = t.load(out)
        check_clone_run(t, run, mode, r, p)
        if run < len(RAW_MODES):
            check_nesting(p)


def case_clone_raw_full(t):
    """More raw clones' tasks alive at once than there are states for tasks sharing a TLS block:
    those that found none have every call dropped and counted, exactly, as lost_shared_tls; the
    others, and their parent, are exact."""
    r = run_raw(t, "out.h5", "rawthread", FULL_TASKS, FULL_CALLS)
    r.expect_rc(0)
    p = t.load("out.h5")
    said = {int(i): int(tid) for i, tid in re.findall(r"child (\d+) tid=(\d+)", t.text(r))}
    expect_eq(len(said), FULL_TASKS, "children the program reported")
    tids = [int(x) for x in p.lanes[0]["tid"]]
    # the parent's own state takes one; the tasks get the others as their first calls come
    expect_eq(len(tids), CLONE_STATES, "thread lanes")
    counts = lane_counts(p)
    expect_eq(counts.get(0), {"main": 1, "run": 1, "parent_work": FULL_CALLS, "leaf": FULL_CALLS},
              "calls on the main lane")
    dropped = [i for i in range(FULL_TASKS) if said[i] not in tids]
    expect_eq(len(dropped), FULL_TASKS - (CLONE_STATES - 1), f"children without a lane: {dropped}")
    for i in range(FULL_TASKS):
        if i in dropped:
            continue
        want = FULL_CALLS * (i + 1)
        expect_eq(counts.get(tids.index(said[i])), {"child_main": 1, "child_work": want, "leaf": want},
                  f"calls on child {i}'s lane")
    lost = sum(1 + 2 * FULL_CALLS * (i + 1) for i in dropped)
    expect_eq((int(p.processes["lost"][0]), int(p.meta["lost_records"]), int(p.meta["lost_shared_tls"])),
              (lost, lost, lost), "lost calls in /processes, lost_records and lost_shared_tls in /metadata")


def case_clone_copy(t):
    """clone() without CLONE_VM: each child is a process of its own with its own profile
    (its calls exact, its parent the first process), and the parent's calls stay exact."""
    p, r = t.profile("copy", CLONE_TASKS, CLONE_CALLS)
    check_processes(p)
    said = {int(pid): int(n) for pid, n in re.findall(r"copy \d+ pid=(\d+) calls child_work=(\d+)", t.text(r))}
    expect_eq(len(said), CLONE_TASKS, "children the program reported")
    expect_eq(len(p.processes["pid"]), CLONE_TASKS + 1, "processes in the profile")
    expect_eq(lane_counts(p, 0), {0: {"main": 1, "run": 1, "parent_work": CLONE_CALLS, "leaf": CLONE_CALLS,
                                      "waitpid": CLONE_TASKS}}, "calls of the parent")
    for pid, n in said.items():
        rows = rows_of(p, pid)
        expect_eq(len(rows), 1, f"processes of pid {pid}")
        expect_eq(col(p, rows[0], "parent"), 0, f"parent of pid {pid}")
        expect_eq(lane_counts(p, rows[0]), {0: {"child_main": 1, "child_work": n, "leaf": n}},
                  f"calls of child pid {pid}")


def case_clone_exec(t):
    """clone(CLONE_VM | CLONE_VFORK) children that exec: their exec ends only themselves, so
    their calls are on lanes of their own and the parent records on afterwards, exactly."""
    p, r = t.profile("exec", CLONE_TASKS, CLONE_CALLS)
    counts = lane_counts(p, 0)
    expect_eq(counts.get(0), {"main": 1, "run": 1, "parent_work": CLONE_CALLS, "leaf": CLONE_CALLS,
                              "waitpid": CLONE_TASKS}, "calls on the main lane, after the children's execs")
    want = sorted(CLONE_CALLS * (i + 1) for i in range(CLONE_TASKS))
    got = sorted(c.get("child_work", 0) for lane, c in counts.items() if lane != 0)
    expect_eq(got, want, "calls of child_work on the children's lanes")


def case_clone_full(t):
    """More clone(CLONE_VM) children alive than there are states for tasks sharing a TLS block:
    those without one have every call dropped and counted, exactly; the others are exact."""
    p, r = t.profile("vm", FULL_TASKS, FULL_CALLS)
    said = {int(i): int(tid) for i, tid in re.findall(r"child (\d+) tid=(\d+)", t.text(r))}
    expect_eq(len(said), FULL_TASKS, "children the program reported")
    kept = CLONE_STATES - 1  # the parent's own state takes one; children get them in creation order
    lost = sum(1 + 2 * FULL_CALLS * (i + 1) for i in range(kept, FULL_TASKS))
    expect_eq((int(p.processes["lost"][0]), int(p.meta["lost_records"]), int(p.meta["lost_shared_tls"])),
              (lost, lost, lost), "lost calls in /processes, lost_records and lost_shared_tls in /metadata")
    tids = [int(x) for x in p.lanes[0]["tid"]]
    expect_eq(len(tids), kept + 1, "thread lanes")
    counts = lane_counts(p)
    expect_eq(counts.get(0), {"main": 1, "run": 1, "parent_work": FULL_CALLS, "leaf": FULL_CALLS,
                              "waitpid": FULL_TASKS}, "calls on the main lane")
    for i in range(kept):
        want = FULL_CALLS * (i + 1)
        expect(said[i] in tids, f"child {i} (tid {said[i]}) has no lane")
        expect_eq(counts.get(tids.index(said[i])), {"child_main": 1, "child_work": want, "leaf": want},
                  f"calls on child {i}'s lane")
    for i in range(kept, FULL_TASKS):
        expect(said[i] not in tids, f"child {i} got a lane though no state was left for it")


# ---------------------------------------------------------------------------
# Cases: long-open calls in bounded memory (r_deep nested)


def rss_case(t, threads, depth, leaves, rounds):
    """Runs r_deep nested plain and profiled; checks the calls, and the profiled peak memory
    against the plain one plus a few MiB per thread."""
    args = ["nested", threads, depth, leaves, rounds]
    per = depth * rounds
    plain = t.plain(*args)
    plain.expect_rc(0)
    base = peak_kib(t, plain, "the program alone")
    p, r = t.profile(*args)
    peak = peak_kib(t, r, "the profiled program")
    calls = threads * per * (2 * leaves + 1)
    bound = base + RSS_BASE_KIB + threads * RSS_THREAD_KIB
    print(f"  {calls} calls; peak resident memory: {base / MIB:.1f} MiB alone, {peak / MIB:.1f} MiB "
          f"profiled (bound {bound / MIB:.1f} MiB)")
    expect_counts(p, {"main": 1, "nester": threads, "nest": threads * per,
                             "leaf": threads * per * 2 * leaves})
    for lane, c in lane_counts(p).items():
        if lane:
            expect_eq(c, {"nester": 1, "nest": per, "leaf": per * 2 * leaves}, f"calls on lane {lane}")
    expect_no_loss(p, "nested")
    expect(peak <= bound, f"the profiled program's peak resident memory is {peak / MIB:.1f} MiB, more than "
           f"{base / MIB:.1f} MiB alone + {RSS_BASE_KIB // MIB} MiB + {RSS_THREAD_KIB // MIB} MiB for each of "
           f"{threads} threads (chunks with calls still open come back into memory as those return?)")
    return calls


def case_nested_rss(t):
    """10 million calls on 4 threads, each a recursion 1000 deep repeated 120 times with 20 leaf
    calls a level: calls open across chunk changes at every depth, memory stays a few MiB a thread."""
    expect(rss_case(t, 4, 1000, 10, 120) >= 10_000_000, "too few calls")


def case_deep_rss(t):
    """11 million calls on 4 threads, each a recursion 500 deep with 2800 leaf calls a level, twice:
    500 chunks each with a call open, more than a thread holds apart."""
    expect(rss_case(t, 4, 500, 1400, 2) >= 10_000_000, "too few calls")


# ---------------------------------------------------------------------------
# Cases: deeper than 65,535 (r_deep deep)


def check_deep(t, p, what):
    """DEEP + 1 calls of dive at depths 1..DEEP+1 exactly, leaf below, main at 0 with the outermost dive as its only callee."""
    expect_counts(p, {"main": 1, "dive": DEEP + 1, "leaf": 1})
    depths = np.sort(p.calls("dive")["depth"].astype(np.int64))
    expect(np.array_equal(depths, np.arange(1, DEEP + 2)),
           f"depths of dive ({what}): expected 1..{DEEP + 1} once each, got {depths[:3]}..{depths[-3:]} "
           f"({len(np.unique(depths))} distinct)")
    expect_eq(int(p.calls("leaf")["depth"][0]), DEEP + 2, f"depth of leaf, the deepest call ({what})")
    expect_eq(int(p.calls("main")["depth"][0]), 0, f"depth of main ({what})")
    with h5py.File(p.path, "r") as f:
        expect_eq(str(f["events/depth"].dtype), "uint32", f"type of /events/depth ({what})")
    row = p.pair_rows("main")[0]
    total, self_ns = int(p.pairs["total_ns"][row]), int(p.pairs["self_ns"][row])
    print(f"  main ({what}): total {total} ns, self {self_ns} ns")
    dive = p.calls("dive")
    outer = int(dive["duration"][dive["depth"].astype(np.int64) == 1][0])
    expect_eq(self_ns, total - outer, f"main's self time, its total {total} ns less the outermost dive's "
              f"{outer} ns ({what}): calls below it were charged to the wrong caller")


def tree_roots(t, out):
    """The region names scope-report --tree shows at the top of lane 0's tree."""
    r = t.run([os.path.join(os.path.dirname(t.writer), "scope-report"), "--tree", "--depth", "1", t.path(out)])
    r.expect_rc(0)
    roots, header = [], False
    for line in t.text(r).splitlines():
        if re.match(r"\s*total\s+self\s+calls\s+region", line):
            header = True
            continue
        if header and line.strip():
            if line.startswith("process "):
                break
            roots.append(line.split()[-1])
    return roots


def case_deep(t):
    """A recursion 100,000 deep: every call at its true depth, main's self time small, the tree
    rooted at main alone."""
    p, r = t.profile("deep", DEEP)
    check_deep(t, p, "grouped in memory")
    expect_eq(tree_roots(t, "out.h5"), ["main"], "roots of scope-report --tree")
    check_nesting(p)


def case_deep_spill(t):
    """The same recursion through the writer's spill: the same file as grouped in memory."""
    arena = kept_arena(t, "deep", DEEP)
    write_arena(t, arena, "held.h5")
    write_arena(t, arena, "spilled.h5", SPILL)
    expect_same_profile(t, "held.h5", "spilled.h5")
    check_deep(t, t.load("spilled.h5"), "spilled")
    expect_eq(tree_roots(t, "spilled.h5"), ["main"], "roots of scope-report --tree (spilled)")


# ---------------------------------------------------------------------------
# Cases: the writer reading an arena its threads still write (r_thr)


def case_live_arena(t):
    """Threads still recording while the writer reads their arena, with the CPUs loaded: 20 runs,
    each with every call read the same way by all the writer's passes."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        for run in range(LIVE_RUNS):
            print(f"run {run}")
            try:
                robust.case_threads_running(t)
            except Failure as e:
                raise Failure(f"run {run} of {LIVE_RUNS}: {e}")
    finally:
        for h in hogs:
            h.kill()
            h.wait()


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
