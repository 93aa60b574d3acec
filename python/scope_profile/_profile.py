# SPDX-License-Identifier: MIT
"""Reading a scope profile (HDF5 schema 3) into pandas tables, and its calls decoded exactly."""

import re

import h5py
import numpy as np
import pandas as pd

SCHEMA = 3
NEVER_RETURNED = 1  # bit 0 of /events/flags

# Optional columns and what a file without them means (docs/SCHEMA.md).
_FILL = {
    "processes": {"ppid": -1, "exit_signal": 0, "exec": 0, "complete": 0, "host": "", "counters": ""},
    "pairs": {"total_all_ns": None, "bytes_sent": 0, "bytes_received": 0,  # None: total_ns
              "aggregated": 0, **{f"counter{k}_{s}": 0 for k in range(4) for s in ("total", "self")}},
    "threads": {"cpu_ns": 0},
    "modules": {"low": 0, "high": 0},
}
_ORDER = {
    "processes": ("pid", "ppid", "parent", "rank", "executable", "arguments", "start", "end",
                  "exit_status", "exit_signal", "lost", "exec", "complete", "host", "counters"),
    "regions": ("name", "module", "offset", "file", "line", "kind"),
    "pairs": ("process", "region", "first", "count", "total_ns", "total_all_ns", "self_ns",
              "min_ns", "max_ns", "bytes_sent", "bytes_received", "aggregated",
              *(f"counter{k}_{s}" for k in range(4) for s in ("total", "self"))),
    "threads": ("tid", "name", "parent", "start", "end", "cpu_ns"),
    "tasks": ("id", "name", "parent", "start", "end", "threads", "busy_ns"),
    "modules": ("path", "bias", "low", "high", "build_id"),
    "heap": ("region", "allocations", "frees", "bytes_allocated", "peak_live_bytes", "live_bytes_at_exit"),
    "heap_sites": ("region", "bytes", "allocations", "address", "function", "file", "line"),
}
_EVENT_COLUMNS = ("start_delta", "duration", "thread", "task", "depth", "flags")
_EVENT_OPTIONAL = ("bytes_sent", "bytes_received", "counter0", "counter1", "counter2", "counter3")
_HEAP_ATTRIBUTES = ("peak_live_bytes", "live_bytes_at_exit", "untracked")  # of each /process<N>/heap
_TIME_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _column(group, name):
    """A column as numpy: strings as str objects, unsigned integers widened to uint64,
    signed ones to int64."""
    d = group[name]
    if d.dtype.kind == "O" or h5py.check_string_dtype(d.dtype) is not None:
        return np.asarray(d.asstr()[...], dtype=object)
    v = d[...]
    if v.dtype.kind == "u":
        return v.astype(np.uint64)
    if v.dtype.kind == "i":
        return v.astype(np.int64)
    return v


def _table(group, kind):
    """The columns of a group of the file, in the schema's order, optional ones filled."""
    n = None
    cols = {}
    for name in _ORDER[kind]:
        if name in group:
            cols[name] = _column(group, name)
            n = len(cols[name])
    for name in _ORDER[kind]:
        if name not in cols and name in _FILL.get(kind, {}):
            fill = _FILL[kind][name]
            if fill is None:
                continue
            dtype = object if isinstance(fill, str) else (np.int64 if fill < 0 else np.uint64)
            cols[name] = np.full(n or 0, fill, dtype=dtype)
    return cols


