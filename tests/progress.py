#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The progress line of scope-report's exports, scope-merge and the writer, with standard error a terminal.

Usage: progress.py CASE --bin DIR --lib DIR --progs DIR --workdir DIR [--sanitized LIBASAN]

Each command runs with its standard error on a pseudo-terminal, and
SCOPE_PROGRESS=0 so that the line shows at once rather than after a
second. The line must be "PROG: WHAT: N% (S s)" redrawn in place (a
carriage return before, an erase-to-end after), its percentages rising
and never past 99, and cleared at the end; the output must be the same as
without a terminal. Nothing shows when standard error is a pipe, with -q
(scope-run -q for the writer), with SCOPE_PROGRESS=off, or by default on
work shorter than a second.

Cases:
  report   scope-report --chrome, --otf2 and --html of 400002 calls
  merge    scope-merge of two profiles of 2000002 calls
  writer   the writer at a program's exit, under plain LD_PRELOAD and
           scope-run, and scope-writer run by hand on a kept arena (-q)

Exit status: 0 pass, 1 fail, 77 skip (no pseudo-terminal here).
"""

import filecmp
import os
import pty
import re
import select
import subprocess
import sys

from harness import Skipped, ToolTest, cases_of, expect, expect_eq, parser, run_case

LINE = re.compile(r"\r(scope-[a-z]+): (.*?):(?: (\d+)%)? \((\d+) s\)\x1b\[K")


class Progress(ToolTest):
    def __init__(self, a):
        super().__init__(a)
        self.lib = os.path.join(a.lib, "libscope_preload.so")

    def tty(self, argv, env):
        """Runs argv with standard error on a pseudo-terminal; returns (rc, stdout, what the terminal got)."""
        argv = [str(x) for x in argv]
        print("$ (stderr a terminal)", " ".join(argv), flush=True)
        try:
            master, slave = pty.openpty()
        except OSError as e:
            raise Skipped(f"no pseudo-terminal: {e}")
        proc = subprocess.Popen(argv, env=env, cwd=self.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=slave)
        os.close(slave)
        got = b""
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's last holder has gone
                    chunk = b""
                if not chunk and proc.poll() is not None:
                    break
                got += chunk
            elif proc.poll() is not None:
                break
        os.close(master)
        out = proc.stdout.read()
        proc.wait(timeout=self.timeout)
        text = got.decode("utf-8", "replace")
        print(f"  exit {proc.returncode}; the terminal got {text[-400:]!r}")
        return proc.returncode, out, text

    def env_progress(self, value="0", **extra):
        env = self.env(**extra)
        env["SCOPE_PROGRESS"] = value
        return env


def lines(text, prog):
    """The progress lines of prog in what a terminal got: [(what, pct or None)]."""
    return [(m.group(2), int(m.group(3)) if m.group(3) else None)
            for m in LINE.finditer(text) if m.group(1) == prog]


def check_shown(text, prog, what):
    got = lines(text, prog)
    expect(got, f"{prog} drew no progress line on the terminal: {text[-300:]!r}")
    expect({w for w, _ in got} == {what}, f"{prog}'s line names {sorted({w for w, _ in got})}, not {what!r}")
    pcts = [p for _, p in got if p is not None]
    expect(pcts, f"{prog}'s line shows no percentage")
    expect(pcts == sorted(pcts) and pcts[-1] <= 99, f"{prog}'s percentages {pcts}: not rising, or past 99")
    expect(text.rstrip("\r\n").endswith("\r\x1b[K"), f"{prog} left its line on the terminal: {text[-80:]!r}")
    rest = LINE.sub("", text).replace("\r\x1b[K", "").strip()
    return rest


def case_report(t):
    h5 = t.path("big.h5")
    t.run([t.scope_run, "-q", "-o", h5, "--", t.prog("calls-gcc-O2"), "400000"],
          env=t.env(preload_asan=True), quiet=True).expect_rc(0)
    small = t.path("small.h5")
    t.run([t.scope_run, "-q", "-o", small, "--", t.prog("calls-gcc-O2"), "2000"],
          env=t.env(preload_asan=True), quiet=True).expect_rc(0)
    for view, name in (("--chrome", "trace.json"), ("--html", "page.html")):
        plain = t.path("plain-" + name)
        r = t.run([t.report, view, "-o", plain, h5], env=t.env_progress(), quiet=True)
        r.expect_rc(0)
        expect_eq(r.stderr, "", f"{view}: standard error, a pipe")
        out = t.path(name)
        rc, _, text = t.tty([t.report, view, "-o", out, h5], t.env_progress())
        expect_eq(rc, 0, f"{view} exit status")
        rest = check_shown(text, "scope-report", out)
        expect_eq(rest, "", f"{view}: other text on the terminal")
        if view == "--chrome":
            expect(filecmp.cmp(plain, out, shallow=False), f"{view}: the output differs with a terminal")
        for argv, env, why in (([t.report, view, "-q", "-o", out, h5], t.env_progress(), "-q"),
                               ([t.report, view, "-o", out, h5], t.env_progress("off"), "SCOPE_PROGRESS=off"),
                               ([t.report, view, "-o", out, small], t.env_progress("1"), "a short export")):
            rc, _, text = t.tty(argv, env)
            expect(rc == 0 and text == "", f"{view} with {why}: the terminal got {text!r}")
    rc, _, text = t.tty([t.report, "--otf2", t.path("otf2"), h5], t.env_progress())
    if rc != 0 and "built without OTF2" in text:
        print("scope-report has no OTF2: --otf2 not checked")
        return
    expect_eq(rc, 0, "--otf2 exit status")
    expect_eq(check_shown(text, "scope-report", t.path("otf2")), "", "--otf2: other text on the terminal")


def case_merge(t):
    parts = []
    for k in range(2):
        parts.append(t.path(f"p{k}.h5"))
        # large enough that the line is redrawn a few times
        t.run([t.scope_run, "-q", "-o", parts[-1], "--", t.prog("calls-gcc-O2"), "2000000"],
              env=t.env(preload_asan=True), quiet=True).expect_rc(0)
    merge = os.path.join(t.bin, "scope-merge")
    r = t.run([merge, "--keep", "-o", t.path("plain.h5"), *parts], env=t.env_progress(), quiet=True)
    r.expect_rc(0)
    expect_eq(r.stderr, "", "standard error, a pipe")
    out = t.path("m.h5")
    rc, _, text = t.tty([merge, "--keep", "-o", out, *parts], t.env_progress())
    expect_eq(rc, 0, "scope-merge exit status")
    expect_eq(check_shown(text, "scope-merge", out), "", "other text on the terminal")
    r = t.run([t.report, "--format", "csv", out], quiet=True)
    r.expect_rc(0)
    expect_eq(r.stdout, t.run([t.report, "--format", "csv", t.path("plain.h5")], quiet=True).stdout,
              "the merged profile's table, with and without a terminal")
    os.unlink(out)
    rc, _, text = t.tty([merge, "-q", "--keep", "-o", out, *parts], t.env_progress())
    expect(rc == 0 and text == "", f"scope-merge -q: the terminal got {text!r}")


def case_writer(t):
    prog = t.prog("calls-gcc-O2")
    out = t.path("direct.h5")
    env = t.env_progress(SCOPE_OUTPUT=out)
    env["LD_PRELOAD"] = ":".join(x for x in (t.asan, t.lib) if x)
    rc, stdout, text = t.tty([prog, "1000000"], env)
    expect_eq(rc, 0, "the program's exit status")
    expect_eq(check_shown(text, "scope-writer", out), "", "other text on the terminal")
    expect(os.path.isfile(out), "no profile written")
    r = t.run([t.report, "--format", "csv", out], quiet=True)
    r.expect_rc(0)
    expect("leaf,990000," in r.stdout, "the profile has not the program's 990000 leaf calls")
    # A pipe: nothing.
    os.unlink(out)
    r = t.run([prog, "1000000"], env=dict(env, SCOPE_KEEP_ARENA="1"))
    r.expect_rc(0)
    expect_eq(r.stderr, "", "standard error, a pipe")
    # scope-writer by hand on the kept arena: the line, and none with -q.
    arenas = [os.path.join(d, f) for d, _, fs in os.walk(t.tmp) for f in fs if f.endswith(".arena")]
    expect(len(arenas) == 1, f"kept arenas: {arenas}")
    writer = os.path.join(t.bin, "scope-writer")
    again = t.path("again.h5")
    rc, _, text = t.tty([writer, "--keep", "-o", again, arenas[0]], t.env_progress())
    expect_eq(rc, 0, "scope-writer's exit status")
    expect_eq(check_shown(text, "scope-writer", again), "", "scope-writer: other text on the terminal")
    rc, _, text = t.tty([writer, "-q", "-o", t.path("quiet-again.h5"), arenas[0]], t.env_progress())
    expect(rc == 0 and text == "", f"scope-writer -q: the terminal got {text!r}")
    # scope-run: the writer names the process; with -q nothing shows.
    rc, _, text = t.tty([t.scope_run, "-o", t.path("run.h5"), "--", prog, "1000000"],
                        t.env_progress(preload_asan=True))
    expect_eq(rc, 0, "scope-run's exit status")
    got = lines(text, "scope-writer")
    expect(got and all(re.fullmatch(r"the profile of pid \d+", w) for w, _ in got),
           f"scope-run's writer lines: {got[:3]}")
    rc, _, text = t.tty([t.scope_run, "-q", "-o", t.path("quiet.h5"), "--", prog, "1000000"],
                        t.env_progress(preload_asan=True))
    expect(rc == 0 and text == "", f"scope-run -q: the terminal got {text!r}")


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "bin", "lib", "progs", "workdir", "sanitized")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: Progress(a))


if __name__ == "__main__":
    sys.exit(main())
