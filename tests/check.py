#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one test case of scope on one test program and checks the profile it writes.

Usage: check.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

One function per case (case_fib is CASE "fib", case_cli_help is "cli-help").
Counts, nesting and lanes are compared exactly; times only against bounds.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import argparse
import os
import re
import resource
import shutil
import socket
import subprocess
import sys

import h5py
import numpy as np

SKIP = 77
RUN_TIMEOUT = 120  # seconds for one command
MS = 1_000_000  # ns


class Failure(Exception):
    pass


class Skipped(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)


def expect_eq(actual, expected, what):
    if actual != expected:
        raise Failure(f"{what}: expected {expected!r}, got {actual!r}")


# ---------------------------------------------------------------------------
# Running things


def no_core_dump():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Run:
    """One finished command: rc, stdout (bytes), stderr (str)."""

    def __init__(self, argv, proc):
        self.argv = argv
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr.decode("utf-8", "replace")

    def expect_rc(self, rc):
        expect(self.rc == rc, f"`{' '.join(self.argv)}` exited {self.rc}, expected {rc}")

    def err_lines(self):
        return [line for line in self.stderr.splitlines() if line.strip()]


class Test:
    def __init__(self, a):
        self.prog = os.path.abspath(a.prog) if a.prog else None
        self.name = os.path.basename(self.prog) if self.prog else None
        self.src = a.src
        self.work = os.path.abspath(a.workdir)
        self.tmp = os.path.join(self.work, "tmp")  # SCOPE_TMPDIR: the arenas
        self.asan = a.sanitized
        self.scope_run = os.path.join(a.bin, "scope-run")
        self.writer = os.path.join(a.bin, "scope-writer")
        self.preload = os.path.join(a.lib, "libscope_preload.so")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.tmp)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def need_prog(self):
        expect(self.prog and os.access(self.prog, os.X_OK), f"test program {self.prog} was not built")

    def need_scope(self):
        for exe in (self.scope_run, self.writer, self.preload):
            expect(os.path.exists(exe), f"{exe} was not built")

    def env(self, extra=None, preload=None):
        """A clean environment: no SCOPE_* or LD_PRELOAD from outside, arenas in our tmp."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SCOPE_", "OMP_", "ASAN_", "UBSAN_")) and k != "LD_PRELOAD"}
        env["SCOPE_TMPDIR"] = self.tmp
        env["LC_ALL"] = "C"
        libs = [lib for lib in (self.asan, preload) if lib]
        if libs:
            env["LD_PRELOAD"] = ":".join(libs)
        if self.asan:
            # The profiler, not ASan, handles the fatal signals: a test
            # checks that they end the program as they would unprofiled.
            env["ASAN_OPTIONS"] = ("detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
                                   "handle_sigill=0:handle_abort=0")
        env.update(extra or {})
        return env

    def run(self, argv, env=None, cwd=None):
        argv = [str(x) for x in argv]
        print("$", " ".join(argv), flush=True)
        try:
            proc = subprocess.run(argv, env=env, cwd=cwd or self.work, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=RUN_TIMEOUT, preexec_fn=no_core_dump)
        except subprocess.TimeoutExpired:
            raise Failure(f"`{' '.join(argv)}` did not finish in {RUN_TIMEOUT} s")
        r = Run(argv, proc)
        print(f"  exit {r.rc}")
        if r.stderr:
            print("  stderr:", r.stderr[-3000:].replace("\n", "\n  | "))
        return r

    def plain(self, *args):
        """The test program alone, not profiled."""
        return self.run([self.prog, *args], env=self.env())

    def scope(self, *args, env=None, cwd=None):
        """scope-run with these arguments (LD_PRELOAD only holds the ASan runtime, if any)."""
        self.need_scope()
        return self.run([self.scope_run, *args], env=self.env(env), cwd=cwd)

    def profile(self, *args, out="out.h5", status=0, options=("-q",), env=None):
        """Profiles the test program with ARGS, expects STATUS, returns (Profile, Run)."""
        self.need_prog()
        r = self.scope(*options, "-o", out, "--", self.prog, *args, env=env)
        r.expect_rc(status)
        return self.load(out), r

    def load(self, out):
        path = self.path(out)
        expect(os.path.isfile(path), f"no profile at {path}")
        p = Profile(path)
        check_no_own_calls(p)
        return p

    def marker_line(self, source, name):
        """The line of SOURCE that carries the comment `line: NAME`."""
        with open(os.path.join(self.src, source)) as f:
            for number, text in enumerate(f, 1):
                if re.search(r"\bline: " + re.escape(name) + r"\b", text):
                    return number
        raise Failure(f"no marker 'line: {name}' in {source}")


# ---------------------------------------------------------------------------
# Loading a profile


def is_vlen_utf8(dtype):
    info = h5py.check_string_dtype(dtype)
    return info is not None and info.length is None and info.encoding == "utf-8"


def read_column(dset):
    if h5py.check_string_dtype(dset.dtype) is not None:
        return np.array(dset.asstr()[()], dtype=object)
    return dset[()]


def read_columns(f, name):
    expect(name in f, f"{name} is missing")
    group = f[name]
    expect(isinstance(group, h5py.Group), f"{name} is not a group")
    return {col: read_column(group[col]) for col in group}


class Profile:
    """Everything in a profile, read into numpy arrays (strings as str objects)."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.attrs = dict(f.attrs)
            expect("metadata" in f, "/metadata is missing")
            self.meta = dict(f["metadata"].attrs)
            self.processes = read_columns(f, "processes")
            self.regions = read_columns(f, "regions")
            self.pairs = read_columns(f, "pairs")
            self.events = read_columns(f, "events") if "events" in f else {}
            nproc = len(self.processes["pid"])
            self.lanes = [read_columns(f, f"process{i}/lanes/threads") for i in range(nproc)]
            self.modules = [read_columns(f, f"process{i}/modules") for i in range(nproc)]

    def span(self, process=0):
        """ns from the process's start to its end."""
        return int(self.processes["end"][process]) - int(self.processes["start"][process])

    def pair_rows(self, name, process=0):
        names = self.regions["name"]
        return [i for i in range(len(self.pairs["region"]))
                if names[self.pairs["region"][i]] == name and self.pairs["process"][i] == process]

    def events_of(self, row):
        """Pair ROW's calls, with 'start' decoded to ns since the process start."""
        first, count = int(self.pairs["first"][row]), int(self.pairs["count"][row])
        ev = {col: vals[first:first + count] for col, vals in self.events.items()}
        ev["start"] = np.cumsum(ev["start_delta"].astype(np.uint64), dtype=np.uint64)
        return ev

    def calls(self, name, process=0):
        """All calls of the region(s) called NAME in PROCESS, columns concatenated."""
        rows = self.pair_rows(name, process)
        expect(rows, f"no calls of {name!r} in process {process}; regions: {sorted(set(self.regions['name']))}")
        parts = [self.events_of(r) for r in rows]
        return {col: np.concatenate([p[col] for p in parts]) for col in parts[0]}

    def count(self, name, process=0):
        return sum(int(self.pairs["count"][r]) for r in self.pair_rows(name, process))

    def region_row(self, name):
        rows = [i for i, n in enumerate(self.regions["name"]) if n == name]
        expect(len(rows) == 1, f"expected one region named {name!r}, found {len(rows)}")
        return rows[0]


