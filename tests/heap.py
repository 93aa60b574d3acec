#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case of heap tracking (SCOPE_HEAP=1, scope-report --heap, scope-bench --memory) on tests/progs/heap.cpp.

Usage: heap.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

heap.cpp allocates known blocks from known functions: before main, with
malloc, calloc, realloc, the aligned allocators and C++'s new and delete,
on four threads and in a signal handler, and leaks known bytes. EXPECTED
below is each region's row of /process0/heap, exactly. One function per
case (case_bench_memory is CASE "bench-memory").
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import json
import os
import re
import shutil
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

# region: (allocations, frees, bytes allocated, peak live, live at exit)
EXPECTED = {
    "early()": (1, 1, 100, 100, 0),
    "leaky()": (3, 1, 3000, 3000, 2000),
    "peaky()": (3, 3, 102400, 98304, 0),
    "grows()": (2, 2, 500, 400, 0),
    "aligned()": (3, 3, 3584, 3584, 0),
    "cxx()": (4, 3, 406, 373, 77),
    "handled()": (2, 2, 1020, 1000, 0),
    "on_usr1(int)": (1, 1, 50, 50, 0),
}
FIELDS = ("allocations", "frees", "bytes_allocated", "peak_live_bytes", "live_bytes_at_exit")


def heap_rows(path, process=0):
    with h5py.File(path, "r") as f:
        g = f[f"process{process}/heap"]
        rows = {g["region"][i].decode(): tuple(int(g[k][i]) for k in FIELDS) for i in range(len(g["region"]))}
        attrs = {k: int(g.attrs[k]) for k in ("peak_live_bytes", "live_bytes_at_exit", "untracked")}
        s = f[f"process{process}/heap_sites"]
        sites = [(s["region"][i].decode(), int(s["bytes"][i]), int(s["allocations"][i]), s["function"][i].decode(),
                  os.path.basename(s["file"][i].decode()), int(s["line"][i])) for i in range(len(s["region"]))]
    return rows, attrs, sites


def check_heap(t, path):
    """The known regions' rows exactly, the threads' workers, the call sites and the process's figures."""
    rows, attrs, sites = heap_rows(path)
    for region, want in EXPECTED.items():
        expect_eq(rows.get(region), want, f"{path}: heap of {region}")
    w = rows.get("worker(void*)")
    expect(w and w[:3] == (40, 40, 5120) and w[4] == 0 and 1280 <= w[3] <= 5120,
           f"{path}: heap of worker(void*) on 4 threads: {w}")
    expect_eq(attrs["untracked"], 0, "untracked calls")
    expect_eq(attrs["live_bytes_at_exit"], sum(r[4] for r in rows.values()), "live at exit, summed")
    expect(attrs["peak_live_bytes"] >= 98304 + 2000, f"process peak {attrs['peak_live_bytes']}")
    big = t.marker_line("heap.cpp", "peaky-big")
    expect(("peaky()", 65536, 1, "peaky()", "heap.cpp", big) in sites, f"the 64 KiB site at heap.cpp:{big}: {sites}")
    # a call site's blocks summed over the four threads (a loop unrolled has a site per copy)
    w_sites = [s[1:3] for s in sites if s[0] == "worker(void*)"]
    expect(w_sites and all(b == 128 * n and n % 4 == 0 for b, n in w_sites), f"worker's sites: {w_sites}")
    expect_eq(sorted(s[1] for s in sites if s[0] == "leaky()"), [1000, 1000, 1000], "leaky's sites")
    expect_eq(sorted(s[1] for s in sites if s[0] == "cxx()"), [33, 40, 77, 256], "cxx's four largest blocks")
    return rows


def case_exact(t):
    """scope-run with SCOPE_HEAP=1: every known region's figures exactly, threads and a signal
    handler included; the program's own output unchanged."""
    _, r = t.profile(env={"SCOPE_HEAP": "1"})
    expect_eq(t.text(r), "heap ok\n", "output")
    check_heap(t, t.path("out.h5"))


def case_preload(t):
    """Plain LD_PRELOAD with SCOPE_HEAP=1 gives the same figures as scope-run."""
    t.need_prog()
    r = t.run([t.prog], env=t.env({"SCOPE_HEAP": "1", "SCOPE_OUTPUT": t.path("plain.h5")}, preload=t.preload))
    r.expect_rc(0)
    expect_eq(t.text(r), "heap ok\n", "output")
    check_heap(t, t.path("plain.h5"))


def case_off(t):
    """Without SCOPE_HEAP the profile has no heap groups, and scope-report --heap says how to get them."""
    t.profile()
    with h5py.File(t.path("out.h5"), "r") as f:
        expect("process0/heap" not in f and "process0/heap_sites" not in f, "heap groups without SCOPE_HEAP")
    r = t.run([os.path.join(t.bin, "scope-report"), "--heap", t.path("out.h5")], env=t.env())
    r.expect_rc(1)
    expect_eq(r.err_lines(), [f"scope-report: {t.path('out.h5')}: the heap was not tracked (record with "
                              "SCOPE_HEAP=1, or scope-bench --memory)"], "message")


