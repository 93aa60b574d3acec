#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about the record-time filters (--only, --not, --depth, --min-duration).

Usage: filters.py CASE --prog PATH --bin DIR --lib DIR --workdir DIR [--progs DIR]
                  [--sanitized LIBASAN]

tests/progs/filters.c calls main > run > outer x10 > mid x2 > leaf x3,
run > skip x5 > leaf, and run > slow x2 (spinning SLOW_MS each): each case
runs it with some filters and checks exactly which calls are stored as
events, at which depths, and that a bad option stops scope-run with one
line and status 2 before the program runs. The cxx cases match C++ names
(tests/progs/cxxnames.cpp, --progs) in their demangled and short forms.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import csv
import io
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

NAMES = ("main", "run", "outer", "mid", "leaf", "skip", "slow")


def stored(p, process=0):
    """name -> sorted list of the depths of its stored calls (events), for the regions with some."""
    out = {}
    for row in range(len(p.pairs["region"])):
        if int(p.pairs["process"][row]) != process:
            continue
        name = p.names[p.pairs["region"][row]]
        out.setdefault(name, []).extend(int(d) for d in p.events_of(row)["depth"])
    return {name: sorted(depths) for name, depths in out.items() if depths}


def expect_stored(t, options, want, args=("0",), env=None, out="out.h5"):
    """Profiles filters.c with OPTIONS; its stored calls must be WANT: name -> {depth: calls}."""
    p, _ = t.profile(*args, out=out, options=("-q", *options), env=env)
    got = {name: {d: depths.count(d) for d in sorted(set(depths))} for name, depths in stored(p).items()}
    expect_eq(got, want, f"stored calls by depth with {' '.join(options) or 'no filter'}")
    return p


ALL = {"main": {0: 1}, "run": {1: 1}, "outer": {2: 10}, "mid": {3: 20}, "leaf": {3: 5, 4: 60},
       "skip": {2: 5}, "slow": {2: 2}}


def case_none(t):
    expect_stored(t, (), ALL)


def case_only(t):
    # the functions matched and what they call, the outermost at depth 0
    expect_stored(t, ("-F", "^mid$"), {"mid": {0: 20}, "leaf": {1: 60}})
    expect_stored(t, ("--only", "^skip$", "--only", "^slow$"), {"skip": {0: 5}, "leaf": {1: 5}, "slow": {0: 2}})


def case_not(t):
    # the calls mid makes stay, at their true depth
    want = dict(ALL)
    del want["mid"]
    expect_stored(t, ("-N", "^mid$"), want)


def case_not_subtree(t):
    want = {k: v for k, v in ALL.items() if k != "mid"}
    want["leaf"] = {3: 5}
    expect_stored(t, ("--not", "^mid$", "--not-subtree"), want)


def case_depth(t):
    expect_stored(t, ("-D", "3"), {"main": {0: 1}, "run": {1: 1}, "outer": {2: 10}, "skip": {2: 5}, "slow": {2: 2}})
    expect_stored(t, ("--depth", "1"), {"main": {0: 1}})


def case_only_depth(t):
    # depth counts from the outermost call --only matched
    expect_stored(t, ("-F", "^outer$", "-D", "2"), {"outer": {0: 10}, "mid": {1: 20}})


def case_min_duration(t):
    # slow spins 100 ms; every other call but main and run lasts microseconds
    expect_stored(t, ("-t", "20ms"), {"main": {0: 1}, "run": {1: 1}, "slow": {2: 2}}, args=("100",))
    expect_stored(t, ("--min-duration", "20000000"), {"main": {0: 1}, "run": {1: 1}, "slow": {2: 2}},
                  args=("100",), out="ns.h5")


