#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Drive QEMU through its qtest protocol for device-level tests (stdlib only).

QTest runs qemu-system-x86_64 with -accel qtest (no guest CPU executes) and offers guest
memory, port IO, the virtual clock, IRQ interception and QMP. PCI reaches configuration
space (ECAM on q35, else 0xcf8/0xcfc), finds devices, maps BARs and sets up MSI/MSI-X
without firmware. GuestAlloc hands out guest RAM for test buffers.

MSI and MSI-X messages are plain DMA writes: msi_send_message() calls pci_msi_trigger(),
which does address_space_stl_le() on the device's bus-master address space (system memory
without an IOMMU). A vector pointed at RAM instead of 0xfeeXXXXX thus turns each interrupt
into a 32-bit little-endian store of the message data that the test reads back. Bus
mastering must be on, or QEMU drops the write; msi/msix helpers enable it.
"""

import base64
import collections
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

# bios-256k.bin is loaded even under -accel qtest; a build tree does not ship it.
FIRMWARE_DIRS = ("/usr/share/seabios", "/usr/share/qemu")
Q35_MCH_ID = 0x29C08086     # vendor/device of q35's host bridge at 00:00.0
Q35_PCIEXBAR = 0x60         # MCH register: ECAM base, bit 0 enables (off at reset)
Q35_ECAM = 0xB0000000       # MCH_HOST_BRIDGE_PCIEXBAR_DEFAULT (hw/pci-host/q35.h)
Q35_ECAM_SIZE = 256 << 20   # length field 0: 256 buses
_libc = ctypes.CDLL(None, use_errno=True)


class QTestError(Exception):
    """qtest/QMP failure; returncode/stderr tell about QEMU if it had exited."""

    def __init__(self, msg, returncode=None, stderr=""):
        super().__init__(msg)
        self.returncode, self.stderr = returncode, stderr


class QMPError(QTestError):
    """A QMP command failed; ``error`` is QMP's {"class", "desc"} object."""

    def __init__(self, cmd, error):
        super().__init__(f"QMP {cmd}: {error.get('class')}: {error.get('desc')}")
        self.error = error


