#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one robustness case of scope on one test program and checks the profile it writes.

Usage: robust.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR
                 [--plugins DIR] [--sanitized LIBASAN]

The cases are about what real programs do and simple ones do not: fork,
exec, daemonize, crash, get killed, longjmp, throw, run thousands of
threads, unload libraries, close descriptors, fill the disk. The programs
(tests/progs/r_*) print the counts they know; the checks compare the file
with them exactly, per process and per thread lane, and times only
against bounds. One function per case (case_fork is CASE "fork").
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

import h5py
import numpy as np

from harness import MS, RUN_TIMEOUT, SPILL, Failure, Profile, Skipped, Test, arenas, cases_of, expect, expect_eq, \
    kept_arena, no_core_dump, parser, run_case, small_tmpfs, write_arena
from profile_checks import check_nesting, check_pair_stats, check_processes, check_starts, col, \
    expect_counts, expect_same_pairs, expect_same_profile, parent_chain, rows_of, said_calls

KILL_CALLS = 100_000  # calls r_kill makes on each thread before it may be killed
FD_CALLS = 650_000  # r_fds: 15.6 MB of records, more than the arena is backed with at start-up
DISK_CALLS = 200_000  # r_fds plain: 4.8 MB of records, more than the small tmpfs holds


# ---------------------------------------------------------------------------
# What the programs say, and what the file says


def reports(text):
    """r_proc's report lines: [(who, pid, {name: count})]."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(\S+) pid=(\d+) calls (.*)", line)
        if m:
            out.append((m.group(1), int(m.group(2)), {k: int(v) for k, v in re.findall(r"(\S+)=(\d+)", m.group(3))}))
    return out


def the_report(text, who):
    found = [r for r in reports(text) if r[0] == who]
    expect(len(found) == 1, f"the program printed {len(found)} '{who} pid=...' lines, expected 1:\n{text}")
    return found[0]


def pairs_of(p, row):
    return int(np.sum(p.pairs["process"] == row))


def per_lane(p, name, process=0):
    """{lane: calls of NAME} in PROCESS."""
    ev = p.calls(name, process)
    lanes, n = np.unique(ev["thread"].astype(np.int64), return_counts=True)
    return {int(lane): int(c) for lane, c in zip(lanes, n)}


def check_never_returned(p, names, process=0, slack_ns=MS):
    """NAMES each have one call, flagged as never returned, ending at the process's end."""
    span = p.span(process)
    for name in names:
        ev = p.calls(name, process)
        expect_eq(len(ev["flags"]), 1, f"calls of {name} in process {process}")
        expect_eq(int(ev["flags"][0]) & 1, 1, f"never-returned flag of {name} in process {process}")
        end = int(ev["start"][0]) + int(ev["duration"][0])
        expect(span - slack_ns <= end <= span + 1, f"{name} ends at {end} ns, process {process} at {span} ns")


# ---------------------------------------------------------------------------
# Running things


def fill(path):
    """Writes a file into PATH until its filesystem is full."""
    block = b"\0" * 4096
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError:
            pass


def start(t, argv, env):
    argv = [str(x) for x in argv]
    print("$ (in the background)", " ".join(argv), flush=True)
    return subprocess.Popen(argv, env=env, cwd=t.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=no_core_dump)


def wait_for_file(path, child, seconds=60):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if child.poll() is not None:
            out, err = child.communicate()
            raise Failure(f"the program ended (status {child.returncode}) before writing {path}: "
                          f"{err.decode(errors='replace')[-2000:]}")
        expect(time.monotonic() < deadline, f"{path} did not appear in {seconds} s")
        time.sleep(0.01)


def finish(child, what):
    try:
        out, err = child.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        raise Failure(f"{what} did not finish in {RUN_TIMEOUT} s")
    err = err.decode("utf-8", "replace")
    print(f"  exit {child.returncode}")
    if err:
        print("  stderr:", err[-3000:].replace("\n", "\n  | "))
    return child.returncode, out.decode("utf-8", "replace"), err


# ---------------------------------------------------------------------------
# Cases: processes (r_proc)


def table_address(path, name):
    """Where the object at name is in the file: a table linked under two names has one."""
    with h5py.File(path, "r") as f:
        return h5py.h5o.get_info(f[name].id).addr


def case_fork(t):
    """fork, then both sides call a->b->c; the child records only its own calls. Its module
    table, and its empty task table, are the parent's, linked again in its group."""
    p, r = t.profile("fork")
    text = t.text(r)
    _, ppid, parent = the_report(text, "parent")
    _, cpid, child = the_report(text, "child")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 2, "processes (the program and its forked child)")
    expect_eq([col(p, 0, "pid"), col(p, 1, "pid")], [ppid, cpid], "pids of the processes")
    expect_eq((col(p, 1, "parent"), col(p, 1, "ppid")), (0, ppid), "parent and ppid of the child")
    for row in (0, 1):
        expect_eq((col(p, row, "exit_status"), col(p, row, "exec"), col(p, row, "complete")), (0, 0, 1),
                  f"exit_status, exec, complete of process {row}")
        expect_eq(len(p.lanes[row]["tid"]), 1, f"thread lanes of process {row}")
        expect_eq(int(p.lanes[row]["tid"][0]), col(p, row, "pid"), f"tid of the lane of process {row}")
    expect_counts(p, {"a": parent["a"], "b": parent["b"], "c": parent["c"], "parent_side": 1, "main": 1,
                      "child_side": 0}, 0)
    # main and abc were open at the fork: they are the parent's calls, not the child's.
    expect_counts(p, {"a": child["a"], "b": child["b"], "c": child["c"], "child_side": 1, "main": 0,
                      "parent_side": 0}, 1)
    for name, depth in (("child_side", 0), ("abc", 1), ("a", 2), ("b", 3), ("c", 4)):
        expect_eq(sorted(set(int(d) for d in p.calls(name, 1)["depth"])), [depth], f"depths of {name} in the child")
    check_nesting(p)
    expect_eq(list(p.modules[1]["path"]), list(p.modules[0]["path"]), "modules of the child")
    expect(col(p, 0, "executable") in list(p.modules[1]["path"]), "the program is not among the child's modules")
    # merged with a copy of itself, each pair of processes keeps its one table
    shutil.copyfile(p.path, t.path("again.h5"))
    merge = os.path.join(os.path.dirname(t.scope_run), "scope-merge")
    t.run([merge, "-o", t.path("merged.h5"), p.path, t.path("again.h5")], env=t.env()).expect_rc(0)
    for path, child, parent in ((p.path, 1, 0), (t.path("merged.h5"), 1, 0), (t.path("merged.h5"), 3, 2)):
        for table in ("modules", "lanes/tasks"):
            expect_eq(table_address(path, f"process{child}/{table}"), table_address(path, f"process{parent}/{table}"),
                      f"the address of process {child}'s {table} table in {os.path.basename(path)} (its parent's)")
    m = Profile(t.path("merged.h5"))
    for row in range(4):
        expect_eq(list(m.modules[row]["path"]), list(p.modules[row % 2]["path"]), f"modules of merged process {row}")


def expect_leaf(p, row, n, what):
    expect_counts(p, {"leaf": 1, "a": n, "b": n, "c": 2 * n, "main": 1}, row, f" ({what})")


def case_vfork_execl(t):
    """vfork + execl: the exec'd program is profiled; the parent's calls stay its own."""
    p, r = t.profile("vfork-execl")
    text = t.text(r)
    _, ppid, parent = the_report(text, "parent")
    _, lpid, leaf = the_report(text, "leaf")
    check_processes(p)
    expect_eq(col(p, 0, "pid"), ppid, "pid of the first process")
    expect_counts(p, {"a": parent["a"], "main": 1, "leaf": 0, "wait_child": 1}, 0)
    leaves = [row for row in rows_of(p, lpid) if col(p, row, "exec") == 0]
    expect_eq(len(leaves), 1, f"rows of the exec'd program (pid {lpid}, exec 0) in /processes")
    row = leaves[0]
    expect_leaf(p, row, leaf["a"], "the exec'd program")
    expect(0 in parent_chain(p, row), f"the exec'd program (row {row}) does not descend from process 0")
    expect(p.processes["arguments"][row].endswith("leaf 4"), f"arguments of the exec'd program: "
           f"{p.processes['arguments'][row]!r}")
    expect_eq((col(p, row, "exit_status"), col(p, row, "complete")), (0, 1), "exit_status, complete of it")
    for other in rows_of(p, lpid):
        if other != row:
            expect_eq(col(p, other, "exec"), 1, f"exec of the child's image before execl (row {other})")
            expect_eq(pairs_of(p, other), 0, f"pairs of the child's image before execl (row {other})")
    check_nesting(p)


def case_fork_exec(t):
    """fork + execve/execle/execvpe (own envp), execvp/execv: the exec'd program is profiled."""
    t.need_prog()
    for how in ("execve", "execle", "execvpe", "execvp", "execv"):
        p, r = t.profile("fork-exec", how, out=f"{how}.h5")
        text = t.text(r)
        _, lpid, leaf = the_report(text, "leaf")
        check_processes(p)
        if how in ("execve", "execle", "execvpe"):
            expect("leaf env R_PROC_FOO=bar" in text, f"{how}: the program's own environment did not reach the child")
        leaves = [row for row in rows_of(p, lpid) if col(p, row, "exec") == 0]
        expect_eq(len(leaves), 1, f"{how}: rows of the exec'd program (pid {lpid}) in /processes")
        expect_leaf(p, leaves[0], leaf["a"], how)
        expect_eq(leaf["a"], 5, f"{how}: calls of a the exec'd program reports")
        pre = [row for row in rows_of(p, lpid) if col(p, row, "exec") == 1]
        expect_eq(len(pre), 1, f"{how}: rows of the forked child's image that exec'd")
        expect_eq(col(p, leaves[0], "parent"), pre[0], f"{how}: parent of the exec'd program")
        expect_eq(col(p, pre[0], "parent"), 0, f"{how}: parent of the forked child")
        check_nesting(p)


