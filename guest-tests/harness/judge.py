# SPDX-License-Identifier: GPL-2.0-or-later
"""Judging a run: the serial log (ioatdma's binding, KTAP results, kernel
problems, expected lines and interrupts) and the devices' counters against
what the guest did."""

import hashlib
import re
from dataclasses import dataclass, field
from typing import Optional

from harness.qemu import (
    Boot,
    COUNTERS,
    LINUX_RE,
    disk_data,
    ioat_stats,
    vtd_stats)
from harness.expect import PER_REQUESTER
from harness.ktap import SKIP_RE, parse_bench, parse_ktap, strip_ts


# Kernel trouble anywhere in the log fails the run.
KERNEL_PROBLEMS = [
    ("kernel oops", re.compile(r"\bOops\b")),
    ("kernel BUG", re.compile(r"\bBUG:")),
    ("kernel WARNING", re.compile(r"\bWARNING:")),
    ("kernel call trace", re.compile(r"Call Trace:")),
    ("kernel panic", re.compile(r"Kernel panic")),
    ("general protection fault", re.compile(r"general protection fault")),
    ("IOMMU fault", re.compile(r"DMAR: \[DMA (Read|Write)|DMAR: DRHD: handling fault")),
    # An interrupt the unit blocked: a scenario that expects one allows its line by
    # requester and reason (the "DRHD: handling fault" line before it says nothing of which)
    ("IOMMU interrupt-remapping fault", re.compile(r"DMAR: \[INTR-REMAP\]")),
    # Linux's queued-invalidation errors (drivers/iommu/intel/dmar.c: qi_dump_fault's
    # "VT-d detected ..." and qi_check_fault's "... cleared" lines, 5.15 to 6.12; "invalid
    # descriptor" before). Linux carries on after each (an IQE's descriptor is skipped,
    # an ITE's batch submitted again), so the counters alone may never show one
    ("IOMMU invalidation queue error", re.compile(
        r"DMAR: (VT-d detected (invalid descriptor|Invalidation (Queue|Time-out|Completion) "
        r"Error)|Invalidation (Queue|Time-out|Completion) Error \((IQE|ITE|ICE)\) cleared)")),
    # A parameter that a module loaded with it does not have (init.sh's insmod passes the
    # command line's MODULE.PARAM words): Linux warns and loads it with the default
    ("unknown module parameter", re.compile(r": unknown parameter '[^']*' ignored")),
    ("soft lockup", re.compile(r"soft lockup|rcu_sched self-detected stall|"
                               r"rcu: INFO: rcu_\w+ (self-)?detected stall")),
    ("hung task", re.compile(r"blocked for more than \d+ seconds")),
]


# Error lines of the ioatdma driver (its messages carry the driver name
# as prefix: "ioatdma 0000:00:03.0: ...").
IOAT_LINE_RE = re.compile(r"\bioatdma\b")


IOAT_ERROR_RE = re.compile(
    r"fail|error|Err\(|timed out|disabling|halted|no usable|cannot|"
    r"unable|invalid|exceeds", re.IGNORECASE)


IOAT_ERROR_IGNORE_RE = re.compile(r"\bDCA\b")


DMALAB_RE = re.compile(r"DMALAB: (.*)$")


BOUND_RE = re.compile(r"ioatdma bound (\S+) vendor=(\S+) device=(\S+)")


CHANNELS_RE = re.compile(r"dma channels=(\d+) \(([^)]*)\)")


FIRMWARE_RE = re.compile(r"SeaBIOS \(version")


CHAN_STAT_RE = re.compile(
    r"^# dmalab_exercise: (\S+) ops=(\d+) bytes=(\d+) ns=(\d+) "
    r"wall_ns=(\d+) MB/s=([\d.]+) failures=(\d+)")


SUMMARY_RE = re.compile(
    r"^# dmalab_exercise: summary channels=(\d+) ops=(\d+) bytes=(\d+) "
    r"ns=(\d+) MB/s=([\d.]+) failures=(\d+)")


CPU_RE = re.compile(
    r"^# dmalab_exercise: cpu_memcpy ops=(\d+) bytes=(\d+) ns=(\d+) "
    r"MB/s=([\d.]+)")


# "# dmalab_exercise: [mode=M ]iterations=... channels=N": the channels the
# exerciser could get
HEADER_RE = re.compile(
    r"^# dmalab_exercise: (?:mode=(\S+) )?iterations=\d+ "
    r".*\bchannels=(\d+)\s*$")


# init.sh: "DMALAB: irq <count over all CPUs> <rest of its /proc/interrupts
# line>"
IRQ_RE = re.compile(r"^irq (\d+)\s*(.*)$")


# /init's own figures, one line per run: "DMALAB: WORD key=value ..." becomes a bench
# row of the tag INIT_BENCH[WORD], as the exerciser's "# bench-..." lines do
# (init.sh's dmalab.iperf workload: "DMALAB: iperf nic=... size=... rate=...", and
# its dmalab.xsk workload: "DMALAB: xsk receiver=... size=... rate=...")
INIT_BENCH = {"iperf": "bench-iperf", "xsk": "bench-xsk"}
INIT_BENCH_RE = re.compile(r"^(\w+)((?:\s+[\w/.-]+=\S+)+)\s*$")


