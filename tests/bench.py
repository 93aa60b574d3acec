#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case of scope-bench (and scope-report --bench) on the test program bench_job.

Usage: bench.py CASE --prog PATH --bin DIR --lib DIR --src DIR --progs DIR --workdir DIR
                [--sanitized LIBASAN]

tests/progs/bench_job.c naps as long as it is told, writes out/result.bin of a given size
relative to its working directory (failing with 4 when out/ is there already: an earlier run's
output), needs a staged file when told, fails with 5 under --fail or BENCH_JOB_FAIL, and appends
"begin"/"end" lines with its working directory, time and arguments to $BENCH_JOB_TRACE. From
that trace and bench.json each case checks the runs' order, labels, directories and figures
exactly. One function per case (case_order_labels is CASE "order-labels").
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

FIGS = ("wall_s", "cpu_s", "user_s", "sys_s", "cpu_utilisation", "peak_rss_bytes", "output_bytes")
MIB = 1048576.0


class Bench(Test):
    """The test program under scope-bench, its trace in the test's folder."""

    def __init__(self, a):
        super().__init__(a)
        self.bench = os.path.join(a.bin, "scope-bench")
        self.report = os.path.join(a.bin, "scope-report")
        self.progs = a.progs
        self.trace = self.path("trace")

    def run_bench(self, *args, env=None):
        self.need_prog()
        extra = {"BENCH_JOB_TRACE": self.trace}
        extra.update(env or {})
        return self.run([self.bench, *args], env=self.env(extra))

    def results(self, out):
        with open(self.path(out, "bench.json")) as f:
            return json.load(f)

    def traced(self):
        """The trace as (what, time, pid, cwd, args) in the order written."""
        rows = []
        if not os.path.exists(self.trace):
            return rows
        with open(self.trace) as f:
            for line in f:
                what, when, pid, cwd, *args = line.split()
                rows.append((what, float(when), int(pid), cwd, args))
        return rows


def runs_of(b, kind=None):
    return [r for r in b["runs"] if kind is None or r["kind"] == kind]


def expect_sequential(t, expected_dirs):
    """Every run began after the one before it ended, in expected_dirs' order, each in its own
    working directory."""
    rows = t.traced()
    expect_eq(len(rows), 2 * len(expected_dirs), "trace lines (a begin and an end per run)")
    for i, d in enumerate(expected_dirs):
        begin, end = rows[2 * i], rows[2 * i + 1]
        expect_eq((begin[0], end[0]), ("begin", "end"), f"run {i}: begin then end")
        expect_eq(begin[2], end[2], f"run {i}: one process")
        expect_eq(begin[3], d, f"run {i}: working directory")
        if i:
            expect(begin[1] >= rows[2 * i - 1][1], f"run {i} began before run {i - 1} ended")
    return rows


