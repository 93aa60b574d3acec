#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The schema table of lib/schema.h against docs/SCHEMA.md and against written profiles.

Usage: schema.py CASE --dump PATH --doc PATH --prog PATH --bin DIR --lib DIR --src DIR --workdir DIR

scope-schema-dump prints the table one field, group or enumeration a line.
docs: every field of the table is documented in its group with the same
type, unit and meaning (word for word), every group's description is the
paragraph that opens its section, every enumeration is the document's,
and nothing is documented that the table lacks. profile: a profile the
writer wrote has every required field of the table with its type, its
optional fields (when present) with theirs, nothing the table does not
hold, and on every group and dataset the table's description, unit and
enumerations as attributes. merged: the same of profiles the merge wrote
(scope-run of a forking program; scope-merge of an input whose
descriptions were removed and one that has them). symbolized: the same of
a merged profile that scope-symbolize rewrote. copies: the Python package's
and profile_checks.py's hand-written lists against the table.
"""

import os
import re
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Failure, Test, cases_of, expect, expect_eq, is_vlen_utf8, parser, run_case  # noqa: E402

# Units a documented meaning may end with (", ns"); the table's unit must then be it.
UNITS = ("unix ns", "relative ns", "ns", "bytes", "s", "MHz", "Hz")


class Dump:
    """lib/schema.h's table as scope-schema-dump prints it."""

    def __init__(self, dump):
        out = subprocess.run([dump], capture_output=True, text=True, check=False)
        expect_eq(out.returncode, 0, f"{dump} exit status")
        self.fields = {}  # (group, kind, name): (type, need, unit)
        self.what = {}  # (group, kind, name): description
        self.groups = {}  # path: description
        self.enums = []  # (group, column, attribute, text)
        self.versions = {}
        self.meta_attributes = ()
        for line in out.stdout.splitlines():
            f = line.split("\t")
            if f[0] in ("schema", "oldest"):
                self.versions[f[0]] = int(f[1])
            elif f[0] == "field" and len(f) == 8:
                key = (f[1], f[2], f[3])
                expect(key not in self.fields, f"{key} is twice in the table")
                self.fields[key] = (f[4], f[5], f[6])
                self.what[key] = f[7]
            elif f[0] == "group" and len(f) == 3:
                expect(f[1] not in self.groups, f"group {f[1]} is twice in the table")
                self.groups[f[1]] = f[2]
            elif f[0] == "enum" and len(f) == 5:
                self.enums.append(tuple(f[1:]))
            elif f[0] == "attributes" and len(f) == 3:
                self.meta_attributes = (f[1], f[2])
            else:
                raise Failure(f"a line of the dump: {line!r}")
        expect_eq(self.meta_attributes, ("description", "unit"), "the names of the describing attributes")


def dump_table(dump):
    """{(group, kind, name): (type, need, unit)} and the versions, from scope-schema-dump."""
    d = Dump(dump)
    return d.fields, d.versions


def plain(text):
    """A description as the file holds it: the document's text without its markup."""
    return text.replace("`", "").replace("*", "")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