def parse_init_bench(msg):
    """(tag, {key: value}) of one of /init's figure lines (the text after "DMALAB: "),
    else None."""
    m = INIT_BENCH_RE.match(msg)
    if not m or m.group(1) not in INIT_BENCH:
        return None
    return INIT_BENCH[m.group(1)], dict(kv.split("=", 1) for kv in m.group(2).split())


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
    contents (None: computed from disk_data)."""
    scenario: str = "memcpy"
    boots: int = 1
    reset_on: Optional[str] = None
    timeout: float = 300
    counters_unread: Optional[str] = None
    virtio_disk: int = 0
    disk_sha256: Optional[str] = None


@dataclass
class Facts:
    """What one boot's serial log showed."""
    kernel: Optional[str] = None        # the first "Linux version"
    bound: list = field(default_factory=list)   # (bdf, vendor, device) ioatdma bound
    channels: Optional[int] = None      # DMA channels /init found, and their names
    channel_names: list = field(default_factory=list)
    chan_stats: list = field(default_factory=list)  # the exerciser's figures per channel
    summary: Optional[dict] = None      # ... over all channels
    cpu: Optional[dict] = None          # ... of the guest CPU's memcpy
    init_seen: Optional[float] = None   # host seconds when /init reported
    init_uptime: Optional[float] = None  # the guest's uptime then
    done: bool = False                  # /init finished
    exercise_rc: Optional[int] = None   # insmod's status
    errors: list = field(default_factory=list)          # kernel problems, ioatdma errors
    dmalab_errors: list = field(default_factory=list)   # /init's "DMALAB: error" lines
    allowed: list = field(default_factory=list)         # problems expected (allow)
    irqs: list = field(default_factory=list)            # (count, /proc/interrupts text)
    bench: list = field(default_factory=list)           # (tag, {key: value})
    ex_mode: Optional[str] = None       # the exerciser's header: mode and channels
    ex_channels: Optional[int] = None
    skipped: list = field(default_factory=list)         # KTAP skips allowed
    ktap: dict = field(default_factory=dict)            # parse_ktap()


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
    if facts.init_seen is not None:
        reasons += judge_binding(facts, expect.binding)
    if setup.scenario == "memcpy" and facts.init_seen is not None:
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


def read_log(boot, allow):
    """The facts of the serial log's lines: the kernel, its problems (those on a line
    matching an allow pattern kept apart), and what /init reported."""
    facts = Facts()
    allow = [re.compile(a) for a in allow]
    for idx, line in enumerate(strip_ts(l) for l in boot.lines):
        m = LINUX_RE.search(line)
        if m and facts.kernel is None:
            facts.kernel = m.group(1)
        problems = ["%s: %s" % (what, line.strip())
                    for what, rx in KERNEL_PROBLEMS if rx.search(line)]
        if IOAT_LINE_RE.search(line) and IOAT_ERROR_RE.search(line) \
                and not IOAT_ERROR_IGNORE_RE.search(line):
            problems.append("ioatdma error: %s" % line.strip())
        if problems and any(a.search(line) for a in allow):
            facts.allowed.append(line.strip())   # expected (--allow)
        else:
            facts.errors += problems
        m = DMALAB_RE.search(line)
        if m:
            read_dmalab(facts, m.group(1), boot.stamps[idx])
    return facts


def read_dmalab(facts, msg, stamp):
    """One of /init's "DMALAB: ..." lines."""
    if msg.startswith("init ") and facts.init_seen is None:
        facts.init_seen = stamp
        um = re.search(r"uptime=([\d.]+)", msg)
        if um:
            facts.init_uptime = float(um.group(1))
    elif msg.startswith("error"):
        facts.dmalab_errors.append(msg)
    elif msg == "done":
        facts.done = True
    bm = BOUND_RE.search(msg)
    if bm:
        facts.bound.append(bm.groups())
    cm = CHANNELS_RE.search(msg)
    if cm:
        facts.channels = int(cm.group(1))
        facts.channel_names = cm.group(2).split()
    em = re.search(r"exercise end rc=(\d+)", msg)
    if em:
        facts.exercise_rc = int(em.group(1))
    im = IRQ_RE.match(msg)
    if im:
        facts.irqs.append((int(im.group(1)), im.group(2).strip()))
    fig = parse_init_bench(msg)
    if fig:
        facts.bench.append(fig)


def read_diagnostics(facts, ktap):
    """The exerciser's KTAP document and the figures in its diagnostics."""
    facts.ktap = ktap
    for d in ktap["diag"]:
        m = CHAN_STAT_RE.match(d)
        if m:
            facts.chan_stats.append({
                "name": m.group(1), "ops": int(m.group(2)),
                "bytes": int(m.group(3)), "ns": int(m.group(4)),
                "wall_ns": int(m.group(5)), "mbps": float(m.group(6)),
                "failures": int(m.group(7))})
        m = SUMMARY_RE.match(d)
        if m:
            facts.summary = {
                "channels": int(m.group(1)), "ops": int(m.group(2)),
                "bytes": int(m.group(3)), "ns": int(m.group(4)),
                "mbps": float(m.group(5)), "failures": int(m.group(6))}
        m = CPU_RE.match(d)
        if m:
            facts.cpu = {"ops": int(m.group(1)), "bytes": int(m.group(2)),
                         "ns": int(m.group(3)), "mbps": float(m.group(4))}
        m = HEADER_RE.match(d)
        if m and facts.ex_channels is None:
            facts.ex_mode = m.group(1)
            facts.ex_channels = int(m.group(2))
        m = parse_bench(d)
        if m:
            facts.bench.append(m)


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
    """The exerciser (scenario memcpy): loaded, its KTAP results all ok and planned,
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
    if not ioat_stats(boot):
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

