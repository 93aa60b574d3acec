#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scope-report --otf2 on real profiles, read back with otf2-print (Debian's otf2-tools).

Usage: otf2.py CASE --bin DIR --progs DIR --workdir DIR [--sanitized LIBASAN]

Cases:
  calls    calls-gcc-O2 and threads-gcc-O2: otf2-print reads the archive;
           each region has as many ENTER and LEAVE events as calls in
           `scope-report --format csv`, each lane is a location with its
           own calls (as --thread K counts them) and the event count its
           definition gives, events nest and never go back in time;
           --min-duration keeps the calls the table counts with it.
  mpi      mpi-calls, 4 ranks (Open MPI): a location group per rank,
           MPI calls as regions of the MPI paradigm, each MPI call's Enter
           with the bytes it sent and received (/events/bytes_*) as
           attributes, also with --thread 0, and each rank's totals
           (/pairs) as properties of its first location (skipped without
           mpirun).
  memory   4000002 calls: scope-report's peak RSS stays under 64 MiB (OTF2's
           own pool would hold the whole archive, 90 MiB here), and the
           locations' event counts add up to two per call.
  refuse   a DIR that exists, -o with --otf2, and a --max-size too small
           (estimated, and measured) each exit non-zero with one line,
           leaving nothing behind.

Exit status: 0 pass, 1 fail, 77 skip (no otf2-print, no OTF2 in scope-report, or no MPI for mpi).
"""

import collections
import csv
import io
import os
import re
import shutil
import sys

import h5py

from harness import Skipped, ToolTest, cases_of, expect, expect_eq, parser, run_case

EVENT = re.compile(r'^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "(.*)" <(\d+)>$')


class Otf2(ToolTest):
    def __init__(self, a):
        super().__init__(a)
        self.printer = shutil.which("otf2-print")
        if not self.printer:
            raise Skipped("otf2-print is not installed (Debian: otf2-tools)")

    def profile(self, prog, *args, out="p.h5"):
        r = self.run([self.scope_run, "-q", "-o", self.path(out), "--", self.prog(prog), *args],
                     env=self.env(preload_asan=True), quiet=True)
        r.expect_rc(0)
        return self.path(out)

    def otf2(self, h5, name, *options):
        out = self.path(name)
        r = self.run([self.report, "--otf2", out, *options, h5], quiet=True)
        if r.rc != 0 and "built without OTF2" in r.stderr:
            raise Skipped("scope-report was built without OTF2 (Debian: libotf2-trace-dev)")
        r.expect_rc(0)
        expect(os.path.isfile(os.path.join(out, "traces.otf2")), f"no {out}/traces.otf2")
        return os.path.join(out, "traces.otf2")

    def csv(self, h5, *options):
        r = self.run([self.report, "--format", "csv", *options, h5], quiet=True)
        r.expect_rc(0)
        return {row["region"]: int(row["calls"]) for row in csv.DictReader(io.StringIO(r.stdout))}

    def events(self, anchor):
        """otf2-print's events: per location, (kind, time, region name) in order."""
        r = self.run([self.printer, anchor], quiet=True)
        r.expect_rc(0)
        out = collections.defaultdict(list)
        for line in r.stdout.splitlines():
            m = EVENT.match(line.strip())
            if m:
                out[int(m.group(2))].append((m.group(1), int(m.group(3)), m.group(4)))
        return out

    def mpi_bytes(self, anchor):
        """The bytes attributes of each ENTER: (location, region) -> [(sent, received)] in order."""
        r = self.run([self.printer, anchor], quiet=True)
        r.expect_rc(0)
        out, last = collections.defaultdict(list), None
        for line in r.stdout.splitlines():
            m = EVENT.match(line.strip())
            if m:
                last = (int(m.group(2)), m.group(4)) if m.group(1) == "ENTER" else None
                continue
            a = re.search(r'\("bytes_sent" <\d+>; UINT64; (\d+)\), \("bytes_received" <\d+>; UINT64; (\d+)\)', line)
            if a:
                expect(last, f"bytes attributes not on an ENTER: {line.strip()}")
                out[last].append((int(a.group(1)), int(a.group(2))))
        return out

    def definitions(self, anchor):
        r = self.run([self.printer, "-G", anchor], quiet=True)
        r.expect_rc(0)
        return r.stdout


def check_nesting(events):
    """Each location's events nest as calls and keep time; returns calls per region per location."""
    calls = {}
    for loc, evs in events.items():
        stack, last, n = [], 0, collections.Counter()
        for kind, t, name in evs:
            expect(t >= last, f"location {loc}: time goes back from {last} to {t}")
            last = t
            if kind == "ENTER":
                stack.append(name)
                n[name] += 1
            else:
                expect(stack and stack[-1] == name, f"location {loc}: LEAVE {name} with {stack[-3:]} open")
                stack.pop()
        expect(not stack, f"location {loc}: {stack} never left")
        calls[loc] = dict(n)
    return calls