def case_variables(t):
    # plain LD_PRELOAD runs read the same settings from SCOPE_* variables
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("env.h5"), "SCOPE_NOT": "^leaf$\n^skip$", "SCOPE_DEPTH": "4"},
                preload=t.preload)
    t.run([t.prog, "0"], env=env).expect_rc(0)
    got = stored(t.load("env.h5"))
    expect_eq({k: sorted(set(v)) for k, v in got.items()},
              {"main": [0], "run": [1], "outer": [2], "mid": [3], "slow": [2]}, "stored calls by depth")


def case_bad_variable(t):
    # a plain run with a bad setting says so in one line and records nothing
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("bad.h5"), "SCOPE_ONLY": "(mid"}, preload=t.preload)
    r = t.run([t.prog, "0"], env=env).expect_rc(0)
    lines = r.err_lines()
    expect(len(lines) == 1 and "SCOPE_ONLY" in lines[0] and "(mid" in lines[0], f"one line about SCOPE_ONLY: {lines}")
    expect(not os.path.exists(t.path("bad.h5")), "a profile was written with a bad SCOPE_ONLY")


BAD = [
    (("-F", "(mid"), "--only"),
    (("--not", "[a"), "--not"),
    (("-D", "0"), "--depth"),
    (("--depth", "x"), "--depth"),
    (("-t", "-5us"), "--min-duration"),
    (("--min-duration", "10 parsecs"), "--min-duration"),
    (("--not-subtree",), "--not"),
]


def case_bad_options(t):
    t.need_prog()
    marker = t.path("ran")
    for options, word in BAD:
        r = t.scope(*options, "-o", "bad.h5", "--", "/bin/sh", "-c", f"touch {marker}")
        r.expect_rc(2)
        lines = r.err_lines()
        expect(len(lines) == 1 and lines[0].startswith("scope-run: ") and word in lines[0],
               f"{' '.join(options)}: one line naming {word}, got {lines}")
        expect(not os.path.exists(marker), f"{' '.join(options)}: the program ran")
    r = t.scope("-o", "bad.h5", "--", "/bin/sh", "-c", f"touch {marker}", env={"SCOPE_DEPTH": "-1"})
    r.expect_rc(2)
    expect(len(r.err_lines()) == 1 and "SCOPE_DEPTH" in r.stderr, f"SCOPE_DEPTH=-1: {r.err_lines()}")
    expect(not os.path.exists(marker), "SCOPE_DEPTH=-1: the program ran")


def cxx_stored(t, options, out):
    prog = os.path.join(t.progs, "cxxnames-gcc-O2")
    expect(os.access(prog, os.X_OK), f"test program {prog} was not built")
    t.scope("-q", "-o", out, *options, "--", prog).expect_rc(0)
    return {name: len(d) for name, d in stored(t.load(out)).items()}


def case_cxx(t):
    # the short form: both instantiations of twice
    got = cxx_stored(t, ("-F", "^twice$"), "short.h5")
    expect_eq(sorted(got.values()), [11, 12], f"calls stored with -F ^twice$ ({got})")
    # the demangled full name: one of them
    got = cxx_stored(t, ("-F", r"twice<double>\(double\)"), "full.h5")
    expect_eq(list(got.values()), [12], f"calls stored with -F 'twice<double>(double)' ({got})")
    # a namespace: every geo:: function goes, the lambda that calls one stays
    got = cxx_stored(t, ("-N", "^geo::"), "geo.h5")
    expect(not any(name.startswith("geo::") or " geo::" in name for name in got), f"geo:: functions stored: {got}")
    expect(any("lambda" in name for name in got), f"the lambda is not stored: {got}")


def build_id(path):
    r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    expect(m, f"{path} has no build-id")
    return m.group(1)


