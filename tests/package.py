#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What scope ships: the installed tree, the .deb, the Python package, the completion, the versions.

Usage: package.py CASE --prog PATH --bin DIR --lib DIR --workdir DIR --build DIR --source DIR --version V

install: cmake --install to a scratch prefix gives a tree whose programs find
each other and whose Python package (on PYTHONPATH) reads the profile they
write. local: the same installed to /usr/local (overlaid in a private mount
namespace), where Debian's python3 finds the package with no PYTHONPATH.
deb: cpack -G DEB makes scope_VERSION_ARCH.deb with the runtime packages as
dependencies; unpacked (dpkg -x) into a scratch root, its scope-run profiles a
program and its Python package, in the folder Debian's python3 reads, reads it.
completion: the bash completion, sourced, completes `scope-report --tr` to
--tree (by itself and under bash-completion). version: every command's
--version, the Python package and the package name the project's version.
wheel: the Python package builds as a wheel offline (pip, no index, no build
isolation) and the wheel holds the package at that version.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, Skipped, Test, cases_of, expect, expect_eq, parser, run_case  # noqa: E402

COMMANDS = ("scope-run", "scope-bench", "scope-report", "scope-merge", "scope-symbolize", "scope-writer")
PYTHON = "/usr/bin/python3"  # Debian's: the one whose folders the package is installed to

# Reads the profile argv[1] with the installed package; prints its file and the calls of fib.
READ = """
import sys, scope_profile
with scope_profile.load(sys.argv[1]) as p:
    print(scope_profile.__file__)
    print(int(p.summary().set_index("name").loc["fib", "calls"]))
    print(len(p.events(region="fib")))
"""


def python_reads(t, profile, env, where):
    """The installed scope_profile, run by Debian's python3, reads PROFILE: it is
    imported from under WHERE and counts fib's 21891 calls."""
    r = t.run([PYTHON, "-c", READ, profile], env=env)
    r.expect_rc(0)
    lines = t.text(r).split()
    expect(lines and lines[0].startswith(where + os.sep), f"scope_profile imported from {lines[:1]}, not {where}")
    expect_eq(lines[1:], ["21891", "21891"], "calls of fib read by the installed package")


def python_dir(prefix):
    """The folder under PREFIX that holds the installed scope_profile."""
    found = glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages", "scope_profile", "__init__.py"))
    expect(len(found) == 1, f"scope_profile installed under {prefix}: {found}")
    return os.path.dirname(os.path.dirname(found[0]))


def profiles_fib(t, scope_run, cwd, name="out.h5", env=None):
    """SCOPE_RUN profiles fib from CWD; returns the profile's path."""
    r = t.run([scope_run, "-q", "-o", name, "--", t.prog], env=env or t.env(), cwd=cwd)
    r.expect_rc(0)
    path = os.path.join(cwd, name)
    expect_eq(t.load(os.path.relpath(path, t.work)).count("fib"), 21891, f"calls of fib ({scope_run})")
    return path


def case_install(t):
    t.need_prog()
    prefix = t.path("prefix")
    t.run(["cmake", "--install", t.build, "--prefix", prefix]).expect_rc(0)
    for rel in [f"bin/{c}" for c in COMMANDS] + [
            "lib/libscope_preload.so", "share/man/man1/scope-report.1", "share/doc/scope/LICENSE"] + [
            f"share/bash-completion/completions/{c}" for c in COMMANDS]:
        expect(os.path.exists(os.path.join(prefix, rel)), f"{rel} was not installed")
    site = python_dir(prefix)
    r = t.run([PYTHON, "-c", "import sys; print('python%d.%d' % sys.version_info[:2])"])
    expect_eq(os.path.relpath(site, prefix), os.path.join("lib", t.text(r).strip(), "dist-packages"),
              "the package's folder under a prefix other than /usr")
    elsewhere = t.path("elsewhere")
    os.makedirs(elsewhere)
    profile = profiles_fib(t, os.path.join(prefix, "bin", "scope-run"), elsewhere)
    python_reads(t, profile, t.env({"PYTHONPATH": site}), site)