# ---------------------------------------------------------------------------
# Checks shared by several cases


def check_no_own_calls(p):
    for name, module in zip(p.regions["name"], p.regions["module"]):
        expect(not name.startswith(("scope_", "__cyg_profile")), f"the library's own function {name!r} is a region")
        expect(os.path.basename(module) != "libscope_preload.so",
               f"region {name!r} lies in libscope_preload.so")


def walk_calls(p, process=0):
    """Checks that every call nests inside a call one level up on its thread.

    Returns, per pair row, the summed durations of the calls' direct callees
    (what separates total_ns from self_ns) and how many they were.
    """
    rows = [i for i in range(len(p.pairs["process"])) if p.pairs["process"][i] == process]
    calls = []
    for row in rows:
        ev = p.events_of(row)
        for start, dur, thread, depth in zip(ev["start"], ev["duration"], ev["thread"], ev["depth"]):
            calls.append((int(thread), int(start), int(depth), int(start) + int(dur), row))
    calls.sort()
    children = {row: [0, 0] for row in rows}
    stack, thread = [], None
    for t, start, depth, end, row in calls:
        if t != thread:
            stack, thread = [], t
        while stack and (stack[-1][2] >= depth or stack[-1][1] < start):
            stack.pop()
        if depth > 0:
            expect(stack, f"a call of {region_of(p, row)!r} at depth {depth} on lane {t} has no caller around it")
            c_start, c_end, c_depth, c_row = stack[-1]
            expect(c_depth == depth - 1 and c_start <= start and end <= c_end + 2,
                   f"call of {region_of(p, row)!r} [{start}, {end}] depth {depth} does not nest in "
                   f"{region_of(p, c_row)!r} [{c_start}, {c_end}] depth {c_depth} on lane {t}")
            children[c_row][0] += end - start
            children[c_row][1] += 1
        stack.append((start, end, depth, row))
    return children


def region_of(p, row):
    return p.regions["name"][p.pairs["region"][row]]


def check_pair_stats(p, process=0):
    """total/min/max follow from the events exactly, self_ns from the nesting (±2 ns a call)."""
    children = walk_calls(p, process)
    for row, (child_ns, child_calls) in children.items():
        name = region_of(p, row)
        d = p.events_of(row)["duration"].astype(np.uint64)
        count = int(p.pairs["count"][row])
        expect(count > 0, f"pair of {name!r} has no calls")
        expect_eq(int(p.pairs["total_ns"][row]), int(d.sum()), f"total_ns of {name!r}")
        expect_eq(int(p.pairs["min_ns"][row]), int(d.min()), f"min_ns of {name!r}")
        expect_eq(int(p.pairs["max_ns"][row]), int(d.max()), f"max_ns of {name!r}")
        self_ns = int(p.pairs["self_ns"][row])
        want = int(d.sum()) - child_ns
        expect(self_ns <= int(d.sum()), f"self_ns of {name!r} exceeds its total")
        expect(abs(self_ns - want) <= 2 * (count + child_calls),
               f"self_ns of {name!r} is {self_ns}, its events say {want}")