def case_stripped(t):
    """A stripped program's functions are named by its debug file, found by build-id under
    /usr/lib/debug/.build-id (a private mount of a folder of this test's over it)."""
    t.need_prog()
    for tool in ("objcopy", "strip", "readelf", "unshare"):
        if not shutil.which(tool):
            raise Skipped(f"needs {tool}")
    prog, debug = t.path("filters-stripped"), t.path("debug")
    shutil.copy(t.prog, prog)
    bid = build_id(prog)
    os.makedirs(os.path.join(debug, ".build-id", bid[:2]))
    t.run(["objcopy", "--only-keep-debug", prog, os.path.join(debug, ".build-id", bid[:2], bid[2:] + ".debug")]
          ).expect_rc(0)
    t.run(["strip", "--strip-all", prog]).expect_rc(0)
    t.prog = prog
    # without the debug file, the stripped program has no names for mid: nothing matches
    expect_stored(t, ("-F", "^mid$"), {}, out="nodebug.h5")
    script = (f"mount --bind {debug} /usr/lib/debug 2>/dev/null || {{ mkdir -p /usr/lib/debug && "
              f"mount --bind {debug} /usr/lib/debug; }} || exit 98\n"
              'exec "$@"')
    r = t.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", t.scope_run, "-q",
               "-F", "^mid$", "-o", "debug.h5", "--", prog, "0"], env=t.env())
    if r.rc == 98 or (r.rc == 1 and "unshare failed" in r.stderr):
        raise Skipped("cannot make a private mount namespace to bind a debug folder (needs root)")
    r.expect_rc(0)
    got = stored(t.load("debug.h5"))
    expect_eq({k: (len(v), sorted(set(v))) for k, v in got.items() if v}, {"mid": (20, [0]), "leaf": (60, [1])},
              "calls stored with -F ^mid$ and the debug file")


# ---------------------------------------------------------------------------
# Exact sums of the calls not stored


def calls_by_region(p, process=0):
    """name -> every call of the region: the stored ones and those summed (aggregated)."""
    out = {}
    agg = p.pairs.get("aggregated")
    for row in range(len(p.pairs["region"])):
        if int(p.pairs["process"][row]) == process:
            name = p.names[p.pairs["region"][row]]
            n = int(p.pairs["count"][row]) + (int(agg[row]) if agg is not None else 0)
            out[name] = out.get(name, 0) + n
    return {k: v for k, v in out.items() if v}


def expect_self_sums(p, root="main", slack_ns=1000):
    """Every call's time is some call's self time: the self times of all regions add up to the
    root call's total, whichever calls were stored, within SLACK_NS of rounding."""
    totals = p.region_totals()
    selfs = sum(t[2] for t in totals.values())
    root_total = totals[root][1]
    expect(abs(selfs - root_total) <= slack_ns + len(totals),
           f"self times add up to {selfs} ns, the {root} call lasted {root_total} ns")


FILTER_RUNS = [("-F", "^mid$"), ("-N", "^mid$"), ("-N", "^mid$", "--not-subtree"), ("-D", "3"),
               ("-F", "^outer$", "-D", "2"), ("-t", "20ms"), ("-F", "^outer$", "-N", "leaf", "--not-subtree",
                                                             "-D", "2", "-t", "5us")]
COUNTS = {"main": 1, "run": 1, "outer": 10, "mid": 20, "leaf": 65, "skip": 5, "slow": 2}


def case_exact_pairs(t):
    # /pairs counts every call whatever was stored; the self times still add up
    for k, options in enumerate(FILTER_RUNS):
        p, _ = t.profile("20", out=f"f{k}.h5", options=("-q", *options))
        expect_eq(calls_by_region(p), COUNTS, f"calls per region with {' '.join(options)}")
        expect_self_sums(p)
        stored = int(sum(p.pairs["count"]))
        summed = int(sum(p.pairs["aggregated"]))
        expect_eq((int(p.meta["calls_stored"]), int(p.meta["calls_aggregated"])), (stored, summed),
                  f"calls_stored and calls_aggregated in /metadata with {' '.join(options)}")
        expect_eq(stored + summed, sum(COUNTS.values()), f"calls stored and summed with {' '.join(options)}")
    meta = p.meta
    expect_eq((meta["filter_only"], meta["filter_not"], int(meta["filter_not_subtree"]), int(meta["filter_depth"]),
               int(meta["filter_min_duration_ns"])), ("^outer$", "leaf", 1, 2, 5000), "the filters in /metadata")
    # the table shows every call; the tree says it shows the stored ones
    r = t.run([os.path.join(t.bin, "scope-report"), "--format", "csv", p.path], env=t.env()).expect_rc(0)
    got = {}
    for line in t.text(r).splitlines()[1:]:
        cells = line.split(",")
        got[cells[0]] = int(cells[1])
    expect_eq(got, COUNTS, "calls in scope-report's table")
    r = t.run([os.path.join(t.bin, "scope-report"), "--tree", p.path], env=t.env()).expect_rc(0)
    expect("counted in the table only" in r.stderr, f"the tree does not say it shows stored calls only: {r.stderr}")


