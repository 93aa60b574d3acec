# SPDX-License-Identifier: MIT
"""The call tree of a process, rebuilt from its calls' starts, depths and durations."""

import numpy as np
import pandas as pd

# The order in which scope-report's walk (lib/walk.c) meets a process's calls.
_ORDER_KEYS = ("pair", "depth", "rel_start")  # np.lexsort: last key first


def _parents_by_stack(lane, depth, start, end):
    """Each call's caller (-1: none) and level, the calls given in walk order: on each
    lane, a call closes the calls open on top of the stack that sit as deep or deeper,
    or that ended before it started; it is a callee of the call then on top. Exact, one
    call at a time."""
    parent, level = [-1] * len(lane), [0] * len(lane)
    depth, end = depth.tolist(), end.tolist()
    stacks = {}
    for i, (ln, d, s) in enumerate(zip(lane.tolist(), depth, start.tolist())):
        stack = stacks.setdefault(ln, [])
        while stack and (depth[stack[-1]] >= d or end[stack[-1]] < s):
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        level[i] = len(stack)
        stack.append(i)
    return np.asarray(parent, dtype=np.int64), np.asarray(level, dtype=np.int64)


def _parents_by_depth(lane, depth, start, end):
    """The same callers and levels at numpy speed, or None where that would not be exact.

    A call's caller is then the lane's latest earlier call one level up. The walk gives
    the same when, on every lane, no call is more than one level below the call before
    it (so a level is never skipped), and every such caller is still running when its
    callee starts (so the stack is only ever closed by depth). A call's level is then
    its depth less that of the lane's latest call without a caller."""
    n = len(lane)
    parent = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return parent, np.zeros(0, dtype=np.int64)
    by_lane = np.argsort(lane, kind="stable")  # walk order within each lane
    ln, dp = lane[by_lane], depth[by_lane].astype(np.int64)
    same = ln[1:] == ln[:-1]
    if (dp[1:][same] > dp[:-1][same] + 1).any():
        return None
    _, lane_rank = np.unique(ln, return_inverse=True)
    levels = int(dp.max()) + 2
    if (int(lane_rank.max()) + 1) * levels * n >= 2**62:
        return None
    pos = np.arange(n, dtype=np.int64)
    group = lane_rank.astype(np.int64) * levels + dp
    table = np.sort(group * n + pos)
    at = np.searchsorted(table, (group - 1) * n + pos, side="left") - 1
    cand = table[np.maximum(at, 0)]
    found = (at >= 0) & (dp > 0) & (cand // n == group - 1)
    up = by_lane[cand[found] % n]
    me = by_lane[found]
    if (end[up] < start[me]).any():
        return None
    parent[me] = up
    # lanes start with a call without a caller: a running maximum finds each one's latest
    root_pos = np.maximum.accumulate(np.where(found, -1, pos))
    level = np.empty(n, dtype=np.int64)
    level[by_lane] = dp - dp[root_pos]
    return parent, level


def _sum_by(keys, values, n, dtype):
    """Exact sums of values by key (0 <= key < n) in dtype."""
    out = np.zeros(n, dtype=dtype)
    if len(keys):
        order = np.argsort(keys, kind="stable")
        k = keys[order]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        out[k[starts]] = np.add.reduceat(values[order].astype(dtype), starts)
    return out


def call_tree(profile, process=0, lane=None):
    """The call tree of process (a row of /processes) on every thread lane, or on lane.

    One row per call path of a lane, depth first: each lane's top-level calls, each
    followed by its callees, children in the order of most total time, then name, then
    region id (scope-report --tree's order). Columns: node (the index), parent (-1 at
    the top of a lane), lane, level (0 at the top), region, name, calls, total (ns of
    the calls on this path), self (their time less their callees', 0 at least), path
    ("main;a;b")."""
    ev = profile._calls(process=process, lane=lane)
    order = np.lexsort(tuple(ev[k] for k in _ORDER_KEYS))
    lanes = ev["lane"][order]
    depth = ev["depth"][order]
    start = ev["rel_start"][order]
    duration = ev["duration"][order]
    region = ev["region"][order]
    end = start + duration
    found = _parents_by_depth(lanes, depth, start, end)
    parent, level = found if found is not None else _parents_by_stack(lanes, depth, start, end)
    names = profile.regions["name"].tolist()

    # a node per (lane, caller's node, region), level by level
    lane_values, lane_rank = np.unique(lanes, return_inverse=True)
    nlanes, nregions = max(len(lane_values), 1), max(len(names), 1)
    if len(order) * nlanes * nregions >= 2**62:
        raise ValueError(f"{profile.path}: too many calls, lanes and regions for a call tree")
    node = np.full(len(order), -1, dtype=np.int64)
    node_lane, node_up, node_region = [], [], []
    by_level = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[by_level], np.arange(int(level.max()) + 2 if len(level) else 0))
    for lv in range(len(bounds) - 1):
        at = by_level[bounds[lv]:bounds[lv + 1]]
        up = np.where(parent[at] >= 0, node[np.maximum(parent[at], 0)], -1)
        # one integer per (caller's node, lane, region): below (nodes + 1) * lanes * regions
        key = ((up + 1) * nlanes + lane_rank[at]) * nregions + region[at].astype(np.int64)
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        node[at] = len(node_lane) + inverse.reshape(-1)
        node_lane.extend(lanes[at][first].tolist())
        node_up.extend(up[first].tolist())
        node_region.extend(region[at][first].tolist())
    nn = len(node_lane)
    calls = np.bincount(node, minlength=nn).astype(np.uint64)
    total = _sum_by(node, duration, nn, np.uint64)
    has = parent >= 0
    callees = _sum_by(parent[has], duration[has], len(order), np.uint64)
    own = duration.astype(np.int64) - callees.astype(np.int64)  # below 0 by clock rounding
    self_ = _sum_by(node, own, nn, np.int64)

    children = {}
    for n_, up in enumerate(node_up):
        children.setdefault((node_lane[n_], up), []).append(n_)
    tot = total.tolist()

    def ranked(nodes):
        return sorted(nodes, key=lambda n_: (-tot[n_], names[node_region[n_]], node_region[n_]))

    rows = []
    for ln in sorted({ln for ln, up in children if up == -1}):
        todo = [(n_, 0, names[node_region[n_]]) for n_ in reversed(ranked(children[(ln, -1)]))]
        while todo:
            n_, lv, path = todo.pop()
            rows.append((n_, lv, path))
            kids = ranked(children.get((ln, n_), []))
            todo.extend((k, lv + 1, path + ";" + names[node_region[k]]) for k in reversed(kids))
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    renumber = np.full(nn + 1, -1, dtype=np.int64)
    renumber[ids] = np.arange(len(ids))
    ups = np.array(node_up, dtype=np.int64)[ids] if len(ids) else np.zeros(0, dtype=np.int64)
    out = pd.DataFrame({
        "parent": np.where(ups >= 0, renumber[ups], -1),
        "lane": np.array(node_lane, dtype=np.int64)[ids] if len(ids) else ids,
        "level": np.array([r[1] for r in rows], dtype=np.int64),
        "region": np.array(node_region, dtype=np.int64)[ids] if len(ids) else ids,
        "name": [names[node_region[n_]] for n_ in ids],
        "calls": calls[ids],
        "total": total[ids],
        "self": np.maximum(self_[ids], 0).astype(np.uint64),
        "path": [r[2] for r in rows],
    })
    out.index.name = "node"
    return out
