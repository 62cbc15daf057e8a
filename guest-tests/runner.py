#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the dmalab guest under QEMU (TCG) and judge its serial log.

Exit status 0 when every boot passed, 1 otherwise; the last line printed
is "guest <name>: PASS" or "guest <name>: FAIL: <reason>".  With --boots N
one QEMU run holds N boots (the guest reboots, or the runner resets it at
a marker line); the serial log is split into one segment per boot and
each is judged on its own.
"""

import argparse
import atexit
import hashlib
import json
import os
import random
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accel  # noqa: E402

DEFAULT_FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/share/qemu"]
DEFAULT_DEVICES = ["dmalab-ioat"]

TS_RE = re.compile(r"^\[\s*\d+\.\d+\]\s?")

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
LINUX_RE = re.compile(r"Linux version (\S+)")
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
# "# bench[-what] key=value ...": benchmark figures, printed as tables
BENCH_RE = re.compile(r"^# (bench[\w-]*)((?:\s+[\w/.-]+=\S+)+)\s*$")
# init.sh: "DMALAB: irq <count over all CPUs> <rest of its /proc/interrupts
# line>"
IRQ_RE = re.compile(r"^irq (\d+)\s*(.*)$")
RESULT_RE = re.compile(r"^(not )?ok (\d+)(?: (?:- )?([^#]*?))?\s*(?:#\s*(.*))?$")
# "ok N name # SKIP reason": the test did not run (KTAP's SKIP directive;
# any case, "skipped" too)
SKIP_RE = re.compile(r"SKIP", re.IGNORECASE)
PLAN_RE = re.compile(r"^1\.\.(\d+)\s*$")


class Boot:
    """Result of one QEMU run, or one boot (segment) of it."""

    def __init__(self):
        self.lines = []         # serial log lines, \r stripped
        self.stamps = []        # host seconds since start, per line
        self.wall = 0.0
        self.rc = None
        self.timed_out = False
        self.cmd = []
        self.device_stats = None  # per dmalab-ioat: QOM counters read over QMP
        self.qmp_error = None
        # A whole run: kernels started (banners seen), machine resets
        # (QMP RESET events), the boots (0-based) a reset ended (None:
        # unknown, as for a saved log), and the counters read during each
        # boot (boot index -> device_stats).  Firmware may reset the machine
        # once more on its own (SeaBIOS does after a warm reset), so boots
        # are counted by kernel banners, not by resets.
        self.started = 0
        self.resets = 0
        self.reset_ends = set()
        self.boot_stats = {}
        self.events = []        # QMP events: (seconds, lines, name, data)
        self.qmp_latencies = []  # seconds per query-status probe (--probe-qmp)
        # A segment: the boot ended in a machine reset (not a power-off).
        self.ended_by_reset = False
        self.accel = None       # (accelerator, why it was chosen)


COUNTERS = ("descriptors", "bytes", "errors", "interrupts")
# dmalab-vtd's counters are named by the device itself (its "counter-names"
# property, docs/vtd.rst), never copied here.
# --expect-vtd: NAME OP VALUE, where VALUE is a number or ops[*N|/N] (the
# copies the guest verified).
VTD_EXPECT_RE = re.compile(
    r"^([a-z-]+)\s*(>=|<=|==|>|<)\s*(\d+|ops(?:\s*([*/])\s*(\d+))?)$")


class QmpError(Exception):
    pass


class Qmp:
    """Just enough of a QMP client: line-delimited JSON over a unix socket."""

    def __init__(self, path, proc, wait=15.0):
        end = time.monotonic() + wait
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError as e:
                self.sock.close()
                if proc.poll() is not None or time.monotonic() > end:
                    raise QmpError("cannot connect to QMP: %s" % e)
                time.sleep(0.05)
        self.buf = b""
        self.events = []
        self.sock.settimeout(10)
        self._message()  # greeting
        self.command("qmp_capabilities")

    def fileno(self):
        return self.sock.fileno()

    def _message(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QmpError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **arguments):
        msg = {"execute": name}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._message()
            if "event" in reply:
                self.events.append(reply)
            elif "error" in reply:
                raise QmpError("%s: %s" % (name, reply["error"].get("desc")))
            elif "return" in reply:
                return reply["return"]

    def pending_events(self):
        """Events that have arrived, without blocking for more."""
        self.sock.setblocking(False)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self.buf += chunk
        except BlockingIOError:
            pass
        finally:
            self.sock.settimeout(10)
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" in msg:
                self.events.append(msg)
        out, self.events = self.events, []
        return out

    def close(self):
        self.sock.close()


def read_device_counters(qmp):
    """QOM counters of every dmalab-ioat and dmalab-vtd in the machine."""
    found = []
    kinds = {"child<dmalab-ioat>": "dmalab-ioat",
             "child<dmalab-vtd>": "dmalab-vtd"}
    for parent in ("/machine/peripheral", "/machine/peripheral-anon"):
        for child in qmp.command("qom-list", path=parent):
            kind = kinds.get(child.get("type"))
            if kind:
                path = "%s/%s" % (parent, child["name"])
                stats = {"path": path, "type": kind}
                names = COUNTERS
                if kind == "dmalab-vtd":
                    names = qmp.command("qom-get", path=path,
                                        property="counter-names").split(",")
                    stats["counter-names"] = names
                for c in names:
                    stats[c] = qmp.command("qom-get", path=path, property=c)
                stats["fault-log"] = qmp.command("qom-get", path=path,
                                                 property="fault-log")
                found.append(stats)
    return found


def ioat_stats(boot):
    return [d for d in boot.device_stats or [] if d.get("type", "dmalab-ioat") == "dmalab-ioat"]


def vtd_stats(boot):
    return [d for d in boot.device_stats or [] if d.get("type") == "dmalab-vtd"]


def disk_data(mib):
    """The deterministic contents of the --virtio-disk of `mib` MiB."""
    return random.Random(0xd15c).randbytes(mib << 20)


def disk_image(mib):
    """A read-only raw disk of `mib` MiB with deterministic contents: (path,
    sha256 hex). Written once per run into a temporary file."""
    path = os.path.join(tempfile.gettempdir(), "dmalab-disk-%d-%d.img" %
                        (os.getpid(), mib))
    data = disk_data(mib)
    with open(path, "wb") as f:
        f.write(data)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path, hashlib.sha256(data).hexdigest()


def build_cmdline(args, seed=None):
    append = ["console=ttyS0", "panic=-1", "printk.time=0",
              "dmalab.scenario=%s" % args.scenario]
    if args.iterations is not None:
        append.append("dmalab.iterations=%d" % args.iterations)
    if args.max_len is not None:
        append.append("dmalab.max_len=%d" % args.max_len)
    if seed is not None:
        append.append("dmalab.seed=%d" % seed)
    for extra in args.append:
        append.extend(extra.split())

    cmd = [args.qemu, "-M", args.machine, "-accel", args.accel_used, "-cpu", "max",
           "-m", args.memory, "-smp", str(args.smp), "-nographic",
           "-serial", "stdio", "-monitor", "none", "-nic", "none"]
    if args.boots <= 1 and not args.reset_on:
        # a guest reset (or panic) ends QEMU; with -no-reboot even QMP's
        # system_reset would only shut the machine down
        cmd.append("-no-reboot")
    for d in (args.firmware_dir or DEFAULT_FIRMWARE_DIRS):
        cmd += ["-L", d]
    cmd += ["-kernel", args.kernel, "-initrd", args.initrd,
            "-append", " ".join(append)]
    race = getattr(args, "race_files", None)
    for dev in (args.device or DEFAULT_DEVICES):
        if dev and dev != "none":
            if race and dev.split(",")[0] == "dmalab-ioat":
                dev += ",race-table=" + race[0]
            cmd += ["-device", dev]
    if race:
        cmd += ["-plugin", "%s,table=%s,log=%s" % (args.race_plugin, race[0], race[1])]
        cmd[cmd.index("-append") + 1] += " dmalab.ksyms=1"
    for raw in args.qemu_arg:
        cmd.append(raw)
    if args.virtio_disk:
        # A stock QEMU device whose DMA goes through the platform IOMMU (the
        # guest reads the disk and prints its checksum: judge_disk).
        if not getattr(args, "disk", None):
            args.disk = disk_image(args.virtio_disk)
        cmd += ["-drive", "file=%s,if=none,id=dlx-disk,format=raw,readonly=on" %
                args.disk[0],
                "-device", "virtio-blk-pci,drive=dlx-disk,iommu_platform=on,"
                "disable-legacy=on"]
        cmd[cmd.index("-append") + 1] += " dmalab.disk=vda"
    return cmd


def run_qemu(cmd, timeout, verbose, counters=False, boots=1, reset_on=None,
             probe=False):
    """Runs QEMU to the end. With counters, QEMU stays up after the guest
    shuts down (-no-shutdown) until the device counters are read over QMP.

    boots > 1: the guest may reset the machine; the runner counts the resets
    (QMP RESET events) and ends QEMU (QMP quit) once the boots-th boot has
    ended, by a reset or a power-off.  reset_on (a compiled regex): when a
    serial line matches it, the runner reads the device counters (they
    describe that boot: a reset clears them) and resets the machine with
    QMP system_reset.  probe: every half second, time a QMP query-status
    round trip (QEMU's main loop answering), into boot.qmp_latencies.

    With counters and several boots, a reset the guest asks for is held
    back (-action reboot=shutdown: QEMU reports a SHUTDOWN with reason
    guest-reset and pauses, the device untouched): the runner reads the
    counters of the boot it ends, then resets the machine itself (QMP
    system_reset) and lets it run again (cont)."""
    boot = Boot()
    qmp_dir = None
    use_qmp = counters or boots > 1 or reset_on is not None or probe
    catch_resets = counters and (boots > 1 or reset_on is not None)
    if use_qmp:
        qmp_dir = tempfile.mkdtemp(prefix="dmalab-qmp-")
        qmp_path = os.path.join(qmp_dir, "qmp.sock")
        cmd = cmd + ["-qmp", "unix:%s,server=on,wait=off" % qmp_path,
                     "-no-shutdown"]
        if catch_resets:
            cmd += ["-action", "reboot=shutdown"]
    boot.cmd = cmd
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as e:
        boot.lines.append("runner: cannot start %s: %s" % (cmd[0], e))
        boot.stamps.append(0.0)
        boot.rc = 127
        return boot
    # never blocks: what select() found may have been read meanwhile
    os.set_blocking(proc.stdout.fileno(), False)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    qmp = None
    if use_qmp:
        try:
            qmp = Qmp(qmp_path, proc)
            sel.register(qmp, selectors.EVENT_READ)
        except (QmpError, OSError, ValueError) as e:
            # Without QMP nobody would end a -no-shutdown QEMU: stop now.
            boot.qmp_error = str(e)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # QEMU already exited (it says why on its output)
    pending = b""
    deadline = start + timeout

    def finish_qmp():
        nonlocal qmp
        sel.unregister(qmp)
        qmp.close()
        qmp = None

    resume = False  # a held-back guest reset is being done: cont after it
    draining = False

    def host_reset():
        """QMP system_reset (which -action reboot=shutdown would turn into a
        shutdown: it is lifted for this one request; a reset the firmware
        asks for meanwhile is a plain reset, and ends no boot)."""
        if catch_resets:
            qmp.command("set-action", reboot="reset")
        qmp.command("system_reset")
        if catch_resets:
            qmp.command("set-action", reboot="shutdown")

    def qmp_events(events):
        """Reacts to QMP events; True once QEMU has been told to quit."""
        nonlocal resume
        for e in events:
            what = e.get("event")
            data = e.get("data") or {}
            boot.events.append((time.monotonic() - start, len(boot.lines),
                                what, e.get("data")))
            if what == "RESET":
                boot.resets += 1
                if boot.started:
                    boot.reset_ends.add(boot.started - 1)
                if boot.started >= boots:
                    # the last boot has ended (its counters are gone)
                    qmp.command("quit")
                    return True
                if resume:
                    # the machine was reset from its paused shutdown state
                    resume = False
                    qmp.command("cont")
            elif what == "SHUTDOWN" and catch_resets and \
                    data.get("reason") == "guest-reset":
                # A reset the guest asked for, held back: the counters still
                # describe the boot it ends.  The firmware's own reset after
                # a warm reset (before the next kernel banner) finds that
                # boot's counters read already.
                drain_output()
                k = max(boot.started - 1, 0)
                if k not in boot.boot_stats:
                    boot.boot_stats[k] = read_device_counters(qmp)
                resume = True
                host_reset()
            elif what == "SHUTDOWN":
                # The guest is done (poweroff, or reboot/panic with
                # -no-reboot); QEMU waits for us.
                drain_output()
                if counters:
                    boot.boot_stats[max(boot.started - 1, 0)] = \
                        read_device_counters(qmp)
                qmp.command("quit")
                return True
        return False

    def qmp_do(action):
        """Runs action(), then the events it let in; ends QMP on errors."""
        try:
            done = action()
            # the events that came with the replies, and those that
            # reacting to them let in (a reset's RESET, say)
            while not done:
                events = qmp.pending_events()
                if not events:
                    break
                done = qmp_events(events)
        except (QmpError, OSError, ValueError) as e:
            boot.qmp_error = str(e)
            done = True
            # without QMP nobody would end (or resume) a -no-shutdown QEMU
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if done:
            finish_qmp()

    def reset_now():
        if counters:
            boot.boot_stats[max(boot.started - 1, 0)] = \
                read_device_counters(qmp)
        host_reset()
        return False

    def probe_now():
        t0 = time.monotonic()
        qmp.command("query-status")
        boot.qmp_latencies.append(time.monotonic() - t0)
        return False

    next_probe = start + 0.5

    def add(raw):
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        text = text.replace("\r", "")
        boot.lines.append(text)
        boot.stamps.append(time.monotonic() - start)
        if LINUX_RE.search(text):
            boot.started += 1
        if verbose:
            print(text, flush=True)
        if reset_on is not None and qmp is not None and not draining and \
                reset_on.search(strip_ts(text)):
            qmp_do(reset_now)

    def read_output():
        """Takes in what QEMU has written (one read, never blocking): the
        bytes read, b"" at its end, None when there is nothing yet."""
        nonlocal pending
        try:
            chunk = os.read(proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return None
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            add(line)
        return chunk

    def drain_output():
        """Takes in all QEMU wrote before it paused (so that its boot
        banners are counted); a --reset-on line in it resets nothing."""
        nonlocal draining
        draining = True
        try:
            while read_output():
                pass
        finally:
            draining = False

    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                boot.timed_out = True
                break
            ready = [k.fileobj for k, _ in
                     sel.select(timeout=min(left, 0.5 if probe else 1.0))]
            if probe and qmp is not None and time.monotonic() >= next_probe:
                qmp_do(probe_now)
                next_probe = time.monotonic() + 0.5
            if not ready:
                continue
            if qmp is not None and qmp in ready:
                qmp_do(lambda: False)
                if proc.stdout not in ready:
                    continue
            if read_output() == b"":
                break
    finally:
        if pending:
            add(pending)
        if boot.timed_out or proc.poll() is None:
            # QEMU runs in its own session: kill the whole group.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        boot.rc = proc.wait()
        sel.close()
        proc.stdout.close()
        if qmp is not None:
            qmp.close()
        if qmp_dir:
            try:
                os.unlink(qmp_path)
            except OSError:
                pass
            os.rmdir(qmp_dir)
    boot.wall = time.monotonic() - start
    # the single-boot view: the counters read at the end
    boot.device_stats = boot.boot_stats.get(max(boot.started - 1, 0))
    return boot


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
    elif boot.rc != 0:
        tail = next((l for l in reversed(boot.lines) if l.strip()), "")
        reasons.append("qemu exited with status %d: %s" % (boot.rc, tail))
    if facts["init_seen"] is None:
        reasons.append("guest /init never reported (kernel did not boot?)")
    for e in facts["errors"]:
        reasons.append(e)
    for e in facts["dmalab_errors"]:
        reasons.append("guest: %s" % e)
    if facts["init_seen"] is not None:
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


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" % (n, unit)) if unit == "B" else \
                ("%.1f %s" % (n, unit))
        n /= 1024.0
    return str(n)


def print_summary(facts, boot, hdr="boot"):
    print("== %s summary ==" % hdr)
    print("  kernel:        %s" % (facts["kernel"] or "?"))
    if facts["bound"]:
        for bdf, ven, dev in facts["bound"]:
            print("  ioatdma bound: %s vendor=%s device=%s" % (bdf, ven, dev))
    else:
        print("  ioatdma bound: no")
    if facts["bound"]:
        # ioatdma registers its channels only after its probe-time copy
        # self-test (ioat_probe -> ioat3_dma_self_test) succeeded.
        print("  self-test:     %s" % (
            "passed (channels registered after ioatdma's probe self-test)"
            if facts["channels"] else "failed: no channels registered"))
    print("  dma channels:  %s %s" % (
        facts["channels"] if facts["channels"] is not None else "?",
        " ".join(facts["channel_names"])))
    for c in facts["chan_stats"]:
        print("  %-12s ops=%-5d bytes=%-10s dma_time=%.3f s  %.1f MB/s  "
              "failures=%d" % (c["name"], c["ops"], fmt_bytes(c["bytes"]),
                               c["ns"] / 1e9, c["mbps"], c["failures"]))
    s = facts["summary"]
    if s:
        print("  total        ops=%-5d bytes=%-10s dma_time=%.3f s  %.1f MB/s  "
              "failures=%d" % (s["ops"], fmt_bytes(s["bytes"]), s["ns"] / 1e9,
                               s["mbps"], s["failures"]))
    cpu = facts["cpu"]
    if cpu:
        print("  cpu memcpy   ops=%-5d bytes=%-10s cpu_time=%.3f s  %.1f MB/s  "
              "(guest CPU, same length distribution)" % (
                  cpu["ops"], fmt_bytes(cpu["bytes"]), cpu["ns"] / 1e9,
                  cpu["mbps"]))
        if s and cpu["mbps"]:
            print("  dma / cpu:    %.2fx (QEMU's host memcpy behind the device "
                  "over the guest's TCG-emulated memcpy: a property of this "
                  "emulator, not of hardware)" % (s["mbps"] / cpu["mbps"]))
    for n, text in facts["irqs"]:
        print("  interrupt:    %-8d %s" % (n, text))
    if facts["allowed"]:
        print("  allowed:      %d expected error line(s) (--allow)" %
              len(facts["allowed"]))
    if facts["skipped"]:
        print("  skipped:      %s (--allow-skip)" %
              "; ".join(facts["skipped"]))
    for d in vtd_stats(boot):
        print("  vtd (QMP):    %s" % d["path"])
        names = [c for c in d["counter-names"] if d[c]]
        for i in range(0, len(names), 4):
            print("                %s" % "  ".join(
                "%s=%d" % (c, d[c]) for c in names[i:i + 4]))
        if d["waits"]:
            print("                wait latency: modelled %.1f us, achieved "
                  "%.1f us on average (max %.1f us)" % (
                      d["wait-modelled-ns"] / d["waits"] / 1e3,
                      d["wait-achieved-ns"] / d["waits"] / 1e3,
                      d["wait-max-achieved-ns"] / 1e3))
    for d in ioat_stats(boot):
        print("  device (QMP): %s descriptors=%d bytes=%s errors=%d "
              "interrupts=%d" % (d["path"], d["descriptors"],
                                 fmt_bytes(d["bytes"]), d["errors"],
                                 d["interrupts"]))
    if boot.qmp_latencies:
        lat = sorted(boot.qmp_latencies)
        print("  QMP probes:   %d, median %.1f ms, max %.1f ms" % (
            len(lat), 1000 * lat[len(lat) // 2], 1000 * lat[-1]))
    if boot.device_stats is None:
        print("  device (QMP): not read")
    for line in bench_tables(facts["bench"]):
        print("  %s" % line)
    if facts["init_seen"] is not None:
        up = facts["init_uptime"]
        print("  /init reached: %.1f s after QEMU start%s" % (
            facts["init_seen"],
            (" (guest uptime %.2f s)" % up) if up is not None else ""))
    if boot.accel:
        print("  accelerator:   %s (%s)" % boot.accel)
    print("  boot wall time: %.1f s (%s%s)" % (
        boot.wall, "ended in a machine reset" if boot.ended_by_reset else
        "qemu exit status %s" % boot.rc, ", timed out" if boot.timed_out
        else ""))


def interesting(lines):
    keep = []
    for raw in lines:
        line = strip_ts(raw)
        if "DMALAB:" in line or "dmalab_exercise" in line or \
                IOAT_LINE_RE.search(line) or re.match(r"^(not )?ok \d|^1\.\.|^KTAP", line):
            keep.append(raw)
    return keep


def report_run(results, run_reasons, args, run_label="", seed=None,
               verbose=False, whole=None):
    """Prints each boot's status line, summary and reasons; returns the
    failures as [(label, reasons)].  whole: the run's Boot, whose serial
    log is printed after a failure (unless verbose)."""
    failed = []
    multi = args.boots > 1 or args.reset_on
    for j, (seg, facts, reasons) in enumerate(results, 1):
        if multi:
            label = "boot %d/%d" % (j, args.boots)
            if run_label:
                label = "%s %s" % (run_label, label)
        else:
            label = run_label or "boot"
        ops = facts["summary"]["ops"] if facts["summary"] else 0
        if multi or run_label or reasons:
            print("%s: %s in %.1f s, seed=%s, channels=%s, ops=%d%s%s" % (
                label, "PASS" if not reasons else "FAIL", seg.wall,
                seed if seed is not None else "default", facts["channels"],
                ops, ", ended in a reset" if seg.ended_by_reset else "",
                (": " + reasons[0]) if reasons else ""), flush=True)
        if args.summary:
            if seg.accel is None and whole is not None:
                seg.accel = whole.accel
            print_summary(facts, seg, label)
        if reasons:
            failed.append((label, reasons))
            print("---- reasons (%s) ----" % label)
            for r in reasons:
                print("  - %s" % r)
    if run_reasons:
        label = run_label or "run"
        failed.append((label, run_reasons))
        print("---- reasons (%s) ----" % label)
        for r in run_reasons:
            print("  - %s" % r)
    if failed and whole is not None:
        if not verbose:
            print("---- serial log (%s) ----" % (run_label or "run"))
            print("\n".join(whole.lines))
            print("---- end of serial log ----")
        else:
            print("---- key lines (%s) ----" % (run_label or "run"))
            print("\n".join(interesting(whole.lines)))
    sys.stdout.flush()
    return failed


def judge_file(args, name):
    """Judge a saved serial log (one QEMU run; with --boots, split into
    its boots)."""
    boot = Boot()
    with open(args.judge_log, errors="replace") as f:
        boot.lines = [l.rstrip("\r\n").replace("\r", "") for l in f]
    boot.stamps = [0.0] * len(boot.lines)
    boot.rc = 0
    boot.reset_ends = None
    results, run_reasons = judge_run(boot, args)
    failed = report_run(results, run_reasons, args)
    return verdict(name, failed)


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


def verdict(name, failed):
    """Prints the last line; returns the exit status."""
    if not failed:
        print("guest %s: PASS" % name)
        return 0
    if len(failed) > 1:
        print("guest %s: FAIL: %d failed (%s); first: %s" % (
            name, len(failed), ", ".join(l for l, _ in failed),
            failed[0][1][0]))
    else:
        print("guest %s: FAIL: %s" % (name, failed[0][1][0]))
    return 1


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


def judge_races(races, args):
    """--expect-race: each pattern matches a symbolized report."""
    reasons = ["no race report matches %r" % rx for rx in args.expect_race
               if not any(re.search(rx, l) for l in races)]
    n = sum(l.startswith("race ") for l in races)
    if args.expect_race_count is not None and n != args.expect_race_count:
        reasons.append("the race detector reported %d race(s), expected %d" %
                       (n, args.expect_race_count))
    return reasons


def kvm_failed_to_start(args, boot):
    """True when auto's KVM choice ended QEMU before the guest kernel spoke."""
    requested = args.accel or os.environ.get("DMALAB_ACCEL") or "auto"
    return (requested == "auto" and args.accel_used == "kvm" and
            boot.started == 0 and boot.rc not in (0, None) and
            not boot.timed_out)


def run_once(args, seed=None, announce=True):
    """Boots QEMU once for args (possibly several guest boots);
    returns (boot, results, run_reasons) as judge_run does."""
    if args.race_plugin:
        args.race_files = race_files(args)
    cmd = build_cmdline(args, seed)
    if announce:
        print("runner: %s" % " ".join(
            "'%s'" % c if (" " in c or not c) else c for c in cmd),
            flush=True)
    if announce:
        print("runner: accelerator %s (%s)" % (args.accel_used, args.accel_why),
              flush=True)
    boot = run_qemu(cmd, args.timeout * max(args.boots, 1), args.verbose,
                    counters=want_counters(args), boots=args.boots,
                    reset_on=re.compile(args.reset_on) if args.reset_on
                    else None, probe=args.probe_qmp is not None)
    boot.accel = (args.accel_used, args.accel_why)
    if kvm_failed_to_start(args, boot):
        # auto chose KVM, but QEMU could not run the guest with it: say so
        # and boot again with TCG.
        args.accel_used, args.accel_why = "tcg", (
            "KVM failed to start the guest (qemu exit status %s: %s)" % (
                boot.rc, (boot.lines or ["no output"])[-1][:160]))
        return run_once(args, seed, announce=True)
    results, run_reasons = judge_run(boot, args)
    if args.race_plugin:
        boot.races = symbolize_races(boot, args.race_files[1])
        print("---- race detector ----")
        for line in boot.races:
            print("  " + line)
        run_reasons = run_reasons + judge_races(boot.races, args)
    return boot, results, run_reasons


def make_parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qemu", help="qemu-system-x86_64 binary")
    ap.add_argument("--kernel", help="guest kernel (vmlinuz from image.py)")
    ap.add_argument("--initrd", help="initramfs.cpio.gz from image.py")
    ap.add_argument("--judge-log", metavar="FILE",
                    help="judge an existing serial log instead of booting")
    ap.add_argument("--firmware-dir", action="append", default=[],
                    help="-L directory (repeatable; default %s)" %
                    " ".join(DEFAULT_FIRMWARE_DIRS))
    ap.add_argument("--device", action="append", default=[],
                    help="-device argument (repeatable; default dmalab-ioat; "
                         "'none' adds no device)")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="extra raw QEMU argument (repeatable)")
    ap.add_argument("--append", action="append", default=[],
                    help="extra kernel command line text")
    ap.add_argument("--machine", default="q35,sata=off,smbus=off")
    ap.add_argument("--memory", default="1G")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--scenario", default="memcpy",
                    help="guest scenario: memcpy (default) or boot")
    ap.add_argument("--name", help="test name for the verdict line "
                    "(default: the scenario)")
    ap.add_argument("--iterations", type=int,
                    help="copies per channel (guest default 300)")
    ap.add_argument("--max-len", type=int, help="largest copy in bytes")
    ap.add_argument("--seed", type=int,
                    help="exerciser PRNG seed (default: the module's; "
                         "with --repeat, the boot number)")
    ap.add_argument("--expect-channels", type=int, default=4,
                    help="exact number of DMA channels the guest must see "
                         "(default 4; -1 to skip the check)")
    ap.add_argument("--expect-id", default="0x8086:0x2021",
                    help="vendor:device the bound function must have "
                         "(default 0x8086:0x2021; '' to skip)")
    ap.add_argument("--min-ops", type=int, default=0,
                    help="minimum verified copies in total (memcpy)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per boot before QEMU is killed")
    ap.add_argument("--log", help="write the serial log(s) here")
    ap.add_argument("--summary", action="store_true",
                    help="print a readable summary of each boot")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run QEMU N times")
    ap.add_argument("--boots", type=int, default=1, metavar="N",
                    help="let the guest boot N times in one QEMU run "
                         "(without -no-reboot): each machine reset starts "
                         "the next boot, QEMU is ended after the Nth; the "
                         "serial log is split per boot and every boot is "
                         "judged (a boot that ends in a reset need not "
                         "finish /init)")
    ap.add_argument("--reset-on", metavar="REGEX",
                    help="when a serial line matches REGEX, read the device "
                         "counters (for that boot's cross-check) and reset "
                         "the machine with QMP system_reset")
    ap.add_argument("--allow", action="append", default=[], metavar="REGEX",
                    help="a log line matching REGEX is expected: it does not "
                         "count as an ioatdma error or kernel problem "
                         "(repeatable)")
    ap.add_argument("--expect-irq", action="append", default=[],
                    metavar="NAME",
                    help="require an interrupt named NAME (a whole word of "
                         "the /proc/interrupts line /init reports) with a "
                         "non-zero count summed over CPUs (repeatable)")
    ap.add_argument("--probe-qmp", type=float, metavar="SECONDS",
                    help="while the guest runs, time a QMP round trip every "
                         "half second; fail if one takes longer than SECONDS "
                         "(QEMU's main loop starved)")
    ap.add_argument("--min-device-descriptors", type=int, default=0,
                    metavar="N", help="dmalab-ioat must count at least N "
                                      "completed descriptors (QMP)")
    ap.add_argument("--expect-device-errors", default="0", metavar="N[+]",
                    help="channel errors dmalab-ioat must count (QMP): N "
                         "exactly, N+ at least N (default 0)")
    ap.add_argument("--expect-vtd", action="append", default=[],
                    metavar="NAME OP VALUE",
                    help="a condition on dmalab-vtd's counters, e.g. "
                         "'iotlb-inv-page>=ops*2' (ops: verified copies)")
    ap.add_argument("--virtio-disk", type=int, default=0, metavar="MIB",
                    help="add a read-only virtio-blk disk of MIB MiB "
                         "(iommu_platform=on); the guest checksums it")
    ap.add_argument("--expect-line", action="append", default=[],
                    metavar="REGEX",
                    help="a serial line must match REGEX (re.search, after "
                         "the timestamp; repeatable); a KTAP result needs "
                         "'^ok N ...', which 'not ok N ...' does not match")
    ap.add_argument("--allow-skip", action="append", default=[],
                    metavar="NAME",
                    help="a KTAP 'ok N NAME # SKIP' passes (NAME a regex the "
                         "whole test name must match; repeatable); any other "
                         "skipped test fails the boot")
    ap.add_argument("--race-plugin", metavar="SO",
                    help="load the DMA race detector (libdmalab-race.so) with a "
                         "table shared with dmalab-ioat; its reports are "
                         "printed with the kernel symbol of each PC")
    ap.add_argument("--expect-race", action="append", default=[],
                    metavar="REGEX",
                    help="a race report (symbolized) must match REGEX")
    ap.add_argument("--expect-race-count", type=int, metavar="N",
                    help="the race detector must report exactly N races")
    ap.add_argument("--report", action="store_true",
                    help="print a race report after each boot: the injections, "
                         "the scenario's own lines and results, the detector's "
                         "and the audit's findings, the verdict")
    ap.add_argument("--same-fault-log", action="store_true",
                    help="with --repeat: every boot's fault log (dmalab-ioat's "
                         "fault-log over QMP: which rules fired, on what, at "
                         "which virtual time) must be non-empty and the same "
                         "as the first boot's")
    ap.add_argument("--no-counters", action="store_true",
                    help="do not read dmalab-ioat's counters over QMP at "
                         "the end (they are cross-checked against the "
                         "guest's figures)")
    ap.add_argument("--accel", choices=accel.CHOICES,
                    help="kvm, tcg, or auto: KVM when /dev/kvm is usable, "
                         "else TCG (default $DMALAB_ACCEL, else auto); runs "
                         "that need TCG (race detector, -icount) use it")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="stream the serial console while it runs")
    return ap


