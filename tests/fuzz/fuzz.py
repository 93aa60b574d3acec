#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Fuzzes the profile reader, the merge or the arena reader with libFuzzer for a bounded time, or replays the inputs they once broke on.

Usage: fuzz.py run --seconds N --corpus DIR [common options] --h5walk PATH
       fuzz.py replay [common options] --h5walk PATH
       fuzz.py merge --seconds N --corpus DIR [common options] --h5walk PATH
       fuzz.py merge-replay [common options] --h5walk PATH --rdcheck PATH
       fuzz.py arena --seconds N --corpus DIR [common options] --lib DIR
       fuzz.py arena-replay [common options] --lib DIR
       (arena-replay also --rdcheck PATH)
common: --fuzzer PATH --bin DIR --progs DIR --regressions DIR --workdir DIR

Both first make the seed corpus: small real profiles of the test programs
(one process, three processes, symbolized or not, contiguous and chunked
with gzip, with the heap tracked, with samples), written by scope-run into
WORKDIR/seeds.

run: fuzzes rd_check for N seconds from the seeds and the corpus kept in DIR
(which grows from run to run in one build tree), with -rss_limit_mb=2048.
A finding stops libFuzzer; it is told apart by the stack of its report:

- in the reader (lib/reader.c, the harness): the test fails, and the input
  is saved in the source tree's tests/fuzz/regressions/ to be fixed and
  committed, so that fuzz-regressions replays it from then on;
- wholly inside libhdf5 (the frames above the HDF5 call are all libhdf5's,
  for a crash, a hang or an out-of-memory; for a leak, every leaked block
  was allocated by libhdf5): not the reader's. It is kept in
  WORKDIR/hdf5-findings/ and listed, and fuzzing goes on for the time left.

Leaks of blocks that libhdf5 allocated are suppressed (LSAN_OPTIONS): it
loses some on the error paths of damaged files, and they would stop fuzzing
every few seconds. A block the reader allocated is still a finding; one that
libhdf5 allocated for the reader and the reader failed to free is not seen
(the harness does check that the reader closes every HDF5 object it opens).

Inputs that crash or hang libhdf5 in the harness's pre-check (h5walk) never
reach the reader; the harness counts them at the end. So a libhdf5 bug never
fails CI, and never hides the reader's.

replay: runs fuzz_reader once on every input of the regressions folder and
on the seeds (under ASan, with the leak check), then scope-report --tree,
--heap and --samples on each regression input, each of which must end with
exit status 0 or 1 and at most one line on stderr, never a signal.

merge: fuzzes the merge (fuzz_merge.c: merge_profiles of each input and
the forks seed into a temporary output, which must read back whole when
the merge accepts the input) as run fuzzes the reader, with the same
pre-check (h5walk also copies the groups the merge copies) and the same
telling apart of libhdf5's findings; a finding is saved in the
regressions folder given (tests/fuzz/regressions/merge).

merge-replay: runs fuzz_merge once on every input of that folder, of the
reader's folder above it and on the seeds, then scope-merge of each input
and the forks seed, which must end with exit status 0 or 1 and at most one
line on stderr, never a signal; a profile it writes must read back
(rdcheck).

arena: fuzzes scope-writer's reading of an arena (fuzz_arena.c: arena_open,
modules_parse, collect in memory and through a spill) for N seconds. Its
seeds are real arenas of the test programs, kept (SCOPE_KEEP_ARENA=1, 4 KiB
chunks) from runs that ended, forked, unloaded a library and were killed
with SIGKILL, each made small: the header as it is, then the command line,
the module lines, the lanes in use and at most 8 chunks, packed one after
the other with the header's offsets and counts rewritten to match. No
libhdf5 is involved, so every finding is the writer's: the test fails and
the input is saved in the regressions folder (tests/fuzz/regressions/arena).