def expect_summary_of_all(p, r):
    """scope-run's summary (read without the processes' lanes) counts every process's calls."""
    calls, regions = int(p.pairs["count"].sum()), len(p.regions["name"])
    line = f"scope-run: {calls} calls of {regions} regions in"
    expect(line in r.stderr, f"no '{line}' in the summary:\n{r.stderr}")


def case_spawn(t):
    """posix_spawn with the program's own envp: the spawned program is profiled, and the
    summary counts the calls of both processes."""
    p, r = t.profile("spawn", options=())
    expect_summary_of_all(p, r)
    text = t.text(r)
    _, lpid, leaf = the_report(text, "leaf")
    expect("leaf env R_PROC_FOO=bar" in text, "the program's own environment did not reach the spawned program")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 2, "processes")
    expect_eq((col(p, 1, "pid"), col(p, 1, "parent")), (lpid, 0), "pid and parent of the spawned program")
    expect_leaf(p, 1, leaf["a"], "the spawned program")
    expect_counts(p, {"a": 1, "leaf": 0}, 0)
    check_nesting(p)


def case_system(t):
    """system(): the shell is a process row without calls, the program it runs is profiled."""
    p, r = t.profile("system")
    text = t.text(r)
    _, lpid, leaf = the_report(text, "leaf")
    check_processes(p)
    leaves = [row for row in rows_of(p, lpid) if col(p, row, "exec") == 0]
    expect_eq(len(leaves), 1, f"rows of the program system() ran (pid {lpid})")
    expect_leaf(p, leaves[0], leaf["a"], "run by system()")
    shells = [row for row in range(len(p.processes["pid"]))
              if os.path.basename(p.processes["executable"][row]) in ("sh", "dash", "bash")]
    expect(shells, f"no row for the shell system() ran; executables: {list(p.processes['executable'])}")
    for row in shells:
        expect_eq(pairs_of(p, row), 0, f"pairs of the shell (row {row})")
        # the shell maps other objects than the program: a module table of its own
        mods = list(p.modules[row]["path"])
        expect(col(p, row, "executable") in mods and col(p, 0, "executable") not in mods,
               f"modules of the shell (row {row}): {mods}")
    chain = parent_chain(p, leaves[0])
    expect(chain[-1] == 0 and any(row in shells for row in chain),
           f"the program's ancestry {chain} does not go through the shell to process 0")
    expect_counts(p, {"a": 1, "leaf": 0}, 0)


def case_batch_merge(t):
    """The run's writer writes the processes of a run (a fork that execs, a system() shell and
    the program it runs) into one file: the same file, column for column, as writing each of
    their arenas alone and merging the parts."""
    t.need_prog()
    env = {"SCOPE_KEEP_ARENA": "1"}
    r = t.scope("-q", "-o", "batched.h5", "--", t.prog, "system", env=env)
    r.expect_rc(0)
    kept = sorted(arenas(t.tmp))
    p = t.load("batched.h5")
    expect_eq(len(kept), len(p.processes["pid"]), f"arenas kept in {t.tmp}, one for each process")
    expect(len(kept) >= 3, f"only {len(kept)} processes: too few to batch")
    parts = t.path("parts")
    os.makedirs(parts)
    for i, arena in enumerate(kept):
        t.run([t.writer, "-o", os.path.join(parts, f"{i}.h5"), arena], env=t.env()).expect_rc(0)
    merge = os.path.join(os.path.dirname(t.scope_run), "scope-merge")
    t.run([merge, "--parts", parts, "-o", t.path("merged.h5")], env=t.env()).expect_rc(0)
    expect_same_profile(t, "merged.h5", "batched.h5", "the batched profile differs from the merged parts "
                        "(second: batched)")
    check_processes(p)


def case_rewrite_same(t):
    """The same arena written twice, seconds apart, makes the same file byte for byte: no
    object of the profile keeps the time it was made."""
    arena = kept_arena(t, "leaf", "3")
    write_arena(t, arena, "one.h5")
    time.sleep(1.1)  # HDF5 keeps an object's times in seconds
    write_arena(t, arena, "two.h5")
    with open(t.path("one.h5"), "rb") as a, open(t.path("two.h5"), "rb") as b:
        one, two = a.read(), b.read()
    expect(one == two, f"one.h5 ({len(one)} bytes) and two.h5 ({len(two)} bytes) differ")
    expect_counts(t.load("one.h5"), {"leaf": 1, "a": 3}, 0)


def case_exec_self(t):
    """A process that execs writes the calls of the image before the exec first."""
    p, r = t.profile("exec-self")
    text = t.text(r)
    _, pid, before = the_report(text, "before-exec")
    _, pid2, leaf = the_report(text, "leaf")
    expect_eq(pid2, pid, "pid after exec")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 2, "processes (the image before the exec and after it)")
    expect_eq([col(p, 0, "pid"), col(p, 1, "pid")], [pid, pid], "pids")
    expect_eq((col(p, 0, "exec"), col(p, 0, "exit_status"), col(p, 1, "exec"), col(p, 1, "parent")),
              (1, -1, 0, 0), "exec and exit_status of row 0, exec and parent of row 1")
    expect_counts(p, {"a": before["a"], "b": before["b"], "c": before["c"], "leaf": 0}, 0)
    check_never_returned(p, ["main"], 0)
    expect_leaf(p, 1, leaf["a"], "after exec")
    expect(p.processes["start"][1] >= p.processes["end"][0], "the image after exec starts before the one before ended")
    check_nesting(p)


def case_exec_fail(t):
    """A failed exec goes on: every call of the process is still recorded, once."""
    p, r = t.profile("exec-fail")
    _, pid, said = the_report(t.text(r), "after-failed-exec")
    check_processes(p)
    rows = rows_of(p, pid)
    expect_eq(rows, list(range(len(p.processes["pid"]))), "rows of the process")
    for name in ("a", "b", "c"):
        expect_eq(sum(p.count(name, row) for row in rows), said[name], f"calls of {name} over its rows")
    expect_eq(col(p, rows[-1], "exit_status"), 0, "exit_status of its last row")


def case_daemon(t):
    """daemon(0, 0): the daemon (cwd /, stdio /dev/null) still writes into the run's output."""
    report = t.path("daemon.txt")
    p, r = t.profile("daemon", report)
    with open(report) as f:
        text = f.read()
    print("  daemon.txt:", text.replace("\n", "\n  | "))
    _, dpid, said = the_report(text, "daemon")
    expect("cwd=/\n" in text, "the daemon's working directory is not /")
    expect("stdout=/dev/null" in text, "the daemon's stdout is not /dev/null")
    check_processes(p)
    rows = rows_of(p, dpid)
    expect_eq(len(rows), 1, f"rows of the daemon (pid {dpid})")
    row = rows[0]
    expect(0 in parent_chain(p, row), "the daemon does not descend from process 0")
    expect_counts(p, {"a": said["a"], "b": said["b"], "c": said["c"], "main": 0}, row)
    expect_counts(p, {"a": 1}, 0)
    expect_eq(col(p, row, "exit_status"), 0, "exit_status of the daemon")
    check_nesting(p)


def case_orphan(t):
    """A child that outlives its parent is waited for and kept."""
    report = t.path("orphan.txt")
    p, r = t.profile("orphan", report)
    expect(os.path.exists(report), "the orphan did not write its report: scope-run did not wait for it")
    with open(report) as f:
        _, opid, said = the_report(f.read(), "orphan")
    check_processes(p)
    rows = rows_of(p, opid)
    expect_eq(len(rows), 1, f"rows of the orphan (pid {opid})")
    expect_counts(p, {"a": said["a"], "c": said["c"]}, rows[0])
    expect(p.processes["end"][rows[0]] > p.processes["end"][0], "the orphan did not end after its parent")


