#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one test case of scope-symbolize on profiles of real programs, some built here.

Usage: symbolize.py CASE --bin DIR --progs DIR --src DIR --rdcheck PATH --workdir DIR [--sanitized LIBASAN]

One function per case (case_debuglink is CASE "debuglink"). A profile made
with SCOPE_SYMBOLIZE=0, or of a stripped binary, is resolved with
scope-symbolize and compared, region by region (module and offset), with a
normal profile of the same binary: the same names, files and lines. The rest
of the file must be what it was, dataset by dataset. Exit status: 0 pass,
1 fail, 77 skip (printed with its reason).
"""

import glob
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys

import h5py
import numpy as np

from harness import Skipped, ToolTest, cases_of, expect, expect_eq, parser, run_case

REPLACED = {"regions/name", "regions/file", "regions/line"}


class Test(ToolTest):
    def profile(self, prog, *args, out, raw=False):
        """Profiles PROG ARGS into OUT (in the work folder); raw: with SCOPE_SYMBOLIZE=0."""
        path = self.path(out)
        extra = {"SCOPE_SYMBOLIZE": "0"} if raw else {}
        self.run([self.scope_run, "-q", "-o", path, "--", prog, *args],
                 env=self.env(preload_asan=True, **extra), quiet=True).expect_rc(0)
        expect(os.path.isfile(path), f"no profile at {path}")
        return path

    def scope_symbolize(self, *args, rc=0, timeout=None):
        expect(os.path.exists(self.symbolize), f"{self.symbolize} was not built")
        return self.run([self.symbolize, *args], timeout=timeout).expect_rc(rc)

    def tool(self, name):
        path = shutil.which(name)
        if not path:
            raise Skipped(f"{name} is not installed")
        return path

    def build(self, out, source="calls.c", extra=()):
        """Compiles a test program from tests/progs into the work folder, instrumented, with -g."""
        compiler = self.tool("g++" if source.endswith(".cpp") else "gcc")
        path = self.path(out)
        self.run([compiler, "-g", "-O2", "-finstrument-functions", "-fno-inline", "-pthread",
                  *extra, "-o", path, os.path.join(self.src, source)]).expect_rc(0)
        return path


# ---------------------------------------------------------------------------
# The profile, as h5py reads it


def regions(path):
    """(module, offset) -> (name, file, line) of every region."""
    with h5py.File(path, "r") as f:
        g = f["regions"]
        rows = zip(g["module"].asstr()[()], g["offset"][()], g["name"].asstr()[()],
                   g["file"].asstr()[()], g["line"][()])
        return {(m, int(o)): (n, fl, int(ln)) for m, o, n, fl, ln in rows}


def is_fallback(module, offset, name):
    return name == f"{os.path.basename(module)}+{offset:#x}"


def contents(path):
    """Every dataset's values and every attribute of the file, by path."""
    out = {}

    def value(v):
        if isinstance(v, np.ndarray):
            return (str(v.dtype), v.shape, v.tobytes() if v.dtype.kind != "O" else tuple(v.ravel().tolist()))
        return v

    def visit(name, obj):
        for k, v in obj.attrs.items():
            out[f"{name}@{k}"] = value(v)
        if isinstance(obj, h5py.Dataset):
            out[name] = (str(obj.dtype), value(obj[()]))

    with h5py.File(path, "r") as f:
        for k, v in f.attrs.items():
            out[f"@{k}"] = value(v)
        f.visititems(visit)
    return out


def expect_same_rest(before, after):
    """Everything but the three replaced columns is as it was."""
    a, b = contents(before), contents(after)
    expect_eq(sorted(b), sorted(a), "objects and attributes of the rewritten file")
    for k in a:
        if k not in REPLACED:
            expect(a[k] == b[k], f"{k} changed in the rewrite")


def expect_resolved_like(t, raw, ref, what):
    """raw, once symbolized, has the names, files and lines of ref, a normal profile."""
    want, got = regions(ref), regions(raw)
    expect_eq(sorted(got), sorted(want), f"{what}: regions (module, offset)")
    for key, (name, file, line) in want.items():
        expect(not is_fallback(key[0], key[1], name), f"{what}: the normal profile did not resolve {key}")
        expect_eq(got[key], (name, file, line), f"{what}: region {os.path.basename(key[0])}+{key[1]:#x}")
    t.run([t.rdcheck, raw]).expect_rc(0)


