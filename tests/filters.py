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

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

NAMES = ("main", "run", "outer", "mid", "leaf", "skip", "slow")


def stored(p, process=0):
    """name -> sorted list of the depths of its stored calls (events), for every region."""
    out = {}
    for row in range(len(p.pairs["region"])):
        if int(p.pairs["process"][row]) != process:
            continue
        name = p.names[p.pairs["region"][row]]
        out.setdefault(name, []).extend(int(d) for d in p.events_of(row)["depth"])
    return {name: sorted(depths) for name, depths in out.items()}


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


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "progs", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
