#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-ioat's fault plans over qtest: a plan named at start-up and replaced by qom-set,
malformed plans refused with the plan in force kept, the test-only doorbell, the QMP
counters, and a plan's counts carried across migration.

Usage: ioat_faults_qtest.py QEMU_BINARY [unittest options] (or set QEMU)."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qtest_case  # noqa: E402
from qtest_case import launch, main  # noqa: E402
import libqtest  # noqa: E402
from ioat_qtest import DEV, DONE, HALTED, QOM, IoatCase, rebuild_ioat  # noqa: E402
from ioat_rig import (  # noqa: E402
    Buf,
    CFG_CHANERR_INT, CHANCMD, CHANCMP, CHANCTRL, CHANCTRL_RUN, CHANERR, CHANERR_READ_DATA,
    CMD_RESET, CTL_COMPL_WRITE, CTL_INT_EN, CTL_NULL, DMACOUNT)
from libqtest import QMPError, QTest, QTestError  # noqa: E402

DOORBELL = 0x2000
FAULT_ID, FAULT_SELECT, FAULT_COMMAND, FAULT_STATUS = 0x00, 0x04, 0x08, 0x0C
FAULT_INJECTED, FAULT_TOTAL = 0x10, 0x18
ARM, DISARM, RELEASE, OWNED, ARMED, RELEASED, ENDED = 1, 2, 3, 1, 2, 4, 8
LATENCY = 100_000


class FaultCase(IoatCase):
    def plan(self, rules, seed=0):
        return libqtest.fault_plan(self, rules, seed)

    def copies(self, io, ch, n, size=4096, seed=0):
        """n copies on a freshly set up channel; returns (bufs, descriptor addresses)."""
        io.setup(ch)
        bufs = [Buf(io, size, seed + i) for i in range(n)]
        return bufs, self.copy_job(io, ch, bufs, int_last=False)

    def injected(self, io):
        return io.qt.counter(QOM, "faults-injected")