def check_starts(p):
    """Decoded starts are ordered per pair and every call lies inside its process."""
    for row in range(len(p.pairs["process"])):
        ev = p.events_of(row)
        span = p.span(int(p.pairs["process"][row]))
        starts = ev["start"]
        name = region_of(p, row)
        expect(np.all(starts[1:] >= starts[:-1]), f"starts of {name!r} are not ordered (or overflow 64 bits)")
        if len(starts):
            ends = starts + ev["duration"].astype(np.uint64)
            expect(int(starts[-1]) <= span, f"a call of {name!r} starts after its process ended")
            expect(int(ends.max()) <= span + 1, f"a call of {name!r} ends after its process ended")


def narrowest(values):
    top = int(values.max()) if len(values) else 0
    for size in (1, 2, 4):
        if top < 1 << (8 * size):
            return size
    return 8


def stderr_summary_line(r, name):
    return [line for line in r.stderr.splitlines() if re.search(r"(^|\s)" + re.escape(name) + r"(\s|$)", line)]


# ---------------------------------------------------------------------------
# Cases: call counts and nesting


def case_fib(t):
    p, r = t.profile(options=())
    expect_eq(len(p.processes["pid"]), 1, "processes")
    fib = p.calls("fib")
    expect_eq(len(fib["depth"]), 21891, "calls of fib")
    expect_eq(int(fib["depth"].max()), 20, "deepest call of fib")
    expect_eq(int(fib["depth"].min()), 1, "outermost call of fib")
    main = p.calls("main")
    expect_eq(len(main["depth"]), 1, "calls of main")
    expect_eq(int(main["depth"][0]), 0, "depth of main")
    check_pair_stats(p)
    # The summary on stderr: a row for fib with its call count, then the run's resources.
    rows = stderr_summary_line(r, "fib")
    expect(rows and "21891" in rows[0], "no summary row for fib with 21891 calls on stderr")
    for word in ("wall", "cpu", "rss"):
        expect(re.search(word, r.stderr, re.I), f"the summary does not mention {word}")
    expect_eq(os.listdir(t.tmp), [], "arena files left after a good run")


def case_chain(t):
    p, _ = t.profile()
    for name, calls, depth in (("main", 1, 0), ("a", 3, 1), ("b", 6, 2), ("c", 30, 3)):
        ev = p.calls(name)
        expect_eq(len(ev["depth"]), calls, f"calls of {name}")
        expect_eq(sorted(set(int(d) for d in ev["depth"])), [depth], f"depths of {name}")
    check_pair_stats(p)


def case_threads(t):
    p, _ = t.profile()
    lanes = p.lanes[0]
    expect_eq(len(lanes["tid"]), 5, "thread lanes (main + 4 workers)")
    expect_eq(int(lanes["parent"][0]), -1, "parent of the main lane")
    expect_eq(int(lanes["tid"][0]), int(p.processes["pid"][0]), "tid of lane 0 (main)")
    expect_eq(len(set(int(x) for x in lanes["tid"])), 5, "distinct tids")
    expect_eq([int(x) for x in lanes["parent"][1:]], [0] * 4, "parents of the worker lanes")
    span = p.span()
    for lane in range(5):
        expect(int(lanes["start"][lane]) <= int(lanes["end"][lane]) <= span,
               f"lane {lane} runs [{lanes['start'][lane]}, {lanes['end'][lane]}] outside [0, {span}]")

    work = p.calls("work")
    per_lane = np.bincount(work["thread"].astype(np.int64), minlength=5)
    expect_eq(len(per_lane), 5, "lanes that called work")
    expect_eq(int(per_lane[0]), 0, "calls of work on the main lane")
    expected = {f"worker-{k}": 1000 * k for k in range(1, 5)}
    expect_eq(sorted(lanes["name"][1:]), sorted(expected), "names of the worker lanes")
    for lane in range(1, 5):
        name = lanes["name"][lane]
        expect_eq(int(per_lane[lane]), expected[name], f"calls of work on lane {lane} ({name})")
    expect_eq(set(int(d) for d in work["depth"]), {1}, "depths of work")

    worker = p.calls("worker")
    expect_eq(sorted(int(x) for x in worker["thread"]), [1, 2, 3, 4], "lanes of the worker calls")
    expect_eq(set(int(d) for d in worker["depth"]), {0}, "depth of worker on its own thread")
    check_pair_stats(p)


