# SPDX-License-Identifier: MIT
"""What every test driver shares: failing, running commands, reading profiles, cases and arguments.

A driver defines its cases as functions (case_foo_bar is CASE "foo-bar"),
parses its arguments with parser(), and hands the case to run_case(),
which prints PASS, FAIL or SKIP with the reason and returns the exit
status CTest reads: 0 pass, 1 fail, 77 skip.
"""

import argparse
import contextlib
import os
import re
import resource
import shutil
import subprocess
import time

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
    """One finished command: rc, stdout (bytes, or str from a ToolTest), stderr (str);
    seconds and peak RSS (KiB, sampled) where the command was timed."""

    def __init__(self, argv, proc, seconds=None, maxrss=None):
        self.argv = argv
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode("utf-8", "replace")
        self.seconds = seconds
        self.maxrss = maxrss

    def expect_rc(self, rc):
        expect(self.rc == rc, f"`{' '.join(self.argv)}` exited {self.rc}, expected {rc}\n{self.stderr[-2000:]}")
        return self

    def err_lines(self):
        return [line for line in self.stderr.splitlines() if line.strip()]


# Settings from outside that would change what scope or the programs do.
FOREIGN_ENV = ("SCOPE_", "OMP_", "ASAN_", "UBSAN_", "DEBUGINFOD_")


