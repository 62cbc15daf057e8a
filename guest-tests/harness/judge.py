# SPDX-License-Identifier: GPL-2.0-or-later
"""Judging a run: the serial log (ioatdma's binding, KTAP results, kernel
problems, expected lines and interrupts) and the devices' counters against
what the guest did."""

import hashlib
import re

from harness.qemu import (
    Boot,
    COUNTERS,
    LINUX_RE,
    disk_data,
    ioat_stats,
    vtd_stats,
    want_counters)
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


# dmalab-vtd's counters are named by the device itself (its "counter-names"
# property, docs/vtd.rst), never copied here.
# --expect-vtd: NAME OP VALUE, where VALUE is a number or ops[*N|/N] (the
# copies the guest verified).
VTD_EXPECT_RE = re.compile(
    r"^([a-z-]+)\s*(>=|<=|==|>|<)\s*(\d+|ops(?:\s*([*/])\s*(\d+))?)$")


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


def judge_run(boot, args):
    """Judges one QEMU run: returns ([(boot, facts, reasons)] per boot,
    reasons about the run as a whole)."""
    if args.boots <= 1 and not args.reset_on:
        facts, reasons = analyse(boot, args)
        return [(boot, facts, reasons)], []
    segs = split_boots(boot)
    # a saved log tells nothing about resets: all its boots ended in one
    reset_ends = boot.reset_ends if boot.reset_ends is not None else \
        set(range(len(segs)))
    run_reasons = []
    if len(segs) > args.boots:
        # the runner quit QEMU as the boot after the last one began
        segs = segs[:args.boots]
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
        facts, reasons = analyse(seg, args)
        results.append((seg, facts, reasons))
    if len(segs) < args.boots:
        run_reasons.append("the guest ran %d of %d boots%s" % (
            len(segs), args.boots,
            "" if segs[-1].ended_by_reset else " (it did not reset)"))
    return results, run_reasons