def case_nesting(t):
    p, _ = t.profile()
    child = p.calls("child")
    expect_eq(len(child["duration"]), 5, "calls of child")
    for d in child["duration"]:
        expect(10 * MS <= int(d) <= 60 * MS, f"child took {int(d)} ns, outside [10 ms, 60 ms]")
    parent = p.calls("parent")
    expect_eq(len(parent["duration"]), 1, "calls of parent")
    expect_eq(sorted(int(d) for d in child["depth"]), [2] * 5, "depths of child")
    expect(int(parent["duration"][0]) >= int(child["duration"].astype(np.uint64).sum()),
           "parent took less time than its children")
    row = p.pair_rows("parent")[0]
    self_ns = int(p.pairs["self_ns"][row])
    expect(self_ns < 2 * MS, f"parent's self time is {self_ns} ns, should be < 2 ms")
    child_row = p.pair_rows("child")[0]
    expect_eq(int(p.pairs["self_ns"][child_row]), int(p.pairs["total_ns"][child_row]),
              "self_ns of child, which calls nothing instrumented")
    check_pair_stats(p)


# ---------------------------------------------------------------------------
# Cases: names, files and lines


def case_names(t):
    p, _ = t.profile()
    for name, calls in (("geo::Shape::area() const", 3), ("geo::util::scale(int)", 2),
                        ("geo::util::scale(double)", 4), ("c_linkage", 1), ("main", 1)):
        expect_eq(p.count(name), calls, f"calls of {name}")
    mangled = [n for n in p.regions["name"] if n.startswith("_Z")]
    expect_eq(mangled, [], "region names left mangled")
    row = p.region_row("c_linkage")
    expect_eq(os.path.basename(p.regions["file"][row]), "names.cpp", "file of c_linkage")
    expect_eq(int(p.regions["line"][row]), t.marker_line("names.cpp", "c_linkage"), "line of c_linkage")


def symbol_values(prog):
    nm = shutil.which("nm")
    if not nm:
        return None
    out = subprocess.run([nm, "--defined-only", prog], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "Tt":
            values[fields[2]] = int(fields[0], 16)
    return values


def case_srcline(t):
    p, _ = t.profile()
    symbols = symbol_values(t.prog)
    for name in ("main", "a", "b", "c"):
        row = p.region_row(name)
        expect_eq(os.path.basename(p.regions["file"][row]), "chain.c", f"file of {name}")
        expect_eq(int(p.regions["line"][row]), t.marker_line("chain.c", name), f"line of {name}")
        expect_eq(os.path.realpath(p.regions["module"][row]), os.path.realpath(t.prog), f"module of {name}")
        expect_eq(p.regions["kind"][row], "function", f"kind of {name}")
        if symbols is not None:
            expect_eq(int(p.regions["offset"][row]), symbols[name], f"offset of {name} (its symbol's value)")


# ---------------------------------------------------------------------------
# Case: the file against schema 3

STR, I32, I64, U32, U64, F64, UINT = "str", "<i4", "<i8", "<u4", "<u8", "<f8", "uint"

SCHEMA = {
    "processes": {"pid": I64, "parent": I64, "rank": I64, "executable": STR, "arguments": STR,
                  "start": U64, "end": U64, "exit_status": I64, "lost": U64},
    "regions": {"name": STR, "module": STR, "offset": U64, "file": STR, "line": U32, "kind": STR},
    "pairs": {"process": U32, "region": U32, "first": U64, "count": U64, "total_ns": U64,
              "self_ns": U64, "min_ns": U64, "max_ns": U64},
    "events": {"start_delta": UINT, "duration": UINT, "thread": UINT, "task": UINT, "depth": UINT,
               "flags": "|u1"},
    "process0/lanes/threads": {"tid": U32, "name": STR, "parent": I32, "start": U64, "end": U64},
    "process0/modules": {"path": STR, "bias": U64, "low": U64, "high": U64, "build_id": STR},
}

METADATA = {
    STR: ("command_line", "working_dir", "start_time_utc", "host", "cpu_model", "kernel", "platform",
          "libc_version", "clock_source", "compression", "env_OMP_NUM_THREADS"),
    I64: ("logical_cores", "physical_cores", "memory_bytes", "exit_status", "exit_signal",
          "peak_rss_bytes", "lost_records"),
    F64: ("cpu_mhz", "clock_frequency_hz", "wall_seconds", "cpu_seconds"),
}


def type_problem(dtype, want, what):
    """None if DTYPE is what the schema says, else a sentence saying why not."""
    if want == STR:
        ok = is_vlen_utf8(dtype)
        want = "a variable-length UTF-8 string"
    elif want == UINT:
        ok = dtype.kind == "u" and dtype.itemsize in (1, 2, 4, 8)
        want = "unsigned"
    else:
        ok = dtype == np.dtype(want)
        want = np.dtype(want)
    return None if ok else f"{what} is {dtype}, expected {want}"


def check_layout(path):
    """Every attribute, group and column of schema 3 with its type; reports all mismatches at once."""
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)
        return cond

    def typed(dtype, want, what):
        problem = type_problem(dtype, want, what)
        need(problem is None, problem)

    with h5py.File(path, "r") as f:
        for name, want in (("schema", I64), ("producer", STR), ("time_unit", STR)):
            if need(name in f.attrs, f"root attribute {name} is missing"):
                typed(f.attrs.get_id(name).dtype, want, f"root attribute {name}")
        meta = f["metadata"]
        need(isinstance(meta, h5py.Group) and len(meta) == 0, "/metadata should be a group of attributes only")
        for want, names in METADATA.items():
            for name in names:
                if need(name in meta.attrs, f"/metadata attribute {name} is missing"):
                    typed(meta.attrs.get_id(name).dtype, want, f"/metadata attribute {name}")
        for group, columns in SCHEMA.items():
            if not need(group in f, f"/{group} is missing"):
                continue
            lengths = set()
            for col, want in columns.items():
                if not need(col in f[group], f"/{group}/{col} is missing"):
                    continue
                dset = f[group][col]
                need(dset.ndim == 1, f"/{group}/{col} is not one-dimensional")
                typed(dset.dtype, want, f"/{group}/{col}")
                lengths.add(dset.shape[0])
            need(len(lengths) <= 1, f"columns of /{group} have different lengths {sorted(lengths)}")
    expect(not problems, "the file does not follow schema 3:\n  " + "\n  ".join(problems))