def case_fork(t):
    """A forked child counts its own blocks from scratch: its leak is its own, a block of its
    parent's that it frees is not counted, and the parent's figures are unchanged."""
    p, r = t.profile("fork", env={"SCOPE_HEAP": "1"})
    expect_eq(t.text(r), "heap ok\n", "output")
    expect_eq(len(p.pids), 2, "processes")
    with h5py.File(t.path("out.h5"), "r") as f:
        owners = [k for k in range(2) if b"forked_child(void*)" in list(f[f"process{k}/heap/region"][:])]
    expect_eq(len(owners), 1, "processes with forked_child's blocks")
    child, parent = owners[0], 1 - owners[0]
    rows, attrs, _ = heap_rows(t.path("out.h5"), child)
    expect_eq(rows, {"forked_child(void*)": (1, 0, 5000, 5000, 5000)}, "the child's heap")
    expect_eq(attrs["live_bytes_at_exit"], 5000, "the child's leak")
    rows, _, _ = heap_rows(t.path("out.h5"), parent)
    for region, want in EXPECTED.items():
        expect_eq(rows.get(region), want, f"parent: heap of {region}")
    expect_eq(rows.get("forks()"), (1, 1, 64, 64, 0), "parent: heap of forks()")


def case_churn(t):
    """Four threads allocating, reallocating and freeing at once: the region's allocations, frees
    and bytes equal what the program counted itself, nothing is live at exit, nothing untracked
    (a realloc's old block is forgotten before another thread can be given its address)."""
    for run in range(3):
        _, r = t.profile("churn", env={"SCOPE_HEAP": "1"})
        words = t.text(r).split()
        expect(len(words) == 4 and words[0] == "churn", f"output {t.text(r)!r}")
        allocations, frees, total = (int(w) for w in words[1:])
        rows, attrs, _ = heap_rows(t.path("out.h5"))
        expect_eq(rows.get("churn(void*)"), (allocations, frees, total, rows["churn(void*)"][3], 0),
                  f"run {run}: heap of churn(void*)")
        expect_eq(attrs["untracked"], 0, f"run {run}: calls untracked")


def short(name):
    """heap.cpp's C++ names as the views show them: without parameter lists and clone suffixes."""
    return re.sub(r" \[clone [^]]*\]$", "", name).split("(")[0] if name else "(outside any region)"


def case_report(t):
    """scope-report --heap: rows by peak live bytes, as in the file, by the names the other views
    show (--names full: the file's), with each region's file and line; JSON holds the same
    numbers."""
    t.profile(env={"SCOPE_HEAP": "1"})
    report = os.path.join(t.bin, "scope-report")
    rows, attrs, sites = heap_rows(t.path("out.h5"))
    with h5py.File(t.path("out.h5"), "r") as f:
        where = {n.decode(): (fl.decode(), int(line))
                 for n, fl, line in zip(f["regions/name"][()], f["regions/file"][()], f["regions/line"][()])}
    r = t.run([report, "--heap", "--format", "json", "--names", "full", t.path("out.h5")], env=t.env())
    r.expect_rc(0)
    doc = json.loads(t.text(r))
    expect_eq(doc["live_bytes_at_exit"], attrs["live_bytes_at_exit"], "JSON live at exit")
    got = {x["region"]: tuple(x[k] for k in FIELDS) for x in doc["regions"]}
    want = {(k or "(outside any region)"): v for k, v in rows.items()}
    expect_eq(got, want, "JSON rows, --names full")
    r = t.run([report, "--heap", "--format", "json", t.path("out.h5")], env=t.env())
    r.expect_rc(0)
    doc = json.loads(t.text(r))
    got = {x["region"]: tuple(x[k] for k in FIELDS) for x in doc["regions"]}
    expect_eq(got, {short(k): v for k, v in rows.items()}, "JSON rows")
    expect_eq({x["region"]: (x["file"], x["line"]) for x in doc["regions"]},
              {short(k): where.get(k, ("", 0)) for k in rows}, "JSON rows: file and line")
    expect_eq(sorted((x["region"], x["function"], x["bytes"]) for x in doc["sites"]),
              sorted((short(s[0]), short(s[3]), s[1]) for s in sites),
              "JSON sites: regions and functions")
    r = t.run([report, "--heap", "--format", "csv", t.path("out.h5")], env=t.env())
    r.expect_rc(0)
    head = t.text(r).splitlines()[0].split(",")
    expect_eq(head[-3:], ["region", "file", "line"], "CSV columns")
    r = t.run([report, "--heap", "--lines", t.path("out.h5")], env=t.env())
    r.expect_rc(0)
    lines = t.text(r).splitlines()
    peaky = [line for line in lines if line.endswith("  peaky")]
    f, n = where["peaky()"]
    expect(peaky and peaky[0].split()[-2] == f"{f}:{n}", f"--lines: the row of peaky: {peaky}")
    peaks = [x["peak_live_bytes"] for x in doc["regions"]]
    expect_eq(peaks, sorted(peaks, reverse=True), "rows by peak")
    expect_eq((doc["sites"][0]["bytes"], doc["sites"][0]["allocations"]), (65536, 1), "the site of most bytes")
    r = t.run([report, "--heap", "--top", "1", t.path("out.h5")], env=t.env())
    r.expect_rc(0)
    lines = t.text(r).splitlines()
    expect(lines[0].startswith(f"{t.path('out.h5')}: heap of 1 process: "), f"first line {lines[0]!r}")
    expect(lines[3].split() == ["3", "3", "100.0", "KiB", "96.0", "KiB", "0", "B", "peaky"], f"top row {lines[3]!r}")
    expect(lines[4].startswith("... ") and lines[4].endswith(" more regions (--top)"), f"--top line {lines[4]!r}")


