# SPDX-License-Identifier: GPL-2.0-or-later
"""Judging a run: the serial log (ioatdma's binding, KTAP results, kernel
problems, expected lines and interrupts) and the devices' counters against
what the guest did."""

import hashlib
import re
from dataclasses import dataclass
from typing import Optional

from harness.qemu import Boot, LINUX_RE, disk_data
from harness.ktap import SKIP_RE, parse_ktap, strip_ts
# The serial log read into Facts (judge_log.py) and the devices' counters judged
# (judge_counters.py); the names other modules take from here stay importable here.
from harness.judge_log import (  # noqa: F401
    CHAN_STAT_RE,
    DMALAB_RE,
    FIRMWARE_RE,
    IOAT_LINE_RE,
    Facts,
    parse_init_bench,
    read_diagnostics,
    read_log)
from harness.judge_counters import judge_counters, judge_vtd  # noqa: F401


def split_boots(boot):
    """One Boot per boot of a run's serial log.  A boot starts at the
    firmware's or the kernel's banner ("SeaBIOS (version", "Linux
    version"), or at /init's "DMALAB: init" line when that boot printed no
    banner before it; anything before the first one belongs to the first
    boot."""
    segs = []
    cur = None
    seen_linux = seen_init = False
    for line, stamp in zip(boot.lines, boot.stamps):
        text = strip_ts(line)
        is_linux = LINUX_RE.search(text) is not None
        is_start = is_linux or FIRMWARE_RE.search(text) is not None
        m = DMALAB_RE.search(text)
        is_init = m is not None and m.group(1).startswith("init ")
        if cur is None or (is_start and (seen_linux or seen_init)) or \
                (is_init and seen_init):
            cur = Boot()
            cur.cmd = boot.cmd
            segs.append(cur)
            seen_linux = seen_init = False
        seen_linux |= is_linux
        seen_init |= is_init
        cur.lines.append(line)
        cur.stamps.append(stamp)
    return segs or [Boot()]


@dataclass(frozen=True)
class RunSetup:
    """How a run was made, as far as judging it needs: the exerciser's scenario, the
    boots in one QEMU run, the timeout per boot, why the device counters were not
    read (None: they were wanted), the virtio disk's MiB and the sha256 of its
    contents (None: computed from disk_data), and whether a dmalab-ioat is on the
    command line (without one, as with only a dmalab-dsa, ioatdma need not bind)."""
    scenario: str = "memcpy"
    boots: int = 1
    reset_on: Optional[str] = None
    timeout: float = 300
    counters_unread: Optional[str] = None
    virtio_disk: int = 0
    disk_sha256: Optional[str] = None
    ioat_device: bool = True


def judge_run(boot, setup, expect):
    """Judges one QEMU run: returns ([(boot, facts, reasons)] per boot,
    reasons about the run as a whole)."""
    if setup.boots <= 1 and not setup.reset_on:
        facts, reasons = analyse(boot, setup, expect)
        return [(boot, facts, reasons)], []
    segs = split_boots(boot)
    # a saved log tells nothing about resets: all its boots ended in one
    reset_ends = boot.reset_ends if boot.reset_ends is not None else \
        set(range(len(segs)))
    run_reasons = []
    if len(segs) > setup.boots:
        # the runner quit QEMU as the boot after the last one began
        segs = segs[:setup.boots]
    results = []
    for k, seg in enumerate(segs):
        last = k == len(segs) - 1
        seg.ended_by_reset = k in reset_ends
        seg.rc = boot.rc if last else 0
        seg.timed_out = boot.timed_out and last
        seg.kvm_error = boot.kvm_error if last else None
        seg.qmp_error = boot.qmp_error if last else None
        seg.device_stats = boot.boot_stats.get(k)
        seg.wall = ((boot.wall if last else segs[k + 1].stamps[0]) -
                    (seg.stamps[0] if seg.stamps else 0.0))
        facts, reasons = analyse(seg, setup, expect)
        results.append((seg, facts, reasons))
    if len(segs) < setup.boots:
        run_reasons.append("the guest ran %d of %d boots%s" % (
            len(segs), setup.boots,
            "" if segs[-1].ended_by_reset else " (it did not reset)"))
    return results, run_reasons


