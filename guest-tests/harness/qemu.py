# SPDX-License-Identifier: GPL-2.0-or-later
"""Starting QEMU for a guest run: the command line, the process, the serial
log, QMP (run states, resets, the devices' counters), the timeout."""

import atexit
import hashlib
import os
import random
import re
import selectors
import signal
import subprocess
import tempfile
import time

from harness.qmp import Qmp, QmpError
from harness.expect import PER_REQUESTER
from harness.ktap import strip_ts


DEFAULT_FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/share/qemu"]


DEFAULT_DEVICES = ["dmalab-ioat"]


LINUX_RE = re.compile(r"Linux version (\S+)")
# QEMU's report that KVM cannot go on with the guest (it then pauses the machine for
# good, with nothing more on the serial port): "KVM internal error. Suberror: 1" and the
# like.
KVM_ERROR_RE = re.compile(r"KVM internal error|KVM: entry failed|kvm run failed")
# How long QEMU's register dump after such a report is read before QEMU is ended.
KVM_ERROR_GRACE = 2.0


class Boot:
    """Result of one QEMU run, or one boot (segment) of it."""

    def __init__(self):
        self.lines = []         # serial log lines, \r stripped
        self.stamps = []        # host seconds since start, per line
        self.wall = 0.0
        self.rc = None
        self.timed_out = False
        self.kvm_error = None   # QEMU's line saying KVM cannot run the guest
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


# dmalab-ioat's counters that the judge sums over the devices (--min-device-descriptors ...)
COUNTERS = ("descriptors", "bytes", "errors", "interrupts")


def per_requester(base, text):
    """{BASE@BB:DD.F: count} from a per-requester property's "BB:DD.F=N ..." words
    (and BASE@other)."""
    out = {}
    for word in text.split():
        who, _, n = word.partition("=")
        out["%s@%s" % (base, who)] = int(n)
    return out


def read_device_counters(qmp):
    """The counters of every dmalab-ioat, dmalab-vtd and dmalab-dsa in the machine: each
    device's "counters" property, one query ({name: value}, docs/ioat.rst, vtd.rst, dsa.rst
    list them), with "counter-names" the names in that order; for dmalab-vtd also the
    per-requester counts; and each device's fault log."""
    found = []
    kinds = {"child<dmalab-ioat>": "dmalab-ioat",
             "child<dmalab-vtd>": "dmalab-vtd",
             "child<dmalab-dsa>": "dmalab-dsa"}
    for parent in ("/machine/peripheral", "/machine/peripheral-anon"):
        for child in qmp.command("qom-list", path=parent):
            kind = kinds.get(child.get("type"))
            if not kind:
                continue
            path = "%s/%s" % (parent, child["name"])
            counters = qmp.command("qom-get", path=path, property="counters")
            stats = {"path": path, "type": kind, "counter-names": list(counters)}
            stats.update(counters)
            if kind == "dmalab-vtd":
                # per requester: NAME@BB:DD.F (harness/expect.py PER_REQUESTER)
                for base, prop in PER_REQUESTER.items():
                    stats.update(per_requester(base, qmp.command(
                        "qom-get", path=path, property=prop)))
            stats["fault-log"] = qmp.command("qom-get", path=path, property="fault-log")
            found.append(stats)
    return found


def ioat_stats(boot):
    return [d for d in boot.device_stats or [] if d.get("type", "dmalab-ioat") == "dmalab-ioat"]


def vtd_stats(boot):
    return [d for d in boot.device_stats or [] if d.get("type") == "dmalab-vtd"]


def dsa_stats(boot):
    return [d for d in boot.device_stats or [] if d.get("type") == "dmalab-dsa"]


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


# The modelled clock of the guest scenarios: TCG with -icount, so that guest time counts
# guest instructions (shift=3: 8 ns each, a 125-MIPS CPU, slow enough that the boot's
# time-based busy-waits stay short, and far from any hardware figure: no scenario reports
# time), idle time jumps to the next timer (sleep=off) instead of following the host, the
# guest's random numbers come from -seed and the RTC runs on virtual time from a fixed date.
# One seed then gives one run on any host, however fast or loaded.
MODELLED_CLOCK = ["-icount", "shift=3,sleep=off", "-rtc", "base=2026-01-01T00:00:00,clock=vm"]
# The options that put a run on a modelled clock, each with its value.
CLOCK_OPTIONS = ("-icount", "-seed", "-rtc")


