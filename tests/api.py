#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about the API of include/scope/scope.h on one program built against libscope.

Usage: api.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

tests/api/api.c names regions (scope_region_begin/end), pauses its thread
and its process, and runs paused from the start; each mode of it makes a
known number of calls of work (recorded) and of skipped (made while paused,
never recorded). The program runs unchanged without the profiler, and
builds against the installed tree through pkg-config and CMake.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402
from profile_checks import check_nesting, expect_counts  # noqa: E402


def profiled(t, mode, *options, prog=None, out="out.h5", env=None):
    r = t.scope("-q", *options, "-o", out, "--", prog or t.prog, *([mode] if mode else []), env=env)
    r.expect_rc(0)
    p = t.load(out)
    check_nesting(p)
    return p, r


def kind_of(p, name):
    return p.regions["kind"][p.region_row(name)]


def expect_regions(p, what=""):
    """The calls of api.c's regions mode: user regions with exact counts, each call of work
    one level below the inner region or step that holds it."""
    expect_counts(p, {"outer": 1, "inner": 3, "step 0": 2, "step 1": 2, "work": 10}, what=what)
    for name in ("outer", "inner", "step 0", "step 1"):
        expect_eq(kind_of(p, name), "user", f"kind of region {name!r}{what}")
        row = p.region_row(name)
        expect_eq((p.regions["module"][row], int(p.regions["offset"][row])), ("", 0),
                  f"module and offset of {name!r}{what}")
    outer, inner, work = p.calls("outer"), p.calls("inner"), p.calls("work")
    expect_eq(set(inner["depth"].tolist()), {int(outer["depth"][0]) + 1}, f"depth of inner{what}")
    nested = [int(d) for s, d in zip(work["start"], work["depth"])
              if any(i <= s < i + dur for i, dur in zip(inner["start"], inner["duration"]))]
    expect_eq(len(nested), 6, f"calls of work inside inner{what}")
    expect_eq(set(nested), {int(inner["depth"][0]) + 1}, f"depth of work inside inner{what}")


def case_regions(t):
    """Named regions are regions of kind user that nest with the instrumented calls, named by
    content (a reused buffer), at every optimisation level."""
    t.need_prog()
    p, r = profiled(t, "regions")
    expect_eq(t.text(r), "api regions ok\n", "output")
    expect_regions(p)
    rep = t.run([os.path.join(t.bin, "scope-report"), t.path("out.h5")])
    rep.expect_rc(0)
    shown = {line.split("  ")[-1].strip() for line in t.text(rep).splitlines()[3:]}
    expect({"outer", "inner", "step 0", "step 1"} <= shown,
           f"scope-report shows the named regions whole: {sorted(shown)}")


def case_pause(t):
    """scope_pause/scope_resume: the thread's calls made while paused are not recorded."""
    t.need_prog()
    p, _ = profiled(t, "pause")
    expect_counts(p, {"work": 7, "skipped": 0, "pause_thread": 1})


def case_process(t):
    """scope_pause_process reaches a thread that is recording: its calls made while the process was
    paused are not recorded, its calls before and after are."""
    t.need_prog()
    p, _ = profiled(t, "process")
    expect_counts(p, {"work": 4, "skipped": 0, "worker": 1})


def every_call(p, name):
    """The calls of NAME in process 0: stored and summed by the filters (/pairs aggregated)."""
    agg = p.pairs.get("aggregated")
    return sum(int(p.pairs["count"][r]) + (int(agg[r]) if agg is not None else 0)
               for r in p.pair_rows(name, 0))