def mapping_under(folder):
    """The pids of the processes that map a file under FOLDER (removed files too)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                if any(folder + "/" in line for line in f):
                    pids.append(int(pid))
        except OSError:
            pass  # gone meanwhile
    return pids


def case_evict(t):
    """The run's writer exits without unmapping its arenas: a process sharing its memory
    outlives it and goes once the writer has, taking every mapping of them with it."""
    p, r = t.profile("fork")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 2, "processes (the program and its forked child)")
    _, _, child = the_report(t.text(r), "child")
    expect_counts(p, {"a": child["a"], "c": child["c"]}, 1)
    deadline = time.monotonic() + 30
    while mapping_under(t.tmp) and time.monotonic() < deadline:
        time.sleep(0.02)
    expect_eq(mapping_under(t.tmp), [], f"processes still mapping the run's arenas in {t.tmp} 30 s after it")


def exit_case(t, mode, status):
    p, r = t.profile(mode, status=status)
    _, pid, said = the_report(t.text(r), "exit")
    expect_eq(len(p.processes["pid"]), 1, "processes")
    expect_eq((col(p, 0, "exit_status"), col(p, 0, "exit_signal")), (status, 0), "exit_status, exit_signal")
    expect_eq((int(p.meta["exit_status"]), int(p.meta["exit_signal"])), (status, 0), "/metadata exit_status, exit_signal")
    expect_counts(p, {"a": said["a"], "b": said["b"], "c": said["c"], "report": 1})
    check_never_returned(p, ["main", "exit_outer", "exit_middle", "exit_inner"])
    expect_eq(int(p.calls("report")["flags"][0]), 0, "flags of report, which returned")
    for name, depth in (("exit_outer", 1), ("exit_middle", 2), ("exit_inner", 3), ("report", 4)):
        expect_eq(int(p.calls(name)["depth"][0]), depth, f"depth of {name}")


def case_exit_nested(t):
    """exit(2) from a nested function: the open calls count, flagged, up to the end."""
    exit_case(t, "exit", 2)


def case_underscore_exit(t):
    """_exit(5) from a nested function."""
    exit_case(t, "_exit", 5)


def case_fork_exit(t):
    """A forked child that _exits deep inside."""
    p, r = t.profile("fork-exit")
    _, cpid, said = the_report(t.text(r), "exit")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 2, "processes")
    expect_eq((col(p, 1, "pid"), col(p, 1, "exit_status"), col(p, 1, "parent")), (cpid, 9, 0),
              "pid, exit_status, parent of the child")
    expect_counts(p, {"a": said["a"], "main": 0}, 1)
    check_never_returned(p, ["exit_outer", "exit_middle", "exit_inner"], 1)
    expect_counts(p, {"a": 1, "exit_outer": 0}, 0)


def case_merge(t):
    """Plain LD_PRELOAD: the run's first process starts a writer for the run, the child hands
    its arena over, and the writer joins its profile to the output: one file, nothing beside it."""
    t.need_prog()
    t.need_scope()
    r = t.run([t.prog, "fork"], env=t.env({"SCOPE_OUTPUT": "out.h5"}, preload=t.preload))
    r.expect_rc(0)
    text = t.text(r)
    _, ppid, parent = the_report(text, "parent")
    _, cpid, child = the_report(text, "child")
    expect_eq([f for f in os.listdir(t.work) if f.endswith(".part.h5")], [], "parts beside out.h5")
    p = t.load("out.h5")
    check_processes(p)
    expect_eq(sorted(int(x) for x in p.processes["pid"]), sorted([ppid, cpid]), "pids in out.h5")
    crow = rows_of(p, cpid)[0]
    expect_eq(col(p, crow, "parent"), rows_of(p, ppid)[0], "parent of the child")
    expect_counts(p, {"a": child["a"], "child_side": 1, "main": 0}, crow)
    expect_counts(p, {"a": parent["a"], "parent_side": 1, "main": 1}, rows_of(p, ppid)[0])
    expect_eq(os.listdir(t.tmp), [], f"left in {t.tmp} (arenas, the run's folder)")
    check_nesting(p)


# ---------------------------------------------------------------------------
# Cases: signals (r_sig)


FATAL = (("segv", signal.SIGSEGV), ("bus", signal.SIGBUS), ("fpe", signal.SIGFPE), ("ill", signal.SIGILL),
         ("abrt", signal.SIGABRT), ("term", signal.SIGTERM), ("int", signal.SIGINT), ("hup", signal.SIGHUP))


def same_stdout(t, r, *args):
    """The program prints under the profiler what it prints alone (its handlers ran as often)."""
    plain = t.plain(*args)
    expect_eq(r.rc if r.rc >= 0 else 128 - r.rc, plain.rc if plain.rc >= 0 else 128 - plain.rc,
              f"`{' '.join(args)}`: status under scope-run and alone")
    expect(r.stdout == plain.stdout, f"`{' '.join(args)}`: stdout under the profiler {t.text(r)!r}, "
           f"alone {t.text(plain)!r}")


def check_crash(p, sig, process=0):
    """/process<N>/crash: the signal, the lane, and a stack that goes fault -> outer -> main."""
    with h5py.File(p.path, "r") as f:
        group = f.get(f"process{process}/crash")
        expect(group is not None, f"/process{process}/crash is missing after signal {int(sig)}")
        expect_eq((int(group.attrs["signal"]), int(group.attrs["lane"])), (int(sig), 0), "crash signal and lane")
        names = list(group["name"].asstr()[()])
        expect_eq(len(names), len(group["address"]), "frames in crash/name and crash/address")
    ours = [n.split(".")[0] for n in names if n.split(".")[0] in ("fault", "outer", "main")]
    expect_eq(ours, ["fault", "outer", "main"], f"the program's frames in the crash stack {names}")


def check_died(p, r, sig, process=0):
    expect_eq(col(p, process, "complete"), 1, "complete (1: the library saved the profile itself; "
              "0: scope-run recovered it from the arena)")
    expect_eq((col(p, process, "exit_status"), col(p, process, "exit_signal")), (-1, int(sig)),
              "exit_status, exit_signal of the process")
    check_never_returned(p, ["main", "outer", "fault"], process)
    check_crash(p, sig, process)


def case_fatal(t):
    """Each fatal signal, left at its default: profile saved, then the signal does what it would."""
    t.need_prog()
    for how, sig in FATAL:
        p, r = t.profile("die", how, out=f"{how}.h5", status=128 + int(sig))
        same_stdout(t, r, "die", how)
        expect(re.search(rf"signal {int(sig)}\b", r.stderr), f"{how}: no line says signal {int(sig)} ended the program")
        check_died(p, r, sig)
        expect_counts(p, {"note": 2, "say": 1, "outer": 1}, 0, f" ({how})")


def case_late_handler(t):
    """A SIGSEGV handler installed in main (after the library's constructor) runs; the profile is saved."""
    p, r = t.profile("late-handler", status=128 + signal.SIGSEGV)
    expect("handler ran for signal 11" in t.text(r), "the program's own handler did not run")
    same_stdout(t, r, "late-handler")
    check_died(p, r, signal.SIGSEGV)
    expect_counts(p, {"on_fatal": 1, "note": 3})


def case_late_handler_preload(t):
    """The same under plain LD_PRELOAD, where nobody recovers the arena: the library must save it."""
    t.need_prog()
    t.need_scope()
    r = t.run([t.prog, "late-handler"], env=t.env({"SCOPE_OUTPUT": "out.h5"}, preload=t.preload))
    r.expect_rc(-signal.SIGSEGV)
    expect("handler ran for signal 11" in t.text(r), "the program's own handler did not run")
    same_stdout(t, r, "late-handler")
    left = arenas(t.tmp)
    expect(os.path.exists(t.path("out.h5")),
           f"no profile at out.h5 after the program's own SIGSEGV handler re-raised the signal"
           f"{' (arena left: ' + left[0] + ')' if left else ''}")
    p = t.load("out.h5")
    check_died(p, r, signal.SIGSEGV)


def case_late_handler_exit(t):
    """A handler installed in main that ends the process with _exit(3)."""
    p, r = t.profile("late-handler-exit", status=3)
    expect("exiting 3" in t.text(r), "the program's own handler did not run")
    same_stdout(t, r, "late-handler-exit")
    expect_eq((col(p, 0, "exit_status"), col(p, 0, "exit_signal"), col(p, 0, "complete")), (3, 0, 1),
              "exit_status, exit_signal, complete")
    check_never_returned(p, ["main", "outer", "fault", "on_fatal_exit"])


def case_late_term(t):
    """A SIGTERM handler installed with signal() in main, which re-raises with the default."""
    p, r = t.profile("late-term", status=128 + signal.SIGTERM)
    expect("handler ran for signal 15" in t.text(r), "the program's own handler did not run")
    same_stdout(t, r, "late-term")
    check_died(p, r, signal.SIGTERM)
    expect_counts(p, {"on_fatal": 1})


def case_early_handler(t):
    """A SIGSEGV handler installed from .preinit_array, before the library's constructor, is chained."""
    p, r = t.profile("early-handler", status=128 + signal.SIGSEGV)
    expect("handler ran for signal 11" in t.text(r), "the program's own handler did not run (not chained)")
    same_stdout(t, r, "early-handler")
    check_died(p, r, signal.SIGSEGV)
    expect(p.count("note") >= 2, "calls of note before the crash")


def case_raise(t):
    """raise() with an instrumented handler: the handler's calls nest in the caller's."""
    p, r = t.profile("raise")
    said = said_calls(t.text(r))
    expect_eq(said["on_signal"], 3, "handler calls the program counted")
    expect_counts(p, {"on_signal": 3, "note": 3, "main": 1})
    expect_eq(sorted(set(int(d) for d in p.calls("on_signal")["depth"])), [1], "depths of on_signal")
    expect_eq(sorted(set(int(d) for d in p.calls("note")["depth"])), [2], "depths of note")
    check_nesting(p)


def case_sigprof(t):
    """setitimer SIGPROF interrupting a busy loop: every handler call the program counted is recorded."""
    p, r = t.profile("sigprof")
    said = said_calls(t.text(r))
    expect_eq(p.count("spin"), said["spin"], "calls of spin (the busy loop)")
    expect_eq(p.count("on_signal"), said["on_signal"], "calls of the SIGPROF handler (signals delivered)")
    expect_eq(p.count("note"), said["on_signal"], "calls of note, one per handler call")
    check_nesting(p)


# ---------------------------------------------------------------------------
# Cases: kill -9 (r_kill)


def kill_run(t, env, preload=None, argv_prefix=()):
    ready = t.path("ready")
    child = start(t, [*argv_prefix, t.prog, ready, KILL_CALLS, 2], env)
    wait_for_file(ready, child)
    with open(ready) as f:
        pid, addr = f.read().split()
    os.kill(int(pid), signal.SIGKILL)
    return child, int(pid), int(addr, 16)


def tick_rows(p, addr):
    """The pairs of tick(): by name, or by address when names were not resolved."""
    names = p.regions["name"]
    rows = [i for i in range(len(p.pairs["region"]))
            if names[p.pairs["region"][i]] in ("tick", f"?+{addr:#x}")]
    expect(rows, f"no region for tick (address {addr:#x}); regions: {sorted(set(names))}")
    return rows


def check_killed_ticks(p, addr):
    lanes = {}
    for row in tick_rows(p, addr):
        ev = p.events_of(row)
        for lane, n in zip(*np.unique(ev["thread"].astype(np.int64), return_counts=True)):
            lanes[int(lane)] = lanes.get(int(lane), 0) + int(n)
    print("  calls of tick per lane:", lanes)
    expect_eq(len(lanes), 3, "lanes that called tick (main and two threads)")
    for lane, n in lanes.items():
        expect(n >= KILL_CALLS, f"lane {lane} holds {n} calls of tick, the program had made at least {KILL_CALLS}")


def case_kill9(t):
    """kill -9 of the program under scope-run: scope-run recovers what the arena holds."""
    t.need_prog()
    t.need_scope()
    child, pid, addr = kill_run(t, t.env(), argv_prefix=(t.scope_run, "-q", "-o", t.path("out.h5"), "--"))
    rc, _, _ = finish(child, "scope-run")
    expect_eq(rc, 128 + signal.SIGKILL, "exit status of scope-run")
    p = t.load("out.h5")
    expect_eq((col(p, 0, "pid"), col(p, 0, "complete")), (pid, 0), "pid and complete of the killed process")
    check_killed_ticks(p, addr)


def case_kill9_detail(t):
    """The recovered profile of a killed run: names, exit signal, times, lanes."""
    t.need_prog()
    t.need_scope()
    child, pid, addr = kill_run(t, t.env(), argv_prefix=(t.scope_run, "-q", "-o", t.path("out.h5"), "--"))
    finish(child, "scope-run")
    p = t.load("out.h5")
    # Every shortcoming at once, as profile_checks.check_layout does.
    problems = []
    names = set(p.regions["name"])
    if not {"tick", "ticker", "loop", "main"} <= names:
        problems.append(f"region names are {sorted(names)}, expected tick, ticker, loop and main among them")
    if len(p.modules[0]["path"]) == 0:
        problems.append("/process0/modules is empty")
    if col(p, 0, "exit_signal") != int(signal.SIGKILL) or int(p.meta["exit_signal"]) != int(signal.SIGKILL):
        problems.append(f"exit_signal is {col(p, 0, 'exit_signal')} in /processes, {int(p.meta['exit_signal'])} "
                        f"in /metadata, expected {int(signal.SIGKILL)}")
    if not 0 < p.meta["wall_seconds"] < RUN_TIMEOUT:
        problems.append(f"/metadata wall_seconds is {p.meta['wall_seconds']}")
    if len(p.lanes[0]["tid"]) != 3:
        problems.append(f"{len(p.lanes[0]['tid'])} thread lanes, expected 3")
    if int(p.meta.get("complete", -1)) != 0:
        problems.append(f"/metadata complete is {p.meta.get('complete')}, expected 0")
    for check_fn in (lambda: check_never_returned(p, ["main", "loop"], slack_ns=100 * MS),
                     lambda: check_starts(p)):
        try:
            check_fn()
        except Failure as e:
            problems.append(str(e))
    expect(not problems, "the recovered profile:\n  " + "\n  ".join(problems))


def case_kill9_preload(t):
    """kill -9 under plain LD_PRELOAD: scope-writer --recover writes the arena left behind."""
    t.need_prog()
    t.need_scope()
    child, pid, addr = kill_run(t, t.env({"SCOPE_OUTPUT": "out.h5"}, preload=t.preload))
    rc, _, _ = finish(child, "the program")
    expect_eq(rc, -signal.SIGKILL, "status of the program")
    expect(not os.path.exists(t.path("out.h5")), "out.h5 exists after kill -9")
    left = arenas(t.tmp)
    expect_eq(len(left), 1, f"arenas left in {t.tmp}")
    seen = arena_and_store(left[0])
    t.run([t.writer, "--recover", "-o", t.path("rec.h5"), left[0]], env=t.env()).expect_rc(0)
    p = t.load("rec.h5")
    expect_eq((int(p.processes["pid"][0]), col(p, 0, "complete")), (pid, 0), "pid and complete")
    check_killed_ticks(p, addr)


# ---------------------------------------------------------------------------
# Cases: longjmp and exceptions (r_jump, r_except)


def case_longjmp(t):
    """Four longjmps through two jmp_bufs and a siglongjmp out of a handler: counts exact."""
    p, r = t.profile()
    text = t.text(r)
    expect("jumps=4" in text, "the program did not make four longjmps")
    said = said_calls(text)
    expect_counts(p, said)
    expect_counts(p, {"main": 1})
    check_no_open(p)


def check_no_open(p):
    expect_eq(int(p.events["flags"].max()), 0, "flags in a run where every call left its frame")


def ordered(p, name):
    ev = p.calls(name)
    order = np.argsort(ev["start"], kind="stable")
    return [(int(ev["start"][i]), int(ev["start"][i]) + int(ev["duration"][i]), int(ev["depth"][i])) for i in order]


def case_longjmp_depth(t):
    """After longjmp the recorded depths are the real ones and left frames end where they were left."""
    p, _ = t.profile()
    want = {"outer_b": [1], "middle_a": [2, 2], "level1": [3] * 4, "level2": [4] * 4, "level3": [5] * 4,
            "probe": [3, 3, 2, 2, 2, 2], "sig_guard": [1, 1], "raiser": [2, 2], "handler": [3, 3]}
    for name, depths in want.items():
        expect_eq([d for _, _, d in ordered(p, name)], depths, f"depths of {name} in call order")
    probes = ordered(p, "probe")
    for k, (_, end, _) in enumerate(ordered(p, "level3")):
        expect(end <= probes[k][0], f"level3's call {k} ends at {end}, after the probe that follows its "
               f"longjmp started ({probes[k][0]})")
    check_nesting(p)


def case_except(t):
    """C++ throw, catch-and-rethrow, a throwing constructor of a function-local static: counts exact."""
    p, r = t.profile()
    text = t.text(r)
    expect("caught=4 widget=42" in text, "the program did not catch four exceptions")
    said = said_calls(text)
    expect_counts(p, {"catcher(int)": said["catcher"], "t1(int)": said["t1"], "t2(int)": said["t2"],
                      "t3(int)": said["t3"], "probe()": said["probe"], "rethrower(int)": said["rethrower"],
                      "Widget::Widget()": said["Widget::Widget()"], "get_widget()": said["get_widget()"],
                      "main": 1})
    check_no_open(p)


def case_except_depth(t):
    """After a catch the recorded depths are the real ones and unwound frames end where they were left."""
    p, _ = t.profile()
    want = {"catcher(int)": [1] * 6, "t1(int)": [2, 3, 2, 2], "t2(int)": [3, 4, 3, 3], "t3(int)": [4, 5, 4, 4],
            "probe()": [2] * 6, "rethrower(int)": [2], "get_widget()": [2, 2, 1], "Widget::Widget()": [3, 3]}
    for name, depths in want.items():
        expect_eq([d for _, _, d in ordered(p, name)], depths, f"depths of {name} in call order")
    catchers = ordered(p, "catcher(int)")
    for s, e, _ in ordered(p, "t3(int)"):
        around = [c for c in catchers if c[0] <= s <= c[1]]
        expect(around and e <= around[0][1], f"a call of t3 [{s}, {e}] does not end inside its catcher")
    check_nesting(p)


def case_swapcontext(t):
    """swapcontext between two stacks: counts exact, the suspended context's open calls stay open."""
    p, r = t.profile()
    said = said_calls(t.text(r))
    expect_counts(p, said)
    body = p.calls("co_body")
    start, end = int(body["start"][0]), int(body["start"][0]) + int(body["duration"][0])
    for k, (s, e, _) in enumerate(ordered(p, "co_leaf")):
        expect(start <= s and e <= end, f"co_leaf's call {k} [{s}, {e}] lies outside its caller co_body [{start}, {end}]")
    expect_eq(sorted(set(d for _, _, d in ordered(p, "co_leaf"))), [int(body["depth"][0]) + 1],
              "depths of co_leaf (co_body's depth + 1)")
    # A coroutine's calls do not nest in the calls that resumed it (it
    # outlives them): the file-wide nesting check does not apply here.


# ---------------------------------------------------------------------------
# Cases: threads (r_thr)


def case_threads_many(t):
    """10,000 short-lived threads, created and joined in batches of 100."""
    p, r = t.profile("many", "10000")
    said = said_calls(t.text(r))
    expect_eq(said["short_thread"], 10000, "threads the program made")
    expect_eq((col(p, 0, "lost"), int(p.meta["lost_records"])), (0, 0), "lost records")
    lanes = p.lanes[0]
    expect_eq(len(lanes["tid"]), 10001, "thread lanes (main + 10,000)")
    expect_eq(set(int(x) for x in lanes["parent"][1:]), {0}, "parents of the thread lanes")
    expect_counts(p, {"short_thread": 10000, "work": said["work"], "mode_many": 1})
    st = per_lane(p, "short_thread")
    expect_eq((len(st), set(st.values()), 0 in st), (10000, {1}, False), "lanes with one short_thread call each")
    hist = np.bincount(list(per_lane(p, "work").values()), minlength=6)
    expect_eq([int(x) for x in hist[1:6]], [2000] * 5, "lanes with 1, 2, 3, 4, 5 calls of work")


def case_threads_many_rss(t):
    """Thread churn does not grow memory: 10,000 threads, at most 100 alive, stay under 256 MiB resident."""
    p, r = t.profile("many", "10000")
    rss = int(p.meta["peak_rss_bytes"])
    print(f"  peak RSS of the program: {rss / 2**20:.1f} MiB")
    expect(rss < 256 << 20, f"the program's peak RSS is {rss / 2**20:.1f} MiB for 10,000 threads of which at most "
           f"100 ran at once (each ended thread keeps its chunk resident?)")


def case_threads_detached(t):
    p, r = t.profile("detached", "8")
    said = said_calls(t.text(r))
    expect_counts(p, {"detached_thread": 8, "work": said["work"]})
    expect_eq(sorted(per_lane(p, "work").values()), [1000] * 8, "calls of work per detached thread's lane")
    expect_eq(len(p.lanes[0]["tid"]), 9, "thread lanes")
    check_nesting(p)


def case_threads_running(t):
    """Threads still running when main returns: their open calls count, flagged, to the end."""
    p, r = t.profile("running", "2")
    expect_eq(len(p.lanes[0]["tid"]), 3, "thread lanes")
    sp = p.calls("spinner")
    expect_eq(len(sp["flags"]), 2, "calls of spinner")
    expect_eq([int(f) & 1 for f in sp["flags"]], [1, 1], "never-returned flags of spinner")
    span = p.span()
    for s, d in zip(sp["start"], sp["duration"]):
        expect(span - 100 * MS <= int(s) + int(d) <= span + 1, f"spinner ends at {int(s) + int(d)}, the process at {span}")
    ticks = per_lane(p, "tick")
    expect_eq(sorted(ticks), sorted(int(x) for x in sp["thread"]), "lanes that called tick")
    for lane, n in ticks.items():
        expect(n >= 1000, f"lane {lane} has {n} calls of tick, the program saw at least 1000")
    tk = p.calls("tick")
    expect(int(np.sum(tk["flags"] & 1)) <= 2, "more than one open tick per thread")
    expect_counts(p, {"main": 1, "mode_running": 1})
    for name in ("main", "mode_running"):
        expect_eq(int(p.calls(name)["flags"][0]), 0, f"flags of {name}, which returned")


def case_threads_ctor(t):
    """A thread created (and joined) by a constructor, before main."""
    p, r = t.profile("ctor", env={"R_THR_CTOR": "1"})
    said = said_calls(t.text(r))
    expect_eq(said.get("ctor_thread"), 1, "the constructor's thread ran")
    lanes = p.lanes[0]
    expect_eq(len(lanes["tid"]), 2, "thread lanes")
    expect_eq(int(lanes["parent"][1]), 0, "parent of the constructor's thread")
    expect_counts(p, {"early_ctor": 1, "ctor_thread": 1, "work": 100, "main": 1})
    expect_eq(per_lane(p, "work"), {1: 100}, "calls of work per lane")
    expect_eq(per_lane(p, "early_ctor"), {0: 1}, "lane of the constructor")
    check_nesting(p)


def case_threads_names(t):
    """pthread_setname_np names are the lanes' names, the main thread's too."""
    p, r = t.profile("names", "3")
    said = {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"thread (\S+) tid=(\d+) calls work=(\d+)", t.text(r))}
    expect_eq(len(said), 3, "threads the program reported")
    lanes = p.lanes[0]
    names = list(lanes["name"])
    expect_eq(names[0], "r-main", "name of the main lane")
    work = per_lane(p, "work")
    for name, (tid, n) in said.items():
        expect(name in names, f"no lane named {name}; lanes: {names}")
        lane = names.index(name)
        expect_eq(int(lanes["tid"][lane]), tid, f"tid of lane {name}")
        expect_eq(work.get(lane, 0), n, f"calls of work on lane {name}")


