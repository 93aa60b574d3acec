#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case about C library calls recorded as regions (SCOPE_LIBCALLS) on one test program.

Usage: libcalls.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR
                   [--sanitized LIBASAN]

tests/progs/libcalls.c makes every call lib/libcalls.h lists, each from a
caller of its own, a known number of times with known bytes; PATTERN below
is that table. Each call must be a region of its kind under its caller (the
call one level up on its thread that spans it), with exact counts and
bytes, and the caller's self time must no longer hold the waits. The
library's own calls and the writer's are never recorded. One function per
case (case_own_calls is CASE "own-calls").
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import MS, Test, arenas, cases_of, expect, expect_eq, parser, run_case  # noqa: E402
from profile_checks import check_nesting, expect_counts  # noqa: E402

LIBCALLS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "libcalls.h")

# (caller, region): (calls, bytes sent, bytes received), on any thread of the first process.
PATTERN = {
    ("early", "write"): (1, 12, 0),  # a constructor
    ("sleeper_thread", "nanosleep"): (3, 0, 0),  # on 3 threads
    ("joiner", "pthread_join"): (3, 0, 0),
    ("napper", "nanosleep"): (5, 0, 0),
    ("piper", "write"): (1, 5000, 0),
    ("piper", "read"): (1, 0, 3000),
    ("piper", "close"): (2, 0, 0),
    ("signalled", "read"): (1, 0, 64),  # what the signal handler wrote
    ("on_usr1", "write"): (1, 64, 0),  # the signal handler
    ("signalled", "pthread_join"): (1, 0, 0),
    ("signalled", "close"): (2, 0, 0),
    ("sleeper", "sleep"): (1, 0, 0),
    ("sleeper", "usleep"): (1, 0, 0),
    ("sleeper", "clock_nanosleep"): (1, 0, 0),
    ("children", "wait"): (1, 0, 0),
    ("children", "waitpid"): (1, 0, 0),
    ("children", "wait4"): (1, 0, 0),
    ("pollers", "poll"): (1, 0, 0),
    ("pollers", "ppoll"): (1, 0, 0),
    ("pollers", "select"): (1, 0, 0),
    ("pollers", "pselect"): (1, 0, 0),
    ("pollers", "epoll_wait"): (1, 0, 0),
    ("pollers", "epoll_pwait"): (1, 0, 0),
    ("pollers", "close"): (1, 0, 0),
    # A lock or semaphore is a region only when the call had to wait:
    # free_locks takes four free ones and has none.
    ("contend_mutex", "pthread_mutex_lock"): (1, 0, 0),
    ("contend_rdlock", "pthread_rwlock_rdlock"): (1, 0, 0),
    ("contend_wrlock", "pthread_rwlock_wrlock"): (1, 0, 0),
    ("contend_sem", "sem_wait"): (1, 0, 0),
    ("contend_barrier", "pthread_barrier_wait"): (1, 0, 0),
    ("post_barrier", "pthread_barrier_wait"): (1, 0, 0),  # on the helper's thread
    ("contend_cond", "pthread_cond_wait"): (1, 0, 0),
    ("timed_wait", "pthread_cond_timedwait"): (1, 0, 0),
    ("contend_timedrdlock", "pthread_rwlock_timedrdlock"): (1, 0, 0),
    ("contend_timedwrlock", "pthread_rwlock_timedwrlock"): (1, 0, 0),
    ("contend_clockrdlock", "pthread_rwlock_clockrdlock"): (1, 0, 0),
    ("contend_clockwrlock", "pthread_rwlock_clockwrlock"): (1, 0, 0),
    ("timed_out_wrlock", "pthread_rwlock_clockwrlock"): (1, 0, 0),  # a wait that timed out
    ("timed_out_wrlock", "pthread_join"): (1, 0, 0),
    ("join_helper", "pthread_join"): (11, 0, 0),
    # a read that waits 50 ms for the helper's write
    ("slow_reader", "read"): (1, 0, 100),
    ("slow_reader", "close"): (2, 0, 0),
    ("files", "open"): (1, 0, 0),
    ("files", "pwrite"): (1, 1000, 0),
    ("files", "fsync"): (1, 0, 0),
    ("files", "fdatasync"): (1, 0, 0),
    ("files", "pread"): (1, 0, 600),
    ("files", "writev"): (1, 120, 0),
    ("files", "readv"): (1, 0, 70),
    ("files", "close"): (2, 0, 0),
    ("files", "openat"): (1, 0, 0),
    ("files", "read"): (1, 0, 200),
    ("streams", "fwrite"): (1, 300, 0),  # 30 items of 10 bytes
    ("streams", "fread"): (1, 0, 200),  # 20 items of 10 bytes
}

