#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Totals without double counting, and threads' CPU time, against what the program did.

Usage: figures.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

The program is tests/progs/figures.c. A call made while a call of its own
region is open on its lane (a recursion, direct or mutual, or a signal
handler calling the function it interrupted) lies inside that call's time:
/pairs/total_ns sums only the outermost calls, /pairs/total_all_ns all of
them. Both are checked exactly against /events, by containment (a call
inside a call of the same region, lower on the same lane) here and by the
call stack in profile_checks. A lane's cpu_ns is checked against how the
thread spent its time: burning its CPU or asleep, ended or still running
when the process exits.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import MS, SPILL, Profile, Test, cases_of, expect, expect_eq, kept_arena, parser, run_case, \
    write_arena  # noqa: E402
from profile_checks import check_nesting, expect_counts, expect_same_profile, said_calls  # noqa: E402


def profile(t, mode):
    """The profile of `figures MODE` and the calls it said it made, checked against each other
    and for nesting and every pair's statistics (total_ns by the call stack)."""
    p, r = t.profile(mode)
    said = said_calls(t.text(r))
    expect_counts(p, said)
    check_nesting(p)
    return p, said


def calls_of(p, name):
    """NAME's calls in process 0: (lane, start, end, depth) each."""
    ev = p.calls(name)
    return [(int(th), int(s), int(s) + int(d), int(dp))
            for th, s, d, dp in zip(ev["thread"], ev["start"], ev["duration"], ev["depth"])]


def outermost(calls):
    """The calls not inside another of them: on the same lane, lower, and around it in time.
    (Outermost calls of one region do not overlap on a lane: one is enough to compare with.)"""
    outer, last = [], None
    for c in sorted(calls, key=lambda c: (c[0], c[1], c[3])):
        if last and last[0] == c[0] and last[3] < c[3] and last[1] <= c[1] and c[2] <= last[2]:
            continue
        outer.append(c)
        last = c
    return outer


def expect_totals(p, name, outer_calls):
    """NAME's total_ns is the time of its outermost calls (there are OUTER_CALLS), its
    total_all_ns that of every call, and the two differ: some calls were inside others."""
    calls = calls_of(p, name)
    outer = outermost(calls)
    row = p.pair_rows(name)[0]
    total, total_all = int(p.pairs["total_ns"][row]), int(p.pairs["total_all_ns"][row])
    print(f"  {name}: {len(calls)} calls, {len(outer)} outermost: total {total} ns, all calls {total_all} ns")
    expect_eq(len(outer), outer_calls, f"outermost calls of {name}")
    expect_eq(total, sum(e - s for _, s, e, _ in outer), f"total_ns of {name} (its outermost calls)")
    expect_eq(total_all, sum(e - s for _, s, e, _ in calls), f"total_all_ns of {name} (every call)")
    expect(total < total_all, f"{name}: total_ns {total} is not below total_all_ns {total_all}")
    main = calls_of(p, "main")[0]
    expect(total <= main[2] - main[1], f"{name}: total_ns {total} exceeds main's duration {main[2] - main[1]}")
    return total, total_all


def case_recursion(t):
    """down() recursing 24 levels, twice from main and once below lead(): three outermost calls."""
    p, said = profile(t, "recursion")
    expect(said.get("down", 0) > 30, f"the program made {said.get('down')} calls of down")
    expect_totals(p, "down", 3)


def case_mutual(t):
    """ping -> pong -> ping -> ...: each counts its outermost calls only, two of each."""
    p, _ = profile(t, "mutual")
    expect_totals(p, "ping", 2)
    expect_totals(p, "pong", 2)


def case_signal(t):
    """A SIGALRM handler calling burn() while burn() runs: the handler's calls lie inside the
    interrupted call; the two burn() calls of main are the outermost ones, with those of the
    handlers that came between them, if any."""
    p, said = profile(t, "signal")
    expect(said.get("on_tick", 0) >= 10, f"only {said.get('on_tick')} SIGALRM handlers ran")
    inside = [c for c in calls_of(p, "burn") if c[3] > 1]
    expect(len(inside) >= 10, f"only {len(inside)} calls of burn() ran inside another")
    expect_totals(p, "burn", 2 + sum(1 for c in calls_of(p, "on_tick") if c[3] == 1))


def case_spill(t):
    """The totals are the same whether the calls are grouped in memory or through a spill."""
    arena = kept_arena(t, "recursion")
    write_arena(t, arena, "held.h5")
    write_arena(t, arena, "spilled.h5", SPILL)
    n = expect_same_profile(t, "held.h5", "spilled.h5")
    expect(n > 2048, f"{n} calls do not pass the spill window of 1024 twice")
    p = Profile(t.path("spilled.h5"))
    check_nesting(p)
    expect_totals(p, "down", 3)