class Doc:
    """docs/SCHEMA.md's tables: fields {(group, kind, name): (type, meaning)}, the
    paragraph opening each group's section {path: text}, and the bit tables
    {(group, column): {bit: meaning}} of its column sections."""

    def __init__(self, path):
        self.fields, self.groups, self.bits = {}, {}, {}
        group, section, header, opening = None, None, None, None
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for line in lines:
            heading = re.match(r"^#{2,3} (.*)", line)
            if heading:
                path_in = re.match(r"^`(/[^`]*)`", heading.group(1))
                column_in = re.fullmatch(r"`(\w+)`", heading.group(1))
                if path_in:
                    group, section = path_in.group(1), None
                    expect(group not in self.groups, f"the section of {group} is twice in the document")
                    opening = self.groups[group] = []
                elif line.startswith("## "):
                    group, section = None, None  # a section of its own (Storage, ...): no fields
                else:
                    section = column_in.group(1) if column_in else None
                header = None
                continue
            if opening is not None:
                if line.strip() and not line.startswith("|"):
                    opening.append(line.strip())
                    continue
                if opening or line.startswith("|"):
                    opening = None
            if not line.startswith("|"):
                header = None
                continue
            row = cells(line)
            if header is None:
                header = row
                continue
            if set("".join(row)) <= set("-: "):
                continue
            if group is not None and header[0] == "bit" and section:
                self.bits.setdefault((group, section), {})[row[0]] = row[1]
                continue
            if group is None or header[0] not in ("attribute", "column", "member"):
                continue  # MPI calls: not fields
            name = re.fullmatch(r"`([^`]+)`", row[0])
            expect(name, f"{group}: a field not in backquotes: {row[0]!r}")
            kind, ftype = ("attribute" if header[0] == "attribute" else "column"), row[1]
            if header[0] == "member":
                kind, ftype = (part.strip() for part in row[1].split(",", 1))
                kind = "column" if kind == "dataset" else kind
            key = (group, kind, name.group(1))
            expect(key not in self.fields, f"{key} is documented twice")
            self.fields[key] = (ftype, row[2])
        self.groups = {g: " ".join(words) for g, words in self.groups.items()}


def doc_table(path):
    """{(group, kind, name): (type, meaning)} of every field table in the document."""
    return Doc(path).fields


def mentions(text, unit):
    return re.search(r"(?<![\w`])" + re.escape(unit) + r"(?![\w`])", text) is not None


def case_docs(a):
    d = Dump(a.dump)
    table, versions = d.fields, d.versions
    doc = Doc(a.doc)
    problems = []
    expect_eq(versions.get("schema"), 3, "the schema version in the table")
    expect(versions.get("oldest", 99) <= versions["schema"], f"the oldest version read: {versions}")
    for key, (ftype, need, unit) in sorted(table.items()):
        where = f"{key[0]} {key[1]} {key[2]}"
        if key not in doc.fields:
            problems.append(f"{where} is in the table but not in {os.path.basename(a.doc)}")
            continue
        dtype, meaning = doc.fields[key]
        if dtype != ftype:
            problems.append(f"{where}: the table says {ftype}, the document {dtype}")
        if unit and not mentions(meaning, unit):
            problems.append(f"{where}: the table's unit {unit} is not in the document's meaning {meaning!r}")
        ends = [u for u in UNITS if re.search(r", " + re.escape(u) + r"$", meaning)]
        if ends and ends[0] != unit:
            problems.append(f"{where}: the document gives the unit {ends[0]}, the table {unit or 'none'}")
        if d.what[key] != meaning:
            problems.append(f"{where}: the table describes it as {d.what[key]!r}, the document as {meaning!r}")
    for key in sorted(set(doc.fields) - set(table)):
        problems.append(f"{key[0]} {key[1]} {key[2]} is documented but not in the table")
    problems += group_problems(d, doc) + enum_problems(d, doc)
    expect(not problems, "the table and the document disagree:\n  " + "\n  ".join(problems))
    print(f"{len(table)} fields, {len(d.groups)} groups and {len(d.enums)} enumerations agree")


def group_problems(d, doc):
    """Every group of the table has a section that opens with its description, and back."""
    problems = []
    in_fields = {g for g, _, _ in d.fields}
    for path, what in sorted(d.groups.items()):
        if path not in doc.groups:
            problems.append(f"group {path} is in the table but has no section in the document")
        elif doc.groups[path] != what:
            problems.append(f"group {path}: the table describes it as {what!r}, the document as {doc.groups[path]!r}")
    for path in sorted(set(doc.groups) - set(d.groups)):
        problems.append(f"group {path} has a section in the document but is not in the table")
    for path in sorted(in_fields - set(d.groups)):
        problems.append(f"group {path} has fields but no description in the table")
    return problems


