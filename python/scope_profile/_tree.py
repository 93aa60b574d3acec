# SPDX-License-Identifier: MIT
"""The call tree of a process, rebuilt from its calls' starts, depths and durations."""

import numpy as np
import pandas as pd


def _replay(lanes, order, start, depth, duration, region):
    """Nodes of each lane's tree: {(lane, parent, region): node} and their sums.

    The calls come by start, a caller before a callee that starts at the same ns,
    then in pair order. On each lane a call closes the calls open on top of the stack
    that sit as deep or deeper, or that ended before it started; it is then a callee
    of the call left on top. self = duration less the direct callees' durations."""
    key_of = {}
    parent, node_lane, node_region, calls, total, self_ = [], [], [], [], [], []
    stacks = {}

    def close(stack):
        d, end, node, dur, child = stack.pop()
        self_[node] += dur - child

    for i in order:
        ln, s, dep, dur = lanes[i], start[i], depth[i], duration[i]
        stack = stacks.setdefault(ln, [])
        while stack and (stack[-1][0] >= dep or stack[-1][1] < s):
            close(stack)
        under = stack[-1][2] if stack else -1
        key = (ln, under, region[i])
        node = key_of.get(key)
        if node is None:
            node = key_of[key] = len(parent)
            parent.append(under)
            node_lane.append(ln)
            node_region.append(region[i])
            calls.append(0)
            total.append(0)
            self_.append(0)
        calls[node] += 1
        total[node] += dur
        if stack:
            stack[-1][4] += dur
        stack.append([dep, s + dur, node, dur, 0])
    for stack in stacks.values():
        while stack:
            close(stack)
    return parent, node_lane, node_region, calls, total, self_


def call_tree(profile, process=0, lane=None):
    """The call tree of process (a row of /processes) on every thread lane, or on lane.

    One row per call path of a lane, depth first: each lane's top-level calls, each
    followed by its callees, children in the order of most total time, then name, then
    region id (scope-report --tree's order). Columns: node (the index), parent (-1 at
    the top of a lane), lane, level (0 at the top), region, name, calls, total (ns of
    the calls on this path), self (their time less their callees', 0 at least), path
    ("main;a;b")."""
    ev = profile.events(process=process, lane=lane)
    start = ev["rel_start"].to_numpy()
    depth = ev["depth"].to_numpy()
    order = np.lexsort((ev["pair"].to_numpy(), depth, start))
    parent, lanes, region, calls, total, self_ = _replay(
        ev["lane"].tolist(), order.tolist(), start.tolist(), depth.tolist(),
        ev["duration"].tolist(), ev["region"].tolist())
    names = profile.regions["name"].tolist()
    children = {}
    for node, up in enumerate(parent):
        children.setdefault((lanes[node], up), []).append(node)

    def ranked(nodes):
        return sorted(nodes, key=lambda n: (-total[n], names[region[n]], region[n]))

    rows = []
    for ln in sorted({ln for ln, up in children if up == -1}):
        todo = [(n, 0, names[region[n]]) for n in reversed(ranked(children[(ln, -1)]))]
        while todo:
            node, level, path = todo.pop()
            rows.append((node, level, path))
            kids = ranked(children.get((ln, node), []))
            todo.extend((k, level + 1, path + ";" + names[region[k]]) for k in reversed(kids))
    ids = [r[0] for r in rows]
    renumber = {old: new for new, old in enumerate(ids)}
    out = pd.DataFrame({
        "parent": np.array([renumber[parent[n]] if parent[n] >= 0 else -1 for n in ids], dtype=np.int64),
        "lane": np.array([lanes[n] for n in ids], dtype=np.int64),
        "level": np.array([r[1] for r in rows], dtype=np.int64),
        "region": np.array([region[n] for n in ids], dtype=np.int64),
        "name": [names[region[n]] for n in ids],
        "calls": np.array([calls[n] for n in ids], dtype=np.uint64),
        "total": np.array([total[n] for n in ids], dtype=np.uint64),
        "self": np.array([max(self_[n], 0) for n in ids], dtype=np.uint64),
        "path": [r[2] for r in rows],
    })
    out.index.name = "node"
    return out