def _plain(value):
    """An attribute as a Python value."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.generic):
        return value.item()
    return value


def parse_time(value):
    """ns from a number of ns or a string with a unit: 1500, "1500ns", "2.5us", "10ms", "1s"."""
    if value is None:
        return None
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s)?\s*", value)
        if not m:
            raise ValueError(f"{value!r} is not a time: a number of ns, or one with ns, us, ms or s")
        return int(round(float(m.group(1)) * _TIME_UNITS[m.group(2) or "ns"]))
    return int(value)


def _ids(value, what, names=None):
    """A selection (one value or several) as a numpy array of ids; names map str to ids."""
    if value is None:
        return None
    values = [value] if isinstance(value, (str, int, np.integer)) else list(value)
    out = []
    for v in values:
        if isinstance(v, str):
            if names is None:
                raise TypeError(f"{what} is a number, not {v!r}")
            found = names.get(v)
            if found is None:
                raise KeyError(f"no {what} named {v!r}")
            out.extend(found)
        else:
            out.append(int(v))
    return np.asarray(out, dtype=np.int64)


def decode_starts(delta, counts):
    """Each call's start, relative ns, from start_delta rows that hold whole pairs one
    after the other (counts[i] rows for pair i): the running sum of the pair's deltas.

    The sum runs in uint64 whatever the stored width. One cumulative sum covers all
    the rows and each pair's is the difference from the sum before its first row;
    modulo 2**64 that difference is exact, and the file guarantees each pair's own sum
    is below 2**64."""
    delta = np.asarray(delta, dtype=np.uint64)
    counts = np.asarray(counts, dtype=np.int64)  # np.repeat refuses uint64 counts
    if len(delta) == 0:
        return delta
    total = np.cumsum(delta, dtype=np.uint64)
    firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    before = np.zeros(len(counts), dtype=np.uint64)
    inner = firsts > 0
    before[inner] = total[firsts[inner] - 1]
    with np.errstate(over="ignore"):
        return total - np.repeat(before, counts)


class Profile:
    """One scope profile: its tables as pandas DataFrames, its calls on demand.

    regions    one row per region (index: region id): name, module, offset, file,
               line, kind
    processes  one row per process (index: its row): pid, ppid, parent, rank,
               executable, arguments, start and end (unix ns), exit_status, ...
    pairs      one row per (process, region) with calls: count (rows in /events),
               aggregated (calls filters kept out of them), total_ns (outermost
               calls), total_all_ns (every call), self_ns, min_ns, max_ns, with the
               region's name, module, file, line and kind and the process's pid
    lanes      one row per thread lane: process, lane, tid, name, parent, start and
               end (relative ns), cpu_ns, with the process's pid and executable
    tasks      one row per task lane (scope_task_begin, OpenMP tasks): process, task (the
               /events/task value, from 1), id, name, parent (thread lane), start and
               end (relative ns), threads ("0,2"), busy_ns
    modules    one row per mapped object of each process
    heap       with SCOPE_HEAP=1, one row per process and region that allocated: process,
               region (its name), allocations, frees, bytes_allocated, peak_live_bytes,
               live_bytes_at_exit; empty otherwise
    heap_sites the call sites that allocated most in each region: process, region, bytes,
               allocations, address, function, file, line
    heap_totals one row per process with heap tracking: process, peak_live_bytes,
               live_bytes_at_exit, untracked
    metadata   the attributes of /metadata, as a dict
    """

    def __init__(self, path):
        self.path = str(path)
        self._file = h5py.File(self.path, "r")
        f = self._file
        schema = f.attrs.get("schema")
        if schema is None or int(schema) != SCHEMA:
            self._file.close()
            raise ValueError(f"{self.path}: schema {schema!r}; this reads schema {SCHEMA}")
        self.attrs = {k: _plain(v) for k, v in f.attrs.items() if k != "description"}
        self.metadata = {k: _plain(v) for k, v in f["metadata"].attrs.items() if k != "description"} \
            if "metadata" in f else {}
        self.processes = pd.DataFrame(_table(f["processes"], "processes"))
        self.processes.index.name = "process"
        self.regions = pd.DataFrame(_table(f["regions"], "regions"))
        self.regions.index.name = "region"
        self.pairs = self._pairs(_table(f["pairs"], "pairs"))
        self.lanes = self._lanes()
        self.tasks = self._tasks()
        self.modules = self._modules()
        self.heap = self._per_process("heap", "heap")
        self.heap_sites = self._per_process("heap_sites", "heap_sites")
        self.heap_totals = self._heap_totals()
        self.origin = int(self.processes["start"].min()) if len(self.processes) else 0
        self._names = {}
        for rid, name in enumerate(self.regions["name"]):
            self._names.setdefault(name, []).append(rid)

    # ---- Tables -------------------------------------------------------------------

    def _pairs(self, cols):
        if "total_all_ns" not in cols:
            cols["total_all_ns"] = cols["total_ns"].copy()  # older writers: total_ns is every call's
        pairs = pd.DataFrame(cols)
        pairs.index.name = "pair"
        region = self.regions.loc[pairs["region"].astype(np.int64).to_numpy()]
        for name in ("name", "module", "file", "line", "kind"):
            pairs[name] = region[name].to_numpy()
        process = self.processes.loc[pairs["process"].astype(np.int64).to_numpy()]
        pairs["pid"] = process["pid"].to_numpy()
        return pairs

    def _per_process(self, path, kind):
        frames = []
        for p in range(len(self.processes)):
            where = f"process{p}/{path}"
            if where not in self._file:
                continue
            t = pd.DataFrame(_table(self._file[where], kind))
            t.insert(0, "process", np.full(len(t), p, dtype=np.int64))
            frames.append(t)
        if not frames:
            return pd.DataFrame({"process": np.zeros(0, dtype=np.int64)})
        return pd.concat(frames, ignore_index=True)

    def _lanes(self):
        lanes = self._per_process("lanes/threads", "threads")
        lanes.insert(1, "lane", lanes.groupby("process").cumcount().astype(np.int64) if len(lanes) else
                     np.zeros(0, dtype=np.int64))
        process = self.processes.loc[lanes["process"].to_numpy()]
        lanes["pid"] = process["pid"].to_numpy()
        lanes["executable"] = process["executable"].to_numpy()
        return lanes

    def _tasks(self):
        tasks = self._per_process("lanes/tasks", "tasks")
        tasks.insert(1, "task", tasks.groupby("process").cumcount().astype(np.int64) + 1 if len(tasks) else
                     np.zeros(0, dtype=np.int64))
        return tasks

    def _modules(self):
        return self._per_process("modules", "modules")

    def _heap_totals(self):
        rows = {"process": [], **{k: [] for k in _HEAP_ATTRIBUTES}}
        for p in range(len(self.processes)):
            where = f"process{p}/heap"
            if where not in self._file:
                continue
            rows["process"].append(p)
            for k in _HEAP_ATTRIBUTES:
                rows[k].append(int(self._file[where].attrs[k]))
        return pd.DataFrame({k: np.asarray(v, dtype=np.int64) for k, v in rows.items()})

    def summary(self):
        """One row per region with calls: calls, total_ns, self_ns, total_all_ns, min_ns,
        max_ns summed (min and max taken) over its processes, most self time first."""
        g = self.pairs.groupby("region")
        s = pd.DataFrame({
            "name": g["name"].first(),
            "calls": (g["count"].sum() + g["aggregated"].sum()).astype(np.uint64),
            "total_ns": g["total_ns"].sum().astype(np.uint64),
            "self_ns": g["self_ns"].sum().astype(np.uint64),
            "total_all_ns": g["total_all_ns"].sum().astype(np.uint64),
            "min_ns": g["min_ns"].min().astype(np.uint64),
            "max_ns": g["max_ns"].max().astype(np.uint64),
        })
        s = s[s["calls"] > 0]
        return s.sort_values(["self_ns", "name"], ascending=[False, True], kind="mergesort")

    # ---- Calls --------------------------------------------------------------------

    @property
    def has_events(self):
        return "events" in self._file

    def _selected_pairs(self, region, process):
        pairs = self.pairs
        keep = pairs["count"].to_numpy() > 0
        regions = _ids(region, "region", self._names)
        if regions is not None:
            keep &= np.isin(pairs["region"].to_numpy().astype(np.int64), regions)
        processes = _ids(process, "process")
        if processes is not None:
            keep &= np.isin(pairs["process"].to_numpy().astype(np.int64), processes)
        return np.flatnonzero(keep)

    def _read_rows(self, name, firsts, counts):
        """Column name's rows of the given pairs, one pair after the other."""
        d = self._file["events"][name]
        total = int(counts.sum())
        if total == 0:
            return np.zeros(0, dtype=np.uint64)
        lo, hi = int(firsts.min()), int((firsts + counts).max())
        if len(firsts) > 256 or total * 4 >= hi - lo:
            # one read of the rows that cover them all, then the pairs' rows out of it
            block = d[lo:hi]
            offsets = firsts - lo
            within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
            return block[np.repeat(offsets, counts) + within].astype(np.uint64)
        return np.concatenate([d[int(f):int(f + c)] for f, c in zip(firsts, counts)]).astype(np.uint64)

    def _calls(self, region=None, process=None, lane=None, since=None, until=None):
        """The selected calls as a dict of numpy columns (events() without pandas)."""
        if not self.has_events:
            raise ValueError(f"{self.path} holds aggregates only: it has no /events")
        sel = self._selected_pairs(region, process)
        pairs = self.pairs.iloc[sel]
        firsts = pairs["first"].to_numpy().astype(np.int64)
        counts = pairs["count"].to_numpy().astype(np.int64)  # np.repeat refuses uint64 counts
        ev = self._file["events"]
        names = list(_EVENT_COLUMNS) + [c for c in _EVENT_OPTIONAL if c in ev]
        raw = {name: self._read_rows(name, firsts, counts) for name in names}
        rel = decode_starts(raw["start_delta"], counts)
        proc = np.repeat(pairs["process"].to_numpy().astype(np.int64), counts)
        starts = self.processes["start"].to_numpy().astype(np.uint64)[proc] + rel
        duration = raw["duration"]
        within = np.arange(len(rel), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        out = {
            "row": np.repeat(firsts, counts) + within,
            "pair": np.repeat(sel.astype(np.int64), counts),
            "process": proc,
            "region": np.repeat(pairs["region"].to_numpy().astype(np.int64), counts),
            "name": np.repeat(pairs["name"].to_numpy(), counts),
            "lane": raw["thread"].astype(np.int64),
            "task": raw["task"].astype(np.int64),
            "depth": raw["depth"].astype(np.int64),
            "start": starts,
            "end": starts + duration,
            "rel_start": rel,
            "duration": duration,
            "flags": raw["flags"].astype(np.uint8),
            "never_returned": (raw["flags"] & NEVER_RETURNED) != 0,
        }
        for name in _EVENT_OPTIONAL:  # counterK: the change of /processes/counters' K-th counter
            if name in raw:
                out[name] = raw[name]
        keep = np.ones(len(rel), dtype=bool)
        lanes = _ids(lane, "lane")
        if lanes is not None:
            keep &= np.isin(out["lane"], lanes)
        since, until = parse_time(since), parse_time(until)
        if since is not None:
            keep &= out["end"] >= np.uint64(self.origin + since)
        if until is not None:
            keep &= out["start"] < np.uint64(self.origin + until)
        if not keep.all():
            out = {k: v[keep] for k, v in out.items()}
        return out

    def events(self, region=None, process=None, lane=None, since=None, until=None):
        """The calls as a DataFrame, one row per call, the pairs' calls one after the other
        (in /pairs order, each pair's by start).

        region   region id or name, or a list of them
        process  process row, or a list
        lane     thread lane, or a list (of every selected process)
        since    only calls that end at this time or later
        until    only calls that start before this time
                 (times: ns since the profile's earliest process start, or "10ms")

        Columns: row (in /events), pair, process, region, name, lane, task, depth,
        start and end (unix ns), rel_start (ns since its process started), duration (ns),
        flags, never_returned; bytes_sent and bytes_received when the file has them."""
        return pd.DataFrame(self._calls(region, process, lane, since, until))

    # ---- Views --------------------------------------------------------------------

    def tree(self, process=0, lane=None):
        """The call tree of a process: one row per call path of each lane (or of that
        lane), depth first, children by most total time. See scope_profile.tree."""
        from ._tree import call_tree
        return call_tree(self, process, lane)

    def plot_timeline(self, process=None, since=None, until=None, path=None, **kwargs):
        """The calls on a time axis, a band per thread lane; a matplotlib Figure
        (saved to path when given). See scope_profile.plot."""
        from ._plot import timeline
        return timeline(self, process=process, since=since, until=until, path=path, **kwargs)

    def plot_flame(self, process=0, lane=None, path=None, **kwargs):
        """The call tree as a flame graph (widths: total time); a matplotlib Figure
        (saved to path when given)."""
        from ._plot import flame
        return flame(self, process=process, lane=lane, path=path, **kwargs)

    def describe(self, name):
        """What the file says of a group or dataset ("events/duration"): its description,
        unit and the meanings of its values (bit_0, values), as a dict."""
        return {k: _plain(v) for k, v in self._file[name].attrs.items()}

    # ---- File ---------------------------------------------------------------------

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<scope profile {self.path}: {len(self.processes)} processes, {len(self.regions)} regions, "
                f"{int(self.pairs['count'].sum())} calls>")


def load(path):
    """Opens the scope profile at path; returns a Profile (close it, or use it in a with)."""
    return Profile(path)