def case_tsd(t):
    """A TSD destructor run at thread exit is a call (and so are the calls it makes)."""
    p, r = t.profile("tsd", "4")
    said = said_calls(t.text(r))
    expect_eq(said["dtor"], 4, "destructor calls the program counted")
    expect_counts(p, {"dtor": said["dtor"], "in_dtor": said["in_dtor"], "tsd_thread": 4, "work": 4})
    dt = per_lane(p, "dtor")
    expect_eq((sorted(dt.values()), 0 in dt), ([1] * 4, False), "one destructor call on each thread's lane")
    expect_eq(per_lane(p, "in_dtor"), dt, "lanes of in_dtor")
    expect_eq(sorted(set(int(d) for d in p.calls("dtor")["depth"])), [0], "depth of dtor")
    expect_eq(sorted(set(int(d) for d in p.calls("in_dtor")["depth"])), [1], "depth of in_dtor")
    check_nesting(p)


# ---------------------------------------------------------------------------
# Cases: code before main (r_preinit), unloaded libraries (r_dl)


def case_preinit(t):
    """A .preinit_array function runs before every constructor, the library's included: it is counted."""
    t.need_prog()
    if t.asan:
        # ASan's runtime starts in its constructor, after .preinit_array:
        # sanitized code cannot run that early, the library's included.
        raise Skipped("the library cannot start before ASan's runtime does")
    r = t.scope("-q", "-o", "out.h5", "--", t.prog)
    r.expect_rc(0)
    if not os.path.exists(t.path("out.h5")):
        stray = [f for f in os.listdir(t.work) if f.endswith(".h5")]
        raise Failure(f"no profile at out.h5, scope-run exited 0{'; profiles elsewhere: ' + ', '.join(stray) if stray else ''}")
    p = t.load("out.h5")
    said = said_calls(t.text(r))
    expect_counts(p, said)
    expect_eq(per_lane(p, "pre"), {0: 1}, "lane of pre")
    expect_eq(int(p.calls("pre")["depth"][0]), 0, "depth of pre")
    check_nesting(p)


