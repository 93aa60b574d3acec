# SPDX-License-Identifier: MIT
"""scope_profile against scope-report's CSV and against plain h5py reads of real profiles."""

import csv
import io
import json

import h5py
import numpy as np
import pytest

import scope_profile


def report_csv(made, *args):
    return list(csv.DictReader(io.StringIO(made.tool("scope-report", "--format", "csv", *args))))


def h5_starts(path):
    """{row of /events: (process, region, absolute start)} decoded pair by pair with Python ints."""
    out = {}
    with h5py.File(path, "r") as f:
        pairs, ev = f["pairs"], f["events"]
        delta = [int(x) for x in ev["start_delta"][:]]
        starts = [int(x) for x in f["processes/start"][:]]
        for p in range(len(pairs["first"])):
            first, count = int(pairs["first"][p]), int(pairs["count"][p])
            proc, region = int(pairs["process"][p]), int(pairs["region"][p])
            t = 0
            for row in range(first, first + count):
                t += delta[row]
                out[row] = (proc, region, starts[proc] + t)
    return out


def test_summary_matches_report(made):
    with scope_profile.load(made.path) as p:
        s = p.summary()
        mine = {r.name: (int(r.calls), int(r.total_ns), int(r.self_ns)) for r in s.itertuples()}
    theirs = {r["region"]: (int(r["calls"]), int(r["total_ns"]), int(r["self_ns"])) for r in report_csv(made)}
    assert mine == theirs


def test_tables_join_names(made):
    with scope_profile.load(made.path) as p, h5py.File(made.path, "r") as f:
        names = f["regions/name"].asstr()[:]
        files = f["regions/file"].asstr()[:]
        kinds = f["regions/kind"].asstr()[:]
        region = f["pairs/region"][:]
        assert list(p.pairs["name"]) == [names[r] for r in region]
        assert list(p.pairs["file"]) == [files[r] for r in region]
        assert list(p.pairs["kind"]) == [kinds[r] for r in region]
        assert list(p.pairs["line"]) == [int(f["regions/line"][r]) for r in region]
        assert list(p.pairs["count"]) == [int(c) for c in f["pairs/count"][:]]
        assert list(p.pairs["pid"]) == [int(f["processes/pid"][q]) for q in f["pairs/process"][:]]
        assert list(p.processes["pid"]) == [int(x) for x in f["processes/pid"][:]]
        for q in range(len(p.processes)):
            tids = [int(x) for x in f[f"process{q}/lanes/threads/tid"][:]]
            lanes = p.lanes[p.lanes["process"] == q]
            assert list(lanes["tid"]) == tids
            assert list(lanes["lane"]) == list(range(len(tids)))
            assert set(lanes["pid"]) == {int(f["processes/pid"][q])}


def test_events_decode_exactly(made):
    truth = h5_starts(made.path)
    with scope_profile.load(made.path) as p:
        ev = p.events()
        assert len(ev) == len(truth) == int(p.pairs["count"].sum())
        got = {int(r.row): (int(r.process), int(r.region), int(r.start)) for r in ev.itertuples()}
        assert got == truth
        assert (ev["end"] - ev["start"] == ev["duration"]).all()
        assert ev["start"].dtype == np.uint64


def test_thread_lanes(threads):
    with scope_profile.load(threads.path) as p:
        names = dict(zip(p.lanes["lane"], p.lanes["name"]))
        assert sorted(n for n in names.values() if n.startswith("worker-")) == [f"worker-{k}" for k in range(1, 5)]
        work = p.events(region="work")
        per_lane = work.groupby("lane").size()
        for lane, n in per_lane.items():
            k = int(names[lane].split("-")[1])
            assert n == 1000 * k
        one = p.events(region="work", lane=int(per_lane.index[0]))
        assert set(one["lane"]) == {per_lane.index[0]} and len(one) == per_lane.iloc[0]


def test_task_lanes(tasks):
    with scope_profile.load(tasks.path) as p:
        by_name = dict(zip(p.tasks["name"], p.tasks["task"]))
        assert sorted(by_name) == ["relay", "relay again", "side"]
        steps = p.events(region="task_step")
        assert steps.groupby("task").size().to_dict() == {by_name["relay"]: 12, by_name["side"]: 2,
                                                          by_name["relay again"]: 1}
        relay = p.tasks[p.tasks["name"] == "relay"].iloc[0]
        assert int(relay["id"]) == 7 and relay["threads"] == "0,1"