def _align(value, alignment):
    return -(-value // alignment) * alignment


class _Stream:
    """Line-based socket; every call has a deadline. After a timeout a ``sticky``
    stream refuses further use: a late reply would pass for the next answer."""

    def __init__(self, sock, name, fail, sticky):
        self.sock, self.name, self.fail, self.sticky = sock, name, fail, sticky
        self.buf, self.broken = bytearray(), None

    def _error(self, msg, wait=1.0):
        """``wait``: give a QEMU that dropped the connection time to exit."""
        self.broken = msg if self.sticky else None
        return self.fail(f"{self.name}: {msg}", wait=wait)

    def send(self, text, deadline):
        if self.broken:
            raise self.fail(f"{self.name} unusable after: {self.broken}")
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            self.sock.sendall(text.encode() + b"\n")
        except OSError as e:
            raise self._error(f"send failed: {e}") from None

    def readline(self, deadline):
        while (eol := self.buf.find(b"\n")) < 0:
            if deadline <= time.monotonic():
                raise self._error("no reply before the timeout", wait=0)
            self.sock.settimeout(deadline - time.monotonic())
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError as e:
                raise self._error(f"receive failed: {e}") from None
            if not chunk:
                raise self._error("QEMU closed the connection")
            self.buf += chunk
        line = self.buf[:eol].decode()
        del self.buf[:eol + 1]
        return line


class QTest:
    """QEMU under qtest control; a context manager (or call close()).

    ``args``: extra QEMU arguments. ``timeout`` (s, attribute) bounds every socket
    operation, so a hung QEMU fails the test. ``log``: qtest log file (default
    /dev/null; env LIBQTEST_LOG overrides). QEMU runs in its own session."""

    CHUNK = 1 << 16  # bytes per b64read/b64write: QEMU rescans its input per 1 KiB

    def __init__(self, binary, args=(), machine="q35", timeout=30.0, log=None,
                 firmware_dirs=FIRMWARE_DIRS, wrapper=()):
        self.timeout, self.proc, self.events = timeout, None, []
        self.irq_levels, self.irq_log = {}, []
        self._qmp_id, self._stderr, self._qt, self._qmp = 0, None, None, None
        self._dir = tempfile.mkdtemp(prefix="libqtest-")
        paths = [os.path.join(self._dir, n) for n in ("qtest.sock", "qmp.sock", "stderr")]
        log = os.environ.get("LIBQTEST_LOG", log or "/dev/null")
        # `wrapper` runs QEMU under another program (valgrind, say).
        self.argv = list(wrapper) + [binary, "-machine", machine, "-accel", "qtest",
                     "-qtest", "unix:" + paths[0], "-qtest-log", log,
                     "-qmp", "unix:" + paths[1], "-display", "none", "-nodefaults",
                     "-serial", "none", "-monitor", "none"]
        self.argv += [a for d in firmware_dirs if os.path.isdir(d) for a in ("-L", d)]
        self.argv += list(args)
        try:
            self._start(*paths)
        except BaseException:
            self.close(timeout=2)
            raise

    def _start(self, qtest_path, qmp_path, stderr_path):
        listeners = []
        try:
            for path in (qtest_path, qmp_path):  # QEMU connects as a client
                listeners.append(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
                listeners[-1].bind(path)
                listeners[-1].listen(1)
            self._err = open(stderr_path, "wb+")
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=self._err, stderr=self._err,
                start_new_session=True,  # PR_SET_PDEATHSIG: die with the test
                preexec_fn=lambda: _libc.prctl(1, signal.SIGKILL, 0, 0, 0))
            deadline = time.monotonic() + self.timeout
            socks = [self._accept(lsock, deadline) for lsock in listeners]
        finally:
            for lsock in listeners:
                lsock.close()
        self._qt = _Stream(socks[0], "qtest", self._failure, sticky=True)
        self._qmp = _Stream(socks[1], "QMP", self._failure, sticky=False)
        self._qmp_read(deadline)  # greeting
        self.qmp("qmp_capabilities")

    def _accept(self, lsock, deadline):
        lsock.settimeout(0.05)
        while True:
            try:
                return lsock.accept()[0]
            except socket.timeout:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise self._failure("QEMU did not connect to qtest/QMP") from None

    def _failure(self, msg, wait=0.0):
        """A QTestError with QEMU's exit status and stderr if it has exited (waiting
        up to ``wait`` s for a dying QEMU)."""
        try:
            if wait and self.proc:
                self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            pass
        code = self.returncode
        if code is not None:
            msg += f" [QEMU exited with status {code}; stderr: {self.stderr[-2000:]!r}]"
        return QTestError(msg, code, self.stderr)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def returncode(self):
        """QEMU's exit status (negative: killed by that signal); None while running."""
        return self.proc.poll() if self.proc else None

    @property
    def stderr(self):
        """QEMU's stderr (and stdout) so far; kept after close()."""
        if self._stderr is None and getattr(self, "_err", None):
            with open(self._err.name, "rb") as f:
                return f.read().decode(errors="replace")
        return self._stderr or ""

    def alive(self):
        """True while the QEMU process has not exited."""
        return self.returncode is None

    def responsive(self, timeout=5.0):
        """True if QEMU's main loop answers QMP query-status within ``timeout`` s."""
        try:
            self.qmp_raw("query-status", timeout=timeout)
            return True
        except QTestError:
            return False

    def kill(self):
        """SIGKILLs QEMU's process group and reaps QEMU."""
        if self.alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def close(self, timeout=None):
        """QMP quit, then SIGKILL of the process group if QEMU has not exited after
        ``timeout`` s; frees sockets and files. Idempotent; returns the exit status."""
        if self._stderr is not None:
            return self.returncode
        timeout = self.timeout if timeout is None else timeout
        if self.alive() and self._qmp:
            try:
                self.qmp_raw("quit", timeout=timeout)
            except QTestError:
                pass
        try:
            if self.proc:
                self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        for stream in (self._qt, self._qmp):
            if stream:
                stream.sock.close()
        self._stderr = self.stderr
        if getattr(self, "_err", None):
            self._err.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        return self.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # qtest protocol ----------------------------------------------------------------
    def _cmd(self, line, accept_fail=False):
        """Sends a qtest command and returns (ok, reply words after OK/FAIL). The
        asynchronous 'IRQ raise|lower N' lines that may precede a reply are recorded."""
        deadline = time.monotonic() + self.timeout
        self._qt.send(line, deadline)
        while True:
            words = self._qt.readline(deadline).split()
            if words[:1] == ["IRQ"] and len(words) == 3:
                self.irq_levels[int(words[2])] = words[1] == "raise"
                self.irq_log.append((int(words[2]), words[1] == "raise"))
            elif words[:1] == ["OK"] or (accept_fail and words[:1] == ["FAIL"]):
                return words[0] == "OK", words[1:]
            else:
                raise self._failure(f"qtest {line[:60]!r}: {' '.join(words)}")

    def _value(self, line):
        return int(self._cmd(line)[1][0], 0)

    def readb(self, addr): return self._value(f"readb {addr:#x}")
    def readw(self, addr): return self._value(f"readw {addr:#x}")
    def readl(self, addr): return self._value(f"readl {addr:#x}")
    def readq(self, addr): return self._value(f"readq {addr:#x}")
    def writeb(self, addr, val): self._cmd(f"writeb {addr:#x} {val & 0xFF:#x}")
    def writew(self, addr, val): self._cmd(f"writew {addr:#x} {val & 0xFFFF:#x}")
    def writel(self, addr, val): self._cmd(f"writel {addr:#x} {val & 0xFFFFFFFF:#x}")
    def writeq(self, addr, val): self._cmd(f"writeq {addr:#x} {val % (1 << 64):#x}")
    def inb(self, port): return self._value(f"inb {port:#x}")
    def inw(self, port): return self._value(f"inw {port:#x}")
    def inl(self, port): return self._value(f"inl {port:#x}")
    def outb(self, port, val): self._cmd(f"outb {port:#x} {val & 0xFF:#x}")
    def outw(self, port, val): self._cmd(f"outw {port:#x} {val & 0xFFFF:#x}")
    def outl(self, port, val): self._cmd(f"outl {port:#x} {val & 0xFFFFFFFF:#x}")

    def memread(self, addr, n):
        """``n`` bytes of guest-physical memory (b64read)."""
        return b"".join(base64.b64decode(self._cmd(
            f"b64read {addr + off:#x} {min(self.CHUNK, n - off):#x}")[1][0])
            for off in range(0, n, self.CHUNK))

    def memwrite(self, addr, data):
        """Writes bytes to guest-physical memory (b64write)."""
        for off in range(0, len(data), self.CHUNK):
            part = bytes(data[off:off + self.CHUNK])
            self._cmd(f"b64write {addr + off:#x} {len(part):#x} "
                      + base64.b64encode(part).decode())

    def memset(self, addr, n, byte):
        self._cmd(f"memset {addr:#x} {n:#x} {byte & 0xFF:#x}")

    def clock_step(self, ns=None):
        """Advances virtual time by ``ns``, or to the next timer deadline if None,
        running due timers; returns the new time (ns). QTestError if it cannot."""
        return self._value("clock_step" if ns is None else f"clock_step {ns}")

    def clock_set(self, ns):
        """Advances virtual time to ``ns``; returns it. QTestError if already past."""
        return self._value(f"clock_set {ns}")

    def clock_now(self):
        """Virtual time in ns. ('clock_step 0' is refused; 'clock_set 0' never moves
        the clock and its reply, OK or FAIL, carries the time.)"""
        return int(self._cmd("clock_set 0", accept_fail=True)[1][0], 0)

    def sync(self):
        """Side-effect-free round trip; collects IRQ lines QEMU sent meanwhile."""
        self._cmd("endianness")

    def irq_intercept_in(self, path):
        """Reports the GPIO inputs of the device at QOM ``path`` ("ioapic" on q35)
        in irq_levels {num: raised} and irq_log [(num, raised)]. One device only."""
        self._cmd(f"irq_intercept_in {path}")

    def irq_intercept_out(self, path, name=None):
        self._cmd(f"irq_intercept_out {path}" + (f" {name}" if name else ""))

    def irq_level(self, num):
        """Current intercepted level of line ``num`` (False if never raised)."""
        self.sync()
        return self.irq_levels.get(num, False)

    def pop_irq_log(self):
        """Returns and clears the [(num, raised)] transitions seen so far."""
        self.sync()
        log, self.irq_log = self.irq_log, []
        return log

    # QMP -------------------------------------------------------------------------------
    def _qmp_read(self, deadline):
        msg = json.loads(self._qmp.readline(deadline))
        if "event" in msg:
            self.events.append(msg)
        return msg

    def qmp_raw(self, cmd, args=None, timeout=None):
        """Sends a QMP command; returns the whole reply ({"return"} or {"error"})."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        self._qmp_id += 1
        msg = {"execute": cmd, "id": self._qmp_id}
        if args:
            msg["arguments"] = args
        self._qmp.send(json.dumps(msg), deadline)
        while True:  # events are stored on the way; stale replies skipped by id
            reply = self._qmp_read(deadline)
            if reply.get("id") == self._qmp_id:
                return reply

    def qmp(self, cmd, **args):
        """Runs a QMP command; returns its "return" value or raises QMPError.
        Hyphenated argument names: qmp("cmd", **{"x-arg": 1})."""
        reply = self.qmp_raw(cmd, args)
        if "error" in reply:
            raise QMPError(cmd, reply["error"])
        return reply["return"]

    def pop_events(self, name=None):
        """Returns and removes the QMP events received so far (all, or ``name``)."""
        got = [e for e in self.events if name in (None, e["event"])]
        self.events = [e for e in self.events if e not in got]
        return got

    def wait_event(self, name, timeout=None):
        """Returns and removes the first QMP event ``name``, reading QMP until it
        arrives; QTestError after ``timeout`` s."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for event in self.events:
                if event["event"] == name:
                    self.events.remove(event)
                    return event
            self._qmp_read(deadline)


def fault_plan(testcase, rules, seed=0):
    """A fault plan file (docs/faults.rst) holding `rules`, removed when `testcase`
    ends; returns its path."""
    fd, path = tempfile.mkstemp(prefix="dmalab-plan-", suffix=".json", dir="/tmp")
    with os.fdopen(fd, "w") as f:
        json.dump({"seed": seed, "rules": rules}, f)
    testcase.addCleanup(os.unlink, path)
    return path


def make_bdf(bus, dev, fn=0):
    """The 16-bit bus/device/function number PCI's methods take."""
    return bus << 8 | dev << 3 | fn


def bdf_str(bdf):
    return f"{bdf >> 8:02x}:{bdf >> 3 & 0x1F:02x}.{bdf & 7}"


Bar = collections.namedtuple("Bar", "addr size is_io is_64")
Msix = collections.namedtuple("Msix", "cap table pba count")


class PCI:
    """Config space, discovery and resources without firmware. On q35 this enables
    ECAM at ``ecam`` by writing the MCH's PCIEXBAR through 0xcf8 (SeaBIOS's job; reset
    leaves it off); ecam=None or another machine: 0xcf8/0xcfc only (offsets < 0x100).
    Memory BARs are allocated from ``mmio_start`` up to ``mmio_end`` (IOAPIC), IO BARs
    from port 0xc000. ``bars`` maps (bdf, bar) to the Bar placed by bar_map()."""

    def __init__(self, qt, ecam=Q35_ECAM, mmio_start=0xE0000000, mmio_end=0xFEC00000):
        self.qt, self.ecam, self.bars, self._parent, self._next_bus = qt, None, {}, {}, 1
        self._mmio, self._mmio_end, self._io = mmio_start, mmio_end, 0xC000
        if ecam is not None and self.pio_cfg_read(0, 0) == Q35_MCH_ID:
            self.pio_cfg_write(0, Q35_PCIEXBAR + 4, ecam >> 32)
            self.pio_cfg_write(0, Q35_PCIEXBAR, (ecam & 0xF0000000) | 1)
            self.ecam = ecam

    def pio_cfg_read(self, bdf, off, size=4):
        """Config read of 1/2/4 bytes through 0xcf8/0xcfc."""
        self.qt.outl(0xCF8, 0x80000000 | bdf << 8 | (off & 0xFC))
        return getattr(self.qt, "in" + "bwl"[size >> 1])(0xCFC + (off & 3))

    def pio_cfg_write(self, bdf, off, val, size=4):
        self.qt.outl(0xCF8, 0x80000000 | bdf << 8 | (off & 0xFC))
        getattr(self.qt, "out" + "bwl"[size >> 1])(0xCFC + (off & 3), val)

    def cfg_read(self, bdf, off, size=4):
        """Config read of 1/2/4 bytes: ECAM if enabled, else 0xcf8/0xcfc."""
        if self.ecam is None:
            return self.pio_cfg_read(bdf, off, size)
        return getattr(self.qt, "read" + "bwl"[size >> 1])(self.ecam + (bdf << 12) + off)

    def cfg_write(self, bdf, off, val, size=4):
        if self.ecam is None:
            return self.pio_cfg_write(bdf, off, val, size)
        getattr(self.qt, "write" + "bwl"[size >> 1])(self.ecam + (bdf << 12) + off, val)

    def _set_bits(self, bdf, off, bits, size=2):
        self.cfg_write(bdf, off, self.cfg_read(bdf, off, size) | bits, size)

    def devices(self, bus=0, bridges=True):
        """[(bdf, vendor, device)] on ``bus`` and, with ``bridges``, behind its PCI
        bridges, which get bus numbers if they have none (closed windows, bus master)."""
        found = []
        for bdf in range(bus << 8, (bus + 1) << 8):
            ids = self.cfg_read(bdf, 0)
            if ids in (0, 0xFFFFFFFF):
                continue
            found.append((bdf, ids & 0xFFFF, ids >> 16))
            if bridges and self.cfg_read(bdf, 0x0E, 1) & 0x7F == 1:
                found += self._scan_bridge(bus, bdf)
        return found

    def _scan_bridge(self, bus, bdf):
        sec = self.cfg_read(bdf, 0x19, 1)
        if sec == 0:
            sec, self._next_bus = self._next_bus, self._next_bus + 1
            self.cfg_write(bdf, 0x18, 0xFF << 16 | sec << 8 | bus)
            self.cfg_write(bdf, 0x20, 0xFFF0)  # memory window: base > limit, closed
            self.cfg_write(bdf, 0x24, 0xFFF0)  # prefetchable window too
        self._parent[sec] = bdf
        self._set_bits(bdf, 0x04, 0x6)
        below = self.devices(sec)
        self.cfg_write(bdf, 0x1A, max([sec] + [b >> 8 for b, _, _ in below]), 1)
        return below

    def find_device(self, vendor, device, index=0, bridges=True):
        """BDF of the ``index``-th function with these IDs, or None."""
        hits = [b for b, v, d in self.devices(0, bridges) if (v, d) == (vendor, device)]
        return hits[index] if index < len(hits) else None

    def find_capability(self, bdf, cap_id):
        """Config offset of standard capability ``cap_id``, or None."""
        has_list = self.cfg_read(bdf, 0x06, 2) & 0x10  # status: capability list
        off = self.cfg_read(bdf, 0x34, 1) & 0xFC if has_list else 0
        for _ in range(48):
            if off == 0:
                return None
            if self.cfg_read(bdf, off, 1) == cap_id:
                return off
            off = self.cfg_read(bdf, off + 1, 1) & 0xFC
        return None

    def find_ext_capability(self, bdf, cap_id):
        """Offset (>= 0x100) of PCIe extended capability ``cap_id``, or None (also
        without ECAM, and for conventional PCI functions)."""
        off = 0x100 if self.ecam is not None else 0
        while off >= 0x100:
            hdr = self.cfg_read(bdf, off)
            if hdr in (0, 0xFFFFFFFF):
                return None
            if hdr & 0xFFFF == cap_id:
                return off
            off = hdr >> 20 & 0xFFC
        return None

    def bar_size(self, bdf, bar):
        """(size, is_io, is_64) of BAR ``bar`` by the all-ones probe (size 0: none);
        decoding is off meanwhile and the BAR restored."""
        reg, cmd = 0x10 + 4 * bar, self.cfg_read(bdf, 0x04, 2)
        self.cfg_write(bdf, 0x04, cmd & ~0x3, 2)
        low = self.cfg_read(bdf, reg)
        is_io, is_64 = bool(low & 1), low & 0x7 == 0x4
        probe = 0
        for i, r in enumerate([reg, reg + 4] if is_64 else [reg]):
            saved = self.cfg_read(bdf, r)
            self.cfg_write(bdf, r, 0xFFFFFFFF)
            probe |= self.cfg_read(bdf, r) << 32 * i
            self.cfg_write(bdf, r, saved)
        self.cfg_write(bdf, 0x04, cmd, 2)
        if is_io and probe and not probe >> 16:
            probe |= 0xFFFF0000  # 16-bit IO decoder
        mask = (1 << (64 if is_64 else 32)) - 1
        probe &= mask & ~(0x3 if is_io else 0xF)
        return ((~probe & mask) + 1 if probe else 0), is_io, is_64

    def bar_map(self, bdf, bar, addr=None):
        """Sizes BAR ``bar`` (64-bit aware), puts it at ``addr`` or the next free
        aligned address (below 4 GiB, outside ECAM), widens upstream bridge windows,
        enables memory (or IO) decoding and bus mastering. Returns the address."""
        size, is_io, is_64 = self.bar_size(bdf, bar)
        if size == 0:
            raise QTestError(f"{bdf_str(bdf)} has no BAR{bar}")
        if addr is None and is_io:
            addr = _align(self._io, size)
            self._io = addr + size
        elif addr is None:
            addr = _align(self._mmio, max(size, 4096))
            if self.ecam is not None and self.ecam < addr + size and \
                    addr < self.ecam + Q35_ECAM_SIZE:
                addr = _align(self.ecam + Q35_ECAM_SIZE, max(size, 4096))
            if addr + size > self._mmio_end:
                raise QTestError(f"no MMIO space for {bdf_str(bdf)} BAR{bar}")
            self._mmio = addr + size
        self.cfg_write(bdf, 0x10 + 4 * bar, addr & 0xFFFFFFFF)
        if is_64:
            self.cfg_write(bdf, 0x14 + 4 * bar, addr >> 32)
        bus = bdf >> 8
        while bus in self._parent and not is_io:  # bridge memory windows, 1 MiB units
            br = self._parent[bus]
            base, limit = (self.cfg_read(br, o, 2) << 16 for o in (0x20, 0x22))
            lo, hi = addr, addr + size - 1
            if base <= limit:
                lo, hi = min(lo, base), max(hi, limit)
            self.cfg_write(br, 0x20, (hi >> 16 & 0xFFF0) << 16 | lo >> 16 & 0xFFF0)
            bus = br >> 8
        self._set_bits(bdf, 0x04, (0x1 if is_io else 0x2) | 0x4)
        self.bars[bdf, bar] = Bar(addr, size, is_io, is_64)
        return addr

    def bar_addr(self, bdf, bar):
        """Address of BAR ``bar``, mapping it with bar_map() first if needed."""
        if (bdf, bar) not in self.bars:
            self.bar_map(bdf, bar)
        return self.bars[bdf, bar].addr

    def msix_info(self, bdf):
        """Msix(cap, table, pba, count): guest-physical table/PBA addresses (their
        BARs are mapped if needed). QTestError without an MSI-X capability."""
        cap = self.find_capability(bdf, 0x11)
        if cap is None:
            raise QTestError(f"{bdf_str(bdf)} has no MSI-X capability")
        count = (self.cfg_read(bdf, cap + 2, 2) & 0x7FF) + 1
        table, pba = self.cfg_read(bdf, cap + 4), self.cfg_read(bdf, cap + 8)
        return Msix(cap, self.bar_addr(bdf, table & 7) + (table & ~7),
                    self.bar_addr(bdf, pba & 7) + (pba & ~7), count)

    def msix_enable(self, bdf):
        """Enables MSI-X and bus mastering and clears the function mask; vectors
        stay masked (reset state) until msix_set_vector(). Returns msix_info()."""
        info = self.msix_info(bdf)
        self._set_bits(bdf, 0x04, 0x4)
        ctrl = self.cfg_read(bdf, info.cap + 2, 2)
        self.cfg_write(bdf, info.cap + 2, (ctrl | 0x8000) & ~0x4000, 2)
        return info

    def msix_set_vector(self, bdf, vector, addr, data, masked=False):
        """Programs table entry ``vector`` to store 32-bit ``data`` at ``addr``
        (a RAM address works, see the module docstring) and unmasks it."""
        entry = self.msix_info(bdf).table + 16 * vector
        self.qt.writel(entry + 12, 1)
        for off, val in ((0, addr & 0xFFFFFFFF), (4, addr >> 32), (8, data),
                         (12, int(masked))):
            self.qt.writel(entry + off, val)

    def msix_vector(self, bdf, vector):
        """(addr, data, vector_control) read back from table entry ``vector``."""
        entry = self.msix_info(bdf).table + 16 * vector
        lo, hi, data, ctrl = (self.qt.readl(entry + 4 * i) for i in range(4))
        return hi << 32 | lo, data, ctrl

    def msix_mask(self, bdf, vector, masked=True):
        self.qt.writel(self.msix_info(bdf).table + 16 * vector + 12, int(masked))

    def msix_pending(self, bdf, vector):
        """PBA bit of ``vector``: it fired while masked."""
        pba = self.msix_info(bdf).pba + 8 * (vector // 64)
        return bool(self.qt.readq(pba) >> vector % 64 & 1)

    def msi_enable(self, bdf, addr, data):
        """Enables single-vector MSI storing 16-bit ``data`` (zero-extended to 32 bits)
        at ``addr`` (high dword used if the function is 64-bit capable), unmasks it,
        enables bus mastering. Returns the capability offset."""
        cap = self.find_capability(bdf, 0x05)
        if cap is None:
            raise QTestError(f"{bdf_str(bdf)} has no MSI capability")
        ctrl = self.cfg_read(bdf, cap + 2, 2)
        is_64 = bool(ctrl & 0x80)
        if addr >> 32 and not is_64:
            raise QTestError(f"{bdf_str(bdf)}: MSI is 32-bit, {addr:#x} out of reach")
        self.cfg_write(bdf, cap + 4, addr & 0xFFFFFFFF)
        if is_64:
            self.cfg_write(bdf, cap + 8, addr >> 32)
        self.cfg_write(bdf, cap + (0xC if is_64 else 0x8), data & 0xFFFF, 2)
        if ctrl & 0x100:  # per-vector masking
            self.cfg_write(bdf, cap + (0x10 if is_64 else 0xC), 0)
        self._set_bits(bdf, 0x04, 0x4)
        self.cfg_write(bdf, cap + 2, (ctrl & ~0x70) | 1, 2)  # MME = 1 vector, enable
        return cap


class GuestAlloc:
    """Bump allocator for test buffers in guest RAM from ``start`` (16 MiB) to ``end``
    (default: RAM size from QMP, capped at 2 GiB, below q35's 32-bit PCI hole)."""

    def __init__(self, qt, start=16 << 20, end=None):
        if end is None:
            end = min(qt.qmp("query-memory-size-summary")["base-memory"], 0x80000000)
        self.qt, self.start, self.next, self.end = qt, start, start, end

    def alloc(self, size, align=4096, fill=None):
        """Guest address of ``size`` free bytes aligned to ``align``, memset to
        ``fill`` if given."""
        addr = _align(self.next, align)
        if addr + size > self.end:
            raise QTestError(f"guest RAM exhausted allocating {size:#x} bytes")
        self.next = addr + size
        if fill is not None:
            self.qt.memset(addr, size, fill)
        return addr

    def reset(self):
        self.next = self.start


def qemu_from_argv(argv):
    """For a test file run as ``FILE QEMU_BINARY [unittest options]`` (or with QEMU
    in the environment): the QEMU binary's absolute path and the remaining
    arguments for unittest. Exits with a usage line when there is none."""
    args = list(argv[1:])
    qemu = None
    if args and ("/" in args[0] or os.path.isfile(args[0])):  # else a test name
        qemu = args.pop(0)
    qemu = qemu or os.environ.get("QEMU")
    if not qemu or not os.access(qemu, os.X_OK):
        raise SystemExit(f"usage: {argv[0]} QEMU_BINARY [unittest options] "
                         "(or set QEMU)")
    return os.path.abspath(qemu), [argv[0]] + args