def plugin_paths(t):
    expect(t.plugins, "no --plugins folder given")
    libs = [os.path.join(t.plugins, f"libr_dl{n}.so") for n in (1, 2)]
    for lib in libs:
        expect(os.path.exists(lib), f"{lib} was not built")
    return libs


def dl_case(t, mode):
    libs = plugin_paths(t)
    p, r = t.profile(mode, *libs)
    text = t.text(r)
    print("  " + text.splitlines()[0])
    said = said_calls(text)
    expect_counts(p, said)
    paths = [os.path.realpath(x) for x in p.modules[0]["path"]]
    for lib in libs:
        expect_eq(paths.count(os.path.realpath(lib)), 1, f"rows of {os.path.basename(lib)} in /process0/modules")
    for n, lib in ((1, libs[0]), (2, libs[1])):
        for fn in ("entry", "work"):
            row = p.region_row(f"plugin{n}_{fn}")
            expect_eq(os.path.realpath(p.regions["module"][row]), os.path.realpath(lib), f"module of plugin{n}_{fn}")
            expect_eq(os.path.basename(p.regions["file"][row]), "r_dl.c", f"file of plugin{n}_{fn}")
    check_nesting(p)


def case_dlclose(t):
    """Two libraries dlopen'ed, called and dlclose'd before exit (often at one address): named right."""
    dl_case(t, "close")


def case_dlkeep(t):
    """The same libraries left loaded until exit."""
    dl_case(t, "keep")


# ---------------------------------------------------------------------------
# Cases: descriptors (r_fds)


def fds_case(t, mode):
    own = t.path("own.txt")
    p, r = t.profile(mode, own, FD_CALLS, options=())
    text = t.text(r)
    expect_eq(os.path.getsize(own), 6, f"size of the program's own file {own} (it wrote 6 bytes; "
              f"the program saw: {text.splitlines()[0]!r})")
    said = said_calls(text)
    expect_eq((col(p, 0, "lost"), int(p.meta["lost_records"])), (0, 0), "lost records")
    expect_counts(p, {"work": said["work"], "main": 1})


def case_fds_closeall(t):
    """A program that closes descriptors 3..1023 at start-up, then opens a file of its own."""
    fds_case(t, "closeall")


def case_fds_dup2(t):
    """A program that dup2s /dev/null over descriptors 3..15."""
    fds_case(t, "dup2")


def case_fds_cloexec(t):
    """An exec'd program inherits none of the profiler's descriptors."""
    p, r = t.profile("exec-listfds")
    text = t.text(r)
    pid = int(p.processes["pid"][-1])
    inherited = re.findall(r"inherited fd (\d+) -> (.*)", text)
    foreign = [(fd, target) for fd, target in inherited
               if not re.search(rf"/scope-{pid}-\w+\.arena$", target) or "(deleted)" in target]
    expect_eq(foreign, [], "descriptors the exec'd program inherited (other than its own new arena)")
    expect(len(inherited) <= 1, f"more than one arena open in the exec'd program: {inherited}")


# ---------------------------------------------------------------------------
# Cases: full disks


def copy_arena(t, arena, copy):
    """Copies ARENA to COPY, with the store of the chunks its run's writer took, if any."""
    t.run(["cp", "--sparse=always", arena, copy]).expect_rc(0)
    if os.path.exists(arena + ".store"):
        t.run(["cp", arena + ".store", copy + ".store"]).expect_rc(0)


def case_disk_output(t):
    """The output on a full filesystem: one line, no file under the final name, the data kept where it says."""
    t.need_prog()
    own = t.path("own.txt")
    with small_tmpfs(t, "small") as small:
        fill(small)
        out = os.path.join(small, "out.h5")
        r = t.scope("-q", "-o", out, "--", t.prog, "plain", own, DISK_CALLS)
        r.expect_rc(1)  # no process published: nothing under the final name
        expect(b"calls work=" in r.stdout, "the program's output is missing")
        expect(not os.path.exists(out), f"{out} exists")
        leftovers = [f for f in os.listdir(small) if f != "filler"]
        expect_eq(leftovers, [], f"files left in {small}")
        lines = r.err_lines()
        kept = [path for line in lines for path in re.findall(r"(/\S+\.arena)\b", line) if os.path.exists(path)]
        expect(kept, "no line names an existing arena where the data was kept")
        # Every command the lines suggest writes the profile, on a copy of the arena each.
        hints = sorted(set(re.findall(r"write it with: (scope-writer [^)]*)\)", r.stderr)))
        expect(hints, "no line says how to write the data later")
        for k, hint in enumerate(hints):
            words = hint.split()
            arena = words[-1]
            expect(arena in kept, f"the hint {hint!r} names an arena that does not exist")
            copy = t.path(f"copy{k}.arena")
            copy_arena(t, arena, copy)
            argv = [t.writer] + [t.path(f"later{k}.h5") if w == "FILE" else w for w in words[1:-1]] + [copy]
            t.run(argv, env=t.env()).expect_rc(0)
            p = t.load(f"later{k}.h5")
            expect_counts(p, {"work": DISK_CALLS, "main": 1}, 0, f" (written with {hint!r})")
        expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n  " + "\n  ".join(lines))
        expect(re.search(r"space|full", lines[0], re.I) and small in lines[0],
               f"the line does not say the disk is full where the output goes: {lines[0]!r}")


