# SPDX-License-Identifier: GPL-2.0-or-later
"""Judging the devices' counters (read over QMP): dmalab-ioat's against the copies the guest
verified, and the --expect-vtd and --expect-ioat conditions (judge.py's analyse uses them)."""

from harness.qemu import COUNTERS, dsa_stats, ioat_stats, vtd_stats
from harness.expect import PER_REQUESTER


def judge_counters(facts, boot, setup, counters):
    """Cross-check dmalab-ioat's own counters (QMP) with the guest's view:
    every copy the guest verified went through the device."""
    if boot.qmp_error:
        return ["QMP: %s" % boot.qmp_error]
    if boot.device_stats is None:
        named = counters.named()
        if setup.counters_unread:
            # A saved log has no counters; nor has a run without a dmalab
            # device or with --no-counters.  Only what was asked for fails.
            return ["the device counters were not read (%s): cannot check %s" % (
                setup.counters_unread, ", ".join(named))] if named else []
        # Every boot of a live run has them: read at its power-off, at its
        # --reset-on marker, or at its guest reset (held back for that).
        return ["QMP: the device counters were wanted but not read (QEMU "
                "ended before the runner could ask)%s" % (
                    ": cannot check %s" % ", ".join(named) if named else "")]
    reasons = judge_vtd(facts, boot, counters.vtd)
    reasons += judge_ioat_counters(facts, boot, counters.ioat)
    reasons += judge_dsa_counters(facts, boot, counters.dsa)
    if not ioat_stats(boot):
        if not setup.ioat_device:
            # no dmalab-ioat on the command line (a dmalab-dsa run): only what names
            # its counters fails
            named = [n for n in counters.named()
                     if not n.startswith(("--expect-vtd ", "--expect-ioat ", "--expect-dsa "))]
            return reasons + (["no dmalab-ioat on the command line: cannot check %s" %
                               ", ".join(named)] if named else [])
        return reasons + ["QMP: no dmalab-ioat device found in the QOM tree"]
    total = {c: sum(d[c] for d in ioat_stats(boot)) for c in COUNTERS}
    return reasons + judge_ioat(facts, total, counters)


def judge_ioat(facts, total, counters):
    """dmalab-ioat's counters, summed over the devices, against the expectations and
    the copies the guest verified."""
    reasons = []
    if total["descriptors"] < counters.min_descriptors:
        reasons.append("dmalab-ioat completed %d descriptors, expected at least %d" % (
            total["descriptors"], counters.min_descriptors))
    if total["bytes"] < counters.min_bytes:
        reasons.append("dmalab-ioat moved %d bytes, expected at least %d" % (
            total["bytes"], counters.min_bytes))
    want = counters.errors.count
    if counters.errors.at_least and total["errors"] < want:
        reasons.append("dmalab-ioat counted %d channel error(s), expected "
                       "at least %d" % (total["errors"], want))
    elif not counters.errors.at_least and total["errors"] != want:
        reasons.append("dmalab-ioat counted %d channel error(s)%s" % (
            total["errors"], (", expected %d" % want) if want else ""))
    s = facts.summary
    if s:
        if total["bytes"] < s["bytes"]:
            reasons.append("dmalab-ioat copied %d bytes, fewer than the %d "
                           "the guest verified" % (total["bytes"], s["bytes"]))
        if total["descriptors"] < s["ops"]:
            reasons.append("dmalab-ioat completed %d descriptors, fewer than "
                           "the guest's %d copies" % (total["descriptors"], s["ops"]))
        if s["ops"] and not total["interrupts"]:
            reasons.append("dmalab-ioat sent no interrupt")
    return reasons


def judge_vtd(facts, boot, conditions):
    """--expect-vtd: conditions on dmalab-vtd's counters (named by its counter-names)."""
    units = vtd_stats(boot)
    return judge_conditions("dmalab-vtd", units, conditions, facts,
                            units[0]["counter-names"] if units else (),
                            "QMP: no dmalab-vtd found in the QOM tree")


def judge_ioat_counters(facts, boot, conditions):
    """--expect-ioat: conditions on dmalab-ioat's counters."""
    devs = ioat_stats(boot)
    return judge_conditions("dmalab-ioat", devs, conditions, facts, None,
                            "QMP: no dmalab-ioat counters were read")


def judge_dsa_counters(facts, boot, conditions):
    """--expect-dsa: conditions on dmalab-dsa's counters (devices/dsa/dsa-host.c)."""
    devs = dsa_stats(boot)
    return judge_conditions("dmalab-dsa", devs, conditions, facts,
                            devs[0]["counter-names"] if devs else (),
                            "QMP: no dmalab-dsa found in the QOM tree")


def judge_conditions(kind, devs, conditions, facts, names, missing):
    """Conditions on a device kind's counters, each summed over its devices; names,
    when given, the counters the device says it has (listed when one is not)."""
    if not conditions:
        return []
    if not devs:
        return [missing]
    # ops: the copies the exerciser's summary line says it verified. Without that line a
    # condition that names ops cannot be judged (it would compare with 0 and hold)
    ops = facts.summary["ops"] if facts.summary else None
    reasons = []
    for c in conditions:
        base = c.counter.split("@")[0]
        if "@" in c.counter and base not in PER_REQUESTER:
            reasons.append("%s keeps no counter %r per requester (%s)" % (kind, base, c.text))
            continue
        if any(base not in (d["counter-names"] if names is not None else d)
               for d in devs):
            reasons.append("%s has no counter %r (%s)%s" % (
                kind, c.counter, c.text, "; it has: " + " ".join(names)
                if names is not None else ""))
            continue
        if c.per_ops is not None and ops is None:
            reasons.append("%s: %s names ops, the copies the guest verified, but the "
                           "exerciser printed no summary line" % (kind, c.text))
            continue
        # a requester that had none has no entry
        have = sum(d.get(c.counter, 0) if "@" in c.counter else d[c.counter] for d in devs)
        if not c.holds(have, ops):
            reasons.append("%s: %s is %d, expected %s %d (%s)" % (
                kind, c.counter, have, c.op, c.want(ops), c.text))
    return reasons
