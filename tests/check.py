#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one test case of scope on one test program and checks the profile it writes.

Usage: check.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

One function per case (case_fib is CASE "fib", case_cli_help is "cli-help").
Counts, nesting and lanes are compared exactly; times only against bounds.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import shutil
import socket
import subprocess
import sys

import h5py
import numpy as np

from harness import MS, RUN_TIMEOUT, Skipped, Test, cases_of, check_no_own_calls, expect, expect_eq, \
    no_core_dump, parser, run_case
from profile_checks import check_layout, check_pair_stats, check_starts, narrowest

# ---------------------------------------------------------------------------
# Checks shared by several cases


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
    # child's time is its sleep's: a region of kind wait under it.
    sleeps = p.calls("nanosleep")
    expect_eq(len(sleeps["duration"]), 5, "calls of nanosleep")
    expect_eq(sorted(int(d) for d in sleeps["depth"]), [3] * 5, "depths of nanosleep")
    expect_eq(p.regions["kind"][p.region_row("nanosleep")], "wait", "kind of nanosleep")
    self_ns = int(p.pairs["self_ns"][p.pair_rows("child")[0]])
    expect(self_ns < 2 * MS, f"child's self time is {self_ns} ns, should be < 2 ms")
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

    expect_eq(set(p.regions["kind"]), {"function", "wait"}, "kinds of the regions (main's joins are waits)")
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
        # with the store of the chunks the run's writer took while the program ran
        if os.path.exists(arenas[0] + ".store"):
            t.run(["cp", arenas[0] + ".store", copy + ".store"]).expect_rc(0)
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

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