def case_file(t):
    p, r = t.profile("alpha", "beta", env={"OMP_NUM_THREADS": "3"})
    check_layout(p.path)

    expect_eq(int(p.attrs["schema"]), 3, "schema")
    expect(p.attrs["producer"].startswith("scope "), f"producer is {p.attrs['producer']!r}")
    expect_eq(p.attrs["time_unit"], "ns", "time_unit")

    m = p.meta
    expect(t.name in m["command_line"], f"command_line {m['command_line']!r} does not name the program")
    expect_eq(os.path.realpath(m["working_dir"]), os.path.realpath(t.work), "working_dir")
    expect(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", m["start_time_utc"]),
           f"start_time_utc {m['start_time_utc']!r} is not ISO 8601")
    expect_eq(m["host"], socket.gethostname(), "host")
    expect_eq(m["env_OMP_NUM_THREADS"], "3", "env_OMP_NUM_THREADS")
    expect(m["clock_source"] in ("tsc", "monotonic"), f"clock_source {m['clock_source']!r}")
    expect(m["clock_frequency_hz"] > 0, "clock_frequency_hz")
    expect(m["logical_cores"] >= m["physical_cores"] >= 1, "logical_cores >= physical_cores >= 1")
    expect(m["memory_bytes"] > 0 and m["peak_rss_bytes"] > 0, "memory_bytes and peak_rss_bytes")
    expect_eq((int(m["exit_status"]), int(m["exit_signal"]), int(m["lost_records"])), (0, 0, 0),
              "exit_status, exit_signal, lost_records")
    expect(m["wall_seconds"] > 0 and m["cpu_seconds"] >= 0, "wall_seconds and cpu_seconds")

    procs = p.processes
    expect_eq(len(procs["pid"]), 1, "processes")
    expect_eq((int(procs["parent"][0]), int(procs["rank"][0])), (-1, -1), "parent and rank of the process")
    expect_eq(os.path.basename(procs["executable"][0]), t.name, "executable")
    argv = procs["arguments"][0].split(" ")
    expect_eq((os.path.basename(argv[0]), argv[1:]), (t.name, ["alpha", "beta"]), "arguments")
    expect(0 < p.span() <= m["wall_seconds"] * 1e9 + 1e9, f"process span {p.span()} ns against the wall time")
    expect_eq((int(procs["exit_status"][0]), int(procs["lost"][0])), (0, 0), "exit_status and lost of the process")

    mods = p.modules[0]
    expect(os.path.realpath(t.prog) in [os.path.realpath(x) for x in mods["path"]], "the program is not in modules")
    expect(any("libc.so" in os.path.basename(x) for x in mods["path"]), "libc is not in modules")
    for low, high, build_id in zip(mods["low"], mods["high"], mods["build_id"]):
        expect(low < high and re.fullmatch(r"[0-9a-f]*", build_id), f"module row {low:#x} {high:#x} {build_id!r}")

    expect_eq(set(p.regions["kind"]), {"function"}, "kinds of the regions")
    expect(np.all(p.pairs["region"] < len(p.regions["name"])), "a pair's region is out of range")
    keys = list(zip(p.pairs["process"], p.pairs["region"]))
    expect_eq(len(set(keys)), len(keys), "distinct (process, region) pairs")
    # The pairs' event ranges cut /events into pieces, without gaps or overlaps.
    n = len(p.events["depth"])
    covered = 0
    for first, count in sorted(zip(p.pairs["first"], p.pairs["count"])):
        expect_eq(int(first), covered, "first row of the next pair's events")
        covered += int(count)
    expect_eq(covered, n, "events covered by the pairs")

    for col, values in p.events.items():
        if col != "flags":
            expect_eq(values.dtype.itemsize, narrowest(values), f"bytes per value of /events/{col}")
    expect(np.all(p.events["thread"] < len(p.lanes[0]["tid"])), "an event's thread lane is out of range")
    expect_eq(int(p.events["task"].max()), 0, "task lanes in a program without tasks")
    expect_eq(int(p.events["flags"].max()), 0, "flags in a run where every call returned")
    check_starts(p)
    check_pair_stats(p)

    h5dump = shutil.which("h5dump")
    if not h5dump:
        raise Skipped("h5dump (Debian package hdf5-tools) is not installed; the rest passed")
    t.run([h5dump, "-H", p.path]).expect_rc(0)
    r = t.run([h5dump, "-g", "/pairs", p.path])
    r.expect_rc(0)
    expect(b"count" in r.stdout and b"DATA" in r.stdout, "h5dump -g /pairs shows no data")


