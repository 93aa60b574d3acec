# SPDX-License-Identifier: MIT
"""Profiles of tests/progs programs made once per session with the scope-run on PATH.

SCOPE_TEST_PROGS names the folder of the built test programs (CTest sets it,
with the build's bin folder first on PATH); without it these tests are skipped.
SCOPE_TEST_ASAN, in a sanitized build, names the ASan runtime to preload."""

import os
import shutil
import subprocess

import pytest


def _progs():
    progs = os.environ.get("SCOPE_TEST_PROGS")
    if not progs:
        pytest.skip("SCOPE_TEST_PROGS is not set: no test programs to profile")
    return progs


def _scope_run():
    path = shutil.which("scope-run")
    assert path, "scope-run is not on PATH"
    return path


class Made:
    """A profile made for the tests: its path and the scope-run that made it."""

    def __init__(self, path, bin_dir):
        self.path = str(path)
        self.bin = bin_dir

    def tool(self, name, *args):
        """The output of a scope tool beside scope-run, run on this profile."""
        out = subprocess.run([os.path.join(self.bin, name), *args, self.path],
                             capture_output=True, text=True, check=False)
        assert out.returncode == 0, f"{name} {' '.join(args)}: {out.stderr}"
        return out.stdout


def _profile(tmp_path_factory, name, prog, *args, status=0, options=(), extra_env=None):
    progs = _progs()
    run = _scope_run()
    out = tmp_path_factory.mktemp(name) / f"{name}.h5"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_") and k != "LD_PRELOAD"}
    env["SCOPE_TMPDIR"] = str(out.parent)
    env.update(extra_env or {})
    if os.environ.get("SCOPE_TEST_ASAN"):  # a sanitized build: its runtime must load first
        env["LD_PRELOAD"] = os.environ["SCOPE_TEST_ASAN"]
    r = subprocess.run([run, "-q", *options, "-o", str(out), "--", os.path.join(progs, prog), *args],
                       capture_output=True, env=env, cwd=out.parent, check=False)
    assert r.returncode == status, f"scope-run {prog} {args}: exit {r.returncode}\n{r.stderr.decode()}"
    return Made(out, os.path.dirname(run))


@pytest.fixture(scope="session")
def threads(tmp_path_factory):
    """Four pthreads; worker-K calls work() 1000*K times."""
    return _profile(tmp_path_factory, "threads", "threads-gcc-O2")


@pytest.fixture(scope="session")
def forked(tmp_path_factory):
    """r_proc fork: a parent and its forked child, each a -> b -> c c three times."""
    return _profile(tmp_path_factory, "fork", "r_proc-gcc-O2", "fork")


@pytest.fixture(scope="session")
def fib(tmp_path_factory):
    """fib(20): 21891 calls of fib, 20 deep."""
    return _profile(tmp_path_factory, "fib", "fib-gcc-O2")


@pytest.fixture(scope="session")
def exited(tmp_path_factory):
    """behave exit 3: leave() calls exit(), so leave and main never return."""
    return _profile(tmp_path_factory, "exit", "behave-gcc-O2", "exit", "3", status=3)


@pytest.fixture(scope="session")
def tasks(tmp_path_factory):
    """api tasks: task 7 "relay" handed between two threads (12 calls of task_step), "side"
    (2), "relay again" (1)."""
    return _profile(tmp_path_factory, "tasks", "api-gcc-O2", "tasks")


@pytest.fixture(scope="session")
def counted(tmp_path_factory):
    """counters with two software counters: touch_pages makes 64 page faults a call, 5 calls."""
    return _profile(tmp_path_factory, "counted", "counters-gcc-O2",
                    options=("--counters", "perf::TASK-CLOCK,perf::PAGE-FAULTS"))


@pytest.fixture(scope="session")
def heaped(tmp_path_factory):
    """heap with SCOPE_HEAP=1: known blocks per function (tests/heap.py's figures)."""
    if os.environ.get("SCOPE_TEST_ASAN"):
        pytest.skip("built with ASan: its allocator takes the calls heap tracking would count")
    return _profile(tmp_path_factory, "heap", "heap-gcc-O2", extra_env={"SCOPE_HEAP": "1"})


@pytest.fixture(scope="session", params=["threads", "forked", "fib", "exited"])
def made(request):
    return request.getfixturevalue(request.param)