def enum_problems(d, doc):
    """bit_N is row N of the column's bit table; values lists what the column's meaning names."""
    problems, bits_seen = [], set()
    for group, column, attr, text in d.enums:
        where = f"{group}/{column} {attr}"
        if (group, "column", column) not in d.fields:
            problems.append(f"{where}: the table has no such column")
            continue
        bit = re.fullmatch(r"bit_(\d+)", attr)
        if bit:
            documented = doc.bits.get((group, column), {}).get(bit.group(1))
            bits_seen.add((group, column, bit.group(1)))
            if documented != text:
                problems.append(f"{where}: the table says {text!r}, the document's bit table {documented!r}")
        elif attr == "values":
            meaning = doc.fields.get((group, "column", column), ("", ""))[1]
            for value in text.split(", "):
                if f"`{value}`" not in meaning:
                    problems.append(f"{where}: the value {value} is not in the document's meaning {meaning!r}")
        else:
            problems.append(f"{where}: an enumeration is bit_N or values")
    for (group, column), rows in sorted(doc.bits.items()):
        for bit in sorted(rows):
            if (group, column, bit) not in bits_seen:
                problems.append(f"{group}/{column} bit {bit} is documented but has no bit_{bit} in the table")
    return problems


TYPES = {"int32": "<i4", "int64": "<i8", "uint8": "|u1", "uint32": "<u4", "uint64": "<u8", "float64": "<f8"}


def type_problem(dtype, want):
    if want == "string":
        return None if is_vlen_utf8(dtype) else f"{dtype}, not a variable-length UTF-8 string"
    if want == "unsigned, narrowest":
        ok = dtype.kind == "u" and dtype.itemsize in (1, 2, 4, 8)
        return None if ok else f"{dtype}, not unsigned"
    return None if dtype == TYPES[want] else f"{dtype}, not {want}"


def table_path(path):
    """The table's name of a group of the file: /process3/modules -> /process<N>/modules."""
    return re.sub(r"^/process\d+(?=/|$)", "/process<N>", path)


# Columns the merge stores in the narrowest unsigned type that holds their
# values, not at the table's width; readers widen every unsigned column.
# (/regions has one writer, lib/columns.c's col_regions, for all three.)
MERGE_NARROWS = {("/pairs", "process"), ("/pairs", "region")}


def field_problems(f, d, narrowed=()):
    """The fields of the table against the file f: types, presence, nothing else.
    A column in narrowed may be any unsigned type no wider than the table's."""
    problems, groups = [], {}
    for (group, kind, name), spec in d.fields.items():
        groups.setdefault((group, kind), {})[name] = spec
    for (group, kind), fields in sorted(groups.items()):
        paths = [group] if "<N>" not in group else \
            [group.replace("<N>", str(n)) for n in range(len(f["processes/pid"]))]
        for path in paths:
            if path not in f:
                if all(need == "optional" for _, need, _ in fields.values()) or \
                        path.endswith(("/crash", "/aggregates", "/samples")):
                    continue  # a group only some profiles have
                problems.append(f"{path} is missing")
                continue
            obj = f[path]
            present = {n: obj.attrs.get_id(n).dtype for n in obj.attrs if n != "description"} \
                if kind == "attribute" else {n: obj[n].dtype for n in obj if isinstance(obj[n], h5py.Dataset)}
            for name, (ftype, need, _) in fields.items():
                pattern = re.escape(name).replace(re.escape("<VAR>"), r"\w+")
                found = [n for n in present if re.fullmatch(pattern, n)]
                if not found and need == "required":
                    problems.append(f"{path} {kind} {name} is missing")
                for n in found:
                    why = type_problem(present[n], ftype)
                    if why and (group, name) in narrowed:
                        wide = np.dtype(TYPES[ftype])
                        ok = present[n].kind == "u" and present[n].itemsize <= wide.itemsize
                        why = None if ok else why
                    if why:
                        problems.append(f"{path} {kind} {n} is {why}")
            for n in present:
                if not any(re.fullmatch(re.escape(x).replace(re.escape("<VAR>"), r"\w+"), n) for x in fields):
                    problems.append(f"{path} {kind} {n} is written but not in the table")
    return problems