def case_order_labels(t):
    """Baseline then each variant in the order given, each a warm-up (with --warm-up-args) and
    --repeat measured runs, one at a time, each in a fresh copy of the stage under the results'
    work/ folder, removed afterwards; labels, names, files and figures in bench.json exactly."""
    os.makedirs(t.path("stage", "sub"))
    with open(t.path("stage", "input.txt"), "w") as f:
        f.write("input\n")
    with open(t.path("stage", "sub", "more.txt"), "w") as f:
        f.write("x" * 3000)
    r = t.run_bench("-o", "res", "--stage", "stage", "--repeat", "3", "--warm-up-args", "--quick",
                    "--variant", "two=--sleep 30 --tag 'a b'", "--variant", "one",
                    "--env", "BENCH_JOB_UNUSED=1", "--",
                    t.prog, "--sleep", "10", "--write", "5000", "--need", "input.txt")
    r.expect_rc(0)
    b = t.results("res")
    res = t.path("res")
    labels = ["baseline", "variant_two", "variant_one"]
    expect_eq([c["label"] for c in b["configurations"]], labels, "configurations")
    expect_eq([c["args"] for c in b["configurations"]], [[], ["--sleep", "30", "--tag", "a b"], []],
              "variant arguments (split as a shell does)")
    expect_eq(b["configurations"][2]["env"], ["BENCH_JOB_UNUSED=1"], "variant env")
    names = []
    for label in labels:
        names += [f"{label}-warm-up", f"{label}-1", f"{label}-2", f"{label}-3"]
    expect_eq([x["name"] for x in b["runs"]], names, "runs in order")
    expect_eq([x["kind"] for x in b["runs"]], ["warm-up", "measured", "measured", "measured"] * 3, "kinds")
    expect_eq([x["label"] for x in b["runs"]], [n.rsplit("-", 1)[0].replace("-warm", "") for n in names],
              "run labels")
    expect_eq([x["status"] for x in b["runs"]], ["ok"] * 12, "statuses")
    rows = expect_sequential(t, [os.path.join(res, "work", n) for n in names])
    base_args = ["--sleep", "10", "--write", "5000", "--need", "input.txt"]
    for i, n in enumerate(names):
        args = base_args + (["--sleep", "30", "--tag", "a", "b"] if "two" in n else [])
        if n.endswith("warm-up"):
            args = args + ["--quick"]
        expect_eq(rows[2 * i][4], args, f"{n}: arguments")
    # Each run's own directory is gone, and nothing landed in the caller's.
    expect_eq(os.listdir(t.path("res", "work")), [], "working directories left")
    expect(not os.path.exists(t.path("out")), "a run wrote into the caller's directory")
    expect_eq(sorted(os.listdir(t.path("stage"))), ["input.txt", "sub"], "the stage was changed")
    # Profiles of the measured runs only; a log of every run.
    files = sorted(os.listdir(res))
    want = sorted(["bench.json", "work"] + [n + ".log" for n in names] +
                  [n + ".h5" for n in names if not n.endswith("warm-up")])
    expect_eq(files, want, "files in the results")
    for x in b["runs"]:
        expect_eq(x["profile"], None if x["kind"] == "warm-up" else x["name"] + ".h5", f"{x['name']}: profile")
        expect_eq(x["workdir"], None, f"{x['name']}: workdir kept")
        expect_eq(x["exit_status"], 0, f"{x['name']}: exit status")
        # bytes written under the working directory: out/result.bin, not the staged copy
        expect_eq(x["output_bytes"], 5000, f"{x['name']}: output bytes")
        expect(x["cpu_s"] == x["user_s"] + x["sys_s"] or math.isclose(x["cpu_s"], x["user_s"] + x["sys_s"]),
               f"{x['name']}: CPU is user + system")
        expect(x["peak_rss_bytes"] > 100000, f"{x['name']}: peak RSS {x['peak_rss_bytes']}")
    for c, label in zip(b["configurations"], labels):
        measured = [x for x in runs_of(b, "measured") if x["label"] == label]
        expect_eq((c["runs"], c["failed"]), (3, 0), f"{label}: runs")
        for k in FIGS:
            v = [x[k] for x in measured]
            for which, want in (("median", np.percentile(v, 50)), ("p90", np.percentile(v, 90)), ("max", max(v))):
                expect(math.isclose(c["stats"][k][which], want, rel_tol=1e-8, abs_tol=1e-12),
                       f"{label}: {k} {which} {c['stats'][k][which]} is not that of the measured runs, {want}")
    # Each configuration's figures hold its own naps (the last --sleep wins: 30 ms for two).
    wall = {c["label"]: c["stats"]["wall_s"]["median"] for c in b["configurations"]}
    expect(wall["variant_two"] >= 0.030, f"variant_two's wall under its 30 ms nap: {wall}")
    expect(wall["baseline"] >= 0.010, f"baseline's wall under its 10 ms nap: {wall}")
    ratio = b["configurations"][1]["ratios"]["wall_s"]
    expect(math.isclose(ratio, wall["variant_two"] / wall["baseline"], rel_tol=1e-6), "wall ratio")
    expect_eq(b["configurations"][0]["ratios"]["wall_s"], None, "the baseline's ratio")
    m = b["manifest"]
    for k in ("cpu_model", "logical_cores", "memory_bytes", "kernel", "libc_version", "thread_env"):
        expect(k in m, f"manifest has no {k}")
    expect_eq(m["logical_cores"], os.cpu_count(), "logical cores")
    # The changed regions of each variant: nap's callee grew by the 30 ms.
    cmp = b["configurations"][1]["compared"]
    expect(cmp and cmp["base"].startswith("baseline-") and cmp["new"].startswith("variant_two-"), "compared runs")
    expect("nap" in [x["region"] for x in cmp["regions"]], "nap not among the changed regions")