def expect_unresolved(path, what, files_too=True):
    regs = regions(path)
    expect(regs, f"{what}: no regions")
    for (m, o), (name, file, line) in regs.items():
        if files_too:
            expect(is_fallback(m, o, name), f"{what}: region {name} is resolved already")
        expect_eq((file, line), ("", 0), f"{what}: file and line of {name}")


def symbolize_like(t, raw, ref, *args, what):
    """scope-symbolize ARGS raw: resolved like ref, the rest unchanged, no temporary left."""
    before = raw + ".before"
    shutil.copy(raw, before)
    os.chmod(raw, 0o640)
    r = t.scope_symbolize(*args, raw)
    expect_resolved_like(t, raw, ref, what)
    expect_same_rest(before, raw)
    expect_eq(stat.S_IMODE(os.stat(raw).st_mode), 0o640, f"{what}: mode of the rewritten file")
    expect_eq(glob.glob(raw + ".tmp-*"), [], f"{what}: temporary files left")
    expect(re.search(r": \d+ of \d+ unresolved regions resolved$", r.err_lines()[-1]),
           f"{what}: no summary line")
    return r


def unchanged(path, data, what):
    with open(path, "rb") as f:
        expect(f.read() == data, f"{what}: the profile was changed")


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------
# Case: SCOPE_SYMBOLIZE=0, then scope-symbolize: as a normal run


SAME = [  # program, arguments: C, C++ (demangled), threads, forks, dlopen'ed libraries
    ("chain", ()), ("names", ()), ("threads", ()), ("calls", ("1000", "2")),
]


def case_same(t):
    ran = 0
    for prog, args in SAME:
        for tc in ("gcc", "clang"):
            for opt in ("O0", "O2"):
                exe = os.path.join(t.progs, f"{prog}-{tc}-{opt}")
                if not os.path.exists(exe):
                    expect(tc == "clang", f"{exe} was not built")
                    continue
                what = os.path.basename(exe)
                ref = t.profile(exe, *args, out=f"{what}.h5")
                raw = t.profile(exe, *args, out=f"{what}-raw.h5", raw=True)
                expect_unresolved(raw, what)
                symbolize_like(t, raw, ref, what=what)
                ran += 1
    print(f"  {ran} programs resolved like a normal run")


def case_dso(t):
    """Regions in two libraries dlopen'ed and dlclose'd (often at one address)."""
    exe = t.prog("r_dl-gcc-O2")
    libs = [os.path.join(t.progs, "r_dl-gcc-O2.libs", f"libr_dl{n}.so") for n in (1, 2)]
    for lib in libs:
        expect(os.path.exists(lib), f"{lib} was not built")
    ref = t.profile(exe, "close", *libs, out="dl.h5")
    raw = t.profile(exe, "close", *libs, out="dl-raw.h5", raw=True)
    expect_unresolved(raw, "r_dl")
    symbolize_like(t, raw, ref, what="r_dl")
    modules = {m for m, _ in regions(raw)}
    expect(all(os.path.realpath(lib) in {os.path.realpath(m) for m in modules} for lib in libs),
           f"regions of both libraries: {modules}")


# ---------------------------------------------------------------------------
# Cases: stripped binaries with separate debug info


def stripped(t, name, how="--strip-all", link=True, source="calls.c", extra=()):
    """Builds NAME, profiles it as it is (the reference), splits its debug info
    into NAME.debug, strips it and adds a .gnu_debuglink when link. Returns
    (binary, debug file, reference profile)."""
    exe = t.build(name, source, extra)
    ref = t.profile(exe, "1000", out=f"{name}-ref.h5")
    debug = exe + ".debug"
    objcopy, strip = t.tool("objcopy"), t.tool("strip")
    t.run([objcopy, "--only-keep-debug", exe, debug]).expect_rc(0)
    t.run([strip, how, exe]).expect_rc(0)
    if link:
        t.run([objcopy, f"--add-gnu-debuglink={debug}", exe]).expect_rc(0)
    return exe, debug, ref


def build_id(path):
    r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    expect(m, f"{path} has no build-id")
    return m.group(1)


def to_debug_dir(t, path):
    """Moves path into the folder dbg of the work folder; returns where."""
    os.makedirs(t.path("dbg"), exist_ok=True)
    moved = t.path("dbg", os.path.basename(path))
    os.rename(path, moved)
    return moved


def hide(path):
    """Moves path aside; returns where."""
    hidden = os.path.join(os.path.dirname(path), "hidden", os.path.basename(path))
    os.makedirs(os.path.dirname(hidden), exist_ok=True)
    os.rename(path, hidden)
    return hidden