def analyse(boot, setup, expect):
    """Collect facts from a boot and the list of failure reasons."""
    facts = read_log(boot, expect.log.allow)
    read_diagnostics(facts, parse_ktap(boot.lines))
    reasons = judge_exit(boot, setup)
    if facts.init_seen is None:
        reasons.append("guest /init never reported (kernel did not boot?)")
    reasons += facts.errors
    reasons += ["guest: %s" % e for e in facts.dmalab_errors]
    if facts.init_seen is not None and (setup.ioat_device or expect.binding.unbound):
        reasons += judge_binding(facts, expect.binding)
    # The exerciser's results count wherever it ran: scenario memcpy (it always
    # runs), or another that loads it (dsa with dmalab.dsa_run=exercise).
    if facts.init_seen is not None and (setup.scenario == "memcpy" or
                                        facts.exercise_started):
        reasons += judge_ktap(facts, expect)
    # A boot that ended in a machine reset stops wherever the reset hit it:
    # /init's end (and its interrupt report) never comes.
    if facts.init_seen is not None and not facts.done \
            and not boot.timed_out and not boot.ended_by_reset:
        reasons.append("guest /init did not finish")
    if facts.done:
        reasons += judge_irqs(facts, expect.log.irqs)
    reasons += judge_counters(facts, boot, setup, expect.counters)
    reasons += judge_probes(boot, expect.liveness)
    reasons += judge_lines(boot, expect.log.lines)
    reasons += judge_disk(boot, setup)
    return facts, reasons


def judge_exit(boot, setup):
    """How QEMU ended: timed out, KVM gave up, or a non-zero exit status."""
    if boot.timed_out:
        return ["timeout after %d s" % (setup.timeout * max(setup.boots, 1))]
    if getattr(boot, "kvm_error", None):
        return ["KVM could not run the guest: %s" % boot.kvm_error]
    if boot.rc != 0:
        tail = next((l for l in reversed(boot.lines) if l.strip()), "")
        return ["qemu exited with status %d: %s" % (boot.rc, tail)]
    return []


def judge_binding(facts, binding):
    """ioatdma bound the device with its id and channels, or refused it."""
    reasons = []
    if binding.unbound:
        for bdf, ven, dev in facts.bound:
            reasons.append("ioatdma bound %s, expected it to refuse the device" % bdf)
        if facts.channels is None:
            reasons.append("guest did not report DMA channels")
        elif facts.channels:
            reasons.append("expected no DMA channel, guest has %d" % facts.channels)
        return reasons
    if not facts.bound:
        reasons.append("ioatdma not bound")
    for bdf, ven, dev in facts.bound:
        if binding.device_id and "%s:%s" % (ven, dev) != binding.device_id:
            reasons.append("ioatdma bound %s with id %s:%s, expected %s"
                           % (bdf, ven, dev, binding.device_id))
    n = facts.channels
    if n is None:
        reasons.append("guest did not report DMA channels")
    elif binding.channels is not None and n != binding.channels:
        reasons.append("expected %d DMA channels, guest has %d" %
                       (binding.channels, n))
    return reasons


def judge_ktap(facts, expect):
    """The exerciser (wherever it ran): loaded, its KTAP results all ok and planned,
    the channels it could use, the copies it verified."""
    reasons = []
    ktap = facts.ktap
    if facts.exercise_rc not in (None, 0):
        reasons.append("insmod dmalab_exercise failed (rc=%d)" % facts.exercise_rc)
    if not ktap["found"]:
        return reasons + ["no KTAP output from dmalab_exercise"]
    reasons += judge_results(facts, expect.ktap.allow_skip)
    if ktap["plan"] is None:
        reasons.append("KTAP: no plan line")
    else:
        reasons += judge_plan(facts, expect.binding.channels)
    if ktap["dups"]:
        reasons.append("KTAP: duplicate results %s" % ",".join(map(str, ktap["dups"])))
    ops = facts.summary["ops"] if facts.summary else \
        sum(c["ops"] for c in facts.chan_stats)
    if expect.ktap.min_ops and ops < expect.ktap.min_ops:
        reasons.append("only %d verified copies, expected >= %d" %
                       (ops, expect.ktap.min_ops))
    return reasons


def judge_results(facts, allow_skip):
    """Every KTAP result ok; a skipped one only where allow_skip names it (it goes
    into facts.skipped)."""
    ktap = facts.ktap
    res = ktap["results"]
    bad = []
    skipped = []
    for i in sorted(res):
        ok, tname, directive = res[i]
        if ok and SKIP_RE.match(directive):
            # a test that did not run passes only where it may skip
            if any(re.fullmatch(a, tname) for a in allow_skip):
                facts.skipped.append("%d %s" % (i, tname))
            else:
                skipped.append("%d %s (%s)" % (i, tname, directive))
            continue
        if ok:
            continue
        # the first diagnostic about this test says what went wrong
        why = directive or next(
            (d[1:].strip() for d in ktap["diag"]
             if tname and re.search(r"\b%s\b" % re.escape(tname), d)
             and not CHAN_STAT_RE.match(d)), "")
        bad.append("%d %s%s" % (i, tname, (" (%s)" % why) if why else ""))
    reasons = []
    if bad:
        reasons.append("KTAP not ok: %s" % "; ".join(bad))
    if skipped:
        reasons.append("KTAP skipped (no --allow-skip for it): %s" % "; ".join(skipped))
    return reasons