def text_attr(obj, name):
    """obj's attribute name if it is a string, else None."""
    if name not in obj.attrs or not is_vlen_utf8(obj.attrs.get_id(name).dtype):
        return None
    return obj.attrs[name]


def description_problems(f, d):
    """Every group and dataset of f carries the table's description, unit and enumerations."""
    problems, seen = [], {"groups": 0, "datasets": 0}
    enums = {}
    for group, column, attr, text in d.enums:
        enums.setdefault((group, column), {})[attr] = plain(text)

    def check(name, obj):
        path = "/" + name if name else "/"
        tpath = table_path(path)
        if isinstance(obj, h5py.Group):
            seen["groups"] += 1
            if tpath not in d.groups:
                problems.append(f"group {path} is not in the table")
            elif text_attr(obj, "description") != plain(d.groups[tpath]):
                problems.append(f"group {path}: description {text_attr(obj, 'description')!r}, "
                                f"the table's {plain(d.groups[tpath])!r}")
            return
        seen["datasets"] += 1
        group, _, column = tpath.rpartition("/")
        key = (group or "/", "column", column)
        if key not in d.fields:
            problems.append(f"dataset {path} is not in the table")
            return
        want = {"description": plain(d.what[key])}
        if d.fields[key][2]:
            want["unit"] = d.fields[key][2]
        want.update(enums.get((key[0], column), {}))
        have = {n: text_attr(obj, n) for n in obj.attrs}
        if have != want:
            problems.append(f"dataset {path}: attributes {have!r}, the table's {want!r}")

    check("", f)
    f.visititems(check)
    expect(seen["datasets"] > 20, f"a profile with {seen['datasets']} datasets")
    return problems


def profile_problems(path, d, narrowed=()):
    with h5py.File(path, "r") as f:
        return field_problems(f, d, narrowed) + description_problems(f, d)


def case_profile(a):
    t = Test(a)
    d = Dump(a.dump)
    t.need_prog()
    # with the heap tracked: its groups are checked too
    t.scope("-q", "-o", "out.h5", "--", t.prog, env={"SCOPE_HEAP": "1"}).expect_rc(0)
    problems = profile_problems(t.path("out.h5"), d)
    expect(not problems, "the profile and the table disagree:\n  " + "\n  ".join(problems))


def strip_descriptions(path):
    """Removes every describing attribute from the profile at path, as an older writer wrote it."""
    def strip(obj):
        for n in list(obj.attrs):
            if n in ("description", "unit", "values") or re.fullmatch(r"bit_\d+", n):
                del obj.attrs[n]

    with h5py.File(path, "r+") as f:
        strip(f)
        f.visititems(lambda _, obj: strip(obj))


def case_merged(a):
    t = Test(a)
    d = Dump(a.dump)
    t.need_prog()
    # scope-run merges the parts of a forking run through lib/merge.c; the
    # heap tracked, so that its groups are carried too
    heap = {"SCOPE_HEAP": "1"}
    t.scope("-q", "-o", "fork.h5", "--", t.prog, "fork", env=heap).expect_rc(0)
    problems = profile_problems(t.path("fork.h5"), d, MERGE_NARROWS)
    with h5py.File(t.path("fork.h5"), "r") as f:
        expect_eq(len(f["processes/pid"]), 2, "processes of the forking run")
    for name in ("old.h5", "new.h5"):
        t.scope("-q", "-o", name, "--", t.prog, "leaf", "3", env=heap).expect_rc(0)
    strip_descriptions(t.path("old.h5"))
    with h5py.File(t.path("old.h5"), "r") as f:
        expect("description" not in f["events/duration"].attrs, "descriptions removed from old.h5")
    t.run([os.path.join(t.bin, "scope-merge"), "--keep", "-o", t.path("merged.h5"),
           t.path("old.h5"), t.path("new.h5")], env=t.env()).expect_rc(0)
    problems += profile_problems(t.path("merged.h5"), d, MERGE_NARROWS)
    with h5py.File(t.path("merged.h5"), "r") as f:
        expect_eq(len(f["processes/pid"]), 2, "processes of the merged file")
    expect(not problems, "the merged profiles and the table disagree:\n  " + "\n  ".join(problems))


