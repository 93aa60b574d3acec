#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs one case of scope in unfriendly surroundings and checks what comes out.

Usage: hostile.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR
                  [--sanitized LIBASAN]

The library preloaded for a whole machine (/etc/ld.so.preload, seen only by
the test through a private mount namespace), setuid programs, a program that
gives up root, lowers its descriptor limit, overflows its stack, execs in
vain or loses its parent; wrong settings, a wrong writer, a long or strange
path, valgrind. Each either yields the profile, exactly, or one line saying
what happened and where the data is. One function per case (case_foo_bar is
CASE "foo-bar"). Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RUN_TIMEOUT, Failure, Profile, Run, Skipped, Test, cases_of, expect, expect_eq, \
    memory_dir, no_core_dump, parser, run_case  # noqa: E402
from profile_checks import check_processes, col, expect_counts, said_calls  # noqa: E402

N = 1000  # calls of work() per phase of r_env
NOBODY = 65534


def said_work(r):
    """The work=N the program printed."""
    counts = said_calls(r.stdout.decode("utf-8", "replace"))
    expect("work" in counts, f"the program printed no counts:\n{r.stdout!r}")
    return counts["work"]


def world_writable(t, name):
    path = t.path(name)
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o1777)
    return path


def need_root():
    if os.geteuid() != 0:
        raise Skipped("needs root (to change user, mount, or make a setuid program)")


def profiles_in(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".h5"))


def one_line(r, *words):
    """Exactly one line on stderr, holding every one of WORDS; returns it."""
    lines = r.err_lines()
    expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n  " + "\n  ".join(lines))
    for w in words:
        expect(w in lines[0], f"the line does not name {w!r}: {lines[0]}")
    return lines[0]


def kept_arena(t, line):
    """The arena a line says the data is kept in, checked to exist and to write
    the profile it promises with the command the line gives."""
    m = re.search(r"kept in (/\S+\.arena)\b", line)
    expect(m, f"the line names no arena: {line}")
    arena = m.group(1)
    expect(os.path.isfile(arena), f"{arena} does not exist")
    hint = re.search(r"write it with: (scope-writer [^)]*)\)", line)
    expect(hint, f"the line does not say how to write the data later: {line}")
    words = hint.group(1).split()
    argv = [t.writer] + words[1:-1] + ["-o", t.path("later.h5"), words[-1]]
    t.run(argv, env=t.env()).expect_rc(0)
    return t.load("later.h5")


# ---------------------------------------------------------------------------
# A private /etc with an ld.so.preload, as a site that profiles everything


def private_etc(t, libs):
    """The overlay's folders, and the list of libraries to preload in a file."""
    up, work = t.path("etc-up"), t.path("etc-work")
    os.makedirs(up)
    os.makedirs(work)
    # written from inside, once the user is the one the case wants: a
    # program started before then (setpriv) must not load the library
    with open(os.path.join(up, "ld.so.preload"), "w"):
        pass
    os.chmod(os.path.join(up, "ld.so.preload"), 0o666)
    wanted = t.path("preload-list")
    with open(wanted, "w") as f:
        f.write("\n".join(libs) + "\n")
    return up, work, wanted


