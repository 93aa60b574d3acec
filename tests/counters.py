#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about counters per call (scope-run --counters, SCOPE_COUNTERS).

Usage: counters.py CASE --prog PATH --bin DIR --lib DIR --workdir DIR [--sanitized LIBASAN]

tests/progs/counters.c calls work 3 times (touch_pages: 64 fresh pages,
so 64 page faults; sleeper: two 2 ms sleeps, at least two context
switches; spin: a millisecond of CPU time), then a thread calls
touch_pages twice. The Linux software events are opened by the library
itself; hardware events need a PMU, which a VM may not have: that case
skips with PAPI's reason.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402
from profile_checks import check_nesting, expect_counts, expect_same_profile  # noqa: E402

SOFTWARE = ["perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS"]
PAGES = 64


def profiled(t, *options, out="out.h5", env=None):
    r = t.scope("-q", *options, "-o", out, "--", t.prog, env=env)
    r.expect_rc(0)
    expect_eq(t.text(r), "counters ok\n", "output")
    p = t.load(out)
    check_nesting(p)
    expect_counts(p, {"work": 3, "touch_pages": 5, "sleeper": 3, "spin": 3})
    return p, r


def counter(p, name, region):
    """The change of counter NAME over each call of REGION (process 0)."""
    names = str(p.processes["counters"][0]).split(",")
    expect(name in names, f"counter {name} not among {names}")
    return p.calls(region)[f"counter{names.index(name)}"].astype(np.int64)


def pair_sums(p, k):
    """Region name -> (counter k's total, self) from /pairs."""
    out = {}
    for row in range(len(p.pairs["region"])):
        out[p.names[p.pairs["region"][row]]] = (int(p.pairs[f"counter{k}_total"][row]),
                                                int(p.pairs[f"counter{k}_self"][row]))
    return out


def check_software(p, what=""):
    expect_eq(str(p.processes["counters"][0]), ",".join(SOFTWARE), f"/processes/counters{what}")
    faults = counter(p, "perf::PAGE-FAULTS", "touch_pages")
    expect_eq(faults.tolist(), [PAGES] * 5, f"page faults of each call of touch_pages (both threads){what}")
    expect_eq(sorted(set(p.calls("touch_pages")["thread"].tolist())), [0, 1], f"lanes of touch_pages{what}")
    switches = counter(p, "perf::CONTEXT-SWITCHES", "sleeper")
    expect(all(s >= 2 for s in switches), f"context switches of sleeper's calls: {switches}{what}")
    cpu = counter(p, "perf::TASK-CLOCK", "spin")
    dur = p.calls("spin")["duration"].astype(np.int64)
    # The counters are read outside the call's clock window (before its start, after its
    # end), so the hooks' own work counts in them: under ASan on a busy machine, up to a
    # tenth of a 1 ms call has been seen there.
    expect(all(900000 <= c <= d * 1.15 + 50000 for c, d in zip(cpu, dur)),
           f"CPU ns of spin's calls {cpu.tolist()} against their durations {dur.tolist()}{what}")
    for k in range(len(SOFTWARE)):
        sums = pair_sums(p, k)
        for name in ("work", "touch_pages", "sleeper", "spin"):
            col = p.calls(name)[f"counter{k}"].astype(np.int64)
            expect_eq(sums[name][0], int(col.sum()), f"counter{k}_total of {name} and its calls{what}")
        # work's callees: those calls of touch_pages made on the main thread
        on_main = sum(int(v) for v, th in zip(p.calls("touch_pages")[f"counter{k}"], p.calls("touch_pages")["thread"])
                      if th == 0)
        work = sums["work"]
        expect_eq(work[1], max(work[0] - on_main - sums["sleeper"][0] - sums["spin"][0], 0),
                  f"counter{k}_self of work{what}")
    expect_eq(pair_sums(p, 1)["touch_pages"], (5 * PAGES, 5 * PAGES), f"page faults of touch_pages{what}")


def case_software(t):
    """The four Linux software events over every call, each thread its own, exact where the
    program makes them exact (64 page faults per call), totals and self per pair; the same when
    grouped through the spill; scope-report --counters shows the totals."""
    t.need_prog()
    p, _ = profiled(t, "--counters", ",".join(SOFTWARE))
    check_software(p)
    ps, _ = profiled(t, "--counters", ",".join(SOFTWARE), out="spilled.h5", env={"SCOPE_WRITER_WINDOW": "4"})
    check_software(ps, " (spilled)")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--counters", "--format", "csv", t.path("out.h5")])
    rep.expect_rc(0)
    rows = [line.split(",") for line in t.text(rep).splitlines()]
    head = rows[0]
    got = {row[head.index("region")]: row for row in rows[1:]}
    expect_eq(got["touch_pages"][head.index("perf::PAGE-FAULTS")], str(5 * PAGES),
              "scope-report --counters: page faults of touch_pages")
    expect_eq(got["touch_pages"][head.index("calls")], "5", "scope-report --counters: calls of touch_pages")
    # each region's file and line: in CSV and JSON always, in text with --lines
    where = {n: (f, int(line)) for n, f, line in zip(p.names, p.regions["file"], p.regions["line"])}
    expect_eq(head[-3:], ["region", "file", "line"], "scope-report --counters: the last CSV columns")
    expect_eq({name: (row[-2], int(row[-1])) for name, row in got.items()}, {n: where[n] for n in got},
              "scope-report --counters: file and line in CSV")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--counters", "--format", "json", t.path("out.h5")])
    rep.expect_rc(0)
    doc = json.loads(t.text(rep))
    expect_eq({x["region"]: (x["file"], x["line"]) for x in doc["counters"]}, {n: where[n] for n in got},
              "scope-report --counters: file and line in JSON")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--counters", "--lines", t.path("out.h5")])
    rep.expect_rc(0)
    f, n = where["touch_pages"]
    expect([line for line in t.text(rep).splitlines() if line.endswith(f"  {f}:{n}  touch_pages")],
           f"scope-report --counters --lines: no row of touch_pages at {f}:{n}:\n{t.text(rep)}")