class Plans(FaultCase):
    def test_delay_data_of_the_nth_descriptor(self):
        plan = self.plan([{"name": "late", "kind": "delay-data", "delay": "3ms", "nth": 2}])
        io = self.boot(f",latency-ns={LATENCY},fault-plan={plan}")
        t0 = io.qt.clock_now()   # qtest's clock starts at 0 and nothing has stepped it
        bufs, addrs = self.copies(io, 1, 3)
        io.qt.clock_step(2 * LATENCY + 1000)
        self.assertEqual(bufs[0].copied_prefix(), 4096)
        self.assertEqual(bufs[1].copied_prefix(), 0, "the delayed copy moved early")
        self.assertEqual(io.chansts(1), addrs[0])  # ACTIVE, the first one completed
        self.assertEqual(self.injected(io), 1)
        io.qt.clock_step(3_000_000)
        for b in bufs:
            b.check(self)
        self.assertEqual(io.chansts(1), addrs[2] | DONE)
        log = self.qom(io, "fault-log").splitlines()
        self.assertEqual(len(log), 1)
        # The rule is decided as the second descriptor starts. One DMACOUNT write gave all
        # three at t0; the first started there (sync-start), its data at once (bandwidth
        # unlimited), and completes LATENCY later (latency-ns, no jitter, no IOMMU cost);
        # the second starts when the first completes, as clock_step(2 * LATENCY + 1000)
        # runs the channel's timer at that deadline: t0 + LATENCY.
        self.assertEqual(log[0], f"0 {t0 + LATENCY}ns rule=late kind=delay-data unit=1 "
                                 f"key={addrs[1]}")

    def test_fail_then_the_channel_recovers(self):
        plan = self.plan([{"kind": "fail", "chanerr": "0x100", "channel": 0, "nth": 1}])
        io = self.boot(f",fault-plan={plan}")
        io.use_msix()
        bufs, _ = self.copies(io, 0, 1)
        compl = io.rd(0, CHANCMP, 8)
        self.settle(io)
        self.assertEqual(io.state(0), HALTED)
        self.assertEqual(io.chanerr(0), CHANERR_READ_DATA)
        self.assertEqual(io.qt.readq(compl), HALTED)   # nothing completed before it
        self.assertEqual(io.irq_word(0), 0xA0)          # the error interrupt
        bufs[0].check(self, copied=False)
        # Other channels are not selected.
        self.verified_copy(io, 2)
        # Recovery as Linux's ioatdma does it for a read data error (drivers/dma/ioat/
        # dma.c), from the interrupt's tasklet, ioat_cleanup_event() -> ioat_cleanup() ->
        # ioat_eh(): ioat_reset_hw() writes CHANERR back and resets the channel (CB3.3
        # skips CHANERR_INT there; RESET completes at once, so ioat_reset_sync()'s poll
        # reads it clear); ioat_eh() writes CHANERR and CHANERR_INT back again;
        # ioat_restart_channel() sets CHANCMP again and, nothing being pending (the failed
        # descriptor was completed as failed), starts a null descriptor (INT_EN,
        # COMPL_WRITE, size 1) through CHAINADDR and DMACOUNT counted from 0. Then
        # ioat_cleanup_event() re-arms (CHANCTRL_RUN).
        io.clear_irqs()
        chanerr = io.chanerr(0)
        io.wr(0, CHANERR, chanerr, 4)
        io.wr(0, CHANCMD, CMD_RESET, 1)
        self.assertEqual(io.rd(0, CHANCMD, 1) & CMD_RESET, 0)
        io.wr(0, CHANERR, chanerr, 4)
        chanerr_int = io.pci.cfg_read(io.bdf, CFG_CHANERR_INT, 4)
        io.pci.cfg_write(io.bdf, CFG_CHANERR_INT, chanerr_int, 4)
        io.wr(0, CHANCMP, compl & 0xFFFFFFFF, 4)
        io.wr(0, CHANCMP + 4, compl >> 32, 4)
        self.assertEqual(io.chanerr(0), 0)
        again = Buf(io, 8192, 5)
        null, copy = io.chain([(1, CTL_NULL | CTL_INT_EN | CTL_COMPL_WRITE, 0, 0),
                               (again.size, CTL_COMPL_WRITE | CTL_INT_EN, again.src, again.dst)])
        io.start(0, null, 1)
        io.wr(0, CHANCTRL, CHANCTRL_RUN, 2)
        self.settle(io)
        self.assertEqual(io.qt.readq(compl), null | DONE)
        self.assertEqual(io.irq_word(0), 0xA0)
        # The next client copy follows the null descriptor in the ring: DMACOUNT 2, after
        # the tasklet's re-arm for the null descriptor's interrupt.
        io.clear_irqs()
        io.wr(0, CHANCTRL, CHANCTRL_RUN, 2)
        io.wr(0, DMACOUNT, 2, 2)
        self.settle(io)
        again.check(self)
        bufs[0].check(self, copied=False)       # never retried
        self.assertEqual(io.qt.readq(compl), copy | DONE)
        self.assertEqual(io.chansts(0), copy | DONE)
        self.assertEqual(io.chanerr(0), 0)
        self.assertEqual(io.irq_word(0), 0xA0)
        self.assertEqual(self.injected(io), 1)
        self.assertCounters(io, descriptors=3, errors=1)

    def test_dropped_interrupt(self):
        plan = self.plan([{"kind": "drop-interrupt", "nth": 1}])
        io = self.boot(f",fault-plan={plan}")
        io.use_msix()
        compl = io.setup(1)
        buf = Buf(io, 4096, 3)
        (d,) = self.copy_job(io, 1, [buf])
        self.settle(io)
        buf.check(self)
        self.assertEqual(io.qt.readq(compl), d | DONE)
        self.assertEqual(io.irq_word(1), 0, "the interrupt was sent")
        self.assertCounters(io, descriptors=1, interrupts=0)
        self.verified_copy(io, 1)   # the next one interrupts

    def test_run_time_replacement_and_refusal(self):
        io = self.boot(f",latency-ns={LATENCY}")
        self.assertEqual(self.qom(io, "fault-plan"), "")
        good = self.plan([{"kind": "corrupt", "xor": "0xff"}])
        io.qt.qmp("qom-set", path=QOM, property="fault-plan", value=good)
        bad = {
            "unknown kind": ([{"kind": "explode"}], "unknown kind"),
            "bad selector": ([{"kind": "corrupt", "xor": 1, "channel": 9}],
                             "\"channel\" must be an integer below 4"),
            "impossible time": ([{"kind": "delay-data", "delay": "-5ms"}],
                                "\"delay\" must be nanoseconds"),
            "other model": ([{"kind": "translation-fault", "reason": 5, "device": "ioat"}],
                            "is not a fault of dmalab-ioat 'ioat'"),
        }
        for what, (rules, message) in bad.items():
            with self.subTest(what):
                with self.assertRaises(QMPError) as cm:
                    io.qt.qmp("qom-set", path=QOM, property="fault-plan", value=self.plan(rules))
                self.assertIn(message, cm.exception.error["desc"])
                self.assertIn("rule \"rule0\"", cm.exception.error["desc"])
        fd, broken = tempfile.mkstemp(dir="/tmp")
        os.write(fd, b'{"rules": [}')
        os.close(fd)
        self.addCleanup(os.unlink, broken)
        with self.assertRaises(QMPError) as cm:
            io.qt.qmp("qom-set", path=QOM, property="fault-plan", value=broken)
        self.assertIn("line 1, column 12: a value was expected", cm.exception.error["desc"])
        with self.assertRaises(QMPError) as cm:
            io.qt.qmp("qom-set", path=QOM, property="fault-plan", value="/nonexistent.json")
        self.assertIn("cannot read the fault plan", cm.exception.error["desc"])
        # The good plan is still the one in force.
        self.assertEqual(self.qom(io, "fault-plan"), good)
        bufs, _ = self.copies(io, 3, 1, size=512)
        self.settle(io)
        head, body, tail = bufs[0].read()
        self.assertEqual(body[:-1], bufs[0].data[:-1])
        self.assertEqual(body[-1], bufs[0].data[-1] ^ 0xFF)
        self.assertEqual((head, tail), (bufs[0].guard, bufs[0].guard))
        # An empty name removes the plan.
        io.qt.qmp("qom-set", path=QOM, property="fault-plan", value="")
        bufs, _ = self.copies(io, 3, 1, size=512, seed=7)
        self.settle(io)
        bufs[0].check(self)

    def test_malformed_plan_at_start_up(self):
        path = self.plan([{"kind": "fail", "chanerr": 0}])
        with self.assertRaises(QTestError) as cm:
            launch(lambda: QTest(qtest_case.QEMU, ["-device", f"{DEV},fault-plan={path}"]))
        self.assertEqual(cm.exception.returncode, 1)
        self.assertIn(f"dmalab-ioat: fault plan {path}: line 1, column", cm.exception.stderr)
        self.assertIn("\"chanerr\" must be non-zero bits within 0x7ffff", cm.exception.stderr)