def want_counters(args):
    """Read the device counters when a dmalab-ioat is on the command line."""
    devices = args.device or DEFAULT_DEVICES
    return not args.no_counters and any(
        d.split(",")[0] in ("dmalab-ioat", "dmalab-vtd") for d in devices)


def bench_boot(rp, argv, label, log_path=None, verbose=False):
    """One boot of a bench script (bench.py, race_cost.py, roundtrip_bench.py):
    argv as runner arguments, the boot, its serial log written to log_path, the
    verdict reported.  Returns (boot, results, failures)."""
    rargs = rp.parse_args(argv + (["--verbose"] if verbose else []))
    check_args(rp, rargs)
    print("==== %s ====" % label, flush=True)
    boot, results, run_reasons = run_once(rargs)
    if log_path:
        os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
        with open(log_path, "w") as f:
            f.write("\n".join(boot.lines) + "\n")
    bad = report_run(results, run_reasons, rargs, run_label=label,
                     verbose=verbose, whole=boot)
    return boot, results, bad


def check_args(ap, args):
    """Normalises and validates parsed arguments (ap.error on bad ones)."""
    if args.expect_channels is not None and args.expect_channels < 0:
        args.expect_channels = None
    if args.boots < 1:
        ap.error("--boots must be at least 1")
    try:
        parse_errors_expectation(args.expect_device_errors)
        for rx in args.allow + args.expect_line + args.allow_skip + (
                [args.reset_on] if args.reset_on else []):
            re.compile(rx)
        for rx in args.expect_line:
            if re.match(r"(ok|not ok) \d", rx):
                # re.search would find it inside "not ok N ..." too
                raise ValueError("--expect-line %r: a KTAP result line must "
                                 "be anchored ('^%s')" % (rx, rx))
        for text in args.expect_vtd:
            if not VTD_EXPECT_RE.match(text):
                raise ValueError("--expect-vtd %r: want NAME OP VALUE" % text)
    except (ValueError, re.error) as e:
        ap.error(str(e))
    args.accel_used, args.accel_why = "tcg", "not started"
    try:
        if not args.judge_log:
            args.accel_used, args.accel_why = accel.choose(
                args.accel,
                accel.tcg_reason(args.qemu_arg, bool(args.race_plugin)))
    except accel.AccelError as e:
        ap.error(str(e))


