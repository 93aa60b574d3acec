# SPDX-License-Identifier: MIT
"""Checks several drivers make: what holds in any profile, and the counts the test programs say."""

import re

import h5py
import numpy as np

from harness import Failure, expect, expect_eq, is_vlen_utf8

# ---------------------------------------------------------------------------
# Nesting, statistics and starts


def walk_calls(p, process=0):
    """Checks that every call nests inside a call one level up on its thread.

    Returns, per pair row, the summed durations of the calls' direct callees
    (what separates the calls' time from self_ns), how many they were, and
    the summed durations of its outermost calls (total_ns): those with no
    call of the same pair open around them on their lane.
    """
    rows = [i for i in range(len(p.pairs["process"])) if p.pairs["process"][i] == process]
    calls = []
    for row in rows:
        ev = p.events_of(row)
        for start, dur, thread, depth in zip(ev["start"], ev["duration"], ev["thread"], ev["depth"]):
            calls.append((int(thread), int(start), int(depth), int(start) + int(dur), row))
    calls.sort()
    children = {row: [0, 0, 0] for row in rows}
    stack, thread, open_calls = [], None, {}
    for t, start, depth, end, row in calls:
        if t != thread:
            stack, thread, open_calls = [], t, {}
        while stack and (stack[-1][2] >= depth or stack[-1][1] < start):
            open_calls[stack.pop()[3]] -= 1
        if depth > 0:
            expect(stack, f"a call of {region_of(p, row)!r} at depth {depth} on lane {t} has no caller around it")
            c_start, c_end, c_depth, c_row = stack[-1]
            expect(c_depth == depth - 1 and c_start <= start and end <= c_end + 2,
                   f"call of {region_of(p, row)!r} [{start}, {end}] depth {depth} does not nest in "
                   f"{region_of(p, c_row)!r} [{c_start}, {c_end}] depth {c_depth} on lane {t}")
            children[c_row][0] += end - start
            children[c_row][1] += 1
        if not open_calls.get(row):
            children[row][2] += end - start
        open_calls[row] = open_calls.get(row, 0) + 1
        stack.append((start, end, depth, row))
    return children


def region_of(p, row):
    return p.regions["name"][p.pairs["region"][row]]


def check_pair_stats(p, process=0):
    """total_ns (its outermost calls), total_all_ns, min and max follow from the events
    exactly, self_ns from the nesting (±2 ns a call)."""
    children = walk_calls(p, process)
    for row, (child_ns, child_calls, outermost_ns) in children.items():
        name = region_of(p, row)
        d = p.events_of(row)["duration"].astype(np.uint64)
        count = int(p.pairs["count"][row])
        expect(count > 0, f"pair of {name!r} has no calls")
        expect_eq(int(p.pairs["total_all_ns"][row]), int(d.sum()), f"total_all_ns of {name!r}")
        expect_eq(int(p.pairs["total_ns"][row]), outermost_ns,
                  f"total_ns of {name!r} (its calls with none of its calls open around them)")
        expect_eq(int(p.pairs["min_ns"][row]), int(d.min()), f"min_ns of {name!r}")
        expect_eq(int(p.pairs["max_ns"][row]), int(d.max()), f"max_ns of {name!r}")
        self_ns = int(p.pairs["self_ns"][row])
        want = int(d.sum()) - child_ns
        expect(self_ns <= outermost_ns + 2 * (count + child_calls), f"self_ns of {name!r} exceeds its total")
        expect(abs(self_ns - want) <= 2 * (count + child_calls),
               f"self_ns of {name!r} is {self_ns}, its events say {want}")


def check_starts(p):
    """Decoded starts are ordered per pair and every call lies inside its process."""
    for row in range(len(p.pairs["process"])):
        ev = p.events_of(row)
        span = p.span(int(p.pairs["process"][row]))
        starts = ev["start"]
        name = region_of(p, row)
        expect(np.all(starts[1:] >= starts[:-1]), f"starts of {name!r} are not ordered (or overflow 64 bits)")
        if len(starts):
            ends = starts + ev["duration"].astype(np.uint64)
            expect(int(starts[-1]) <= span, f"a call of {name!r} starts after its process ended")
            expect(int(ends.max()) <= span + 1, f"a call of {name!r} ends after its process ended")


