#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scope-report --html on real profiles, each page drawn by headless Chromium and read back from its DOM.

Usage: htmlpage.py CASE --bin DIR --progs DIR --workdir DIR [--sanitized LIBASAN]

Cases:
  page     calls-gcc-O2 and threads-gcc-O2: the region table holds the calls,
           total and self of `scope-report --format csv`, the flame graph a
           block per call path with its calls, the timeline a row per lane
           with bars named by their regions; a screenshot (html-page.png) is
           kept and must show drawn blocks. Opened on one call's window
           (#since=&until=), the timeline draws the calls too narrow for
           the whole run (html-zoom.png); opened sorted (#regions=calls.up,
           region, ...), the table's rows are in that order. A profile of
           totals only gets
           its table and a note instead of pictures.
  offline  the page asks for nothing: no src, href, url() or @import in it;
           drawn with every host name unresolvable, it is complete; served
           over HTTP, its server gets no request but for the page.
  bounded  400000 calls, a program of 1500 functions, and one of 301
           threads: the file stays small, the page says what it summed,
           draws at most its limits (1000 rows, 256 lanes), and the summed
           rows and lanes add up to the profile's figures.
  ranks    an MPI job of 4 ranks (Open MPI's mpirun): the Ranks section has
           a row per region with the min, mean and max of its self time over
           the ranks, and a heat map of 4 columns (skipped without mpirun).
  manyranks  a job of 1030 ranks (one profile copied per rank, each
           rank's self times scaled by (rank % 7) + 1, merged): the heat
           map has 515 columns, each the mean of two ranks, and the
           timeline 256 lanes and one that sums the other 774.

Exit status: 0 pass, 1 fail, 77 skip (no Chromium, or no MPI for ranks).
"""

import csv
import functools
import html
import http.server
import io
import json
import os
import re
import shutil
import sys
import threading

import h5py

from harness import Skipped, ToolTest, cases_of, expect, expect_eq, parser, run_case
from viewer import Browser, colored_share, install_chromium

KIB = 1024


class Html(ToolTest):
    def __init__(self, a):
        super().__init__(a)
        self.chromium = None

    def browser(self):
        if not self.chromium:
            self.chromium = install_chromium()
        return Browser(self.chromium, self.work)

    def profile(self, prog, *args, out="p.h5"):
        r = self.run([self.scope_run, "-q", "-o", self.path(out), "--", self.prog(prog), *args],
                     env=self.env(preload_asan=True), quiet=True)
        r.expect_rc(0)
        return self.path(out)

    def html(self, h5, name, *options):
        out = self.path(name)
        self.run([self.report, "--html", *options, "-o", out, h5], quiet=True).expect_rc(0)
        expect(os.path.isfile(out), f"scope-report wrote no {out}")
        return out

    def csv(self, h5, *options):
        r = self.run([self.report, "--format", "csv", *options, h5], quiet=True)
        r.expect_rc(0)
        return {row["region"]: row for row in csv.DictReader(io.StringIO(r.stdout))}

    def drawn(self, page, *chromium_args):
        """The page as Chromium rendered it, its script having run."""
        dom = self.browser().run("file://" + page, "--dump-dom", *chromium_args)
        expect('data-drawn="1"' in dom, f"{page}: the page's script did not finish drawing")
        return Dom(dom)


class Dom:
    """What a drawn page shows: table rows by id, flame blocks, lanes, bars, notes."""

    def __init__(self, text):
        self.text = text
        self.data = json.loads(re.search(r'<script type="application/json" id="scope-data">(.*?)</script>',
                                         text, re.S).group(1))

    def rows(self, table_id):
        m = re.search(r'<table[^>]*id="' + table_id + r'".*?<tbody>(.*?)</tbody>', self.text, re.S)
        expect(m, f"the page has no table {table_id}")
        out = []
        for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1), re.S):
            out.append([(v, unescape(t)) for v, t in re.findall(r'<td(?: data-v="([^"]*)")?[^>]*>(.*?)</td>', tr, re.S)])
        return out

    def flame(self):
        """The flame graph's blocks: (name, title)."""
        return [(unescape(n), unescape(t)) for n, t in
                re.findall(r'<g class="flame-node" data-name="([^"]*)"><rect[^>]*></rect><title>([^<]*)</title>',
                           self.text)]

    def lanes(self):
        return [unescape(x) for x in re.findall(r'<div class="lane-label" title="([^"]*)"', self.text)]

    def bars(self):
        return [unescape(x) for x in re.findall(r'<rect class="bar"[^>]*data-name="([^"]*)"', self.text)]

    def notes(self):
        return " ".join(unescape(re.sub(r"<[^>]+>", "", x))
                        for x in re.findall(r'<p class="note">(.*?)</p>', self.text, re.S))


def unescape(s):
    return html.unescape(s)


def region_table(dom):
    """The region table: name -> (calls, total, self) as the page's sort keys hold them."""
    out = {}
    for cells in dom.rows("region-table"):
        name = cells[7][1]
        out[name] = (int(float(cells[0][0])), int(float(cells[1][0])), int(float(cells[2][0])))
    return out


def check_regions(dom, want, what):
    shown = region_table(dom)
    expect_eq(sorted(shown), sorted(want), f"{what}: regions in the table")
    for name, row in want.items():
        expect_eq(shown[name], (int(row["calls"]), int(row["total_ns"]), int(row["self_ns"])),
                  f"{what}: calls, total and self of {name}")


def shot(t, page, name):
    """A screenshot of the whole page, tall enough for its timeline; its path."""
    png = t.path(name)
    t.browser().run("file://" + page, f"--screenshot={png}", "--window-size=1280,1400")
    expect(os.path.isfile(png) and os.path.getsize(png) > 0, f"chromium wrote no screenshot {png}")
    return png


def check_zoom(t, page, whole):
    """The page opened on one outer call (#since=&until=): the timeline draws that window, with
    the leaf calls that were too narrow to draw on the whole run."""
    names = [r[0] for r in whole.data["regions"]]
    bars = whole.data["lanes"][0]["bars"]
    outer = [b for b in bars if names[b[2]] == "outer"][10]
    since, until = outer[0], outer[0] + outer[1]
    dom = t.drawn(page + f"#since={since}&until={until}")
    m = re.search(r'<div class="timeline" id="timeline" data-since="(\d+)" data-until="(\d+)"', dom.text)
    expect(m and (int(m.group(1)), int(m.group(2))) == (since, until), f"the timeline's window is not {since}..{until}")
    inside = [b for b in bars if b[0] <= until and b[0] + b[1] >= since]
    leaves = [b for b in inside if names[b[2]] == "leaf"]
    drawn = dom.bars()
    print(f"window {since}..{until} ns: {len(drawn)} bars drawn of {len(inside)} inside, "
          f"{drawn.count('leaf')} leaf calls (on the whole run: {whole.bars().count('leaf')} of all 1980)")
    expect(len(drawn) <= len(inside), "bars drawn outside the window")
    # the page leaves out a bar under 0.3 px: a leaf must be drawn when it is wider than that
    w = re.search(r'<div class="lane-plot"><svg width="([\d.]+)"', dom.text)
    expect(w, "the timeline has no lane drawn")
    wide = (until - since) * 0.31 / float(w.group(1))
    expect(drawn.count("leaf") >= sum(1 for b in leaves if b[1] >= max(wide, 2)),
           f"{drawn.count('leaf')} leaf calls drawn in the window, not every one of {wide:.0f} ns or more")
    # a neighbour that ends or starts at the window's edge is drawn too, a pixel wide
    outers = sum(1 for b in inside if names[b[2]] == "outer")
    expect(1 <= drawn.count("outer") <= outers, f"{drawn.count('outer')} outer calls drawn, of {outers} in the window")
    shot(t, page + f"#since={since}&until={until}", "html-zoom.png")


def check_sort(t, page, want):
    """The region table opened sorted (#regions=HEADING[.up|.down]): its rows in that order."""
    calls = {name: int(row["calls"]) for name, row in want.items()}
    for view, key, reverse in (("calls.up", lambda n: calls[n], False), ("calls", lambda n: calls[n], True),
                               ("region", lambda n: n, False), ("region.down", lambda n: n, True)):
        dom = t.drawn(page + "#regions=" + view)
        shown = [cells[7][1] for cells in dom.rows("region-table")]
        values = [key(n) for n in shown]
        print(f"#regions={view}: {shown}")
        expect_eq(sorted(shown), sorted(want), f"#regions={view}: the rows")
        expect_eq(values, sorted(values, reverse=reverse), f"#regions={view}: the order of the rows")


def case_page(t):
    h5 = t.profile("calls-gcc-O2", "2000")
    page = t.html(h5, "calls.html")
    dom = t.drawn(page)
    want = t.csv(h5)
    check_regions(dom, want, "calls")
    # calls.c: main -> run -> outer x20 -> leaf x99 each (1980)
    blocks = dom.flame()
    names = [n for n, _ in blocks]
    print("flame blocks:", names)
    expect_eq(names, ["all calls", "main", "run", "outer", "leaf"], "the flame graph's blocks, top down")
    for name, title in blocks[1:]:
        expect(title.endswith(f", {want[name]['calls']} calls"), f"flame block {name}: {title!r}")
    lanes = dom.lanes()
    expect(len(lanes) == 1 and "calls-gcc-O2" in lanes[0] and "lane 0" in lanes[0], f"timeline lanes {lanes}")
    # Every call is in the page's data (2002 are under its limits); those
    # wider than a third of a pixel at the whole run's scale are drawn.
    names = [r[0] for r in dom.data["regions"]]
    kept = {}
    for b in dom.data["lanes"][0]["bars"]:
        kept[names[b[2]]] = kept.get(names[b[2]], 0) + 1
    expect_eq(kept, {n: int(r["calls"]) for n, r in want.items()}, "calls per region in the timeline's bars")
    bars = set(dom.bars())
    expect({"main", "run", "outer"} <= bars <= set(want), f"regions drawn as bars: {sorted(bars)}")
    check_zoom(t, page, dom)
    check_sort(t, page, want)
    png = shot(t, page, "html-page.png")
    share = colored_share(png)
    print(f"screenshot {png}: {100 * share:.1f}% coloured")
    # the flame graph's and timeline's blocks are about 2% of this screenshot (1.96% in a
    # run where main's own time left run, outer and leaf narrow); without them, 0.0%
    expect(share > 0.005, f"the screenshot {png} shows no drawn blocks")

    # Several lanes: one timeline row each, the table as --format csv says.
    h5 = t.profile("threads-gcc-O2", out="threads.h5")
    dom = t.drawn(t.html(h5, "threads.html"))
    check_regions(dom, t.csv(h5), "threads")
    lanes = dom.lanes()
    print("lanes:", lanes)
    nlanes = int(re.search(r"(\d+) thread lanes", dom.text).group(1))
    expect(nlanes > 1, "threads-gcc-O2 ran in one lane")
    expect_eq(len(lanes), nlanes, "timeline rows")
    expect_eq([re.search(r"/ lane (\d+):", x).group(1) for x in lanes], [str(i) for i in range(nlanes)],
              "timeline rows, in lane order")
    # --thread: one lane, its figures
    dom = t.drawn(t.html(h5, "thread1.html", "--thread", "1"))
    check_regions(dom, t.csv(h5, "--thread", "1"), "threads --thread 1")
    expect_eq(len(dom.lanes()), 1, "timeline rows with --thread 1")

    # A profile of totals only (/pairs without /events): the table, and why there are no pictures.
    aggregate = t.path("aggregate.h5")
    shutil.copy(h5, aggregate)
    with h5py.File(aggregate, "r+") as f:
        del f["events"]
    dom = t.drawn(t.html(aggregate, "aggregate.html"))
    check_regions(dom, t.csv(aggregate), "aggregate-only")
    expect(not dom.flame() and not dom.lanes(), "aggregate-only: a flame graph or timeline drawn")
    expect('id="no-events"' in dom.text, "aggregate-only: the page does not say why it has no pictures")


def case_offline(t):
    h5 = t.profile("calls-gcc-O2", "200")
    page = t.html(h5, "calls.html")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for pattern in (r"\ssrc\s*=", r"\shref\s*=", r"url\(", r"@import", r"\bfetch\(", r"XMLHttpRequest",
                    r"<link\b", r"<iframe\b"):
        expect(not re.search(pattern, text), f"{page} holds {pattern!r}: it would ask for something")
    dom = t.drawn(page, "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-background-networking")
    check_regions(dom, t.csv(h5), "offline")
    expect(dom.flame() and dom.bars(), "offline: no flame graph or timeline drawn")

    # Served over HTTP, the page asks its server for nothing but itself.
    asked = []

    class Logged(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            asked.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Logged, directory=t.work))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/calls.html"
        dom = Dom(t.browser().run(url, "--dump-dom", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
    finally:
        server.shutdown()
    expect('data-drawn="1"' in dom.text, "served: the page's script did not finish drawing")
    print("requests the server got:", asked)
    expect([x for x in asked if x != "/favicon.ico"] == ["/calls.html"], f"the page asked for more than itself: {asked}")


def many_functions(t, n):
    """A program of N instrumented functions, each called once from main."""
    src = t.path("many.c")
    with open(src, "w") as f:
        for i in range(n):
            f.write(f"__attribute__((noinline)) int f{i}(int x) {{ return x * {i + 3} + 1; }}\n")
        f.write("int main(void) { int s = 0;\n")
        for i in range(n):
            f.write(f"  s += f{i}(s);\n")
        f.write("  return s == 42 ? 3 : 0; }\n")
    exe = t.path("many")
    r = t.run(["gcc", "-O1", "-g", "-finstrument-functions", "-o", exe, src], quiet=True)
    r.expect_rc(0)
    return exe


def many_threads(t, n):
    """A program of N threads running at once, each calling work() 10 times."""
    src = t.path("threads.c")
    with open(src, "w") as f:
        f.write("#include <pthread.h>\n"
                "__attribute__((noinline)) void work(int i) { __asm__ volatile(\"\" ::\"r\"(i)); }\n"
                "static pthread_barrier_t bar;\n"
                "void *run(void *a) { pthread_barrier_wait(&bar); for (int i = 0; i < 10; i++) work(i); return a; }\n"
                f"int main(void) {{ pthread_t t[{n}]; pthread_barrier_init(&bar, 0, {n});\n"
                f"  for (int i = 0; i < {n}; i++) pthread_create(&t[i], 0, run, 0);\n"
                f"  for (int i = 0; i < {n}; i++) pthread_join(t[i], 0);\n"
                "  return 0; }\n")
    exe = t.path("threads")
    t.run(["gcc", "-O1", "-g", "-pthread", "-finstrument-functions", "-o", exe, src], quiet=True).expect_rc(0)
    return exe


def case_bounded(t):
    # Many calls: the bars a lane keeps are bounded, the file too.
    small = t.html(t.profile("calls-gcc-O2", "2000", out="small.h5"), "small.html")
    h5 = t.profile("calls-gcc-O2", "400000", out="big.h5")
    big = t.html(h5, "big.html")
    sizes = os.path.getsize(small), os.path.getsize(big)
    print(f"page of 2002 calls: {sizes[0]} bytes; of 400002 calls: {sizes[1]} bytes")
    expect(sizes[1] < 1024 * KIB, f"the page of 400002 calls is {sizes[1]} bytes, not under 1 MiB")
    dom = t.drawn(big)
    notes = dom.notes()
    m = re.search(r"\((\d+) of (\d+) calls are drawn, at most (\d+) a lane\)", notes)
    expect(m, f"the timeline does not say how many calls it draws: {notes!r}")
    drawn, calls, per_lane = map(int, m.groups())
    expect_eq(calls, 400002, "calls the timeline counts")
    expect(drawn == per_lane and drawn < calls, f"drawn {drawn} of {calls}, at most {per_lane} a lane")
    expect(len(dom.bars()) <= drawn, f"{len(dom.bars())} bars in the page, more than {drawn}")
    strip = sum(dom.data["lanes"][0]["bins"])
    expect_eq(strip, 400002, "calls in the timeline's strip of starts")
    check_regions(dom, t.csv(h5), "400002 calls")

    # Many regions: the table keeps 1000 rows and sums the rest in one.
    exe = many_functions(t, 1500)
    r = t.run([t.scope_run, "-q", "-o", t.path("many.h5"), "--", exe], env=t.env(preload_asan=True), quiet=True)
    r.expect_rc(0)
    h5 = t.path("many.h5")
    page = t.html(h5, "many.html")
    dom = t.drawn(page)
    rows = dom.rows("region-table")
    expect_eq(len(rows), 1001, "rows of a table of 1501 regions")
    expect_eq(rows[-1][7][1], "501 other regions", "the last row's name")
    want = t.csv(h5)
    expect_eq(len(want), 1501, "regions in the profile")
    expect_eq(sum(int(float(r[0][0])) for r in rows), sum(int(x["calls"]) for x in want.values()),
              "calls summed over the table's rows")
    expect_eq(sum(int(float(r[2][0])) for r in rows), sum(int(x["self_ns"]) for x in want.values()),
              "self time summed over the table's rows")
    expect("the other 501 are summed in the last row" in dom.notes(), "the table does not say what it summed")
    print(f"page of 1501 regions: {os.path.getsize(page)} bytes, {len(dom.flame())} flame blocks")

    # Many lanes: 256 drawn, the rest summed in one row.
    exe = many_threads(t, 300)
    h5 = t.path("threads.h5")
    t.run([t.scope_run, "-q", "-o", h5, "--", exe], env=t.env(preload_asan=True), quiet=True).expect_rc(0)
    dom = t.drawn(t.html(h5, "threads.html"))
    lanes = dom.lanes()
    expect_eq(len(lanes), 257, "timeline rows of 301 lanes")
    expect_eq(lanes[-1], "45 more lanes, summed", "the last row")
    expect("The first 256 lanes are drawn; the other 45 are summed in the last row" in dom.notes(),
           "the timeline does not say what it summed")
    r = t.run([t.report, "--threads", "--format", "csv", h5], quiet=True)
    r.expect_rc(0)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    calls = [int(row["calls"]) for row in rows]
    expect_eq(len(calls), 301, "lanes in the profile")
    got = [lane["calls"] for lane in dom.data["lanes"]]
    expect_eq(got, calls[:256] + [sum(calls[256:])], "calls per timeline row (the last: the lanes summed)")
    expect_eq(sum(sum(lane["bins"]) for lane in dom.data["lanes"]), sum(calls), "calls in the strips")
    check_regions(dom, t.csv(h5), "301 lanes")


def case_ranks(t):
    mpirun = shutil.which("mpirun")
    prog = os.path.join(t.progs, "mpi-ring")
    if not mpirun or not os.access(prog, os.X_OK):
        raise Skipped("no Open MPI mpirun, or mpi-ring was not built")
    h5 = t.path("job.h5")
    r = t.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4", t.scope_run, "-q", "-o", h5, "--",
               prog], env=t.env(preload_asan=True), quiet=True, timeout=120)
    r.expect_rc(0)
    dom = t.drawn(t.html(h5, "job.html"))
    per_rank = [t.csv(h5, "--rank", str(k)) for k in range(4)]
    rows = dom.rows("rank-table")
    expect(rows, "no Ranks table")
    for cells in rows:
        name = cells[5][1]
        selfs = [int(p[name]["self_ns"]) if name in p else 0 for p in per_rank]
        got = [float(cells[i][0]) for i in range(4)]
        expect_eq([round(x) for x in got], [min(selfs), round(sum(selfs) / 4), max(selfs), selfs.index(max(selfs))],
                  f"{name}: min, mean, max of self time over the ranks, and the slowest rank")
    heat = dom.data["imbalance"]
    expect_eq(heat["ranks"], [0, 1, 2, 3], "the heat map's columns")
    expect_eq(len(re.findall(r'<text[^>]*class="heat-label"', dom.text)), len(rows), "labelled heat-map rows")
    expect_eq(len(dom.lanes()), sum(1 for _ in re.finditer(r"rank \d\) / lane", " ".join(dom.lanes()))),
              "every lane labelled with its rank")


def case_manyranks(t):
    ranks = 1030
    base = t.path("base.h5")
    t.run([t.scope_run, "-q", "-o", base, "--", t.prog("calls-gcc-O2"), "20"],
          env=t.env(preload_asan=True), quiet=True).expect_rc(0)
    parts = t.path("parts")
    os.makedirs(parts)
    for k in range(ranks):
        path = os.path.join(parts, f"r{k}.h5")
        shutil.copy(base, path)
        with h5py.File(path, "r+") as f:
            for name, value in (("processes/rank", k), ("processes/pid", 100000 + k)):
                f[name][...] = value
            f["pairs/self_ns"][...] = f["pairs/self_ns"][()] * (k % 7 + 1)
    job = t.path("job.h5")
    t.run([os.path.join(t.bin, "scope-merge"), "-q", "--keep", "--parts", parts, "-o", job], quiet=True).expect_rc(0)
    page = t.html(job, "job.html")
    print(f"page of {ranks} ranks: {os.path.getsize(page)} bytes")
    dom = t.drawn(page)
    heat = dom.data["imbalance"]
    expect_eq(heat["group"], 2, "ranks a heat-map column sums")
    expect_eq(heat["ranks"], list(range(0, ranks, 2)), "the heat map's columns: their first ranks")
    names = [r[0] for r in dom.data["regions"]]
    with h5py.File(job, "r") as f:
        region_names = [str(x) for x in f["regions/name"].asstr()[()]]
        pairs = {k: f["pairs"][k][()] for k in ("process", "region", "self_ns")}
        rank_of = f["processes/rank"][()]
    self_of = {}
    for p, r, v in zip(pairs["process"], pairs["region"], pairs["self_ns"]):
        key = (region_names[int(r)], int(rank_of[int(p)]))
        self_of[key] = self_of.get(key, 0) + int(v)
    expect(heat["rows"], "no rows in the heat map")
    for row in heat["rows"]:
        name = names[row["region"]]
        want = [round((self_of.get((name, c), 0) + self_of.get((name, c + 1), 0)) / 2) for c in range(0, ranks, 2)]
        expect_eq(row["values"], want, f"heat map of {name}: the mean of each two ranks' self time")
    expect_eq(len(re.findall(r'<text[^>]*class="heat-label"', dom.text)), len(heat["rows"]), "labelled heat-map rows")
    expect("Each column sums 2 neighbouring ranks" in dom.notes(), "the page does not say the columns are summed")
    lanes = dom.lanes()
    expect_eq((len(lanes), lanes[-1]), (257, "774 more lanes, summed"), "timeline rows of 1030 lanes")


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "bin", "progs", "workdir", "sanitized")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Html(a))


if __name__ == "__main__":
    sys.exit(main())
