# SPDX-License-Identifier: GPL-2.0-or-later
"""KTAP as the exerciser prints it: results, plans, SKIPs, and its '# bench'
lines."""

import re


TS_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")


# "# bench[-what] key=value ...": benchmark figures, printed as tables
BENCH_RE = re.compile(r"^# (bench[\w-]*)((?:\s+[\w/.-]+=\S+)+)\s*$")


RESULT_RE = re.compile(r"^(not )?ok (\d+)(?: (?:- )?([^#]*?))?\s*(?:#\s*(.*))?$")


# "ok N name # SKIP reason": the test did not run (KTAP's SKIP directive;
# any case, "skipped" too)
SKIP_RE = re.compile(r"SKIP", re.IGNORECASE)


PLAN_RE = re.compile(r"^1\.\.(\d+)\s*$")


def strip_ts(line):
    return TS_RE.sub("", line)


def parse_ktap(lines):
    """Return dict(plan, results{num: (ok, name, directive)}, diag, found)."""
    out = {"found": False, "plan": None, "results": {}, "dups": [],
           "diag": []}
    prefix = None
    for raw in lines:
        line = strip_ts(raw)
        if prefix is None:
            i = line.find("KTAP version")
            if i < 0:
                i = line.find("TAP version")
            if i >= 0:
                prefix = line[:i]
                out["found"] = True
            continue
        if not line.startswith(prefix):
            continue
        body = line[len(prefix):]
        if body.startswith("KTAP version") or body.startswith("TAP version"):
            # a second top-level document: judge the newest one
            out.update({"plan": None, "results": {}, "dups": [], "diag": []})
            continue
        m = PLAN_RE.match(body)
        if m and out["plan"] is None:
            out["plan"] = int(m.group(1))
            continue
        m = RESULT_RE.match(body)
        if m:
            num = int(m.group(2))
            if num in out["results"]:
                out["dups"].append(num)
            out["results"][num] = (m.group(1) is None,
                                   (m.group(3) or "").strip(),
                                   (m.group(4) or "").strip())
            continue
        if body.startswith("#"):
            out["diag"].append(body)
    return out


def parse_bench(diag):
    """(tag, {key: value}) of a "# bench[-what] key=value ..." KTAP
    diagnostic line, else None."""
    m = BENCH_RE.match(diag)
    if not m:
        return None
    return m.group(1), dict(kv.split("=", 1) for kv in m.group(2).split())


def bench_tables(rows):
    """Text lines: one table per tag of parsed bench lines, columns in the
    order the keys first appear."""
    out = []
    tags = []
    for tag, _ in rows:
        if tag not in tags:
            tags.append(tag)
    for tag in tags:
        sel = [f for t, f in rows if t == tag]
        cols = []
        for f in sel:
            cols += [k for k in f if k not in cols]
        width = {c: max([len(c)] + [len(f.get(c, "-")) for f in sel])
                 for c in cols}
        out.append("%s:" % tag)
        out.append("  " + "  ".join(c.rjust(width[c]) for c in cols))
        for f in sel:
            out.append("  " + "  ".join(f.get(c, "-").rjust(width[c])
                                        for c in cols))
    return out

