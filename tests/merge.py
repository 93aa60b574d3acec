#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scope-merge on profiles with and without the optional columns, checked value by value, and on bad inputs.

Usage: merge.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

The profiles are real ones (the test program run under scope-run); the
optional columns (/events and /pairs bytes_sent and bytes_received, which
processes that made MPI calls have, and /processes/host) are added to some
of them with h5py, so every combination can be merged and the result
compared with its inputs row by row. Bad inputs (an output that is an
input, a FIFO, damaged profiles made with h5py from good ones) must give
one line and no output.
"""

import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, Profile, Run, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402
from profile_checks import narrowest, region_of  # noqa: E402

BYTES = ("bytes_sent", "bytes_received")


def merge_tool(t):
    return os.path.join(os.path.dirname(t.scope_run), "scope-merge")


def profiles(t, count):
    """COUNT profiles of the test program, p0.h5 ... in the order they ran, without
    the optional columns (as a profile of a process without MPI calls written
    before /processes/host existed): each case adds the ones it wants."""
    t.need_prog()
    names = []
    for i in range(count):
        t.scope("-q", "-o", f"p{i}.h5", "--", t.prog).expect_rc(0)
        names.append(f"p{i}.h5")
        with h5py.File(t.path(names[-1]), "r+") as f:
            for group, col in (("processes", "host"), *(("events", c) for c in BYTES),
                               *(("pairs", c) for c in BYTES)):
                if col in f[group]:
                    del f[group][col]
    return names


def add_bytes(t, name, sent_dtype, received_dtype, scale):
    """Gives every call of the profile bytes (call k of the file: sent k * scale + 1,
    received k % 7) and every pair the sums of its calls', as the writer does for MPI calls."""
    with h5py.File(t.path(name), "r+") as f:
        n = len(f["events/duration"])
        k = np.arange(n, dtype=np.uint64)
        sent = (k * np.uint64(scale) + np.uint64(1)).astype(sent_dtype)
        received = (k % np.uint64(7)).astype(received_dtype)
        f["events"].create_dataset("bytes_sent", data=sent)
        f["events"].create_dataset("bytes_received", data=received)
        first, count = f["pairs/first"][:], f["pairs/count"][:]
        for col, values in (("bytes_sent", sent), ("bytes_received", received)):
            sums = [int(values[a:a + c].astype(np.uint64).sum()) for a, c in zip(first, count)]
            f["pairs"].create_dataset(col, data=np.array(sums, dtype=np.uint64))


def add_host(t, name, host):
    with h5py.File(t.path(name), "r+") as f:
        n = len(f["processes/pid"])
        f["processes"].create_dataset("host", data=[host] * n, dtype=h5py.string_dtype("utf-8"))


def read(path):
    """{pid: {region name: {column: values of its calls or its pair}}} and the file's columns."""
    p = Profile(path)
    by_pid = {}
    for row in range(len(p.pairs["process"])):
        proc = int(p.pairs["process"][row])
        pid = int(p.processes["pid"][proc])
        name = region_of(p, row)
        first, count = int(p.pairs["first"][row]), int(p.pairs["count"][row])
        calls = {col: [int(v) for v in vals[first:first + count]] for col, vals in p.events.items()}
        pair = {col: int(vals[row]) for col, vals in p.pairs.items() if col not in ("process", "region", "first")}
        by_pid.setdefault(pid, {})[name] = (calls, pair)
    return p, by_pid


def merged_of(t, inputs, out="merged.h5"):
    t.run([merge_tool(t), "-o", t.path(out), *[t.path(i) for i in inputs]], env=t.env()).expect_rc(0)
    for i in inputs:
        expect(os.path.exists(t.path(i)), f"scope-merge removed its input {i}")
    return read(t.path(out))


def expect_same_rows(merged, source, columns_added, what):
    """Every call and pair of SOURCE is in MERGED with the same values; the columns
    SOURCE lacks (COLUMNS_ADDED) are 0 there."""
    _, src = source
    _, got = merged
    for pid, regions in src.items():
        expect(pid in got, f"{what}: process {pid} is missing after merging")
        expect_eq(sorted(got[pid]), sorted(regions), f"{what}: regions of process {pid}")
        for name, (calls, pair) in regions.items():
            mcalls, mpair = got[pid][name]
            for col, values in calls.items():
                expect_eq(mcalls[col], values, f"{what}: /events/{col} of {name!r} in process {pid}")
            for col in columns_added:
                expect_eq(mcalls[col], [0] * len(calls["duration"]),
                          f"{what}: /events/{col} of {name!r} in process {pid}, which had none")
                expect_eq(mpair[col], 0, f"{what}: /pairs/{col} of {name!r} in process {pid}, which had none")
            for col, value in pair.items():
                expect_eq(mpair[col], value, f"{what}: /pairs/{col} of {name!r} in process {pid}")


