#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one test case of scope-report on profiles of real instrumented programs.

Usage: report.py CASE --bin DIR --lib DIR --progs DIR --rdcheck PATH --workdir DIR [--sanitized LIBASAN]

One function per case (case_flat is CASE "flat"). Each profiles the test
programs it needs with scope-run, runs scope-report on the profile and checks
its output against the profile itself, read with h5py: counts and nesting
exactly, times exactly where the report copies them and within rounding where
it computes them. Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import csv
import gzip
import io
import json
import os
import re
import shutil
import sys

import h5py
import numpy as np

from harness import Profile, Skipped, ToolTest, cases_of, expect, expect_eq, memory_dir, parser, run_case

# ---------------------------------------------------------------------------
# Running things


class Test(ToolTest):
    sample_rss = True  # case_scale bounds scope-report's time and peak RSS

    def profile(self, prog, *args, out="out.h5"):
        """Profiles PROG ARGS with scope-run; returns the profile's path."""
        self.run([self.scope_run, "-q", "-o", out, "--", self.prog(prog), *args],
                 env=self.env(preload_asan=True)).expect_rc(0)
        path = self.path(out)
        expect(os.path.isfile(path), f"no profile at {path}")
        return path

    def scope_report(self, *args, rc=0, quiet=False):
        expect(os.path.exists(self.report), f"{self.report} was not built")
        return self.run([self.report, *args], quiet=quiet).expect_rc(rc)