def location_defs(defs):
    """LOCATION definitions: id -> (name, events, group id)."""
    out = {}
    for m in re.finditer(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)" <\d+>, Type: CPU_THREAD, # Events: (\d+), '
                         r'Group: "[^"]*" <(\d+)>', defs, re.M):
        out[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4)))
    return out


def total(calls):
    out = collections.Counter()
    for c in calls.values():
        out.update(c)
    return dict(out)


def case_calls(t):
    h5 = t.profile("calls-gcc-O2", "2000")
    anchor = t.otf2(h5, "calls")
    events = t.events(anchor)
    calls = check_nesting(events)
    want = t.csv(h5)
    print("calls per location:", calls)
    expect_eq(total(calls), want, "ENTER events per region against --format csv")
    defs = t.definitions(anchor)
    for name in want:
        expect(re.search(rf'^REGION\s+\d+\s+Name: "{re.escape(name)}" <\d+>.*Paradigm: COMPILER', defs, re.M),
               f"no REGION {name} of the COMPILER paradigm")
    locs = location_defs(defs)
    expect_eq(sorted(locs), [0], "locations of a one-lane run")
    expect_eq(locs[0][1], len(events[0]), "the location's event count against its events")
    m = re.search(r"CLOCK_PROPERTIES\s+Ticks per Seconds: (\d+)", defs)
    expect(m and m.group(1) == "1000000000", "the archive's clock is not in ns")

    # The lanes of a threaded run: a location each, with the calls --thread K counts.
    h5 = t.profile("threads-gcc-O2", out="threads.h5")
    anchor = t.otf2(h5, "threads")
    calls = check_nesting(t.events(anchor))
    locs = location_defs(t.definitions(anchor))
    with h5py.File(h5, "r") as f:
        lanes = len(f["process0/lanes/threads/tid"])
    expect_eq(sorted(locs), list(range(lanes)), "one location per lane")
    for k in range(lanes):
        expect_eq(calls.get(k, {}), t.csv(h5, "--thread", str(k)), f"calls of lane {k}")
        expect(f"(lane {k}, tid " in locs[k][0], f"location {k} is named {locs[k][0]!r}")
    expect_eq(total(calls), t.csv(h5), "calls of every lane")

    # A window: the calls the table keeps with it.
    anchor = t.otf2(h5, "window", "--min-duration", "1us")
    expect_eq(total(check_nesting(t.events(anchor))), t.csv(h5, "--min-duration", "1us"),
              "calls with --min-duration 1us")


def case_mpi(t):
    mpirun = shutil.which("mpirun")
    prog = os.path.join(t.progs, "mpi-calls")  # every MPI call, with sizes that differ call to call
    if not mpirun or not os.access(prog, os.X_OK):
        raise Skipped("no Open MPI mpirun, or mpi-calls was not built")
    h5 = t.path("job.h5")
    r = t.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4", t.scope_run, "-q", "-o", h5, "--",
               prog], env=t.env(preload_asan=True), quiet=True, timeout=120)
    r.expect_rc(0)
    anchor = t.otf2(h5, "job")
    calls = check_nesting(t.events(anchor))
    expect_eq(total(calls), t.csv(h5), "ENTER events per region against --format csv")
    defs = t.definitions(anchor)
    groups = re.findall(r'^LOCATION_GROUP\s+(\d+)\s+Name: "[^"]*rank (\d+)\)"', defs, re.M)
    expect_eq(sorted(int(rank) for _, rank in groups), [0, 1, 2, 3], "a location group per rank")
    with h5py.File(h5, "r") as f:
        names = [str(x) for x in f["regions/name"].asstr()[()]]
        kinds = [str(x) for x in f["regions/kind"].asstr()[()]]
        pairs = {k: f["pairs"][k][()] for k in ("process", "region", "bytes_sent", "bytes_received")}
        ranks = f["processes/rank"][()]
    for name, kind in zip(names, kinds):
        if kind == "mpi":
            expect(re.search(rf'^REGION\s+\d+\s+Name: "{re.escape(name)}" <\d+>.*Paradigm: MPI,', defs, re.M),
                   f"{name} is not a REGION of the MPI paradigm")
    locs = location_defs(defs)
    first = {}  # group -> its first location
    for loc, (_, _, group) in sorted(locs.items()):
        first.setdefault(group, loc)
    props = {}
    for m in re.finditer(r'^LOCATION_PROPERTY\s+Location: "[^"]*" <(\d+)>, Name: "([^"]*) (bytes_sent|bytes_received)" '
                         r'<\d+>, Type: UINT64, Value: (\d+)', defs, re.M):
        props[(int(m.group(1)), m.group(2), m.group(3))] = int(m.group(4))
    want = {}
    for i in range(len(pairs["process"])):
        p, region = int(pairs["process"][i]), int(pairs["region"][i])
        for what in ("bytes_sent", "bytes_received"):
            if int(pairs[what][i]):
                want[(first[p], names[region], what)] = int(pairs[what][i])
    print("bytes:", sorted(want.items()))
    expect(want, "the job's MPI calls moved no bytes")
    expect_eq(props, want, "bytes per rank and MPI region, as location properties")

    # Each call's own bytes, from /events, in the order of its pair's rows.
    with h5py.File(h5, "r") as f:
        first, count = f["pairs/first"][()], f["pairs/count"][()]
        sent, received = f["events/bytes_sent"][()], f["events/bytes_received"][()]
        thread = f["events/thread"][()]
    for only in (None, 0):
        anchor = t.otf2(h5, f"job-{only}", *(["--thread", str(only)] if only is not None else []))
        got = t.mpi_bytes(anchor)
        locs = location_defs(t.definitions(anchor))
        group_loc = {}
        for loc, (_, _, group) in sorted(locs.items()):
            group_loc.setdefault(group, loc)  # with --thread 0, each group's one location
        want = collections.defaultdict(list)
        for i in range(len(pairs["process"])):
            p, region = int(pairs["process"][i]), int(pairs["region"][i])
            if kinds[region] != "mpi":
                continue
            for row in range(int(first[i]), int(first[i]) + int(count[i])):
                if only is None or int(thread[row]) == only:
                    lane_loc = group_loc[p] + (int(thread[row]) if only is None else 0)
                    want[(lane_loc, names[region])].append((int(sent[row]), int(received[row])))
        expect(sum(len(v) for v in want.values()) > 0, "no MPI calls")
        expect_eq(dict(got), dict(want), f"bytes of each MPI call (--thread {only})")
        print(f"--thread {only}: {sum(len(v) for v in got.values())} MPI calls with their bytes")
    expect_eq(sorted(int(x) for x in ranks), [0, 1, 2, 3], "ranks in the profile")