# ---------------------------------------------------------------------------
# Cases: the library's own calls, compression


def case_owncalls(t):
    p, _ = t.profile()  # t.load checks every profile; say it once more here
    check_no_own_calls(p)
    expect(len(p.regions["name"]) >= 3, "expected at least main, worker and work as regions")


def filters(dset):
    return (dset.chunks is not None, dset.compression, dset.compression_opts, dset.shuffle)


def case_compression(t):
    # One recording, written three ways: by the library (auto), then twice
    # more by scope-writer from the arena the library kept. The monotonic
    # clock keeps the writer from calibrating ticks anew each time (see
    # writer/arena_read.c), so the three must hold the same numbers.
    p, _ = t.profile(out="auto.h5", env={"SCOPE_KEEP_ARENA": "1", "SCOPE_ARENA_MAX": "256M",
                                         "SCOPE_CLOCK": "monotonic"})
    arenas = [os.path.join(d, f) for d, _, files in os.walk(t.tmp) for f in files if f.endswith(".arena")]
    expect_eq(len(arenas), 1, "arena files kept with SCOPE_KEEP_ARENA=1")
    n = len(p.events["depth"])
    expect(n > 16384, f"only {n} events, too few to be compressed under auto")
    for out, opts in (("none.h5", ("--compression", "none")),
                      ("gzip9.h5", ("--compression", "gzip:9", "--chunk-size", "4096"))):
        copy = t.path("arena.copy")
        t.run(["cp", "--sparse=always", arenas[0], copy]).expect_rc(0)
        t.run([t.writer, "-o", t.path(out), *opts, copy], env=t.env()).expect_rc(0)

    columns = {}
    with h5py.File(t.path("auto.h5"), "r") as f:
        for col, dset in f["events"].items():
            chunked, comp, _, shuffle = filters(dset)
            expect(chunked and comp == "gzip" and shuffle, f"auto: /events/{col} has {filters(dset)}")
    with h5py.File(t.path("none.h5"), "r") as f:
        for col, dset in f["events"].items():
            expect(dset.compression is None and not dset.shuffle, f"none: /events/{col} has {filters(dset)}")
    with h5py.File(t.path("gzip9.h5"), "r") as f:
        for col, dset in f["events"].items():
            expect(dset.compression == "gzip" and dset.compression_opts == 9,
                   f"gzip:9: /events/{col} has {filters(dset)}")
            expect_eq(dset.chunks, (4096,), f"gzip:9 --chunk-size 4096: chunks of /events/{col}")
    for out in ("auto.h5", "none.h5", "gzip9.h5"):
        with h5py.File(t.path(out), "r") as f:
            columns[out] = {col: f["events"][col][()] for col in f["events"]}
            columns[out].update({"pairs/" + col: f["pairs"][col][()] for col in f["pairs"]})
    for out in ("none.h5", "gzip9.h5"):
        expect_eq(sorted(columns[out]), sorted(columns["auto.h5"]), f"columns of {out}")
        for col, values in columns["auto.h5"].items():
            expect(np.array_equal(values, columns[out][col]), f"{col} differs between auto.h5 and {out}")

    # The option through scope-run, on a fresh run: no filter at all.
    t.profile(out="run-none.h5", options=("-q", "--compression", "none"))
    with h5py.File(t.path("run-none.h5"), "r") as f:
        for col, dset in f["events"].items():
            expect(dset.compression is None and not dset.shuffle,
                   f"scope-run --compression none: /events/{col} has {filters(dset)}")
        expect_eq(f["metadata"].attrs["compression"][:4], "none", "compression in /metadata")


# ---------------------------------------------------------------------------
# Cases: how the profiled program behaves


def case_stdout(t):
    for args in (("print", "3000"), ("exit", "5")):
        plain = t.plain(*args)
        _, prof = t.profile(*args, out=f"{args[0]}.h5", status=plain.rc)
        expect(prof.stdout == plain.stdout,
               f"`{' '.join(args)}`: stdout differs under scope-run ({len(prof.stdout)} bytes, "
               f"{len(plain.stdout)} alone)")
        expect(prof.stderr.startswith(plain.stderr), f"`{' '.join(args)}`: the program's stderr is not passed on")