def lane_sums(p, process=0):
    """(region name, thread name) -> calls summed, from /process<N>/aggregates."""
    import h5py
    out = {}
    with h5py.File(p.path, "r") as f:
        name = f"process{process}/aggregates"
        if name not in f:
            return out
        g = f[name]
        lanes = p.lanes[process]["name"]
        for r, k, n in zip(g["region"][:], g["thread"][:], g["calls"][:]):
            key = (p.names[int(r)], lanes[int(k)])
            out[key] = out.get(key, 0) + int(n)
    return out


def case_threads(t):
    # each thread's sums go into the arena when it ends: none is lost, none counted twice
    t.prog = t.progs and os.path.join(t.progs, "threads-gcc-O2")
    expect(os.access(t.prog, os.X_OK), f"test program {t.prog} was not built")
    full, _ = t.profile(out="full.h5")
    want = calls_by_region(full)
    expect_eq(want.get("work"), 10_000, "calls of work without filters")
    for k, options in enumerate((("-N", "^work$"), ("-F", "^worker$", "-D", "1"), ("-t", "1s"))):
        p, _ = t.profile(out=f"t{k}.h5", options=("-q", *options))
        expect_eq(calls_by_region(p), want, f"calls per region with {' '.join(options)}")
        # and per thread lane: worker-K called work 1000*K times
        got = {lane: n for (region, lane), n in lane_sums(p).items() if region == "work"}
        expect_eq(got, {f"worker-{k}": 1000 * k for k in range(1, 5)},
                  f"calls of work summed per lane with {' '.join(options)}")


def case_forks(t):
    # a forked child sums its own calls only, not those its parent had summed before the fork
    want_child = {"run": 1, "outer": 10, "mid": 20, "leaf": 65, "skip": 5, "slow": 2}
    for k, options in enumerate((("-N", "^leaf$"), ("-t", "1s"))):
        p, _ = t.profile("0", "fork", out=f"forks{k}.h5", options=("-q", *options))
        expect_eq(len(p.pids), 2, "processes")
        child = 0 if int(p.processes["parent"][0]) >= 0 else 1
        expect_eq(calls_by_region(p, child), want_child, f"calls in the child with {' '.join(options)}")
        expect_eq(calls_by_region(p, 1 - child), dict(COUNTS, waitpid=1),
                  f"calls in the parent with {' '.join(options)}")
        # the per-lane sums of the merged file name the right regions in both processes
        for proc in (0, 1):
            summed = {region: n for (region, _), n in lane_sums(p, proc).items()}
            agg = {name: n for name, n in zip((p.names[r] for r in p.pairs["region"]), p.pairs["aggregated"])}
            rows = [i for i in range(len(p.pairs["region"])) if int(p.pairs["process"][i]) == proc]
            agg = {p.names[p.pairs["region"][i]]: int(p.pairs["aggregated"][i]) for i in rows
                   if int(p.pairs["aggregated"][i])}
            expect_eq(summed, agg, f"per-lane sums of process {proc} with {' '.join(options)}")


def said_counts(r):
    """name -> calls from the "calls NAME=N ..." lines a robustness program prints."""
    out = {}
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("calls "):
            for word in line.split()[1:]:
                name, n = word.split("=")
                out[name] = int(n)
    return out


