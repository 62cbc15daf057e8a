#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Device-level tests of dmalab-dsa over qtest: the PCI function as idxd finds it, a
dedicated WQ brought up with idxd's commands, descriptors through the portal with records
and MSI-X completions, counters, a guest that aims the device at itself, ROM and nothing,
and migration in the middle of a copy. Each test starts its own QEMU and checks it exits
cleanly. Also fault plans through the properties and the fault doorbell.

Usage: dsa_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import random
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libqtest import Q35_ECAM, PCI, GuestAlloc, QMPError, QTest, QTestError, fault_plan  # noqa: E402
import qtest_case  # noqa: E402
from qtest_case import MachineCase, launch, main  # noqa: E402
from dsa_rig import (  # noqa: E402
    BATCH, CMD, CRAV, CRCGEN, DEVICE, GENSTS, INTCAUSE, MEMMOVE, NOOP, RCI, RCR,
    SUCCESS, SWERR0, SWERR2, VENDOR, VERSION, WQ_STATUS, WQCAP, Dsa, descriptor)

ID = "dsa"
QOM = "/machine/peripheral/" + ID
DEV = "dmalab-dsa,id=" + ID
UNASSIGNED = 0x4000_0000_0000  # no memory, no device: DMA there is a decode error
BIOS_ROM = 0xFFFF_0000         # the firmware's ROM at the top of 4 GiB
COMPLETION_RECORD_FAULT = 0x1A


class DsaCase(MachineCase):
    """Checks that every QEMU a test started exited with status 0, printing nothing but
    what the test allowed (no re-entrancy block, assertion or abort)."""
    FORBIDDEN = ("blocked", "assert", "abort")
    STDERR_ALLOWED_ONLY = True
    WRAPPER = ()        # a command QEMU runs under (valgrind)
    TIMEOUT = 30.0

    def boot(self, props="", args=(), allowed=()):
        dsa = launch(lambda: Dsa(qtest_case.QEMU, DEV + props, list(args),
                                 timeout=self.TIMEOUT, wrapper=self.WRAPPER))
        self.track(dsa.qt, allowed)
        return dsa

    def qom(self, dsa, prop):
        return dsa.qt.qmp("qom-get", path=QOM, property=prop)

    def copy(self, dsa, size, seed, flags=CRAV | RCR | RCI, completion=None, dst=None):
        """A memmove as idxd_dma_submit_memcpy sends it; returns (src data, dst, record)."""
        data = random.Random(seed).randbytes(size)
        src = dsa.mem.alloc(size)
        dsa.qt.memwrite(src, data)
        if dst is None:
            dst = dsa.mem.alloc(size, fill=0)
        if completion is None:
            completion = dsa.mem.alloc(32, align=32, fill=0)
        dsa.submit(0, descriptor(MEMMOVE, flags, completion, src, dst, size, handle=1))
        return data, dst, completion


class Identity(DsaCase):
    def test_what_idxd_probes(self):
        dsa = self.boot()
        self.assertEqual(dsa.pci.cfg_read(dsa.bdf, 0x00), DEVICE << 16 | VENDOR)
        self.assertEqual(dsa.pci.cfg_read(dsa.bdf, 0x08) >> 8, 0x088000, "class code")
        self.assertEqual(dsa.pci.bar_size(dsa.bdf, 0)[0], 0x10000)
        self.assertEqual(dsa.pci.bar_size(dsa.bdf, 2)[0], 8 * 0x4000, "8 WQs of portals")
        self.assertEqual(dsa.nvec, 9, "vector 0 and one per WQ")
        self.assertEqual(dsa.rd(VERSION), 0x100)
        self.assertEqual(dsa.rd(WQCAP, 8) >> 16 & 0xFF, 8)

    def test_geometry_properties_shape_the_device(self):
        dsa = self.boot(",wqs=3,msix-vectors=4,engines=2")
        self.assertEqual(dsa.pci.bar_size(dsa.bdf, 2)[0], 0x10000, "3 WQs, rounded up")
        self.assertEqual(dsa.nvec, 4)
        self.assertEqual(dsa.rd(WQCAP, 8) >> 16 & 0xFF, 3)

    def test_impossible_geometry_is_refused_at_realize(self):
        for props, words in ((",wqs=0", "wqs must be"), (",msix-vectors=20", "msix-vectors"),
                             (",opcap=0x400", "opcap names an operation DSA 1.0 does not have")):
            with self.subTest(props):
                with self.assertRaises(QTestError) as cm:
                    launch(lambda: QTest(qtest_case.QEMU, ["-device", DEV + props]))
                self.assertEqual(cm.exception.returncode, 1)
                self.assertIn("dmalab-dsa: " + words, cm.exception.stderr)


