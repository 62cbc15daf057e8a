# SPDX-License-Identifier: GPL-2.0-or-later
"""The race detector's reports: which races a run saw, symbolised with the
guest's kallsyms, and judged against --expect-race."""

import atexit
import os
import re
import shutil
import tempfile

from harness.ktap import strip_ts


SCENARIO_DIAG_RE = re.compile(
    r"# dmalab_exercise: (order|fail|lostirq|cpuwrite|uaf|cow|stale): ")


RESULT_LINE_RE = re.compile(r"^(not )?ok \d+ ")


def race_report(boot, verdict):
    """--report: what was injected, what the guest saw, what the detector or
    the audit found, and how the scenario ended, as a few readable lines."""
    out = ["== race report =="]
    stats = boot.device_stats or []
    injected = [l for d in stats for l in d.get("fault-log", "").splitlines()]
    out.append("injected (%d):" % len(injected))
    out += ["  " + l for l in injected] or ["  nothing"]
    lines = [strip_ts(l) for l in boot.lines]
    out.append("the guest saw:")
    out += ["  " + l[2:] for l in lines if SCENARIO_DIAG_RE.search(l)] or ["  (no scenario lines)"]
    out += ["  " + l for l in lines if RESULT_LINE_RE.match(l)]
    races = getattr(boot, "races", None)
    if races is not None:
        out.append("race detector:")
        out += ["  " + l for l in races]
    for d in stats:
        if d.get("type") == "dmalab-vtd":
            out.append("dmalab-vtd: audit-stale=%d faults-recorded=%d" % (
                d.get("audit-stale", 0), d.get("faults-recorded", 0)))
    out.append("result: %s" % verdict)
    return out


def race_files(args):
    """--race-plugin: a fresh table and log for one boot."""
    d = tempfile.mkdtemp(prefix="dmalab-race-")
    atexit.register(shutil.rmtree, d, True)
    return os.path.join(d, "table"), os.path.join(d, "races.log")


KSYM_RE = re.compile(r"DMALAB: ksym ([0-9a-f]+) \w (\S+)")


RACE_RE = re.compile(r"^race .*\bpc=0x([0-9a-f]+)")


def symbolize_races(boot, log_path):
    """The detector's reports, each with the kernel symbol of its PC (from the
    guest's /proc/kallsyms lines for our module, printed by /init)."""
    syms = sorted((int(m.group(1), 16), m.group(2))
                  for m in map(KSYM_RE.search, boot.lines) if m)
    out = []
    try:
        with open(log_path) as f:
            lines = [l.rstrip("\n") for l in f]
    except OSError:
        return ["(no race detector log)"]
    for line in lines:
        m = RACE_RE.match(line)
        if m and syms:
            pc = int(m.group(1), 16)
            best = None
            for addr, name in syms:
                if addr <= pc:
                    best = (addr, name)
                else:
                    break
            if best and pc - best[0] < 0x10000:
                line += " at %s+0x%x" % (best[1], pc - best[0])
        out.append(line)
    return out


def judge_races(races, expect):
    """--expect-race: each pattern (expect, a RaceReports) matches a symbolized
    report; --expect-race-count: so many reports in all."""
    reasons = ["no race report matches %r" % rx for rx in expect.patterns
               if not any(re.search(rx, l) for l in races)]
    n = sum(l.startswith("race ") for l in races)
    if expect.count is not None and n != expect.count:
        reasons.append("the race detector reported %d race(s), expected %d" %
                       (n, expect.count))
    return reasons