def case_disk_tmpdir_full(t):
    """SCOPE_TMPDIR on a full filesystem: one line naming it, the program runs as it would."""
    t.need_prog()
    own = t.path("own.txt")
    with small_tmpfs(t, "small") as small:
        fill(small)
        plain = t.plain("plain", own, 10)
        r = t.scope("-q", "-o", t.path("out.h5"), "--", t.prog, "plain", own, 10, env={"SCOPE_TMPDIR": small})
        r.expect_rc(plain.rc)
        expect_eq(r.stdout, plain.stdout, "the program's stdout")
        lines = r.err_lines()
        expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n  " + "\n  ".join(lines))
        expect(small in lines[0], f"the line does not name {small}: {lines[0]!r}")


def case_disk_tmpdir_small(t):
    """SCOPE_TMPDIR on a 4 MiB tmpfs that the recording outgrows: what fits is kept, the rest counted lost."""
    t.need_prog()
    own = t.path("own.txt")
    with small_tmpfs(t, "small") as small:
        r = t.scope("-o", t.path("out.h5"), "--", t.prog, "plain", own, DISK_CALLS, env={"SCOPE_TMPDIR": small})
        r.expect_rc(0)
        p = t.load("out.h5")
        lost = int(p.meta["lost_records"])
        recorded = p.count("work") + p.count("main")
        print(f"  recorded {recorded}, lost {lost}")
        problems = []
        if col(p, 0, "lost") != lost:
            problems.append(f"lost is {col(p, 0, 'lost')} in /processes, {lost} in /metadata lost_records")
        if int(p.meta.get("lost_arena_full", -1)) != lost:
            problems.append(f"/metadata lost_arena_full is {p.meta.get('lost_arena_full')}, lost_records {lost}")
        if lost == 0:
            problems.append("nothing was lost though the records outgrow the tmpfs")
        elif not re.search(rf"\b{lost}\b.*(lost|not recorded)", r.stderr):
            problems.append("no line on stderr says how many calls were lost")
        if recorded + lost != DISK_CALLS + 1:
            problems.append(f"{recorded} calls recorded + {lost} counted lost = {recorded + lost}, the program "
                            f"made {DISK_CALLS + 1}")
        if recorded < 10_000:
            # 4 MiB less the arena's fixed part (about 2.3 MiB) holds some 70,000 records.
            problems.append(f"only {recorded} calls recorded though the tmpfs had room for tens of thousands")
        expect(not problems, "with the arena on a 4 MiB tmpfs:\n  " + "\n  ".join(problems))


def case_disk_tables_full(t):
    """The arena's tables backed as they fill: 2,000 threads on a 4 MiB tmpfs that the first ones fill.

    The first chunks fill the tmpfs; lanes past the first block of lane slots then find no
    room: their threads' calls are counted lost, and no write into an unbacked page kills the
    program (SIGBUS)."""
    own = t.path("own.txt")
    with small_tmpfs(t, "small") as small:
        r = t.scope("--write-at-exit", "-o", t.path("out.h5"), "--", t.prog, "many", "2000",
                    env={"SCOPE_TMPDIR": small, "SCOPE_ARENA_DIR": small})
        r.expect_rc(0)
        said = said_calls(t.text(r))
        expect_eq(said["short_thread"], 2000, "threads the program made")
        p = t.load("out.h5")
        lost = int(p.meta["lost_records"])
        recorded = p.count("short_thread") + p.count("work") + p.count("mode_many") + p.count("main")
        made = said["short_thread"] + said["work"] + 2
        print(f"  recorded {recorded}, lost {lost}, lanes {len(p.lanes[0]['tid'])}")
        expect(lost > 0, "nothing was lost though 2,000 threads' chunks outgrow a 4 MiB tmpfs")
        expect_eq(recorded + lost, made, "calls recorded + calls counted lost")
        expect(len(p.lanes[0]["tid"]) <= 1024, "lanes past the first block of lane slots were recorded "
               "though the tmpfs was full")


def arena_full_case(t, env=None):
    n = 3_000_000  # 72 MB of records, more than a 64 MiB arena holds
    # The writer waits for the end: it frees no chunk for reuse meanwhile.
    p, r = t.profile("plain", t.path("own.txt"), n, options=("-q", "--write-at-exit"),
                     env={"SCOPE_ARENA_MAX": "64M", **(env or {})})
    lost = int(p.meta["lost_records"])
    recorded = p.count("work") + p.count("main")
    print(f"  recorded {recorded}, lost {lost}")
    expect(lost > 0, "nothing was lost though the records outgrow the arena")
    expect_eq((col(p, 0, "lost"), int(p.meta.get("lost_arena_full", -1))), (lost, lost),
              "lost in /processes and lost_arena_full in /metadata")
    expect_eq(recorded + lost, n + 1, "calls recorded + calls counted lost")
    expect(re.search(rf"\b{lost}\b.*(lost|not recorded)", r.stderr), "no line on stderr says how many calls were lost")


def case_arena_full(t):
    """SCOPE_ARENA_MAX reached: the calls that do not fit are counted lost, exactly (and
    scope-run -q says how many, from the run's writer's count of what it published)."""
    arena_full_case(t)


def case_arena_full_miscounted(t):
    """The same, the run's writer saying it published 5 parts with nothing lost where scope-run
    gathered 1: scope-run -q does not take its word, and reads the losses from the profile."""
    wrapper = t.path("writer.py")
    with open(wrapper, "w") as f:
        f.write(f"""#!/usr/bin/python3
import os, sys
args = sys.argv[1:]
at = args.index("--losses-fd")
os.write(int(args[at + 1]), b"5 0\\n")
del args[at:at + 2]
os.execv({t.writer!r}, [{t.writer!r}, *args])
""")
    os.chmod(wrapper, 0o755)
    arena_full_case(t, {"SCOPE_WRITER": wrapper})


# ---------------------------------------------------------------------------
# Cases: long runs, the writer's side (calls spilled to disk while grouped)

def spill_case(t, *args):
    arena = kept_arena(t, *args)
    write_arena(t, arena, "held.h5")
    write_arena(t, arena, "spilled.h5", SPILL)
    n = expect_same_profile(t, "held.h5", "spilled.h5")
    expect(n > 4 * 1024, f"only {n} calls: too few to need several windows")
    return t.load("spilled.h5")


def case_spill_threads(t):
    """Four threads' calls merged in start order through a spill: the same file as grouped in memory."""
    p = spill_case(t)
    expect_eq(p.count("work"), 10000, "calls of work")


def case_spill_sigprof(t):
    """SIGPROF handler calls nested in a busy loop, through a spill: the same file as grouped in memory."""
    spill_case(t, "sigprof")


def full_arena_folder(t, small, n):
    """Runs the program with its arena kept in SMALL, then fills SMALL; returns the arena."""
    env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path("first.h5"), "SCOPE_TMPDIR": small},
                preload=t.preload)
    t.run([t.prog, "plain", t.path("own.txt"), n], env=env).expect_rc(0)
    found = arenas(small)
    expect(len(found) == 1, f"expected one kept arena in {small}, found {found}")
    fill(small)
    return found[0]


def case_spill_fallback(t):
    """The arena's folder is full: the spill goes beside the output, and the profile is whole."""
    n = 200_000
    with small_tmpfs(t, "small", "9m") as small:
        arena = full_arena_folder(t, small, n)
        write_arena(t, arena, "out.h5", SPILL)
    expect_counts(t.load("out.h5"), {"work": n, "main": 1})


def case_spill_disk_full(t):
    """Every folder the spill may use is full: one line naming the cause, no output, the arena kept
    and writable later."""
    n = 200_000
    with small_tmpfs(t, "small", "9m") as small:
        arena = full_arena_folder(t, small, n)
        out = os.path.join(small, "out.h5")
        r = t.run([t.writer, "--keep", "--chunk-size", "512", "-o", out, arena],
                  env=t.env({**SPILL, "TMPDIR": small}))
        r.expect_rc(1)
        expect(not os.path.exists(out), "a profile was published though the spill failed")
        lines = r.err_lines()
        expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n  " + "\n  ".join(lines))
        expect(re.search(r"space", lines[0], re.I) and small in lines[0] and arena in lines[0],
               f"the line does not name the full folder and the kept arena: {lines[0]!r}")
        copy = t.path("copy.arena")
        copy_arena(t, arena, copy)
    write_arena(t, copy, "later.h5", SPILL)
    expect_counts(t.load("later.h5"), {"work": n, "main": 1})


def writer_peak_mib(t, arena, out, window):
    """Writes the arena in windows of WINDOW calls; returns the writer's peak resident memory in MiB,
    as it says itself (a child's ru_maxrss would include the test driver it was forked from)."""
    r = write_arena(t, arena, out, {"SCOPE_WRITER_WINDOW": str(window), "SCOPE_WRITER_TIMES": "1"})
    peaks = [float(m) for m in re.findall(r"peak ([0-9.]+) MiB", r.stderr)]
    expect(peaks, "scope-writer did not report its peak memory (SCOPE_WRITER_TIMES=1)")
    return max(peaks)