def test_counters(counted):
    with scope_profile.load(counted.path) as p:
        assert p.processes["counters"][0] == "perf::TASK-CLOCK,perf::PAGE-FAULTS"
        touch = p.events(region="touch_pages")
        assert list(touch["counter1"]) == [64] * 5
        row = p.pairs[p.pairs["name"] == "touch_pages"].iloc[0]
        assert int(row["counter1_total"]) == 320


def test_time_window(threads):
    with scope_profile.load(threads.path) as p:
        ev = p.events(region="work")
        rel = ev["start"].astype(np.int64) - p.origin
        end = ev["end"].astype(np.int64) - p.origin
        mid = int(np.median(rel))
        assert len(p.events(region="work", since=mid)) == int((end >= mid).sum())
        assert len(p.events(region="work", until=mid)) == int((rel < mid).sum())
        assert len(p.events(region="work", until=f"{mid}ns")) == int((rel < mid).sum())
        assert len(p.events(region=["work", "worker"])) == len(ev) + 4


def test_processes_of_a_fork(forked):
    with scope_profile.load(forked.path) as p:
        assert len(p.processes) == 2
        assert list(p.processes["parent"]) == [-1, 0]
        for q in (0, 1):
            calls = p.events(process=q).groupby("name").size()
            assert (calls["a"], calls["b"], calls["c"]) == (3, 3, 6)
        assert len(p.events(process=[0, 1], region="c")) == 12


def tree_rows(p, process):
    t = p.tree(process=process)
    return [(process, int(r.lane), int(r.level), int(r.calls), int(r.total), int(r.self), r.name, r.path)
            for r in t.itertuples()]


def test_tree_matches_report(made):
    rows = report_csv(made, "--tree", "--per-thread")
    theirs = [(int(r["process"]), int(r["lane"]), int(r["level"]), int(r["calls"]), int(r["total_ns"]),
               int(r["self_ns"]), r["region"], r["path"]) for r in rows]
    with scope_profile.load(made.path) as p:
        mine = [row for q in range(len(p.processes)) for row in tree_rows(p, q)]
    assert mine == theirs


def test_recursive_tree(fib):
    with scope_profile.load(fib.path) as p:
        t = p.tree(process=0)
        fibs = t[t["name"] == "fib"]
        assert int(fibs["calls"].sum()) == 21891
        assert int(fibs["level"].max()) == 20  # main, then fib(20) down to fib(1)
        top = fibs[fibs["level"] == 1]
        pair = p.pairs[p.pairs["name"] == "fib"].iloc[0]
        assert int(top["total"].iloc[0]) == int(pair["total_ns"])  # the outermost call only
        assert int(fibs["total"].sum()) == int(pair["total_all_ns"])
        assert (t.loc[t["parent"][t["parent"] >= 0], "level"].to_numpy() + 1 ==
                t["level"][t["parent"] >= 0].to_numpy()).all()


def test_never_returned(exited):
    with scope_profile.load(exited.path) as p:
        ev = p.events()
        flagged = set(ev[ev["never_returned"]]["name"])
        assert flagged == {"main", "leave"}
        assert not ev[ev["name"] == "say"]["never_returned"].any() if "say" in set(ev["name"]) else True


def test_decode_starts_widths_and_uint64_counts():
    # uint8 deltas whose sums pass 255; counts as the file stores them, uint64
    delta = np.array([200, 100, 100, 7, 250, 250, 250], dtype=np.uint8)
    counts = np.array([3, 1, 3], dtype=np.uint64)
    assert scope_profile.decode_starts(delta, counts).tolist() == [200, 300, 400, 7, 250, 500, 750]
    # sums near 2**64: exact, a pair's sum starts afresh at its first row
    big = np.array([2**63, 2**63 - 2, 1, 2**64 - 1, 5], dtype=np.uint64)
    out = scope_profile.decode_starts(big, np.array([3, 1, 1], dtype=np.uint64))
    assert out.tolist() == [2**63, 2**64 - 2, 2**64 - 1, 2**64 - 1, 5]


def test_plots_write_pngs(threads, fib, forked, tmp_path):
    made = []
    with scope_profile.load(threads.path) as p:
        made.append((p.plot_timeline(path=tmp_path / "timeline.png"), tmp_path / "timeline.png"))
        made.append((p.plot_flame(path=tmp_path / "flame.png"), tmp_path / "flame.png"))
    with scope_profile.load(fib.path) as p:
        made.append((p.plot_flame(lane=0, path=tmp_path / "fib.png"), tmp_path / "fib.png"))
    with scope_profile.load(forked.path) as p:
        made.append((p.plot_timeline(since="0ms", path=tmp_path / "fork.png"), tmp_path / "fork.png"))
    for fig, png in made:
        assert fig.axes and fig.axes[0].collections, f"{png.name}: nothing drawn"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, png.name


