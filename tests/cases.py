#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks that the tests CTest registers and the cases of the drivers they run agree.

Usage: cases.py --ctest PATH --build DIR [--driver PROGRAM]... [--self-test]

The case lists live twice: in each driver (its case_* functions, which
`DRIVER --list` prints) and in the tests/*.cmake lists that register one
test per case. This reads the registered tests and their command lines
from `ctest --show-only=json-v1`. A test runs a driver when its command is
a tests/*.py script under an interpreter, or a PROGRAM given with
--driver; the driver's first argument, when it is not an option, is the
case. Two things fail: a test that names a case its driver does not have,
and a case of a driver that no test runs (the union over all the
driver's tests, so MPICH's subset of the Open MPI cases is fine). A
driver that no test runs (tsan.py outside a SCOPE_TSAN build, mpi.py
without MPI, fuzz.py without libFuzzer) is named and passed over.

--self-test runs the comparison on the registered tests with the tests of
one case taken away and one test of a case that does not exist added, and
passes only when exactly those two disagreements are reported.

Exit status: 0 agree, 1 disagree.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))


def registered(ctest, build):
    """[(test name, command)] of every test registered in BUILD."""
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True, text=True, check=True).stdout
    return [(t["name"], t.get("command", [])) for t in json.loads(out)["tests"]]


def driver_of(command, programs):
    """(driver, argv that lists its cases, the case the command names or None), or None."""
    if len(command) >= 2 and command[1].endswith(".py"):
        script = os.path.realpath(command[1])
        if script.startswith(HERE + os.sep) and script != os.path.realpath(__file__):
            rest = command[2:]
            return script, [command[0], script, "--list"], rest[0] if rest and not rest[0].startswith("-") else None
    if command and os.path.realpath(command[0]) in programs:
        program = os.path.realpath(command[0])
        rest = command[1:]
        return program, [program, "--list"], rest[0] if rest and not rest[0].startswith("-") else None
    return None


def listed(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"cases.py: `{' '.join(argv)}` exited {r.returncode}: {r.stderr.strip()}")
    return set(r.stdout.split())


def disagreements(tests, programs):
    """The lines saying where TESTS and their drivers' cases disagree, and the drivers no test runs."""
    runs = {}  # driver -> {case: [test names]}
    lister = {}
    for name, command in tests:
        found = driver_of(command, programs)
        if found:
            driver, argv, case = found
            lister[driver] = argv
            runs.setdefault(driver, {}).setdefault(case, []).append(name)
    problems = []
    for driver in sorted(runs):
        have = listed(lister[driver])
        short = os.path.relpath(driver, HERE) if driver.startswith(HERE) else os.path.basename(driver)
        for case, names in sorted(runs[driver].items(), key=lambda kv: str(kv[0])):
            if case is None and have:
                problems.append(f"{short}: test {names[0]} names no case (it has {len(have)})")
            elif case is not None and case not in have:
                problems.append(f"{short}: test {names[0]} runs case {case}, which {short} does not have")
        for case in sorted(have - set(runs[driver])):
            problems.append(f"{short}: case {case} is run by no test")
    idle = sorted(os.path.relpath(p, HERE) for p in drivers() | programs if p not in runs)
    return problems, idle


def drivers():
    """The scripts in tests/ and its folders that run as programs, this one aside."""
    found = set()
    for folder, _, files in os.walk(HERE):
        for f in files:
            path = os.path.join(folder, f)
            if f.endswith(".py") and path != os.path.realpath(__file__):
                with open(path) as text:
                    if 'if __name__ == "__main__":' in text.read():
                        found.add(path)
    return found


def self_test(tests, programs):
    """Takes away the tests of check.py's first case and adds one of a case that does not exist."""
    check = os.path.join(HERE, "check.py")
    ours = [(name, command) for name, command in tests if (driver_of(command, programs) or (None,))[0] == check]
    if not ours:
        raise SystemExit("cases.py: no test runs check.py, there is nothing to take away")
    name, command = ours[0]
    gone = driver_of(command, programs)[2]
    kept = [(n, c) for n, c in tests if not (driver_of(c, programs) or (None,))[0] == check
            or driver_of(c, programs)[2] != gone]
    bogus = command[:2] + ["no-such-case"] + command[3:]
    problems, _ = disagreements(kept + [("bogus-test", bogus)], programs)
    want = ["check.py: test bogus-test runs case no-such-case, which check.py does not have",
            f"check.py: case {gone} is run by no test"]
    for line in problems:
        print(line)
    if sorted(problems) != sorted(want):
        print(f"FAIL cases-disagree: expected exactly {want}")
        return 1
    print("PASS cases-disagree: both disagreements were found")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ctest", required=True, help="the ctest program")
    ap.add_argument("--build", required=True, help="the build folder whose tests are compared")
    ap.add_argument("--driver", action="append", default=[], help="a program that is a driver (takes --list)")
    ap.add_argument("--self-test", action="store_true", help="check that disagreements are found")
    a = ap.parse_args()
    tests = registered(a.ctest, a.build)
    programs = {os.path.realpath(p) for p in a.driver}
    if a.self_test:
        return self_test(tests, programs)
    problems, idle = disagreements(tests, programs)
    if idle:
        print("no test runs (not built here):", ", ".join(idle))
    for line in problems:
        print(line)
    if problems:
        print(f"FAIL cases-agree: {len(problems)} disagreement(s) between the tests and the drivers' cases")
        return 1
    print(f"PASS cases-agree: {len(tests)} tests, every case of every driver run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