def case_regions(t):
    """SCOPE_COUNTER_REGIONS (--counter-regions) reads the counters in the regions it matches only,
    a program's own static functions found by their symbols."""
    t.need_prog()
    p, _ = profiled(t, "--counters", "perf::PAGE-FAULTS,perf::TASK-CLOCK", "--counter-regions", "^(touch_pages|spin)$")
    expect_eq(counter(p, "perf::PAGE-FAULTS", "touch_pages").tolist(), [PAGES] * 5, "page faults of touch_pages")
    expect(all(c > 0 for c in counter(p, "perf::TASK-CLOCK", "spin")), "CPU time of spin")
    for name in ("work", "sleeper", "main", "worker"):
        expect_eq(set(counter(p, "perf::TASK-CLOCK", name).tolist()), {0}, f"counters read in {name}")


def case_missing(t):
    """An event that does not exist: one line naming it and why at start, the run goes on, and
    the profile lists only the counters that were read."""
    t.need_prog()
    p, r = profiled(t, "--counters", "perf::PAGE-FAULTS,NO_SUCH_EVENT,perf::NO-SUCH-THING")
    lines = [line for line in r.err_lines() if "NO_SUCH_EVENT" in line or "NO-SUCH-THING" in line]
    expect_eq(len(lines), 2, f"lines about the missing events: {r.err_lines()}")
    expect(all("cannot be counted" in line and "goes on without it" in line for line in lines),
           f"the lines say what happens: {lines}")
    expect_eq(str(p.processes["counters"][0]), "perf::PAGE-FAULTS", "/processes/counters")
    expect_eq(counter(p, "perf::PAGE-FAULTS", "touch_pages").tolist(), [PAGES] * 5, "page faults of touch_pages")


def case_hardware(t):
    """PAPI_TOT_INS and PAPI_TOT_CYC through libpapi, and instructions per cycle in scope-report
    --counters; skipped with PAPI's reason where the machine has no PMU (a VM)."""
    t.need_prog()
    p, r = profiled(t, "--counters", "PAPI_TOT_INS,PAPI_TOT_CYC")
    why = [line for line in r.err_lines() if "PAPI" in line]
    if why:
        raise Skipped("hardware counters cannot be counted here: " + "; ".join(why))
    expect_eq(str(p.processes["counters"][0]), "PAPI_TOT_INS,PAPI_TOT_CYC", "/processes/counters")
    expect(all(c > 0 for c in counter(p, "PAPI_TOT_INS", "spin")), "instructions of spin")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--counters", t.path("out.h5")])
    rep.expect_rc(0)
    expect("IPC" in t.text(rep), "scope-report --counters shows IPC")


def case_ipc(t):
    """Instructions per cycle where PAPI_TOT_INS and PAPI_TOT_CYC were both read: a profile of two
    software counters, renamed in /processes/counters as those two (this VM has no PMU), shows
    each region's counter0_total / counter1_total as IPC in scope-report --counters."""
    import h5py
    t.need_prog()
    p, _ = profiled(t, "--counters", "perf::TASK-CLOCK,perf::PAGE-FAULTS")
    with h5py.File(t.path("out.h5"), "r+") as f:
        names = f["processes/counters"]
        names[0] = "PAPI_TOT_INS,PAPI_TOT_CYC"
    rep = t.run([os.path.join(t.bin, "scope-report"), "--counters", "--format", "csv", t.path("out.h5")])
    rep.expect_rc(0)
    rows = [line.split(",") for line in t.text(rep).splitlines()]
    head = rows[0]
    expect("ipc" in head, f"no ipc column: {head}")
    got = {row[head.index("region")]: row[head.index("ipc")] for row in rows[1:]}
    expect_eq(got["spin"], "", "IPC of a region without cycles")
    got = {"touch_pages": float(got["touch_pages"])}
    sums0, sums1 = pair_sums(p, 0), pair_sums(p, 1)
    want = sums0["touch_pages"][0] / sums1["touch_pages"][0]
    expect(abs(got["touch_pages"] - want) <= 0.0005 + 1e-9 * want,
           f"IPC of touch_pages: {got['touch_pages']}, expected {want}")


def case_off(t):
    """Without counters the profile has no counter column and names none."""
    t.need_prog()
    p, _ = profiled(t)
    expect("counters" not in p.processes, "/processes/counters without counters")
    expect(not [c for c in p.events if c.startswith("counter")], f"counter columns: {sorted(p.events)}")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
