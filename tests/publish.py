#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What scope-run and scope-writer publish when part of a run cannot be written, and what they refuse.

Usage: publish.py CASE --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR [--sanitized LIBASAN]

The program is tests/progs/calls.c ("calls N K": the parent makes N calls
below main, each of its K forked children c*N). Writers are made to fail
for real: a full tmpfs, a file-size limit, a writer killed by SIGKILL, a
bad storage setting. Each case checks the exit status, the lines on
stderr, that the output is absent or unchanged (bytes and inode), and that
what was recorded is kept where the lines say and writes a whole profile.
Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import os
import re
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RUN_TIMEOUT, Profile, Run, Skipped, Test, arenas, cases_of, expect, expect_eq, \
    no_core_dump, parser, run_case, small_tmpfs  # noqa: E402
from profile_checks import expect_counts  # noqa: E402

N = 30_000  # calls of the parent below main: 300 outer, 29,700 leaf


def counts(n, child=False):
    """What calls.c makes in a process that runs run(n); a forked child never entered main."""
    return {"main": 0 if child else 1, "run": 1, "outer": n // 100, "leaf": n // 100 * 99}


class Publish(Test):
    def merge_tool(self):
        return os.path.join(os.path.dirname(self.scope_run), "scope-merge")

    def script(self, name, body):
        """An executable shell script WORK/NAME."""
        path = self.path(name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path

    def killer(self, spare_first=False):
        """A SCOPE_WRITER that kills itself with SIGKILL; with spare_first, the first one
        started runs the real writer (calls.c's child exits, and writes, before its parent)."""
        body = f'mkdir "{self.path("spared")}" 2>/dev/null && exec "{self.writer}" "$@"\n' if spare_first else ""
        return self.script("killer.sh", body + "kill -9 $$\n")

    def unpublished_arena(self, n):
        """An arena of calls N 0 that was stopped but never written (its writer was killed)."""
        self.need_prog()
        env = self.env({"SCOPE_WRITER": self.killer(), "SCOPE_OUTPUT": self.path("never.h5")},
                       preload=self.preload)
        self.run([self.prog, n, 0], env=env)
        found = arenas(self.tmp)
        expect(len(found) == 1, f"expected one arena left in {self.tmp}, found {found}")
        return found[0]


def snapshot(path):
    """(inode, bytes) of PATH, to tell that nothing replaced or changed it."""
    with open(path, "rb") as f:
        return os.stat(path).st_ino, f.read()


def one_line(r, pattern, what):
    """The one line of stderr matching PATTERN."""
    found = [line for line in r.err_lines() if re.search(pattern, line)]
    expect(len(found) == 1, f"expected one line on stderr {what}, got {len(found)}:\n{r.stderr}")
    return found[0]


def expect_no_summary(r):
    expect(not re.search(r"calls of \d+ regions|region \(by self time\)", r.stderr),
           f"scope-run printed a summary though it wrote no profile:\n{r.stderr}")


def kept_parts(line):
    """The parts folder scope-run's line names, and the .h5 files in it."""
    m = re.search(r"the other profiles are kept in (\S+) ", line)
    expect(m, f"the line names no folder of kept profiles: {line!r}")
    folder = m.group(1)
    expect(os.path.isdir(folder), f"{folder}, named as the kept profiles' folder, does not exist")
    return folder, sorted(f for f in os.listdir(folder) if f.endswith(".h5"))


def finish_by_hand(t, parts, arena, pid):
    """Does what the line says to finish the run, in a copy of the parts folder; returns the profile."""
    folder = t.path("finished")
    shutil.copytree(parts, folder)
    t.run([t.writer, "--recover", "-o", os.path.join(folder, f"{pid}.h5"), arena], env=t.env()).expect_rc(0)
    t.run([t.merge_tool(), "--parts", folder, "-o", t.path("finished.h5")], env=t.env()).expect_rc(0)
    return t.load("finished.h5")


def check_partial_run(t, r, out, before):
    """A run of calls N 1 whose parent left no profile: nothing at OUT, the child's profile kept,
    the parent's arena kept, and both together a whole profile."""
    expect_eq(r.rc, 1, "scope-run's exit status when a process of the run left no profile (the program's is 0)")
    expect_no_summary(r)
    if before is None:
        expect(not os.path.exists(out), f"{out} exists though the run's parent left no profile")
    else:
        expect(snapshot(out) == before, f"{out} was replaced or changed though the run's parent left no profile")
    line = one_line(r, r"^scope-run: .* was not written", "saying the profile was not written")
    expect(out in line and "1 of the run's 2 processes" in line,
           f"the line does not name {out} and the one process of two missing: {line!r}")
    folder, parts = kept_parts(line)
    expect_eq(len(parts), 1, f"profiles kept in {folder}")
    child = Profile(os.path.join(folder, parts[0]))
    expect_eq(len(child.processes["pid"]), 1, "processes in the kept profile")
    expect_counts(child, counts(N, child=True), 0, " (the child's kept profile)")
    kept = [a for a in re.findall(r"(/\S+\.arena)\b", r.stderr) if os.path.exists(a)]
    expect(kept, f"no line names the parent's arena, kept:\n{r.stderr}")
    pid = int(re.search(r"scope-(\d+)-\w+\.arena$", kept[0]).group(1))
    expect(re.search(rf"\(pid {pid};", line), f"the line does not name the missing process {pid}: {line!r}")
    expect(int(child.processes["pid"][0]) != pid, "the kept profile is the missing process's")
    whole = finish_by_hand(t, folder, kept[0], pid)
    pids = [int(x) for x in whole.processes["pid"]]
    expect_eq(sorted(pids), sorted([pid, int(child.processes["pid"][0])]), "processes of the run finished by hand")
    for row in range(2):
        expect_counts(whole, counts(N, child=pids[row] != pid), row, " (the run finished by hand)")


# ---------------------------------------------------------------------------
# Cases: a process of the run left no profile


def case_partial_disk(t):
    """Each process written apart (SCOPE_WRITER_BATCH=1): the output's folder fills up after the
    child's profile, the parent's writer fails (ENOSPC), cleanly, and nothing is published under
    the output's name."""
    t.need_prog()
    # Uncompressed, both processes' profiles are the same size: the tmpfs
    # holds one and a half of them.
    t.scope("-q", "--compression", "none", "-o", "size.h5", "--", t.prog, N).expect_rc(0)
    size = os.path.getsize(t.path("size.h5")) * 3 // 2 // 4096 * 4096
    with small_tmpfs(t, "small", str(size)) as small:
        out = os.path.join(small, "out.h5")
        r = t.scope("-q", "--compression", "none", "-o", out, "--", t.prog, N, 1,
                    env={"SCOPE_WRITER_BATCH": "1"})
        expect(not re.search(r"killed by signal", r.stderr), f"a writer crashed:\n{r.stderr}")
        writer = one_line(r, r"^scope-writer:", "from the failed writer")
        expect(re.search(r"No space left", writer), f"the writer's line does not say the disk is full: {writer!r}")
        expect_eq(len(r.err_lines()), 2, f"lines on stderr:\n{r.stderr}")
        check_partial_run(t, r, out, None)


def case_partial_disk_batch(t):
    """The run's writer holds both processes to write them into one part, which does not fit:
    one line says so and where their arenas are, nothing is published, and writing the arenas
    by hand as the line says gives the whole profile."""
    t.need_prog()
    t.scope("-q", "--compression", "none", "-o", "size.h5", "--", t.prog, N).expect_rc(0)
    size = os.path.getsize(t.path("size.h5")) * 3 // 2 // 4096 * 4096
    with small_tmpfs(t, "small", str(size)) as small:
        out = os.path.join(small, "out.h5")
        r = t.scope("-q", "--compression", "none", "-o", out, "--", t.prog, N, 1)
        expect_eq(r.rc, 1, "scope-run's exit status when no process of the run left a profile")
        expect_no_summary(r)
        expect(not os.path.exists(out), f"{out} exists though the run left no profile")
        line = one_line(r, r"^scope-writer:", "from the failed writer")
        expect(re.search(r"No space left", line) and "its 2 processes" in line,
               f"the line does not say the disk is full for both processes: {line!r}")
        expect_eq(len(r.err_lines()), 1, f"lines on stderr:\n{r.stderr}")
        folder = re.search(r"in their arenas in (\S+) \(", line).group(1)
        arenas_kept = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".arena"))
        expect_eq(len(arenas_kept), 2, f"arenas kept in {folder}")
    finished = t.path("finished")
    os.makedirs(finished)
    for i, arena in enumerate(arenas_kept):
        t.run([t.writer, "-o", os.path.join(finished, f"{i}.h5"), arena], env=t.env()).expect_rc(0)
    t.run([t.merge_tool(), "--parts", finished, "-o", t.path("finished.h5")], env=t.env()).expect_rc(0)
    whole = t.load("finished.h5")
    pids = [int(x) for x in whole.processes["pid"]]
    expect_eq(len(pids), 2, "processes of the run finished by hand")
    for row in range(2):
        expect_counts(whole, counts(N, child=int(whole.processes["parent"][row]) >= 0), row,
                      " (the run finished by hand)")