arena-replay: runs fuzz_arena once on every input of that folder and on the
seeds, then `scope-writer --recover --no-symbolize` on a copy of each, which
must end with exit status 0, 1 or 2 (a compression setting in the header
it cannot use) and at most one line on stderr, never a signal, within 30 s;
a profile it writes must read back (rdcheck).

Exit status: 0 pass, 1 fail, 77 skip (printed with its reason).
"""

import hashlib
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import Failure, Skipped, cases_of, parser, run_case  # noqa: E402

HARD_LIMIT = 120  # seconds past the fuzzing time before libFuzzer is killed
MERGE_GOOD = "forks"  # the seed fuzz_merge merges each input with
# The views a replayed input goes through: the calls, and the tables of a process beside them.
REPLAY_VIEWS = ("--tree", "--heap", "--samples")

# Frames in scope's sources: lib/, writer/ and the harnesses (not the harness binaries' own frames).
OURS = re.compile(r"/(lib|writer|tests/fuzz)/\w+\.c\b")
RUNTIME = ("fuzzer::", "__sanitizer", "__asan", "__lsan", "__interceptor", "libc.so", "libstdc++",
           "ld-linux", "compiler-rt", "/sanitizer_common/", "/asan/", "/lsan/", "/fuzzer/", "nptl/", "/abort.c",
           "/raise.c")




def log(*args):
    print(*args, flush=True)


# ---------------------------------------------------------------------------
# Seeds


def make_seeds(a, seeds):
    """Small real profiles of the test programs; returns their paths."""
    shutil.rmtree(seeds, ignore_errors=True)
    os.makedirs(seeds)
    tmp = os.path.join(a.workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    runs = [  # name, program, arguments, environment, scope-run options
        ("chain", "chain-gcc-O2", (), {}, ()),
        ("chain-raw-gzip", "chain-gcc-O2", (), {"SCOPE_SYMBOLIZE": "0"}, ("--compression", "gzip", "--chunk-size", "16")),
        ("calls", "calls-gcc-O0", ("300",), {}, ()),
        ("forks", "calls-gcc-O2", ("200", "2"), {}, ()),
        ("heap", "heap-gcc-O2", (), {"SCOPE_HEAP": "1", "SCOPE_SYMBOLIZE": "0"}, ()),
        ("samples", "sampling-gcc-O2", ("50",), {"SCOPE_SYMBOLIZE": "0"}, ("--sample", "1000")),
    ]
    out = []
    for name, prog, args, extra, opts in runs:
        exe = os.path.join(a.progs, prog)
        if not os.access(exe, os.X_OK):
            raise Failure(f"test program {exe} was not built")
        path = os.path.join(seeds, name + ".h5")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_") and k != "LD_PRELOAD"}
        env.update(SCOPE_TMPDIR=tmp, **extra)
        r = subprocess.run([os.path.join(a.bin, "scope-run"), "-q", *opts, "-o", path, "--", exe, *args],
                           env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.isfile(path):
            raise Failure(f"seed {name}: scope-run exited {r.returncode}\n{r.stderr}")
        out.append(path)
    log("seeds:", ", ".join(f"{os.path.basename(p)} ({os.path.getsize(p)} bytes)" for p in out))
    return out


# ---------------------------------------------------------------------------
# Findings


def frames(report):
    """The stack frames (`#N 0x... in ...`) of the first stack in a report."""
    out = []
    for line in report.splitlines():
        m = re.match(r"\s*#(\d+) 0x[0-9a-f]+ (.*)$", line)
        if m:
            if int(m.group(1)) == 0 and out:
                break
            out.append(m.group(2))
    return out


def owner(frame):
    """'hdf5', 'ours', or None for the runtime (libFuzzer, sanitizers, libc)."""
    if "libhdf5" in frame:
        return "hdf5"
    if OURS.search(frame):
        return "ours"
    if any(s in frame for s in RUNTIME) or re.search(r"\bin (malloc|calloc|realloc|free|strdup|operator new)\b", frame):
        return None
    if re.search(r"fuzz_(reader|merge|arena)\+0x", frame):  # linked into the harness without a source line: the runtime
        return None
    return "ours"  # unknown code: count it against us rather than hide it


def first_owner(stack):
    for f in stack:
        o = owner(f)
        if o:
            return o, f
    return "ours", "(no frame outside the runtime)"


def leak_owners(report):
    """For a LeakSanitizer report, the owner of each leaked block's allocation."""
    out = []
    for block in re.split(r"\n(?=(?:Direct|Indirect) leak of)", report)[1:]:
        out.append(first_owner(frames(block)))
    return out