def case_quiet(t):
    plain = t.plain("print", "10")
    _, prof = t.profile("print", "10")
    expect_eq(prof.stderr, plain.stderr, "stderr of a good run under scope-run -q (the program's own only)")


def case_exit(t):
    p, r = t.profile("exit", "3", status=3)
    expect_eq((int(p.meta["exit_status"]), int(p.meta["exit_signal"])), (3, 0), "exit_status, exit_signal")
    expect_eq(int(p.processes["exit_status"][0]), 3, "exit_status of the process")
    # leave() called exit(): it and main never returned, and their calls run to the end.
    span = p.span()
    for name in ("main", "leave"):
        ev = p.calls(name)
        expect_eq(len(ev["flags"]), 1, f"calls of {name}")
        expect_eq(int(ev["flags"][0]) & 1, 1, f"never-returned flag of {name}")
        end = int(ev["start"][0]) + int(ev["duration"][0])
        expect(span - MS <= end <= span + 1, f"{name} ends at {end} ns, the process at {span} ns")
    expect_eq(int(p.calls("say")["flags"][0]), 0, "flags of say, which returned")


def case_signal(t):
    p, r = t.profile("abort", status=134)
    expect(re.search(r"SIGABRT|abort|signal 6", r.stderr, re.I), "no line on stderr says the program was killed by SIGABRT")
    expect_eq((int(p.meta["exit_status"]), int(p.meta["exit_signal"])), (-1, 6), "exit_status, exit_signal")
    for name in ("main", "crash"):
        expect_eq(int(p.calls(name)["flags"][0]) & 1, 1, f"never-returned flag of {name}")


def case_unwritable(t):
    t.need_prog()
    with open(t.path("afile"), "w") as f:
        f.write("a file, not a directory\n")
    targets = ["/proc/nonexistent/x.h5", t.path("afile", "x.h5")]
    if os.geteuid() != 0:  # root writes into read-only directories anyway
        os.makedirs(t.path("readonly"))
        os.chmod(t.path("readonly"), 0o555)
        targets.append(t.path("readonly", "x.h5"))
    for out in targets:
        r = t.scope("-q", "-o", out, "--", t.prog, "exit", "3")
        r.expect_rc(3)
        expect([line for line in r.err_lines() if out in line], f"no line on stderr names {out}")
        expect(not os.path.exists(out), f"{out} exists")
    expect_eq(sorted(os.listdir(t.work)), sorted(["afile", "tmp"] + (["readonly"] if os.geteuid() else [])),
              "files in the working directory")
    with open(t.path("afile")) as f:
        expect_eq(f.read(), "a file, not a directory\n", "afile's content")


def case_noinstr(t):
    p, _ = t.profile("print", "10")
    expect_eq(int(p.attrs["schema"]), 3, "schema")
    expect_eq(len(p.processes["pid"]), 1, "processes")
    for col, values in p.pairs.items():
        expect_eq(len(values), 0, f"rows in /pairs/{col}")
    for col, values in p.events.items():
        expect_eq(len(values), 0, f"rows in /events/{col}")
    expect(len(p.lanes[0]["tid"]) >= 1, "no lane for the main thread")


def case_preload(t):
    t.need_prog()
    t.need_scope()
    elsewhere = t.path("elsewhere")
    os.makedirs(elsewhere)
    r = t.run([t.prog], env=t.env({"SCOPE_OUTPUT": "x.h5"}, preload=t.preload), cwd=elsewhere)
    r.expect_rc(0)
    expect(b"fib(20) = 6765" in r.stdout, "the program's output is missing")
    p = t.load(os.path.join("elsewhere", "x.h5"))
    expect_eq(p.count("fib"), 21891, "calls of fib")


def case_install(t):
    """cmake --install gives a tree whose pieces find each other from anywhere."""
    t.need_prog()
    t.need_scope()
    build = os.path.dirname(os.path.dirname(t.scope_run))
    prefix = t.path("prefix")
    t.run(["cmake", "--install", build, "--prefix", prefix]).expect_rc(0)
    for rel in ("bin/scope-run", "bin/scope-writer", "lib/libscope_preload.so",
                "share/man/man1/scope-run.1", "share/man/man7/scope.7"):
        expect(os.path.exists(os.path.join(prefix, rel)), f"{rel} was not installed")
    elsewhere = t.path("elsewhere")
    os.makedirs(elsewhere)
    lib = os.path.join(prefix, "lib", "libscope_preload.so")
    r = t.run([t.prog], env=t.env({"SCOPE_OUTPUT": "a.h5"}, preload=lib), cwd=elsewhere)
    r.expect_rc(0)
    expect_eq(t.load(os.path.join("elsewhere", "a.h5")).count("fib"), 21891, "calls of fib (LD_PRELOAD)")
    r = t.run([os.path.join(prefix, "bin", "scope-run"), "-q", "-o", "b.h5", t.prog], env=t.env(), cwd=elsewhere)
    r.expect_rc(0)
    expect_eq(t.load(os.path.join("elsewhere", "b.h5")).count("fib"), 21891, "calls of fib (scope-run)")