MANY = 300_000  # libcalls many N: N calls under one caller, the library changing chunks meanwhile
OWN = {("early", "write"): (1, 12, 0), ("many", "write"): (1, 1, 0), ("many", "pread"): (1, 0, 0)}


def listed():
    """{region name: kind} from lib/libcalls.h."""
    with open(LIBCALLS_H) as f:
        text = f.read()
    out = {}
    for kind, macro in (("wait", "SCOPE_LIBCALLS_WAIT"), ("io", "SCOPE_LIBCALLS_IO")):
        body = re.search(r"#define " + macro + r"\(X\)(.*?)\n\n", text, re.S)
        expect(body, f"no {macro} list in {LIBCALLS_H}")
        for name in re.findall(r"X\((\w+)\)", body.group(1)):
            out[name] = kind
    return out


KINDS = listed()


def expected(kinds):
    """PATTERN's rows of the KINDS recorded."""
    return {key: v for key, v in PATTERN.items() if KINDS[key[1]] in kinds}


# ---------------------------------------------------------------------------
# What the file says


def libcalls_by_caller(p, process=0):
    """{(caller, region): [calls, sent, received]} of every region of kind wait or io in PROCESS.

    The caller is the call one level up on the same thread whose span holds
    the call; each region's kind and module are checked on the way.
    """
    names, kinds, modules = p.regions["name"], p.regions["kind"], p.regions["module"]
    calls = []  # (lane, start, end, depth, region, sent, received)
    for row in range(len(p.pairs["region"])):
        if int(p.pairs["process"][row]) != process:
            continue
        region = int(p.pairs["region"][row])
        ev = p.events_of(row)
        n = len(ev["start"])
        sent = ev.get("bytes_sent", np.zeros(n))
        received = ev.get("bytes_received", np.zeros(n))
        for k in range(n):
            start = int(ev["start"][k])
            calls.append((int(ev["thread"][k]), start, start + int(ev["duration"][k]), int(ev["depth"][k]), region,
                          int(sent[k]), int(received[k])))
    calls.sort(key=lambda c: (c[0], c[1], c[3]))
    out, stack, lane = {}, [], None
    for c in calls:
        if c[0] != lane:
            stack, lane = [], c[0]
        while stack and (stack[-1][3] >= c[3] or stack[-1][2] < c[1]):
            stack.pop()
        name, kind = names[c[4]], kinds[c[4]]
        if kind in ("wait", "io"):
            expect_eq(kind, KINDS.get(name), f"kind of region {name!r}")
            expect_eq(os.path.basename(modules[c[4]]), "libscope_preload.so", f"module of region {name!r}")
            expect(stack and stack[-1][3] == c[3] - 1,
                   f"a call of {name!r} at depth {c[3]} on lane {c[0]} has no caller one level up around it")
            key = (names[stack[-1][4]], name)
            t = out.setdefault(key, [0, 0, 0])
            t[0] += 1
            t[1] += c[5]
            t[2] += c[6]
        else:
            expect(KINDS.get(name) is None, f"region {name!r} has kind {kind!r}, expected {KINDS.get(name)!r}")
        stack.append(c)
    return {k: tuple(v) for k, v in out.items()}


def expect_libcalls(p, want, what):
    got = libcalls_by_caller(p)
    missing = {k: v for k, v in want.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if k not in want}
    expect(not missing and not extra,
           f"library calls by caller ({what}): (calls, sent, received) expected but not found "
           f"{dict(sorted(missing.items()))}, found {dict(sorted((k, got.get(k)) for k in missing))}, "
           f"not expected {dict(sorted(extra.items()))}")