def narrowest(values):
    top = int(values.max()) if len(values) else 0
    for size in (1, 2, 4):
        if top < 1 << (8 * size):
            return size
    return 8


# ---------------------------------------------------------------------------
# The file against schema 3

STR, I32, I64, U32, U64, F64, UINT = "str", "<i4", "<i8", "<u4", "<u8", "<f8", "uint"

SCHEMA = {
    "processes": {"pid": I64, "parent": I64, "rank": I64, "executable": STR, "arguments": STR,
                  "start": U64, "end": U64, "exit_status": I64, "lost": U64},
    "regions": {"name": STR, "module": STR, "offset": U64, "file": STR, "line": U32, "kind": STR},
    "pairs": {"process": U32, "region": U32, "first": U64, "count": U64, "total_ns": U64,
              "total_all_ns": U64, "self_ns": U64, "min_ns": U64, "max_ns": U64},
    "events": {"start_delta": UINT, "duration": UINT, "thread": UINT, "task": UINT, "depth": UINT,
               "flags": "|u1"},
    "process0/lanes/threads": {"tid": U32, "name": STR, "parent": I32, "start": U64, "end": U64,
                               "cpu_ns": U64},
    "process0/modules": {"path": STR, "bias": U64, "low": U64, "high": U64, "build_id": STR},
}

# The attributes of the root and of /metadata, every required one among them
# (schema-copies holds these lists and SCHEMA to lib/schema.h's table).
ROOT = {"schema": I64, "producer": STR, "time_unit": STR}

METADATA = {
    STR: ("command_line", "working_dir", "start_time_utc", "host", "cpu_model", "kernel", "platform",
          "libc_version", "clock_source", "compression", "env_OMP_NUM_THREADS"),
    I64: ("logical_cores", "physical_cores", "memory_bytes", "exit_status", "exit_signal",
          "peak_rss_bytes", "lost_records", "lost_arena_full", "lost_no_lane", "lost_shared_tls", "complete"),
    F64: ("cpu_mhz", "clock_frequency_hz", "wall_seconds", "cpu_seconds", "overhead_ns_per_call"),
}


def type_problem(dtype, want, what):
    """None if DTYPE is what the schema says, else a sentence saying why not."""
    if want == STR:
        ok = is_vlen_utf8(dtype)
        want = "a variable-length UTF-8 string"
    elif want == UINT:
        ok = dtype.kind == "u" and dtype.itemsize in (1, 2, 4, 8)
        want = "unsigned"
    else:
        ok = dtype == np.dtype(want)
        want = np.dtype(want)
    return None if ok else f"{what} is {dtype}, expected {want}"