# The hand-written copies of the table: the Python package's, and the harness's.
PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "scope_profile",
                       "_profile.py")
# The package's names of the groups it reads.
PACKAGE_GROUPS = {"processes": "/processes", "regions": "/regions", "pairs": "/pairs",
                  "threads": "/process<N>/lanes/threads", "tasks": "/process<N>/lanes/tasks",
                  "modules": "/process<N>/modules", "heap": "/process<N>/heap",
                  "heap_sites": "/process<N>/heap_sites"}
# profile_checks' types, as the table spells them.
CHECK_TYPES = {"str": "string", "<i4": "int32", "<i8": "int64", "<u4": "uint32", "<u8": "uint64", "<f8": "float64",
               "uint": "unsigned, narrowest", "|u1": "uint8"}


PACKAGE_LISTS = ("SCHEMA", "NEVER_RETURNED", "_ORDER", "_FILL", "_EVENT_COLUMNS", "_EVENT_OPTIONAL",
                 "_HEAP_ATTRIBUTES")


def package_lists():
    """The package's PACKAGE_LISTS, evaluated from its source (importing it would need pandas)."""
    import ast
    with open(PACKAGE, encoding="utf-8") as f:
        tree = ast.parse(f.read(), PACKAGE)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in PACKAGE_LISTS:
                out[name] = eval(compile(ast.Expression(node.value), PACKAGE, "eval"), {})
    return out


def columns(d, group, need=None):
    """The names of group's columns in the table's order (of one need only, if given)."""
    return [n for (g, kind, n), (_, nd, _) in d.fields.items()
            if g == group and kind == "column" and need in (None, nd)]


def package_problems(d):
    got = package_lists()
    problems = []
    for name in PACKAGE_LISTS:
        if name not in got:
            problems.append(f"{PACKAGE} has no {name}")
    if problems:
        return problems
    if got["SCHEMA"] != d.versions["schema"]:
        problems.append(f"_profile.py: SCHEMA = {got['SCHEMA']}, the table's schema is {d.versions['schema']}")
    if not any(e[:3] == ("/events", "flags", f"bit_{got['NEVER_RETURNED'].bit_length() - 1}") for e in d.enums):
        problems.append(f"_profile.py: NEVER_RETURNED = {got['NEVER_RETURNED']} is no bit of /events/flags")
    for kind, order in got["_ORDER"].items():
        group = PACKAGE_GROUPS.get(kind)
        if group is None:
            problems.append(f"_profile.py: _ORDER[{kind!r}] names no group of the table this test knows")
            continue
        if list(order) != columns(d, group):
            problems.append(f"_profile.py: _ORDER[{kind!r}] is {list(order)}, {group} has {columns(d, group)}")
        fill = sorted(got["_FILL"].get(kind, {}))
        if fill != sorted(columns(d, group, "optional")):
            problems.append(f"_profile.py: _FILL[{kind!r}] fills {fill}, the optional columns of {group} are "
                            f"{sorted(columns(d, group, 'optional'))}")
    for kind in sorted(set(got["_FILL"]) - set(got["_ORDER"])):
        problems.append(f"_profile.py: _FILL[{kind!r}] has no _ORDER")
    required = columns(d, "/events", "required")
    if list(got["_EVENT_COLUMNS"]) != required:
        problems.append(f"_profile.py: _EVENT_COLUMNS is {list(got['_EVENT_COLUMNS'])}, the required /events "
                        f"columns are {required}")
    heap = [n for (g, kind, n) in d.fields if g == "/process<N>/heap" and kind == "attribute"]
    if list(got["_HEAP_ATTRIBUTES"]) != heap:
        problems.append(f"_profile.py: _HEAP_ATTRIBUTES is {list(got['_HEAP_ATTRIBUTES'])}, /process<N>/heap's "
                        f"attributes are {heap}")
    optional = columns(d, "/events", "optional")
    if list(got["_EVENT_OPTIONAL"]) != optional:
        problems.append(f"_profile.py: _EVENT_OPTIONAL is {list(got['_EVENT_OPTIONAL'])}, the optional /events "
                        f"columns are {optional}")
    return problems