def case_pause_filtered(t):
    """Pausing leaves calls out of the sums of record-time filters too: a call of skipped made
    while paused (the thread, the process, or from the start) is neither stored nor summed,
    whether a filter would have stored it or not, and the calls of work are all counted."""
    t.need_prog()
    for mode, want, env in (("pause", 7, None), ("process", 4, None), ("started", 2, {"SCOPE_START_PAUSED": "1"})):
        for k, options in enumerate((("-N", "^skipped$"), ("-N", "^work$"), ("-D", "1"), ("-t", "1s"))):
            out = f"{mode}{k}.h5"
            t.scope("-q", *options, "-o", out, "--", t.prog, mode, env=env).expect_rc(0)
            p = t.load(out)  # no check_nesting: a summed callee's time is off its caller's self
            what = f" ({mode} with {' '.join(options)})"
            expect_eq(every_call(p, "skipped"), 0, f"calls of skipped stored or summed{what}")
            expect_eq(every_call(p, "work"), want, f"calls of work stored or summed{what}")


def case_started(t):
    """SCOPE_START_PAUSED=1 and scope-run --paused: nothing is recorded (not main either) until the
    program resumes the process."""
    t.need_prog()
    for how, options, env in (("--paused", ("--paused",), None), ("SCOPE_START_PAUSED", (), {"SCOPE_START_PAUSED": "1"})):
        p, _ = profiled(t, "started", *options, out=f"{how}.h5", env=env)
        expect_counts(p, {"work": 2, "skipped": 0, "main": 0, "started_paused": 0}, what=f" ({how})")
    p, _ = profiled(t, "started", out="unpaused.h5")
    expect_counts(p, {"work": 2, "skipped": 3, "main": 1}, what=" (not paused)")


def task_lanes(p, process=0):
    """name -> (lane, row of lanes/tasks) of PROCESS's task lanes."""
    tk = p.tasks[process]
    expect(tk, "/process0/lanes/tasks is missing")
    return {str(n): (k + 1, k) for k, n in enumerate(tk["name"])}


def per_task(p, name, process=0):
    """Task lane -> calls of NAME in it (0: outside any task)."""
    out = {}
    for lane in p.calls(name, process)["task"].tolist():
        out[int(lane)] = out.get(int(lane), 0) + 1
    return out


def check_tasks(p, what=""):
    """api.c's tasks mode: the calls of each task lane, the lanes it ran on, its id and creator."""
    lanes = task_lanes(p)
    expect_eq(sorted(lanes), ["relay", "relay again", "side"], f"task lanes{what}")
    tk = p.tasks[0]
    relay, side, again = lanes["relay"], lanes["side"], lanes["relay again"]
    expect_eq(per_task(p, "task_step"), {relay[0]: 12, side[0]: 2, again[0]: 1},
              f"calls of task_step per task lane{what}")
    expect_eq(per_task(p, "work"), {0: 2}, f"calls of work per task lane{what}")
    expect_eq(per_task(p, "helper"), {0: 1}, f"task lane of helper{what}")
    helper_lane = int(p.calls("helper")["thread"][0])
    expect(helper_lane != 0, f"helper ran on lane 0{what}")
    steps = p.calls("task_step")
    for name, lane_row, threads in (("relay", relay, {0, helper_lane}), ("side", side, {helper_lane}),
                                    ("relay again", again, {0})):
        lane, row = lane_row
        ran = {int(x) for x in steps["thread"][steps["task"] == lane]}
        expect_eq(ran, threads, f"threads whose calls are in task {name!r}{what}")
        expect_eq({int(x) for x in str(tk["threads"][row]).split(",")}, threads,
                  f"lanes/tasks threads of {name!r}{what}")
        expect_eq(int(tk["id"][row]), 8 if name == "side" else 7, f"id of {name!r}{what}")
        expect_eq(int(tk["parent"][row]), helper_lane if name == "side" else 0, f"parent of {name!r}{what}")
        start, end, busy = int(tk["start"][row]), int(tk["end"][row]), int(tk["busy_ns"][row])
        expect(start <= end <= p.span(), f"task {name!r} runs {start}..{end}, the process {p.span()} ns{what}")
        expect(0 < busy <= end - start, f"busy time of {name!r}: {busy} ns in {end - start}{what}")
        mine = steps["task"] == lane
        first = int(steps["start"][mine].min())
        last = int((steps["start"][mine] + steps["duration"][mine]).max())
        expect(start <= first and last <= end,
               f"calls of {name!r} at {first}..{last}, outside its span {start}..{end}{what}")
    expect_eq(p.tasks[0]["threads"][relay[1]].split(",")[0], "0", f"relay's first thread{what}")