def classify(text):
    """(kind, owner, frame) of the finding reported in a libFuzzer log."""
    if "ERROR: LeakSanitizer" in text:
        part = text[text.index("ERROR: LeakSanitizer"):]
        owners = leak_owners(part)
        mine = [o for o in owners if o[0] == "ours"]
        if mine or not owners:
            return ("leak",) + (mine[0] if mine else ("ours", "(no stack)"))
        return ("leak",) + owners[0]
    for marker, kind in (("ERROR: AddressSanitizer", "asan"), ("ALARM: working on the last Unit", "timeout"),
                         ("out-of-memory (malloc", "oom"), ("ERROR: libFuzzer: deadly signal", "crash"),
                         ("ERROR: libFuzzer: out-of-memory", "oom-rss"), ("ERROR: libFuzzer", "libfuzzer")):
        if marker in text:
            part = text[text.index(marker):]
            stack = frames(part)
            if not stack:
                return kind, "ours", "(no stack in the report)"
            return (kind,) + first_owner(stack)
    return "unknown", "ours", "(no report found)"


def artifact(text):
    m = re.findall(r"Test unit written to (\S+)", text)
    return m[-1] if m else None


def save_regression(a, path, kind):
    data = open(path, "rb").read()
    os.makedirs(a.regressions, exist_ok=True)
    dst = os.path.join(a.regressions, f"{kind}-{hashlib.sha1(data).hexdigest()[:16]}")
    with open(dst, "wb") as f:
        f.write(data)
    return dst


# ---------------------------------------------------------------------------
# Running the fuzzer


def fuzzer_env(a, hdf5_inputs, seeds):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASAN_", "LSAN_", "UBSAN_"))}
    tmp = os.path.join(a.workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    # libhdf5 leaks on some error paths (blocks of its free lists, lost when a
    # damaged object fails to load): LeakSanitizer leaves those out, so that
    # they do not stop fuzzing every few seconds. The reader's own blocks
    # (allocated from its code, with no libhdf5 frame) are still checked.
    supp = os.path.join(a.workdir, "lsan.supp")
    with open(supp, "w") as f:
        f.write("leak:libhdf5\n")
    env.update(TMPDIR=tmp, FUZZ_H5WALK=a.h5walk, FUZZ_HDF5_DIR=hdf5_inputs,
               FUZZ_MERGE_GOOD=os.path.join(seeds, MERGE_GOOD + ".h5"),
               ASAN_OPTIONS="abort_on_error=0:symbolize=1:detect_leaks=1",
               LSAN_OPTIONS=f"suppressions={supp}:print_suppressions=0")
    sym = shutil.which("llvm-symbolizer") or shutil.which("llvm-symbolizer-14")
    if sym:
        env["ASAN_SYMBOLIZER_PATH"] = sym
    return env


def check_tools(a):
    for what, path in ((harness(a), a.fuzzer), ("h5walk", a.h5walk), ("scope-run", os.path.join(a.bin, "scope-run"))):
        if not os.access(path, os.X_OK):
            raise Failure(f"{what} ({path}) was not built")
    if not (shutil.which("llvm-symbolizer") or shutil.which("llvm-symbolizer-14")):
        raise Skipped("llvm-symbolizer is not installed (Debian: llvm-14): findings could not be told apart")


def fuzz_once(a, seconds, corpus, seeds, artifacts, env, n, extra=()):
    """One libFuzzer run; returns (exit status, its log)."""
    argv = [a.fuzzer, f"-max_total_time={seconds}", "-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1",
            f"-artifact_prefix={artifacts}/", *extra, corpus, seeds]
    logfile = os.path.join(a.workdir, f"fuzz-{n}.log")
    log("$", " ".join(argv), f"> {logfile}")
    with open(logfile, "w+") as out:
        try:
            rc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                timeout=seconds + HARD_LIMIT).returncode
        except subprocess.TimeoutExpired:
            rc = None
        out.seek(0)
        text = out.read()
    name = os.path.basename(a.fuzzer)
    if rc is None:
        raise Failure(f"{name} did not stop after {seconds} s; see {logfile}")
    for line in text.splitlines():
        if line.startswith((f"{name}:", "stat::number_of_executed_units", "stat::peak_rss_mb", "Done ")):
            log("  " + line)
    return rc, text