def parse_csv(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    expect(rows, "the CSV output has no rows")
    return rows


def text_rows(out, header_word="calls"):
    """The rows of a text table: lines after the header line, split on whitespace."""
    lines = out.splitlines()
    heads = [i for i, line in enumerate(lines) if header_word in line.split() and ": " not in line]
    expect(heads, f"no header line with {header_word!r} in:\n{out}")
    rows = []
    for line in lines[heads[0] + 1:]:
        if not line.strip() or line.startswith("..."):
            break
        rows.append(line.split())
    return rows


# ---------------------------------------------------------------------------
# Cases: tables


CHAIN = {"main": (1, 0), "a": (3, 1), "b": (6, 2), "c": (30, 3)}  # calls, depth


def case_flat(t):
    path = t.profile("chain-gcc-O2")
    p = Profile(path)
    totals = p.region_totals()

    # The text table: one row per region, calls first, name last, by self time.
    out = t.scope_report(path).stdout
    expect(out.startswith(f"{path}: 40 calls of 4 regions in 1 process, wall "), f"heading: {out.splitlines()[0]!r}")
    header = [line for line in out.splitlines() if line.split()[:1] == ["calls"]]
    expect_eq(header[0].split() if header else None,
              ["calls", "total", "self", "mean", "min", "max", "std", "share", "region"], "header")
    rows = text_rows(out)
    expect_eq({r[-1]: int(r[0]) for r in rows}, {n: c for n, (c, _) in CHAIN.items()}, "calls per region")
    by_self = sorted(CHAIN, key=lambda n: (-totals[n][2], n))
    expect_eq([r[-1] for r in rows], by_self, "rows ordered by self time")

    # CSV: the same rows with exact numbers.
    rows = parse_csv(t.scope_report("--format", "csv", path).stdout)
    expect_eq(list(rows[0]), ["region", "calls", "total_ns", "self_ns", "mean_ns", "min_ns", "max_ns",
                              "std_ns", "share_pct", "file", "line"], "CSV columns")
    lanes = p.lanes[0]
    wall = sum(int(e) - int(s) for s, e in zip(lanes["start"], lanes["end"]))  # the threads' wall time
    calls = p.timeline()
    for r in rows:
        calls_, total, self_, mn, mx = totals[r["region"]]
        expect_eq([int(r[k]) for k in ("calls", "total_ns", "self_ns", "min_ns", "max_ns")],
                  [calls_, total, self_, mn, mx], f"CSV row of {r['region']}")
        durations = np.array([c[4] for c in calls if c[1] == r["region"]], dtype=np.float64)
        expect(abs(float(r["std_ns"]) - durations.std()) <= 0.05 + 1e-6 * durations.std(),
               f"std of {r['region']}: {r['std_ns']}, numpy says {durations.std():.2f}")
        expect(abs(float(r["mean_ns"]) - total / calls_) <= 0.05, f"mean of {r['region']}")
        expect(abs(float(r["share_pct"]) - 100 * self_ / wall) <= 0.001, f"share of {r['region']}")

    # Sorting, --top, filters.
    rows = parse_csv(t.scope_report("--format", "csv", "--sort", "calls", path).stdout)
    expect_eq([r["region"] for r in rows], ["c", "b", "a", "main"], "--sort calls")
    rows = parse_csv(t.scope_report("--format", "csv", "--sort", "name", path).stdout)
    expect_eq([r["region"] for r in rows], ["a", "b", "c", "main"], "--sort name")
    out = t.scope_report("--sort", "calls", "--top", "2", path).stdout
    expect_eq([r[-1] for r in text_rows(out)], ["c", "b"], "--top 2")
    expect("... 2 more regions" in out, "--top does not say how many rows it left out")
    rows = parse_csv(t.scope_report("--format", "csv", "--include", "^(a|b)$", path).stdout)
    expect_eq(sorted(r["region"] for r in rows), ["a", "b"], "--include '^(a|b)$'")
    rows = parse_csv(t.scope_report("--format", "csv", "--exclude", "^ma", "--exclude", "c", path).stdout)
    expect_eq(sorted(r["region"] for r in rows), ["a", "b"], "--exclude ^ma --exclude c")

    # JSON: per-process and per-region figures.
    doc = json.loads(t.scope_report("--format", "json", path).stdout)
    expect_eq(doc["schema"], 3, "JSON schema")
    expect_eq(len(doc["processes"]), 1, "JSON processes")
    expect_eq(doc["processes"][0]["calls"], 40, "JSON calls of the process")
    expect_eq(doc["processes"][0]["pid"], int(p.pids[0]), "JSON pid")
    expect_eq({r["region"]: r["calls"] for r in doc["regions"]}, {n: c for n, (c, _) in CHAIN.items()},
              "JSON calls per region")

    # An aggregate-only profile (/pairs without /events): the table, without deviations.
    aggregate = t.path("aggregate.h5")
    shutil.copy(path, aggregate)
    with h5py.File(aggregate, "r+") as f:
        del f["events"]
    rows = parse_csv(t.scope_report("--format", "csv", aggregate).stdout)
    expect_eq({r["region"]: (int(r["calls"]), r["std_ns"]) for r in rows}, {n: (c, "") for n, (c, _) in CHAIN.items()},
              "aggregate-only profile: calls, and no std")
    r = t.scope_report("--tree", aggregate, rc=1)
    expect_eq(r.err_lines(), [f"scope-report: {aggregate}: the profile holds no events (/events is missing)"],
              "--tree of an aggregate-only profile")


def case_tree(t):
    path = t.profile("chain-gcc-O2")
    totals = Profile(path).region_totals()
    out = t.scope_report("--tree", path).stdout
    expect(re.search(r"^process 0 \(pid \d+\) chain-gcc-O2: 40 calls on 1 thread lane, recording .*$", out, re.M),
           f"no heading for process 0 with 40 calls:\n{out}")
    # Each level two spaces deeper: name, calls and indentation exactly.
    lines = [line for line in out.splitlines()[2:] if line.strip()]
    tree = []
    for line in lines:
        m = re.match(r"^\s*(\S+ \S+)\s+(\S+ \S+)\s+(\d+)  ( *)(\S+)$", line)
        expect(m, f"tree line {line!r}")
        tree.append((len(m.group(4)) // 2, m.group(5), int(m.group(3))))
    expect_eq(tree, [(0, "main", 1), (1, "a", 3), (2, "b", 6), (3, "c", 30)], "tree (level, region, calls)")

    rows = parse_csv(t.scope_report("--tree", "--format", "csv", path).stdout)
    expect_eq(list(rows[0]), ["process", "lane", "level", "calls", "total_ns", "self_ns", "region", "path", "file",
                              "line"], "CSV tree columns")
    expect_eq([(int(r["level"]), r["path"], int(r["calls"]), r["lane"]) for r in rows],
              [(0, "main", 1, ""), (1, "main;a", 3, ""), (2, "main;a;b", 6, ""), (3, "main;a;b;c", 30, "")],
              "CSV tree (lanes merged: no lane)")
    for r in rows:  # one path per region here: the node is the region
        expect_eq((int(r["total_ns"]), int(r["self_ns"])), tuple(totals[r["region"]][1:3]),
                  f"total and self of {r['path']}")

    doc = json.loads(t.scope_report("--tree", "--format", "json", path).stdout)
    lane = doc["processes"][0]
    node, chain = lane["calls"], []
    while node:
        expect_eq(len(node), 1, f"children of {chain}")
        chain.append((node[0]["region"], node[0]["calls"]))
        node = node[0]["children"]
    expect_eq(chain, [("main", 1), ("a", 3), ("b", 6), ("c", 30)], "JSON tree")

    rows = parse_csv(t.scope_report("--tree", "--depth", "2", "--format", "csv", path).stdout)
    expect_eq([r["path"] for r in rows], ["main", "main;a"], "--depth 2")
    rows = parse_csv(t.scope_report("--tree", "--exclude", "^b$", "--format", "csv", path).stdout)
    expect_eq([r["path"] for r in rows], ["main", "main;a", "main;a;c"], "--exclude b: c under a")

    # Recursion: fib's calls at each depth, from the depth column.
    path = t.profile("fib-gcc-O2", out="fib.h5")
    p = Profile(path)
    per_depth = {}
    for _, name, _, _, _, depth in p.timeline():
        if name == "fib":
            per_depth[depth] = per_depth.get(depth, 0) + 1
    rows = parse_csv(t.scope_report("--tree", "--format", "csv", path).stdout)
    expect_eq(rows[0]["path"], "main", "root of fib's tree")
    for r in rows[1:]:
        expect_eq(r["path"], ";".join(["main"] + ["fib"] * int(r["level"])), "path of a fib node")
        expect_eq(int(r["calls"]), per_depth[int(r["level"])], f"calls of fib at level {r['level']}")
    expect_eq(len(rows), 1 + max(per_depth), "levels of fib's tree")
    expect_eq(sum(int(r["self_ns"]) for r in rows), int(p.pairs["self_ns"].sum()), "self times of the tree")


def case_threads(t):
    path = t.profile("threads-gcc-O2")
    t.run([t.rdcheck, path]).expect_rc(0)
    p = Profile(path)
    lanes = p.lanes[0]
    rows = parse_csv(t.scope_report("--threads", "--format", "csv", path).stdout)
    expect_eq(len(rows), 5, "lanes")
    for i, r in enumerate(rows):
        expect_eq((int(r["lane"]), int(r["tid"]), r["name"]), (i, int(lanes["tid"][i]), lanes["name"][i]),
                  f"lane {i}")
        k = int(r["name"].split("-")[1]) if r["name"].startswith("worker-") else 0
        # main, and its 4 pthread_join (regions of kind wait)
        expect_eq(int(r["calls"]), 1000 * k + 1 if k else 5, f"calls on lane {i} ({r['name']})")
        expect_eq(int(r["regions"]), 2, f"regions on lane {i}")
        # which of worker and work, or main and its joins, has more self time is up to the machine
        expect(r["top_region"] in (("worker", "work") if k else ("main", "pthread_join")),
               f"top region of lane {i}: {r['top_region']}")
    out = t.scope_report("--threads", path).stdout
    text = {r[3]: int(r[4]) for r in text_rows(out)}
    expect_eq(text, {lanes["name"][0]: 5, "worker-1": 1001, "worker-2": 2001, "worker-3": 3001, "worker-4": 4001},
              "calls per lane in the text table")

    # --thread N: one lane's calls, in the flat table and the tree.
    for lane in range(1, 5):
        k = int(lanes["name"][lane].split("-")[1])
        rows = parse_csv(t.scope_report("--thread", lane, "--format", "csv", path).stdout)
        expect_eq({r["region"]: int(r["calls"]) for r in rows}, {"worker": 1, "work": 1000 * k},
                  f"--thread {lane}")
        rows = parse_csv(t.scope_report("--tree", "--thread", lane, "--format", "csv", path).stdout)
        expect_eq([(r["path"], int(r["calls"])) for r in rows], [("worker", 1), ("worker;work", 1000 * k)],
                  f"--tree --thread {lane}")
    t.scope_report("--thread", "9", path, rc=2)


def case_processes(t):
    # calls 1000 2: the parent and two forked children; child c runs c * 1000 calls.
    path = t.profile("calls-gcc-O2", "1000", "2")
    t.run([t.rdcheck, path]).expect_rc(0)
    p = Profile(path)
    expect_eq(len(p.pids), 3, "processes in the profile of calls 1000 2")
    rows = parse_csv(t.scope_report("--processes", "--format", "csv", path).stdout.split("\n\n")[0])
    by_pid = {int(r["pid"]): r for r in rows}
    expect_eq(sorted(by_pid), sorted(int(x) for x in p.pids), "pids")
    leaf = {}
    for row in range(len(p.pairs["region"])):
        if p.names[p.pairs["region"][row]] == "leaf":
            leaf[int(p.pairs["process"][row])] = int(p.pairs["count"][row])
    expect_eq(sorted(leaf.values()), [990, 990, 1980], "leaf calls per process")
    per_process = {int(r["process"]): int(r["calls"]) for r in rows}
    # the parent: main, run, 10 outer, 990 leaf and 2 waits for its children
    for i in range(3):
        expect(per_process[i] in (1001, 1004, 2001), f"calls of process {i}: {per_process[i]}")
    expect_eq(sum(per_process.values()), 1004 + 1001 + 2001, "calls of all processes")

    text = t.scope_report("--processes", "--format", "csv", path).stdout
    regions = parse_csv(text.split("\n\n")[1])
    spread = {r["region"]: r for r in regions}
    expect_eq({n: (int(r["processes"]), int(r["calls"])) for n, r in spread.items()},
              {"main": (1, 1), "run": (3, 3), "outer": (3, 40), "leaf": (3, 3960), "wait": (1, 2)},
              "procs and calls per region")
    totals = {}
    for row in range(len(p.pairs["region"])):
        totals.setdefault(p.names[p.pairs["region"][row]], []).append(int(p.pairs["total_ns"][row]))
    for name, r in spread.items():
        v = totals[name]
        for key, want in (("total_min_ns", min(v)), ("total_mean_ns", sum(v) / len(v)), ("total_max_ns", max(v))):
            expect(abs(float(r[key]) - want) <= 0.06, f"{key} of {name}: {r[key]}, pairs say {want}")

    doc = json.loads(t.scope_report("--processes", "--format", "json", path).stdout)
    expect_eq(len(doc["processes"]), 3, "JSON processes")
    expect_eq(len(doc["regions"]), 5, "JSON regions")

    # One process: --process N and its rows only.
    child = [i for i in range(3) if leaf[i] == 1980][0]
    rows = parse_csv(t.scope_report("--process", child, "--format", "csv", path).stdout)
    expect_eq({r["region"]: int(r["calls"]) for r in rows}, {"run": 1, "outer": 20, "leaf": 1980},
              f"--process {child}")
    r = t.scope_report("--process", "3", path, rc=2)
    expect(re.search(r"no process 3 \(it has 3\)", r.stderr), f"--process 3: {r.stderr!r}")
    r = t.scope_report("--rank", "0", path, rc=2)
    expect("no process of rank 0" in r.stderr, f"--rank 0: {r.stderr!r}")


# ---------------------------------------------------------------------------
# Cases: exports


def lane_ids(p, process):
    """Chrome's tid of each lane: the OS tid (unique here)."""
    return [int(x) for x in p.lanes[process]["tid"]]


def case_chrome(t):
    path = t.profile("threads-gcc-O2")
    p = Profile(path)
    doc = json.loads(t.scope_report("--chrome", path, quiet=True).stdout)
    expect_eq(doc["displayTimeUnit"], "ns", "displayTimeUnit")
    events = doc["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    xs = [e for e in events if e["ph"] == "X"]
    pid = int(p.pids[0])
    names = {e["tid"]: e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    expect_eq(names, dict(zip(lane_ids(p, 0), p.lanes[0]["name"])), "thread_name events")
    expect([e for e in meta if e["name"] == "process_name" and e["pid"] == pid], "no process_name event")
    expect_eq(len(xs), len(p.events["depth"]), "X events (one per call)")
    for e in xs:
        for key in ("name", "cat", "ph", "ts", "dur", "pid", "tid"):
            expect(key in e, f"X event without {key}: {e}")
        expect(isinstance(e["ts"], float) and isinstance(e["dur"], float), f"ts and dur are not floats: {e}")
        expect_eq(e["pid"], pid, "pid of an X event")
    calls = p.timeline()
    tids = lane_ids(p, 0)
    want = sorted((name, tids[lane], start, dur) for _, name, lane, start, dur, _ in calls)
    got = sorted((e["name"], e["tid"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in xs)
    expect(want == got, "the X events are not the profile's calls (name, tid, ts, dur)")

    # A time window and a minimum duration keep exactly the calls that overlap it / last long enough.
    starts = sorted(c[3] for c in calls)
    since, until = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    doc = json.loads(t.scope_report("--chrome", "--since", f"{since}ns", "--until", str(until), path, quiet=True).stdout)
    got = len([e for e in doc["traceEvents"] if e["ph"] == "X"])
    expect_eq(got, len([c for c in calls if c[3] < until and c[3] + c[4] >= since]), "X events in the window")
    durations = sorted(c[4] for c in calls)
    cut = durations[len(durations) // 2] + 1
    doc = json.loads(t.scope_report("--chrome", "--min-duration", f"{cut / 1000}us", path, quiet=True).stdout)
    got = len([e for e in doc["traceEvents"] if e["ph"] == "X"])
    expect_eq(got, len([c for c in calls if c[4] >= cut]), f"X events of {cut} ns or more")
    doc = json.loads(t.scope_report("--chrome", "--thread", "2", "--include", "^work$", path, quiet=True).stdout)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    k = int(p.lanes[0]["name"][2].split("-")[1])
    expect_eq((len(xs), {e["name"] for e in xs}, {e["tid"] for e in xs}), (1000 * k, {"work"}, {tids[2]}),
              "--thread 2 --include ^work$")


def check_speedscope(doc, p, what):
    """Schema fields, and each profile's events balanced and in order; returns O events per profile."""
    expect_eq(doc["$schema"], "https://www.speedscope.app/file-format-schema.json", f"{what}: $schema")
    frames = doc["shared"]["frames"]
    expect_eq([f["name"] for f in frames], p.names, f"{what}: frames")
    opened = []
    for prof in doc["profiles"]:
        for key, value in (("type", "evented"), ("unit", "nanoseconds")):
            expect_eq(prof[key], value, f"{what}: {key} of {prof['name']}")
        expect(prof["startValue"] <= prof["endValue"], f"{what}: startValue > endValue in {prof['name']}")
        stack, last, n = [], prof["startValue"], 0
        for ev in prof["events"]:
            expect(ev["at"] >= last, f"{what}: 'at' goes back in {prof['name']}: {ev}")
            expect(0 <= ev["frame"] < len(frames), f"{what}: frame out of range: {ev}")
            last = ev["at"]
            if ev["type"] == "O":
                stack.append(ev["frame"])
                n += 1
            else:
                expect_eq(ev["type"], "C", f"{what}: event type")
                expect(stack and stack[-1] == ev["frame"], f"{what}: close of {ev['frame']} with {stack[-3:]} open")
                stack.pop()
        expect_eq(stack, [], f"{what}: frames left open in {prof['name']}")
        expect(last <= prof["endValue"], f"{what}: events after endValue in {prof['name']}")
        opened.append(n)
    return opened


def case_speedscope(t):
    path = t.profile("threads-gcc-O2")
    p = Profile(path)
    doc = json.loads(t.scope_report("--speedscope", path, quiet=True).stdout)
    opened = check_speedscope(doc, p, "threads")
    per_lane = np.bincount(p.events["thread"].astype(np.int64), minlength=5)
    expect_eq(opened, [int(x) for x in per_lane], "open events per profile (= calls per lane)")
    expect_eq(len(doc["profiles"]), 5, "one profile per lane")
    for prof, name in zip(doc["profiles"], p.lanes[0]["name"]):
        expect(name in prof["name"], f"profile {prof['name']!r} does not name lane {name!r}")

    path = t.profile("fib-gcc-O2", out="fib.h5")
    p = Profile(path)
    doc = json.loads(t.scope_report("--speedscope", path, quiet=True).stdout)
    expect_eq(check_speedscope(doc, p, "fib"), [len(p.events["depth"])], "open events of fib")
    doc = json.loads(t.scope_report("--speedscope", "--min-duration", "1us", path, quiet=True).stdout)
    long_calls = int((p.events["duration"] >= 1000).sum())
    expect_eq(sum(check_speedscope(doc, p, "fib --min-duration 1us")), long_calls, "calls of 1 us or more")


# Ranks 2 and 3 are moved to a second host whose clock runs SHIFT_NS ahead.
SHIFT_NS = 3_700_000_123
US = 1000  # ns: the alignment must hold to this


def job_timeline(path, align):
    """What --chrome must show: {pid: [(name, ts ns, dur ns)]} sorted, and each pid's latest
    MPI_Init end (ns on the timeline). Hosts are shifted so that the latest MPI_Init end among
    each host's ranks meets the one on rank 0's host; zero is the earliest shifted start."""
    with h5py.File(path, "r") as f:
        start = [int(x) for x in f["processes/start"][()]]
        host = list(f["processes/host"].asstr()[()])
        rank = [int(x) for x in f["processes/rank"][()]]
        pid = [int(x) for x in f["processes/pid"][()]]
        names = list(f["regions/name"].asstr()[()])
        kinds = list(f["regions/kind"].asstr()[()])
        pairs = {k: f["pairs"][k][()] for k in ("process", "region", "first", "count")}
        delta, dur = f["events/start_delta"][()].astype(np.uint64), f["events/duration"][()]
    calls, init_end = {i: [] for i in range(len(pid))}, {}
    for row in range(len(pairs["region"])):
        i, region = int(pairs["process"][row]), int(pairs["region"][row])
        first, count = int(pairs["first"][row]), int(pairs["count"][row])
        rel = np.cumsum(delta[first:first + count], dtype=np.uint64)
        for k in range(count):
            calls[i].append((names[region], int(rel[k]), int(dur[first + k])))
            if kinds[region] == "mpi" and names[region] in ("MPI_Init", "MPI_Init_thread"):
                end = start[i] + int(rel[k]) + int(dur[first + k])
                init_end[host[i]] = max(init_end.get(host[i], 0), end)
    shift = {h: 0 for h in host}
    ref = host[rank.index(min(r for r in rank if r >= 0))]
    if align and len(shift) > 1 and ref in init_end:
        shift = {h: init_end[ref] - init_end[h] if h in init_end else 0 for h in shift}
    zero = min(start[i] + shift[host[i]] for i in range(len(pid)))
    out, ends = {}, {}
    for i in range(len(pid)):
        at0 = start[i] + shift[host[i]] - zero
        out[pid[i]] = sorted((name, at0 + rel, d) for name, rel, d in calls[i])
        ends[pid[i]] = max(at0 + rel + d for name, rel, d in calls[i] if name.startswith("MPI_Init"))
    return out, ends


def chrome_timeline(doc):
    """{pid: [(name, ts ns, dur ns)]} sorted, from a --chrome document."""
    out = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            out.setdefault(e["pid"], []).append((e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000)))
    return {pid: sorted(v) for pid, v in out.items()}


def expect_timeline(got, want, what):
    expect_eq(sorted(got), sorted(want), f"{what}: pids")
    for pid in want:
        expect_eq(len(got[pid]), len(want[pid]), f"{what}: calls of pid {pid}")
        for g, w in zip(got[pid], want[pid]):
            expect(g[0] == w[0] and abs(g[1] - w[1]) <= US and abs(g[2] - w[2]) <= US,
                   f"{what}: pid {pid} has {g}, expected {w} (name, ts ns, dur ns)")


def case_align(t):
    # A real job: mpi-ring on 4 ranks under Open MPI, one merged file with the host of each rank.
    mpirun = shutil.which("mpirun")
    ring = os.path.join(t.progs, "mpi-ring")
    if not mpirun or not os.access(ring, os.X_OK):
        raise Skipped("needs mpirun and tests/progs/mpi-ring (Open MPI)")
    t.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4", t.scope_run, "-q", "-o", "job.h5",
           "--", ring], env=t.env(preload_asan=True)).expect_rc(0)
    job = t.path("job.h5")
    with h5py.File(job, "r") as f:
        expect("host" in f["processes"], "the job profile has no /processes/host")
        ranks = [int(x) for x in f["processes/rank"][()]]
        expect_eq(sorted(ranks), [0, 1, 2, 3], "ranks")

    # Two hosts: ranks 0 and 1 on node-a, 2 and 3 on node-b, whose clock is SHIFT_NS ahead.
    two = t.path("two.h5")
    shutil.copy(job, two)
    with h5py.File(two, "r+") as f:
        on_b = np.array([r >= 2 for r in ranks])
        f["processes/host"][...] = np.array(["node-b" if b else "node-a" for b in on_b], dtype=object)
        for col in ("start", "end"):
            v = f[f"processes/{col}"][()].astype(np.uint64)
            v[on_b] += np.uint64(SHIFT_NS)
            f[f"processes/{col}"][...] = v

    aligned = json.loads(t.scope_report("--chrome", two, quiet=True).stdout)
    want, ends = job_timeline(two, align=True)
    expect_timeline(chrome_timeline(aligned), want, "--chrome of two hosts")
    pids = [int(x) for x in h5py.File(two, "r")["processes/pid"][()]]
    end_a = max(ends[p] for p, r in zip(pids, ranks) if r < 2)
    end_b = max(ends[p] for p, r in zip(pids, ranks) if r >= 2)
    expect(abs(end_a - end_b) <= US, f"latest MPI_Init ends: node-a {end_a} ns, node-b {end_b} ns")
    labels = {e["pid"]: e["args"]["name"] for e in aligned["traceEvents"] if e["name"] == "process_name"}
    order = {e["pid"]: e["args"]["sort_index"] for e in aligned["traceEvents"] if e["name"] == "process_sort_index"}
    for p, r in zip(pids, ranks):
        expect(labels[p].endswith(f"rank {r} on node-{'b' if r >= 2 else 'a'}"), f"process name {labels[p]!r}")
        expect_eq(order[p], r, f"sort index of rank {r}")

    # --no-align leaves the offset; so does a job without MPI_Init regions.
    plain = json.loads(t.scope_report("--chrome", "--no-align", two, quiet=True).stdout)
    want, ends = job_timeline(two, align=False)
    expect_timeline(chrome_timeline(plain), want, "--chrome --no-align")
    left = max(ends[p] for p, r in zip(pids, ranks) if r >= 2) - max(ends[p] for p, r in zip(pids, ranks) if r < 2)
    expect(abs(left - SHIFT_NS) < SHIFT_NS // 10, f"--no-align: node-b's MPI_Init ends {left} ns after node-a's")
    no_init = t.path("noinit.h5")
    shutil.copy(two, no_init)
    with h5py.File(no_init, "r+") as f:
        names = list(f["regions/name"].asstr()[()])
        f["regions/name"][...] = np.array([n.replace("MPI_Init", "MPI_Begin") for n in names], dtype=object)
    doc = json.loads(t.scope_report("--chrome", no_init, quiet=True).stdout)
    expect_eq({p: sorted(c[1:] for c in v) for p, v in chrome_timeline(doc).items()},
              {p: sorted(c[1:] for c in v) for p, v in chrome_timeline(plain).items()},
              "--chrome of a job without MPI_Init (times as --no-align)")

    # speedscope: the same timeline; each lane's profile names its pid.
    doc = json.loads(t.scope_report("--speedscope", two, quiet=True).stdout)
    frame = [f["name"] for f in doc["shared"]["frames"]].index("MPI_Init")
    closes = {}
    for prof in doc["profiles"]:
        p = int(re.match(r"pid (\d+),", prof["name"]).group(1))
        at = [ev["at"] for ev in prof["events"] if ev["type"] == "C" and ev["frame"] == frame]
        if at:
            closes[p] = max(closes.get(p, 0), max(at))
    end_a = max(closes[p] for p, r in zip(pids, ranks) if r < 2)
    end_b = max(closes[p] for p, r in zip(pids, ranks) if r >= 2)
    expect(abs(end_a - end_b) <= US, f"--speedscope: latest MPI_Init ends node-a {end_a}, node-b {end_b}")
    # The table takes it too: it places --since and --until on the same timeline.
    t.scope_report("--no-align", two)


def fmt_bytes(v):
    """Bytes as scope-report's text tables show them."""
    if v < 1024:
        return f"{v} B"
    x, units = v / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while x >= 1024 and len(units) > 1:
        x, units = x / 1024, units[1:]
    return f"{x:.1f} {units[0]}"


def with_bytes(src, dst):
    """SRC with the columns of processes that made MPI calls: /pairs bytes_sent and
    bytes_received (row r: (r + 1) * 1.5 MB + process sent, 7 r + 3 received), and
    /events ones that sum to them (all on each pair's first call). Returns the pair sums."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        proc, first = f["pairs/process"][()], f["pairs/first"][()]
        rows = np.arange(len(proc), dtype=np.uint64)
        sent = (rows + 1) * np.uint64(1_500_000) + proc.astype(np.uint64)
        received = rows * np.uint64(7) + np.uint64(3)
        f["pairs"].create_dataset("bytes_sent", data=sent)
        f["pairs"].create_dataset("bytes_received", data=received)
        n = len(f["events/duration"])
        ev_sent, ev_received = np.zeros(n, np.uint32), np.zeros(n, np.uint8)
        ev_sent[first], ev_received[first] = sent, received
        f["events"].create_dataset("bytes_sent", data=ev_sent)
        f["events"].create_dataset("bytes_received", data=ev_received)
    return sent, received


def case_bytes(t):
    """/pairs bytes_sent and bytes_received: columns in the flat table (text, CSV, JSON)
    and in --processes, with the sums of the pairs; none without them or with --thread."""
    plain = t.profile("calls-gcc-O2", "1000", "2")
    head = parse_csv(t.scope_report("--format", "csv", plain).stdout)[0]
    expect("bytes_sent" not in head and "bytes_received" not in head, f"bytes columns without bytes: {list(head)}")
    path = t.path("bytes.h5")
    sent, received = with_bytes(plain, path)
    t.run([t.rdcheck, path]).expect_rc(0)
    p = Profile(path)
    proc = [int(x) for x in p.pairs["process"]]
    names = [p.names[r] for r in p.pairs["region"]]
    by_region, by_process = {}, {}
    for k in range(len(proc)):
        for key, table in ((names[k], by_region), (proc[k], by_process)):
            v = table.setdefault(key, [0, 0])
            v[0] += int(sent[k])
            v[1] += int(received[k])

    # CSV: two columns after the others, each region's sums
    rows = parse_csv(t.scope_report("--format", "csv", path).stdout)
    expect_eq(list(rows[0])[-5:], ["share_pct", "bytes_sent", "bytes_received", "file", "line"],
              "CSV columns with bytes")
    expect_eq({r["region"]: [int(r["bytes_sent"]), int(r["bytes_received"])] for r in rows}, by_region,
              "CSV bytes per region")

    # text: "sent" and "received" before the name, in B, KiB, MiB
    out = t.scope_report(path).stdout
    header = [line.split() for line in out.splitlines() if line.split()[:1] == ["calls"]]
    expect_eq(header[0][-3:] if header else None, ["sent", "received", "region"], "text header with bytes")
    for name, (s_, r_) in by_region.items():
        line = [x for x in out.splitlines() if x.endswith("  " + name)]
        expect(line and re.search(rf"\s{re.escape(fmt_bytes(s_))}\s+{re.escape(fmt_bytes(r_))}\s+{name}$", line[0]),
               f"text row of {name} does not end with {fmt_bytes(s_)!r} {fmt_bytes(r_)!r}: {line}")

    # JSON: regions and processes
    doc = json.loads(t.scope_report("--format", "json", path).stdout)
    expect_eq({r["region"]: [r["bytes_sent"], r["bytes_received"]] for r in doc["regions"]}, by_region,
              "JSON bytes per region")
    expect_eq({r["process"]: [r["bytes_sent"], r["bytes_received"]] for r in doc["processes"]}, by_process,
              "JSON bytes per process")

    # --processes: per process, and per region over the processes
    text = t.scope_report("--processes", "--format", "csv", path).stdout
    procs, spread = (parse_csv(part) for part in text.split("\n\n"))
    expect_eq(list(procs[0])[-3:], ["bytes_sent", "bytes_received", "executable"], "--processes columns")
    expect_eq(list(spread[0])[-5:], ["imbalance", "bytes_sent", "bytes_received", "file", "line"],
              "--processes columns of the regions")
    expect_eq({int(r["process"]): [int(r["bytes_sent"]), int(r["bytes_received"])] for r in procs}, by_process,
              "--processes: bytes per process")
    expect_eq({r["region"]: [int(r["bytes_sent"]), int(r["bytes_received"])] for r in spread}, by_region,
              "--processes: bytes per region")
    doc = json.loads(t.scope_report("--processes", "--format", "json", path).stdout)
    expect_eq({r["region"]: [r["bytes_sent"], r["bytes_received"]] for r in doc["regions"]}, by_region,
              "--processes JSON: bytes per region")
    # --process: only that process's pairs
    rows = parse_csv(t.scope_report("--process", "1", "--format", "csv", path).stdout)
    want = {}
    for k in range(len(proc)):
        if proc[k] == 1:
            want[names[k]] = [int(sent[k]), int(received[k])]
    expect_eq({r["region"]: [int(r["bytes_sent"]), int(r["bytes_received"])] for r in rows}, want,
              "--process 1: bytes per region")

    # --thread: the pairs' bytes cannot be split by lane, so no columns
    head = parse_csv(t.scope_report("--thread", "0", "--format", "csv", path).stdout)[0]
    expect("bytes_sent" not in head, f"--thread 0 shows bytes columns: {list(head)}")


def case_folded(t):
    path = t.profile("chain-gcc-O2")
    p = Profile(path)
    out = t.scope_report("--folded", path).stdout
    lines = out.splitlines()
    for line in lines:
        expect(re.fullmatch(r"[^ ;]+(;[^ ;]+)* \d+", line), f"folded line {line!r}")
    stacks = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in lines}
    expect(set(stacks) <= {"main", "main;a", "main;a;b", "main;a;b;c"}, f"stacks {sorted(stacks)}")
    expect("main;a;b;c" in stacks, "no stack main;a;b;c")
    totals = p.region_totals()
    for stack, ns in stacks.items():
        expect_eq(ns, totals[stack.split(";")[-1]][2], f"self time of {stack}")
    expect_eq(sum(stacks.values()), int(p.pairs["self_ns"].sum()), "folded total (sum of self)")

    for prog in ("fib-gcc-O2", "threads-gcc-O2"):
        path = t.profile(prog, out=prog + ".h5")
        p = Profile(path)
        lines = t.scope_report("--folded", path).stdout.splitlines()
        expect_eq(sum(int(line.rsplit(" ", 1)[1]) for line in lines), int(p.pairs["self_ns"].sum()),
                  f"{prog}: folded total (sum of self)")
        expect_eq(len(lines), len({line.rsplit(" ", 1)[0] for line in lines}), f"{prog}: stacks repeated")


# ---------------------------------------------------------------------------
# Replaying the calls, as scope-report does, to know what it must show


class Call:
    __slots__ = ("process", "lane", "region", "start", "duration", "depth", "caller", "under", "child_dur",
                 "total", "self", "child_total", "kept")

    def __init__(self, process, lane, region, start, duration, depth):
        self.process, self.lane, self.region = process, lane, region
        self.start, self.duration, self.depth = start, duration, depth
        self.caller, self.under, self.child_dur, self.child_total = None, 0, 0, 0
        self.total, self.self, self.kept = duration, 0, True


def replay(path, overhead=None):
    """Every call of the profile at PATH, in the order scope-report walks them, with its
    caller (the call open one level up on its lane) and its times: with OVERHEAD (ns a call,
    per process), its duration less the cost of its own hooks and those of every call under
    it, and its self time less its callees' totals, both at least 0; else as recorded."""
    with h5py.File(path, "r") as f:
        names = list(f["regions/name"].asstr()[()])
        pairs = {k: f["pairs"][k][()] for k in ("process", "region", "first", "count")}
        ev = {k: f["events"][k][()] for k in ("start_delta", "duration", "thread", "depth")}
    calls = []
    for row in range(len(pairs["region"])):
        first, count = int(pairs["first"][row]), int(pairs["count"][row])
        starts = np.cumsum(ev["start_delta"][first:first + count].astype(np.uint64), dtype=np.uint64)
        for k in range(count):
            calls.append((int(pairs["process"][row]), int(starts[k]), int(ev["depth"][first + k]), row,
                          Call(int(pairs["process"][row]), int(ev["thread"][first + k]),
                               names[pairs["region"][row]], int(starts[k]), int(ev["duration"][first + k]),
                               int(ev["depth"][first + k]))))
    calls.sort(key=lambda c: c[:4])
    stacks, order = {}, []

    def leave(c):
        if overhead is None:
            c.total, c.self = c.duration, c.duration - c.child_dur
        else:
            cost = overhead[c.process] * (1.0 + c.under)
            c.total = c.duration - int(cost + 0.5) if cost < c.duration else 0
            c.self = c.total - c.child_total if c.total > c.child_total else 0
        if c.caller is not None:
            c.caller.under += 1 + c.under
            c.caller.child_total += c.total

    for _, _, _, _, c in calls:
        stack = stacks.setdefault((c.process, c.lane), [])
        while stack and (stack[-1].depth >= c.depth or stack[-1].start + stack[-1].duration < c.start):
            leave(stack.pop())
        if stack:
            c.caller = stack[-1]
            stack[-1].child_dur += c.duration
        stack.append(c)
        order.append(c)
    for stack in stacks.values():
        while stack:
            leave(stack.pop())
    return order


def outermost(c):
    """Whether no call of C's region is open around C on its lane (a recursion's outermost call)."""
    up = c.caller
    while up is not None and up.region != c.region:
        up = up.caller
    return up is None


def per_region(calls):
    """region -> [calls, total, self] of the calls kept; the total, as /pairs/total_ns, of
    the outermost calls only."""
    out = {}
    for c in calls:
        if c.kept:
            v = out.setdefault(c.region, [0, 0, 0])
            v[0] += 1
            v[1] += c.total if outermost(c) else 0
            v[2] += c.self
    return out


def kept_caller(c):
    """The nearest call above C that is kept, or None."""
    up = c.caller
    while up is not None and not up.kept:
        up = up.caller
    return up


def overheads(path):
    with h5py.File(path, "r") as f:
        cost = float(f["metadata"].attrs["overhead_ns_per_call"])
        n = len(f["processes/pid"])
    return [cost] * n


# ---------------------------------------------------------------------------
# Cases: names, lines, the recording's cost, callers, filters


# The short names of tests/progs/cxxnames.cpp's own functions (g++), by their calls.
CXX_NAMES = {
    "main": 1, "main::{lambda#1}::operator()": 2, "geo::Vec::operator()": 2, "geo::Vec::operator<": 3,
    "geo::Vec::take": 4, "geo::Vec::take#2": 5, "geo::Vec::operator bool": 6, "geo::operator<<": 7,
    "geo::Box::get": 8, "apply": 9, "(anonymous namespace)::hidden": 9, "label": 10, "twice#2": 11,
    "twice": 12,
}


def case_names(t):
    """Short C++ names in every view, --names full for the signatures, colliding short names
    kept apart with #2, and scope-run's summary printing them whole."""
    r = t.run([t.scope_run, "-o", "cxx.h5", "--top", "1000", "--", t.prog("cxxnames-gcc-O2")],
              env=t.env(preload_asan=True)).expect_rc(0)
    path = t.path("cxx.h5")
    p = Profile(path)
    full = {n: c for n, c in zip(p.names, [p.count(n) for n in p.names])}

    rows = parse_csv(t.scope_report("--format", "csv", path).stdout)
    shown = {row["region"]: int(row["calls"]) for row in rows}
    expect_eq(len(shown), len(rows), "rows with the same name")
    expect_eq(len(rows), len(p.names), "rows (one per region)")
    for name, calls in CXX_NAMES.items():
        expect_eq(shown.get(name), calls, f"calls of {name}")
    for name in shown:
        expect("(" not in name.replace("(anonymous namespace)", "").replace("operator()", ""),
                f"a parameter list left in {name!r}")
        expect(not re.search(r"<[^<=]", name.replace("operator<<", "").replace("operator<", "")),
               f"template arguments left in {name!r}")
    # what each short name stands for: the full names of the same calls
    expect_eq(sorted(shown.values()), sorted(full.values()), "calls per region, short and full")
    rows = parse_csv(t.scope_report("--format", "csv", "--names", "full", path).stdout)
    expect_eq(sorted(row["region"] for row in rows), sorted(p.names), "--names full: the profile's names")
    expect("geo::Vec::take() const &" in {row["region"] for row in rows}, "--names full: a whole signature")

    # text: whole names, last; the tree, folded stacks, exports and the filters use them too
    out = t.scope_report(path).stdout
    for name in CXX_NAMES:
        expect([line for line in out.splitlines() if line.endswith("  " + name)], f"no text row ends with {name!r}")
    rows = parse_csv(t.scope_report("--tree", "--format", "csv", path).stdout)
    paths = {row["path"]: int(row["calls"]) for row in rows}
    expect_eq(paths.get("main;main::{lambda#1}::operator();geo::Vec::operator()"), 2, "a path through the lambda")
    expect_eq(paths.get("main;apply;(anonymous namespace)::hidden"), 9, "a path through apply")
    folded = t.scope_report("--folded", path).stdout
    expect(re.search(r"^main;apply;\(anonymous namespace\)::hidden \d+$", folded, re.M), "folded stack of hidden")
    doc = json.loads(t.scope_report("--chrome", path, quiet=True).stdout)
    xs = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            xs[e["name"]] = xs.get(e["name"], 0) + 1
    expect_eq(xs, shown, "--chrome: events per short name")
    rows = parse_csv(t.scope_report("--format", "csv", "--include", r"^geo::Vec::take$", path).stdout)
    expect_eq([(row["region"], int(row["calls"])) for row in rows], [("geo::Vec::take", 4)],
              "--include of a short name")
    rows = parse_csv(t.scope_report("--format", "csv", "--include", r"take\(\) const &$", path).stdout)
    expect_eq([row["region"] for row in rows], ["geo::Vec::take#2"], "--include of a full signature")

    # scope-run's summary: the same names, whole
    lines = r.stderr.splitlines()
    head = [i for i, line in enumerate(lines) if line.endswith("region (by self time)")]
    expect(head, f"no summary table in:\n{r.stderr}")
    summary = {}
    for line in lines[head[0] + 1:]:
        m = re.match(r"^\s*(\d+)\s+(\S+ \S+\s+){5}\s*\d+\.\d%  (.+)$", line)
        if not m:
            break
        summary[m.group(3)] = int(m.group(1))
    expect_eq(summary, shown, "scope-run's summary: calls per name")
    expect(not [line for line in lines if "..." in line and "more regions" not in line], "a name cut with ...")


def case_lines(t):
    """--lines: file:line in the table, the tree, --callers, --callees, --processes and --diff;
    file and line in their CSV and JSON always, and in the args of Chrome trace events."""
    path = t.profile("chain-gcc-O2")
    p = Profile(path)
    where = {n: (f, int(line)) for n, f, line in zip(p.names, p.regions["file"], p.regions["line"])}
    for n, (f, line) in where.items():
        expect(f.endswith("chain.c") and line > 0, f"{n}: no file and line in the profile ({f}:{line})")

    out = t.scope_report("--lines", path).stdout
    rows = text_rows(out)
    expect_eq(out.splitlines()[2].split()[-2:], ["location", "region"], "text header with --lines")
    expect_eq({r[-1]: r[-2] for r in rows}, {n: f"{f}:{line}" for n, (f, line) in where.items()},
              "text: file:line of each region")
    out = t.scope_report(path).stdout
    expect("location" not in out and "chain.c" not in out, "the table shows locations without --lines")

    out = t.scope_report("--tree", "--lines", path).stdout
    tree = [line for line in out.splitlines()[2:] if line.strip()]
    for line, name in zip(tree, ["main", "a", "b", "c"]):
        f, n = where[name]
        expect(re.match(rf"^.*  {re.escape(f)}:{n}  +{name}$", line), f"tree line {line!r} has no {f}:{n}")

    # the lists: each row's region or the other end at its place, and none without --lines
    def at(name):
        return "{}:{}".format(*where[name])

    out = t.scope_report("--callers", "^c$", "--lines", path).stdout
    expect(re.search(rf"^callers of c at {re.escape(at('c'))}: 30 calls, .*\n +total +self +calls +location +caller\n"
                     rf".* 30  {re.escape(at('b'))}  b$", out, re.M), f"--callers ^c$ --lines:\n{out}")
    out = t.scope_report("--callees", "^a$", "--lines", path).stdout
    expect(re.search(rf"^callees of a at {re.escape(at('a'))}: 3 calls, .*\n +total +self +calls +location +callee\n"
                     rf".* 6  {re.escape(at('b'))}  b$", out, re.M), f"--callees ^a$ --lines:\n{out}")
    for args in (["--processes"], ["--diff", path]):
        out = t.scope_report(*args, "--lines", path).stdout
        rows = text_rows(out.split("\n\n")[-1])
        expect_eq({r[-1]: r[-2] for r in rows}, {n: at(n) for n in where}, f"{args[0]} --lines: file:line of each region")
        expect(out.split("\n\n")[-1].strip().splitlines()[0].split()[-2:] == ["location", "region"],
               f"{args[0]} --lines: header")
        out = t.scope_report(*args, path).stdout
        expect("location" not in out and "chain.c" not in out, f"{args[0]} shows locations without --lines")

    for args in ([], ["--tree"], ["--processes"], ["--callers", "."], ["--callees", "."], ["--diff", path]):
        text = t.scope_report(*args, "--format", "csv", path).stdout
        part = text.split("\n\n")[-1]
        for row in parse_csv(part):
            key = row.get("caller") or row.get("callee") or row["region"]
            if key == "(none)":
                expect_eq((row["file"], row["line"]), ("", "0"), f"{args}: file and line of (none)")
                continue
            expect_eq((row["file"], int(row["line"])), where[key], f"{args}: file and line of {key}")
    doc = json.loads(t.scope_report("--format", "json", path).stdout)
    expect_eq({r["region"]: (r["file"], r["line"]) for r in doc["regions"]}, where, "JSON file and line")
    doc = json.loads(t.scope_report("--tree", "--format", "json", path).stdout)
    node = doc["processes"][0]["calls"][0]
    expect_eq((node["region"], node["file"], node["line"]), ("main", *where["main"]), "JSON tree: file and line")
    doc = json.loads(t.scope_report("--diff", "--format", "json", path, path).stdout)
    expect_eq({r["region"]: (r["file"], r["line"]) for r in doc["regions"]}, where, "--diff JSON file and line")
    doc = json.loads(t.scope_report("--processes", "--format", "json", path).stdout)
    expect_eq({r["region"]: (r["file"], r["line"]) for r in doc["regions"]}, where, "--processes JSON file and line")
    for view in ("callers", "callees"):
        doc = json.loads(t.scope_report(f"--{view}", ".", "--format", "json", path).stdout)
        got = {}
        for x in doc[view]:
            got[x["region"]] = (x["file"], x["line"])
            for y in x[view]:
                got[y["region"]] = (y["file"], y["line"])
        want = dict(where, **({"(none)": ("", 0)} if view == "callers" else {}))
        expect_eq(got, want, f"--{view} JSON: file and line of the regions and of the other ends")

    doc = json.loads(t.scope_report("--chrome", path, quiet=True).stdout)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    expect_eq(len(xs), 40, "X events")
    for e in xs:
        expect_eq((e["args"]["file"], e["args"]["line"]), where[e["name"]], f"args of an X event of {e['name']}")


def case_compensate(t):
    """--compensate: each call less the measured cost of its own hooks and those of the calls
    under it, exactly; the headings and scope-run's summary say what recording cost, the calls
    that the filters counted without storing them included."""
    path = t.profile("fib-gcc-O2")
    cost = overheads(path)
    expect(0 < cost[0] < 1000, f"overhead_ns_per_call {cost[0]}")
    calls = replay(path, cost)
    rows = parse_csv(t.scope_report("--compensate", "--format", "csv", path).stdout)
    got = {r["region"]: [int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])] for r in rows}
    expect_eq(got, per_region(calls), "compensated calls, total and self per region")
    raw = Profile(path).region_totals()
    expect(got["main"][1] < raw["main"][1], "compensation took nothing off main")
    fib = [c for c in calls if c.region == "fib"]
    expect_eq(int(min(c.total for c in fib)), int(next(r for r in rows if r["region"] == "fib")["min_ns"]),
              "compensated min of fib")
    # the tree: the same times, node by node (fib's calls at each depth)
    rows = parse_csv(t.scope_report("--tree", "--compensate", "--format", "csv", path).stdout)
    for r in rows:
        level = int(r["level"])
        want = [c for c in calls if c.depth == level]
        expect_eq((int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])),
                  (len(want), sum(c.total for c in want), sum(c.self for c in want)), f"tree node {r['path']}")

    # the heading: the calls times the cost, its share of the wall time, the cost of a call
    n = len(calls)
    wall = Profile(path).span()
    out = t.scope_report(path).stdout
    m = re.search(r", recording (\S+ \S+) \((\d+\.\d)% of wall, (\d+\.\d) ns a call\)$", out.splitlines()[0])
    expect(m, f"the heading does not say what recording cost: {out.splitlines()[0]!r}")
    expect_eq((m.group(2), m.group(3)), (f"{100 * n * cost[0] / wall:.1f}", f"{cost[0]:.1f}"), "recording's share")
    expect("times less the recording's cost" in t.scope_report("--compensate", path).stdout, "--compensate unsaid")
    doc = json.loads(t.scope_report("--format", "json", path).stdout)
    expect_eq((doc["recording_ns"], doc["compensated"]), (round(n * cost[0]), False), "JSON recording_ns")

    # scope-run's summary: the calls times the cost, per call, and its share of the wall time
    r = t.run([t.scope_run, "-o", "summary.h5", "--", t.prog("fib-gcc-O2")], env=t.env(preload_asan=True))
    r.expect_rc(0)
    expect_summary_cost(r.stderr, t.path("summary.h5"), 21892, 0)
    # calls the filters kept out ran the hooks too: c's 30 calls, counted but not stored
    r = t.run([t.scope_run, "--not", "^c$", "-o", "filtered.h5", "--", t.prog("chain-gcc-O2")],
              env=t.env(preload_asan=True))
    r.expect_rc(0)
    path = t.path("filtered.h5")
    expect_summary_cost(r.stderr, path, 10, 30)
    cost = overheads(path)[0]
    doc = json.loads(t.scope_report("--format", "json", path).stdout)
    expect_eq(doc["recording_ns"], round(40 * cost), "JSON recording_ns of 10 calls stored and 30 not")
    m = re.search(r", recording \S+ \S+ \(\d+\.\d% of wall, (\d+\.\d) ns a call\)$",
                  t.scope_report(path).stdout.splitlines()[0])
    expect(m and m.group(1) == f"{cost:.1f}", "the heading's cost a call, with calls not stored")


def fmt_ns(ns):
    """A time as lib/format.c's fmt_ns prints it."""
    unit = 0
    while ns >= (999.5 if unit == 0 else 999.9995) and unit < 3:
        ns /= 1000
        unit += 1
    return f"{ns:.0f} ns" if unit == 0 else f"{ns:.3f} {['ns', 'us', 'ms', 's'][unit]}"


def expect_summary_cost(stderr, path, stored, unstored):
    """scope-run's summary of the profile at PATH: STORED calls in /events and UNSTORED more
    that the filters counted, recording them STORED + UNSTORED times the cost of a call."""
    cost = overheads(path)[0]
    with h5py.File(path, "r") as f:
        wall = float(f["metadata"].attrs["wall_seconds"])
    lines = stderr.splitlines()
    said = [line for line in lines if line.startswith(f"scope-run: {stored} calls of ")]
    expect(said, f"no line says {stored} calls were stored:\n{stderr}")
    expect_eq(said[0].endswith(f", and {unstored} more that the filters counted without storing them"),
              unstored > 0, f"the line of the calls not stored: {said[0]!r}")
    ns = (stored + unstored) * cost
    part = "the stored calls' part" if unstored else "it"
    want = (f"scope-run: recording them cost about {fmt_ns(ns)} ({cost:.1f} ns a call), "
            f"{100 * ns / (wall * 1e9):.1f}% of the program's wall time (scope-report --compensate subtracts {part})")
    expect(want in lines, f"no line {want!r} in:\n{stderr}")


def case_compensate_loop(t):
    """A function making 10^6 empty calls: its compensated self time against the same loop
    without hooks, timed by the program itself in every round.

    The bound: the compensated self time of the round least disturbed (the shortest call of
    loop, as the plain loop's fastest round is its least disturbed) exceeds the fastest
    uninstrumented loop's CPU time by at most B plus the time the thread was off its core in
    that round, B being a third of the hooks' measured cost a call times 10^6 (7 ms at 22 ns
    a call, against 11 to 13 ms uncompensated: loop's self time holds half of each call's
    hooks). Why it holds on a loaded 2-core machine: the plain loop is timed by its CPU time,
    which preemption does not lengthen; the instrumented one by the wall clock, so a
    preemption lands in whichever call was running, and the time off its core (wall less
    CPU, which the program measures) bounds what it adds. What is left is how far the hooks'
    cost at start-up (the best of 8 rounds of 256 calls) is from their cost in the loop,
    times 10^6: 1 to 3 ns a call in most rounds, more in some where the writer, copying and
    clearing the chunks the loop filled on the other core, slows it down; and the first
    round pays the first touch of the arena's resident chunks (4096 page faults, some 30 ms
    here), a cost no measurement at start-up holds. Below, the compensated time is at least
    0 by construction, and no tighter bound holds: the start-up measurement's own spread,
    about 1 ns a call, is as large as the plain loop. The arena is where a user's goes, in
    /dev/shm (the tests' own are on disk): there, no page of it is written back while the
    loop fills it again, which on this machine costs the loop 40 to 90 ns a call in page
    faults."""
    n, rounds = 1000000, 20
    if not memory_dir():
        raise Skipped("/dev/shm is not a writable folder with 1 GiB free: the arena is on disk, where "
                      "the loop pays page faults that the hooks' cost measured at start-up does not hold")
    # A burst of the host's load slows every round of a run alike (seen here: 15 to 29 ms
    # compensated against a 7 ms bound, at old and new code, minutes after 12 runs in a row
    # that held): the bound is asked of the best of three runs.
    tries = []
    for attempt in range(3):
        compensated, raw, plain, bound, off = loop_run(t, n, rounds, attempt)
        tries.append(f"{compensated} ns compensated, {bound:.0f} ns bound, {off} ns off its core, "
                     f"{plain} ns without hooks")
        if compensated <= plain + bound + off:
            break
    expect(compensated <= plain + bound + off,
           "compensated self time over the bound in every run: " + "; ".join(tries))
    if raw <= plain + bound + off:
        raise Skipped(f"the least disturbed round was {off} ns off its core: too busy a machine to tell "
                      f"the uncompensated self time ({raw} ns) from the bound")


def loop_run(t, n, rounds, attempt):
    """One run of the loop: (compensated self, raw self, plain CPU, bound, off-core ns) of its
    least disturbed round."""
    where = {"SCOPE_ARENA_DIR": memory_dir()}
    out = f"loop{attempt}.h5"
    r = t.run([t.scope_run, "-q", "-o", out, "--", t.prog("overhead-gcc-O2"), str(n), str(rounds)],
              env=t.env(preload_asan=True, **where)).expect_rc(0)
    timed = [tuple(int(v) for v in line.split()[1:]) for line in r.stdout.splitlines()]
    expect_eq(len(timed), rounds, "rounds timed")
    path = t.path(out)
    cost = overheads(path)[0]
    loop = Profile(path).calls("loop")
    calls = sorted(zip((int(s) for s in loop["start"]), (int(d) for d in loop["duration"])))
    expect_eq(len(calls), rounds, "calls of loop")
    starts = [s for s, _ in calls]
    plain = min(cpu for _, cpu, _ in timed)
    k = min(range(rounds), key=lambda i: calls[i][1])
    off, bound = timed[k][2], n * cost / 3

    def self_of(*args):
        rows = parse_csv(t.scope_report(*args, "--format", "csv", "--include", "^loop$", "--since",
                                        f"{starts[k]}ns", "--until", f"{starts[k] + 1}ns", path).stdout)
        expect_eq([(row["region"], int(row["calls"])) for row in rows], [("loop", 1)], "the round chosen")
        return int(rows[0]["self_ns"])

    compensated, raw = self_of("--compensate"), self_of()
    print(f"run {attempt}, round {k} of 10^6 calls, {off} ns off its core: self {raw} ns, compensated "
          f"{compensated} ns; without hooks {plain} ns of CPU (fastest round); {cost:.1f} ns a call "
          f"measured, bound {bound:.0f} ns")
    return compensated, raw, plain, bound, off


def case_overhead(t):
    """The cost of a call comes from /metadata overhead_ns_per_call alone, for every process
    (a column /processes/overhead_ns_per_call is not part of the schema and changes nothing);
    a figure that is no number is no measurement: the heading says so, and the file is still
    read."""
    path = t.profile("fib-gcc-O2")
    cost = overheads(path)[0]
    with h5py.File(path, "r") as f:
        n = int(f["pairs/count"][()].sum())
    heading = re.compile(r", recording (\S+ \S+) \((\d+\.\d)% of wall, (\d+\.\d) ns a call\)$")
    shutil.copy(path, t.path("column.h5"))
    with h5py.File(t.path("column.h5"), "r+") as f:
        f["processes/overhead_ns_per_call"] = np.full(len(f["processes/pid"]), 1000 * cost)
    for name in (path, t.path("column.h5")):
        m = heading.search(t.scope_report(name).stdout.splitlines()[0])
        expect(m and m.group(3) == f"{cost:.1f}", f"{name}: the heading's cost of a call: {m and m.group(0)!r}")
        doc = json.loads(t.scope_report("--format", "json", name).stdout)
        expect_eq(doc["recording_ns"], round(n * cost), f"{name}: JSON recording_ns")
    shutil.copy(path, t.path("text.h5"))
    with h5py.File(t.path("text.h5"), "r+") as f:
        del f["metadata"].attrs["overhead_ns_per_call"]
        f["metadata"].attrs["overhead_ns_per_call"] = "fast"
    first = t.scope_report(t.path("text.h5")).stdout.splitlines()[0]
    expect(first.endswith(", recording cost not measured"), f"a cost that is text: {first!r}")
    expect_eq(json.loads(t.scope_report("--format", "json", t.path("text.h5")).stdout)["recording_ns"], 0,
              "JSON recording_ns of a cost that is text")


def case_callers(t):
    """--callers and --callees: each region that calls (or is called by) the regions a regex
    matches, with the calls, total and self time of the calls between them."""
    path = t.profile("chain-gcc-O2")
    totals = Profile(path).region_totals()
    rows = parse_csv(t.scope_report("--callers", "^(c|main)$", "--format", "csv", path).stdout)
    expect_eq(list(rows[0]), ["region", "caller", "calls", "total_ns", "self_ns", "file", "line"], "CSV columns")
    expect_eq([(r["region"], r["caller"], int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])) for r in rows],
              [("main", "(none)", 1, *totals["main"][1:3]), ("c", "b", 30, *totals["c"][1:3])],
              "callers of c and main")
    rows = parse_csv(t.scope_report("--callees", "^a$", "--format", "csv", path).stdout)
    expect_eq([(r["region"], r["callee"], int(r["calls"]), int(r["total_ns"])) for r in rows],
              [("a", "b", 6, totals["b"][1])], "callees of a")
    # the caller kept: b left out, c's caller is a
    rows = parse_csv(t.scope_report("--callers", "^c$", "--exclude", "^b$", "--format", "csv", path).stdout)
    expect_eq([(r["caller"], int(r["calls"])) for r in rows], [("a", 30)], "callers of c without b")
    out = t.scope_report("--callers", "^c$", path).stdout
    expect(re.search(r"^callers of c: 30 calls, total .*\n +total +self +calls +caller\n.* 30  b$", out, re.M),
           f"text of --callers ^c$:\n{out}")
    out = t.scope_report("--callees", "^c$", path).stdout
    expect(re.search(r"^callees of c: 30 calls, .*\nno callees$", out, re.M), f"text of --callees ^c$:\n{out}")
    doc = json.loads(t.scope_report("--callees", "^b$", "--format", "json", path).stdout)
    expect_eq([(x["region"], x["calls"], [(y["region"], y["calls"]) for y in x["callees"]]) for x in doc["callees"]],
              [("b", 6, [("c", 30)])], "JSON callees of b")

    # Recursion: a call's total counts only when no call of its region is open around it on
    # its lane, so a region's total is /pairs/total_ns and a recursive edge has none. The
    # counts are the programs': fib(20) makes 21891 calls of fib, one from main; ping(9)
    # twice makes 10 calls of ping (2 from main, 8 from pong) and 10 of pong, all from ping.
    def edges(view, regex, path):
        rows = parse_csv(t.scope_report(view, regex, "--format", "csv", path).stdout)
        key = "caller" if view == "--callers" else "callee"
        return {(r["region"], r[key]): [int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])] for r in rows}

    def self_of(calls, region, depth):
        return sum(c.self for c in calls if c.region == region and c.depth == depth)

    path = t.profile("fib-gcc-O2", out="fib.h5")
    totals, calls = Profile(path).region_totals(), replay(path)
    total, self_ = totals["fib"][1:3]
    outer = self_of(calls, "fib", 1)  # the self time of the one call main made
    expect(total < totals["main"][1], f"fib's total {total} ns is not within main's {totals['main'][1]} ns")
    expect_eq(edges("--callers", "^fib$", path),
              {("fib", "main"): [1, total, outer], ("fib", "fib"): [21890, 0, self_ - outer]}, "callers of fib")
    expect_eq(edges("--callees", "^fib$", path), {("fib", "fib"): [21890, 0, self_ - outer]}, "callees of fib")
    expect_eq(edges("--callees", "^main$", path), {("main", "fib"): [1, total, outer]}, "callees of main")
    doc = json.loads(t.scope_report("--callers", "^fib$", "--format", "json", path).stdout)
    expect_eq([(x["region"], x["calls"], x["total_ns"], x["self_ns"],
                [(y["region"], y["calls"], y["total_ns"]) for y in x["callers"]]) for x in doc["callers"]],
              [("fib", 21891, total, self_, [("main", 1, total), ("fib", 21890, 0)])], "JSON callers of fib")
    out = t.scope_report("--callers", "^fib$", path).stdout
    expect(re.search(r"^callers of fib: 21891 calls, total (\S+ \S+), ", out, re.M).group(1) ==
           re.search(r"^ *(\S+ \S+) .* 1  main$", out, re.M).group(1), f"text of --callers ^fib$:\n{out}")

    path = t.profile("figures-gcc-O2", "mutual", out="mutual.h5")
    totals, calls = Profile(path).region_totals(), replay(path)
    ping, pong = totals["ping"][1:3], totals["pong"][1:3]
    outer = self_of(calls, "ping", 1)
    expect_eq(edges("--callers", "^p[io]ng$", path),
              {("ping", "main"): [2, ping[0], outer], ("ping", "pong"): [8, 0, ping[1] - outer],
               ("pong", "ping"): [10, pong[0], pong[1]]}, "callers of ping and pong")
    got = edges("--callees", "^pong$", path)
    expect_eq(got.get(("pong", "ping")), [8, 0, ping[1] - outer], "callees of pong: ping")
    expect_eq(edges("--callees", "^ping$", path).get(("ping", "pong")), [10, pong[0], pong[1]],
              "callees of ping: pong")

    # Threads: each lane's worker calls work, its lanes' outermost calls have no caller.
    path = t.profile("threads-gcc-O2", out="threads.h5")
    totals = Profile(path).region_totals()
    expect_eq(edges("--callers", "^work", path),
              {("worker", "(none)"): [4, *totals["worker"][1:3]], ("work", "worker"): [10000, *totals["work"][1:3]]},
              "callers of worker and work")
    expect_eq(edges("--callees", "^work", path), {("worker", "work"): [10000, *totals["work"][1:3]]},
              "callees of worker and work")
    rows = parse_csv(t.scope_report("--callers", "^work$", "--thread", "2", "--format", "csv", path).stdout)
    k = int(Profile(path).lanes[0]["name"][2].split("-")[1])
    expect_eq([(r["caller"], int(r["calls"])) for r in rows], [("worker", 1000 * k)], "--callers on lane 2")