def case_local(t):
    """Installed to /usr/local, seen only inside a private mount namespace."""
    t.need_prog()
    if not shutil.which("unshare"):
        raise Skipped("needs unshare (util-linux)")
    ns = t.path("ns")
    os.makedirs(ns)
    script = (f"mount -t tmpfs tmpfs {ns} || exit 98\n"
              f"mkdir {ns}/up {ns}/work || exit 98\n"
              f"mount -t overlay overlay -o lowerdir=/usr/local,upperdir={ns}/up,workdir={ns}/work /usr/local "
              "|| exit 98\n"
              f"cmake --install {t.build} --prefix /usr/local >/dev/null || exit 1\n"
              f"cd {t.path('run')} && /usr/local/bin/scope-run -q -o out.h5 -- {t.prog} >/dev/null || exit 1\n"
              f"exec {PYTHON} -c '{READ}' {t.path('run', 'out.h5')}\n")
    os.makedirs(t.path("run"))
    env = t.env()
    env.pop("PYTHONPATH", None)
    r = t.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], env=env)
    if r.rc == 98 or (r.rc == 1 and "unshare failed" in r.stderr):
        raise Skipped("cannot overlay /usr/local in a private mount namespace (needs root and overlayfs)")
    r.expect_rc(0)
    lines = t.text(r).split()
    expect(lines and re.fullmatch(r"/usr/local/lib/python3\.\d+/dist-packages/scope_profile/__init__\.py", lines[0]),
           f"scope_profile imported from {lines[:1]}")
    expect_eq(lines[1:], ["21891", "21891"], "calls of fib read by the package in /usr/local")


def deb_field(t, deb, name):
    r = t.run(["dpkg-deb", "-f", deb, name])
    r.expect_rc(0)
    return t.text(r).strip()


def case_deb(t):
    t.need_prog()
    for tool in ("cpack", "dpkg-deb"):
        if not shutil.which(tool):
            raise Skipped(f"needs {tool}")
    out = t.path("deb")
    t.run(["cpack", "-G", "DEB", "--config", os.path.join(t.build, "CPackConfig.cmake"), "-B", out],
          cwd=t.build).expect_rc(0)
    debs = glob.glob(os.path.join(out, "*.deb"))
    expect(len(debs) == 1, f"cpack made {debs}")
    deb = debs[0]
    arch = t.text(t.run(["dpkg", "--print-architecture"])).strip()
    expect_eq(os.path.basename(deb), f"scope_{t.version}_{arch}.deb", "the package's file name")
    expect_eq(deb_field(t, deb, "Package"), "scope", "Package")
    expect_eq(deb_field(t, deb, "Version"), t.version, "Version")
    depends = [re.sub(r"\s*\(.*\)", "", d).strip() for d in deb_field(t, deb, "Depends").split(",")]
    for want in ("libdw1", "libdeflate0", "zlib1g", "python3", "python3-h5py", "python3-numpy", "python3-pandas"):
        expect(want in depends, f"Depends lacks {want}: {depends}")
    # HDF5: its own package when linked shared, the libraries of the static one otherwise
    expect(any(d.startswith("libhdf5") or d == "libsz2" for d in depends), f"Depends lacks HDF5's: {depends}")
    root = t.path("root")
    t.run(["dpkg", "-x", deb, root]).expect_rc(0)
    for rel in [f"usr/bin/{c}" for c in COMMANDS] + [
            "usr/lib/libscope_preload.so", "usr/share/man/man1/scope-run.1", "usr/share/man/man7/scope.7",
            "usr/lib/python3/dist-packages/scope_profile/__init__.py"] + [
            f"usr/share/bash-completion/completions/{c}" for c in COMMANDS]:
        expect(os.path.exists(os.path.join(root, rel)), f"{rel} is not in the package")
    # the folder the package's Python files go to is one Debian's python3 reads
    r = t.run([PYTHON, "-c", "import sys; print('\\n'.join(sys.path))"], env=t.env())
    expect("/usr/lib/python3/dist-packages" in t.text(r).split("\n"), "Debian's python3 reads /usr/lib/python3/dist-packages")
    elsewhere = t.path("elsewhere")
    os.makedirs(elsewhere)
    profile = profiles_fib(t, os.path.join(root, "usr", "bin", "scope-run"), elsewhere)
    site = os.path.join(root, "usr", "lib", "python3", "dist-packages")
    python_reads(t, profile, t.env({"PYTHONPATH": site}), site)
    for c in COMMANDS:
        r = t.run([os.path.join(root, "usr", "bin", c), "--version"], env=t.env())
        r.expect_rc(0)
        expect_eq(t.text(r).strip(), f"{c} {t.version}", f"{c} --version from the package")


COMPLETE = r"""
[ "$1" = with-bash-completion ] && . /usr/share/bash-completion/bash_completion
. "$2"
shift 2
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
$(complete -p "$1" | sed -E 's/.*-F ([^ ]+) .*/\1/')
printf '%s\n' "${COMPREPLY[@]}"
"""


def completions(t, script, mode, *words):
    env = t.env()
    env["PATH"] = t.bin + os.pathsep + env.get("PATH", "")
    r = t.run(["bash", "-c", COMPLETE, "bash", mode, script, *words], env=env)
    r.expect_rc(0)
    return [w for w in t.text(r).split("\n") if w]