def case_defaultname(t):
    t.need_prog()
    t.need_scope()
    runs = t.path("runs")
    os.makedirs(runs)
    argv = [t.scope_run, "-q", "--", t.prog, "print", "5"]
    print("$ (twice at once)", " ".join(argv))
    procs = [subprocess.Popen(argv, cwd=runs, env=t.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              preexec_fn=no_core_dump) for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
        expect_eq(proc.returncode, 0, f"exit status of scope-run (stderr: {err.decode(errors='replace')})")
    files = sorted(os.listdir(runs))
    print("  files:", files)
    expect_eq(len(files), 2, "profiles written by two runs without -o")
    pattern = r"scope-" + re.escape(t.name) + r"-\d{8}-\d{6}-.+-\d+\.h5"
    for name in files:
        expect(re.fullmatch(pattern, name), f"{name} does not match {pattern}")
        t.load(os.path.join("runs", name))


# ---------------------------------------------------------------------------
# Cases: scope-run's command line


def expect_usage_error(t, r, what):
    r.expect_rc(2)
    lines = r.err_lines()
    expect(len(lines) == 1, f"{what}: expected one line on stderr, got {len(lines)}")
    expect_eq(r.stdout, b"", f"{what}: stdout")
    expect(not os.path.exists(t.path("marker")), f"{what}: the program ran")
    expect_eq([f for f in os.listdir(t.work) if f.endswith(".h5")], [], f"{what}: profiles written")
    return lines[0]


def case_cli_unknown(t):
    t.need_prog()
    line = expect_usage_error(t, t.scope("--no-such-option", t.prog, "touch", "marker"), "unknown option")
    expect("--no-such-option" in line, f"the line does not name the option: {line!r}")


def case_cli_badvalue(t):
    t.need_prog()
    for opts in (("--compression", "zip"), ("--compression", "gzip:10"), ("--top", "many"), ("--chunk-size", "0")):
        expect_usage_error(t, t.scope(*opts, t.prog, "touch", "marker"), " ".join(opts))


def case_cli_noprog(t):
    expect_usage_error(t, t.scope(), "no arguments")
    expect_usage_error(t, t.scope("-q", "-o", "x.h5", "--"), "options but no program")


def case_cli_notfound(t):
    line = expect_usage_error(t, t.scope("./no-such-program", "arg"), "missing program")
    expect("no-such-program" in line, f"the line does not name the program: {line!r}")
    line = expect_usage_error(t, t.scope("no-such-program-on-path"), "program not on PATH")
    expect("no-such-program-on-path" in line, f"the line does not name the program: {line!r}")


def case_cli_static(t):
    if not (t.prog and os.path.exists(t.prog)):
        raise Skipped("no statically linked test program: gcc found no libc.a (Debian package libc6-dev)")
    line = expect_usage_error(t, t.scope("-o", "static.h5", t.prog, "touch", "marker"), "static program")
    expect(re.search(r"static", line, re.I) and re.search(r"preload|LD_PRELOAD", line, re.I),
           f"the line does not say a static program cannot be profiled by preloading: {line!r}")


def case_cli_help(t):
    r = t.scope("--help")
    r.expect_rc(0)
    text = r.stdout.decode()
    for opt in ("-o", "--output", "--compression", "--chunk-size", "-q", "--quiet", "--top",
                "-h", "--help", "-V", "--version"):
        expect(re.search(r"(^|[\s,\[])" + re.escape(opt) + r"\b", text), f"--help does not mention {opt}")
    r = t.scope("-h")
    r.expect_rc(0)
    expect_eq(r.stdout.decode(), text, "-h and --help")


def case_cli_version(t):
    for opt in ("--version", "-V"):
        r = t.scope(opt)
        r.expect_rc(0)
        expect(re.search(rb"\d+\.\d+\.\d+", r.stdout), f"{opt} prints no version: {r.stdout!r}")


# ---------------------------------------------------------------------------

def cases_of(namespace):
    """A driver's cases, by name: its case_foo_bar functions as foo-bar."""
    return {name[len("case_"):].replace("_", "-"): fn for name, fn in namespace.items() if name.startswith("case_")}


CASES = cases_of(globals())


def run_case(cases, name, make):
    """Runs cases[name] on what make() returns; prints PASS, FAIL or SKIP with
    the reason and returns the exit status CTest reads."""
    try:
        cases[name](make())
    except Skipped as e:
        print(f"SKIP {name}: {e}")
        return SKIP
    except Failure as e:
        print(f"FAIL {name}: {e}")
        return 1
    print(f"PASS {name}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--prog", help="the test program")
    ap.add_argument("--bin", required=True, help="directory of scope-run and scope-writer")
    ap.add_argument("--lib", required=True, help="directory of libscope_preload.so")
    ap.add_argument("--src", required=True, help="tests/progs, for the line markers")
    ap.add_argument("--workdir", required=True, help="a directory of this test's own; emptied first")
    ap.add_argument("--sanitized", metavar="LIBASAN", help="the library is built with ASan: preload this first")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