def case_merged(t):
    """--tree: one tree per process, its lanes merged; --per-thread: one per lane."""
    path = t.profile("threads-gcc-O2")
    out = t.scope_report("--tree", path).stdout
    heads = [line for line in out.splitlines() if line.startswith("process ")]
    expect_eq(len(heads), 1, "headings of the merged tree")
    expect(re.match(r"^process 0 \(pid \d+\) threads-gcc-O2: 10009 calls on 5 thread lanes, recording ", heads[0]),
           f"heading {heads[0]!r}")
    rows = parse_csv(t.scope_report("--tree", "--format", "csv", path).stdout)
    expect_eq(sorted((r["path"], int(r["calls"]), r["lane"]) for r in rows),
              [("main", 1, ""), ("main;pthread_join", 4, ""), ("worker", 4, ""), ("worker;work", 10000, "")],
              "merged tree")
    rows = parse_csv(t.scope_report("--tree", "--per-thread", "--format", "csv", path).stdout)
    lanes = Profile(path).lanes[0]
    want = [(0, "main", 1), (0, "main;pthread_join", 4)]
    for lane in range(1, 5):
        k = int(lanes["name"][lane].split("-")[1])
        want += [(lane, "worker", 1), (lane, "worker;work", 1000 * k)]
    expect_eq([(int(r["lane"]), r["path"], int(r["calls"])) for r in rows], want, "--per-thread trees")
    out = t.scope_report("--tree", "--per-thread", path).stdout
    expect_eq(len([line for line in out.splitlines() if line.startswith("process ")]), 5, "--per-thread headings")
    doc = json.loads(t.scope_report("--tree", "--per-thread", "--format", "json", path).stdout)
    expect_eq(len(doc["lanes"]), 5, "--per-thread JSON lanes")
    doc = json.loads(t.scope_report("--tree", "--format", "json", path).stdout)
    totals = Profile(path).region_totals()
    expect_eq([(x["process"], x["lanes"], [c["region"] for c in x["calls"]]) for x in doc["processes"]],
              [(0, 5, sorted(["main", "worker"], key=lambda n: -totals[n][1]))], "merged JSON tree")

    # three processes: three trees
    path = t.profile("calls-gcc-O2", "1000", "2", out="forks.h5")
    rows = parse_csv(t.scope_report("--tree", "--format", "csv", path).stdout)
    expect_eq(sorted({int(r["process"]) for r in rows}), [0, 1, 2], "trees of the processes")