def case_fresh(t):
    """A run that finds another run's outputs fails (out/ exists): with --repeat 3 and a warm-up
    all four succeed, so no run ever saw another's directory. --keep keeps each one, holding
    only its own output."""
    r = t.run_bench("-o", "res", "--repeat", "3", "--keep", "--", t.prog, "--write", "100")
    r.expect_rc(0)
    b = t.results("res")
    names = ["baseline-warm-up", "baseline-1", "baseline-2", "baseline-3"]
    expect_eq([x["status"] for x in b["runs"]], ["ok"] * 4, "statuses")
    expect_eq(sorted(os.listdir(t.path("res", "work"))), sorted(names), "kept directories")
    for n in names:
        expect_eq(os.listdir(t.path("res", "work", n)), ["out"], f"{n}: contents")
        expect_eq(os.path.getsize(t.path("res", "work", n, "out", "result.bin")), 100, f"{n}: output")
    expect_eq([x["workdir"] for x in b["runs"]], ["work/" + n for n in names], "workdir")
    # The same job run twice in one directory does fail: the check can fail.
    os.makedirs(t.path("same"))
    expect_eq(t.run([t.prog, "--write", "1"], env=t.env(), cwd=t.path("same")).rc, 0, "first run")
    expect_eq(t.run([t.prog, "--write", "1"], env=t.env(), cwd=t.path("same")).rc, 4, "second run")


def case_failure(t):
    """A variant that fails (exit 5 under its --env) is recorded with its status, the benchmark
    goes on to the last variant, the summary lists the failed runs and scope-bench exits 1."""
    r = t.run_bench("-o", "res", "--repeat", "2", "--variant", "bad", "--env", "BENCH_JOB_FAIL=1",
                    "--variant", "last=--sleep 1", "--", t.prog)
    r.expect_rc(1)
    b = t.results("res")
    expect_eq([(x["name"], x["status"], x["exit_status"]) for x in b["runs"]], [
        ("baseline-warm-up", "ok", 0), ("baseline-1", "ok", 0), ("baseline-2", "ok", 0),
        ("variant_bad-warm-up", "failed", 5), ("variant_bad-1", "failed", 5), ("variant_bad-2", "failed", 5),
        ("variant_last-warm-up", "ok", 0), ("variant_last-1", "ok", 0), ("variant_last-2", "ok", 0)], "runs")
    bad = b["configurations"][1]
    expect_eq((bad["runs"], bad["failed"], bad["stats"]), (2, 2, None), "variant_bad")
    expect_eq(b["runs"][4]["error"], "exit 5", "error")
    expect_eq(b["configurations"][2]["failed"], 0, "variant_last")
    for n in ("variant_bad-1", "variant_bad-2"):
        expect(re.search(rf"^  {n} \(measured\): exit 5; log .*/res/{n}\.log$", r.stderr, re.M),
               f"summary does not list {n}")
    expect(re.search(r"^variant_bad\s+0/2 FAILED", r.stderr, re.M), "summary does not mark variant_bad")
    # scope-report --bench says the same, with the same status.
    rr = t.run([t.report, "--bench", t.path("res")], env=t.env())
    rr.expect_rc(1)
    expect("variant_bad-1 (measured): exit 5" in t.text(rr), "scope-report --bench: failed runs")