def case_partial_killed(t):
    """Every writer is killed (SIGKILL): the run's writer as it starts, then each process's own,
    which each process starts when it finds the run's writer gone. scope-run writes what they
    left, and the profile is whole: nothing lost to a dead writer."""
    t.need_prog()
    out = t.path("out.h5")
    r = t.scope("-q", "-o", out, "--", t.prog, N, 1, env={"SCOPE_WRITER": t.killer()})
    r.expect_rc(0)
    written = [line for line in r.err_lines() if re.search(r"^scope-run: the run's writer did not write", line)]
    expect_eq(len(written), 2, f"lines saying scope-run wrote an arena itself:\n{r.stderr}")
    p = Profile(out)
    expect_eq(len(p.processes["pid"]), 2, "processes in the profile")
    expect_counts(p, counts(N), 0, " (the parent)")
    expect_counts(p, counts(N, child=True), 1, " (the child)")
    expect_eq(arenas(t.tmp), [], f"arenas left in {t.tmp}")


def deleted_mappings(folder):
    """The processes that still map a deleted file of folder, as (pid, path)."""
    held = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as f:
                held += [(int(pid), line.split(None, 5)[-1].strip()) for line in f
                         if folder in line and line.rstrip().endswith("(deleted)")][:1]
        except OSError:
            continue
    return held