def main(argv=None):
    ap = make_parser()
    args = ap.parse_args(argv)
    check_args(ap, args)
    name = args.name or args.scenario
    if args.repeat > 1:
        name += " x%d" % args.repeat

    if args.judge_log:
        return judge_file(args, name)
    for opt in ("qemu", "kernel", "initrd"):
        if not getattr(args, opt):
            ap.error("--%s is required (unless --judge-log)" % opt)
    # meson hands over paths relative to the build dir: make them absolute
    # (a bare "qemu-system-x86_64" would otherwise be looked up in PATH).
    args.qemu = os.path.abspath(args.qemu)
    args.kernel = os.path.abspath(args.kernel)
    args.initrd = os.path.abspath(args.initrd)
    for path, what in ((args.qemu, "--qemu"), (args.kernel, "--kernel"),
                       (args.initrd, "--initrd")):
        if not os.path.isfile(path):
            print("guest %s: FAIL: %s %s not found" % (name, what, path))
            return 1

    logf = open(args.log, "w") if args.log else None
    failed = []
    fault_logs = []
    try:
        for i in range(1, args.repeat + 1):
            # repeated boots each get their own (reproducible) seed
            seed = args.seed if args.seed is not None else \
                (i if args.repeat > 1 else None)
            boot, results, run_reasons = run_once(
                args, seed, announce=i == 1 or args.verbose)
            if logf:
                if args.repeat > 1:
                    logf.write("===== boot %d/%d =====\n" % (i, args.repeat))
                logf.write("\n".join(boot.lines) + "\n")
                logf.flush()
            this = report_run(
                results, run_reasons, args,
                run_label=(("run %d/%d" if args.boots > 1 or args.reset_on
                            else "boot %d/%d") % (i, args.repeat)
                           if args.repeat > 1 else ""),
                seed=seed, verbose=args.verbose, whole=boot)
            failed += this
            fault_logs.append("".join(d.get("fault-log", "")
                                      for d in ioat_stats(boot)))
            if args.report:
                print("\n".join(race_report(boot, "FAIL: %s" % this[0][1][0]
                                             if this else "PASS")))
        if args.same_fault_log:
            failed += judge_fault_logs(fault_logs)
    finally:
        if logf:
            logf.close()
    return verdict(name, failed)


if __name__ == "__main__":
    sys.exit(main())