def case_debuglink(t):
    """Debug info that arrives later, next to the binary its .gnu_debuglink names."""
    exe, debug, ref = stripped(t, "app")
    hidden = hide(debug)
    raw = t.profile(exe, "1000", out="app.h5")
    expect_unresolved(raw, "stripped app")
    data = read(raw)
    r = t.scope_symbolize(raw, rc=1)
    expect(re.search(r"app: no debug info found", r.stderr), "no word that the debug info is missing")
    expect(r.err_lines()[-1].endswith("left as it was"), "no word that the file was left as it was")
    unchanged(raw, data, "without debug info")
    os.rename(hidden, debug)
    r = symbolize_like(t, raw, ref, what="debuglink next to the binary")
    expect(f"debug info from {debug}" in r.stderr, f"not resolved from {debug}")


def case_debugdir(t):
    """The debug file in a --debug-dir, found by the binary's .gnu_debuglink name."""
    exe, debug, ref = stripped(t, "app")
    moved = to_debug_dir(t, debug)
    raw = t.profile(exe, "1000", out="app.h5")
    expect_unresolved(raw, "stripped app")
    r = symbolize_like(t, raw, ref, "--debug-dir", t.path("dbg"), what="debuglink in --debug-dir")
    expect(f"debug info from {moved}" in r.stderr, f"not resolved from {moved}")


def case_buildid(t):
    """The debug file under DIR/.build-id/xx/rest.debug, the binary without a debuglink."""
    exe, debug, ref = stripped(t, "app", link=False)
    bid = build_id(exe)
    where = t.path("dbg", ".build-id", bid[:2], bid[2:] + ".debug")
    os.makedirs(os.path.dirname(where))
    os.rename(debug, where)
    raw = t.profile(exe, "1000", out="app.h5")
    expect_unresolved(raw, "stripped app")
    r = symbolize_like(t, raw, ref, "-d", t.path("dbg"), what="build-id in --debug-dir")
    expect(f"debug info from {where}" in r.stderr, f"not resolved from {where}")


def case_strip_debug(t):
    """strip -g keeps the symbols: names resolved at run time, files and lines added later."""
    exe, debug, ref = stripped(t, "app", how="-g")
    to_debug_dir(t, debug)
    raw = t.profile(exe, "1000", out="app.h5")
    regs = regions(raw)
    expect(all(not is_fallback(m, o, v[0]) for (m, o), v in regs.items()), "names from the symbol table")
    expect_unresolved(raw, "app without DWARF", files_too=False)
    symbolize_like(t, raw, ref, "--debug-dir", t.path("dbg"), what="strip -g")


def case_cpp(t):
    """A stripped C++ program: names demangled from the separate debug file's symbols."""
    exe, debug, ref = stripped(t, "names", source="names.cpp")
    to_debug_dir(t, debug)
    raw = t.profile(exe, "1000", out="names.h5")
    expect_unresolved(raw, "stripped names")
    symbolize_like(t, raw, ref, "--debug-dir", t.path("dbg"), what="C++")
    names = {v[0] for v in regions(raw).values()}
    expect({"geo::Shape::area() const", "geo::util::scale(int)"} <= names, f"demangled names: {sorted(names)}")


def case_usr_lib_debug(t):
    """/usr/lib/debug/.build-id: found with no --debug-dir."""
    root = "/usr/lib/debug"
    try:
        os.makedirs(os.path.join(root, ".build-id"), exist_ok=True)
    except OSError as e:
        raise Skipped(f"{root} cannot be written here ({e.strerror}): the default path is not tried")
    # A build-id of its own, so that nothing else ever finds this debug file.
    exe, debug, ref = stripped(t, "app", link=False, extra=(f"-Wl,--build-id=0x{secrets.token_hex(20)}",))
    bid = build_id(exe)
    debug = to_debug_dir(t, debug)  # libdwfl also tries app.debug next to app
    raw = t.profile(exe, "1000", out="app.h5")
    expect_unresolved(raw, "stripped app")
    where = os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")
    os.makedirs(os.path.dirname(where), exist_ok=True)
    shutil.copy(debug, where)
    try:
        r = symbolize_like(t, raw, ref, what="/usr/lib/debug/.build-id")
        expect(f"debug info from {where}" in r.stderr, f"not resolved from {where}")
    finally:
        os.unlink(where)
        try:
            os.rmdir(os.path.dirname(where))
        except OSError:
            pass