class DataPath(DsaCase):
    def test_a_memcpy_with_its_record_and_interrupt(self):
        dsa = self.boot()
        dsa.bring_up()
        self.assertEqual(dsa.rd(dsa.wq_reg(0, WQ_STATUS)) >> 30, 1, "WQ enabled")
        data, dst, rec = self.copy(dsa, 8192, 1)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(dsa.qt.memread(dst, 8192), data)
        self.assertEqual(dsa.irq_word(1), 0xD1, "WQ 0's vector (handle 1)")
        self.assertEqual(dsa.qt.counter(QOM, "descriptors"), 1)
        self.assertEqual(dsa.qt.counter(QOM, "bytes"), 8192)
        self.assertEqual(dsa.qt.counter(QOM, "records"), 1)

    def test_crc_of_the_check_string(self):
        dsa = self.boot()
        dsa.bring_up()
        src = dsa.mem.alloc(16)
        dsa.qt.memwrite(src, b"123456789")
        rec = dsa.mem.alloc(32, align=32, fill=0)
        dsa.submit(0, descriptor(CRCGEN, CRAV | RCR, rec, src, 0, 9))
        dsa.settle()
        status, _, _, _, crc = dsa.record(rec)
        self.assertEqual((status, crc), (SUCCESS, 0xE3069283))

    def test_a_store_of_fewer_than_64_bytes_is_no_descriptor(self):
        dsa = self.boot()
        dsa.bring_up()
        rec = dsa.mem.alloc(32, align=32, fill=0)
        words = descriptor(NOOP, CRAV | RCR, rec)
        at = dsa.bar2 + 0x1000
        for i, w in enumerate(words[:5]):
            dsa.qt.writeq(at + 8 * i, w)
        dsa.qt.writel(at + 0x40, 0)   # the store ends: a 4-byte write elsewhere
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], 0, "no record")
        self.assertEqual(dsa.qt.counter(QOM, "dropped"), 2)
        self.assertEqual(dsa.qt.counter(QOM, "submitted"), 0)
        dsa.submit(0, words)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS, "the next whole store is taken")


BLOCKED = "Blocked re-entrant IO"