def case_tasks(t):
    """scope_task_begin/switch/end: a task handed between two threads keeps one task lane; each call
    goes to the task its thread ran when it started; an id begun again is a new lane. The same
    profile grouped in memory and through the spill; scope-report --tasks shows each lane."""
    t.need_prog()
    p, r = profiled(t, "tasks")
    expect_eq(t.text(r), "api tasks ok\n", "output")
    check_tasks(p)
    ps, _ = profiled(t, "tasks", out="spilled.h5", env={"SCOPE_WRITER_WINDOW": "4"})
    check_tasks(ps, " (spilled)")
    rep = t.run([os.path.join(t.bin, "scope-report"), "--tasks", "--format", "csv", t.path("out.h5")])
    rep.expect_rc(0)
    rows = [line.split(",") for line in t.text(rep).splitlines()]
    head = rows[0]
    got = {row[head.index("name")]: (row[head.index("calls")], row[head.index("nthreads")]) for row in rows[1:]}
    expect_eq(got, {"relay": ("12", "2"), "side": ("2", "1"), "relay again": ("1", "1")},
              "scope-report --tasks: calls and threads per task")
    check_exports(t, task_lanes(p))


def check_exports(t, lanes):
    """Chrome and speedscope exports: each task lane is a track of its own, with its calls only."""
    report = os.path.join(t.bin, "scope-report")
    rep = t.run([report, "--chrome", t.path("out.h5")])
    rep.expect_rc(0)
    events = json.loads(t.text(rep))["traceEvents"]
    track = {e["args"]["name"]: e["tid"] for e in events if e.get("name") == "thread_name"}
    want = {"relay": 12, "side": 2, "relay again": 1}
    for name, (lane, _) in lanes.items():
        label = f"task {lane}: {name} (id {8 if name == 'side' else 7})"
        expect(label in track, f"chrome: no track named {label!r}: {sorted(track)}")
        calls = [e["name"] for e in events if e.get("ph") == "X" and e["tid"] == track[label]]
        expect_eq(calls, ["task_step"] * want[name], f"chrome: calls on the track of {name!r}")
    threads = [e["name"] for e in events if e.get("ph") == "X" and e["tid"] not in track.values()
               and e["name"] == "task_step"]
    expect_eq(threads, [], "chrome: calls of tasks on thread tracks")
    rep = t.run([report, "--speedscope", t.path("out.h5")])
    rep.expect_rc(0)
    doc = json.loads(t.text(rep))
    frames = [f["name"] for f in doc["shared"]["frames"]]
    opened = {}
    for prof in doc["profiles"]:
        depth = 0
        for e in prof["events"]:
            depth += 1 if e["type"] == "O" else -1
            expect(depth >= 0, f"speedscope: {prof['name']} closes more than it opens")
        expect_eq(depth, 0, f"speedscope: calls left open in {prof['name']}")
        ats = [e["at"] for e in prof["events"]]
        expect_eq(ats, sorted(ats), f"speedscope: times of {prof['name']} in order")
        opened[prof["name"]] = [frames[e["frame"]] for e in prof["events"] if e["type"] == "O"]
    for name, (lane, _) in lanes.items():
        mine = [k for k in opened if f", task {lane}: {name} (" in k]
        expect_eq(len(mine), 1, f"speedscope: profiles of task {name!r} in {sorted(opened)}")
        expect_eq(opened[mine[0]], ["task_step"] * want[name], f"speedscope: calls of task {name!r}")