def pair_stats(p, name, process=0):
    """(total_ns, self_ns) of region NAME in PROCESS."""
    rows = p.pair_rows(name, process)
    expect_eq(len(rows), 1, f"pairs of {name!r}")
    return int(p.pairs["total_ns"][rows[0]]), int(p.pairs["self_ns"][rows[0]])


def expect_waits_outside(p, what):
    """napper's five sleeps and joiner's joins are their callees' time, not their own. joiner's
    self time is that of starting 3 threads, which a loaded machine can make a few ms; their
    20 ms sleeps, which it waits for, are not in it."""
    total, self_ns = pair_stats(p, "napper")
    expect(total >= 50 * MS and self_ns < 5 * MS,
           f"napper ({what}): total {total / MS:.2f} ms, self {self_ns / MS:.2f} ms; expected a total of "
           f"at least 50 ms and self under 5 ms")
    total, self_ns = pair_stats(p, "joiner")
    expect(total >= 20 * MS and self_ns <= total - 10 * MS,
           f"joiner ({what}): total {total / MS:.2f} ms, self {self_ns / MS:.2f} ms; expected a total of "
           f"at least 20 ms, at least 10 ms of it not self time")


def expect_read_outside(p, what):
    """slow_reader's read waits at least 50 ms for the helper's write (it writes 50 ms after it
    saw the main thread asleep in the read): the read's time, not slow_reader's own. Its self
    time is a pipe, a thread started and two closes, under 5 ms on a loaded machine."""
    total, self_ns = pair_stats(p, "slow_reader")
    read = calls_under(p, "slow_reader", "read")
    expect(len(read) == 1 and read[0] >= 50 * MS,
           f"slow_reader's read ({what}): {[d / MS for d in read]} ms, expected one of at least 50 ms")
    expect(total >= 50 * MS and self_ns < 5 * MS,
           f"slow_reader ({what}): total {total / MS:.2f} ms, self {self_ns / MS:.2f} ms; expected a total "
           f"of at least 50 ms and self under 5 ms")


def calls_under(p, caller, name, process=0):
    """The durations of NAME's calls made directly from CALLER's (one level down, inside them)."""
    outer = p.calls(caller, process)
    inner = p.calls(name, process)
    spans = [(int(th), int(s), int(s) + int(d), int(dp))
             for th, s, d, dp in zip(outer["thread"], outer["start"], outer["duration"], outer["depth"])]
    return [int(d) for th, s, d, dp in zip(inner["thread"], inner["start"], inner["duration"], inner["depth"])
            if any(th == t and a <= s and s + d <= b and dp == depth + 1 for t, a, b, depth in spans)]


def expect_ran(t, r):
    out = t.text(r)
    expect(out.startswith("preinit\nconstructor\n") and out.rstrip().endswith("libcalls ok"),
           f"the program's output, expected preinit, constructor, ..., libcalls ok:\n{out}")


def run_pattern(t, kinds, options=(), env=None, prog=None):
    """Profiles the pattern with KINDS recorded; checks every library call, returns the Profile."""
    r = t.scope("-q", *options, "-o", "out.h5", "--", prog or t.prog, env=env)
    r.expect_rc(0)
    expect_ran(t, r)
    p = t.load("out.h5")
    expect_eq(len(p.pids), 4, "processes (the program and the 3 children it waited for)")
    expect_libcalls(p, expected(kinds), f"recording {'+'.join(kinds) or 'none'}")
    check_nesting(p)
    return p, r


# ---------------------------------------------------------------------------
# Cases


def case_pattern(t):
    """--libcalls all: every call lib/libcalls.h lists, a region of its kind under its caller, counts and
    bytes exact; the callers' self time holds no waits."""
    t.need_prog()
    called = {region for _, region in PATTERN}
    expect_eq(sorted(set(KINDS) - called), [], "listed calls the pattern does not make")
    p, _ = run_pattern(t, ("wait", "io"), options=("--libcalls", "all"))
    expect_waits_outside(p, "--libcalls all")
    expect_read_outside(p, "--libcalls all")
    expect_counts(p, {"sleeper_thread": 3, "early": 1, "on_usr1": 1, "free_locks": 1})