class Hostile(DsaCase):
    """A guest aims records, data and interrupt messages at the device's own BARs, at ROM
    and at nothing: each gets its architected answer and QEMU carries on. QEMU's
    re-entrancy guard, which the glue engages around the engines' steps, refuses what
    reaches the device's own BARs and says so once."""
    FORBIDDEN = ("assert", "abort")

    def boot(self, props="", args=(), allowed=(BLOCKED,)):
        return super().boot(props, args, allowed)

    def test_records_aimed_at_itself_rom_and_nothing(self):
        dsa = self.boot()
        dsa.bring_up()
        for where in (dsa.bar0 + CMD, dsa.bar2 + 0x1000, UNASSIGNED, BIOS_ROM):
            with self.subTest(hex(where)):
                dsa.wr(SWERR0, dsa.rd(SWERR0, 8), 8)   # idxd clears VALID and OVERFLOW
                dsa.wr(INTCAUSE, dsa.rd(INTCAUSE))
                self.copy(dsa, 256, where, completion=where)
                dsa.settle()
                self.assertEqual(dsa.rd(GENSTS) & 3, 1, "still enabled")
                swerr = dsa.rd(SWERR0, 8)
                if where != BIOS_ROM:
                    self.assertEqual(swerr & 1, 1, "SWERR valid")
                    self.assertEqual(swerr >> 8 & 0xFF, COMPLETION_RECORD_FAULT)
                    self.assertEqual(dsa.rd(SWERR2, 8), where)
        self.assertEqual(dsa.qt.counter(QOM, "submitted"), 4)
        self.assertEqual(dsa.qt.counter(QOM, "descriptors"), 4)
        # And it still works.
        data, dst, rec = self.copy(dsa, 4096, 9)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(dsa.qt.memread(dst, 4096), data)

    def test_data_aimed_at_its_own_registers(self):
        dsa = self.boot()
        dsa.bring_up()
        data, dst, rec = self.copy(dsa, 4096, 3, dst=dsa.bar0)
        dsa.settle()
        status = dsa.record(rec)[0]
        self.assertEqual(status & 0x7F, 0x20, "a hardware error: the access was refused")
        self.assertEqual(status & 0x80, 0, "the R/W bit is the page faults' only")
        self.assertEqual(dsa.rd(GENSTS) & 3, 1)

    def test_an_interrupt_message_aimed_at_its_own_registers(self):
        dsa = self.boot()
        dsa.bring_up()
        dsa.pci.msix_set_vector(dsa.bdf, 1, dsa.bar0 + CMD, 0x00500000)  # Reset Device
        before = dsa.qt.counter(QOM, "interrupts")
        data, dst, rec = self.copy(dsa, 512, 4)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(dsa.rd(GENSTS) & 3, 1, "the message reset nothing")
        self.assertEqual(dsa.qt.counter(QOM, "interrupts"), before, "a refused message is none")
        self.assertIn(BLOCKED, dsa.qt.stderr)


    def test_an_flr_in_the_middle_of_a_batch(self):
        dsa = self.boot(",bandwidth=1G,step-bytes=4096")
        dsa.bring_up()
        size, n = 64 << 10, 8
        lst = dsa.mem.alloc(64 * n, align=64, fill=0)
        recs = dsa.mem.alloc(32 * n, align=32, fill=0)
        for i in range(n):
            src, dst = dsa.mem.alloc(size, fill=0x11), dsa.mem.alloc(size, fill=0)
            words = descriptor(MEMMOVE, CRAV | RCR, recs + 32 * i, src, dst, size)
            dsa.qt.memwrite(lst + 64 * i, struct.pack("<8Q", *words))
        brec = dsa.mem.alloc(32, align=32, fill=0)
        dsa.submit(0, descriptor(BATCH, CRAV | RCR, brec, lst, 0, n))
        dsa.qt.clock_step(300_000)   # 128 KiB of traffic each at 1 GB/s: two or so done
        done = [dsa.record(recs + 32 * i)[0] for i in range(n)]
        self.assertIn(SUCCESS, done)
        self.assertIn(0, done)
        exp = dsa.pci.find_capability(dsa.bdf, 0x10)
        devctl = dsa.pci.cfg_read(dsa.bdf, exp + 8, 2)
        dsa.pci.cfg_write(dsa.bdf, exp + 8, devctl | 0x8000, 2)   # Initiate FLR
        dsa.bar0 = dsa.pci.bar_map(dsa.bdf, 0, dsa.bar0)   # the reset cleared the BARs
        dsa.bar2 = dsa.pci.bar_map(dsa.bdf, 2, dsa.bar2)
        self.assertEqual(dsa.rd(GENSTS) & 3, 0, "disabled by the reset")
        self.assertEqual(dsa.rd(dsa.wq_reg(0, WQ_STATUS)) >> 30, 0, "WQ 0 disabled")
        dsa.settle()
        self.assertEqual([dsa.record(recs + 32 * i)[0] for i in range(n)], done,
                         "nothing completes after the reset")
        self.assertEqual(dsa.record(brec)[0], 0, "nor the batch")
        dsa.bring_up()
        data, dst, rec = self.copy(dsa, 4096, 11)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(dsa.qt.memread(dst, 4096), data)

    def test_unplugged_by_its_own_dma(self):
        """A batch's first copy writes the slot control of the root port above the
        function: QEMU unplugs it in the middle of the engine's step. The model stops
        there and is freed when the step returns; the second copy never runs."""
        dsa = self.boot(",bus=rp", ["-global",
                                    "ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off",
                                    "-device", "pcie-root-port,id=rp,chassis=1,slot=1"])
        dsa.bring_up()
        rp = dsa.pci.find_device(0x1B36, 0x000C)
        exp = dsa.pci.find_capability(rp, 0x10)
        sltctl = dsa.pci.cfg_read(rp, exp + 0x18, 2)
        src = dsa.mem.alloc(64, fill=0)
        # Slot power and power indicator off: QEMU unplugs the function at once.
        dsa.qt.writew(src, (sltctl & ~0x0300) | 0x0700)
        big, dst = dsa.mem.alloc(1 << 20, fill=0x5A), dsa.mem.alloc(1 << 20, fill=0)
        lst = dsa.mem.alloc(128, align=64, fill=0)
        dsa.qt.memwrite(lst, struct.pack(
            "<8Q", *descriptor(MEMMOVE, 0, 0, src, Q35_ECAM + (rp << 12) + exp + 0x18, 2)))
        dsa.qt.memwrite(lst + 64, struct.pack("<8Q", *descriptor(MEMMOVE, 0, 0, big, dst,
                                                                 1 << 20)))
        brec = dsa.mem.alloc(32, align=32, fill=0)
        dsa.submit(0, descriptor(BATCH, CRAV | RCR, brec, lst, 0, 2))
        dsa.settle()
        self.assertTrue(dsa.qt.responsive())
        self.assertIsNone(dsa.pci.find_device(VENDOR, DEVICE))
        self.assertEqual(dsa.qt.memread(dst, 64), bytes(64))
        self.assertEqual(dsa.record(brec)[0], 0, "no record after the unplug")
        names = [c["name"] for c in dsa.qt.qmp("qom-list", path="/machine/peripheral")]
        self.assertNotIn(ID, names)
        dsa.qt.clock_step(10_000_000)
        self.assertTrue(dsa.qt.responsive())

    def test_msix_table_garbage(self):
        """Vectors aimed at the device's own BARs, ROM, nothing and RAM, with any data,
        masked or not: completions go on, and whatever reaches its own BARs is refused."""
        dsa = self.boot()
        dsa.bring_up()
        rng = random.Random(42)
        targets = (dsa.bar0 + CMD, dsa.bar0 + 0x2000, dsa.bar2 + 0x1000, BIOS_ROM,
                   UNASSIGNED, dsa.irq_area)
        for round_ in range(12):
            for v in range(dsa.nvec):
                dsa.pci.msix_set_vector(dsa.bdf, v, rng.choice(targets) + 4 * rng.randrange(16),
                                        rng.getrandbits(32), masked=rng.random() < 0.3)
            data, dst, rec = self.copy(dsa, 512, round_)
            dsa.settle()
            with self.subTest(round_):
                self.assertEqual(dsa.record(rec)[0], SUCCESS)
                self.assertEqual(dsa.qt.memread(dst, 512), data)
        self.assertEqual(dsa.rd(GENSTS) & 3, 1, "still enabled")
        self.assertEqual(dsa.qt.counter(QOM, "descriptors"), 12)