def case_filters(t):
    """--min-duration, --since and --until choose the calls of the table, the tree, --callers,
    --callees, --threads, --processes and --diff, as they do for the exports."""
    path = t.profile("threads-gcc-O2")
    calls = replay(path)
    cut = sorted(c.duration for c in calls)[len(calls) // 2] + 1
    for c in calls:
        c.kept = c.duration >= cut
    want = per_region(calls)
    rows = parse_csv(t.scope_report("--min-duration", f"{cut}ns", "--format", "csv", path).stdout)
    expect_eq({r["region"]: [int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])] for r in rows}, want,
              f"the table of calls of {cut} ns or more")
    expect(want["work"][0] < 10000, "the cut keeps every call: no test")
    rows = parse_csv(t.scope_report("--tree", "--min-duration", f"{cut}ns", "--format", "csv", path).stdout)
    paths = {}
    for c in calls:
        if c.kept:
            up = kept_caller(c)
            key = (up.region + ";" if up else "") + c.region
            paths[key] = paths.get(key, 0) + 1
    expect_eq({r["path"]: int(r["calls"]) for r in rows}, paths, "the tree of those calls")
    rows = parse_csv(t.scope_report("--threads", "--min-duration", f"{cut}ns", "--format", "csv", path).stdout)
    per_lane = {}
    for c in calls:
        per_lane[c.lane] = per_lane.get(c.lane, 0) + c.kept
    expect_eq({int(r["lane"]): int(r["calls"]) for r in rows}, per_lane, "--threads: calls kept per lane")
    rows = parse_csv(t.scope_report("--processes", "--min-duration", f"{cut}ns", "--format", "csv",
                                    path).stdout.split("\n\n")[1])
    expect_eq({r["region"]: int(r["calls"]) for r in rows}, {n: v[0] for n, v in want.items()},
              "--processes: calls kept per region")
    rows = parse_csv(t.scope_report("--callers", "^work$", "--min-duration", f"{cut}ns", "--format", "csv",
                                    path).stdout)
    expect_eq(sum(int(r["calls"]) for r in rows), want["work"][0], "--callers: calls of work kept")
    edges = {}
    for c in calls:
        up = kept_caller(c) if c.kept else None
        if up is not None and up.region == "worker":
            v = edges.setdefault(("worker", c.region), [0, 0, 0])
            v[0] += 1
            v[1] += c.total
            v[2] += c.self
    expect(edges, "no call under worker is kept: no test")
    rows = parse_csv(t.scope_report("--callees", "^worker$", "--min-duration", f"{cut}ns", "--format", "csv",
                                    path).stdout)
    expect_eq({(r["region"], r["callee"]): [int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])] for r in rows},
              edges, "--callees: the calls of worker's callees kept")
    rows = parse_csv(t.scope_report("--diff", "--min-duration", f"{cut}ns", "--format", "csv", path, path).stdout)
    expect_eq({r["region"]: [int(r["calls_base"]), int(r["total_base_ns"]), int(r["self_base_ns"])] for r in rows},
              want, "--diff: BASE's calls kept")
    expect_eq({r["region"]: [int(r["calls_new"]), int(r["total_new_ns"]), int(r["self_new_ns"])] for r in rows},
              want, "--diff: NEW's calls kept")
    t.scope_report("--diff", "--max-regression", "0", "--min-duration", f"{cut}ns", path, path, rc=0)

    # a window: the calls that end at --since or later and start before --until
    starts = sorted(c.start for c in calls)
    since, until = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    for c in calls:
        c.kept = c.start < until and c.start + c.duration >= since
    rows = parse_csv(t.scope_report("--since", f"{since}ns", "--until", f"{until}ns", "--format", "csv",
                                    path).stdout)
    expect_eq({r["region"]: [int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])] for r in rows},
              per_region(calls), "the table of the calls in a window")