def case_writer_memory(t):
    """3 million calls through the writer in windows of 65536: its memory stays that of a window."""
    n = 3_000_000  # 72 MB of records; held in memory they would take 81 MB more
    arena = kept_arena(t, "plain", t.path("own.txt"), n)
    spilled = writer_peak_mib(t, arena, "out.h5", 65536)
    held = writer_peak_mib(t, arena, "held.h5", 4 * n)
    print(f"  writer peak RSS: {spilled:.1f} MiB in windows, {held:.1f} MiB held in memory")
    expect_counts(t.load("out.h5"), {"work": n, "main": 1})
    limit = 40 if not t.asan else 120
    expect(spilled < limit, f"the writer's peak RSS was {spilled:.1f} MiB for {n} calls in windows (limit {limit})")
    expect(held > spilled + 40, f"holding the calls in memory took {held:.1f} MiB, windows {spilled:.1f}: "
           "the windows do not bound anything")


# ---------------------------------------------------------------------------
# Cases: the run's writer consumes a running process's chunks (calls, r_kill)

TAIL_CALLS = 2_000_000  # calls.c: 48 MB of records, 11,765 chunks of 4 KiB
TAIL_KILL_CALLS = 300_000  # r_kill: calls of tick per thread before it may be killed
TAIL_ENV = {"SCOPE_BUFFER_SIZE": "4096"}  # many chunks for few calls


def arena_chunks(path):
    """(chunks handed out, records a chunk holds) of the arena at PATH, from its header."""
    with open(path, "rb") as f:
        head = f.read(104)
    chunk_bytes = struct.unpack_from("<I", head, 16)[0]
    return struct.unpack_from("<Q", head, 96)[0], (chunk_bytes - 24) // 24


def arena_and_store(arena):
    """(chunks the arena handed out, records a chunk holds, bytes of its store)."""
    handed, per_chunk = arena_chunks(arena)
    store = arena + ".store"
    return handed, per_chunk, os.path.getsize(store) if os.path.exists(store) else 0


def expect_recycled(seen, calls, share=0.5):
    """The arena (SEEN: arena_and_store) handed out fewer chunks than SHARE of those CALLS records
    fill: the run's writer took its chunks into the store and they were reused."""
    handed, per_chunk, stored = seen
    need = calls // per_chunk
    print(f"  {handed} chunks handed out for {calls} calls ({need} chunks of records), store {stored} bytes")
    expect(stored > 0, "no store beside the arena")
    expect(handed < need * share, f"the arena handed out {handed} chunks for {need} chunks of records: "
           "the run's writer did not free them while the program ran")


def case_tail_recycle(t):
    """A long process under plain LD_PRELOAD: the run's writer takes its full chunks while it runs and
    frees them for reuse; the profile, from the store and the arena, has every call, none unfinished."""
    t.need_prog()
    t.need_scope()
    env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path("first.h5"), **TAIL_ENV}, preload=t.preload)
    t.run([t.prog, TAIL_CALLS], env=env).expect_rc(0)
    found = arenas(t.tmp)
    expect_eq(len(found), 1, f"kept arenas in {t.tmp}")
    arena = found[0]
    # Loose: the writer shares two cores with the program and whatever else runs.
    expect_recycled(arena_and_store(arena), TAIL_CALLS, share=0.9)
    p = t.load("first.h5")
    expect_counts(p, {"main": 1, "run": 1, "outer": TAIL_CALLS // 100, "leaf": TAIL_CALLS // 100 * 99})
    # A chunk copied while outer was open in it is copied again once outer returned.
    for name in ("outer", "leaf"):
        flags = np.concatenate([p.events_of(row)["flags"] for row in p.pair_rows(name)])
        expect_eq(int(np.count_nonzero(flags & 1)), 0, f"calls of {name} marked never returned")
    d = np.concatenate([p.events_of(row)["duration"] for row in p.pair_rows("outer")])
    expect(int(d.max()) < 10**9, f"a call of outer lasted {int(d.max())} ns")
    # Written again from the kept arena and its store: the same profile.
    t.run([t.writer, "--keep", "-o", t.path("again.h5"), arena], env=t.env()).expect_rc(0)
    expect_same_profile(t, "first.h5", "again.h5")


GROUP_CALLS = 4_000_000  # calls.c: well past 50 ms and a window of 65536 calls, even unsanitized
GROUP_ENV = {**TAIL_ENV, "SCOPE_WRITER_WINDOW": "65536", "SCOPE_WRITER_TIMES": "1"}


def grouped_run(t, out, extra=None, args=(GROUP_CALLS,)):
    """Runs the program with ARGS under plain LD_PRELOAD with its arena kept; returns (arena, calls the
    run's writer said it grouped while the program ran)."""
    env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path(out), **GROUP_ENV, **(extra or {})},
                preload=t.preload)
    r = t.run([t.prog, *args], env=env)
    r.expect_rc(0)
    m = re.search(r"(\d+) calls grouped", r.stderr)
    expect(m, "the run's writer did not say what it grouped while the program ran (SCOPE_WRITER_TIMES=1)")
    found = arenas(t.tmp)
    expect_eq(len(found), 1, f"kept arenas in {t.tmp}")
    return found[0], int(m.group(1))


def case_tail_grouped(t):
    """A process of one thread past a window of calls has them grouped while it runs, chunk by chunk as
    the run's writer takes them, calls open across chunks (main, run, outer) waiting for their ends: the
    profile is the one its kept arena gives when written again at the end, column for column, and the
    one grouped only at the end (SCOPE_WRITER_ALONGSIDE=0)."""
    t.need_prog()
    t.need_scope()
    arena, grouped = grouped_run(t, "first.h5")
    print(f"  {grouped} of {GROUP_CALLS + 2} calls grouped while the program ran")
    expect(0 < grouped <= GROUP_CALLS + 2, f"{grouped} calls grouped while the program ran")
    expect_counts(t.load("first.h5"), {"main": 1, "run": 1, "outer": GROUP_CALLS // 100,
                                      "leaf": GROUP_CALLS // 100 * 99})
    t.run([t.writer, "--keep", "-o", t.path("again.h5"), arena], env=t.env()).expect_rc(0)
    expect_same_profile(t, "first.h5", "again.h5", "the profile grouped while the program ran differs "
                        "from its arena written again")
    os.unlink(arena)
    os.unlink(arena + ".store")
    arena, grouped = grouped_run(t, "end.h5", {"SCOPE_WRITER_ALONGSIDE": "0"})
    expect_eq(grouped, 0, "calls grouped while the program ran with SCOPE_WRITER_ALONGSIDE=0")
    p, q = t.load("first.h5"), t.load("end.h5")
    for name in ("main", "run", "outer", "leaf"):
        expect_eq(p.count(name), q.count(name), f"calls of {name}, grouped alongside and at the end")


def case_tail_grouped_threads(t):
    """Threads that start after the run's writer began grouping main's calls: it stops, and the
    process is grouped at its end, the same profile as its arena written again."""
    t.need_prog()
    t.need_scope()
    arena, _ = grouped_run(t, "first.h5", args=(GROUP_CALLS, 2))
    t.run([t.writer, "--keep", "-o", t.path("again.h5"), arena], env=t.env()).expect_rc(0)
    expect_same_profile(t, "first.h5", "again.h5", "the profile of a run whose grouping stopped differs "
                        "from its arena written again")
    expect_counts(t.load("first.h5"), {"main": 1, "thread_run": 2, "run": 3,
                                      "outer": GROUP_CALLS // 100 * 12 // 10})


GROUP_LANES_ARGS = ("3", "100000")  # r_lanes: 4 lanes of 100,000 rounds, 3.2 million calls


def case_tail_grouped_lanes(t):
    """A process of four threads whose calls interleave has them grouped while it runs, its lanes
    merged in start order as the run's writer takes their chunks, and with their bytes
    (SCOPE_LIBCALLS=io): the profile is the one its kept arena gives when written again at the end,
    column for column, every call counted."""
    t.need_prog()
    t.need_scope()
    for label, extra in (("plain", {}), ("io", {"SCOPE_LIBCALLS": "io"})):
        env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path(f"{label}.h5"), **GROUP_ENV, **extra},
                    preload=t.preload)
        r = t.run([t.prog, *GROUP_LANES_ARGS], env=env)
        r.expect_rc(0)
        m = re.search(r"(\d+) calls grouped", r.stderr)
        expect(m, f"{label}: the run's writer did not say what it grouped while the program ran")
        print(f"  {label}: {m.group(1)} calls grouped while the program ran")
        expect(int(m.group(1)) > 0, f"{label}: no call of the four lanes grouped while the program ran")
        found = arenas(t.tmp)
        expect_eq(len(found), 1, f"{label}: kept arenas in {t.tmp}")
        p = t.load(f"{label}.h5")
        expect_counts(p, said_calls(t.text(r)), what=f" ({label})")
        expect_eq(len(set(int(x) for x in p.events["thread"])), 4, f"{label}: lanes with calls")
        if label == "io":
            expect(int(p.events["bytes_sent"].sum()) > 0, "io: no bytes sent in the profile")
        t.run([t.writer, "--keep", "-o", t.path(f"{label}-again.h5"), found[0]], env=t.env()).expect_rc(0)
        expect_same_profile(t, f"{label}.h5", f"{label}-again.h5", f"{label}: the profile grouped while "
                            "the program ran differs from its arena written again")
        os.unlink(found[0])
        if os.path.exists(found[0] + ".store"):
            os.unlink(found[0] + ".store")


def case_tail_grouped_kill9(t):
    """kill -9 of a one-thread program whose calls the run's writer was grouping while it ran: the
    writer lets it go, and --recover writes every tick made before READY from the store and the arena."""
    t.need_prog()
    t.need_scope()
    # 0.3 s after READY: past 50 ms and a window of calls, so the grouping runs at the kill
    p, _, addr = killed_and_recovered(t, [TAIL_KILL_CALLS], GROUP_ENV)
    n = sum(int(p.pairs["count"][row]) for row in tick_rows(p, addr))
    print(f"  {n} calls of tick recovered")
    expect(n >= TAIL_KILL_CALLS, f"{n} calls of tick recovered, at least {TAIL_KILL_CALLS} were made")


LANES_ARGS = ("3", "20000")  # r_lanes: 4 lanes of 20,000 rounds, 1.28 million calls


def case_lanes_merged(t):
    """Four threads whose calls interleave (one recursion and the same leaves and writes on every
    lane) are grouped in one pass over their lanes merged in start order: each pair, its statistics
    and its calls column for column, is what the two passes give (SCOPE_WRITER_MERGE=0: lane after
    lane, then merged), with every call counted, bytes moved, filtered calls summed, samples, and
    counters read per call."""
    t.need_prog()
    t.need_scope()
    variants = (("plain", {}), ("io", {"SCOPE_LIBCALLS": "io"}),
                ("filtered", {"SCOPE_MIN_DURATION": "150ns"}), ("sampled", {"SCOPE_SAMPLE": "2000"}),
                ("counters", {"SCOPE_COUNTERS": "perf::TASK-CLOCK,perf::PAGE-FAULTS"}))
    for label, extra in variants:
        env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path(f"{label}.h5"), **TAIL_ENV, **extra},
                    preload=t.preload)
        r = t.run([t.prog, *LANES_ARGS], env=env)
        r.expect_rc(0)
        found = arenas(t.tmp)
        expect_eq(len(found), 1, f"{label}: kept arenas in {t.tmp}")
        t.run([t.writer, "--keep", "-o", t.path(f"{label}-two.h5"), found[0]],
              env=t.env({"SCOPE_WRITER_MERGE": "0"})).expect_rc(0)
        n = expect_same_pairs(t, f"{label}.h5", f"{label}-two.h5",
                              f"{label}: grouped in one merged pass and in two passes")
        print(f"  {label}: {n} calls the same in both")
        p = t.load(f"{label}.h5")
        expect_eq(len(set(int(x) for x in p.events["thread"])), 4, f"{label}: lanes with calls")
        if label != "filtered":
            expect_counts(p, said_calls(t.text(r)), what=f" ({label})")
        if label == "counters":
            expect("counter1" in p.events, "counters: no /events/counter1 column")
        os.unlink(found[0])
        if os.path.exists(found[0] + ".store"):
            os.unlink(found[0] + ".store")


