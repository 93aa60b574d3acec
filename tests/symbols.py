#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one test case of the symbolizer on programs of thousands of generated functions.

Usage: symbols.py CASE --bin DIR --progs DIR --symcheck PATH --bench PATH --workdir DIR [--sanitized LIBASAN]

One function per case (case_scale is CASE "scale"). The programs come from
bench/symbols (--bench): units of N instrumented functions, global and
static, some in a header, each called i % 3 + 1 times, whose names, files
and lines are known. symcheck (tests/symcheck.c) compares the symbolizer
with libdw's own calls address by address, and times its lookups.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import importlib.machinery
import importlib.util
import math
import os
import resource
import shutil
import subprocess
import sys

from harness import Failure, Skipped, ToolTest, cases_of, expect, expect_eq, parser, run_case

SMALL, BIG = 2000, 20000  # functions in one unit, for the cost's growth
MAX_GROWTH = 30  # CPU time of BIG over SMALL: linear is about 10, quadratic 100


def load_bench(path):
    """bench/symbols as a module: its generator and profile checks."""
    loader = importlib.machinery.SourceFileLoader("bench_symbols", path)
    spec = importlib.util.spec_from_loader("bench_symbols", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


class Test(ToolTest):
    timeout = 600  # seconds for one command

    def __init__(self, a):
        super().__init__(a)
        self.symcheck = a.symcheck
        self.bench = load_bench(a.bench)

    def program(self, name, units, per_unit, cc="gcc", cflags=("-O0",)):
        """A generated program in the work folder; its (name, file, line, calls) list."""
        if not shutil.which(cc):
            raise Skipped(f"{cc} is not installed")
        print(f"building {name}: {units} unit(s) of {per_unit} functions, {cc} {' '.join(cflags)}", flush=True)
        try:
            exe = self.bench.build(self.path(name), units, per_unit, cc, list(cflags))
        except subprocess.CalledProcessError as e:
            raise Failure(f"compiling {name} failed: {e}")
        return exe, self.bench.functions(units, per_unit)

    def profile(self, exe, out, symbolize=True):
        env = self.env(**({} if symbolize else {"SCOPE_SYMBOLIZE": "0"}))
        if self.asan:
            env["LD_PRELOAD"] = self.asan
        path = self.path(out)
        r = self.run([os.path.join(self.bin, "scope-run"), "-q", "-o", path, "--", exe], env=env, quiet=True)
        expect(r.rc == 0 and os.path.isfile(path), f"scope-run {exe} exited {r.rc}, no {path}")
        return path

    def timed(self, exe, repeat, limit=0.0):
        """symcheck time: (least CPU seconds of a round, or None past limit; {name: (file, line)})."""
        argv = [self.symcheck, "time", "--repeat", repeat]
        if limit:
            argv += ["--limit", f"{limit:.6f}"]
        r = self.run(argv + [exe], quiet=True)
        first = r.stdout.split("\n", 1)[0].split()
        if r.rc == 3 and first[:1] == ["cpu-limit"]:
            return None, {}
        expect(r.rc == 0 and first[:1] == ["cpu"], f"symcheck time {exe} exited {r.rc}")
        found = {}
        for line in r.stdout.splitlines()[1:]:
            _, name, file, num = line.split("\t")
            found[name] = (os.path.basename(file), int(num))
        return float(first[1]), found


def expect_names(found, funcs, what):
    """Every generated function's name, file and line exactly."""
    for name, file, line, _ in funcs:
        expect_eq(found.get(name), (file, line), f"{what}: {name}")


# ---------------------------------------------------------------------------


def case_same(t):
    """The symbolizer's answers are libdw's own, address by address: the test
    programs, the preload library, the C library, and generated programs
    (gcc -O0 with .debug_aranges; clang -O2, DWARF 5 without them)."""
    files = sorted(os.path.join(t.progs, p) for p in os.listdir(t.progs)
                   if p.endswith(("-O0", "-O2", "-static")) and os.access(os.path.join(t.progs, p), os.X_OK))
    expect(len(files) >= 8, f"test programs in {t.progs}: {len(files)}")
    lib = os.path.join(os.path.dirname(os.path.abspath(t.bin)), "lib", "libscope_preload.so")
    files += [lib] if os.path.isfile(lib) else []
    with open("/proc/self/maps") as maps:
        libc = {line.split()[-1] for line in maps if "/libc.so" in line}
    files += sorted(libc)
    r = t.run([t.symcheck, "same", "--sweep", "20000", *files])
    expect_eq(r.rc, 0, "symcheck same on the test programs (differences above)")
    gen = [t.program("gcc2000", 1, 2000)[0]]
    if shutil.which("clang"):
        gen.append(t.program("clang3x300", 3, 300, "clang", ("-O2",))[0])
    r = t.run([t.symcheck, "same", "--sweep", "4000", *gen])
    expect_eq(r.rc, 0, "symcheck same on the generated programs (differences above)")


def symbolize_cpu(t, profile, runs, limit=0):
    """scope-symbolize on copies of profile: the least CPU seconds of runs
    (user + system, from wait4), None when one passed limit seconds (it is
    stopped by RLIMIT_CPU, whole seconds); the last copy, named."""
    best, out = None, profile[:-3] + "-named.h5"
    argv = [os.path.join(t.bin, "scope-symbolize"), "-q", out]
    cap = max(1, math.ceil(limit)) if limit else resource.RLIM_INFINITY

    def cpu_cap():
        resource.setrlimit(resource.RLIMIT_CPU, (cap, resource.RLIM_INFINITY))

    for _ in range(runs):
        shutil.copyfile(profile, out)
        print("$", " ".join(argv), flush=True)
        proc = subprocess.Popen(argv, env=t.env(), stdin=subprocess.DEVNULL, preexec_fn=cpu_cap)
        _, status, ru = os.wait4(proc.pid, 0)
        cpu = ru.ru_utime + ru.ru_stime
        if limit and (os.WIFSIGNALED(status) or cpu > limit):
            return None, out
        expect_eq(os.waitstatus_to_exitcode(status), 0, "scope-symbolize exit status")
        best = cpu if best is None else min(best, cpu)
    return best, out


def case_profile(t):
    """Profiles of generated programs hold every call made and every
    function's name, file and line: named by the writer, and by
    scope-symbolize from profiles written with SCOPE_SYMBOLIZE=0, whose CPU
    time for BIG functions in one unit is at most MAX_GROWTH times that
    for SMALL (linear, with the file's fixed costs, is about 5 times)."""
    progs = [("gcc", 1, SMALL, ("-O0",)), ("gcc", 1, BIG, ("-O0",)), ("clang", 3, 300, ("-O2",))]
    cpu = {}
    for cc, units, per_unit, cflags in progs:
        if not shutil.which(cc):
            print(f"{cc} is not installed: its program is left out")
            continue
        name = f"{cc}{units}x{per_unit}"
        exe, funcs = t.program(name, units, per_unit, cc, cflags)
        if per_unit != BIG:  # the writer would take minutes on the old quadratic code
            named = t.profile(exe, f"{name}.h5")
            expect_eq(t.bench.problem(named, funcs, True), None, f"{name}: the profile named by the writer")
        bare = t.profile(exe, f"{name}-bare.h5", symbolize=False)
        expect_eq(t.bench.problem(bare, funcs, False), None, f"{name}: the profile with SCOPE_SYMBOLIZE=0")
        limit = MAX_GROWTH * cpu[SMALL] if per_unit == BIG else 0
        cpu[per_unit], named = symbolize_cpu(t, bare, 3 if per_unit == SMALL else 2, limit)
        print(f"scope-symbolize CPU time, {name}: "
              f"{'over ' + format(limit, '.3f') if cpu[per_unit] is None else format(cpu[per_unit], '.3f')} s")
        expect(cpu[per_unit] is not None, f"scope-symbolize on {BIG} functions in one unit took more than "
               f"{MAX_GROWTH} times the CPU time of {SMALL} ({limit:.3f} s against {cpu[SMALL]:.3f} s)")
        expect_eq(t.bench.problem(named, funcs, True), None, f"{name}: the profile named by scope-symbolize")
    print(f"scope-symbolize: growth x{cpu[BIG] / cpu[SMALL]:.1f} for x{BIG // SMALL} functions "
          f"(bound x{MAX_GROWTH})")


def case_scale(t):
    """Naming the functions of one unit costs time linear in their number:
    BIG functions take at most MAX_GROWTH times the CPU time of SMALL (10
    times as many), where a cost quadratic in them takes 100 times. CPU
    times, the least of several rounds, so a busy machine moves them little;
    a round of BIG is stopped once it passes the bound. Every function's
    name, file and line is checked too."""
    small, small_funcs = t.program("small", 1, SMALL)
    big, big_funcs = t.program("big", 1, BIG)
    t_small, found = t.timed(small, 5)
    expect_names(found, small_funcs, f"{SMALL} functions")
    expect(t_small > 0, f"CPU time of {SMALL} lookups: {t_small}")
    limit = MAX_GROWTH * t_small
    t_big, found = t.timed(big, 2, limit)
    for _ in range(2):  # another chance when something else had the machine
        if t_big is not None:
            break
        t_big, found = t.timed(big, 2, limit)
    print(f"CPU time: {SMALL} functions {t_small:.4f} s, {BIG} functions "
          f"{'over ' + format(limit, '.4f') if t_big is None else format(t_big, '.4f')} s")
    expect(t_big is not None, f"{BIG} functions in one unit took more than {MAX_GROWTH} times the CPU time "
           f"of {SMALL} ({limit:.3f} s against {t_small:.4f} s): the cost is not linear")
    expect_names(found, big_funcs, f"{BIG} functions")
    print(f"growth x{t_big / t_small:.1f} for x{BIG // SMALL} functions (bound x{MAX_GROWTH})")


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "bin", "progs", "workdir", "sanitized")
    ap.add_argument("--symcheck", required=True, help="tests/symcheck.c, built")
    ap.add_argument("--bench", required=True, help="bench/symbols, whose generator is used")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