# ---------------------------------------------------------------------------
# Case: the diff and its gate


def scaled(src, dst, factor, only=None):
    """A copy of profile SRC with durations, total, self, min and max times FACTOR; only region ONLY if given."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        names = list(f["regions/name"].asstr()[()])
        rows = [i for i in range(len(f["pairs/region"])) if only is None or names[f["pairs/region"][i]] == only]
        for col in ("total_ns", "self_ns", "min_ns", "max_ns"):
            v = f["pairs"][col][()].astype(np.float64)
            v[rows] *= factor
            del f["pairs"][col]
            f["pairs"][col] = np.round(v).astype(np.uint64)
        d = f["events/duration"][()].astype(np.float64)
        for i in rows:
            first, count = int(f["pairs/first"][i]), int(f["pairs/count"][i])
            d[first:first + count] *= factor
        del f["events/duration"]
        f["events/duration"] = np.round(d).astype(np.uint64)
    return dst


def case_diff(t):
    base = t.profile("chain-gcc-O2")
    slower = scaled(base, t.path("slower.h5"), 1.5)
    faster = scaled(base, t.path("faster.h5"), 0.5)
    c_slower = scaled(base, t.path("c-slower.h5"), 3.0, only="c")
    totals = Profile(base).region_totals()

    # Without a gate: 0 whatever changed. The table: every region, biggest change of self first.
    r = t.scope_report("--diff", base, c_slower)
    rows = parse_csv(t.scope_report("--diff", "--format", "csv", base, c_slower).stdout)
    expect_eq(rows[0]["region"], "c", "first row (largest change of self)")
    c = rows[0]
    expect_eq((int(c["calls_base"]), int(c["calls_new"]), int(c["calls_change"])), (30, 30, 0), "calls of c")
    expect_eq(int(c["self_base_ns"]), totals["c"][2], "self of c in BASE")
    expect(abs(float(c["self_change_pct"]) - 200) < 0.5, f"self change of c: {c['self_change_pct']}%")
    for row in rows[1:]:
        expect_eq(float(row["self_change_pct"]), 0.0, f"self change of {row['region']}")

    # The gate: slower fails, faster and equal pass.
    r = t.scope_report("--diff", "--max-regression", "10", base, slower, rc=1)
    expect(re.search(r"got slower", r.stderr), f"no line says what got slower: {r.stderr!r}")
    expect("SLOWER" in r.stdout, "the table does not mark the regions that got slower")
    t.scope_report("--diff", "--max-regression", "10", base, faster, rc=0)
    t.scope_report("--diff", "--max-regression", "0", base, base, rc=0)
    t.scope_report("--diff", "--max-regression", "60", base, slower, rc=0)
    t.scope_report("--diff", "--max-regression", "10", slower, base, rc=0)
    # Per region: c may grow 250%, the rest 10%.
    r = t.scope_report("--diff", "--max-regression", "10", base, c_slower, rc=1)
    expect_eq(len(r.err_lines()), 1, "lines for one region that got slower")
    expect(r.err_lines()[0].startswith(f"scope-report: {c_slower}: c got slower"), f"line: {r.err_lines()[0]!r}")
    t.scope_report("--diff", "--max-regression", "^c$=250", "--max-regression", "10", base, c_slower, rc=0)
    t.scope_report("--diff", "--max-regression", "^c$=150", "--max-regression", "1000", base, c_slower, rc=1)
    t.scope_report("--diff", "--max-regression", "^(a|b)$=0", base, c_slower, rc=0)  # c is not gated
    t.scope_report("--diff", "--max-regression", "10", "--min-time", "1s", base, slower, rc=0)

    doc = json.loads(t.scope_report("--diff", "--max-regression", "10", "--format", "json", base, slower, rc=1).stdout)
    expect_eq(doc["slower"], 4, "JSON: regions slower")
    expect_eq(sorted(r["region"] for r in doc["regions"]), ["a", "b", "c", "main"], "JSON regions")
    expect(all(r["status"] == "SLOWER" for r in doc["regions"]), "JSON status")

    # Recursion: nest() 1 or 30 levels deep lasts 100 ms either way, its innermost call burning
    # the wall clock to a deadline; 200 ms is a real slowdown. A preemption can only lengthen a
    # call, by far less than the 25% allowed; --min-time leaves out main's few us of self time.
    shallow = t.profile("figures-gcc-O2", "depth", "1", "100", out="shallow.h5")
    deep = t.profile("figures-gcc-O2", "depth", "30", "100", out="deep.h5")
    slow = t.profile("figures-gcc-O2", "depth", "1", "200", out="slow.h5")
    d = Profile(deep)
    row = d.pair_rows("nest")[0]
    expect_eq(d.count("nest"), 31, "calls of nest 30 levels deep")
    expect(int(d.pairs["total_all_ns"][row]) > 20 * int(d.pairs["total_ns"][row]),
           "nest's calls 30 deep do not sum to 20 times its outermost call's time: no test")
    gate = ("--diff", "--max-regression", "25", "--min-time", "10ms")
    rows = parse_csv(t.scope_report(*gate, "--format", "csv", shallow, deep).stdout)
    nest = next(r for r in rows if r["region"] == "nest")
    expect_eq((int(nest["calls_base"]), int(nest["calls_new"]), nest["status"]), (2, 31, ""),
              "--diff of nest 1 and 30 levels deep")
    for args in ([], ["--compensate"], ["--min-duration", "1us"]):
        t.scope_report(*gate, *args, shallow, deep, rc=0)
    r = t.scope_report(*gate, shallow, slow, rc=1)
    expect_eq(sorted(line.split(": ")[2].split()[0] for line in r.err_lines()), ["main", "nest"],
              "what got slower at 200 ms")

    # Regions only in one of the two.
    other = t.profile("fib-gcc-O2", out="fib.h5")
    rows = parse_csv(t.scope_report("--diff", "--format", "csv", base, other).stdout)
    status = {r["region"]: r["status"] for r in rows}
    expect_eq((status["fib"], status["a"]), ("new", "gone"), "status of regions in one profile only")


# ---------------------------------------------------------------------------
# Cases: bad input and the command line


def one_line(r, path, pattern, rc=1):
    """The one stderr line: `scope-report: PATH: reason` with reason matching PATTERN."""
    r.expect_rc(rc)
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"lines on stderr ({r.stderr!r})")
    expect(lines[0].startswith(f"scope-report: {path}: "), f"the line does not start with the path: {lines[0]!r}")
    reason = lines[0][len(f"scope-report: {path}: "):]
    expect(re.search(pattern, reason), f"reason {reason!r} does not match {pattern!r}")
    expect_eq(r.stdout, "", "stdout")
    return reason


def rewrite(src, dst, edit):
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(f)
    return dst


def replace(f, name, values):
    del f[name]
    f[name] = values


def case_badinput(t):
    good = t.profile("chain-gcc-O2")
    with h5py.File(good, "r") as f:
        nevents = len(f["events/depth"])
        last = int(np.argmax(f["pairs/first"][()]))
    text = t.path("text.h5")
    with open(text, "w") as f:
        f.write("not an HDF5 file\n")
    empty = t.path("empty.h5")
    h5py.File(empty, "w").close()
    schema2 = t.path("schema2.h5")
    with h5py.File(schema2, "w") as f:
        f.attrs["schema"] = np.int64(2)
    truncated = t.path("truncated.h5")
    with open(good, "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 3])

    def beyond(f):
        count = f["pairs/count"][()].astype(np.uint64)
        count[last] += 5
        replace(f, "pairs/count", count)

    def region_range(f):
        region = f["pairs/region"][()]
        region[0] = 99
        replace(f, "pairs/region", region)

    def lane_range(f):
        thread = f["events/thread"][()]
        thread[3] = 9
        replace(f, "events/thread", thread)

    cases = [
        (t.path("missing.h5"), r"No such file"),
        (t.tmp, r"is a directory"),
        (text, r"^not an HDF5 file$"),
        (empty, r"^not a scope profile \(no schema attribute\)$"),
        (schema2, r"^schema 2 is not supported"),
        (truncated, r"cannot be opened as HDF5|cannot be read|damaged"),
        (rewrite(good, t.path("schema-str.h5"), lambda f: f.attrs.__setitem__("schema", "3")),
         r"^the schema attribute is not an integer$"),
        (rewrite(good, t.path("float.h5"), lambda f: replace(f, "events/duration", f["events/duration"][()] * 1.0)),
         r"^/events/duration is not a column of unsigned integers$"),
        (rewrite(good, t.path("strcount.h5"), lambda f: replace(f, "pairs/count", np.array(["x"] * len(f["pairs/count"]), dtype=h5py.string_dtype()))),
         r"^/pairs/count is not a column of integers$"),
        (rewrite(good, t.path("short.h5"), lambda f: replace(f, "events/depth", f["events/depth"][:-1])),
         rf"^/events/depth has {nevents - 1} rows, /events/start_delta has {nevents}$"),
        (rewrite(good, t.path("noname.h5"), lambda f: f.__delitem__("regions/name")), r"^/regions/name is missing$"),
        (rewrite(good, t.path("nolanes.h5"), lambda f: f.__delitem__("process0/lanes")),
         r"^/process0/lanes is missing$"),
        (rewrite(good, t.path("2d.h5"), lambda f: replace(f, "pairs/first", f["pairs/first"][()].reshape(1, -1))),
         r"^/pairs/first is not a one-dimensional column$"),
        (rewrite(good, t.path("beyond.h5"), beyond), r"^/pairs row \d+: events \[\d+, \d+ \+ \d+\) lie beyond the \d+ rows of /events$"),
        (rewrite(good, t.path("region.h5"), region_range), r"^/pairs row 0: region 99 is out of range \(4 regions\)$"),
    ]
    for path, pattern in cases:
        for view in ([], ["--tree"], ["--chrome"]):
            out = t.path("report.out")
            one_line(t.scope_report(*view, "-o", out, path, rc=1), path, pattern)
            expect(not os.path.exists(out), f"{view} {path}: an output file was left")
            expect_eq([f for f in os.listdir(t.work) if f.startswith(".report.out")], [], "temporary files left")
    # An event's lane out of range: met when the events are read.
    lane = rewrite(good, t.path("lane.h5"), lane_range)
    for view in (["--tree"], ["--threads"], ["--chrome"], ["--speedscope"], ["--folded"]):
        out = t.path("report.out")
        one_line(t.scope_report(*view, "-o", out, lane, rc=1), lane,
                 r"^/events/thread row \d+: lane 9 is out of range \(process 0 has 1 lanes\)$")
        expect(not os.path.exists(out), f"{view} {lane}: an output file was left")
    # --diff names the file that is bad.
    one_line(t.scope_report("--diff", good, schema2, rc=1), schema2, r"^schema 2")

    # The reader's whole-file check (what a fuzzer calls) says the same, and passes good files.
    t.run([t.rdcheck, good]).expect_rc(0)
    for path, pattern in cases + [(lane, r"^/events/thread row \d+: lane 9 is out of range")]:
        r = t.run([t.rdcheck, path]).expect_rc(1)
        expect_eq(len(r.err_lines()), 1, f"rdcheck {path}: lines on stderr")
        reason = r.err_lines()[0][len(f"rdcheck: {path}: "):]
        expect(r.err_lines()[0].startswith(f"rdcheck: {path}: ") and re.search(pattern, reason),
               f"rdcheck {path}: {r.err_lines()[0]!r}")


def usage_error(t, *args, pattern):
    r = t.scope_report(*args, rc=2)
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"{args}: lines on stderr")
    expect(lines[0].startswith("scope-report: "), f"{args}: {lines[0]!r}")
    expect(re.search(pattern, lines[0]), f"{args}: {lines[0]!r} does not match {pattern!r}")
    expect_eq(r.stdout, "", f"{args}: stdout")


def case_cli(t):
    good = t.profile("chain-gcc-O2")
    for args, pattern in (
            (("--no-such-option", good), r"unknown option --no-such-option"),
            (("--tree", "--chrome", good), r"--tree and --chrome"),
            (("--format", "xml", good), r"--format 'xml'"),
            (("--sort", "size", good), r"--sort 'size'"),
            (("--top", "0", good), r"--top '0'"),
            (("--top", "ten", good), r"--top 'ten'"),
            (("--depth", "2", good), r"--depth applies to --tree"),
            (("--include", "(", good), r"--include '\('"),
            (("--since", "5 parsecs", "--chrome", good), r"--since"),
            (("--per-thread", good), r"--per-thread applies to --tree \("),
            (("--names", "long", good), r"--names 'long'"),
            (("--chrome", "--compensate", good), r"--compensate applies to the table, --tree, --callers"),
            (("--folded", "--lines", good), r"--lines applies to the table, --tree, --callers"),
            (("--threads", "--compensate", good), r"--compensate applies to"),
            (("--callers", "(", good), r"--callers '\('"),
            (("--callers", "a", "--callees", "b", good), r"--callers and --callees"),
            (("--chrome", "--format", "csv", good), r"--format applies to tables"),
            (("--max-regression", "10", good), r"apply to --diff"),
            (("--diff", "--max-regression", "x=", good, good), r"--max-regression 'x='"),
            (("--diff", good), r"two profiles"),
            ((), r"no profile given"),
            ((good, good), r"give one profile"),
            (("--process", "1", good), r"no process 1"),
            (("--thread", "1", good), r"no thread lane 1"),
            (("--processes", "--thread", "0", good), r"--thread does not apply"),
            (("--tree", "--sort", "std", good), r"sorts by self, total, calls or name"),
            (("--counters", "--since", "1ms", good), r"--counters shows .* over the whole run .*: --since, "
                                                     r"--until and --min-duration do not apply"),
            (("--heap", "--min-duration", "1ms", good), r"--heap counts .* blocks have no times: --since"),
            (("--tasks", "--until", "1ms", good), r"--tasks shows .* over the whole run, as recorded: --since"),
            (("--samples", "--min-duration", "1ms", good), r"a sample is an instant, not a call: --min-duration "
                                                           r"does not apply to --samples \(--since and --until do\)"),
            (("--folded-samples", "--min-duration", "1ms", good), r"--min-duration does not apply to --folded-samples"),
            (("--folded", "--min-duration", "1ms", "--lines", good), r"--lines applies to"),
    ):
        usage_error(t, *args, pattern=pattern)
    text = t.scope_report("--help").stdout
    for opt in ("--tree", "--threads", "--processes", "--diff", "--chrome", "--speedscope", "--folded", "--format",
                "--sort", "--top", "--depth", "--include", "--exclude", "--process", "--rank", "--thread", "--since",
                "--until", "--min-duration", "--max-regression", "--min-time", "-o", "--output", "-h", "--help",
                "-V", "--version", "--callers", "--callees", "--per-thread", "--names", "--lines", "--compensate"):
        expect(re.search(r"(^|[\s,\[])" + re.escape(opt) + r"\b", text), f"--help does not mention {opt}")
    # Every long option the help lists is accepted (no "unknown option").
    for opt in set(re.findall(r"(--[a-z-]+)", text)):
        r = t.run([t.report, opt])
        expect("unknown option" not in r.stderr, f"--help lists {opt}, which is unknown")
    expect_eq(t.scope_report("-h").stdout, text, "-h and --help")
    for opt in ("--version", "-V"):
        expect(re.fullmatch(r"scope-report \d+\.\d+\.\d+\n", t.scope_report(opt).stdout), f"{opt}")


def case_output(t):
    good = t.profile("chain-gcc-O2")
    stdout = t.scope_report("--tree", good).stdout
    t.scope_report("--tree", "-o", "tree.txt", good)
    with open(t.path("tree.txt")) as f:
        expect_eq(f.read(), stdout, "-o tree.txt and stdout")
    expect_eq(sorted(f for f in os.listdir(t.work) if f.startswith(".")), [], "temporary files left")
    mode = os.stat(t.path("tree.txt")).st_mode & 0o777
    expect_eq(mode, 0o666 & ~current_umask(), "mode of the output")
    # An existing output is replaced only when the report succeeds.
    with open(t.path("keep.txt"), "w") as f:
        f.write("old\n")
    t.scope_report("-o", "keep.txt", t.path("missing.h5"), rc=1)
    with open(t.path("keep.txt")) as f:
        expect_eq(f.read(), "old\n", "an output left as it was after a failure")
    lane = t.path("lane.h5")
    shutil.copy(good, lane)
    with h5py.File(lane, "r+") as f:
        thread = f["events/thread"][()]
        thread[3] = 9
        replace(f, "events/thread", thread)
    t.scope_report("--tree", "-o", "keep.txt", lane, rc=1)  # fails after the output is open
    with open(t.path("keep.txt")) as f:
        expect_eq(f.read(), "old\n", "an output left as it was after a failure half-way")
    expect_eq(sorted(f for f in os.listdir(t.work) if f.startswith(".")), [], "temporary files left")
    r = t.scope_report("-o", t.path("no", "such", "dir.txt"), good, rc=1)
    expect_eq(len(r.err_lines()), 1, "lines on stderr for an unwritable output")
    expect(t.path("no", "such", "dir.txt") in r.stderr, "the line does not name the output")
    t.scope_report("--chrome", "-o", "/dev/null", good)
    expect(os.path.exists("/dev/null") and not os.path.isfile("/dev/null"), "/dev/null was replaced")


def case_selfout(t):
    """-o naming a profile the report reads (itself, a hard link or a symbolic link
    to it): refused before anything is read or written, the profile unchanged."""
    good = t.profile("chain-gcc-O2")
    other = t.profile("chain-gcc-O2", out="other.h5")
    os.link(good, t.path("hard.h5"))
    os.symlink(good, t.path("soft.h5"))
    with open(good, "rb") as f:
        data = f.read()
    hard, soft = t.path("hard.h5"), t.path("soft.h5")
    for args, out in ((["--tree", good], good), ([good], hard), (["--chrome", good], soft),
                      (["--diff", other, good], good), (["--diff", good, other], soft)):
        r = t.scope_report(*args, "-o", out, rc=2)
        expect_eq(r.err_lines(), [f"scope-report: -o {out} is the profile {good}: write the report to another "
                                  "file (see scope-report --help)"], f"-o {out}: stderr")
        expect_eq(r.stdout, "", f"-o {out}: stdout")
        with open(good, "rb") as f:
            expect(f.read() == data, f"-o {out}: the profile changed")
        expect(os.path.islink(soft), "the link was replaced")
        expect_eq(sorted(f for f in os.listdir(t.work) if f.startswith(".")), [], "temporary files left")
    t.run([t.rdcheck, good]).expect_rc(0)
    # Another file, and standard output, are written as before.
    t.scope_report("-o", "report.txt", good)
    t.scope_report("-o", "-", good)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------------
# Case: a large profile, in bounded time and memory


def size_line(r):
    """The bytes the one line on stderr estimates ("about 12.3 MiB")."""
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"lines on stderr: {lines}")
    m = re.search(r"about ([0-9.]+) (B|KiB|MiB|GiB|TiB)", lines[0])
    expect(m, f"the line gives no size: {lines[0]}")
    return float(m.group(1)) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(m.group(2))


def leftovers(t):
    return sorted(f for f in os.listdir(t.work) if f.startswith(".") or f.startswith("limited"))


def case_sizes(t):
    """-o FILE.gz compresses every export and table (gunzip gives the plain output back);
    --max-size stops an export, estimated before writing (within 10% of the real size)
    or measured while compressing, with one line, exit 1 and no file."""
    path = t.profile("calls-gcc-O2", "100000", "2")
    for view in (["--chrome"], ["--speedscope"], ["--folded"], ["--tree", "--format", "json"], ["--format", "csv"]):
        name = view[0].strip("-") + (".json" if "json" in view or view[0] in ("--chrome", "--speedscope") else ".txt")
        t.scope_report(*view, "-o", name, path)
        t.scope_report(*view, "-o", name + ".gz", path)
        with open(t.path(name), "rb") as f:
            plain = f.read()
        with open(t.path(name + ".gz"), "rb") as f:
            packed = f.read()
        expect(packed[:2] == b"\x1f\x8b", f"{name}.gz is not in gzip's format")
        expect_eq(gzip.decompress(packed), plain, f"{name}.gz, uncompressed")
        if name.endswith(".json"):
            json.loads(plain)
        print(f"{' '.join(view)}: {len(plain)} bytes, {len(packed)} compressed")
        if view[0] not in ("--chrome", "--speedscope"):
            continue
        r = t.scope_report(view[0], "--max-size", "64K", "-o", "limited.json", path, rc=1)
        est = size_line(r)
        expect("--max-size" in r.stderr and "nothing written" in r.stderr, f"the line: {r.stderr}")
        expect(abs(est - len(plain)) < 0.1 * len(plain), f"{view[0]}: estimated {est:.0f} bytes, wrote {len(plain)}")
        expect_eq(leftovers(t), [], "files left by a stopped export")
        r = t.scope_report(view[0], "--max-size", "64K", "-o", "limited.json.gz", path, rc=1)
        expect("passed --max-size 64.0 KiB" in r.stderr, f"the line: {r.stderr}")
        expect_eq(leftovers(t), [], "files left by a stopped compressed export")
        r = t.scope_report(view[0], "--max-size", str(len(plain)), "-o", "limited.json", path)
        expect_eq(r.err_lines(), [], "lines on stderr for an export that fits")
        with open(t.path("limited.json"), "rb") as f:
            expect_eq(f.read(), plain, "an export within --max-size")
        os.unlink(t.path("limited.json"))
        # one byte less: the estimate may not see it, the count does
        t.scope_report(view[0], "--max-size", str(len(plain) - 1), "-o", "limited.json", path, rc=1)
        expect_eq(leftovers(t), [], "files left by an export one byte too large")
    r = t.scope_report("--tree", "--max-size", "1K", path, rc=2)
    expect("--max-size applies to the exports" in r.stderr, f"--tree --max-size: {r.stderr}")


def case_scale(t):
    n = int(os.environ.get("SCOPE_REPORT_SCALE_CALLS", "1000000" if t.asan else "10000000"))
    path = t.profile("calls-gcc-O2", str(n), out="big.h5")
    with h5py.File(path, "r") as f:
        events = len(f["events/depth"])
    expect_eq(events, n + 2, "calls in the profile (main, run, outer and leaf)")
    figures = []
    rss_bound = (512 if t.asan else 128) * 1024  # KiB
    for view, check in ((["--format", "csv"], "table"), (["--folded"], "folded"), (["--tree", "--format", "csv"], "tree"),
                        (["--chrome", "-o", "/dev/null"], None), (["--speedscope", "-o", "/dev/null"], None)):
        r = t.scope_report(*view, path, quiet=True)
        if view[0] == "--chrome":
            # some 150 bytes a call: over 1 GiB from 7.2 M calls on, which is announced
            if n >= 8000000:
                expect(size_line(r) > 1 << 30, f"the estimate of {n} calls' trace: {r.stderr}")
            else:
                expect_eq(r.err_lines(), [], "lines on stderr")
        figures.append(f"{' '.join(view)}: {r.seconds:.2f} s, peak RSS {r.maxrss / 1024:.0f} MiB (sampled)")
        if check == "table":
            rows = {row["region"]: int(row["calls"]) for row in parse_csv(r.stdout)}
            expect_eq(rows, {"main": 1, "run": 1, "outer": n // 100, "leaf": n // 100 * 99}, "calls per region")
        elif check == "folded":
            stacks = [line.rsplit(" ", 1)[0] for line in r.stdout.splitlines()]
            expect(set(stacks) <= {"main", "main;run", "main;run;outer", "main;run;outer;leaf"}, f"stacks {stacks}")
        elif check == "tree":
            rows = [(row["path"], int(row["calls"])) for row in parse_csv(r.stdout)]
            expect_eq(rows, [("main", 1), ("main;run", 1), ("main;run;outer", n // 100),
                             ("main;run;outer;leaf", n // 100 * 99)], "tree")
        expect(r.maxrss < rss_bound, f"{view}: peak RSS {r.maxrss} KiB")
        expect(r.seconds < 120, f"{view}: {r.seconds:.1f} s")
    print(f"{n + 2} calls:\n  " + "\n  ".join(figures))

    # Many regions busy at once: a cursor each, all reading all along.
    regions, per = 1000, n // 5000
    path = interleaved(path, t.path("many.h5"), regions, per)
    r = t.scope_report("--tree", "--format", "csv", path, quiet=True)
    rows = parse_csv(r.stdout)
    expect_eq(len(rows), regions, "tree rows of the interleaved profile")
    expect(all(int(row["calls"]) == per and int(row["level"]) == 0 for row in rows), "calls per region")
    expect(r.maxrss < rss_bound, f"--tree of {regions} regions: peak RSS {r.maxrss} KiB")
    print(f"{regions * per} calls of {regions} regions interleaved: --tree {r.seconds:.2f} s, "
          f"peak RSS {r.maxrss / 1024:.0f} MiB (sampled)")


def interleaved(src, dst, regions, per):
    """A copy of SRC whose calls are REGIONS regions taking turns, PER calls each, on lane 0."""
    shutil.copy(src, dst)
    n = regions * per
    strings = h5py.string_dtype()
    with h5py.File(dst, "r+") as f:
        for group in ("regions", "pairs", "events"):
            del f[group]
        names = np.array([f"region_{i:04d}" for i in range(regions)], dtype=strings)
        for col, values in (("name", names), ("module", names), ("file", names),
                            ("kind", np.array(["function"] * regions, dtype=strings)),
                            ("offset", np.arange(regions, dtype=np.uint64)),
                            ("line", np.zeros(regions, np.uint32))):
            f[f"regions/{col}"] = values
        for col, values in (("process", np.zeros(regions, np.uint32)), ("region", np.arange(regions, dtype=np.uint32)),
                            ("first", np.arange(regions, dtype=np.uint64) * per),
                            ("count", np.full(regions, per, np.uint64)), ("total_ns", np.full(regions, 5 * per, np.uint64)),
                            ("self_ns", np.full(regions, 5 * per, np.uint64)), ("min_ns", np.full(regions, 5, np.uint64)),
                            ("max_ns", np.full(regions, 5, np.uint64))):
            f[f"pairs/{col}"] = values
        # region r's k-th call starts at (k * regions + r) * 10 ns + 1 us and lasts 5 ns
        delta = np.full(n, regions * 10, np.uint32)
        delta[::per] = np.arange(regions, dtype=np.uint32) * 10 + 1000
        chunked = dict(chunks=(65536,), compression="gzip", compression_opts=1, shuffle=True)
        events = f.create_group("events")
        events.create_dataset("start_delta", data=delta, **chunked)
        events.create_dataset("duration", data=np.full(n, 5, np.uint8), **chunked)
        for col in ("thread", "task", "depth", "flags"):
            events.create_dataset(col, data=np.zeros(n, np.uint8), **chunked)
        f["processes/end"][0] = f["processes/start"][0] + n * 10 + 1_000_000
    return dst


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "bin", "lib", "progs", "rdcheck", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