def case_jumps(t):
    """longjmp, siglongjmp and C++ exceptions through calls that are not stored: the stack of
    open calls stays right, so every function the programs count has its calls exactly."""
    for name, args in (("r_jump-gcc-O2", ()), ("r_except-gcc-O2", ()), ("r_except-clang-O2", ())):
        t.prog = os.path.join(t.progs, name)
        expect(os.access(t.prog, os.X_OK), f"test program {t.prog} was not built")
        for k, options in enumerate((("-N", "^probe$"), ("-t", "1s"), ("-D", "2"))):
            p, r = t.profile(*args, out=f"{name}-{k}.h5", options=("-q", *options))
            said = said_counts(r)
            expect(said, f"{name} printed no counts")
            got = {}
            for fn, n in calls_by_region(p).items():  # C++ names without their parameters
                got[re.sub(r"\(.*\)$", "", fn)] = got.get(re.sub(r"\(.*\)$", "", fn), 0) + n
            for fn, n in said.items():
                short = re.sub(r"\(.*\)$", "", fn)
                expect_eq(got.get(short, 0), n, f"{name} with {' '.join(options)}: calls of {fn}")


# ---------------------------------------------------------------------------
# Sampling (scope-run --sample)


def samples_of(p, process=0):
    """[(region name or None, stack as a list of names, outermost first)] of /process<N>/samples."""
    import h5py
    with h5py.File(p.path, "r") as f:
        name = f"process{process}/samples"
        if name not in f:
            return []
        g = f[name]
        return [(p.names[int(r)] if int(r) < len(p.names) else None, s.split(";"))
                for r, s in zip(g["region"][:], g["stack"].asstr()[:])]


