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
import ctypes
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import sys
import time

# The one QMP client, shared with the guest harness.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "guest-tests"))
from harness.qmp import LineStream, Qmp  # noqa: E402

# bios-256k.bin is loaded even under -accel qtest; a build tree does not ship it.
FIRMWARE_DIRS = ("/usr/share/seabios", "/usr/share/qemu")
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


# The widths of qtest's memory and port commands: (suffix, bits). readb(addr) is
# read(addr, 1), writeq(addr, val) write(addr, val, 8), and so on; x86 port IO has no q.
WIDTHS = (("b", 8), ("w", 16), ("l", 32), ("q", 64))
SUFFIX = {bits // 8: suffix for suffix, bits in WIDTHS}


def _per_width(cls):
    """Adds readX/writeX for each width, and inX/outX up to 32 bits, to class ``cls``."""
    for suffix, bits in WIDTHS:
        methods = [("read", cls.read), ("write", cls.write)]
        if bits <= 32:
            methods += [("in", cls.port_in), ("out", cls.port_out)]
        for prefix, method in methods:
            setattr(cls, prefix + suffix, functools.partialmethod(method, size=bits // 8))
    return cls


@_per_width
class QTest:
    """QEMU under qtest control; a context manager (or call close()).

    ``args``: extra QEMU arguments. ``timeout`` (s, attribute) bounds every socket
    operation, so a hung QEMU fails the test. ``log``: qtest log file (default
    /dev/null; env LIBQTEST_LOG overrides). QEMU runs in its own session."""

    CHUNK = 1 << 16  # bytes per b64read/b64write: QEMU rescans its input per 1 KiB

    def __init__(self, binary, args=(), machine="q35", timeout=30.0, log=None,
                 firmware_dirs=FIRMWARE_DIRS, wrapper=()):
        self.timeout, self.proc, self._early_events = timeout, None, []
        self.irq_levels, self.irq_log = {}, []
        self._stderr, self._qt, self._qmp = None, None, None
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
        self._qt = LineStream(socks[0], "qtest", self._failure, sticky=True)
        self._qmp = Qmp(socks[1], self.timeout, self._failure)

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
        if self._qt:
            self._qt.sock.close()
        if self._qmp:
            self._qmp.close()
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

    def read(self, addr, size):
        """The ``size``-byte (1, 2, 4 or 8) little-endian value at guest-physical ``addr``."""
        return self._value(f"read{SUFFIX[size]} {addr:#x}")

    def write(self, addr, val, size):
        """Writes ``val``, cut to ``size`` bytes, at guest-physical ``addr``."""
        self._cmd(f"write{SUFFIX[size]} {addr:#x} {val & ((1 << 8 * size) - 1):#x}")

    def port_in(self, port, size):
        """The ``size``-byte (1, 2 or 4) value read from IO port ``port``."""
        return self._value(f"in{SUFFIX[size]} {port:#x}")

    def port_out(self, port, val, size):
        """Writes ``val``, cut to ``size`` bytes, to IO port ``port``."""
        self._cmd(f"out{SUFFIX[size]} {port:#x} {val & ((1 << 8 * size) - 1):#x}")

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

    def set_irq_in(self, path, num, level, name="unnamed-gpio-in"):
        """Drives GPIO input ``num`` of the device at QOM ``path`` ("ioapic" on q35)."""
        self._cmd(f"set_irq_in {path} {name} {num} {int(level)}")

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

    # QMP: the shared client (guest-tests/harness/qmp.py) --------------------------------
    @property
    def events(self):
        """QMP events received and not yet taken."""
        return self._qmp.events if self._qmp else self._early_events

    def qmp_raw(self, cmd, args=None, timeout=None):
        """Sends a QMP command; returns the whole reply ({"return"} or {"error"})."""
        return self._qmp.raw(cmd, args, self.timeout if timeout is None else timeout)

    def qmp(self, cmd, **args):
        """Runs a QMP command; returns its "return" value or raises QMPError.
        Hyphenated argument names: qmp("cmd", **{"x-arg": 1})."""
        reply = self.qmp_raw(cmd, args)
        if "error" in reply:
            raise QMPError(cmd, reply["error"])
        return reply["return"]

    def counter(self, path, name):
        """One counter of the device at QOM path ``path``, from its "counters" property
        (every counter by name, read in one query)."""
        return self.qmp("qom-get", path=path, property="counters")[name]

    def pop_events(self, name=None):
        """Returns and removes the QMP events received so far (all, or ``name``)."""
        return self._qmp.pop_events(name)

    def wait_event(self, name, timeout=None):
        """Returns and removes the first QMP event ``name``, reading QMP until it
        arrives; QTestError after ``timeout`` s."""
        return self._qmp.wait_event(name, self.timeout if timeout is None else timeout)


def fault_plan(testcase, rules, seed=0):
    """A fault plan file (docs/faults.rst) holding `rules`, removed when `testcase`
    ends; returns its path."""
    fd, path = tempfile.mkstemp(prefix="dmalab-plan-", suffix=".json", dir="/tmp")
    with os.fdopen(fd, "w") as f:
        json.dump({"seed": seed, "rules": rules}, f)
    testcase.addCleanup(os.unlink, path)
    return path


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


# PCI and guest memory over qtest live in libqos.py (which needs QTestError
# from above); the tests take them from here.
from libqos import (  # noqa: E402
    Q35_ECAM, Q35_ECAM_SIZE, Bar, GuestAlloc, Msix, PCI, bdf_str, make_bdf)

__all__ = ["FIRMWARE_DIRS", "QTest", "QTestError", "QMPError", "fault_plan",
           "qemu_from_argv", "Q35_ECAM", "Q35_ECAM_SIZE", "Bar", "GuestAlloc",
           "Msix", "PCI", "bdf_str", "make_bdf"]