def valgrind():
    """valgrind's command line (a memory error makes QEMU exit 99), or None where it is
    not installed or DMALAB_NO_VALGRIND is set."""
    if os.environ.get("DMALAB_NO_VALGRIND") or not shutil.which("valgrind"):
        return None
    return ("valgrind", "-q", "--error-exitcode=99", "--leak-check=no", "--track-origins=no")


class HostileUnderValgrind(Hostile):
    """The hostile cases again with QEMU under valgrind (slow: minutes), where it is
    installed: no invalid read or write of the device's or QEMU's memory on the way."""
    WRAPPER = valgrind() or ()
    TIMEOUT = 300.0

    def setUp(self):
        super().setUp()
        if valgrind() is None:
            self.skipTest("valgrind is not installed, or DMALAB_NO_VALGRIND is set")

# The fault doorbell (docs/faults.rst), at BAR 0 + 0x2000 as on dmalab-ioat.
DOORBELL = 0x2000
BELL_ID, BELL_SELECT, BELL_COMMAND, BELL_STATUS, BELL_INJECTED = 0x00, 0x04, 0x08, 0x0C, 0x10
ARM, RELEASE = 1, 3
OWNED, ARMED, RELEASED, ENDED = 1, 2, 4, 8
PAGE_FAULT = 0x03