def case_rebuilt(t):
    """A binary rebuilt since it was profiled is refused, naming it; --force goes on."""
    exe = t.build("app")
    ref = t.profile(exe, "1000", out="ref.h5")
    raw = t.profile(exe, "1000", out="app.h5", raw=True)
    recorded = build_id(exe)
    t.build("app", extra=("-DREBUILT=1", "-O0"))
    now = build_id(exe)
    expect(now != recorded, "the rebuild kept its build-id")
    data = read(raw)
    r = t.scope_symbolize(raw, rc=1)
    lines = r.err_lines()
    expect_eq(len(lines), 2, f"lines on stderr ({r.stderr!r})")
    expect(lines[0].startswith(f"scope-symbolize: {exe}: build-id {now} is not the one recorded in {raw} ({recorded})"),
           f"the refusal does not name the binary and both build-ids: {lines[0]!r}")
    expect("rebuilt" in lines[0] and "--force" in lines[0], f"the refusal does not say why or how: {lines[0]!r}")
    expect_eq(lines[1], f"scope-symbolize: {raw}: left as it was", "second line")
    unchanged(raw, data, "refused")
    expect_eq(glob.glob(raw + ".tmp-*"), [], "temporary files left")
    r = t.scope_symbolize("--force", raw)
    expect("resolving it anyway (--force)" in r.stderr, "no warning under --force")
    names = {v[0] for v in regions(raw).values()}
    expect({"main", "run"} <= names, f"names under --force: {sorted(names)}")
    # The file is whole: the same regions as a normal run, by count.
    expect_eq(len(regions(raw)), len(regions(ref)), "regions under --force")


# ---------------------------------------------------------------------------
# Cases: bad input and the command line


def one_line(r, path, pattern, rc=1):
    r.expect_rc(rc)
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"lines on stderr ({r.stderr!r})")
    head = f"scope-symbolize: {path}: "
    expect(lines[0].startswith(head), f"the line does not start with the path: {lines[0]!r}")
    expect(re.search(pattern, lines[0][len(head):]), f"{lines[0]!r} does not match {pattern!r}")
    expect_eq(r.stdout, "", "stdout")


def case_badinput(t):
    text = t.path("notes.txt")
    with open(text, "w") as f:
        f.write("not an HDF5 file\n")
    one_line(t.scope_symbolize(text, rc=1), text, r"^not an HDF5 file$")
    other = t.path("other.h5")
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(4)
    one_line(t.scope_symbolize(other, rc=1), other, r"^not a scope profile \(no schema attribute\)$")
    missing = t.path("missing.h5")
    one_line(t.scope_symbolize(missing, rc=1), missing, r"^No such file or directory$")
    one_line(t.scope_symbolize(t.tmp, rc=1), t.tmp, r"^is a directory$")
    truncated = t.path("truncated.h5")
    raw = t.profile(t.prog("chain-gcc-O2"), out="raw.h5", raw=True)
    with open(truncated, "wb") as f:
        f.write(read(raw)[:2000])
    r = t.scope_symbolize(truncated, rc=1)
    expect_eq(len(r.err_lines()), 1, "lines for a truncated file")

    # A damaged module table: one line naming the column; the file untouched.
    bad = t.path("badmodules.h5")
    shutil.copy(raw, bad)
    with h5py.File(bad, "r+") as f:
        n = len(f["process0/modules/bias"])
        del f["process0/modules/bias"]
        f["process0/modules/bias"] = np.array(["x"] * n, dtype=h5py.string_dtype())
    data = read(bad)
    one_line(t.scope_symbolize(bad, rc=1), bad, r"^/process0/modules/bias is not a column of integers$")
    unchanged(bad, data, "damaged module table")

    # Nothing to resolve: said, exit 0, the file untouched.
    good = t.profile(t.prog("chain-gcc-O2"), out="good.h5")
    data = read(good)
    one_line(t.scope_symbolize(good, rc=0), good, r"^nothing to resolve", rc=0)
    unchanged(good, data, "nothing to resolve")
    expect_eq(t.scope_symbolize("-q", good).stderr, "", "stderr with --quiet")

    # A module gone from disk: said, and nothing else to do.
    exe = t.build("gone")
    gone = t.profile(exe, "1000", out="gone.h5", raw=True)
    os.unlink(exe)
    data = read(gone)
    r = t.scope_symbolize(gone, rc=1)
    expect(f"scope-symbolize: {exe}: No such file or directory: its " in r.stderr, "no word of the missing binary")
    expect_eq(r.err_lines()[-1], f"scope-symbolize: {gone}: none of its {len(regions(gone))} unresolved regions "
              "could be resolved; left as it was", "last line")
    unchanged(gone, data, "module gone")