def case_sample(t):
    """tests/progs/sampling.c: spin() spends 300 ms of CPU time in libm's sin(), which is not
    instrumented, then nap() sleeps 300 ms. Sampled at 1 kHz: sin shows under spin with at least
    80% of spin's samples (the loop around it is a few instructions a call: the truth is above
    95%), nap has none, and scope-report --samples puts sin first; --since and --until choose
    the samples of --samples and --folded-samples."""
    t.prog = os.path.join(t.progs, "sampling-gcc-O2")
    expect(os.access(t.prog, os.X_OK), f"test program {t.prog} was not built")
    p, _ = t.profile("300", out="sampled.h5", options=("-q", "--sample", "1000"))
    expect_eq(int(p.meta.get("sample_hz", 0)), 1000, "sample_hz in /metadata")
    samples = samples_of(p)
    in_spin = [stack for region, stack in samples if region == "spin"]
    in_nap = [stack for region, stack in samples if region == "nap"]
    # CPU-time timers fire at most once a kernel tick (4 ms at HZ=250), and only at a tick the
    # thread is running at: 75 samples alone, fewer on a machine loaded by other work
    expect(len(in_spin) >= 10, f"{len(in_spin)} samples in spin for 300 ms of CPU time")
    expect(len(in_nap) <= 2, f"{len(in_nap)} samples in nap, which sleeps")
    in_sin = [s for s in in_spin if "sin" in s[-1] and s[-1] != "spin"]
    expect(len(in_sin) >= 0.8 * len(in_spin), f"{len(in_sin)} of spin's {len(in_spin)} samples in sin")
    for stack in in_sin:
        expect("spin" in stack and stack.index("spin") < len(stack) - 1 and "main" in stack,
               f"a sample in sin is not under main and spin: {stack}")
    r = t.run([os.path.join(t.bin, "scope-report"), "--samples", "--format", "csv", p.path],
              env=t.env()).expect_rc(0)
    rows = list(csv.DictReader(io.StringIO(t.text(r).split("\n\n")[0])))
    expect(rows and "sin" in rows[0]["function"], f"scope-report --samples does not put sin first: {rows[:3]}")
    cpu = int(rows[0]["cpu_ns"])
    expect(200_000_000 <= cpu <= 400_000_000, f"sin's on-CPU time {cpu} ns, spin spun 300 ms")
    r = t.run([os.path.join(t.bin, "scope-report"), "--folded-samples", p.path], env=t.env()).expect_rc(0)
    folded = [line.rsplit(" ", 1) for line in t.text(r).splitlines()]
    expect(folded and all(w.isdigit() for _, w in folded), f"--folded-samples lines: {folded[:3]}")
    expect(any(";spin;" in st and "sin" in st.split(";")[-1] for st, _ in folded),
           f"no folded stack main;...;spin;sin: {folded[:3]}")
    # --since and --until: the samples taken in that time, on the job's timeline (here the
    # process's own), each standing for as much CPU time as without them
    import h5py
    with h5py.File(p.path, "r") as f:
        g = f["process0/samples"]
        times, lanes, stacks = g["time"][()].tolist(), g["thread"][()].tolist(), g["stack"].asstr()[()].tolist()
        cpu_ns = f["process0/lanes/threads/cpu_ns"][()].tolist()
    per_lane = {lane: lanes.count(lane) for lane in set(lanes)}
    order = sorted(times)
    since, until = order[len(order) // 4], order[3 * len(order) // 4]
    kept = [i for i, at in enumerate(times) if since <= at < until]
    expect(0 < len(kept) < len(times), f"{len(kept)} of {len(times)} samples in the window: no test")
    window = ("--since", f"{since}ns", "--until", f"{until}ns")
    r = t.run([os.path.join(t.bin, "scope-report"), "--samples", *window, p.path], env=t.env()).expect_rc(0)
    expect(t.text(r).startswith(f"{p.path}: {len(kept)} samples between --since and --until, "),
           f"--samples {' '.join(window)}: {t.text(r).splitlines()[0]!r}, {len(kept)} samples taken then")
    r = t.run([os.path.join(t.bin, "scope-report"), "--samples", "--format", "csv", *window, p.path],
              env=t.env()).expect_rc(0)
    rows = list(csv.DictReader(io.StringIO(t.text(r).split("\n\n")[0])))
    expect_eq(sum(int(row["samples"]) for row in rows), len(kept), "--samples in a window: samples per function")
    want = {}
    for i in kept:
        want[stacks[i]] = want.get(stacks[i], 0.0) + cpu_ns[lanes[i]] / per_lane[lanes[i]]
    r = t.run([os.path.join(t.bin, "scope-report"), "--folded-samples", *window, p.path], env=t.env()).expect_rc(0)
    got = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in t.text(r).splitlines()}
    expect_eq(sorted(got), sorted(want), "--folded-samples in a window: the stacks")
    for stack, ns in got.items():
        expect(abs(ns - want[stack]) <= 1, f"--folded-samples in a window: {stack} {ns} ns, its samples {want[stack]}")
    r = t.run([os.path.join(t.bin, "scope-report"), "--folded-samples", "--since", f"{order[-1] + 1}ns", p.path],
              env=t.env()).expect_rc(0)
    expect_eq(t.text(r), "", "--folded-samples after the last sample")

    # without --sample: no samples, and --samples says so
    p0, _ = t.profile("50", out="plain.h5")
    expect_eq(samples_of(p0), [], "samples without --sample")
    r = t.run([os.path.join(t.bin, "scope-report"), "--samples", p0.path], env=t.env())
    expect(r.rc == 1 and len(r.err_lines()) == 1 and "--sample" in r.stderr,
           f"scope-report --samples of a profile without samples: {r.rc} {r.err_lines()}")


def spins_sampled(regions, spins):
    """The rows of --samples' region table for the spins, checked: both there, and what else was
    sampled is main, between them, with a few samples (a busy machine may give it one or two)."""
    named = sorted(row["region"] for row in regions if row["region"] in spins)
    expect_eq(named, sorted(spins), "--samples: the spins among the regions sampled")
    others = [row for row in regions if row["region"] not in spins]
    expect(all(row["region"] == "main" and int(row["samples"]) <= 3 for row in others),
           f"--samples: regions sampled besides the spins: {[(r['region'], r['samples']) for r in others]}")
    return [row for row in regions if row["region"] in spins]