def check_layout(path):
    """Every attribute, group and column of schema 3 with its type; reports all mismatches at once."""
    problems = []

    def need(cond, what):
        if not cond:
            problems.append(what)
        return cond

    def typed(dtype, want, what):
        problem = type_problem(dtype, want, what)
        need(problem is None, problem)

    with h5py.File(path, "r") as f:
        for name, want in ROOT.items():
            if need(name in f.attrs, f"root attribute {name} is missing"):
                typed(f.attrs.get_id(name).dtype, want, f"root attribute {name}")
        meta = f["metadata"]
        need(isinstance(meta, h5py.Group) and len(meta) == 0, "/metadata should be a group of attributes only")
        for want, names in METADATA.items():
            for name in names:
                if need(name in meta.attrs, f"/metadata attribute {name} is missing"):
                    typed(meta.attrs.get_id(name).dtype, want, f"/metadata attribute {name}")
        for group, columns in SCHEMA.items():
            if not need(group in f, f"/{group} is missing"):
                continue
            lengths = set()
            for col, want in columns.items():
                if not need(col in f[group], f"/{group}/{col} is missing"):
                    continue
                dset = f[group][col]
                need(dset.ndim == 1, f"/{group}/{col} is not one-dimensional")
                typed(dset.dtype, want, f"/{group}/{col}")
                lengths.add(dset.shape[0])
            need(len(lengths) <= 1, f"columns of /{group} have different lengths {sorted(lengths)}")
    expect(not problems, "the file does not follow schema 3:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------------------
# What the programs say, and /processes


def said_calls(text):
    """The NAME=N pairs after 'calls' on every line of TEXT, summed by name."""
    counts = {}
    for line in text.splitlines():
        if "calls " not in line:
            continue
        for name, n in re.findall(r"(\S+)=(\d+)", line.split("calls ", 1)[1]):
            counts[name] = counts.get(name, 0) + int(n)
    return counts


def expect_counts(p, counts, process=0, what=""):
    """Calls of every NAME in COUNTS in PROCESS, exactly (0 = no pair)."""
    for name, n in counts.items():
        got = p.count(name, process)
        if got != n and got == 0:
            have = sorted({f"{p.regions['name'][r]}={c}" for r, c, q in
                           zip(p.pairs["region"], p.pairs["count"], p.pairs["process"]) if q == process})
            raise Failure(f"calls of {name} in process {process}{what}: expected {n}, got 0; "
                          f"the process has {', '.join(have) or 'no calls'}")
        expect_eq(got, n, f"calls of {name} in process {process}{what}")


def col(p, row, name):
    """One value of /processes, as an int or a str."""
    v = p.processes[name][row]
    return v if isinstance(v, str) else int(v)


def parent_chain(p, row):
    chain = []
    while row >= 0:
        expect(row not in chain and row < len(p.processes["pid"]), f"/processes/parent loops at row {row}")
        chain.append(row)
        row = col(p, row, "parent")
    return chain


def check_processes(p):
    """What holds for every row of /processes in any run."""
    n = len(p.processes["pid"])
    expect_eq(col(p, 0, "parent"), -1, "parent of the first process")
    for row in range(1, n):
        parent = col(p, row, "parent")
        expect(0 <= parent < n and parent != row, f"process {row} has parent {parent}")
        parent_chain(p, row)
    for row in range(n):
        expect(p.processes["start"][row] <= p.processes["end"][row], f"process {row} ends before it starts")


def rows_of(p, pid):
    return [i for i, x in enumerate(p.processes["pid"]) if int(x) == pid]


def check_nesting(p):
    """Every call nests in its caller, stats follow from the events, in every process."""
    check_starts(p)
    for row in range(len(p.processes["pid"])):
        check_pair_stats(p, row)


def expect_same_profile(t, held, spilled, what="the spilled profile differs from the one grouped in memory"):
    """Every column of /regions, /pairs, /events and /processes equal, in value and type."""
    a, b = h5py.File(t.path(held), "r"), h5py.File(t.path(spilled), "r")
    differ = []
    for group in ("regions", "pairs", "events", "processes"):
        expect_eq(sorted(b[group]), sorted(a[group]), f"columns of /{group}")
        for name in a[group]:
            x, y = a[group][name], b[group][name]
            if x.dtype != y.dtype or not np.array_equal(x[:], y[:]):
                differ.append(f"/{group}/{name} ({x.dtype} {len(x)} rows, spilled: {y.dtype} {len(y)} rows)")
    expect(not differ, f"{what}:\n  " + "\n  ".join(differ))
    return len(a["events/duration"])


def pairs_by_name(p):
    """{(process, region name): (its /pairs row but first and region, its /events rows)} of the
    Profile p: its calls whatever order its regions are in."""
    out = {}
    for i in range(len(p.pairs["region"])):
        first, n = int(p.pairs["first"][i]), int(p.pairs["count"][i])
        stats = {k: v[i] for k, v in p.pairs.items() if k not in ("region", "first")}
        out[(int(p.pairs["process"][i]), p.regions["name"][p.pairs["region"][i]])] = (
            stats, {k: v[first:first + n] for k, v in p.events.items()})
    return out


def expect_same_pairs(t, one, other, what):
    """Every pair of ONE in OTHER with the same statistics and calls, column for column, the
    regions in any order; returns the number of calls."""
    a, b = pairs_by_name(t.load(one)), pairs_by_name(t.load(other))
    expect_eq(sorted(b), sorted(a), f"{what}: the pairs (process, region)")
    differ = [f"{key[1]} of process {key[0]}: {col}" for key, (stats, events) in a.items()
              for col in [c for c in stats if not np.array_equal(stats[c], b[key][0][c])] +
              [c for c in events if not np.array_equal(events[c], b[key][1][c])]]
    expect(not differ, f"{what}:\n  " + "\n  ".join(differ))
    return sum(len(ev.get("duration", ())) for _, ev in a.values())