def check_problems(d):
    import profile_checks as pc
    problems = []
    lists = [(f"SCHEMA[{g!r}]", "/" + re.sub(r"^process0(?=/)", "process<N>", g), "column", cols)
             for g, cols in pc.SCHEMA.items()]
    lists.append(("ROOT", "/", "attribute", pc.ROOT))
    lists.append(("METADATA", "/metadata", "attribute", {n: t for t, names in pc.METADATA.items() for n in names}))
    for what, group, kind, listed in lists:
        fields = {n: spec for (g, k, n), spec in d.fields.items() if g == group and k == kind}
        for name, code in listed.items():
            pattern = [f for f in fields if re.fullmatch(re.escape(f).replace(re.escape("<VAR>"), r"\w+"), name)]
            if not pattern:
                problems.append(f"profile_checks.py: {what} lists {name}, which {group} does not have")
            elif CHECK_TYPES.get(code) != fields[pattern[0]][0]:
                problems.append(f"profile_checks.py: {what} types {name} as {code}, the table as "
                                f"{fields[pattern[0]][0]}")
        for name, (_, need, _) in fields.items():
            if need == "required" and name not in listed:
                problems.append(f"profile_checks.py: {what} lacks {group}'s required {kind} {name}")
    return problems


def case_copies(a):
    """The copies of the table that cannot include it, python/scope_profile/_profile.py (the
    version, each group's columns in order, the optional ones it fills, the event columns it
    decodes, required and optional, the heap's attributes) and tests/profile_checks.py (the groups and attributes it checks, every required
    one of them, with the table's types), agree with lib/schema.h."""
    d = Dump(a.dump)
    problems = package_problems(d) + check_problems(d)
    expect(not problems, "copies of the table disagree with it:\n  " + "\n  ".join(problems))
    print(f"_profile.py and profile_checks.py agree with the table's {len(d.fields)} fields")


def case_symbolized(a):
    """A profile scope-symbolize rewrote holds the table's fields and descriptions, /regions
    included, which it writes as the writer and the merge do: two runs recorded without names,
    merged by scope-merge, then symbolized."""
    t = Test(a)
    d = Dump(a.dump)
    t.need_prog()
    raw = {"SCOPE_SYMBOLIZE": "0", "SCOPE_HEAP": "1"}
    for name in ("a.h5", "b.h5"):
        t.scope("-q", "-o", name, "--", t.prog, "leaf", "3", env=raw).expect_rc(0)
    t.run([os.path.join(t.bin, "scope-merge"), "-q", "-o", t.path("merged.h5"), t.path("a.h5"), t.path("b.h5")],
          env=t.env()).expect_rc(0)
    with h5py.File(t.path("merged.h5"), "r") as f:
        expect_eq(len(f["processes/pid"]), 2, "processes of the merged file")
        names = list(f["regions/name"].asstr()[()])
    t.run([os.path.join(t.bin, "scope-symbolize"), "-q", t.path("merged.h5")], env=t.env()).expect_rc(0)
    with h5py.File(t.path("merged.h5"), "r") as f:
        expect(list(f["regions/name"].asstr()[()]) != names, "scope-symbolize changed no name")
    problems = profile_problems(t.path("merged.h5"), d, MERGE_NARROWS)
    expect(not problems, "the symbolized profile and the table disagree:\n  " + "\n  ".join(problems))


CASES = cases_of(globals())


def main():
    ap = parser(__doc__, CASES, "prog", "bin", "lib", "src", "workdir", "sanitized")
    ap.add_argument("--dump", required=True, help="scope-schema-dump")
    ap.add_argument("--doc", required=True, help="docs/SCHEMA.md")
    a = ap.parse_args()
    return run_case(CASES, a.case, lambda: a)


if __name__ == "__main__":
    sys.exit(main())