def case_default(t):
    """No setting records the waits and no I/O; a bad SCOPE_LIBCALLS says so in one line and does the same."""
    t.need_prog()
    p, r = run_pattern(t, ("wait",))
    expect_waits_outside(p, "by default")
    expect_eq(r.err_lines(), [], "stderr")
    p, r = run_pattern(t, ("wait",), env={"SCOPE_LIBCALLS": "bogus"})
    lines = r.err_lines()
    expect(len(lines) == 1 and "SCOPE_LIBCALLS='bogus' is not none, wait, io or all; using wait" in lines[0],
           f"expected one line about SCOPE_LIBCALLS, got {lines}")


def case_none(t):
    """--libcalls none records no library call; the waits are the callers' self time again."""
    t.need_prog()
    p, _ = run_pattern(t, (), options=("--libcalls", "none"))
    total, self_ns = pair_stats(p, "napper")
    expect(self_ns >= 50 * MS, f"napper's self time without library calls is {self_ns / MS:.2f} ms, expected >= 50")
    total, self_ns = pair_stats(p, "slow_reader")
    expect(self_ns >= 50 * MS,
           f"slow_reader's self time without library calls is {self_ns / MS:.2f} ms, expected >= 50")
    expect(not any(k in ("wait", "io") for k in p.regions["kind"]), "regions of kind wait or io")


def case_io(t):
    """SCOPE_LIBCALLS=io records the I/O calls and no waits."""
    t.need_prog()
    p, _ = run_pattern(t, ("io",), env={"SCOPE_LIBCALLS": "io"})
    expect_read_outside(p, "SCOPE_LIBCALLS=io")


def case_fortify(t):
    """Built with -D_FORTIFY_SOURCE=2, the program calls __read_chk, __pread_chk, __fread_chk,
    __poll_chk and __ppoll_chk: each is recorded under the name of the call it checks."""
    t.need_prog()
    r = subprocess.run(["nm", "-D", "--undefined-only", t.prog], capture_output=True, text=True)
    expect(r.returncode == 0, f"nm -D {t.prog}: {r.stderr.strip()}")
    imported = set(re.findall(r"\bU (\S+?)(?:@\S*)?$", r.stdout, re.M))
    for fn in ("__read_chk", "__pread_chk", "__fread_chk", "__poll_chk", "__ppoll_chk"):
        expect(fn in imported, f"{t.prog} does not call {fn}; it calls {sorted(imported)}")
    run_pattern(t, ("wait", "io"), options=("--libcalls", "all"))


def case_cli(t):
    """scope-run --libcalls takes none, wait, io or all; anything else is a usage error in one line."""
    t.need_prog()
    r = t.scope("-q", "--libcalls", "waits", "-o", "out.h5", "--", t.prog)
    r.expect_rc(2)
    expect_eq(r.err_lines(), ["scope-run: unknown --libcalls 'waits': use none, wait, io or all "
                              "(see scope-run --help)"], "stderr")
    expect(not os.path.exists(t.path("out.h5")), "a profile was written")
    r = t.scope("--help")
    expect("--libcalls KINDS" in t.text(r), "--help does not mention --libcalls")


def case_own_calls(t):
    """The library's own calls (its reads of the arena while it moves from chunk to chunk, starting and
    waiting for the writer) and the writer's are never recorded: under scope-run and plain LD_PRELOAD."""
    t.need_prog()
    r = t.scope("-q", "--libcalls", "all", "-o", "run.h5", "--", t.prog, "many", MANY)
    r.expect_rc(0)
    for out, r in (("run.h5", r), ("plain.h5", t.run([t.prog, "many", MANY], env=t.env(
            {"SCOPE_LIBCALLS": "all", "SCOPE_OUTPUT": t.path("plain.h5")}, preload=t.preload)))):
        r.expect_rc(0)
        expect_eq(t.text(r), "preinit\nconstructor\nlibcalls ok\n", f"output ({out})")
        p = t.load(out)
        expect_eq(len(p.pids), 1, f"processes ({out})")
        expect_counts(p, {"many": 1, "leaf": MANY}, what=f" ({out})")
        expect_libcalls(p, OWN, out)
        expect_eq(arenas(t.tmp), [], f"arenas left ({out})")


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