def analyse(boot, args):
    """Collect facts from a boot and the list of failure reasons."""
    facts = {"kernel": None, "bound": [], "channels": None,
             "channel_names": [], "chan_stats": [], "summary": None,
             "init_seen": None, "init_uptime": None, "done": False,
             "exercise_rc": None, "errors": [], "dmalab_errors": [],
             "cpu": None, "allowed": [], "irqs": [], "bench": [],
             "ex_mode": None, "ex_channels": None, "skipped": []}
    reasons = []
    lines = [strip_ts(l) for l in boot.lines]
    allow = [re.compile(a) for a in args.allow]

    for idx, line in enumerate(lines):
        m = LINUX_RE.search(line)
        if m and facts["kernel"] is None:
            facts["kernel"] = m.group(1)
        problems = ["%s: %s" % (what, line.strip())
                    for what, rx in KERNEL_PROBLEMS if rx.search(line)]
        if IOAT_LINE_RE.search(line) and IOAT_ERROR_RE.search(line) \
                and not IOAT_ERROR_IGNORE_RE.search(line):
            problems.append("ioatdma error: %s" % line.strip())
        if problems and any(a.search(line) for a in allow):
            facts["allowed"].append(line.strip())   # expected (--allow)
        else:
            facts["errors"] += problems
        m = DMALAB_RE.search(line)
        if not m:
            continue
        msg = m.group(1)
        if msg.startswith("init ") and facts["init_seen"] is None:
            facts["init_seen"] = boot.stamps[idx]
            um = re.search(r"uptime=([\d.]+)", msg)
            if um:
                facts["init_uptime"] = float(um.group(1))
        elif msg.startswith("error"):
            facts["dmalab_errors"].append(msg)
        elif msg == "done":
            facts["done"] = True
        bm = BOUND_RE.search(msg)
        if bm:
            facts["bound"].append(bm.groups())
        cm = CHANNELS_RE.search(msg)
        if cm:
            facts["channels"] = int(cm.group(1))
            facts["channel_names"] = cm.group(2).split()
        em = re.search(r"exercise end rc=(\d+)", msg)
        if em:
            facts["exercise_rc"] = int(em.group(1))
        im = IRQ_RE.match(msg)
        if im:
            facts["irqs"].append((int(im.group(1)), im.group(2).strip()))

    ktap = parse_ktap(boot.lines)
    facts["ktap"] = ktap
    for d in ktap["diag"]:
        m = CHAN_STAT_RE.match(d)
        if m:
            facts["chan_stats"].append({
                "name": m.group(1), "ops": int(m.group(2)),
                "bytes": int(m.group(3)), "ns": int(m.group(4)),
                "wall_ns": int(m.group(5)), "mbps": float(m.group(6)),
                "failures": int(m.group(7))})
        m = SUMMARY_RE.match(d)
        if m:
            facts["summary"] = {
                "channels": int(m.group(1)), "ops": int(m.group(2)),
                "bytes": int(m.group(3)), "ns": int(m.group(4)),
                "mbps": float(m.group(5)), "failures": int(m.group(6))}
        m = CPU_RE.match(d)
        if m:
            facts["cpu"] = {"ops": int(m.group(1)), "bytes": int(m.group(2)),
                            "ns": int(m.group(3)), "mbps": float(m.group(4))}
        m = HEADER_RE.match(d)
        if m and facts["ex_channels"] is None:
            facts["ex_mode"] = m.group(1)
            facts["ex_channels"] = int(m.group(2))
        m = parse_bench(d)
        if m:
            facts["bench"].append(m)

    # ---- verdict -------------------------------------------------------
    if boot.timed_out:
        reasons.append("timeout after %d s" % (args.timeout *
                                                max(args.boots, 1)))
    elif getattr(boot, "kvm_error", None):
        reasons.append("KVM could not run the guest: %s" % boot.kvm_error)
    elif boot.rc != 0:
        tail = next((l for l in reversed(boot.lines) if l.strip()), "")
        reasons.append("qemu exited with status %d: %s" % (boot.rc, tail))
    if facts["init_seen"] is None:
        reasons.append("guest /init never reported (kernel did not boot?)")
    for e in facts["errors"]:
        reasons.append(e)
    for e in facts["dmalab_errors"]:
        reasons.append("guest: %s" % e)
    unbound = getattr(args, "expect_unbound", False)
    if facts["init_seen"] is not None and unbound:
        for bdf, ven, dev in facts["bound"]:
            reasons.append("ioatdma bound %s, expected it to refuse the device" % bdf)
        if facts["channels"] is None:
            reasons.append("guest did not report DMA channels")
        elif facts["channels"]:
            reasons.append("expected no DMA channel, guest has %d" % facts["channels"])
    elif facts["init_seen"] is not None:
        if not facts["bound"]:
            reasons.append("ioatdma not bound")
        for bdf, ven, dev in facts["bound"]:
            if args.expect_id and "%s:%s" % (ven, dev) != args.expect_id:
                reasons.append("ioatdma bound %s with id %s:%s, expected %s"
                               % (bdf, ven, dev, args.expect_id))
        n = facts["channels"]
        if n is None:
            reasons.append("guest did not report DMA channels")
        elif args.expect_channels is not None and n != args.expect_channels:
            reasons.append("expected %d DMA channels, guest has %d" %
                           (args.expect_channels, n))
    if args.scenario == "memcpy" and facts["init_seen"] is not None:
        if facts["exercise_rc"] not in (None, 0):
            reasons.append("insmod dmalab_exercise failed (rc=%d)" %
                           facts["exercise_rc"])
        if not ktap["found"]:
            reasons.append("no KTAP output from dmalab_exercise")
        else:
            plan = ktap["plan"]
            res = ktap["results"]
            bad = []
            skipped = []
            for i in sorted(res):
                ok, tname, directive = res[i]
                if ok and SKIP_RE.match(directive):
                    # a test that did not run passes only where it may skip
                    if any(re.fullmatch(a, tname) for a in args.allow_skip):
                        facts["skipped"].append("%d %s" % (i, tname))
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
                bad.append("%d %s%s" % (i, tname, (" (%s)" % why) if why
                                        else ""))
            if bad:
                reasons.append("KTAP not ok: %s" % "; ".join(bad))
            if skipped:
                reasons.append("KTAP skipped (no --allow-skip for it): %s" %
                               "; ".join(skipped))
            if plan is None:
                reasons.append("KTAP: no plan line")
            else:
                # the exerciser's header says how many channels it got;
                # older ones ran one test per channel
                got = facts["ex_channels"]
                if got is None:
                    got = plan
                    if plan == 1 and 1 in res and res[1][1] == "channels":
                        # "not ok 1 channels # no DMA_MEMCPY channel"
                        got = 0
                if args.expect_channels is not None and \
                        got != args.expect_channels:
                    reasons.append("dmalab_exercise could use %d DMA "
                                   "channel(s), expected %d" %
                                   (got, args.expect_channels))
                missing = [i for i in range(1, plan + 1) if i not in res]
                if missing:
                    reasons.append("KTAP: missing results for test(s) %s of "
                                   "1..%d" % (",".join(map(str, missing)),
                                              plan))
                extra = sorted(i for i in res if i < 1 or i > plan)
                if extra:
                    reasons.append("KTAP: results outside the plan: %s" %
                                   ",".join(map(str, extra)))
            if ktap["dups"]:
                reasons.append("KTAP: duplicate results %s" %
                               ",".join(map(str, ktap["dups"])))
            ops = facts["summary"]["ops"] if facts["summary"] else \
                sum(c["ops"] for c in facts["chan_stats"])
            if args.min_ops and ops < args.min_ops:
                reasons.append("only %d verified copies, expected >= %d" %
                               (ops, args.min_ops))
    # A boot that ended in a machine reset stops wherever the reset hit it:
    # /init's end (and its interrupt report) never comes.
    if facts["init_seen"] is not None and not facts["done"] \
            and not boot.timed_out and not boot.ended_by_reset:
        reasons.append("guest /init did not finish")
    if facts["done"]:
        reasons += judge_irqs(facts, args)
    reasons += judge_counters(facts, boot, args)
    reasons += judge_probes(boot, args)
    reasons += judge_lines(boot, args)
    reasons += judge_disk(boot, args)
    return facts, reasons