class FaultPlans(DsaCase):
    def test_a_hold_the_guest_arms_and_releases_through_the_doorbell(self):
        plan = fault_plan(self, [{"name": "late", "kind": "delay-data", "delay": "1s",
                                  "until": "release", "nth": 1, "armed": False}])
        dsa = self.boot(f",fault-doorbell=on,fault-plan={plan}")
        dsa.bring_up()
        bell = dsa.bar0 + DOORBELL
        self.assertEqual(dsa.qt.readl(bell + BELL_ID), 0x464C4D44, "DMLF")
        dsa.qt.writel(bell + BELL_SELECT, 0)
        self.assertEqual(dsa.qt.readl(bell + BELL_STATUS), OWNED)
        dsa.qt.writel(bell + BELL_COMMAND, ARM)
        data, dst, rec = self.copy(dsa, 4096, 3)
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], 0, "held")
        self.assertNotEqual(dsa.qt.memread(dst, 4096), data)
        dsa.qt.writel(bell + BELL_COMMAND, RELEASE)
        self.assertEqual(dsa.qt.readl(bell + BELL_STATUS), OWNED | ARMED | RELEASED | ENDED,
                         "the release ended a running hold")
        dsa.settle(ns=1_000_000)
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(dsa.qt.memread(dst, 4096), data)
        self.assertEqual(dsa.qt.readq(bell + BELL_INJECTED), 1)
        self.assertEqual(dsa.qt.counter(QOM, "faults-injected"), 1)
        log = self.qom(dsa, "fault-log")
        self.assertRegex(log, r"rule=late kind=delay-data unit=0 key=%d$" % rec)

    def test_a_failed_copy_and_a_refused_plan(self):
        plan = fault_plan(self, [{"kind": "fail", "status": 3, "op": "memmove"}])
        dsa = self.boot(f",fault-plan={plan}")
        dsa.bring_up()
        _, dst, rec = self.copy(dsa, 4096, 4)
        dsa.settle()
        status, _, done, fault, _ = dsa.record(rec)
        self.assertEqual((status, done), (PAGE_FAULT, 0))
        self.assertEqual(dsa.qt.memread(dst, 16), bytes(16), "nothing moved")
        for rules, message in (([{"kind": "fail", "status": 17}], "must be one of 0x3, 0x20"),
                               ([{"kind": "fail", "chanerr": 1}], "its parameter is \"status\""),
                               ([{"kind": "corrupt", "xor": 1, "wq": 8}], "below 8")):
            with self.subTest(message):
                with self.assertRaises(QMPError) as cm:
                    dsa.qt.qmp("qom-set", path=QOM, property="fault-plan",
                               value=fault_plan(self, rules))
                self.assertIn(message, cm.exception.error["desc"])
        self.assertEqual(self.qom(dsa, "fault-plan"), plan, "the plan in force stays")

    def test_without_the_property_the_window_is_no_doorbell(self):
        dsa = self.boot()
        self.assertEqual(dsa.qt.readl(dsa.bar0 + DOORBELL + BELL_ID), 0)
        dsa.qt.writel(dsa.bar0 + DOORBELL + BELL_COMMAND, ARM)
        self.assertEqual(dsa.qt.counter(QOM, "faults-injected"), 0)



class Migration(DsaCase):
    def test_a_copy_in_flight_finishes_on_the_destination(self):
        fd, path = tempfile.mkstemp(prefix="dsa-migration-", dir="/tmp")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        props = ",bandwidth=1G,step-bytes=4096"
        src = self.boot(props)
        src.bring_up()
        data, dst, rec = self.copy(src, 1 << 20, 5)
        src.qt.clock_step(500_000)   # 2 MiB of traffic take 2 ms at 1 GB/s: a quarter done
        done = sum(1 for a, b in zip(src.qt.memread(dst, 1 << 20), data) if a == b)
        self.assertLess(done, 1 << 20)
        self.assertEqual(src.record(rec)[0], 0, "not complete yet")
        layout = (src.bdf, src.bar0, src.bar2, src.irq_area, src.mem.next)
        clock = src.qt.clock_now()
        src.qt.qmp("stop")
        src.qt.qmp("migrate", uri="file:" + path)
        self.wait_migration(src.qt)
        self.check_exit(src.qt)
        self.machines.remove((src.qt, ()))

        qt = self.track(launch(lambda: QTest(qtest_case.QEMU, [
            "-device", DEV + props, "-incoming", "defer"])))
        qt.qmp("migrate-incoming", uri="file:" + path)
        self.wait_migration(qt)
        qt.clock_set(clock)
        qt.qmp("cont")
        dsa = Dsa.__new__(Dsa)
        dsa.qt, dsa.pci = qt, PCI(qt)
        dsa.bdf, dsa.bar0, dsa.bar2, dsa.irq_area, nxt = layout
        dsa.mem = GuestAlloc(qt)
        dsa.mem.next = nxt
        dsa.settle()
        self.assertEqual(dsa.record(rec)[0], SUCCESS)
        self.assertEqual(qt.memread(dst, 1 << 20), data)
        self.assertEqual(dsa.irq_word(1), 0xD1)
        self.assertEqual(dsa.qt.counter(QOM, "descriptors"), 1)


if __name__ == "__main__":
    main()
