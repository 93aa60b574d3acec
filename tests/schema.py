#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The schema table of lib/schema.h against docs/SCHEMA.md and against a written profile.

Usage: schema.py CASE --dump PATH --doc PATH --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR

scope-schema-dump prints the table one field a line. docs: every field of
the table is documented in its group with the same type and unit, and
nothing is documented that the table lacks. profile: a profile the writer
wrote has every required field of the table with its type, its optional
fields (when present) with theirs, and nothing in a documented group that
the table does not hold.
"""

import os
import re
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, Test, cases_of, expect, expect_eq, is_vlen_utf8, parser, run_case  # noqa: E402

# Units a documented meaning may end with (", ns"); the table's unit must then be it.
UNITS = ("unix ns", "relative ns", "ns", "bytes", "s", "MHz", "Hz")


def dump_table(dump):
    """{(group, kind, name): (type, need, unit)} and the versions, from scope-schema-dump."""
    out = subprocess.run([dump], capture_output=True, text=True, check=False)
    expect_eq(out.returncode, 0, f"{dump} exit status")
    table, versions = {}, {}
    for line in out.stdout.splitlines():
        f = line.split("\t")
        if f[0] in ("schema", "oldest"):
            versions[f[0]] = int(f[1])
            continue
        expect(f[0] == "field" and len(f) == 8, f"a line of the dump: {line!r}")
        key = (f[1], f[2], f[3])
        expect(key not in table, f"{key} is twice in the table")
        table[key] = (f[4], f[5], f[6])
    return table, versions


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def doc_table(path):
    """{(group, kind, name): (type, meaning)} of every field table in the document."""
    fields, group, header = {}, None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        heading = re.match(r"^#{2,3} (.*)", line)
        if heading:
            path_in = re.match(r"^`(/[^`]*)`", heading.group(1))
            if path_in:
                group = path_in.group(1)
            elif line.startswith("## "):
                group = None  # a section of its own (Storage, ...): no fields
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        row = cells(line)
        if header is None:
            header = row
            continue
        if set("".join(row)) <= set("-: "):
            continue
        if group is None or header[0] not in ("attribute", "column", "member"):
            continue  # bits, MPI calls: not fields
        name = re.fullmatch(r"`([^`]+)`", row[0])
        expect(name, f"{group}: a field not in backquotes: {row[0]!r}")
        kind, ftype = ("attribute" if header[0] == "attribute" else "column"), row[1]
        if header[0] == "member":
            kind, ftype = (part.strip() for part in row[1].split(",", 1))
            kind = "column" if kind == "dataset" else kind
        key = (group.replace(" (root)", ""), kind, name.group(1))
        expect(key not in fields, f"{key} is documented twice")
        fields[key] = (ftype, row[2])
    return fields


def mentions(text, unit):
    return re.search(r"(?<![\w`])" + re.escape(unit) + r"(?![\w`])", text) is not None


def case_docs(a):
    table, versions = dump_table(a.dump)
    doc = doc_table(a.doc)
    problems = []
    expect_eq(versions.get("schema"), 3, "the schema version in the table")
    expect(versions.get("oldest", 99) <= versions["schema"], f"the oldest version read: {versions}")
    for key, (ftype, need, unit) in sorted(table.items()):
        where = f"{key[0]} {key[1]} {key[2]}"
        if key not in doc:
            problems.append(f"{where} is in the table but not in {os.path.basename(a.doc)}")
            continue
        dtype, meaning = doc[key]
        if dtype != ftype:
            problems.append(f"{where}: the table says {ftype}, the document {dtype}")
        if unit and not mentions(meaning, unit):
            problems.append(f"{where}: the table's unit {unit} is not in the document's meaning {meaning!r}")
        ends = [u for u in UNITS if re.search(r", " + re.escape(u) + r"$", meaning)]
        if ends and ends[0] != unit:
            problems.append(f"{where}: the document gives the unit {ends[0]}, the table {unit or 'none'}")
    for key in sorted(set(doc) - set(table)):
        problems.append(f"{key[0]} {key[1]} {key[2]} is documented but not in the table")
    expect(not problems, "the table and the document disagree:\n  " + "\n  ".join(problems))
    print(f"{len(table)} fields agree")


def type_problem(dtype, want):
    if want == "string":
        return None if is_vlen_utf8(dtype) else f"{dtype}, not a variable-length UTF-8 string"
    if want == "unsigned, narrowest":
        ok = dtype.kind == "u" and dtype.itemsize in (1, 2, 4, 8)
        return None if ok else f"{dtype}, not unsigned"
    names = {"int32": "<i4", "int64": "<i8", "uint8": "|u1", "uint32": "<u4", "uint64": "<u8", "float64": "<f8"}
    return None if dtype == names[want] else f"{dtype}, not {want}"


def case_profile(a):
    t = Test(a)
    table, _ = dump_table(a.dump)
    t.need_prog()
    # with the heap tracked: its groups are checked too
    t.scope("-q", "-o", "out.h5", "--", t.prog, env={"SCOPE_HEAP": "1"}).expect_rc(0)
    problems = []
    with h5py.File(t.path("out.h5"), "r") as f:
        groups = {}
        for (group, kind, name), spec in table.items():
            groups.setdefault((group, kind), {})[name] = spec
        for (group, kind), fields in sorted(groups.items()):
            path = group.replace("<N>", "0")
            if path not in f:
                if all(need == "optional" for _, need, _ in fields.values()) or "crash" in path:
                    continue  # a group only some profiles have
                problems.append(f"{path} is missing")
                continue
            obj = f[path]
            present = {n: obj.attrs.get_id(n).dtype for n in obj.attrs} if kind == "attribute" else \
                {n: obj[n].dtype for n in obj if isinstance(obj[n], h5py.Dataset)}
            for name, (ftype, need, _) in fields.items():
                pattern = re.escape(name).replace(re.escape("<VAR>"), r"\w+")
                found = [n for n in present if re.fullmatch(pattern, n)]
                if not found and need == "required":
                    problems.append(f"{path} {kind} {name} is missing")
                for n in found:
                    why = type_problem(present[n], ftype)
                    if why:
                        problems.append(f"{path} {kind} {n} is {why}")
            for n in present:
                if not any(re.fullmatch(re.escape(x).replace(re.escape("<VAR>"), r"\w+"), n) for x in fields):
                    problems.append(f"{path} {kind} {n} is written but not in the table")
    expect(not problems, "the profile and the table disagree:\n  " + "\n  ".join(problems))


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized")
    ap.add_argument("--dump", required=True, help="scope-schema-dump")
    ap.add_argument("--doc", required=True, help="docs/SCHEMA.md")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: a)


if __name__ == "__main__":
    sys.exit(main())