def expect_narrowest(path, group, col):
    with h5py.File(path, "r") as f:
        d = f[group][col]
        values = d[:]
        expect_eq(d.dtype.kind, "u", f"/{group}/{col} type")
        expect_eq(d.dtype.itemsize, narrowest(values), f"bytes per value of /{group}/{col} (max {values.max()})")


def hosts(path):
    with h5py.File(path, "r") as f:
        if "host" not in f["processes"]:
            return None
        return dict(zip((int(x) for x in f["processes/pid"][:]), f["processes/host"].asstr()[:]))


def case_columns(t):
    """Three profiles: with bytes (16 and 8 bits wide) and host, with nothing, with
    wider bytes and no host. Every column is in the output, values kept, 0 or "" elsewhere."""
    names = profiles(t, 3)
    add_bytes(t, "p0.h5", np.uint16, np.uint8, scale=3)
    add_host(t, "p0.h5", "node-a")
    # p2's counts pass 2^16: its sent bytes need 32 bits, so the merged column does too
    add_bytes(t, "p2.h5", np.uint32, np.uint8, scale=70001)
    sources = [read(t.path(n)) for n in names]
    merged = merged_of(t, names)
    p = merged[0]
    expect_eq(len(p.processes["pid"]), 3, "processes after merging")
    for col in BYTES:
        expect(col in p.events, f"/events/{col} is missing after merging")
        expect(col in p.pairs, f"/pairs/{col} is missing after merging")
    expect_same_rows(merged, sources[0], (), "p0 (bytes and host)")
    expect_same_rows(merged, sources[1], BYTES, "p1 (no optional column)")
    expect_same_rows(merged, sources[2], (), "p2 (bytes, no host)")
    # the event columns stay as narrow as their values allow; pair sums stay 64-bit
    for col in ("start_delta", "duration", "thread", "depth", *BYTES):
        expect_narrowest(p.path, "events", col)
    expect_eq(p.events["bytes_sent"].dtype, np.dtype("uint32"), "/events/bytes_sent type (p2 needs 32 bits)")
    expect_eq(p.events["bytes_received"].dtype, np.dtype("uint8"), "/events/bytes_received type")
    for col in BYTES:
        expect_eq(p.pairs[col].dtype, np.dtype("uint64"), f"/pairs/{col} type")
    pids = [int(next(iter(s[0].processes["pid"]))) for s in sources]
    expect_eq(hosts(p.path), {pids[0]: "node-a", pids[1]: "", pids[2]: ""}, "/processes/host after merging")
    # the bytes summed over the file are the inputs' sums
    for col in BYTES:
        want = sum(int(s[0].events[col].astype(np.uint64).sum()) for s in sources if col in s[0].events)
        expect_eq(int(p.events[col].astype(np.uint64).sum()), want, f"sum of /events/{col}")


def case_nocolumns(t):
    """No input has an optional column: neither has the output."""
    names = profiles(t, 2)
    sources = [read(t.path(n)) for n in names]
    merged = merged_of(t, names)
    p = merged[0]
    for col in BYTES:
        expect(col not in p.events, f"/events/{col} appeared though no input has it")
        expect(col not in p.pairs, f"/pairs/{col} appeared though no input has it")
    expect_eq(hosts(p.path), None, "/processes/host (no input has it)")
    for i, s in enumerate(sources):
        expect_same_rows(merged, s, (), f"p{i}")


def case_remerge(t):
    """A merged file with the columns merged again with a profile without them (the
    output's own earlier contents, as `scope-merge OUTPUT` does): rows keep their values."""
    names = profiles(t, 3)
    add_bytes(t, "p1.h5", np.uint8, np.uint8, scale=1)
    add_host(t, "p1.h5", "node-b")
    first = merged_of(t, names[:2], out="first.h5")
    second = merged_of(t, ["first.h5", names[2]], out="second.h5")
    expect_same_rows(second, first, (), "first.h5 (p0 and p1)")
    expect_same_rows(second, read(t.path(names[2])), BYTES, "p2")
    h = hosts(second[0].path)
    expect_eq(sorted(h.values()), ["", "", "node-b"], "/processes/host after merging twice")
    for path in (first[0].path, second[0].path):
        for col in BYTES:
            expect_narrowest(path, "events", col)