def case_damaged(t):
    """A damaged heap table (a column longer than the others, one of strings where numbers
    belong, an attribute missing): scope-report --heap says what is wrong in one line and exits
    1, where a column longer than the table once overran the report's buffers."""
    t.profile(env={"SCOPE_HEAP": "1"})
    report = os.path.join(t.bin, "scope-report")
    with h5py.File(t.path("out.h5"), "r") as f:
        n = len(f["process0/heap/region"])

    def longer(g):
        v = g["heap/allocations"][()]
        del g["heap/allocations"]
        g["heap/allocations"] = np.concatenate([v, np.zeros(100000, dtype=v.dtype)])

    def strings(g):
        del g["heap_sites/line"]
        g["heap_sites/line"] = np.array(["7"] * len(g["heap_sites/region"]), dtype=h5py.string_dtype())

    cases = (
        ("longer.h5", longer, f"/process0/heap/allocations has {n + 100000} rows, /process0/heap/region has {n}"),
        ("strings.h5", strings, "/process0/heap_sites/line is not a column of integers"),
        ("noattr.h5", lambda g: g["heap"].attrs.__delitem__("untracked"),
         "/process0/heap attribute untracked is missing"),
        ("nosites.h5", lambda g: g.__delitem__("heap_sites"), "/process0/heap_sites is missing"),
    )
    for name, edit, why in cases:
        shutil.copy(t.path("out.h5"), t.path(name))
        with h5py.File(t.path(name), "r+") as f:
            edit(f["process0"])
        r = t.run([report, "--heap", t.path(name)], env=t.env())
        r.expect_rc(1)
        expect_eq(r.err_lines(), [f"scope-report: {t.path(name)}: {why}"], f"{name}: message")
        expect_eq(t.text(r), "", f"{name}: output")


def case_bench_memory(t):
    """scope-bench --memory: after the measured runs one more, from its own fresh directory, with
    the heap tracked (LABEL-heap.h5, exact figures) and no timing; none after a configuration
    that failed."""
    t.need_prog()
    bench = os.path.join(t.bin, "scope-bench")
    r = t.run([bench, "-o", "res", "--repeat", "2", "--memory", "--variant", "other=--ignored",
               "--", t.prog], env=t.env())
    # heap.cpp ignores its arguments: both configurations succeed
    r.expect_rc(0)
    with open(t.path("res", "bench.json")) as f:
        b = json.load(f)
    expect_eq([x["name"] for x in b["runs"]], [
        "baseline-warm-up", "baseline-1", "baseline-2", "baseline-heap",
        "variant_other-warm-up", "variant_other-1", "variant_other-2", "variant_other-heap"], "runs")
    heap_run = b["runs"][3]
    expect_eq((heap_run["kind"], heap_run["wall_s"], heap_run["profile"]), ("memory", None, "baseline-heap.h5"),
              "the memory pass: untimed, profiled")
    expect_eq(b["configurations"][0]["memory"], "baseline-heap", "configuration's memory pass")
    check_heap(t, t.path("res", "baseline-heap.h5"))
    for name in ("baseline-1.h5", "baseline-2.h5"):
        with h5py.File(t.path("res", name), "r") as f:
            expect("process0/heap" not in f, f"{name}: a measured run tracked the heap")
    expect_eq(os.listdir(t.path("res", "work")), [], "working directories left")
    # A configuration whose runs fail gets no memory pass.
    fail = os.path.join(os.path.dirname(t.prog), "bench_job-gcc-O2")
    r = t.run([bench, "-o", "res2", "--repeat", "1", "--memory", "--no-warm-up", "--variant", "bad=--fail", "--",
               fail], env=t.env())
    r.expect_rc(1)
    with open(t.path("res2", "bench.json")) as f:
        b = json.load(f)
    expect_eq([x["name"] for x in b["runs"]], ["baseline-1", "baseline-heap", "variant_bad-1"], "runs with a failure")


CASES = cases_of(globals())


def heap_test(a):
    if a.sanitized:
        # the sanitizer's allocator, preloaded first, takes every call
        raise Skipped("built with ASan: its allocator takes the calls heap tracking would count")
    return Test(a)


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: heap_test(a))


if __name__ == "__main__":
    sys.exit(main())