def irq_matches(name, text):
    """name as a whole word of text: ioat-msi is not ioat-msix."""
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text)


def judge_irqs(facts, args):
    """--expect-irq: a named interrupt that fired (summed over CPUs)."""
    reasons = []
    for name in args.expect_irq:
        hits = [n for n, text in facts["irqs"] if irq_matches(name, text)]
        if not hits:
            reasons.append("no interrupt named %s in /proc/interrupts "
                           "(ioat lines: %s)" % (name, "; ".join(
                               "%d %s" % i for i in facts["irqs"]) or "none"))
        elif not sum(hits):
            reasons.append("interrupt %s never fired (%d line(s), all 0)" %
                           (name, len(hits)))
    return reasons


def parse_errors_expectation(text):
    """--expect-device-errors: "N" (exactly) or "N+" (at least);
    returns (N, at_least)."""
    m = re.match(r"^\s*(\d+)\s*(\+?)\s*$", text or "")
    if not m:
        raise ValueError("expected N or N+, got %r" % text)
    return int(m.group(1)), bool(m.group(2))


def judge_probes(boot, args):
    """QEMU's main loop kept answering QMP (--probe-qmp)."""
    if args.probe_qmp is None or boot.qmp_error:
        return []
    lat = boot.qmp_latencies
    if not lat:
        return ["QMP liveness: no probe was answered"]
    if max(lat) > args.probe_qmp:
        return ["QMP liveness: a round trip took %.1f s (limit %.1f s): "
                "QEMU's main loop was starved" % (max(lat), args.probe_qmp)]
    return []


def counter_expectations(args):
    """The options that name a device counter explicitly."""
    out = ["--expect-vtd %s" % e for e in args.expect_vtd]
    if args.min_device_descriptors:
        out.append("--min-device-descriptors %d" % args.min_device_descriptors)
    if args.min_device_bytes:
        out.append("--min-device-bytes %d" % args.min_device_bytes)
    if parse_errors_expectation(args.expect_device_errors) != (0, False):
        out.append("--expect-device-errors %s" % args.expect_device_errors)
    return out


