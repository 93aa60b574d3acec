#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Crash stacks: what a fatal signal's /process<N>/crash holds, and what the library maps.

Usage: crash.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

The program is tests/progs/r_crash.c: it faults at the bottom of a
recursion of known depth (on the main thread or another, with small or
4 KiB frames, with process_vm_readv refused by a seccomp filter), or
prints its own /proc/self/maps. The library saves the crashing thread's
registers and the top of its stack; the writer unwinds them. Each case
compares the names of the stack's frames, innermost first, exactly.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import shutil
import signal
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

SEGV = int(signal.SIGSEGV)
STACK_BYTES = 64 << 10  # the most stack the library keeps (SCOPE_CRASH_STACK_BYTES)


def crash_stack(t, *args, lane=0):
    """Profiles r_crash ARGS, which dies of SIGSEGV; returns its crash stack's names,
    innermost first, without the suffixes of compiler clones (dive.part.0)."""
    p, r = t.profile(*args, status=128 + SEGV)
    with h5py.File(p.path, "r") as f:
        group = f.get("process0/crash")
        expect(group is not None, "/process0/crash is missing")
        expect_eq((int(group.attrs["signal"]), int(group.attrs["lane"])), (SEGV, lane), "crash signal and lane")
        names = [n.split(".")[0] for n in group["name"].asstr()[()]]
        expect_eq(len(group["address"]), len(names), "frames in crash/address and crash/name")
    print(f"  crash stack of {' '.join(map(str, args))}: {names}")
    return names


def expect_frames(names, want, what):
    expect_eq(names[:len(want)], want, f"the innermost {len(want)} frames of the crash stack ({what}): {names}")


def case_deep(t):
    """A fault 50 and 200 frames deep on the main thread: every frame named, innermost first."""
    for depth in (50, 200):
        names = crash_stack(t, "deep", depth)
        expect_frames(names, ["crash_here"] + ["dive"] * depth + ["main"], f"deep {depth}")


def case_thread(t):
    """The same on a second thread (lane 1), down to its start routine."""
    names = crash_stack(t, "thread", 200, lane=1)
    expect_frames(names, ["crash_here"] + ["dive"] * 200 + ["crash_thread"], "thread 200")


def case_sealed(t):
    """process_vm_readv refused (a seccomp filter): the stack is copied from the thread's own
    known stack instead, and the whole stack is still named."""
    names = crash_stack(t, "sealed", 200)
    expect_frames(names, ["crash_here"] + ["dive"] * 200 + ["main"], "sealed 200")


def case_wide(t):
    """50 frames of 4 KiB each, more than the 64 KiB the library keeps: the innermost
    frames are named and then the stack ends, with no frame it cannot vouch for."""
    names = crash_stack(t, "wide", 50)
    expect_eq(names[0], "crash_here", f"the innermost frame: {names}")
    wide = len(names) - 1
    expect(names[1:] == ["dive_wide"] * wide, f"frames after crash_here that are not dive_wide: {names}")
    # a 4 KiB frame each: the kept bytes hold at most 16 of them, and at least 10
    expect(10 <= wide <= STACK_BYTES // 4096, f"{wide} frames of dive_wide in 64 KiB of stack")


def mapped_files(text):
    """The files mapped, as /proc/PID/maps names them."""
    files = set()
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            files.add(fields[5])
    return files


def linked(t, lib):
    """The files LIB links (its DT_NEEDED closure, as ldd resolves it), real paths."""
    r = t.run(["ldd", lib], env=t.env())
    r.expect_rc(0)
    return {os.path.realpath(p) for p in re.findall(r"(/\S+) \(0x", t.text(r))}


def needed(t, lib):
    """LIB's DT_NEEDED entries, as readelf -d lists them."""
    if not shutil.which("readelf"):
        raise Skipped("no readelf (binutils) to read the library's DT_NEEDED")
    r = t.run(["readelf", "-d", lib], env=t.env())
    r.expect_rc(0)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", t.text(r))


# What the library may link: the C library (libdl and libpthread are part of it
# since glibc 2.34) and the dynamic loader; in a sanitized build the runtimes too.
LINKS = r"lib(c|dl|pthread)\.so\.\d+|ld-linux[-\w.]*\.so\.\d+"
SANITIZER_LINKS = r"lib(asan|ubsan)\.so\.\d+"
# An unwinder and what one loads: only a crash or SCOPE_SAMPLE may bring them in.
HEAVY = r"/lib(unwind|lzma|gcc_s)[.-][^/]*$"


def case_maps(t):
    """The library's DT_NEEDED holds libc, libdl, libpthread and the loader only (the
    sanitizers' runtimes in a sanitized build): not the unwinder (libgcc_s, which
    -fexceptions in heap.c once pulled in). A profiled program that does not crash maps the
    library, what it links and its arena, and nothing else more than it would alone: no
    unwinder (libunwind, libgcc_s) and none of what one loads (liblzma)."""
    t.need_prog()
    links = needed(t, t.preload)
    allowed = LINKS + ("|" + SANITIZER_LINKS if t.asan else "")
    expect_eq([n for n in links if not re.fullmatch(allowed, n)], [],
              f"DT_NEEDED of {t.preload} ({links}) besides libc, libdl, libpthread and the loader")
    expect("libc.so.6" in links, f"DT_NEEDED of {t.preload} without libc.so.6: {links}")
    r = t.plain("maps")
    r.expect_rc(0)
    alone = mapped_files(t.text(r))
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    r = t.run([t.prog, "maps"], env=env)
    r.expect_rc(0)
    profiled = mapped_files(t.text(r))
    added = profiled - alone
    heavy = sorted(f for f in added if re.search(HEAVY, f))
    expect(not heavy, f"the profiled program maps {heavy}, which it does not alone")
    arenas = [f for f in added if re.fullmatch(re.escape(t.tmp) + r"/scope-\d+-\w{6}\.arena", f)]
    expect_eq(len(arenas), 1, f"arenas among the files the library added {sorted(added)}")
    extra = sorted(added - set(arenas) - linked(t, t.preload) - {os.path.realpath(t.preload)})
    expect_eq(extra, [], "files mapped besides the library, what it links and its arena")
    expect(os.path.realpath(t.preload) in added, f"the library is not mapped: {sorted(added)}")


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized",
               prog="the test program (r_crash.c)").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