def case_chunks(t):
    """Events written a chunk at a time: chunks of 7 rows, which straddle the inputs'
    boundaries, compressed or not; every value lands in its row."""
    names = profiles(t, 3)
    add_bytes(t, "p1.h5", np.uint16, np.uint8, scale=300)
    sources = [read(t.path(n)) for n in names]
    for storage in (["--compression", "gzip", "--chunk-size", "7"], ["--compression", "none", "--chunk-size", "7"],
                    ["--compression", "gzip:9"]):
        out = t.path("merged.h5")
        t.run([merge_tool(t), *storage, "-o", out, *[t.path(n) for n in names]], env=t.env()).expect_rc(0)
        merged = read(out)
        for i, s in enumerate(sources):
            expect_same_rows(merged, s, BYTES if i != 1 else (), f"p{i}, merged with {' '.join(storage)}")
        with h5py.File(out, "r") as f:
            d = f["events/duration"]
            if "--chunk-size" in storage:
                expect_eq(d.chunks, (7,), f"chunks of /events/duration with {' '.join(storage)}")
            expect_eq(d.compression, "gzip" if "none" not in storage else None,
                      f"compression of /events/duration with {' '.join(storage)}")


def case_badcolumn(t):
    """An optional column that is not a column of integers: one clear line, no output."""
    names = profiles(t, 2)
    with h5py.File(t.path("p1.h5"), "r+") as f:
        f["events"].create_dataset("bytes_sent", data=np.zeros(len(f["events/duration"]), dtype=np.float64))
    r = t.run([merge_tool(t), "-o", t.path("merged.h5"), *[t.path(n) for n in names]], env=t.env())
    r.expect_rc(1)
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"lines on stderr: {lines}")
    expect("p1.h5" in lines[0] and "/events/bytes_sent" in lines[0], f"the error names the file and column: {lines[0]!r}")
    expect(not os.path.exists(t.path("merged.h5")), "an output was written from a bad input")
    expect_eq([f for f in os.listdir(t.work) if ".tmp-" in f], [], "temporary files left behind")


def merge_run(t, *args, timeout=30):
    """scope-merge ARGS, which must end within TIMEOUT seconds (a FIFO read blocks)."""
    argv = [merge_tool(t), *[str(a) for a in args]]
    print("$", " ".join(argv), flush=True)
    try:
        proc = subprocess.run(argv, env=t.env(), cwd=t.work, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"`{' '.join(argv)}` did not finish in {timeout} s")
    r = Run(argv, proc)
    print(f"  exit {r.rc}")
    if r.stderr:
        print("  stderr:", r.stderr[-3000:].replace("\n", "\n  | "))
    return r


def expect_refused(t, r, rc, line, out, what):
    """Exit status RC, LINE alone on stderr, nothing at OUT and no temporary file."""
    r.expect_rc(rc)
    expect_eq(r.err_lines(), [line], f"{what}: stderr")
    expect(not os.path.exists(out), f"{what}: an output was written")
    expect_eq([f for f in os.listdir(t.work) if ".tmp-" in f], [], f"{what}: temporary files left behind")


def snapshot(t, names):
    out = {}
    for n in names:
        with open(t.path(n), "rb") as f:
            out[n] = f.read()
    return out


def case_selfout(t):
    """-o naming an input (itself, or a link to it), or a file inside --parts: refused
    with one line before anything is read, every input unchanged."""
    names = profiles(t, 2)
    os.link(t.path("p1.h5"), t.path("hard.h5"))
    os.symlink(t.path("p1.h5"), t.path("soft.h5"))
    before = snapshot(t, names)
    for out, named in ((t.path("p1.h5"), t.path("p1.h5")), (t.path("hard.h5"), t.path("p1.h5")),
                       (t.path("soft.h5"), t.path("p1.h5"))):
        r = merge_run(t, "-o", out, *[t.path(n) for n in names])
        r.expect_rc(2)
        expect_eq(r.err_lines(), [f"scope-merge: -o {out} is the input {named}: give another output"],
                  f"-o {out}: stderr")
        expect_eq(snapshot(t, names), before, f"-o {out}: the inputs changed")
        expect(os.path.islink(t.path("soft.h5")), "the link was replaced")
    os.makedirs(t.path("parts"))
    for n in names:
        shutil.copy(t.path(n), t.path("parts", n))
    for out in (t.path("parts", "merged.h5"), t.path("parts", "..", "parts", "merged.h5")):
        r = merge_run(t, "--parts", t.path("parts"), "-o", out)
        expect_refused(t, r, 2, f"scope-merge: -o {out} is inside --parts {t.path('parts')}, whose files it merges: "
                       "give an output outside it", t.path("parts", "merged.h5"), f"--parts -o {out}")
        expect_eq(sorted(os.listdir(t.path("parts"))), sorted(names), "the parts after a refusal")
    # The same inputs, merged elsewhere: as before.
    merge_run(t, "--parts", t.path("parts"), "-o", t.path("merged.h5")).expect_rc(0)
    expect_eq(len(read(t.path("merged.h5"))[0].processes["pid"]), 2, "processes merged")