def clock_args(clock, qemu_args, seed=None):
    """qemu_args for `clock`: "modelled" adds MODELLED_CLOCK and -seed (seed, or 1)
    unless the arguments already choose an -icount of their own; "host" takes out
    every option of CLOCK_OPTIONS, so the run is plain multi-threaded TCG (or KVM)
    on the host's clock; None leaves them as they are."""
    if clock is None:
        return list(qemu_args)
    if clock == "host":
        out, skip = [], False
        for a in qemu_args:
            if skip:
                skip = False
            elif a in CLOCK_OPTIONS:
                skip = True
            else:
                out.append(a)
        return out
    if "-icount" in qemu_args:
        return list(qemu_args)
    return list(qemu_args) + MODELLED_CLOCK + ["-seed", str(1 if seed is None else seed)]


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

    cmd = [args.qemu, "-M", args.machine, "-accel", args.accel_used,
           "-cpu", getattr(args, "cpu", None) or "max",
           "-m", args.memory, "-smp", str(args.smp), "-nographic", "-vga", "none",
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
    marked = False  # the table's slots are one engine's channels: the first engine's
    for dev in (args.device or DEFAULT_DEVICES):
        if dev and dev != "none":
            if race and not marked and dev.split(",")[0] in ("dmalab-ioat", "dmalab-dsa"):
                dev += ",race-table=" + race[0]
                marked = True
            cmd += ["-device", dev]
    if race:
        cmd += ["-plugin", "%s,table=%s,log=%s" % (args.race_plugin, race[0], race[1])]
        cmd[cmd.index("-append") + 1] += " dmalab.ksyms=1"
    cmd += clock_args(getattr(args, "clock", None), args.qemu_arg, seed)
    if args.virtio_disk:
        # A stock QEMU device whose DMA goes through the platform IOMMU (the
        # guest reads the disk and prints its checksum: judge_disk).
        if not getattr(args, "disk", None):
            args.disk = disk_image(args.virtio_disk)
        cmd += ["-drive", "file=%s,if=none,id=dlx-disk,format=raw,readonly=on" %
                args.disk[0]]
        disk = "virtio-blk-pci,drive=dlx-disk,iommu_platform=on,disable-legacy=on"
        if getattr(args, "virtio_disk_ats", False):
            # ATS needs a PCIe function: on the root bus virtio-pci is not one
            cmd += ["-device", "pcie-root-port,id=dlx-rp,chassis=1"]
            disk += ",bus=dlx-rp,ats=on"
        cmd += ["-device", disk]
        cmd[cmd.index("-append") + 1] += " dmalab.disk=vda"
    return cmd


class QemuRun:
    """One QEMU run to its end. With counters, QEMU stays up after the guest
    shuts down (-no-shutdown) until the device counters are read over QMP.

    boots > 1: the guest may reset the machine; the run counts the resets
    (QMP RESET events) and ends QEMU (QMP quit) once the boots-th boot has
    ended, by a reset or a power-off.  reset_on (a compiled regex): when a
    serial line matches it, the run reads the device counters (they describe
    that boot: a reset clears them) and resets the machine with QMP
    system_reset.  probe: every half second, time a QMP query-status round
    trip (QEMU's main loop answering), into boot.qmp_latencies.

    With counters and several boots, a reset the guest asks for is held back
    (-action reboot=shutdown: QEMU reports a SHUTDOWN with reason guest-reset
    and pauses, the device untouched): the run reads the counters of the boot
    it ends, then resets the machine itself (QMP system_reset) and lets it run
    again (cont)."""

    def __init__(self, cmd, timeout, verbose, counters=False, boots=1,
                 reset_on=None, probe=False):
        self.boot = Boot()
        self.timeout = timeout
        self.verbose = verbose
        self.counters = counters
        self.boots = boots
        self.reset_on = reset_on
        self.probe = probe
        self.use_qmp = counters or boots > 1 or reset_on is not None or probe
        self.catch_resets = counters and (boots > 1 or reset_on is not None)
        self.qmp_dir = None
        self.qmp_path = None
        self.cmd = cmd = self.command_line(cmd)
        # Only QEMU's own report counts, and only under KVM: a guest may print anything.
        self.on_kvm = "-accel" in cmd[:-1] and \
            cmd[cmd.index("-accel") + 1].startswith("kvm")
        self.proc = None
        self.sel = None
        self.qmp = None
        self.start = self.deadline = 0.0
        self.pending = b""
        self.resume = False    # a held-back guest reset is being done: cont after it
        self.draining = False
        self.kvm_end = None    # set when KVM has given up on the guest

    # ---- the command line and the process ---------------------------------

    def command_line(self, cmd):
        """cmd with the QMP socket and the run's actions, when QMP is used."""
        if not self.use_qmp:
            return cmd
        self.qmp_dir = tempfile.mkdtemp(prefix="dmalab-qmp-")
        self.qmp_path = os.path.join(self.qmp_dir, "qmp.sock")
        cmd = cmd + ["-qmp", "unix:%s,server=on,wait=off" % self.qmp_path,
                     "-no-shutdown"]
        if self.catch_resets:
            cmd += ["-action", "reboot=shutdown"]
        return cmd

    def run(self):
        """Runs QEMU to the end: the Boot."""
        self.boot.cmd = self.cmd
        self.start = time.monotonic()
        self.deadline = self.start + self.timeout
        if not self.launch():
            return self.boot
        try:
            self.loop()
        finally:
            self.finish()
        self.boot.wall = time.monotonic() - self.start
        # the single-boot view: the counters read at the end
        self.boot.device_stats = self.boot.boot_stats.get(self.current())
        return self.boot

    def launch(self):
        """Starts QEMU and connects to its QMP socket; False when it could not start."""
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT,
                                         start_new_session=True)
        except OSError as e:
            self.boot.lines.append("runner: cannot start %s: %s" % (self.cmd[0], e))
            self.boot.stamps.append(0.0)
            self.boot.rc = 127
            self.remove_socket()
            return False
        # never blocks: what select() found may have been read meanwhile
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        if self.use_qmp:
            try:
                self.qmp = Qmp.connect(self.qmp_path, self.proc)
                self.sel.register(self.qmp, selectors.EVENT_READ)
            except (QmpError, OSError, ValueError) as e:
                # Without QMP nobody would end a -no-shutdown QEMU: stop now.
                self.boot.qmp_error = str(e)
                self.kill()
        return True

    def kill(self):
        """Ends QEMU's whole process group (it runs in its own session)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # QEMU already exited (it says why on its output)

    def loop(self):
        """Reads QEMU's output and QMP until QEMU ends, KVM gives up or time is up."""
        next_probe = self.start + 0.5
        while True:
            left = self.deadline - time.monotonic()
            if self.kvm_end is not None and time.monotonic() >= self.kvm_end:
                break  # QEMU is killed below, not timed out
            if left <= 0:
                self.boot.timed_out = True
                break
            ready = [k.fileobj for k, _ in
                     self.sel.select(timeout=min(left, 0.5 if self.probe else 1.0))]
            if self.probe and self.qmp is not None and time.monotonic() >= next_probe:
                self.qmp_do(self.probe_now)
                next_probe = time.monotonic() + 0.5
            if not ready:
                continue
            if self.qmp is not None and self.qmp in ready:
                self.qmp_do(lambda: False)
                if self.proc.stdout not in ready:
                    continue
            if self.read_output() == b"":
                break

    def finish(self):
        """Takes in the last partial line, ends QEMU if it still runs, closes all."""
        if self.pending:
            self.add(self.pending)
        if self.boot.timed_out or self.proc.poll() is None:
            self.kill()
        self.boot.rc = self.proc.wait()
        self.sel.close()
        self.proc.stdout.close()
        if self.qmp is not None:
            self.qmp.close()
        self.remove_socket()

    def remove_socket(self):
        if self.qmp_dir:
            try:
                os.unlink(self.qmp_path)
            except OSError:
                pass
            os.rmdir(self.qmp_dir)

    # ---- the serial log ----------------------------------------------------

    def add(self, raw):
        """One line of QEMU's output: kernel banners, KVM's report, --reset-on."""
        boot = self.boot
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        text = text.replace("\r", "")
        boot.lines.append(text)
        boot.stamps.append(time.monotonic() - self.start)
        if LINUX_RE.search(text):
            boot.started += 1
        self.kvm_report(text)
        if self.verbose:
            print(text, flush=True)
        if self.reset_on is not None and self.qmp is not None and \
                not self.draining and self.reset_on.search(strip_ts(text)):
            self.qmp_do(self.reset_now)

    def kvm_report(self, text):
        """QEMU saying KVM cannot go on: the machine is paused for good, so QEMU
        is ended once its register dump has been read."""
        m = KVM_ERROR_RE.search(text) if self.on_kvm else None
        if m and self.boot.kvm_error is None:
            self.boot.kvm_error = text[m.start():][:160]
            self.kvm_end = time.monotonic() + KVM_ERROR_GRACE

    def read_output(self):
        """Takes in what QEMU has written (one read, never blocking): the
        bytes read, b"" at its end, None when there is nothing yet."""
        try:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
        except BlockingIOError:
            return None
        self.pending += chunk
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            self.add(line)
        return chunk

    def drain_output(self):
        """Takes in all QEMU wrote before it paused (so that its boot
        banners are counted); a --reset-on line in it resets nothing."""
        self.draining = True
        try:
            while self.read_output():
                pass
        finally:
            self.draining = False

    # ---- QMP: run states, resets, counters -----------------------------------

    def current(self):
        """The boot (0-based) the machine is in: the last kernel banner's."""
        return max(self.boot.started - 1, 0)

    def qmp_do(self, action):
        """Runs action(), then the events it let in; ends QMP on errors."""
        try:
            done = action()
            # the events that came with the replies, and those that
            # reacting to them let in (a reset's RESET, say)
            while not done:
                events = self.qmp.pending_events()
                if not events:
                    break
                done = self.on_events(events)
        except (QmpError, OSError, ValueError) as e:
            self.boot.qmp_error = str(e)
            done = True
            # without QMP nobody would end (or resume) a -no-shutdown QEMU
            self.kill()
        if done:
            self.sel.unregister(self.qmp)
            self.qmp.close()
            self.qmp = None

    def on_events(self, events):
        """Reacts to QMP events; True once QEMU has been told to quit."""
        for e in events:
            what = e.get("event")
            data = e.get("data") or {}
            self.boot.events.append((time.monotonic() - self.start,
                                     len(self.boot.lines), what, e.get("data")))
            if what == "RESET":
                if self.on_reset():
                    return True
            elif what == "SHUTDOWN" and self.catch_resets and \
                    data.get("reason") == "guest-reset":
                self.on_guest_reset()
            elif what == "SHUTDOWN":
                # The guest is done (poweroff, or reboot/panic with
                # -no-reboot); QEMU waits for us.
                self.drain_output()
                if self.counters:
                    self.boot.boot_stats[self.current()] = read_device_counters(self.qmp)
                self.qmp.command("quit")
                return True
        return False

    def on_reset(self):
        """A machine reset: True when it ended the last boot (QEMU told to quit)."""
        boot = self.boot
        boot.resets += 1
        if boot.started:
            boot.reset_ends.add(boot.started - 1)
        if boot.started >= self.boots:
            # the last boot has ended (its counters are gone)
            self.qmp.command("quit")
            return True
        if self.resume:
            # the machine was reset from its paused shutdown state
            self.resume = False
            self.qmp.command("cont")
        return False

    def on_guest_reset(self):
        """A reset the guest asked for, held back: the counters still describe
        the boot it ends.  The firmware's own reset after a warm reset (before
        the next kernel banner) finds that boot's counters read already."""
        self.drain_output()
        k = self.current()
        if k not in self.boot.boot_stats:
            self.boot.boot_stats[k] = read_device_counters(self.qmp)
        self.resume = True
        self.host_reset()

    def host_reset(self):
        """QMP system_reset (which -action reboot=shutdown would turn into a
        shutdown: it is lifted for this one request; a reset the firmware
        asks for meanwhile is a plain reset, and ends no boot)."""
        if self.catch_resets:
            self.qmp.command("set-action", reboot="reset")
        self.qmp.command("system_reset")
        if self.catch_resets:
            self.qmp.command("set-action", reboot="shutdown")

    def reset_now(self):
        """--reset-on: the boot's counters, then a reset."""
        if self.counters:
            self.boot.boot_stats[self.current()] = read_device_counters(self.qmp)
        self.host_reset()
        return False

    def probe_now(self):
        """--probe-qmp: one timed query-status round trip."""
        t0 = time.monotonic()
        self.qmp.command("query-status")
        self.boot.qmp_latencies.append(time.monotonic() - t0)
        return False