def harness(a):
    """fuzz_reader or fuzz_merge."""
    return os.path.basename(a.fuzzer)


def case_run(a):
    fuzz_profiles(a, "the reader")


def case_merge(a):
    fuzz_profiles(a, "the merge")


def fuzz_profiles(a, code):
    """Fuzzes the harness a.fuzzer, which runs CODE on profiles (see the module's text)."""
    check_tools(a)
    seeds = os.path.join(a.workdir, "seeds")
    make_seeds(a, seeds)
    os.makedirs(a.corpus, exist_ok=True)
    artifacts, hdf5_inputs, hdf5_findings = (os.path.join(a.workdir, d) for d in ("artifacts", "hdf5-prechecked", "hdf5-findings"))
    for d in (artifacts, hdf5_inputs, hdf5_findings):
        os.makedirs(d)
    env = fuzzer_env(a, hdf5_inputs, seeds)
    end = time.monotonic() + a.seconds
    runs, hdf5 = 0, []
    while True:
        left = int(end - time.monotonic())
        if left < 5 or runs >= 20:
            break
        runs += 1
        rc, text = fuzz_once(a, left, a.corpus, seeds, artifacts, env, runs)
        if rc == 0:
            break
        kind, who, frame = classify(text)
        unit = artifact(text)
        log(f"  finding: {kind}, {'in libhdf5' if who == 'hdf5' else 'in ' + code}: {frame}")
        if who != "hdf5":
            where = save_regression(a, unit, kind) if unit else "(libFuzzer wrote no input)"
            said = [x for x in text.splitlines() if x.startswith(harness(a) + ":")]
            raise Failure(f"{harness(a)} found a {kind} in {code} ({said[-1] if said else frame}); input saved as "
                          f"{where}; log {os.path.join(a.workdir, f'fuzz-{runs}.log')}")
        if unit:
            shutil.move(unit, os.path.join(hdf5_findings, os.path.basename(unit)))
        hdf5.append((kind, frame))
    kept = sorted(os.listdir(hdf5_inputs))
    log(f"{runs} libFuzzer run(s) over {a.seconds} s; corpus: {len(os.listdir(a.corpus))} inputs")
    log(f"libhdf5 itself: {len(hdf5)} finding(s) past the pre-check (kept in {hdf5_findings}), "
        f"and {len(kept)} input(s) kept that crashed or hung it in the pre-check (in {hdf5_inputs})")
    for kind, frame in hdf5:
        log(f"  libhdf5 {kind}: {frame}")
    log(f"no finding in {code}")


# ---------------------------------------------------------------------------
# Replaying


def regression_inputs(folder):
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(folder)
                  if not f.startswith(".") and not f.endswith(".md") and os.path.isfile(os.path.join(folder, f)))