class Doorbell(FaultCase):
    def test_guest_arms_a_rule(self):
        plan = self.plan([
            {"name": "vtd-only", "kind": "translation-fault", "reason": 5},
            {"name": "armed-later", "kind": "fail", "chanerr": "0x100", "armed": False},
        ])
        io = self.boot(f",fault-doorbell=on,fault-plan={plan}")
        bell = io.bar + DOORBELL
        self.assertEqual(io.qt.readl(bell + FAULT_ID), 0x464C4D44)
        io.use_msix()
        self.verified_copy(io, 0)  # not armed: nothing happens
        io.qt.writel(bell + FAULT_SELECT, 0)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), 0)
        io.qt.writel(bell + FAULT_SELECT, 1)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), OWNED)
        io.qt.writel(bell + FAULT_COMMAND, ARM)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), OWNED | ARMED)
        bufs, _ = self.copies(io, 0, 1)
        self.settle(io)
        self.assertEqual(io.state(0), HALTED)
        bufs[0].check(self, copied=False)
        self.assertEqual(io.qt.readq(bell + FAULT_INJECTED), 1)
        self.assertEqual(io.qt.readq(bell + FAULT_TOTAL), 1)
        io.qt.writel(bell + FAULT_COMMAND, DISARM)
        self.verified_copy(io, 0)
        self.assertEqual(self.injected(io), 1)

    def test_guest_releases_a_held_copy(self):
        plan = self.plan([{"name": "hold", "kind": "delay-data", "delay": "1s",
                           "until": "release"}])
        io = self.boot(f",fault-doorbell=on,fault-plan={plan}")
        bell = io.bar + DOORBELL
        io.use_msix()
        bufs, addrs = self.copies(io, 2, 1)
        io.qt.clock_step(10_000_000)
        self.assertEqual(bufs[0].copied_prefix(), 0, "the held copy moved before its release")
        io.qt.writel(bell + FAULT_SELECT, 0)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), OWNED | ARMED)
        io.qt.writel(bell + FAULT_COMMAND, RELEASE)
        # With sync-start the data moves and the copy completes inside the release: no clock
        # step in between.
        bufs[0].check(self)
        self.assertEqual(io.chansts(2), addrs[0] | DONE)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), OWNED | ARMED | RELEASED | ENDED,
                         "the release ended the hold: the guest can tell")
        # Released for the rest of the round: the next copy is hit but not held.
        more, _ = self.copies(io, 2, 1, seed=5)
        more[0].check(self)
        self.assertEqual(self.injected(io), 2)
        # Re-arming starts a round that holds again; a channel reset drops the held copy,
        # and a release then finds nothing to end.
        io.qt.writel(bell + FAULT_COMMAND, ARM)
        held, _ = self.copies(io, 2, 1, seed=9)
        io.wr(2, CHANCMD, CMD_RESET, 1)
        io.qt.writel(bell + FAULT_COMMAND, RELEASE)
        self.assertEqual(io.qt.readl(bell + FAULT_STATUS), OWNED | ARMED | RELEASED,
                         "nothing held any more: released, but no hold ended")
        io.qt.clock_step(2_000_000_000)
        held[0].check(self, copied=False)
        self.verified_copy(io, 2)

    def test_absent_unless_asked_for(self):
        plan = self.plan([{"kind": "fail", "chanerr": 1, "armed": False}])
        io = self.boot(f",fault-plan={plan}")
        bell = io.bar + DOORBELL
        self.assertNotEqual(io.qt.readl(bell + FAULT_ID), 0x464C4D44)
        io.qt.writel(bell + FAULT_SELECT, 0)
        io.qt.writel(bell + FAULT_COMMAND, ARM)
        io.use_msix()
        self.verified_copy(io, 0)
        self.assertEqual(self.injected(io), 0)


class Migration(FaultCase):
    def test_counts_carry_over(self):
        """The third copy is selected; two run before migration, the third after."""
        plan = self.plan([{"name": "third", "kind": "corrupt", "xor": 1, "nth": 3}])
        device = f"{DEV},fault-plan={plan}"
        fd, path = tempfile.mkstemp(prefix="ioat-migration-", dir="/tmp")
        os.close(fd)
        self.addCleanup(os.unlink, path)
        src = self.boot(f",fault-plan={plan}")
        first, _ = self.copies(src, 0, 2)
        self.settle(src)
        for b in first:
            b.check(self)
        layout = self.migrate_away(src, path)
        qt = self.track(launch(lambda: QTest(qtest_case.QEMU, ["-device", device,
                                                                "-incoming", "defer"])))
        qt.qmp("migrate-incoming", uri="file:" + path)
        self.wait_migration(qt)
        qt.qmp("cont")
        dst = rebuild_ioat(qt, *layout)
        third, _ = self.copies(dst, 0, 1)
        self.settle(dst)
        _, body, _ = third[0].read()
        self.assertEqual(body[-1], third[0].data[-1] ^ 1, "the third copy was not hit")
        self.assertEqual(self.injected(dst), 1)


if __name__ == "__main__":
    main()