def run_in(t, etc, argv, env, uid=None, scratch=(), timeout=60):
    """ARGV with /etc/ld.so.preload naming the libraries of ETC, seen by it
    alone, as UID if given. It runs as process 1 of a PID namespace of its
    own, so that everything it starts dies with it when TIMEOUT is over: a
    chain of writers each starting the next would outlive any other kill.
    The folders in SCRATCH (where arenas go) are small tmpfs of its own, so
    that such a chain cannot fill the disk either."""
    up, work, wanted = etc
    if not shutil.which("unshare") or not shutil.which("setpriv"):
        raise Skipped("needs unshare and setpriv (util-linux)")
    with open(os.path.join(up, "ld.so.preload"), "w"):
        pass  # empty until the program's own shell fills it
    user = [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    small = "".join(f"mount -t tmpfs -o size=32m,mode=1777 tmpfs {d} || exit 98\n" for d in scratch)
    script = (small +
              f"mount -t overlay overlay -o lowerdir=/etc,upperdir={up},workdir={work} /etc || exit 98\n"
              f"exec {' '.join(user)} sh -c 'cat {wanted} > /etc/ld.so.preload && exec \"$@\"' sh \"$@\"")
    full = ["unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private",
            "sh", "-c", script, "sh"] + [str(x) for x in argv]
    print("$ (private /etc)", " ".join(str(x) for x in argv), flush=True)
    proc = subprocess.Popen(full, env=env, cwd=t.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=no_core_dump)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise Failure(f"`{' '.join(str(x) for x in argv)}` did not finish in {timeout} s "
                      "(a process that starts itself again?)")
    if proc.returncode == 98 or (proc.returncode == 1 and b"unshare failed" in err):
        raise Skipped("cannot make a private mount and PID namespace with /etc overlaid "
                      "(needs root and overlayfs)")
    r = Run(full, subprocess.CompletedProcess(full, proc.returncode, out, err))
    print(f"  exit {r.rc}")
    if r.stderr:
        print("  stderr:", r.stderr[-3000:].replace("\n", "\n  | "))
    return r


def preload_libs(t):
    return [lib for lib in (t.asan, t.preload) if lib]


def case_system_preload(t):
    """/etc/ld.so.preload names the library: the program's profile, and scope's own
    programs (the writer, scope-report) record nothing and start no writer."""
    need_root()
    t.need_prog()
    etc = private_etc(t, preload_libs(t))
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")})
    r = run_in(t, etc, [t.prog, "plain", N], env, scratch=[t.tmp])
    r.expect_rc(0)
    expect_counts(t.load("out.h5"), {"work": said_work(r), "main": 1})
    report = os.path.join(os.path.dirname(t.writer), "scope-report")
    run_in(t, etc, [report, "--top", "1", t.path("out.h5")], t.env(), scratch=[t.tmp]).expect_rc(0)
    expect_eq(profiles_in(t.work), ["out.h5"], f"profiles in {t.work}")


def case_secure_mode(t):
    """A setuid-root program run by nobody, the library in /etc/ld.so.preload: no
    SCOPE_* variable is honoured (nothing recorded, the named writer never runs)."""
    need_root()
    t.need_prog()
    arenas, seen = world_writable(t, "arenas"), world_writable(t, "seen")
    mark = os.path.join(seen, "writer-ran")
    evil = t.path("evil-writer")
    with open(evil, "w") as f:
        f.write(f"#!/bin/sh\nid -u > {mark}\n")
    os.chmod(evil, 0o755)
    suid = t.path("suid")
    os.makedirs(suid)
    prog = os.path.join(suid, os.path.basename(t.prog))
    shutil.copy(t.prog, prog)
    os.chmod(prog, 0o4755)
    etc = private_etc(t, preload_libs(t))
    env = t.env({"SCOPE_WRITER": evil, "SCOPE_OUTPUT": os.path.join(seen, "out.h5"), "SCOPE_TMPDIR": arenas,
                 "SCOPE_OUTPT": "typo", "SCOPE_CLOCK": "rdtsc"})
    r = run_in(t, etc, [prog, "plain", N], env, uid=NOBODY, scratch=[arenas])
    r.expect_rc(0)
    expect_eq(said_work(r), N, "calls the program made")
    expect_eq([line for line in r.err_lines() if "SCOPE_" in line], [],
              "lines about SCOPE_* variables (none is read in secure mode)")
    if os.path.exists(mark):
        raise Failure(f"SCOPE_WRITER ran, as uid {open(mark).read().strip()}")
    expect_eq(os.listdir(seen), [], f"files the setuid program left in {seen}")


def case_privilege_drop(t):
    """A program that gives up root for nobody (as daemons do) keeps its profile."""
    need_root()
    t.need_prog()
    folder = world_writable(t, "open")
    env = t.env({"SCOPE_OUTPUT": os.path.join(folder, "out.h5")}, preload=t.preload)
    r = t.run([t.prog, "drop", N], env=env)
    r.expect_rc(0)
    expect_counts(t.load("open/out.h5"), {"work": 2 * N, "works": 2, "main": 1})
    for line in r.err_lines():
        expect(".arena" in line, f"an unexpected line on stderr: {line}")


def noting_writer(t, name, note):
    """(a SCOPE_WRITER that runs the shell line NOTE into its log, then the real writer; the
    log's path)"""
    log = t.path(f"{name}.log")
    wrapper = t.path(f"{name}.sh")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\n{note.format(log=log)}\nexec {t.writer} "$@"\n')
    os.chmod(wrapper, 0o755)
    return wrapper, log


def logging_writer(t):
    """(a SCOPE_WRITER that logs its starts and runs the real one, the log's path)"""
    return noting_writer(t, "writers", 'echo "$@" >> {log}')


def env_writer(t):
    """(a SCOPE_WRITER that notes its environment and runs the real one, the notes' path)"""
    return noting_writer(t, "writer-env", "env >> {log}; echo --- >> {log}")


def case_writer_env(t):
    """The writer runs with malloc in huge pages (GLIBC_TUNABLES gains glibc.malloc.hugetlb=1
    after the user's tunables), nothing to record it, under scope-run and plain LD_PRELOAD
    alike; the program keeps the user's tunables as they were."""
    t.need_prog()
    mine = "glibc.malloc.check=0:glibc.malloc.tcache_count=5"
    for how in ("scope-run", "LD_PRELOAD"):
        wrapper, log = env_writer(t)
        if os.path.exists(log):
            os.unlink(log)
        extra = {"SCOPE_WRITER": wrapper, "SCOPE_OUTPUT": t.path("out.h5"), "GLIBC_TUNABLES": mine}
        if how == "scope-run":
            r = t.run([t.scope_run, "-q", "-o", "out.h5", "--", t.prog, "tunables", N], env=t.env(extra))
        else:
            r = t.run([t.prog, "tunables", N], env=t.env(extra, preload=t.preload))
        r.expect_rc(0)
        expect_eq([l for l in t.text(r).splitlines() if l.startswith("GLIBC_TUNABLES=")],
                  [f"GLIBC_TUNABLES={mine}"], f"the program's tunables ({how})")
        deadline = time.monotonic() + 30  # plain LD_PRELOAD: the writer goes on after the program
        while time.monotonic() < deadline and not os.path.exists(t.path("out.h5")):
            time.sleep(0.05)
        expect_counts(t.load("out.h5"), {"work": N, "works": 1, "main": 1})
        with open(log) as f:
            starts = [block.split("\n") for block in f.read().split("---\n") if block.strip()]
        expect_eq(len(starts), 1, f"writers started ({how})")
        env = [l for l in starts[0] if l]
        expect_eq([l for l in env if l.startswith("GLIBC_TUNABLES=")],
                  [f"GLIBC_TUNABLES={mine}:glibc.malloc.hugetlb=1"], f"the writer's tunables ({how})")
        expect_eq([l for l in env if l.startswith("SCOPE_OFF=")], ["SCOPE_OFF=1"], f"the writer's SCOPE_OFF ({how})")
        expect(not any(l.startswith("LD_PRELOAD=") for l in env), f"the writer has LD_PRELOAD ({how})")
        os.unlink(t.path("out.h5"))


def case_nofile_soft(t):
    """A program that lowers its descriptor limit to 3 (not the hard one) keeps its
    profile, and hands its arena to the run's writer: no writer of its own."""
    t.need_prog()
    wrapper, log = logging_writer(t)
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5"), "SCOPE_WRITER": wrapper}, preload=t.preload)
    r = t.run([t.prog, "nofile", N, 3, 4096], env=env)
    r.expect_rc(0)
    expect_eq(r.err_lines(), [], "lines on stderr")
    expect_counts(t.load("out.h5"), {"work": N, "works": 1, "main": 1})
    with open(log) as f:
        starts = f.read().splitlines()
    expect_eq(len(starts), 1, f"writers started: {starts}")
    expect("--run-fd" in starts[0], f"the one writer is not the run's: {starts[0]}")


def case_nofile_hard(t):
    """Hard limit 3: no writer can start; one line says so and where the data is."""
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    r = t.run([t.prog, "nofile", N, 3, 3], env=env)
    r.expect_rc(0)
    expect(not os.path.exists(t.path("out.h5")), "a profile was written")
    p = kept_arena(t, one_line(r, "descriptor limit"))
    expect_counts(p, {"work": N, "works": 1, "main": 1})


def case_file_limit(t):
    """A file-size limit (ulimit -f 200M) under the arena's 64 GiB: the arena
    stays within it and the program is not killed by SIGXFSZ."""
    t.need_prog()
    limit = 200 << 20

    def limited():
        no_core_dump()
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    argv = [str(x) for x in (t.prog, "plain", N)]
    print("$ (ulimit -f 200M)", " ".join(argv), flush=True)
    proc = subprocess.run(argv, env=env, cwd=t.work, capture_output=True, timeout=RUN_TIMEOUT,
                          preexec_fn=limited)
    r = Run(argv, proc)
    r.expect_rc(0)
    expect_eq(r.err_lines(), [], "lines on stderr")
    expect_counts(t.load("out.h5"), {"work": said_work(r), "main": 1})


def case_stack_overflow(t):
    """Unbounded recursion under plain LD_PRELOAD: the profile is saved on the
    handler's own stack, the calls flagged as never returned, and the program
    still dies of SIGSEGV."""
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    r = t.run([t.prog, "overflow", N], env=env)
    expect_eq(r.rc, -signal.SIGSEGV, "exit status (killed by SIGSEGV)")
    p = t.load("out.h5")
    expect_counts(p, {"work": N, "works": 1, "main": 1})
    dives = p.calls("dive")
    expect(len(dives["flags"]) > 100, f"only {len(dives['flags'])} calls of dive")
    expect(all(int(f) & 1 for f in dives["flags"]), "a call of dive is not flagged as never returned")
    expect_eq(int(p.processes["exit_signal"][0]), signal.SIGSEGV, "/processes/exit_signal")


def writer_case(t, writer, *words):
    """SCOPE_WRITER=WRITER: the profile is not written and one line (holding
    WORDS) says where the data is; the kept arena writes the profile."""
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5"), "SCOPE_WRITER": writer}, preload=t.preload)
    r = t.run([t.prog, "plain", N], env=env)
    r.expect_rc(0)
    expect(not os.path.exists(t.path("out.h5")), "a profile was written")
    expect_counts(kept_arena(t, one_line(r, writer, *words)), {"work": said_work(r), "main": 1})


def case_writer_true(t):
    """A writer that exits 0 without writing anything."""
    writer_case(t, "/bin/true", "without writing the profile")


def case_writer_false(t):
    """A writer that fails without a word."""
    writer_case(t, "/bin/false", "status 1")


def case_writer_killed(t):
    """A writer killed by a signal."""
    killed = t.path("killed-writer")
    with open(killed, "w") as f:
        f.write("#!/bin/sh\nkill -9 $$\n")
    os.chmod(killed, 0o755)
    writer_case(t, killed, "signal 9")


def setting_case(t, var, value, counts=None):
    """VAR=VALUE under plain LD_PRELOAD: one line naming it, and the profile whole."""
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5"), var: value}, preload=t.preload)
    r = t.run([t.prog, "plain", N], env=env)
    r.expect_rc(0)
    one_line(r, f"{var}='{value}'")
    expect_counts(t.load("out.h5"), counts or {"work": said_work(r), "main": 1})
    return r


def case_bad_compression(t):
    setting_case(t, "SCOPE_COMPRESSION", "zstd:99")


def case_bad_chunk_size(t):
    setting_case(t, "SCOPE_CHUNK_SIZE", "-5")


def case_bad_arena_max(t):
    setting_case(t, "SCOPE_ARENA_MAX", "-1")


def case_bad_compression_lz4(t):
    """A compression the writer does not have, with the library alone and under scope-run:
    one line each time, and the profile written with the default."""
    setting_case(t, "SCOPE_COMPRESSION", "lz4")
    env = {"SCOPE_COMPRESSION": "lz4"}
    p, r = t.profile("plain", N, out="run.h5", env=env)
    one_line(r, "SCOPE_COMPRESSION='lz4'", "auto, none, gzip or gzip:1..9")
    expect_counts(p, {"work": said_work(r), "main": 1})


def case_bad_clock(t):
    setting_case(t, "SCOPE_CLOCK", "rdtsc")


def case_bad_progress(t):
    r = setting_case(t, "SCOPE_PROGRESS", "fast")
    one_line(r, "SCOPE_PROGRESS='fast'", "off or a number of seconds")
    setting_case(t, "SCOPE_PROGRESS", "-2")
    for good in ("off", "0", "2.5"):
        env = t.env({"SCOPE_OUTPUT": t.path("ok.h5"), "SCOPE_PROGRESS": good}, preload=t.preload)
        r = t.run([t.prog, "plain", N], env=env)
        r.expect_rc(0)
        expect("SCOPE_PROGRESS" not in r.stderr, f"SCOPE_PROGRESS={good}: {r.stderr!r}")


def case_unknown_setting(t):
    """A misspelt variable: one line naming it and the variable it is nearest to, with that
    one's values, and the run as without it; a name near none gets a line too."""
    r = setting_case(t, "SCOPE_COMPRESION", "gzip:3")
    one_line(r, "SCOPE_COMPRESION='gzip:3' is not a scope variable", "did you mean SCOPE_COMPRESSION",
             "auto, none, gzip or gzip:1..9")
    env = t.env({"SCOPE_OUTPUT": t.path("far.h5"), "SCOPE_NOTHING_LIKE_IT": "1"}, preload=t.preload)
    r = t.run([t.prog, "plain", N], env=env)
    r.expect_rc(0)
    line = one_line(r, "SCOPE_NOTHING_LIKE_IT='1' is not a scope variable", "scope(7)")
    expect("did you mean" not in line, f"a name near none was given one: {line}")
    expect_counts(t.load("far.h5"), {"work": said_work(r), "main": 1})
    env = t.env({"SCOPE_OUTPUT": t.path("known.h5"), "SCOPE_SYMBOLIZE": "1", "SCOPE_DEBUG": "0"},
                preload=t.preload)
    r = t.run([t.prog, "plain", N], env=env)
    r.expect_rc(0)
    expect_eq(r.err_lines(), [], "lines on stderr with known variables only")


def settings_table(root):
    """The names of lib/settings.h's table."""
    with open(os.path.join(root, "lib", "settings.h")) as f:
        return set(re.findall(r'X\("(SCOPE_[A-Z_]+)"', f.read()))


def case_settings_docs(t):
    """The variables the library knows (lib/settings.h) are those the man pages document."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(t.src)))
    known = settings_table(root)
    expect(len(known) > 10, f"lib/settings.h lists only {sorted(known)}")
    documented = set()
    for page in os.listdir(os.path.join(root, "man")):
        with open(os.path.join(root, "man", page)) as f:
            text = f.read()
        documented |= set(re.findall(r"^\.B[IR]? (SCOPE_[A-Z_]+)\b", text, re.M))
    expect_eq(sorted(documented - known), [], "variables the man pages document that lib/settings.h lacks")
    expect_eq(sorted(known - documented), [], "variables of lib/settings.h no man page documents")


def case_bad_root(t):
    """SCOPE_ROOT that no profiled process set: the output, not a part."""
    setting_case(t, "SCOPE_ROOT", "garbage")
    expect_eq(profiles_in(t.work), ["out.h5"], f"profiles in {t.work}")


def long_folder(t, length):
    """A folder whose absolute path is LENGTH bytes, made."""
    path = t.work
    while len(path) < length - 110:
        path = os.path.join(path, "d" * 99)
    path = os.path.join(path, "e" * (length - len(path) - 1))
    os.makedirs(path)
    expect_eq(len(path), length, "the folder's path length")
    return path


def case_long_output(t):
    """An output path of 1205 bytes (shorter than PATH_MAX): the profile is there,
    through plain LD_PRELOAD and through scope-run."""
    t.need_prog()
    folder = long_folder(t, 1200)
    plain = os.path.join(folder, "a.h5")
    r = t.run([t.prog, "plain", N], env=t.env({"SCOPE_OUTPUT": plain}, preload=t.preload))
    r.expect_rc(0)
    expect_eq(r.err_lines(), [], "lines on stderr")
    expect(os.path.isfile(plain), f"no profile at the {len(plain)}-byte path")
    expect_counts(Profile(plain), {"work": said_work(r), "main": 1})
    run = os.path.join(folder, "b.h5")
    r = t.scope("-q", "-o", run, "--", t.prog, "plain", N)
    r.expect_rc(0)
    expect(os.path.isfile(run), f"no profile at the {len(run)}-byte path")
    expect_counts(Profile(run), {"work": said_work(r), "main": 1})
    expect_eq(profiles_in(t.work), [], f"profiles left in {t.work}")


def case_exec_fail(t):
    """Ten execs that fail: each image's calls are in the profile, and the
    written arenas are let go (one mapping, one descriptor left)."""
    t.need_prog()
    p, r = t.profile("execfail", N, 10)
    expect(b"arena mappings=1 descriptors=1" in r.stdout,
           f"arenas held after 10 failed execs: {r.stdout.decode(errors='replace').strip()}")
    total = sum(p.count("work", row) for row in range(len(p.processes["pid"])))
    expect_eq(total, 10 * N, "calls of work in all the images")
    expect_eq(len(p.processes["pid"]), 11, "processes (one image per failed exec, and the last)")


def case_orphan_parent(t):
    """A parent killed by SIGKILL right after fork: the child names it as its
    parent, every time (the kernel has given the child to another by then)."""
    t.need_prog()
    for attempt in range(5):
        out = f"out{attempt}.h5"
        r = t.scope("-q", "-o", out, "--", t.prog, "orphan", N)
        r.expect_rc(128 + signal.SIGKILL)
        p = t.load(out)
        check_processes(p)
        expect_eq(len(p.processes["pid"]), 2, "processes")
        child = [row for row in range(2) if p.count("work", row) == N]
        expect_eq(len(child), 1, "processes that made the child's calls")
        expect_eq(col(p, child[0], "parent"), 1 - child[0], f"parent of the child (attempt {attempt})")


def writer_cpu(r):
    """(seconds while the program ran, seconds after) from scope-run's writer line."""
    m = re.search(r"writer: CPU ([\d.]+) s while the program ran, ([\d.]+) s after", r.stderr)
    expect(m, f"no line on the writer's CPU time:\n{r.stderr}")
    return float(m.group(1)), float(m.group(2))


def forks_case(t, *options):
    """r_env forks: 4 children of 200,000 calls each, then the parent rests and works.
    Every process exact, one writer for the run (a SCOPE_WRITER that logs its starts)."""
    t.need_prog()
    wrapper, log = logging_writer(t)
    r = t.scope(*options, "-o", "out.h5", "--", t.prog, "forks", 200_000, 4, env={"SCOPE_WRITER": wrapper})
    r.expect_rc(0)
    p = t.load("out.h5")
    check_processes(p)
    expect_eq(len(p.processes["pid"]), 5, "processes")
    expect_counts(p, {"work": 200_000, "works": 1, "main": 1, "report": 1}, 0)
    for row in range(1, 5):  # main was open in the parent when it forked: not theirs
        expect_counts(p, {"work": 200_000, "works": 1, "main": 0, "report": 1}, row)
    with open(log) as f:
        starts = f.read().splitlines()
    expect_eq(len(starts), 1, f"writers started (the run's, then one per process if it was gone): {starts}")
    expect("--run-fd" in starts[0], f"the one writer is not the run's: {starts[0]}")
    return writer_cpu(r)


def case_run_writer(t):
    """One writer for the whole run, writing the children's arenas while the parent goes on."""
    during, after = forks_case(t)
    expect(during >= 0.01, f"the writer used {during} s of CPU while the program ran: it waited for the end")


def case_write_at_exit(t):
    """--write-at-exit: the same profile, and the writer idle until the program has ended."""
    during, after = forks_case(t, "--write-at-exit")
    # its start (exec, loading HDF5 and libdw) is all it may do meanwhile, as it is for a
    # program that only sleeps: 10 ms, 50 ms under ASan; started the same way, through the
    # shell that logs it, whose start is the writer's CPU time too
    wrapper, _ = logging_writer(t)
    r = t.scope("--write-at-exit", "-o", "idle.h5", "--", "sleep", "0.5", env={"SCOPE_WRITER": wrapper})
    r.expect_rc(0)
    start = writer_cpu(r)[0]
    expect(during <= start + 0.02,
           f"the writer used {during} s of CPU while the program ran: more than its start ({start} s)")
    expect(after > 4 * during, f"the writer's CPU seconds after the program: {after}, against {during} during")


def case_plain_root_killed(t):
    """Plain LD_PRELOAD, the run's first process killed at once (SIGKILL): the run's writer,
    which it started, sees it go, writes what was handed over and leaves: no writer is left
    running, no folder of the run left behind, and the child's profile is written."""
    t.need_prog()
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    r = t.run([t.prog, "orphan", N], env=env)
    expect_eq(r.rc, -signal.SIGKILL, "exit status (killed by SIGKILL)")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [d for d in os.listdir(t.tmp) if d.startswith("scope-run-")]
        pgrep = subprocess.run(["pgrep", "-f", "--", f"--detach {t.tmp}/"], capture_output=True)
        expect(pgrep.returncode in (0, 1), f"pgrep failed: {pgrep.stderr!r}")
        lingering = pgrep.stdout.split()
        if not left and not lingering:
            break
        time.sleep(0.1)
    expect_eq(left, [], f"the run's folder left in {t.tmp}")
    expect_eq(lingering, [], "writers still running")
    parts = [f for f in os.listdir(t.work) if f.endswith(".h5")]
    expect(parts, f"no profile of the child in {t.work}")
    child = [Profile(t.path(f)) for f in parts]
    expect(any(p.count("work") == N for p in child), f"no profile holds the child's {N} calls: {parts}")


def case_newline_path(t):
    """A program whose path holds a newline: its functions are still named."""
    t.need_prog()
    folder = t.path("a\nb")
    os.makedirs(folder)
    prog = os.path.join(folder, "prog")
    shutil.copy(t.prog, prog)
    r = t.scope("-q", "-o", "out.h5", "--", prog, "plain", N)
    r.expect_rc(0)
    expect_counts(t.load("out.h5"), {"work": said_work(r), "works": 1, "main": 1})


def case_launcher_exec(t):
    """LD_PRELOAD=... env ./app: the run's first process execs the program, whose image waits at
    its end for the run's writer, so the profile is whole when the command has exited."""
    t.need_prog()
    out = t.path("out.h5")
    env = t.env({"SCOPE_OUTPUT": out}, preload=t.preload)
    argv = ["/usr/bin/env", t.prog, "plain", str(20 * N)]
    for i in range(3):
        if os.path.exists(out):
            os.unlink(out)
        # output to files, not pipes: the command's end is its exit, not
        # the moment the last holder of its pipes (the writer) is gone
        with open(t.path("stdout"), "w") as so, open(t.path("stderr"), "w") as se:
            print("$", " ".join(argv), flush=True)
            rc = subprocess.run(argv, env=env, cwd=t.work, stdin=subprocess.DEVNULL, stdout=so,
                                stderr=se, timeout=RUN_TIMEOUT).returncode
            there = os.path.exists(out)
        expect_eq(rc, 0, f"round {i}: exit status")
        expect(there, f"round {i}: no profile at {out} when the command exited")
        with open(t.path("stdout")) as f:
            said = int(re.search(r"calls work=(\d+)", f.read()).group(1))
        p = t.load("out.h5")
        rows = [k for k, exe in enumerate(p.processes["executable"]) if exe.endswith(os.path.basename(t.prog))]
        expect_eq(len(rows), 1, f"round {i}: images of {t.prog} in the output ({list(p.processes['executable'])})")
        expect_counts(p, {"work": said, "works": 1, "main": 1}, rows[0])


def case_valgrind(t):
    """LD_PRELOAD=... valgrind ./app: the profile holds app's calls, not the launcher's."""
    t.need_prog()
    if t.asan:
        raise Skipped("valgrind does not run ASan programs")
    valgrind = shutil.which("valgrind")
    if not valgrind:
        raise Skipped("valgrind is not installed")
    env = t.env({"SCOPE_OUTPUT": t.path("out.h5")}, preload=t.preload)
    r = t.run([valgrind, "-q", "--tool=none", t.prog, "plain", N], env=env)
    r.expect_rc(0)
    p = t.load("out.h5")
    rows = [i for i, exe in enumerate(p.processes["executable"]) if exe.endswith(os.path.basename(t.prog))]
    expect_eq(len(rows), 1, f"processes of {t.prog} in the output (it holds {list(p.processes['executable'])})")
    expect_counts(p, {"work": said_work(r), "works": 1, "main": 1}, rows[0])


def where_run(t, calls, wait_ms, *options, preload=False, extra=None):
    """r_env where under scope-run (or plain LD_PRELOAD), no folder named but TMPDIR and those
    in EXTRA: what it printed as {"arena": path, "store": name}, and TMPDIR."""
    tmp = t.path("tmpdir")
    os.makedirs(tmp)
    env = t.env({"TMPDIR": tmp, "SCOPE_OUTPUT": t.path("out.h5"), **(extra or {})},
                preload=t.preload if preload else None)
    del env["SCOPE_TMPDIR"]
    argv = [t.prog, "where", calls, tmp, wait_ms]
    r = t.run(argv if preload else [t.scope_run, "-q", *options, "-o", "out.h5", "--", *argv], env=env)
    r.expect_rc(0)
    seen = dict(line.split("=", 1) for line in t.text(r).splitlines() if line.startswith(("arena=", "store=")))
    return seen, tmp


def expect_run_left_nothing(t, arena, tmp, calls):
    """Neither the arena nor its store is left, and the profile has every call."""
    deadline = time.monotonic() + 30  # plain LD_PRELOAD: the writer finishes after the program
    while time.monotonic() < deadline and (os.path.exists(arena) or os.listdir(tmp)):
        time.sleep(0.05)
    expect(not os.path.exists(arena), f"the arena {arena} is left")
    expect_eq(os.listdir(tmp), [], "files left in TMPDIR")
    p = t.load("out.h5")
    expect_eq((p.count("work"), p.count("main")), (calls, 1), "calls of work and main")


def case_arena_in_memory(t):
    """No folder named: the arena is in /dev/shm (under scope-run, in its folder there), where
    its pages are never written back, and its store, which grows with the run, in TMPDIR; the
    profile has every call, and neither file is left."""
    t.need_prog()
    if not memory_dir():
        raise Skipped("/dev/shm is not a writable folder with 1 GiB free")
    calls = 300000  # some 110 chunks of 64 KiB: the writer copies some while the program waits
    for preload, folder in ((False, r"/dev/shm/scope-run-[^/]+"), (True, r"/dev/shm")):
        shutil.rmtree(t.path("tmpdir"), ignore_errors=True)
        seen, tmp = where_run(t, calls, 10000, preload=preload)
        arena = seen.get("arena", "")
        expect(re.fullmatch(folder + r"/scope-\d+-\w+\.arena", arena), f"the arena: {arena!r}")
        expect_eq(seen.get("store"), os.path.basename(arena) + ".store", "the store, in TMPDIR")
        expect_run_left_nothing(t, arena, tmp, calls)
        if not preload:
            expect(not os.path.exists(os.path.dirname(arena)), f"scope-run's folder {os.path.dirname(arena)} is left")


def case_arena_dir_named(t):
    """SCOPE_ARENA_DIR names the arenas' folder (under scope-run, its folder goes there); the
    stores, which grow with the run, stay in TMPDIR, and neither is left."""
    t.need_prog()
    named = t.path("arenas")
    os.makedirs(named)
    calls = 300000
    for preload, folder in ((False, re.escape(named) + r"/scope-run-[^/]+"), (True, re.escape(named))):
        shutil.rmtree(t.path("tmpdir"), ignore_errors=True)
        seen, tmp = where_run(t, calls, 10000, preload=preload, extra={"SCOPE_ARENA_DIR": named})
        arena = seen.get("arena", "")
        expect(re.fullmatch(folder + r"/scope-\d+-\w+\.arena", arena), f"the arena: {arena!r}")
        expect_eq(seen.get("store"), os.path.basename(arena) + ".store", "the store, in TMPDIR")
        expect_run_left_nothing(t, arena, tmp, calls)
        expect_eq(os.listdir(named), [], f"left in {named}")


def case_arena_at_exit(t):
    """--write-at-exit: nothing drains the arena while the program runs, so it grows with the
    run, and stays on disk, in scope-run's folder in TMPDIR."""
    t.need_prog()
    calls = 300000
    seen, tmp = where_run(t, calls, 0, "--write-at-exit")
    arena = seen.get("arena", "")
    expect(re.fullmatch(re.escape(tmp) + r"/scope-run-[^/]+/scope-\d+-\w+\.arena", arena), f"the arena: {arena!r}")
    expect_eq(seen.get("store"), "none", "a store, though no writer ran alongside")
    expect_run_left_nothing(t, arena, tmp, calls)


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized").parse_args()
    return run_case(CASES, a.case, lambda: Test(a))


if __name__ == "__main__":
    sys.exit(main())