WIDE_THREADS = 2200  # r_wide: 2,201 lanes x 2,048 regions' outermost calls, past the 32 MiB kept


def case_lanes_wide(t):
    """A process of 2,201 lanes whose threads each call a function past main's 1,024: too many regions
    a lane to read the lanes merged, so the writer starts over reading them one after another (it
    says so under SCOPE_WRITER_TIMES=1), and every call is in the profile."""
    t.need_prog()
    t.need_scope()
    env = t.env({"SCOPE_OUTPUT": t.path("wide.h5"), "SCOPE_WRITER_TIMES": "1"}, preload=t.preload)
    r = t.run([t.prog, str(WIDE_THREADS)], env=env)
    r.expect_rc(0)
    expect(re.search(r"\d+ lanes hold too many regions to be read merged", r.stderr),
           "the writer did not say it read the lanes one after another")
    p = t.load("wide.h5")
    expect_counts(p, said_calls(t.text(r)))
    expect_eq(len(set(int(x) for x in p.events["thread"])), WIDE_THREADS + 1, "lanes with calls")


STORE_CHUNKS_AT = 17440  # offset of store_chunks in the arena header (include/scope/arena.h)
CHUNK_MAGIC = 0x4b4e4843504f4353


def case_tail_copies(t):
    """A chunk in both the store and the arena (a writer stopped between copying it and freeing it) is
    read once, from the arena: written again, the profile is the same, column for column."""
    t.need_prog()
    t.need_scope()
    env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path("first.h5"), **TAIL_ENV}, preload=t.preload)
    t.run([t.prog, TAIL_CALLS], env=env).expect_rc(0)
    found = arenas(t.tmp)
    expect_eq(len(found), 1, f"kept arenas in {t.tmp}")
    arena, store = found[0], found[0] + ".store"
    expect(os.path.exists(store), f"no store beside {arena}")
    with open(arena, "rb") as f:
        head = f.read(STORE_CHUNKS_AT + 8)
    chunk_bytes = struct.unpack_from("<I", head, 16)[0]
    chunks_off, = struct.unpack_from("<Q", head, 80)
    handed, = struct.unpack_from("<Q", head, 96)
    stored, = struct.unpack_from("<Q", head, STORE_CHUNKS_AT)
    # Every chunk still in the arena, copied to the store as a killed writer would have left it.
    copies = []
    with open(arena, "rb") as f:
        for i in range(handed):
            f.seek(chunks_off + i * chunk_bytes)
            chunk = f.read(chunk_bytes)
            if struct.unpack_from("<Q", chunk, 8)[0] == CHUNK_MAGIC:
                copies.append(chunk)
    expect(copies, "no chunk left in the arena")
    with open(store, "r+b") as f:
        f.truncate(stored * chunk_bytes)
        f.seek(stored * chunk_bytes)
        for chunk in copies:
            f.write(chunk)
    with open(arena, "r+b") as f:
        f.seek(STORE_CHUNKS_AT)
        f.write(struct.pack("<Q", stored + len(copies)))
    print(f"  {len(copies)} chunks of the arena copied to the store after its {stored}")
    t.run([t.writer, "--keep", "-o", t.path("again.h5"), arena], env=t.env()).expect_rc(0)
    expect_same_profile(t, "first.h5", "again.h5")


def killed_and_recovered(t, args, env):
    """Runs r_kill READY ARGS, kills it with SIGKILL 0.3 s after READY (the run's writer takes what
    was sealed meanwhile), and writes its one arena with --recover; returns (profile, the arena as
    arena_and_store found it before, address of tick)."""
    ready = t.path("ready")
    child = start(t, [t.prog, ready, *args], t.env({"SCOPE_OUTPUT": "out.h5", **env}, preload=t.preload))
    wait_for_file(ready, child)
    time.sleep(0.3)
    with open(ready) as f:
        pid, addr = f.read().split()
    os.kill(int(pid), signal.SIGKILL)
    finish(child, "the program")
    left = arenas(t.tmp)
    expect_eq(len(left), 1, f"arenas left in {t.tmp}")
    seen = arena_and_store(left[0])
    t.run([t.writer, "--recover", "-o", t.path("rec.h5"), left[0]], env=t.env()).expect_rc(0)
    p = t.load("rec.h5")
    expect_eq(int(p.processes["pid"][0]), int(pid), "pid")
    return p, seen, int(addr, 16)


def case_tail_kill9(t):
    """kill -9 of a program whose chunks the run's writer was taking: --recover writes the calls of the
    store and of the arena, every tick made before READY on every lane."""
    t.need_prog()
    t.need_scope()
    p, seen, addr = killed_and_recovered(t, [TAIL_KILL_CALLS, 2], TAIL_ENV)
    lanes = {}
    for row in tick_rows(p, addr):
        ev = p.events_of(row)
        for lane, n in zip(*np.unique(ev["thread"].astype(np.int64), return_counts=True)):
            lanes[int(lane)] = lanes.get(int(lane), 0) + int(n)
    print("  calls of tick per lane:", lanes)
    expect_eq(len(lanes), 3, "lanes that called tick")
    for lane, n in lanes.items():
        expect(n >= TAIL_KILL_CALLS, f"lane {lane} holds {n} calls of tick, at least {TAIL_KILL_CALLS} were made")
    # Three threads that never stop, on cores the writer shares: it keeps up with part of them,
    # how much depends on the machine's load; that some chunks were reused is what is checked.
    expect_recycled(seen, sum(lanes.values()), share=1.0)


def case_tail_writer_killed(t):
    """The run's writer is killed (SIGKILL) after it took chunks of the running program: the program
    goes on, its own writer writes the store and the arena, and every call is in the profile."""
    t.need_prog()
    seen = t.path("stores.txt")
    wrapper = t.path("writer.sh")
    with open(wrapper, "w") as f:
        f.write(f"""#!/bin/sh
case " $* " in
*" --run-fd "*)
\t"{t.writer}" "$@" &
\tw=$!
\t# until a store holds a few chunks, then the writer dies with it
\tfor i in $(seq 400); do
\t\tfind "{t.tmp}" -name '*.store' -size +400k | grep -q . && break
\t\tsleep 0.01
\tdone
\tfind "{t.tmp}" -name '*.store' -size +400k > "{seen}"
\tkill -9 $w
\texit 0 ;;
esac
exec "{t.writer}" "$@"
""")
    os.chmod(wrapper, 0o755)
    n = 2 * TAIL_CALLS
    p, r = t.profile(n, env={"SCOPE_WRITER": wrapper, **TAIL_ENV})
    with open(seen) as f:
        stores = f.read().split()
    expect(stores, "the run's writer had filled no store when it was killed")
    expect_counts(p, {"main": 1, "run": 1, "outer": n // 100, "leaf": n // 100 * 99})


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized")
    ap.add_argument("--plugins", help="folder of libr_dl1.so and libr_dl2.so, for the dl cases")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