def case_memory(t):
    h5 = t.profile("calls-gcc-O2", "4000000")
    t.sample_rss = True
    out = t.path("big")
    r = t.run([t.report, "--otf2", out, h5], quiet=True)
    t.sample_rss = False
    if r.rc != 0 and "built without OTF2" in r.stderr:
        raise Skipped("scope-report was built without OTF2 (Debian: libotf2-trace-dev)")
    r.expect_rc(0)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(f"--otf2 of 4000002 calls: {size} bytes in {r.seconds:.2f} s, peak RSS {r.maxrss // 1024} MiB (sampled)")
    if t.asan:
        print("built with ASan, whose shadow memory and quarantine the bound is not for: not checked")
    else:
        expect(r.maxrss < 64 * 1024, f"peak RSS {r.maxrss} KiB, not under 64 MiB")
    locs = location_defs(t.definitions(os.path.join(out, "traces.otf2")))
    expect_eq(sum(n for _, n, _ in locs.values()), 2 * 4000002, "events of the locations")


def leftovers(t):
    return sorted(x for x in os.listdir(t.work) if x.startswith(".out"))


def case_refuse(t):
    h5 = t.profile("calls-gcc-O2", "100000")
    out = t.path("out")
    os.makedirs(out)
    r = t.run([t.report, "--otf2", out, h5])
    if "built without OTF2" in r.stderr:
        raise Skipped("scope-report was built without OTF2 (Debian: libotf2-trace-dev)")
    r.expect_rc(1)
    expect(len(r.err_lines()) == 1 and "exists" in r.stderr, "an existing DIR: not one line saying so")
    expect_eq(os.listdir(out), [], "the existing DIR's files")
    os.rmdir(out)
    r = t.run([t.report, "--otf2", out, "-o", t.path("x"), h5])
    r.expect_rc(2)
    expect("-o does not apply" in r.stderr, "-o with --otf2 is not refused")
    for size, why in (("100K", "would be about"), ("2200K", "passed --max-size")):
        r = t.run([t.report, "--otf2", out, "--max-size", size, h5])
        r.expect_rc(1)
        expect(len(r.err_lines()) == 1 and why in r.stderr and "nothing written" in r.stderr,
               f"--max-size {size}: not one line saying {why!r}")
        expect(not os.path.exists(out), f"--max-size {size} left {out}")
        expect_eq(leftovers(t), [], f"--max-size {size}: files left beside {out}")
    t.otf2(h5, "out", "--max-size", "4M")
    expect_eq(leftovers(t), [], "files left beside out")


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "bin", "progs", "workdir", "sanitized")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Otf2(a))


if __name__ == "__main__":
    sys.exit(main())