def judge_plan(facts, channels):
    """The KTAP plan: the channels the exerciser got, every planned result there and
    none outside it."""
    plan = facts.ktap["plan"]
    res = facts.ktap["results"]
    reasons = []
    # the exerciser's header says how many channels it got;
    # older ones ran one test per channel
    got = facts.ex_channels
    if got is None:
        got = plan
        if plan == 1 and 1 in res and res[1][1] == "channels":
            # "not ok 1 channels # no DMA_MEMCPY channel"
            got = 0
    if channels is not None and got != channels:
        reasons.append("dmalab_exercise could use %d DMA channel(s), expected %d" %
                       (got, channels))
    missing = [i for i in range(1, plan + 1) if i not in res]
    if missing:
        reasons.append("KTAP: missing results for test(s) %s of 1..%d" % (
            ",".join(map(str, missing)), plan))
    extra = sorted(i for i in res if i < 1 or i > plan)
    if extra:
        reasons.append("KTAP: results outside the plan: %s" % ",".join(map(str, extra)))
    return reasons


def irq_matches(name, text):
    """name as a whole word of text: ioat-msi is not ioat-msix."""
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text)


def judge_irqs(facts, irqs):
    """--expect-irq: a named interrupt that fired (summed over CPUs)."""
    reasons = []
    for name in irqs:
        hits = [n for n, text in facts.irqs if irq_matches(name, text)]
        if not hits:
            reasons.append("no interrupt named %s in /proc/interrupts "
                           "(ioat lines: %s)" % (name, "; ".join(
                               "%d %s" % i for i in facts.irqs) or "none"))
        elif not sum(hits):
            reasons.append("interrupt %s never fired (%d line(s), all 0)" %
                           (name, len(hits)))
    return reasons


def judge_probes(boot, liveness):
    """QEMU's main loop kept answering QMP (--probe-qmp)."""
    if liveness.max_round_trip is None or boot.qmp_error:
        return []
    lat = boot.qmp_latencies
    if not lat:
        return ["QMP liveness: no probe was answered"]
    if max(lat) > liveness.max_round_trip:
        return ["QMP liveness: a round trip took %.1f s (limit %.1f s): "
                "QEMU's main loop was starved" % (max(lat), liveness.max_round_trip)]
    return []

DISK_RE = re.compile(r"DMALAB: disk (\S+) sha256=([0-9a-f]{64}) bytes=(\d+)")


def judge_disk(boot, setup):
    """--virtio-disk: the guest read the whole disk and its checksum matches."""
    if not setup.virtio_disk:
        return []
    for line in boot.lines:
        m = DISK_RE.search(line)
        if m:
            # a saved log (--judge-log) has no disk file: the same contents
            want = setup.disk_sha256 or \
                hashlib.sha256(disk_data(setup.virtio_disk)).hexdigest()
            if m.group(2) != want:
                return ["virtio disk read back with sha256 %s, expected %s" %
                        (m.group(2), want)]
            if int(m.group(3)) != setup.virtio_disk << 20:
                return ["virtio disk read %s bytes, expected %d" %
                        (m.group(3), setup.virtio_disk << 20)]
            return []
    return ["the guest reported no virtio disk checksum"]


def judge_lines(boot, lines):
    """--expect-line: each pattern matches at least one serial line."""
    text = [strip_ts(l) for l in boot.lines]
    return ["no serial line matches %r" % rx for rx in lines
            if not any(re.search(rx, l) for l in text)]


def judge_fault_logs(logs):
    """--same-fault-log: [(label, reasons)] when the boots' fault logs are
    empty or differ; prints the first boot's log."""
    first = logs[0] if logs else ""
    print("---- fault log (boot 1) ----")
    print(first.rstrip("\n") or "  (empty)")
    if not first:
        return [("fault log", ["boot 1 injected no fault"])]
    bad = [i for i, log in enumerate(logs[1:], 2) if log != first]
    if not bad:
        print("fault logs: %d boots, identical" % len(logs))
        return []
    i = bad[0]
    a, b = first.splitlines(), logs[i - 1].splitlines()
    line = next((n for n, (x, y) in enumerate(zip(a, b), 1) if x != y),
                min(len(a), len(b)) + 1)
    return [("fault log", ["boot(s) %s injected differently from boot 1; "
                           "boot %d first differs at line %d: %r vs %r" % (
                               ",".join(map(str, bad)), i, line,
                               a[line - 1] if line <= len(a) else "(end)",
                               b[line - 1] if line <= len(b) else "(end)")])]