def case_arenas_released(t):
    """Once the profile is published, the arenas' last close is the exit of a process of the
    writer's own, which scope-run does not wait for: within seconds of its end nothing maps
    them any more, and the profile is whole."""
    t.need_prog()
    out = t.path("out.h5")
    t.scope("-q", "-o", out, "--", t.prog, N, 3).expect_rc(0)
    p = Profile(out)
    expect_eq(len(p.processes["pid"]), 4, "processes in the profile")
    expect_counts(p, counts(N), 0, " (the parent)")
    expect_eq(arenas(t.tmp), [], f"arenas left in {t.tmp}")
    deadline = time.monotonic() + 20
    while (held := deleted_mappings(t.tmp)) and time.monotonic() < deadline:
        time.sleep(0.05)
    expect_eq(held, [], "processes that still map the run's deleted arenas")


def case_stale_summary(t):
    """The run's profile cannot be written (its folder is full): no summary of the earlier
    profile at -o, which stays as it was, and a non-zero status."""
    t.need_prog()
    with small_tmpfs(t, "small", "1m") as small:
        out = os.path.join(small, "out.h5")
        t.scope("-q", "-o", out, "--", t.prog, 1000).expect_rc(0)
        before = snapshot(out)
        fill(small)
        r = t.scope("--compression", "none", "-o", out, "--", t.prog, N)
        r.expect_rc(1)
        expect_no_summary(r)
        expect(snapshot(out) == before, f"{out} was replaced or changed")
        expect([a for a in re.findall(r"(/\S+\.arena)\b", r.stderr) if os.path.exists(a)],
               f"no line names the arena kept:\n{r.stderr}")