def case_sample_names(t):
    """The samples' functions by the names the other views give them: geo::spin<double> and
    geo::spin<int> of tests/progs/cxxnames.cpp, 200 ms of CPU time each, are the regions
    geo::spin and geo::spin#2 in the table, and so in --samples and --folded-samples, with
    their file and line (a function that is no region has none); --names full gives the
    signatures."""
    t.prog = os.path.join(t.progs, "cxxnames-gcc-O2")
    p, _ = t.profile("spin", "200", out="sampled.h5", options=("-q", "--sample", "1000"))
    report = os.path.join(t.bin, "scope-report")
    full = {"geo::spin": "double geo::spin<double>(double, long)", "geo::spin#2": "int geo::spin<int>(int, long)"}
    where = {n: (f, int(line)) for n, f, line in zip(p.names, p.regions["file"], p.regions["line"])}

    def tables(*args):
        r = t.run([report, "--samples", "--format", "csv", *args, p.path], env=t.env()).expect_rc(0)
        fns, regions = (list(csv.DictReader(io.StringIO(part))) for part in t.text(r).split("\n\n"))
        return fns, regions

    table = t.run([report, "--format", "csv", p.path], env=t.env()).expect_rc(0)
    expect_eq(sorted(row["region"] for row in csv.DictReader(io.StringIO(t.text(table)))),
              ["geo::spin", "geo::spin#2", "main"], "the table's regions")
    fns, regions = tables()
    regions = spins_sampled(regions, full)
    for row in regions:
        expect_eq((row["file"], int(row["line"])), where[full[row["region"]]], f"file and line of {row['region']}")
        expect(int(row["samples"]) >= 10, f"{row['samples']} samples in {row['region']} for 200 ms of CPU time")
    by_name = {row["function"]: row for row in fns}
    for name in full:
        expect(name in by_name, f"--samples: no function {name}: {sorted(by_name)}")
        expect_eq((by_name[name]["file"], int(by_name[name]["line"])), where[full[name]], f"file and line of {name}")
    for row in fns:
        expect(row["function"] in full or row["function"] in where or (row["file"], row["line"]) == ("", "0"),
               f"a function that is no region has a file and line: {row}")
    r = t.run([report, "--samples", "--lines", p.path], env=t.env()).expect_rc(0)
    for name in full:
        f, n = where[full[name]]
        # the location column is as wide as its longest entry: main's line 113 when sampled
        at = re.compile(rf"  {re.escape(f)}:{n}  +{re.escape(name)}$")
        expect(len([line for line in t.text(r).splitlines() if at.search(line)]) == 2,
               f"--samples --lines: {name} at {f}:{n} in both tables:\n{t.text(r)}")
    fns, regions = tables("--names", "full")
    spins_sampled(regions, {v: v for v in full.values()})
    expect(set(full.values()) <= {row["function"] for row in fns}, "--samples --names full: the signatures")

    for args, names in (([], full), (["--names", "full"], {v: v for v in full.values()})):
        r = t.run([report, "--folded-samples", *args, p.path], env=t.env()).expect_rc(0)
        stacks = [line.rsplit(" ", 1)[0].split(";") for line in t.text(r).splitlines()]
        for name in names:
            expect([s for s in stacks if s[-2:] == ["main", name]], f"--folded-samples {args}: no stack main;{name}")
        short = [f for s in stacks for f in s if "<" in f or "(" in f.replace("(anonymous namespace)", "")]
        expect(bool(args) or not short, f"--folded-samples: frames not short: {short[:3]}")