def run_qemu(cmd, timeout, verbose, counters=False, boots=1, reset_on=None,
             probe=False):
    """Runs QEMU to the end (QemuRun says how): the Boot."""
    return QemuRun(cmd, timeout, verbose, counters, boots, reset_on, probe).run()


def kvm_failed_to_start(args, boot):
    """True when auto's KVM choice ended QEMU before the guest kernel spoke, or
    KVM gave up on the guest at any point (a KVM internal error: a host whose
    /dev/kvm starts a machine but cannot emulate what the guest runs)."""
    requested = args.accel or os.environ.get("DMALAB_ACCEL") or "auto"
    return (requested == "auto" and args.accel_used == "kvm" and
            (boot.kvm_error is not None or
             (boot.started == 0 and boot.rc not in (0, None) and
              not boot.timed_out)))


def want_counters(args):
    """Read the device counters when a dmalab device is on the command line."""
    devices = args.device or DEFAULT_DEVICES
    return not args.no_counters and any(
        d.split(",")[0] in ("dmalab-ioat", "dmalab-vtd", "dmalab-dsa") for d in devices)


def has_ioat(args):
    """A dmalab-ioat is on the command line (the default devices have one)."""
    return any(d.split(",")[0] == "dmalab-ioat" for d in args.device or DEFAULT_DEVICES)