def case_gate(t):
    """--max-regression: a variant whose median wall time grew by more than PCT makes scope-bench
    exit 3 and is marked; one that did not passes (exit 0); scope-report --bench exits the same."""
    # 100% of 500 ms naps: a loaded machine's stalls (a quarter second seen) stay under it,
    # 1 s more does not
    r = t.run_bench("-o", "slow", "--repeat", "3", "--max-regression", "100",
                    "--variant", "slow=--sleep 1500", "--", t.prog, "--sleep", "500")
    r.expect_rc(3)
    b = t.results("slow")
    expect_eq(b["gate"]["failed"], True, "gate failed")
    expect_eq(b["configurations"][1]["slower"], True, "variant_slow slower")
    expect(b["configurations"][1]["slower_pct"] > 150, "slower_pct")
    expect_eq(b["gate"]["max_regression_pct"], 100, "the gate's limit")
    expect(re.search(r"^  variant_slow: \+\d+\.\d% of the baseline's: SLOWER than allowed$", r.stderr, re.M),
           "summary gate line")
    t.run([t.report, "--bench", t.path("slow")], env=t.env()).expect_rc(3)
    # regions are marked SLOWER only with 1% of the baseline's median wall time in one run
    floor = 0.01 * b["configurations"][0]["stats"]["wall_s"]["median"] * 1e9
    rows = b["configurations"][1]["compared"]["regions"]
    expect("nanosleep" in [x["region"] for x in rows if x["status"] == "SLOWER"], "nanosleep not SLOWER")
    for x in rows:
        if x["status"] == "SLOWER":
            expect(max(x["total_base_ns"], x["total_ns"], x["self_base_ns"], x["self_ns"]) >= floor,
                   f"{x['region']} is marked SLOWER under 1% of the baseline's wall time")
    r = t.run_bench("-o", "same", "--repeat", "3", "--max-regression", "100",
                    "--variant", "same=--sleep 500", "--", t.prog, "--sleep", "500")
    r.expect_rc(0)
    b = t.results("same")
    expect_eq((b["gate"]["failed"], b["configurations"][1]["slower"]), (False, False), "gate passed")
    expect(re.search(r"^  variant_same: [+-]\d+\.\d% of the baseline's: ok$", r.stderr, re.M), "ok line")
    t.run([t.report, "--bench", t.path("same")], env=t.env()).expect_rc(0)


def case_tree(t):
    """Peak memory is the whole process tree's: three children holding 24 MiB each at once make
    more than 72 MiB, three times what any one process held; CPU time counts the children."""
    r = t.run_bench("-o", "res", "--repeat", "2", "--no-warm-up", "--", t.prog, "--children", "3", "24")
    r.expect_rc(0)
    b = t.results("res")
    for x in b["runs"]:
        expect(x["peak_rss_bytes"] >= 72 * MIB, f"{x['name']}: peak RSS {x['peak_rss_bytes']} under 72 MiB")
        expect(x["peak_rss_bytes"] < 200 * MIB, f"{x['name']}: peak RSS {x['peak_rss_bytes']} far over 3 x 24 MiB")
        expect(x["sys_s"] + x["user_s"] > 0.01, f"{x['name']}: the children's CPU time (touching 72 MiB) is missing")
    s = b["configurations"][0]["stats"]["peak_rss_bytes"]
    expect(s["median"] >= 72 * MIB, "median peak RSS")


def case_baseline_gate(t):
    """The gate fails when the baseline's own slowest repeat is more than PCT over its median
    (one repeat naps 1 s more), even with no variant: exit 3, the baseline marked."""
    once = t.path("once")
    r = t.run_bench("-o", "res", "--repeat", "3", "--no-warm-up", "--max-regression", "50", "--",
                    t.prog, "--sleep", "100", "--slow-once", once)
    r.expect_rc(3)
    b = t.results("res")
    expect_eq((b["gate"]["baseline_slower"], b["gate"]["failed"]), (True, True), "gate")
    expect(b["gate"]["baseline_spread_pct"] > 100, f"spread {b['gate']['baseline_spread_pct']}")
    expect(re.search(r"^  baseline: slowest repeat \+\d+\.\d% of its median: SLOWER than allowed$", r.stderr, re.M),
           "summary line")


