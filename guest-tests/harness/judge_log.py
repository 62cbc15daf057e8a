# SPDX-License-Identifier: GPL-2.0-or-later
"""Reading a boot's serial log into Facts: the kernel's problems, ioatdma's errors, /init's
"DMALAB:" lines and the exerciser's KTAP diagnostics and figures (judge.py judges them)."""

import re
from dataclasses import dataclass, field
from typing import Optional

from harness.qemu import LINUX_RE
from harness.ktap import parse_bench, strip_ts


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
# (init.sh's dmalab.iperf workload: "DMALAB: iperf nic=... size=... rate=...", its
# dmalab.xsk workload: "DMALAB: xsk receiver=... size=... rate=...", and dmatest's summaries
# with dmalab.dsa_run=dmatest-ioat: "DMALAB: dmatest dev=... chan=... buf=... tests=...")
INIT_BENCH = {"iperf": "bench-iperf", "xsk": "bench-xsk", "dmatest": "bench-dmatest"}
INIT_BENCH_RE = re.compile(r"^(\w+)((?:\s+[\w/.-]+=\S+)+)\s*$")


def parse_init_bench(msg):
    """(tag, {key: value}) of one of /init's figure lines (the text after "DMALAB: "),
    else None."""
    m = INIT_BENCH_RE.match(msg)
    if not m or m.group(1) not in INIT_BENCH:
        return None
    return INIT_BENCH[m.group(1)], dict(kv.split("=", 1) for kv in m.group(2).split())


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
    exercise_started: bool = False      # /init loaded the exerciser (any scenario)
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
    if msg.startswith("exercise start "):
        facts.exercise_started = True
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