def case_notfile(t):
    """A module path that is now a FIFO (which libdw would wait on forever) or a folder:
    said with the true reason, at once; the profile left as it was."""
    for kind in ("fifo", "folder"):
        exe = t.build(f"app-{kind}")
        raw = t.profile(exe, "1000", out=f"{kind}.h5", raw=True)
        os.unlink(exe)
        if kind == "fifo":
            os.mkfifo(exe)
        else:
            os.makedirs(exe)
        data = read(raw)
        n = len(regions(raw))
        r = t.scope_symbolize(raw, rc=1, timeout=30)
        why = "not a regular file" if kind == "fifo" else "is a directory"
        expect_eq(r.err_lines(), [f"scope-symbolize: {exe}: {why}: its {n} regions stay unresolved",
                                  f"scope-symbolize: {raw}: none of its {n} unresolved regions could be resolved; "
                                  "left as it was"], f"{kind}: stderr")
        unchanged(raw, data, kind)
        expect_eq(glob.glob(raw + ".tmp-*"), [], f"{kind}: temporary files left")


def case_link(t):
    """A profile named through symbolic links (relative, and a link to a link): the
    target is rewritten beside itself and every link still points at it."""
    prog = t.prog("chain-gcc-O2")
    ref = t.profile(prog, out="ref.h5")
    os.makedirs(t.path("data"))
    os.makedirs(t.path("links"))
    raw = t.profile(prog, out=os.path.join("data", "raw.h5"), raw=True)
    os.chmod(raw, 0o640)
    before = read(raw)
    link = t.path("links", "raw.h5")
    os.symlink(os.path.join("..", "data", "raw.h5"), link)
    chain = t.path("chain.h5")
    os.symlink(link, chain)
    r = t.scope_symbolize(chain)
    expect(re.search(r": \d+ of \d+ unresolved regions resolved$", r.err_lines()[-1]), "no summary line")
    for path, to in ((link, os.path.join("..", "data", "raw.h5")), (chain, link)):
        expect(os.path.islink(path), f"{path} is no longer a symbolic link")
        expect_eq(os.readlink(path), to, f"where {path} points")
    expect(os.path.isfile(raw) and not os.path.islink(raw), "the target is not a file")
    expect_eq(stat.S_IMODE(os.stat(raw).st_mode), 0o640, "mode of the rewritten target")
    expect(read(raw) != before, "the target was not rewritten")
    expect_resolved_like(t, raw, ref, "through links")
    for folder in ("data", "links", ""):
        expect_eq([f for f in os.listdir(t.path(folder)) if ".tmp-" in f], [], f"temporary files left in {folder!r}")
    expect_eq(sorted(os.listdir(t.path("data"))), ["raw.h5"], "files beside the target")
    # Nothing to resolve any more: the links are left alone too.
    t.scope_symbolize(chain)
    expect(os.path.islink(chain) and os.path.islink(link), "a link was replaced by a run with nothing to do")


def usage_error(t, *args, pattern):
    r = t.scope_symbolize(*args, rc=2)
    lines = r.err_lines()
    expect_eq(len(lines), 1, f"lines on stderr ({r.stderr!r})")
    expect(re.match(r"scope-symbolize: .* \(see scope-symbolize --help\)$", lines[0]), f"usage line: {lines[0]!r}")
    expect(re.search(pattern, lines[0]), f"{lines[0]!r} does not match {pattern!r}")


def case_cli(t):
    usage_error(t, pattern="no profile given")
    usage_error(t, "--bogus", "x.h5", pattern="unknown option '--bogus'")
    usage_error(t, "x.h5", "--debug-dir", pattern="--debug-dir needs a value")
    usage_error(t, "--debug-dir", t.path("nowhere"), "x.h5", pattern="nowhere: No such file or directory")
    usage_error(t, "a.h5", "b.h5", pattern="one profile at a time")
    r = t.scope_symbolize("--help")
    expect(r.stdout.startswith("usage: scope-symbolize"), "--help prints the usage")
    for opt in ("--debug-dir", "--force", "--quiet"):
        expect(opt in r.stdout, f"--help mentions {opt}")
    r = t.scope_symbolize("--version")
    expect(re.match(r"scope-symbolize \d+\.\d+\.\d+\n$", r.stdout), f"--version: {r.stdout!r}")


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "bin", "progs", "src", "rdcheck", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())