def case_completion(t):
    script = os.path.join(t.source, "completions", "scope.bash")
    modes = ["alone"]
    if os.path.exists("/usr/share/bash-completion/bash_completion"):
        modes.append("with-bash-completion")
    else:
        print("bash-completion is not installed: the completion is checked by itself only")
    for mode in modes:
        expect_eq(completions(t, script, mode, "scope-report", "--tr"), ["--tree"], f"scope-report --tr ({mode})")
        expect_eq(completions(t, script, mode, "scope-report", "--format", "c"), ["csv"],
                  f"scope-report --format c ({mode})")
        expect_eq(completions(t, script, mode, "scope-run", "-o", "x.h5", "--q"), ["--quiet"],
                  f"scope-run -o x.h5 --q ({mode})")
        expect_eq(completions(t, script, mode, "scope-merge", "--pa"), ["--parts"], f"scope-merge --pa ({mode})")
        expect_eq(completions(t, script, mode, "scope-bench", "--var"), ["--variant"], f"scope-bench --var ({mode})")
        expect_eq(completions(t, script, mode, "scope-bench", "--repeat", "3", "--no-w"), ["--no-warm-up"],
                  f"scope-bench --repeat 3 --no-w ({mode})")
        expect_eq(completions(t, script, mode, "scope-report", "--hea"), ["--heap"], f"scope-report --hea ({mode})")
        expect_eq(completions(t, script, mode, "scope-writer", "--reco"), ["--recover"], f"scope-writer --reco ({mode})")
        expect_eq(completions(t, script, mode, "scope-symbolize", "--debug-"), ["--debug-dir"],
                  f"scope-symbolize --debug- ({mode})")
    r = t.run(["bash", "-c", f". {script}; complete -p " + " ".join(COMMANDS)])
    r.expect_rc(0)
    expect_eq(len(t.text(r).strip().split("\n")), len(COMMANDS), "commands with a completion")


def case_version(t):
    for c in COMMANDS:
        for opt in ("--version", "-V"):
            r = t.run([os.path.join(t.bin, c), opt], env=t.env())
            r.expect_rc(0)
            expect_eq(t.text(r).strip(), f"{c} {t.version}", f"{c} {opt}")
    sys.path.insert(0, os.path.join(t.source, "python"))
    import scope_profile
    expect_eq(scope_profile.__version__, t.version, "scope_profile.__version__")
    with open(os.path.join(t.build, "CPackConfig.cmake"), encoding="utf-8") as f:
        m = re.search(r'set\(CPACK_PACKAGE_VERSION "([^"]*)"\)', f.read())
    expect(m, "CPACK_PACKAGE_VERSION in CPackConfig.cmake")
    expect_eq(m.group(1), t.version, "the package's version")


def case_wheel(t):
    r = t.run([PYTHON, "-c", "import setuptools, wheel, pip"])
    if r.rc != 0:
        raise Skipped("building a wheel needs python3-pip, python3-setuptools and python3-wheel")
    src = t.path("src")
    shutil.copytree(os.path.join(t.source, "python"), src,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests"))
    env = t.env({"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"})
    r = t.run([PYTHON, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", t.path("dist"), src], env=env)
    if r.rc != 0 and re.search(r"No matching distribution|Could not find a version|network|Connection", r.stderr):
        raise Skipped("pip wanted to download something: no offline wheel build here")
    r.expect_rc(0)
    wheels = glob.glob(t.path("dist", "*.whl"))
    expect_eq([os.path.basename(w) for w in wheels], [f"scope_profile-{t.version}-py3-none-any.whl"], "the wheel")
    with zipfile.ZipFile(wheels[0]) as z:
        names = set(z.namelist())
        meta = z.read(f"scope_profile-{t.version}.dist-info/METADATA").decode()
    for py in ("__init__.py", "_profile.py", "_tree.py", "_plot.py"):
        expect(f"scope_profile/{py}" in names, f"the wheel lacks scope_profile/{py}: {sorted(names)}")
    for dep in ("h5py", "numpy", "pandas"):
        expect(re.search(rf"^Requires-Dist: {dep}\b", meta, re.M), f"the wheel does not require {dep}")


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "prog", "bin", "lib", "workdir", "sanitized")
    ap.add_argument("--build", required=True, help="the build folder (cmake --install, cpack)")
    ap.add_argument("--source", required=True, help="the source folder")
    ap.add_argument("--version", required=True, help="the project's version")
    a = ap.parse_args()

    def make():
        t = Test(a)
        t.build, t.source, t.version = os.path.abspath(a.build), os.path.abspath(a.source), a.version
        return t

    return run_case(CASES, a.case, make)


if __name__ == "__main__":
    sys.exit(main())
