#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Loads scope-report's speedscope and Chrome trace exports of a real profile into speedscope, in headless Chromium.

Usage: viewer.py --bin DIR --progs DIR --cache DIR --workdir DIR [--sanitized LIBASAN]

Installs what it lacks: Debian's chromium (apt-get, as root or through sudo)
and the npm package speedscope (npm pack, unpacked into --cache, kept from
run to run), whose dist/release is speedscope's web app. Serves it and the
two exports on 127.0.0.1, opens each export with speedscope's
#profileURL=...&view=sandwich in headless Chromium, and reads the rendered
page (--dump-dom): the function names speedscope lists in its sandwich table
must be those the profile's first thread lane called, with no import error
(speedscope names a Chrome trace event by its name and args, so there each
must carry the region's file and line).
Screenshots of the time-ordered flame chart and of the table are saved in
--workdir as artefacts (viewer-speedscope-time.png, ...), and the flame
chart's must show drawn frames, not a blank canvas.

Exit status: 0 pass, 1 fail, 77 skip (the browser or speedscope cannot be
had here; the reason is printed).
"""

import functools
import html.parser
import http.server
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tarfile
import threading
import urllib.parse
import zlib

import h5py
import numpy as np

from harness import Failure, Skipped, expect, parser, run_case

SPEEDSCOPE = "speedscope@1.25.0"
BUDGET_MS = 15000  # virtual time Chromium gives the page to fetch, import and draw




def log(*args):
    print(*args, flush=True)


def run(argv, timeout=300, env=None, check=False):
    argv = [str(x) for x in argv]
    log("$", " ".join(argv))
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                       timeout=timeout, env=env)
    if r.returncode != 0:
        log(f"  exit {r.returncode}: {r.stderr[-1500:].strip()}")
    if check and r.returncode != 0:
        raise Failure(f"`{' '.join(argv)}` exited {r.returncode}")
    return r


# ---------------------------------------------------------------------------
# What the test needs


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def install_chromium():
    """Debian's chromium, installed when missing; its path, or Skipped with why."""
    path = find_chromium()
    if path:
        return path
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if sudo and not shutil.which("sudo"):
        raise Skipped("chromium is not installed, and this user cannot install it (not root, no sudo)")
    if not shutil.which("apt-get"):
        raise Skipped("chromium is not installed, and there is no apt-get to install it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]
    if run(install, env=env).returncode != 0:
        run([*sudo, "apt-get", "update", "-qq"], env=env)
        if run(install, env=env).returncode != 0:
            raise Skipped("chromium is not installed, and apt-get could not install it")
    path = find_chromium()
    if not path:
        raise Skipped("apt-get installed chromium, but no chromium program is on PATH")
    return path


def install_speedscope(cache):
    """speedscope's web app (the folder of its index.html), from the npm registry once."""
    app = os.path.join(cache, "package", "dist", "release")
    if os.path.isfile(os.path.join(app, "index.html")):
        return app
    npm = shutil.which("npm")
    if not npm:
        raise Skipped("npm is not installed: speedscope cannot be fetched")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    r = run([npm, "pack", "--silent", "--pack-destination", cache, SPEEDSCOPE], timeout=180)
    tgz = [f for f in os.listdir(cache) if f.endswith(".tgz")]
    if r.returncode != 0 or not tgz:
        raise Skipped(f"npm could not fetch {SPEEDSCOPE}")
    with tarfile.open(os.path.join(cache, tgz[0])) as t:
        t.extractall(cache, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(cache)
    expect(os.path.isfile(os.path.join(app, "index.html")), f"{SPEEDSCOPE} has no dist/release/index.html")
    return app


# ---------------------------------------------------------------------------
# The profile and its exports


def lane0_names(path):
    """Names of the regions that the first thread lane of the first process called."""
    with h5py.File(path, "r") as f:
        names = f["regions/name"].asstr()[()]
        pairs = {k: f["pairs"][k][()] for k in ("process", "region", "first", "count")}
        thread = f["events/thread"][()]
    out = set()
    for p, r, first, count in zip(pairs["process"], pairs["region"], pairs["first"], pairs["count"]):
        if p == 0 and np.any(thread[int(first):int(first) + int(count)] == 0):
            out.add(str(names[r]))
    return out


def make_exports(a, www):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_") and k != "LD_PRELOAD"}
    env["SCOPE_TMPDIR"] = os.path.join(a.workdir, "tmp")
    os.makedirs(env["SCOPE_TMPDIR"])
    if a.sanitized:
        env.update(ASAN_OPTIONS="detect_leaks=0", LD_PRELOAD=a.sanitized)
    prog = os.path.join(a.progs, "calls-gcc-O2")
    expect(os.access(prog, os.X_OK), f"{prog} was not built")
    h5 = os.path.join(a.workdir, "calls.h5")
    run([os.path.join(a.bin, "scope-run"), "-q", "-o", h5, "--", prog, "2000"], env=env, check=True)
    env.pop("LD_PRELOAD", None)
    report = os.path.join(a.bin, "scope-report")
    # speedscope takes a name ending in .chrome.json for the old Chrome
    # timeline format, and detects trace events by content otherwise.
    exports = {"speedscope": "calls.speedscope.json", "chrome": "calls-trace.json"}
    for kind, name in exports.items():
        run([report, f"--{kind}", "-o", os.path.join(www, name), h5], env=env, check=True)
    return h5, exports


# ---------------------------------------------------------------------------
# The browser


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    def __init__(self, chromium, workdir):
        self.chromium = chromium
        self.workdir = workdir
        self.n = 0

    def run(self, url, *what, budget=BUDGET_MS):
        self.n += 1
        profile = os.path.join(self.workdir, f"chromium-profile-{self.n}")
        argv = [self.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--no-first-run", "--no-default-browser-check",
                "--enable-unsafe-swiftshader", f"--user-data-dir={profile}", "--window-size=1280,800",
                "--hide-scrollbars", f"--virtual-time-budget={budget}", *what, url]
        env = dict(os.environ, HOME=self.workdir)
        r = run(argv, timeout=120, env=env)
        shutil.rmtree(profile, ignore_errors=True)
        expect(r.returncode == 0, f"chromium exited {r.returncode}")
        return r.stdout

    def dom(self, url, budget=BUDGET_MS):
        return self.run(url, "--dump-dom", budget=budget)

    def screenshot(self, url, png):
        self.run(url, f"--screenshot={png}")
        expect(os.path.isfile(png) and os.path.getsize(png) > 0, f"chromium wrote no screenshot {png}")


class Page(html.parser.HTMLParser):
    """The title, the text of each table row's cells, and all the text of a page."""

    def __init__(self):
        super().__init__()
        self.title, self.rows, self.text = "", [], []
        self.in_title, self.cell = False, None

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
        elif tag == "tr":
            self.rows.append([])
        elif tag == "td" and self.rows:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self.in_title:
            self.title += data
        if self.cell is not None:
            self.cell.append(data)


def parse(dom):
    p = Page()
    p.feed(dom)
    return p


# ---------------------------------------------------------------------------
# Screenshots: a PNG decoder just large enough for Chromium's (8-bit RGB or RGBA)


def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            expect(depth == 8 and color in (2, 6), f"{path}: PNG of depth {depth}, color type {color}")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + left) & 255
            elif ftype == 2:
                line[i] = (line[i] + up) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif ftype == 4:
                pa, pb, pc = abs(up - ul), abs(left - ul), abs(left + up - 2 * ul)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def colored_share(path):
    """The share of pixels below the toolbar that are coloured (frames drawn), not grey or white."""
    width, height, bpp, rows = png_pixels(path)
    colored = total = 0
    for row in rows[40:]:
        for x in range(0, width * bpp, bpp * 4):  # every 4th pixel is plenty
            r, g, b = row[x], row[x + 1], row[x + 2]
            total += 1
            colored += max(r, g, b) - min(r, g, b) > 24
    return colored / max(total, 1)


# ---------------------------------------------------------------------------


def check_export(browser, base, kind, name, want, workdir):
    url = f"{base}/index.html#profileURL={urllib.parse.quote(name)}&view=sandwich"
    shown = set()
    for budget in (BUDGET_MS, 3 * BUDGET_MS):  # a slow machine may need more virtual time
        page = parse(browser.dom(url, budget=budget))
        # Rows of the sandwich table: total (share), self (share), name.
        shown = {row[-1] for row in page.rows if len(row) == 3 and "%)" in row[0] and row[-1]}
        if want <= {row.partition(" {")[0] for row in shown}:
            break
    text = " ".join(page.text)
    log(f"  {kind}: title {page.title!r}; sandwich table: {sorted(shown)}")
    if kind == "chrome":
        # speedscope names a trace event by its name and its args: NAME {"file":...,"line":...}
        named = set()
        for row in shown:
            name, _, args = row.partition(" {")
            expect(args and set(json.loads("{" + args)) == {"file", "line"},
                   f"chrome: speedscope shows {row!r}, not a name with the file and line in its args")
            named.add(name)
        shown = named
    expect("Something went wrong" not in text and "Error" not in page.title,
           f"{kind}: speedscope could not import {name}: {text[:500]!r}")
    expect(want <= shown, f"{kind}: speedscope shows {sorted(shown)}, not all of {sorted(want)}")
    time_png = os.path.join(workdir, f"viewer-{kind}-time.png")
    browser.screenshot(url.replace("view=sandwich", "view=time-ordered"), time_png)
    browser.screenshot(url, os.path.join(workdir, f"viewer-{kind}-sandwich.png"))
    share = colored_share(time_png)
    log(f"  {kind}: flame chart {time_png}: {100 * share:.1f}% of it coloured")
    expect(share > 0.005, f"{kind}: the flame chart in {time_png} is blank")


def show(a):
    """Both exports of one profile, loaded in speedscope in headless Chromium."""
    chromium = install_chromium()
    app = install_speedscope(os.path.abspath(a.cache))
    log(f"browser {chromium}; speedscope in {app}")
    www = os.path.join(a.workdir, "www")
    shutil.copytree(app, www)
    h5, exports = make_exports(a, www)
    want = lane0_names(h5)
    expect(want, "the profile's first lane called nothing")
    log(f"the first lane of {h5} called {sorted(want)}")
    server = serve(www)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        browser = Browser(chromium, a.workdir)
        for kind, name in exports.items():
            check_export(browser, base, kind, name, want, a.workdir)
    finally:
        server.shutdown()


def main():
    ap = parser(__doc__, None, "bin", "progs", "workdir", "sanitized")
    ap.add_argument("--cache", required=True, help="where speedscope is unpacked, kept from run to run")
    a = ap.parse_args()
    a.workdir = os.path.abspath(a.workdir)
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return run_case({"viewer": show}, "viewer", lambda: a)


if __name__ == "__main__":
    sys.exit(main())
