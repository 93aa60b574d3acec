# SPDX-License-Identifier: MIT
"""Timeline and flame graph of a profile with matplotlib's Agg renderer (no display needed)."""

import os
import zlib

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib import colormaps


def _figure(width, height):
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # the figure renders with Agg, whatever pyplot's backend
    return fig


def _colors(names):
    """A colour per region name, the same in every plot."""
    cmap = colormaps["tab20"]
    return [cmap(zlib.crc32(n.encode("utf-8")) % 20) for n in names]


def _boxes(x0, x1, y0, y1):
    """Rectangles as PolyCollection vertices."""
    return np.stack([np.column_stack([x0, y0]), np.column_stack([x1, y0]),
                     np.column_stack([x1, y1]), np.column_stack([x0, y1])], axis=1)


def _save(fig, path):
    if path is not None:
        fig.savefig(os.fspath(path), dpi=100)
    return fig


def timeline(profile, process=None, since=None, until=None, path=None, max_depth=None, max_calls=100_000,
             width=12):
    """Every call as a bar from its start to its end, one band per thread lane of each
    process (calls deeper in the stack lower in the band); time in ms since the
    profile's earliest process start. Past max_calls calls, the longest max_calls are
    drawn (the others would be narrower than a pixel, or nearly). Returns the Figure."""
    calls = profile._calls(process=process, since=since, until=until)
    keep = np.ones(len(calls["row"]), dtype=bool) if max_depth is None else calls["depth"] <= max_depth
    found = int(keep.sum())
    if found > max_calls:
        at = np.flatnonzero(keep)
        longest = np.argpartition(calls["duration"][at], found - max_calls)[found - max_calls:]
        keep = np.sort(at[longest])
    ev = pd.DataFrame({k: v[keep] for k, v in calls.items()})
    lanes = ev[["process", "lane"]].drop_duplicates().sort_values(["process", "lane"])
    deepest = ev.groupby(["process", "lane"])["depth"].max() if len(ev) else None
    band, top, labels, ticks = {}, 0.0, [], []
    info = profile.lanes.set_index(["process", "lane"])
    for p, ln in lanes.itertuples(index=False):
        rows = int(deepest[(p, ln)]) + 1
        band[(p, ln)] = top
        name = info.loc[(p, ln), "name"] if (p, ln) in info.index else ""
        labels.append(f"p{p} lane {ln} {name}".rstrip())
        ticks.append(top + rows / 2)
        top += rows + 1
    fig = _figure(width, max(2.0, 1.0 + 0.25 * top))
    ax = fig.add_subplot()
    if len(ev):
        base = np.array([band[k] for k in zip(ev["process"], ev["lane"])])
        y0 = base + ev["depth"].to_numpy()
        x0 = (ev["start"].to_numpy() - np.uint64(profile.origin)).astype(np.float64) / 1e6
        x1 = (ev["end"].to_numpy() - np.uint64(profile.origin)).astype(np.float64) / 1e6
        x1 = np.maximum(x1, x0 + 1e-6)
        ax.add_collection(PolyCollection(_boxes(x0, x1, y0 + 0.05, y0 + 0.95),
                                         facecolors=_colors(ev["name"].tolist()), edgecolors="none"))
        ax.set_xlim(float(x0.min()), float(x1.max()))
    ax.set_ylim(top, 0)
    ax.set_yticks(ticks, labels)
    ax.set_xlabel("ms since the first process started")
    shown = f"the {len(ev)} longest of {found} calls" if len(ev) < found else f"{found} calls"
    ax.set_title(f"{os.path.basename(profile.path)}: {shown}")
    return _save(fig, path)


def flame(profile, process=0, lane=None, path=None, width=12):
    """The call tree of a process (every lane's paths together, or one lane's) as a
    flame graph: a box per call path, as wide as its total time, callees above their
    caller. Returns the Figure."""
    tree = profile.tree(process=process, lane=lane)
    paths = tree.groupby("path", sort=False).agg(total=("total", "sum"), level=("level", "first"),
                                                 name=("name", "first"))
    kids = {}
    for p in paths.index:
        kids.setdefault(p.rpartition(";")[0] if ";" in p else None, []).append(p)
    x, todo, left = {}, [], 0
    for root in sorted(kids.get(None, []), key=lambda p: -int(paths.at[p, "total"])):
        todo.append((root, left))
        left += int(paths.at[root, "total"])
    while todo:
        p, at = todo.pop()
        x[p] = at
        for k in sorted(kids.get(p, []), key=lambda q: -int(paths.at[q, "total"])):
            todo.append((k, at))
            at += int(paths.at[k, "total"])
    order = list(x)
    x0 = np.array([x[p] for p in order], dtype=np.float64) / 1e6
    w = np.array([int(paths.at[p, "total"]) for p in order], dtype=np.float64) / 1e6
    y0 = np.array([int(paths.at[p, "level"]) for p in order], dtype=np.float64)
    names = [paths.at[p, "name"] for p in order]
    levels = int(y0.max()) + 1 if len(order) else 1
    fig = _figure(width, max(2.0, 1.0 + 0.3 * levels))
    ax = fig.add_subplot()
    if order:
        ax.add_collection(PolyCollection(_boxes(x0, x0 + w, y0, y0 + 0.9), facecolors=_colors(names),
                                         edgecolors="white", linewidths=0.5))
        span = float((x0 + w).max())
        ax.set_xlim(0, span)
        for a, b, y, n in zip(x0, w, y0, names):
            if b > span / 40:
                ax.text(a + b / 50, y + 0.45, n, va="center", ha="left", fontsize=7, clip_on=True)
    ax.set_ylim(0, levels)
    ax.set_yticks([])
    ax.set_xlabel("ms of total time")
    ax.set_title(f"{os.path.basename(profile.path)}: process {process}" +
                 ("" if lane is None else f", lane {lane}"))
    return _save(fig, path)