def replay_harness(a, code, inputs):
    """Runs the harness once on every input and seed; returns the seeds."""
    check_tools(a)
    seeds = make_seeds(a, os.path.join(a.workdir, "seeds"))
    log(f"{len(inputs)} regression input(s), {len(seeds)} seeds")
    env = fuzzer_env(a, os.path.join(a.workdir, "hdf5-prechecked"), os.path.dirname(seeds[0]))
    os.makedirs(env["FUZZ_HDF5_DIR"])
    r = subprocess.run([a.fuzzer, "-runs=1", *inputs, *seeds], env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, errors="replace", timeout=600)
    if r.returncode != 0:
        kind, who, frame = classify(r.stderr)
        raise Failure(f"{harness(a)} failed on a replayed input ({kind} {'in libhdf5' if who == 'hdf5' else 'in ' + code}: "
                      f"{frame})\n{r.stderr[-6000:]}")
    log(f"{harness(a)} replayed {len(inputs) + len(seeds)} inputs without a finding")
    for line in r.stderr.splitlines():
        if line.startswith(harness(a) + ":"):
            log("  " + line)
    return seeds


def case_replay(a):
    inputs = regression_inputs(a.regressions)
    replay_harness(a, "the reader", inputs)
    report = os.path.join(a.bin, "scope-report")
    for path in inputs:
        for view in REPLAY_VIEWS:
            p = subprocess.run([report, view, "-o", os.devnull, path], stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, errors="replace", timeout=120)
            lines = [x for x in p.stderr.splitlines() if x.strip()]
            if p.returncode not in (0, 1) or len(lines) > 1:
                raise Failure(f"scope-report {view} on {path}: exit {p.returncode}, stderr {p.stderr[-2000:]!r}")
            log(f"  scope-report {view} {os.path.basename(path)}: exit {p.returncode} {lines[0] if lines else ''}")