def judge_counters(facts, boot, args):
    """Cross-check dmalab-ioat's own counters (QMP) with the guest's view:
    every copy the guest verified went through the device."""
    if boot.qmp_error:
        return ["QMP: %s" % boot.qmp_error]
    if boot.device_stats is None:
        named = counter_expectations(args)
        if args.judge_log or not want_counters(args):
            # A saved log has no counters; nor has a run without a dmalab
            # device or with --no-counters.  Only what was asked for fails.
            return ["the device counters were not read (%s): cannot check "
                    "%s" % ("a saved log" if args.judge_log else
                            "--no-counters" if args.no_counters else
                            "no dmalab device", ", ".join(named))] \
                if named else []
        # Every boot of a live run has them: read at its power-off, at its
        # --reset-on marker, or at its guest reset (held back for that).
        return ["QMP: the device counters were wanted but not read (QEMU "
                "ended before the runner could ask)%s" % (
                    ": cannot check %s" % ", ".join(named) if named else "")]
    reasons = judge_vtd(facts, boot, args)
    if not ioat_stats(boot):
        return reasons + ["QMP: no dmalab-ioat device found in the QOM tree"]
    total = {c: sum(d[c] for d in ioat_stats(boot)) for c in COUNTERS}
    if total["descriptors"] < args.min_device_descriptors:
        reasons.append("dmalab-ioat completed %d descriptors, expected at "
                       "least %d" % (total["descriptors"],
                                     args.min_device_descriptors))
    if total["bytes"] < args.min_device_bytes:
        reasons.append("dmalab-ioat moved %d bytes, expected at least %d" % (
            total["bytes"], args.min_device_bytes))
    want, at_least = parse_errors_expectation(args.expect_device_errors)
    if at_least and total["errors"] < want:
        reasons.append("dmalab-ioat counted %d channel error(s), expected "
                       "at least %d" % (total["errors"], want))
    elif not at_least and total["errors"] != want:
        reasons.append("dmalab-ioat counted %d channel error(s)%s" % (
            total["errors"], (", expected %d" % want) if want else ""))
    s = facts["summary"]
    if s:
        if total["bytes"] < s["bytes"]:
            reasons.append("dmalab-ioat copied %d bytes, fewer than the %d "
                           "the guest verified" % (total["bytes"], s["bytes"]))
        if total["descriptors"] < s["ops"]:
            reasons.append("dmalab-ioat completed %d descriptors, fewer than "
                           "the guest's %d copies" % (total["descriptors"],
                                                       s["ops"]))
        if s["ops"] and not total["interrupts"]:
            reasons.append("dmalab-ioat sent no interrupt")
    return reasons


def judge_vtd(facts, boot, args):
    """--expect-vtd: conditions on dmalab-vtd's counters."""
    if not args.expect_vtd:
        return []
    units = vtd_stats(boot)
    if not units:
        return ["QMP: no dmalab-vtd found in the QOM tree"]
    ops = facts["summary"]["ops"] if facts["summary"] else 0
    reasons = []
    for text in args.expect_vtd:
        name, op, value, scale_op, scale = VTD_EXPECT_RE.match(text).groups()
        if value.startswith("ops"):
            want = ops
            if scale_op == "*":
                want = ops * int(scale)
            elif scale_op == "/":
                want = ops // int(scale)
        else:
            want = int(value)
        if any(name not in u["counter-names"] for u in units):
            reasons.append("dmalab-vtd has no counter %r (%s); it has: %s" % (
                name, text, " ".join(units[0]["counter-names"])))
            continue
        have = sum(u[name] for u in units)
        ok = {">=": have >= want, "<=": have <= want, "==": have == want,
              ">": have > want, "<": have < want}[op]
        if not ok:
            reasons.append("dmalab-vtd: %s is %d, expected %s %d (%s)" % (
                name, have, op, want, text))
    return reasons


DISK_RE = re.compile(r"DMALAB: disk (\S+) sha256=([0-9a-f]{64}) bytes=(\d+)")


def judge_disk(boot, args):
    """--virtio-disk: the guest read the whole disk and its checksum matches."""
    if not args.virtio_disk:
        return []
    for line in boot.lines:
        m = DISK_RE.search(line)
        if m:
            # a saved log (--judge-log) has no disk file: the same contents
            want = args.disk[1] if getattr(args, "disk", None) else \
                hashlib.sha256(disk_data(args.virtio_disk)).hexdigest()
            if m.group(2) != want:
                return ["virtio disk read back with sha256 %s, expected %s" %
                        (m.group(2), want)]
            if int(m.group(3)) != args.virtio_disk << 20:
                return ["virtio disk read %s bytes, expected %d" %
                        (m.group(3), args.virtio_disk << 20)]
            return []
    return ["the guest reported no virtio disk checksum"]


def judge_lines(boot, args):
    """--expect-line: each pattern matches at least one serial line."""
    lines = [strip_ts(l) for l in boot.lines]
    return ["no serial line matches %r" % rx for rx in args.expect_line
            if not any(re.search(rx, l) for l in lines)]


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