def case_notfile(t):
    """An input that is missing, a folder or a FIFO (which would block a read forever):
    one line with the true reason, at once, and no output."""
    names = profiles(t, 1)
    os.mkfifo(t.path("fifo.h5"))
    os.makedirs(t.path("folder.h5"))
    out = t.path("merged.h5")
    for name, why in (("missing.h5", "No such file or directory"), ("folder.h5", "is a directory"),
                      ("fifo.h5", "not a regular file")):
        r = merge_run(t, "-o", out, t.path(names[0]), t.path(name))
        expect_refused(t, r, 1, f"scope-merge: {t.path(name)}: {why}", out, name)
    # A FIFO in a parts folder: the same.
    os.makedirs(t.path("parts"))
    shutil.copy(t.path(names[0]), t.path("parts", "a.h5"))
    os.mkfifo(t.path("parts", "b.h5"))
    r = merge_run(t, "--parts", t.path("parts"), "-o", out)
    expect_refused(t, r, 1, f"scope-merge: {t.path('parts', 'b.h5')}: not a regular file", out, "--parts with a FIFO")
    expect_eq(sorted(os.listdir(t.path("parts"))), ["a.h5", "b.h5"], "the parts after a refusal")


def damage(t, src, dst, edit):
    shutil.copy(t.path(src), t.path(dst))
    with h5py.File(t.path(dst), "r+") as f:
        edit(f)
    return dst


def replace(f, name, values):
    del f[name]
    f[name] = values


def case_damaged(t):
    """Inputs scope-report would refuse (lanes missing, a thread lane out of range,
    signed durations, a process that ends before it starts): refused as the reader
    refuses them, with the reader's reason, one line, and no output."""
    names = profiles(t, 2)
    with h5py.File(t.path("p1.h5"), "r") as f:
        nlanes = len(f["process0/lanes/threads/tid"])
        start, end = int(f["processes/start"][0]), int(f["processes/end"][0])

    def thread_out(f):
        thread = f["events/thread"][()].astype(np.uint64)
        thread[2] = nlanes
        replace(f, "events/thread", thread)

    def ends_early(f):
        e = f["processes/end"][()]
        e[0] = start - 1
        replace(f, "processes/end", e)

    cases = (
        ("nolanes.h5", lambda f: f.__delitem__("process0/lanes/threads"), "/process0/lanes/threads is missing"),
        ("thread.h5", thread_out, None),
        ("signed.h5", lambda f: replace(f, "events/duration", f["events/duration"][()].astype(np.int64)),
         "/events/duration is not a column of unsigned integers"),
        ("early.h5", ends_early, f"/processes row 0 ends ({start - 1}) before it starts ({start})"),
    )
    expect(end >= start, "the good profile ends after it starts")
    out = t.path("merged.h5")
    for name, edit, why in cases:
        damage(t, "p1.h5", name, edit)
        r = merge_run(t, "-o", out, t.path(names[0]), t.path(name))
        r.expect_rc(1)
        lines = r.err_lines()
        expect_eq(len(lines), 1, f"{name}: lines on stderr")
        head = f"scope-merge: {t.path(name)}: "
        expect(lines[0].startswith(head), f"{name}: the line does not name the file: {lines[0]!r}")
        if why:
            expect_eq(lines[0][len(head):], why, f"{name}: the reason")
        else:
            expect(re.fullmatch(rf"/events/thread row \d+: lane {nlanes} is out of range \(process 0 has {nlanes} "
                                r"lanes\)", lines[0][len(head):]), f"{name}: the reason: {lines[0]!r}")
        expect_refused(t, r, 1, lines[0], out, name)
    # The same inputs undamaged merge.
    merge_run(t, "-o", out, *[t.path(n) for n in names]).expect_rc(0)


CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