def clean_env(tmp):
    """This process's environment without FOREIGN_ENV and LD_PRELOAD, arenas in TMP."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_ENV) and k != "LD_PRELOAD"}
    env["SCOPE_TMPDIR"] = tmp
    env["LC_ALL"] = "C"
    return env


def memory_dir():
    """/dev/shm when the library would choose it for the arena (a writable folder with 1 GiB
    free), else None."""
    usable = os.access("/dev/shm", os.W_OK | os.X_OK) and shutil.disk_usage("/dev/shm").free >= 1 << 30
    return "/dev/shm" if usable else None


class Workdir:
    """A test's own folder (emptied first, arenas in its tmp/) and scope's built programs."""

    def __init__(self, a):
        self.bin = a.bin
        self.src = getattr(a, "src", None)
        self.progs = getattr(a, "progs", None)
        self.rdcheck = getattr(a, "rdcheck", None)
        self.asan = getattr(a, "sanitized", None)
        self.work = os.path.abspath(a.workdir)
        self.tmp = os.path.join(self.work, "tmp")  # SCOPE_TMPDIR: the arenas
        self.scope_run = os.path.join(a.bin, "scope-run")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.tmp)

    def path(self, *parts):
        return os.path.join(self.work, *parts)


class Test(Workdir):
    """One test program (--prog) run under scope: the drivers of the library and the writer."""

    def __init__(self, a):
        super().__init__(a)
        prog = getattr(a, "prog", None)
        self.prog = os.path.abspath(prog) if prog else None
        self.name = os.path.basename(self.prog) if self.prog else None
        plugins = getattr(a, "plugins", None)
        self.plugins = os.path.abspath(plugins) if plugins else None
        self.writer = os.path.join(a.bin, "scope-writer")
        lib = getattr(a, "lib", None)
        self.preload = os.path.join(lib, "libscope_preload.so") if lib else None

    def need_prog(self):
        expect(self.prog and os.access(self.prog, os.X_OK), f"test program {self.prog} was not built")

    def need_scope(self):
        for exe in (self.scope_run, self.writer, self.preload):
            expect(exe and os.path.exists(exe), f"{exe} was not built")

    def env(self, extra=None, preload=None):
        """A clean environment: no SCOPE_* or LD_PRELOAD from outside, arenas in our tmp."""
        env = clean_env(self.tmp)
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

    def text(self, r):
        """What the program printed, as text."""
        return r.stdout.decode("utf-8", "replace")

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


def vm_hwm(pid):
    """The peak RSS of a running process, KiB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class ToolTest(Workdir):
    """scope's tools on profiles of the built test programs (--progs): the drivers of the tools.

    Commands' output is text; sample_rss times each command and samples its
    peak RSS; no command leaves a core file.
    """

    timeout = 300  # seconds for one command
    sample_rss = False

    def __init__(self, a):
        super().__init__(a)
        self.report = os.path.join(a.bin, "scope-report")
        self.symbolize = os.path.join(a.bin, "scope-symbolize")
        no_core_dump()  # inherited by every command run

    def env(self, preload_asan=False, **extra):
        """A clean environment with EXTRA; preload_asan: the ASan runtime in LD_PRELOAD, for
        scope-run's programs under the sanitized library."""
        env = clean_env(self.tmp)
        env.update(extra)
        if self.asan:
            env["ASAN_OPTIONS"] = "detect_leaks=0"
            if preload_asan:
                env["LD_PRELOAD"] = self.asan
        return env

    def run(self, argv, env=None, quiet=False, timeout=None):
        argv = [str(x) for x in argv]
        timeout = timeout or self.timeout
        print("$", " ".join(argv), flush=True)
        if self.sample_rss:
            r = self.sampled(argv, env or self.env(), timeout)
            print(f"  exit {r.rc} in {r.seconds:.2f} s")
        else:
            try:
                proc = subprocess.run(argv, env=env or self.env(), cwd=self.work, stdin=subprocess.DEVNULL,
                                      capture_output=True, text=True, errors="replace", timeout=timeout)
            except subprocess.TimeoutExpired:
                raise Failure(f"`{' '.join(argv)}` did not finish in {timeout} s")
            r = Run(argv, proc)
            print(f"  exit {r.rc}")
        if r.stderr:
            print("  stderr:", r.stderr[-3000:].rstrip().replace("\n", "\n  | "))
        if r.stdout and not quiet:
            print("  stdout:", r.stdout[:1500].rstrip().replace("\n", "\n  | "))
        return r

    def sampled(self, argv, env, timeout):
        """Runs ARGV to its end, sampling its peak RSS (VmHWM) every 10 ms while it runs.

        wait4's ru_maxrss would not do: it counts the memory of this
        interpreter, which the child is a copy of until it execs.
        """
        with open(self.path(".stdout"), "w+b") as out, open(self.path(".stderr"), "w+b") as err:
            start = time.monotonic()
            proc = subprocess.Popen(argv, env=env, cwd=self.work, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            peak = 0
            while True:
                pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                peak = max(peak, vm_hwm(proc.pid))
                if time.monotonic() - start > timeout:
                    proc.kill()
                    os.wait4(proc.pid, 0)
                    raise Failure(f"`{' '.join(argv)}` did not finish in {timeout} s")
                time.sleep(0.01)
            seconds = time.monotonic() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            proc.stdout, proc.stderr = out.read().decode("utf-8", "replace"), err.read()
        os.unlink(self.path(".stdout"))
        os.unlink(self.path(".stderr"))
        return Run(argv, proc, seconds, peak)

    def prog(self, name):
        """A built test program, by name (fib-gcc-O2)."""
        path = os.path.join(self.progs, name)
        expect(os.access(path, os.X_OK), f"test program {path} was not built")
        return path


def arenas(folder):
    """The arena files under FOLDER."""
    return [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files if f.endswith(".arena")]


SPILL = {"SCOPE_WRITER_WINDOW": "1024"}  # with --chunk-size 512: a window of 1024 calls


def kept_arena(t, *args):
    """Runs the program under plain LD_PRELOAD and keeps its arena; returns the arena's path."""
    t.need_prog()
    t.need_scope()
    env = t.env({"SCOPE_KEEP_ARENA": "1", "SCOPE_OUTPUT": t.path("first.h5")}, preload=t.preload)
    t.run([t.prog, *args], env=env)
    found = arenas(t.tmp)
    expect(len(found) == 1, f"expected one kept arena in {t.tmp}, found {found}")
    return found[0]


def write_arena(t, arena, out, env=None, rc=0):
    r = t.run([t.writer, "--keep", "--chunk-size", "512", "-o", t.path(out), arena], env=t.env(env))
    r.expect_rc(rc)
    return r


@contextlib.contextmanager
def small_tmpfs(t, name, size="4m"):
    """A tmpfs of SIZE mounted at WORK/NAME for the block; skips where mounting is not allowed."""
    path = t.path(name)
    os.makedirs(path)
    if not shutil.which("mount"):
        raise Skipped("no mount command to mount a tmpfs to fill")
    r = t.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path])
    if r.rc != 0:
        raise Skipped(f"cannot mount a tmpfs to fill ({r.stderr.strip() or 'exit ' + str(r.rc)}); needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


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
            # task lane k of process i is row k - 1; {} in files without the table
            self.tasks = [read_columns(f, f"process{i}/lanes/tasks") if f"process{i}/lanes/tasks" in f
                          else {} for i in range(nproc)]
            self.modules = [read_columns(f, f"process{i}/modules") for i in range(nproc)]
        self.names = list(self.regions["name"])
        self.pids = self.processes["pid"]
        self.proc_start = self.processes["start"].astype(np.uint64)
        self.proc_end = self.processes["end"].astype(np.uint64)

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

    def timeline(self, process=None):
        """Every call: (process, region name, lane, start ns since the origin, duration, depth)."""
        origin = int(self.proc_start.min())
        out = []
        for row in range(len(self.pairs["region"])):
            proc = int(self.pairs["process"][row])
            if process is not None and proc != process:
                continue
            first, count = int(self.pairs["first"][row]), int(self.pairs["count"][row])
            starts = np.cumsum(self.events["start_delta"][first:first + count].astype(np.uint64), dtype=np.uint64)
            base = int(self.proc_start[proc]) - origin
            name = self.names[self.pairs["region"][row]]
            for k in range(count):
                out.append((proc, name, int(self.events["thread"][first + k]), base + int(starts[k]),
                            int(self.events["duration"][first + k]), int(self.events["depth"][first + k])))
        return out

    def region_totals(self):
        """name -> [calls, total_ns, self_ns, min_ns, max_ns] summed over the pairs."""
        out = {}
        for row in range(len(self.pairs["region"])):
            name = self.names[self.pairs["region"][row]]
            t = out.setdefault(name, [0, 0, 0, None, 0])
            t[0] += int(self.pairs["count"][row])
            t[1] += int(self.pairs["total_ns"][row])
            t[2] += int(self.pairs["self_ns"][row])
            mn = int(self.pairs["min_ns"][row])
            t[3] = mn if t[3] is None else min(t[3], mn)
            t[4] = max(t[4], int(self.pairs["max_ns"][row]))
        return out


def check_no_own_calls(p):
    """No region is the library's own code: every profile Test.load reads is checked. The calls it
    wraps are its regions: MPI's (kind mpi, named MPI_*) and the C library's (kind wait or io)."""
    for name, module, kind in zip(p.regions["name"], p.regions["module"], p.regions["kind"]):
        expect(not name.startswith(("scope_", "__cyg_profile")), f"the library's own function {name!r} is a region")
        wrapped = (kind == "mpi" and name.startswith("MPI_")) or kind in ("wait", "io")
        expect(os.path.basename(module) != "libscope_preload.so" or wrapped,
               f"region {name!r} (kind {kind}) lies in libscope_preload.so")


# ---------------------------------------------------------------------------
# Cases and arguments


def cases_of(namespace):
    """A driver's cases, by name: its case_foo_bar functions as foo-bar."""
    return {name[len("case_"):].replace("_", "-"): fn for name, fn in namespace.items() if name.startswith("case_")}


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


# The options drivers share: help, and whether CTest always passes it.
OPTIONS = {
    "prog": ("the test program", False),
    "bin": ("directory of scope's programs (scope-run, scope-writer, the tools)", True),
    "lib": ("directory of libscope_preload.so", False),
    "src": ("tests/progs, the test programs' sources", False),
    "progs": ("directory of the built test programs", False),
    "rdcheck": ("the program that runs the reader's rd_check on files", False),
    "workdir": ("a directory of this test's own; emptied first", True),
    "sanitized": ("scope is built with ASan: preload this runtime first", False),
}


class ListCases(argparse.Action):
    """--list: prints the driver's cases, one a line, and exits (tests/cases.py reads them)."""

    def __init__(self, option_strings, dest, cases=None, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)
        self.cases = cases or {}

    def __call__(self, parser, namespace, values, option_string=None):
        for name in sorted(self.cases):
            print(name)
        parser.exit()


def parser(doc, cases, *options, **helps):
    """The arguments of a driver: CASE (one of CASES; none when CASES is None),
    --list, and the OPTIONS named, each with its help from OPTIONS or HELPS."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--list", action=ListCases, cases=cases, help="print the cases, one a line, and exit")
    if cases is not None:
        ap.add_argument("case", choices=sorted(cases))
    for name in options:
        text, required = OPTIONS[name]
        ap.add_argument("--" + name, required=required, help=helps.get(name, text),
                        metavar="LIBASAN" if name == "sanitized" else None)
    return ap