def test_descriptions(threads):
    with scope_profile.load(threads.path) as p:
        d = p.describe("events/start_delta")
        assert d["unit"] == "ns" and "previous call's start" in d["description"]
        assert "never returned" in p.describe("events/flags")["bit_0"]
        assert p.describe("regions/kind")["values"] == "function, mpi, wait, io, user, openmp"


def test_refuses_other_schemas(threads, tmp_path):
    other = tmp_path / "schema2.h5"
    other.write_bytes(open(threads.path, "rb").read())
    with h5py.File(other, "r+") as f:
        f.attrs["schema"] = np.int64(2)
    with pytest.raises(ValueError, match="schema"):
        scope_profile.load(other)


def test_tree_fast_path_is_the_walk(made, monkeypatch):
    from scope_profile import _tree
    with scope_profile.load(made.path) as p:
        for q in range(len(p.processes)):
            ev = p._calls(process=q)
            order = np.lexsort((ev["pair"], ev["depth"], ev["rel_start"]))
            args = (ev["lane"][order], ev["depth"][order], ev["rel_start"][order],
                    (ev["rel_start"] + ev["duration"])[order])
            fast = _tree._parents_by_depth(*args)
            assert fast is not None, "the profile's calls take the numpy path"
            slow = _tree._parents_by_stack(*args)
            assert fast[0].tolist() == slow[0].tolist() and fast[1].tolist() == slow[1].tolist()
        trees = [p.tree(process=q) for q in range(len(p.processes))]
        monkeypatch.setattr(_tree, "_parents_by_depth", lambda *a: None)
        for q, want in enumerate(trees):
            assert p.tree(process=q).equals(want)


def test_tree_fast_path_refuses_what_it_cannot_do():
    from scope_profile import _tree
    lane = np.zeros(4, dtype=np.int64)
    # a call two levels below the one before it: the stack decides
    skip = (lane, np.array([0, 2, 1, 2]), np.array([0, 1, 2, 3], dtype=np.uint64),
            np.array([10, 5, 9, 4], dtype=np.uint64))
    assert _tree._parents_by_depth(*skip) is None
    assert _tree._parents_by_stack(*skip)[0].tolist() == [-1, 0, 0, 2]
    # a caller that ended before its callee started
    ended = (lane, np.array([0, 1, 1, 2]), np.array([0, 1, 5, 7], dtype=np.uint64),
             np.array([10, 4, 6, 8], dtype=np.uint64))
    assert _tree._parents_by_depth(*ended) is None
    assert _tree._parents_by_stack(*ended)[0].tolist() == [-1, 0, 0, 0]


def test_heap_tables(heaped, threads):
    with scope_profile.load(heaped.path) as p:
        rows = {r.region: (r.allocations, r.frees, r.bytes_allocated, r.peak_live_bytes, r.live_bytes_at_exit)
                for r in p.heap.itertuples()}
        sites = p.heap_sites
        totals = p.heap_totals
    # figures the program's code fixes (tests/heap.py)
    assert rows["leaky()"] == (3, 1, 3000, 3000, 2000)
    assert rows["peaky()"] == (3, 3, 102400, 98304, 0)
    assert rows["cxx()"] == (4, 3, 406, 373, 77)
    doc = json.loads(heaped.tool("scope-report", "--heap", "--format", "json", "--names", "full"))
    report = {(x["region"] if x["region"] != "(outside any region)" else ""):
              (x["allocations"], x["frees"], x["bytes_allocated"], x["peak_live_bytes"], x["live_bytes_at_exit"])
              for x in doc["regions"]}
    assert rows == report
    assert list(totals["process"]) == [0]
    assert int(totals["live_bytes_at_exit"][0]) == doc["live_bytes_at_exit"] == sum(r[4] for r in rows.values())
    assert int(totals["untracked"][0]) == 0
    big = sites[sites["bytes"] == 65536]
    assert list(big["region"]) == ["peaky()"] and list(big["allocations"]) == [1]
    assert list(big["file"].map(lambda f: f.rsplit("/", 1)[-1])) == ["heap.cpp"]
    with scope_profile.load(threads.path) as p:
        assert p.heap.empty and p.heap_sites.empty and p.heap_totals.empty