def case_unprofiled(t):
    """Without the profiler the program runs on libscope's functions, which do nothing."""
    t.need_prog()
    for mode in ("regions", "pause", "process", "started", "tasks"):
        r = t.plain(mode)
        r.expect_rc(0)
        expect_eq(t.text(r), f"api {mode} ok\n", f"output of {mode}")
    expect_eq([f for f in os.listdir(t.work) if f.endswith(".h5")], [], "profiles written")


def case_cxx(t):
    """scope::region names a region for the lifetime of a block, and is not itself a region."""
    t.need_prog()
    p, _ = profiled(t, None)
    expect_counts(p, {"cxx block": 2, "work()": 2})
    expect(not [n for n in p.names if "region::" in n], f"scope::region's own code was recorded: {p.names}")


def run_built(t, exe, what):
    """A program built against the installed tree: unprofiled, then under scope-run."""
    r = t.run([exe, "regions"], env=t.env())
    r.expect_rc(0)
    expect_eq(t.text(r), "api regions ok\n", f"output unprofiled ({what})")
    p, _ = profiled(t, "regions", prog=exe, out=f"{what}.h5")
    expect_regions(p, f" ({what})")


def case_install(t):
    """cmake --install gives scope.h, libscope.so, scope.pc and the CMake package: a program builds
    against the installed tree with pkg-config and with find_package(scope), and runs both ways."""
    t.need_prog()
    build = os.path.dirname(os.path.dirname(t.scope_run))
    prefix = t.path("prefix")
    t.run(["cmake", "--install", build, "--prefix", prefix]).expect_rc(0)
    for rel in ("include/scope/scope.h", "lib/libscope.so", "lib/pkgconfig/scope.pc",
                "lib/cmake/scope/scopeConfig.cmake"):
        expect(os.path.exists(os.path.join(prefix, rel)), f"{rel} was not installed")
    src = os.path.join(t.src, "api.c")
    progs_h = os.path.join(os.path.dirname(t.src), "progs", "progs.h")

    # pkg-config, from a copy of the source away from the build tree
    proj = t.path("proj")
    os.makedirs(os.path.join(proj, "api"))
    os.makedirs(os.path.join(proj, "progs"))
    shutil.copy(src, os.path.join(proj, "api", "api.c"))
    shutil.copy(progs_h, os.path.join(proj, "progs", "progs.h"))
    env = t.env({"PKG_CONFIG_PATH": os.path.join(prefix, "lib", "pkgconfig")})
    pc = t.run(["pkg-config", "--cflags", "--libs", "scope"], env=env)
    pc.expect_rc(0)
    flags = t.text(pc).split()
    expect(f"-I{prefix}/include" in [os.path.normpath(f) if f.startswith("-I") else f for f in flags]
           or any(os.path.realpath(f[2:]) == os.path.realpath(os.path.join(prefix, "include"))
                  for f in flags if f.startswith("-I")), f"pkg-config --cflags: {flags}")
    exe = os.path.join(proj, "api-pc")
    libdir = [f[2:] for f in flags if f.startswith("-L")][0]
    t.run(["cc", "-O2", "-finstrument-functions", "-pthread", "-o", exe, os.path.join(proj, "api", "api.c"),
           *flags, f"-Wl,-rpath,{libdir}"], env=env).expect_rc(0)
    run_built(t, exe, "pkg-config")

    # CMake: find_package(scope) and scope::scope
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.18)\nproject(apitest C)\n"
                "find_package(Threads REQUIRED)\nfind_package(scope 0.1 REQUIRED)\n"
                "add_executable(api-cmake api/api.c)\n"
                "target_compile_options(api-cmake PRIVATE -finstrument-functions)\n"
                "target_link_libraries(api-cmake PRIVATE scope::scope Threads::Threads)\n")
    cbuild = os.path.join(proj, "build")
    t.run(["cmake", "-S", proj, "-B", cbuild, f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"],
          env=t.env()).expect_rc(0)
    t.run(["cmake", "--build", cbuild], env=t.env()).expect_rc(0)
    run_built(t, os.path.join(cbuild, "api-cmake"), "cmake")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