def fill(path):
    """Writes a file into PATH until its filesystem is full."""
    block = b"\0" * 4096
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError:
            pass


# ---------------------------------------------------------------------------
# Cases: the writer fails cleanly


def expect_writer_failed(t, r, out, arena, cause):
    """One line naming the cause and the kept arena; no file under OUT's name, nor a temporary one."""
    r.expect_rc(1)
    lines = r.err_lines()
    expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{r.stderr}")
    expect(re.search(cause, lines[0]) and arena in lines[0] and out in lines[0],
           f"the line does not name {out}, the cause ({cause}) and the kept arena: {lines[0]!r}")
    folder = os.path.dirname(out)
    left = [f for f in os.listdir(folder) if f.startswith(os.path.basename(out))]
    expect_eq(left, [], f"files left in {folder}")
    expect(os.path.exists(arena), f"{arena} was removed")


def case_writer_full(t):
    """The writer runs out of disk halfway: exit 1 and one line, not a crash in HDF5's exit handler."""
    arena = t.unpublished_arena(N)
    with small_tmpfs(t, "small", "128k") as small:
        out = os.path.join(small, "out.h5")
        r = t.run([t.writer, "--compression", "none", "-o", out, arena], env=t.env())
        expect_writer_failed(t, r, out, arena, "No space left")
    t.run([t.writer, "-o", t.path("later.h5"), arena], env=t.env()).expect_rc(0)
    expect_counts(t.load("later.h5"), counts(N))


def case_writer_full_deflated(t):
    """The same with the event columns deflated (auto): 300,000 calls, whose deflated chunks
    (some 150 KB) outgrow a 64 KiB folder while the deflating threads hand them back, and the
    writer says so as above."""
    n = 300_000
    arena = t.unpublished_arena(n)
    with small_tmpfs(t, "small", "64k") as small:
        out = os.path.join(small, "out.h5")
        r = t.run([t.writer, "-o", out, arena], env=t.env())
        expect_writer_failed(t, r, out, arena, "No space left")
    t.run([t.writer, "-o", t.path("later.h5"), arena], env=t.env()).expect_rc(0)
    expect_counts(t.load("later.h5"), counts(n))


def case_writer_fsize(t):
    """RLIMIT_FSIZE below the profile's size: exit 1 and one line (EFBIG), not killed by SIGXFSZ."""
    arena = t.unpublished_arena(N)
    out = t.path("out.h5")
    argv = [t.writer, "--compression", "none", "-o", out, arena]
    print("$ (file size limit 64 KiB)", " ".join(argv), flush=True)

    def limit():
        no_core_dump()
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    proc = subprocess.run(argv, env=t.env(), cwd=t.work, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=RUN_TIMEOUT, preexec_fn=limit)
    r = Run(argv, proc)
    print(f"  exit {r.rc}\n  stderr: {r.stderr}")
    expect(r.rc != -25, "scope-writer was killed by SIGXFSZ")
    expect_writer_failed(t, r, out, arena, "too large")
    t.run([t.writer, "-o", out, arena], env=t.env()).expect_rc(0)
    expect_counts(t.load("out.h5"), counts(N))