def case_interrupt(t):
    """SIGTERM (a batch system's end of a job) reaches the run in progress and ends the benchmark
    after it: exit 130, what was measured written, the cut run marked, its directory removed."""
    t.need_prog()
    argv = [t.bench, "-o", t.path("res"), "--repeat", "5", "--no-warm-up", "--", t.prog, "--sleep", "2000"]
    proc = subprocess.Popen(argv, env=t.env({"BENCH_JOB_TRACE": t.trace}), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while sum(row[0] == "begin" for row in t.traced()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    print(err)
    expect_eq(proc.returncode, 130, "exit status")
    b = t.results("res")
    expect_eq(b["interrupted"], True, "interrupted")
    expect_eq([(x["name"], x["status"], x["signal"]) for x in b["runs"]],
              [("baseline-1", "ok", 0), ("baseline-2", "failed", signal.SIGTERM)], "runs")
    expect("(INTERRUPTED)" in err, "the summary does not say it was interrupted")
    expect_eq(os.listdir(t.path("res", "work")), [], "working directories left")


def case_no_profile(t):
    """--no-profile measures the same runs without the profiler: no profiles, no comparison,
    every figure still there; --no-warm-up runs none."""
    r = t.run_bench("-o", "res", "--repeat", "2", "--no-profile", "--no-warm-up", "--variant", "v", "--",
                    t.prog, "--write", "10")
    r.expect_rc(0)
    b = t.results("res")
    expect_eq([x["name"] for x in b["runs"]], ["baseline-1", "baseline-2", "variant_v-1", "variant_v-2"], "runs")
    expect_eq([x["profile"] for x in b["runs"]], [None] * 4, "profiles")
    expect_eq(sorted(f for f in os.listdir(t.path("res")) if f.endswith(".h5")), [], "profile files")
    expect_eq([x["output_bytes"] for x in b["runs"]], [10] * 4, "output bytes")
    expect_eq(b["configurations"][1]["compared"], None, "no comparison without profiles")
    expect_eq(len(t.traced()), 8, "runs traced")


def slurm_time(minutes):
    m = int(minutes)
    return f"{m // 1440}-{m % 1440 // 60:02d}:{m % 60:02d}:00" if m >= 1440 else f"{m // 60:02d}:{m % 60:02d}:00"


def case_project(t):
    """--project N prints an #SBATCH block whose figures follow from bench.json's baseline: N times
    the p90 wall time grown by the margin, p90 peak RSS grown (at least the max), CPU utilisation
    rounded up, N times the p90 bytes written; scope-report --bench --project prints the same."""
    r = t.run_bench("-o", "res", "--repeat", "3", "--project", "20000", "--margin", "10", "--",
                    t.prog, "--sleep", "5", "--write", "70000")
    r.expect_rc(0)
    b = t.results("res")
    s = b["configurations"][0]["stats"]
    grow = 1.1
    time_s = 20000 * s["wall_s"]["p90"] * grow
    minutes = max(1, math.ceil(time_s / 60))
    mem = max(s["peak_rss_bytes"]["p90"] * grow, s["peak_rss_bytes"]["max"])
    cpus = max(1, math.ceil(s["cpu_utilisation"]["median"] - 0.1))
    tmp = math.ceil(20000 * 70000 * grow / MIB)
    lines = [x for x in t.text(r).splitlines() if x.startswith("#SBATCH")]
    expect_eq(lines, [f"#SBATCH --time={slurm_time(minutes)}", f"#SBATCH --mem={max(1, math.ceil(mem / MIB))}M",
                      f"#SBATCH --cpus-per-task={cpus}", f"#SBATCH --tmp={tmp}M"], "#SBATCH block")
    expect(minutes >= 3, f"the projection's time {time_s} s is below 20000 x 5 ms")
    expect("# --time: 20000 units x p90 wall time" in t.text(r), "derivation of --time")
    rr = t.run([t.report, "--bench", t.path("res"), "--project", "20000", "--margin", "10"], env=t.env())
    rr.expect_rc(0)
    expect_eq(t.text(rr), t.text(r), "scope-report --bench --project")


def case_report(t):
    """scope-report --bench prints the summary scope-bench printed; --html draws a page with a bar
    per configuration and the changed regions, written atomically with -o."""
    r = t.run_bench("-o", "res", "--repeat", "2", "--variant", "v=--sleep 20", "--", t.prog, "--sleep", "1")
    r.expect_rc(0)
    rr = t.run([t.report, "--bench", t.path("res")], env=t.env())
    rr.expect_rc(0)
    summary = r.stderr[r.stderr.index(t.path("res") + ": 2 configurations"):]
    expect_eq(t.text(rr), summary, "scope-report --bench against scope-bench's summary")
    t.run([t.report, "--bench", t.path("res"), "--html", "-o", t.path("page.html")], env=t.env()).expect_rc(0)
    with open(t.path("page.html")) as f:
        page = f.read()
    expect(page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>"), "a whole page")
    for label in ("baseline", "variant_v"):
        expect_eq(page.count(f"<tr><th>{label}</th><td class=\"bar\">"), 4, f"bars of {label}")
    expect("variant_v: regions whose self time changed most" in page, "changed regions")
    expect("<td>nanosleep</td>" in page, "nanosleep among the changed regions")


def case_cli(t):
    """Usage errors exit 2 with one line naming the problem; results are never overwritten."""
    for args, msg in (
            (("--repeat", "0", t.prog), "scope-bench: bad --repeat '0': give a whole number from 1 to 1000"),
            (("--env", "A=1", t.prog), "scope-bench: --env sets what a variant runs: give it after --variant NAME"),
            (("--variant", "a/b", t.prog), "scope-bench: bad --variant name 'a/b'"),
            (("--variant", "a", "--variant", "a", t.prog), "scope-bench: --variant a is given twice"),
            (("--variant", "a='x", t.prog), "scope-bench: bad --variant 'a='x': a quote is not closed"),
            (("--stage", t.path("none"), t.prog), f"scope-bench: --stage {t.path('none')} is not a folder"),
            ((), "scope-bench: no program to run"),
            (("--bogus", t.prog), "scope-bench: unknown option --bogus"),
            ((t.path("nothing"),), f"scope-bench: {t.path('nothing')}: no such program")):
        r = t.run_bench("-o", "res", *args)
        r.expect_rc(2)
        expect_eq(len(r.err_lines()), 1, f"{args}: one line")
        expect(r.stderr.startswith(msg), f"{args}: {r.stderr!r} does not start with {msg!r}")
    expect(not os.path.exists(t.path("res")), "a usage error made the results folder")
    t.run_bench("-o", "res", "--repeat", "1", "--", t.prog).expect_rc(0)
    r = t.run_bench("-o", "res", "--repeat", "1", "--", t.prog)
    r.expect_rc(1)
    expect_eq(r.err_lines(), [f"scope-bench: {t.path('res')} holds a benchmark's results already: "
                              "remove it or give another folder with -o"], "second benchmark into one folder")
    # scope-report --bench on what is not a benchmark's results: one line, exit 1
    os.makedirs(t.path("bad"))
    for text, msg in (('{"configurations": [', "line 1: unexpected end (expected a value)"),
                      ('{"runs": []}', "not a benchmark's results (no configurations or runs)"),
                      ('{"configurations": [], "runs": []}', None)):
        with open(t.path("bad", "bench.json"), "w") as f:
            f.write(text)
        r = t.run([t.report, "--bench", t.path("bad")], env=t.env())
        r.expect_rc(1)
        want = f"scope-report: {t.path('bad', 'bench.json')}" + (f": {msg}" if msg else " has no configurations")
        expect_eq(r.err_lines(), [want], f"scope-report --bench on {text!r}")
    r = t.run([t.report, "--project", "3"], env=t.env())
    r.expect_rc(2)
    expect_eq(r.err_lines(), ["scope-report: --project and --margin apply to --bench DIR "
                              "(see scope-report --help)"], "--project without --bench")
    r = t.run([t.bench, "--help"], env=t.env())
    r.expect_rc(0)
    for opt in ("--stage", "--variant", "--env", "--exe", "--warm-up-args", "--memory", "--project"):
        expect(opt in t.text(r), f"--help does not mention {opt}")


def case_exe(t):
    """--variant NAME --exe PROGRAM runs another build with the same arguments."""
    other = os.path.join(t.progs, "bench_job-clang-O0")
    if not os.access(other, os.X_OK):
        other = os.path.join(t.progs, "bench_job-gcc-O0")
    r = t.run_bench("-o", "res", "--repeat", "1", "--no-warm-up", "--variant", "other", "--exe", other, "--",
                    t.prog, "--sleep", "1")
    r.expect_rc(0)
    b = t.results("res")
    expect_eq([c["program"] for c in b["configurations"]], [t.prog, other], "programs")
    pids = [row[2] for row in t.traced() if row[0] == "begin"]
    expect_eq(len(pids), 2, "runs")
    expect_eq([x["args"] for x in b["configurations"]], [[], []], "args")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "progs", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Bench(a))


if __name__ == "__main__":
    sys.exit(main())