def case_merge(t):
    """scope-merge carries total_all_ns; a profile without it (an older writer's, whose
    total_ns summed every call) gets its total_ns there."""
    for name in ("new.h5", "old.h5"):
        t.scope("-q", "-o", name, "--", t.prog, "recursion").expect_rc(0)
    old = Profile(t.path("old.h5"))
    with h5py.File(t.path("old.h5"), "r+") as f:
        del f["pairs/total_all_ns"]
    new = Profile(t.path("new.h5"))
    merge = os.path.join(os.path.dirname(t.scope_run), "scope-merge")
    t.run([merge, "-o", t.path("merged.h5"), t.path("new.h5"), t.path("old.h5")], env=t.env()).expect_rc(0)
    m = Profile(t.path("merged.h5"))
    for proc, src, want in ((0, new, "total_all_ns"), (1, old, "total_ns")):
        for name in ("main", "down", "lead"):
            row, srow = m.pair_rows(name, proc)[0], src.pair_rows(name)[0]
            expect_eq(int(m.pairs["total_ns"][row]), int(src.pairs["total_ns"][srow]),
                      f"merged total_ns of {name} in process {proc}")
            expect_eq(int(m.pairs["total_all_ns"][row]), int(src.pairs[want][srow]),
                      f"merged total_all_ns of {name} in process {proc} (its {want})")


def csv_rows(text):
    lines = [line for line in text.splitlines() if line]
    head = lines[0].split(",")
    return [dict(zip(head, line.split(","))) for line in lines[1:]]


def case_report(t):
    """scope-report's table: total is total_ns, with --thread too (replayed from the lane's
    calls), and the mean is over every call (total_all_ns / calls)."""
    p, _ = profile(t, "recursion")
    report = os.path.join(os.path.dirname(t.scope_run), "scope-report")
    for args in ([], ["--thread", "0"]):
        r = t.run([report, "--format", "csv", *args, p.path], env=t.env())
        r.expect_rc(0)
        rows = {row["region"]: row for row in csv_rows(t.text(r))}
        for name in ("main", "lead", "down"):
            row = p.pair_rows(name)[0]
            calls, total_all = int(p.pairs["count"][row]), int(p.pairs["total_all_ns"][row])
            expect_eq(int(rows[name]["total_ns"]), int(p.pairs["total_ns"][row]),
                      f"total_ns of {name} in scope-report {' '.join(args)}")
            expect(abs(float(rows[name]["mean_ns"]) - total_all / calls) <= 0.05,
                   f"mean_ns of {name} in scope-report {' '.join(args)}: {rows[name]['mean_ns']}, "
                   f"total_all_ns / calls is {total_all / calls:.2f}")


def lanes_by_name(p):
    lanes = p.lanes[0]
    return {str(n): {col: (v[i] if col == "name" else int(v[i])) for col, v in lanes.items()}
            for i, n in enumerate(lanes["name"])}


def expect_cpu_within_span(p):
    for name, lane in lanes_by_name(p).items():
        span = lane["end"] - lane["start"]
        print(f"  lane {name}: span {span / MS:.2f} ms, cpu {lane['cpu_ns'] / MS:.2f} ms")
        expect(lane["cpu_ns"] <= span, f"lane {name}: cpu_ns {lane['cpu_ns']} exceeds its span {span}")


def case_cpu(t):
    """A thread burning 50 ms of CPU and one asleep 50 ms: cpu_ns tells them apart, and
    scope-report --threads shows it."""
    p, _ = profile(t, "cpu")
    lanes = lanes_by_name(p)
    expect("busy" in lanes and "sleeper" in lanes, f"lanes: {sorted(lanes)}")
    busy, sleeper = lanes["busy"], lanes["sleeper"]
    expect_cpu_within_span(p)
    expect(busy["cpu_ns"] >= 40 * MS, f"the busy thread's cpu_ns is {busy['cpu_ns']}, it burned 50 ms")
    expect(0 < sleeper["cpu_ns"] < 10 * MS, f"the sleeping thread's cpu_ns is {sleeper['cpu_ns']}")
    for name, lane in (("busy", busy), ("sleeper", sleeper)):
        expect(lane["end"] - lane["start"] >= 50 * MS, f"lane {name} spans {lane['end'] - lane['start']} ns")
    report = os.path.join(os.path.dirname(t.scope_run), "scope-report")
    r = t.run([report, "--threads", "--format", "csv", p.path], env=t.env())
    r.expect_rc(0)
    shown = {row["name"]: int(row["cpu_ns"]) for row in csv_rows(t.text(r))}
    expect_eq(shown, {name: lane["cpu_ns"] for name, lane in lanes.items()}, "cpu_ns in scope-report --threads")
    r = t.run([report, "--threads", p.path], env=t.env())
    r.expect_rc(0)
    head = t.text(r).splitlines()[0].split()
    expect("cpu" in head and head.index("cpu") == head.index("span") + 1, f"--threads header: {head}")


def case_cpu_live(t):
    """A thread still burning CPU when another ends the process: the stopping thread reads its clock."""
    p, _ = profile(t, "cpu-live")
    lanes = lanes_by_name(p)
    expect("live" in lanes, f"lanes: {sorted(lanes)}")
    expect_cpu_within_span(p)
    expect(lanes["live"]["cpu_ns"] >= 40 * MS,
           f"the running thread's cpu_ns is {lanes['live']['cpu_ns']}, it burned 50 ms before the exit")
    main = [lane for lane in lanes.values() if lane["parent"] == -1]
    expect(main and main[0]["cpu_ns"] > 0, "the exiting thread's cpu_ns is 0")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized",
               prog="the test program (figures.c)").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