def bad_storage(t, option, value, env=None):
    """scope-writer given a bad storage setting (OPTION VALUE, or the variable
    in ENV): it refuses in one line naming the kept arena and a command with
    OPTION that writes it, which does. (The library checks the variables at
    start-up, so a profiled run falls back to the default: h-bad-* cases.)"""
    arena = t.unpublished_arena(3000)
    argv = [t.writer, "--recover"] + ([] if env else [option, value]) + [arena]
    r = t.run(argv, env=t.env(env))
    r.expect_rc(2)
    lines = r.err_lines()
    expect(len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{r.stderr}")
    m = re.search(r"write it with: (scope-writer [^)]*)\)", lines[0])
    expect(m and f"'{value}'" in lines[0], f"the line does not name '{value}' and how to write the data: {lines[0]!r}")
    words = m.group(1).split()
    expect(option in words and os.path.exists(words[-1]) and words[-1] in lines[0],
           f"the hint {m.group(1)!r} does not give {option} and the kept arena")
    argv = [t.writer] + [t.path("later.h5") if w == "FILE" else w for w in words[1:]]
    t.run(argv, env=t.env(env)).expect_rc(0)
    expect_counts(t.load("later.h5"), counts(3000))


def case_bad_compression(t):
    bad_storage(t, "--compression", "bogus")


def case_bad_chunk(t):
    bad_storage(t, "--chunk-size", "0", env={"SCOPE_CHUNK_SIZE": "0"})


def nobody():
    no_core_dump()
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def case_arena_fd(t):
    """A writer that gave up root reads its arena through an inherited descriptor, writes the
    profile, and says in one line that it cannot remove the arena, which it marks written."""
    if os.geteuid() != 0:
        raise Skipped("needs root, to run the writer as nobody")
    arena = t.unpublished_arena(3000)
    os.chmod(t.tmp, 0o700)  # nobody can neither open nor remove the arena
    os.makedirs(t.path("out"))
    os.chmod(t.path("out"), 0o777)
    out = t.path("out", "out.h5")
    fd = os.open(arena, os.O_RDWR)
    argv = [t.writer, "--arena-fd", str(fd), "-o", out, arena]
    print("$ (as nobody)", " ".join(argv), flush=True)
    proc = subprocess.run(argv, env=t.env(), cwd=t.path("out"), stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=RUN_TIMEOUT, preexec_fn=nobody, pass_fds=(fd,))
    os.close(fd)
    r = Run(argv, proc)
    print(f"  exit {r.rc}\n  stderr: {r.stderr}")
    r.expect_rc(0)
    expect_counts(t.load(out), counts(3000))
    lines = r.err_lines()
    expect(len(lines) == 1 and arena in lines[0] and re.search(r"cannot remove.*Permission denied", lines[0]),
           f"expected one line saying {arena} cannot be removed, got:\n{r.stderr}")
    again = t.run([t.writer, "--recover", arena], env=t.env())
    again.expect_rc(0)
    expect(re.search(r"written already", again.stderr), "the arena was not marked as written")


def case_arena_fd_cloexec(t):
    """The descriptor given with --arena-fd is not passed on to what the writer starts."""
    if not shutil.which("strace"):
        raise Skipped("no strace to see the writer's fcntl calls")
    arena = t.unpublished_arena(300)
    fd = os.open(arena, os.O_RDWR)  # inheritable: no O_CLOEXEC
    trace = t.path("trace")
    argv = ["strace", "-f", "-e", "trace=fcntl", "-o", trace, t.writer, "--keep", "--arena-fd", str(fd),
            "-o", t.path("out.h5"), arena]
    print("$", " ".join(argv), flush=True)
    proc = subprocess.run(argv, env=t.env(), cwd=t.work, stdin=subprocess.DEVNULL, capture_output=True,
                          timeout=RUN_TIMEOUT, pass_fds=(fd,))
    os.close(fd)
    expect_eq(proc.returncode, 0, "exit status of the traced writer")
    with open(trace) as f:
        text = f.read()
    expect(re.search(rf"fcntl\({fd}, F_SETFD, FD_CLOEXEC\)\s*= 0", text),
           f"the writer did not make descriptor {fd} close-on-exec:\n{text[-2000:]}")
    expect_counts(t.load("out.h5"), counts(300))
    r = t.run([t.writer, "--arena-fd", "99", "-o", t.path("x.h5"), arena], env=t.env())
    r.expect_rc(2)
    expect(len(r.err_lines()) == 1 and "--arena-fd 99" in r.stderr, f"no one line about --arena-fd 99:\n{r.stderr}")


# ---------------------------------------------------------------------------
# Cases: outputs scope-run refuses


def expect_refused(r, what):
    r.expect_rc(2)
    lines = r.err_lines()
    expect(len(lines) == 1 and lines[0].startswith("scope-run: "),
           f"expected one scope-run line for {what}, got:\n{r.stderr}")
    return lines[0]


def case_output_is_program(t):
    """-o naming the program (or a link to it) or an existing folder: refused, nothing touched."""
    t.need_prog()
    app = t.path("app")
    shutil.copy2(t.prog, app)
    os.symlink("app", t.path("link.h5"))
    os.makedirs(t.path("dir"))
    before = snapshot(app)
    for target in ("app", "./app", "link.h5", app):
        line = expect_refused(t.scope("-q", "-o", target, "--", "./app", 300, cwd=t.work), f"-o {target}")
        expect("program" in line, f"the line does not say the output is the program: {line!r}")
        expect(snapshot(app) == before, f"the program was changed by scope-run -o {target}")
    line = expect_refused(t.scope("-q", "-o", "dir", "--", "./app", 300), "-o dir")
    expect("directory" in line, f"the line does not say the output is a directory: {line!r}")
    expect_eq(os.listdir(t.path("dir")), [], "files in dir")
    expect_eq(sorted(os.listdir(t.work)), ["app", "dir", "link.h5", "tmp"], "files in the working folder")


def case_cli_output_empty(t):
    """-o '' is refused: nothing is written into the folder above."""
    t.need_prog()
    os.makedirs(t.path("sub"))
    line = expect_refused(t.scope("-q", "-o", "", "--", t.prog, 300, cwd=t.path("sub")), "-o ''")
    expect("empty" in line, f"the line does not say the name is empty: {line!r}")
    expect_eq(sorted(os.listdir(t.work)), ["sub", "tmp"], "files in the working folder")
    expect_eq(os.listdir(t.path("sub")), [], "files in sub")


def case_cli_top(t):
    """--top takes 0 to 1000000 rows; a negative number or garbage is refused."""
    t.need_prog()
    for bad in ("-1", "x", "1000001", "", "3x", "99999999999999999999999"):
        line = expect_refused(t.scope("--top", bad, "-o", "out.h5", "--", t.prog, 300), f"--top {bad!r}")
        expect("--top" in line, f"the line does not name --top: {line!r}")
        expect(not os.path.exists(t.path("out.h5")), f"--top {bad!r} ran the program")
    r = t.scope("--top", "0", "-o", "out.h5", "--", t.prog, 300)
    r.expect_rc(0)
    expect("region (by self time)" not in r.stderr, "--top 0 printed the table")
    expect(re.search(r"calls of 4 regions", r.stderr), "--top 0 left out the count of calls")
    r = t.scope("--top", "2", "-o", "out.h5", "--", t.prog, 300)
    r.expect_rc(0)
    lines = r.stderr.splitlines()
    head = [i for i, line in enumerate(lines) if "region (by self time)" in line]
    expect(head, f"no summary table:\n{r.stderr}")
    rows = []
    for line in lines[head[0] + 1:]:
        if not line.strip() or line.startswith("..."):
            break
        rows.append(line)
    expect_eq(len(rows), 2, f"rows shown with --top 2:\n{r.stderr}")


# ---------------------------------------------------------------------------

CASES = cases_of(globals())


def main():
    a = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized",
               prog="the test program (calls.c)").parse_args()
    return run_case(CASES, a.case, lambda: Publish(a))


if __name__ == "__main__":
    sys.exit(main())