def case_merge_replay(a):
    # what broke the reader is a merge's input too
    inputs = regression_inputs(a.regressions) + regression_inputs(os.path.dirname(a.regressions))
    seeds = replay_harness(a, "the merge", inputs)
    good = os.path.join(os.path.dirname(seeds[0]), MERGE_GOOD + ".h5")
    out = os.path.join(a.workdir, "merged.h5")
    for path in inputs:
        p = subprocess.run([os.path.join(a.bin, "scope-merge"), "-q", "-o", out, path, good], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace", timeout=120)
        lines = [x for x in p.stderr.splitlines() if x.strip()]
        if p.returncode not in (0, 1) or len(lines) > 1:
            raise Failure(f"scope-merge of {path} and a seed: exit {p.returncode}, stderr {p.stderr[-2000:]!r}")
        if p.returncode == 0:
            c = subprocess.run([a.rdcheck, out], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            if c.returncode != 0:
                raise Failure(f"scope-merge of {path} and a seed wrote a profile that does not read back: {c.stderr}")
            os.unlink(out)
        log(f"  scope-merge {os.path.basename(path)}: exit {p.returncode} {lines[0] if lines else ''}")


# ---------------------------------------------------------------------------
# The arena reader

MAX_CHUNKS = 8
CHUNK_MAGIC = 0x4B4E4843504F4353
ARENA_TIMEOUT = 30  # seconds for one input, in the harness or scope-writer --recover
# The layout fields of include/scope/arena.h's header, from cmdline_off on.
LAYOUT = struct.Struct("<12Q")  # cmdline off/bytes, modules off/cap, lanes, crash off/cap,
                                # chunks off, chunk capacity, chunks handed out, backed, modules length
LAYOUT_AT, NLANES_AT = 24, 120
# The names and tasks areas: offset, capacity and slots handed out of each.
AREAS = struct.Struct("<QIIQII")
AREAS_AT = 648


def round64(n):
    return (n + 63) // 64 * 64


def compact_arena(src, dst):
    """The arena at SRC, made small (see the module's text); returns its size.
    The header is as long as the file says (it ends where the command line
    starts); the crash area keeps only what it holds up to its last nonzero byte."""
    with open(src, "rb") as f:
        head = bytearray(f.read(LAYOUT_AT + LAYOUT.size + 8))
        if len(head) < LAYOUT_AT + LAYOUT.size or head[:8] != b"SCOPEAR1":
            raise Failure(f"{src} is not an arena")
        chunk_bytes, = struct.unpack_from("<I", head, 16)
        (cmd_off, cmd_len, mod_off, mod_cap, lanes_off, crash_off, crash_cap, chunks_off, chunk_cap, nchunks,
         backed, mod_len) = LAYOUT.unpack_from(head, LAYOUT_AT)
        nlanes, = struct.unpack_from("<I", head, NLANES_AT)
        header_bytes = cmd_off
        f.seek(AREAS_AT)
        names_off, _, nnames, tasks_off, _, ntasks = AREAS.unpack(f.read(AREAS.size))

        def at(off, n):
            f.seek(off)
            return f.read(n)

        head = bytearray(at(0, header_bytes))
        cmdline, modules, lanes = at(cmd_off, cmd_len), at(mod_off, min(mod_len, mod_cap)), at(lanes_off, nlanes * 64)
        names, tasks = at(names_off, nnames * 128), at(tasks_off, ntasks * 64)
        crash = at(crash_off, crash_cap).rstrip(b"\0")
        used = min(nchunks, chunk_cap, max(backed - chunks_off, 0) // chunk_bytes)
        chunks = []
        for i in range(used):
            c = at(chunks_off + i * chunk_bytes, chunk_bytes)
            if len(c) == chunk_bytes and struct.unpack_from("<Q", c, 8)[0] == CHUNK_MAGIC:
                chunks.append(c)
            if len(chunks) == MAX_CHUNKS:
                break
    mod_off = round64(header_bytes + len(cmdline))
    lanes_off = mod_off + round64(len(modules))
    names_off = round64(lanes_off + len(lanes))
    tasks_off = names_off + len(names)
    crash_off = round64(tasks_off + len(tasks))
    chunks_off = crash_off + round64(len(crash))
    size = chunks_off + len(chunks) * chunk_bytes
    struct.pack_into("<I", head, 20, nlanes)  # lane_capacity
    LAYOUT.pack_into(head, LAYOUT_AT, header_bytes, len(cmdline), mod_off, round64(len(modules)), lanes_off,
                     crash_off, round64(len(crash)), chunks_off, len(chunks), len(chunks), size, len(modules))
    AREAS.pack_into(head, AREAS_AT, names_off, len(names) // 128, len(names) // 128, tasks_off, len(tasks) // 64,
                    len(tasks) // 64)
    out = bytearray(size)
    out[:header_bytes] = head
    for off, data in ((header_bytes, cmdline), (mod_off, modules), (lanes_off, lanes), (names_off, names),
                      (tasks_off, tasks), (crash_off, crash),
                      *((chunks_off + i * chunk_bytes, c) for i, c in enumerate(chunks))):
        out[off:off + len(data)] = data
    with open(dst, "wb") as f:
        f.write(out)
    return size


def arena_env(a, tmp, preload=False):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCOPE_", "ASAN_", "LSAN_")) and k != "LD_PRELOAD"}
    # SCOPE_WRITE=exit: each arena holds all its chunks, none moved to a store beside it
    env.update(SCOPE_TMPDIR=tmp, SCOPE_KEEP_ARENA="1", SCOPE_BUFFER_SIZE="4096", SCOPE_SYMBOLIZE="0",
               SCOPE_WRITE="exit")
    if preload:
        env["LD_PRELOAD"] = os.path.join(a.lib, "libscope_preload.so")
    return env


def killed_arena(a, tmp):
    """r_kill under LD_PRELOAD, killed with SIGKILL once its three lanes made 300 calls each."""
    ready = os.path.join(tmp, "ready")
    child = subprocess.Popen([os.path.join(a.progs, "r_kill-gcc-O2"), ready, "300", "2"], env=arena_env(a, tmp, True),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    end = time.monotonic() + 60
    while not os.path.exists(ready):
        if child.poll() is not None or time.monotonic() > end:
            child.kill()
            raise Failure(f"r_kill did not get ready (exit {child.wait()}): {child.stderr.read()!r}")
        time.sleep(0.01)
    with open(ready) as f:
        pid = int(f.read().split()[0])
    os.kill(pid, signal.SIGKILL)
    child.wait()
    # The run's writer, detached, notices the end through a pidfd and then removes its folder.
    end = time.monotonic() + 60
    while any(n.startswith("scope-run-") for n in os.listdir(tmp)):
        if time.monotonic() > end:
            raise Failure(f"the run's writer left its folder in {tmp}: {os.listdir(tmp)}")
        time.sleep(0.01)


def make_arena_seeds(a, seeds):
    """Small real arenas of the test programs (see the module's text); returns their paths."""
    shutil.rmtree(seeds, ignore_errors=True)
    os.makedirs(seeds)
    dl = os.path.join(a.progs, "r_dl-gcc-O2.libs")
    runs = [  # name, program, arguments
        ("chain", "chain-gcc-O2", ()),
        ("threads", "threads-gcc-O2", ()),
        ("forks", "calls-gcc-O2", ("200", "2")),
        ("dlclose", "r_dl-gcc-O2", ("close", os.path.join(dl, "libr_dl1.so"), os.path.join(dl, "libr_dl2.so"))),
        ("killed", "r_kill-gcc-O2", None),
    ]
    out = []
    for name, prog, args in runs:
        exe = os.path.join(a.progs, prog)
        if not os.access(exe, os.X_OK):
            raise Failure(f"test program {exe} was not built")
        tmp = os.path.join(a.workdir, "arenas", name)
        os.makedirs(tmp)
        if args is None:
            killed_arena(a, tmp)
        else:
            r = subprocess.run([os.path.join(a.bin, "scope-run"), "-q", "-o", os.path.join(tmp, "out.h5"), "--", exe,
                                *args], env=arena_env(a, tmp), stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                raise Failure(f"arena seed {name}: scope-run exited {r.returncode}\n{r.stderr}")
        found = sorted(os.path.join(d, f) for d, _, fs in os.walk(tmp) for f in fs if f.endswith(".arena"))
        if not found:
            raise Failure(f"arena seed {name}: no arena was kept in {tmp}")
        for k, path in enumerate(found):
            dst = os.path.join(seeds, f"{name}-{k}.arena")
            compact_arena(path, dst)
            out.append(dst)
        shutil.rmtree(tmp)  # the arenas are sparse files of 64 GiB each
    log("seeds:", ", ".join(f"{os.path.basename(p)} ({os.path.getsize(p)} bytes)" for p in out))
    return out


def arena_fuzzer_env(a):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASAN_", "LSAN_", "UBSAN_", "SCOPE_"))}
    tmp = os.path.join(a.workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    env.update(TMPDIR=tmp, ASAN_OPTIONS="abort_on_error=0:symbolize=1:detect_leaks=1")
    sym = shutil.which("llvm-symbolizer") or shutil.which("llvm-symbolizer-14")
    if sym:
        env["ASAN_SYMBOLIZER_PATH"] = sym
    return env


def check_arena_tools(a):
    for what, path in (("fuzz_arena", a.fuzzer), ("scope-run", os.path.join(a.bin, "scope-run")),
                       ("scope-writer", os.path.join(a.bin, "scope-writer")),
                       ("libscope_preload.so", os.path.join(a.lib, "libscope_preload.so"))):
        if not os.path.exists(path):
            raise Failure(f"{what} ({path}) was not built")


def case_arena(a):
    check_arena_tools(a)
    seeds = os.path.join(a.workdir, "seeds")
    make_arena_seeds(a, seeds)
    os.makedirs(a.corpus, exist_ok=True)
    artifacts = os.path.join(a.workdir, "artifacts")
    os.makedirs(artifacts)
    # A line the writer's code printed for each input would fill the log:
    # libFuzzer closes its stderr and keeps its reports and the sanitizers'.
    rc, text = fuzz_once(a, a.seconds, a.corpus, seeds, artifacts, arena_fuzzer_env(a), 1, ("-close_fd_mask=2",))
    if rc != 0:
        kind, _, frame = classify(text)
        unit = artifact(text)
        where = save_regression(a, unit, kind) if unit else "(libFuzzer wrote no input)"
        said = [x for x in text.splitlines() if x.startswith("fuzz_arena:")]
        raise Failure(f"fuzz_arena found a {kind} ({said[-1] if said else frame}); input saved as {where}; "
                      f"log {os.path.join(a.workdir, 'fuzz-1.log')}")
    log(f"fuzzed {a.seconds} s; corpus: {len(os.listdir(a.corpus))} inputs; no finding")


def recover(a, path, out_dir):
    """scope-writer --recover on a copy of the arena at PATH; returns (exit status, stderr lines, output)."""
    copy = os.path.join(out_dir, os.path.basename(path) + ".arena")
    out = os.path.join(out_dir, os.path.basename(path) + ".h5")
    shutil.copy(path, copy)
    argv = [os.path.join(a.bin, "scope-writer"), "--recover", "--no-symbolize", "-o", out, copy]
    try:
        p = subprocess.run(argv, env=arena_fuzzer_env(a), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           errors="replace", timeout=ARENA_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure(f"scope-writer --recover on {path} did not finish in {ARENA_TIMEOUT} s")
    return p.returncode, [x for x in p.stderr.splitlines() if x.strip()], out


def case_arena_replay(a):
    check_arena_tools(a)
    seeds = make_arena_seeds(a, os.path.join(a.workdir, "seeds"))
    inputs = regression_inputs(a.regressions)
    log(f"{len(inputs)} regression input(s) in {a.regressions}, {len(seeds)} seeds")
    r = subprocess.run([a.fuzzer, "-runs=1", f"-timeout={ARENA_TIMEOUT}", *inputs, *seeds], env=arena_fuzzer_env(a),
                       stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, errors="replace", timeout=600)
    if r.returncode != 0:
        kind, _, frame = classify(r.stderr)
        raise Failure(f"fuzz_arena failed on a replayed input ({kind}: {frame})\n{r.stderr[-6000:]}")
    log(f"fuzz_arena replayed {len(inputs) + len(seeds)} inputs without a finding")
    out_dir = os.path.join(a.workdir, "recovered")
    os.makedirs(out_dir)
    for path in inputs + seeds:
        rc, lines, out = recover(a, path, out_dir)
        if rc not in (0, 1, 2) or len(lines) > 1:
            raise Failure(f"scope-writer --recover on {path}: exit {rc}, stderr {lines!r}")
        if rc == 0:
            c = subprocess.run([a.rdcheck, out], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            if c.returncode != 0:
                raise Failure(f"the profile scope-writer --recover wrote from {path} does not read back: {c.stderr}")
        if path in seeds and rc != 0:
            raise Failure(f"scope-writer --recover refused the seed {path}: {lines!r}")
        log(f"  scope-writer --recover {os.path.basename(path)}: exit {rc} {lines[0] if lines else ''}")


# ---------------------------------------------------------------------------


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "bin", "progs", "workdir")
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--h5walk", help="the profile harnesses' pre-check (run, replay, merge, merge-replay)")
    ap.add_argument("--lib", help="directory of libscope_preload.so (arena, arena-replay)")
    ap.add_argument("--rdcheck", help="the program that runs the reader's rd_check on files (arena-replay, "
                    "merge-replay)")
    ap.add_argument("--regressions", required=True, help="tests/fuzz/regressions in the source tree")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--corpus")
    a = ap.parse_args()
    a.workdir = os.path.abspath(a.workdir)
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return run_case(CASES, a.case, lambda: a)


if __name__ == "__main__":
    sys.exit(main())
