# SPDX-License-Identifier: GPL-2.0-or-later
"""A vhost-user network backend for a boot (runner.py --vhost-user-net): dmalab's
own (vhost_backend.py) or DPDK's testpmd from Debian's dpdk package, one
vhost-user port with the vhost IOTLB protocol on, returning every frame it
receives with its MAC addresses swapped.  The guest's virtio-net device sits
behind the platform IOMMU (iommu_platform=on), so the backend reaches guest
memory only through translations it asks QEMU for, and drops them when QEMU's
IOMMU notifiers tell it to."""

import os
import re
import sys
import shutil
import signal
import subprocess
import tempfile
import time

TESTPMD = "dpdk-testpmd"
# testpmd's exit statistics: "RX-packets: N  RX-dropped: N  RX-total: N"
STATS = re.compile(r"^\s*(RX|TX)-packets:\s*(\d+)\s+\1-dropped:\s*(\d+)")


# Debugging: DMALAB_KEEP_TESTPMD_LOG=FILE keeps testpmd's log, with vhost's debug
# messages (every IOTLB message), in FILE.
KEEP_LOG = os.environ.get("DMALAB_KEEP_TESTPMD_LOG")


class BackendError(Exception):
    pass


class VhostUserNet:
    """A backend serving one vhost-user socket, for one QEMU run.

    start() returns QEMU's arguments (shared guest memory, the netdev and the
    virtio-net device); stop() ends the backend with SIGINT, which prints its
    counts, and returns them as serial-style lines "vhost-user: ..." for the
    judge's --expect-line."""

    def __init__(self, memory, ats=False, backend="dmalab"):
        self.memory = memory
        self.ats = ats
        self.backend = backend  # "dmalab" (harness/vhost_backend.py) or "testpmd"
        self.dir = None
        self.proc = None
        self.log = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="dmalab-vhu-")
        sock = os.path.join(self.dir, "sock")
        self.log = open(os.path.join(self.dir, "backend.log"), "w+")
        if self.backend == "dmalab":
            self.proc = subprocess.Popen(
                [sys.executable, os.path.join(os.path.dirname(__file__), "vhost_backend.py"),
                 sock], stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                start_new_session=True)
        else:
            self.start_testpmd(sock)
        deadline = time.monotonic() + 30
        while not os.path.exists(sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise BackendError("the backend did not open %s: %s" % (sock, self.tail()))
            time.sleep(0.1)
        return self.qemu_args(sock)

    def start_testpmd(self, sock):
        exe = shutil.which(TESTPMD)
        if not exe:
            raise BackendError("%s not found: install Debian's dpdk package" % TESTPMD)
        # A packet whose buffer needs a translation testpmd does not have yet
        # is dropped unless the forwarding mode retries (vhost's IOTLB misses
        # are answered asynchronously): retry, and wait a little per retry.
        cmds = os.path.join(self.dir, "commands")
        with open(cmds, "w") as f:
            f.write("set fwd macswap retry\nset burst tx delay 1000 retry 200\n")
        # Two lcores (the main one, mostly asleep, and one forwarding), no
        # hugepages, no PCI, nothing shared with other DPDK processes.  The
        # forwarding lcore polls its port: it keeps one host CPU busy.  With a
        # stats period testpmd runs until signalled instead of reading stdin.
        self.proc = subprocess.Popen(
            [exe, "-l", "0-1", "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
             "--file-prefix=dmalab-%d" % os.getpid(),
             "--vdev", "net_vhost0,iface=%s,iommu-support=1" % sock]
            + (["--log-level=lib.vhost.*:debug"] if KEEP_LOG else [])
            + [
             "--", "--auto-start", "--cmdline-file=%s" % cmds,
             "--total-num-mbufs=16384", "--stats-period=3600"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def qemu_args(self, sock):
        netdev = ("virtio-net-pci,netdev=dlx-net,iommu_platform=on,"
                  "disable-legacy=on,romfile=")
        args = ["-object", "memory-backend-memfd,id=dlx-mem,size=%s,share=on" % self.memory,
                "-machine", "memory-backend=dlx-mem",
                "-chardev", "socket,id=dlx-vu,path=%s" % sock,
                "-netdev", "vhost-user,id=dlx-net,chardev=dlx-vu"]
        if self.ats:
            # ATS needs a PCIe function: on the root bus virtio-pci is not one
            args += ["-device", "pcie-root-port,id=dlx-net-rp,chassis=2"]
            netdev += ",bus=dlx-net-rp,ats=on"
        return args + ["-device", netdev]

    def tail(self, n=5):
        if not self.log:
            return ""
        self.log.seek(0)
        return " | ".join(self.log.read().splitlines()[-n:])

    def stop(self):
        """Ends the backend; its packet counts as lines for the judge."""
        lines = []
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                lines.append("vhost-user: the backend did not stop on SIGINT")
        if self.log:
            self.log.seek(0)
            counts = {}
            for line in self.log:
                m = STATS.match(line)
                if m:  # the last (all ports) wins
                    counts[m.group(1)] = "%s (%s dropped)" % (m.group(2), m.group(3))
            if self.backend == "dmalab":
                self.log.seek(0)
                lines += [ln.rstrip("\n") for ln in self.log if ln.startswith("vhost-user:")]
            else:
                lines.append("vhost-user: testpmd received %s, sent %s" % (
                    counts.get("RX", "?"), counts.get("TX", "?")))
            if KEEP_LOG:
                self.log.seek(0)
                with open(KEEP_LOG, "w") as f:
                    f.write(self.log.read())
            self.log.close()
            self.log = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        return lines