def case_sample_signal(t):
    """A program that handles the samples' own signal (SIGRTMAX-5) gets every one it raises,
    and the samples go on."""
    t.prog = os.path.join(t.progs, "sampling-gcc-O2")
    expect(os.access(t.prog, os.X_OK), f"test program {t.prog} was not built")
    p, r = t.profile("200", "rt", out="rt.h5", options=("-q", "--sample", "1000"))
    expect_eq(t.text(r).strip(), "rt=3", "what the program's handler counted")
    got = len([1 for region, _ in samples_of(p) if region == "spin"])
    expect(got >= 1, f"{got} samples in spin for 200 ms of CPU time")


def case_sample_sigprof(t):
    """A program that sets its own SIGPROF timer keeps it while scope samples with its own
    timers and signal: every handler call it counts is recorded, as without sampling."""
    t.prog = os.path.join(t.progs, "r_sig-gcc-O2")
    expect(os.access(t.prog, os.X_OK), f"test program {t.prog} was not built")
    p, r = t.profile("sigprof", out="sigprof.h5", options=("-q", "--sample", "1000"))
    said = said_counts(r)
    expect(said.get("on_signal", 0) > 0, f"the program counted no SIGPROF: {said}")
    expect_eq(p.count("on_signal"), said["on_signal"], "calls of the SIGPROF handler")
    expect_eq(p.count("spin"), said["spin"], "calls of spin")


HYBRID_CALLS = 10_000_000  # bench/hybrid runs 10^8; 10^7 keeps the unfiltered run to a few seconds


def case_hybrid(t):
    """tests/progs/hybrid.c with -t 10us: the long calls are events at their depth under
    their parent, the profile is small, and every region's calls equal those of a run without -t."""
    prog = os.path.join(t.progs, "hybrid-gcc-O2")
    expect(os.access(prog, os.X_OK), f"test program {prog} was not built")
    t.prog = prog
    full, _ = t.profile(str(HYBRID_CALLS), out="full.h5")
    part, _ = t.profile(str(HYBRID_CALLS), out="hybrid.h5", options=("-q", "-t", "10us"))
    want = {"main": 1, "work": 1, "tiny": HYBRID_CALLS + 3, "slow": 3}
    expect_eq(calls_by_region(full), want, "calls per region without -t")
    expect_eq(calls_by_region(part), want, "calls per region with -t 10us")
    expect_self_sums(full)
    expect_self_sums(part)
    # the long calls: events with their true depth, inside their parent
    slow, work = part.calls("slow"), part.calls("work")
    expect_eq(sorted(int(d) for d in slow["depth"]), [2, 2, 2], "depths of slow")
    expect_eq(list(work["depth"]), [1], "depth of work")
    w0, w1 = int(work["start"][0]), int(work["start"][0]) + int(work["duration"][0])
    for s, d in zip(slow["start"], slow["duration"]):
        expect(w0 <= int(s) and int(s) + int(d) <= w1, f"a slow call ({s}, {d}) lies outside work ({w0}, {w1})")
    # every event stored lasted 10 us or more (a tiny call the system preempted may have)
    for row in range(len(part.pairs["region"])):
        short = [int(d) for d in part.events_of(row)["duration"] if int(d) < 9_900]
        expect(not short, f"{part.names[part.pairs['region'][row]]}: calls under 10 us stored: {short[:5]}")
    # the long calls spin 2 ms each in both runs (more when the system preempts them: times
    # are compared against bounds; the sums are checked exactly within each run above)
    for run, p in (("without -t", full), ("with -t", part)):
        total = p.region_totals()["slow"][1]
        expect(6_000_000 <= total < 10_000_000_000, f"slow's total {run}: {total} ns for 3 calls of 2 ms")
    size_full, size_part = os.path.getsize(full.path), os.path.getsize(part.path)
    print(f"profile bytes: {size_full} without -t, {size_part} with -t 10us")
    expect(size_part < 100_000, f"the -t profile has {size_part} bytes")
    expect(size_part * 10 < size_full, f"the -t profile ({size_part} bytes) is not much smaller than {size_full}")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "progs", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
