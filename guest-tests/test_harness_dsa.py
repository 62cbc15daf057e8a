#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of how the harness judges a run with a dmalab-dsa and no dmalab-ioat: its
counters read over QMP and held to --expect-dsa, and ioatdma's binding not asked for
(test_harness.py loads this file)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402


class DsaJudgeTests(unittest.TestCase):
    """A run with dmalab-dsa and no dmalab-ioat (the scenario dsa-dmatest, init/dsa.sh):
    ioatdma need not bind, dmalab-dsa's counters are read and judged."""

    LOG = """\
Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP
DMALAB: init kernel=6.1.0-57-amd64 scenario=dsa uptime=2.50
DMALAB: ioatdma not bound
DMALAB: dma channels=0 ()
DMALAB: accel-config version 3.5.3
DMALAB: idxd bound 0000:00:03.0 vendor=0x8086 device=0x0b25
DMALAB: accel-config config-wq dsa0/wq0.0 --group-id=0 --mode=dedicated --type=kernel \
--name=dmaengine --driver-name=dmaengine --wq-size=16 --priority=10 rc=0
DMALAB: accel-config enable-device dsa0 rc=0
DMALAB: accel-config enable-wq dsa0/wq0.0 rc=0
DMALAB: dsa wq0.0 state=enabled
DMALAB: dsa channels=1 (dma0chan0)
DMALAB: dsa dmatest buf=16384 iterations=100 channels=dma0chan0
dmatest: dma0chan0-copy0: summary 100 tests, 0 failures 1000.00 iops 8000 KB/s (0)
DMALAB: dsa dmatest end buf=16384
DMALAB: dsa dmatest buf=1048576 iterations=20 channels=dma0chan0
dmatest: dma0chan0-copy0: summary 20 tests, 0 failures 100.00 iops 50000 KB/s (0)
DMALAB: dsa dmatest end buf=1048576
DMALAB: dsa dmatest buf=64 iterations=50 channels=dma0chan0
dmatest: dma0chan0-copy0: summary 50 tests, 0 failures 1000.00 iops 30 KB/s (0)
DMALAB: dsa dmatest end buf=64
DMALAB: irq 4 PCI-MSIX-0000:00:03.0 0-edge idxd-misc
DMALAB: irq 170 PCI-MSIX-0000:00:03.0 1-edge idxd-portal
DMALAB: accel-config disable-wq dsa0/wq0.0 rc=0
DMALAB: dsa wq0.0 state=disabled
DMALAB: accel-config disable-device dsa0 rc=0
DMALAB: dsa dsa0 state=disabled
DMALAB: dsa end
DMALAB: ioat irq cpus 0
DMALAB: done
"""
    COUNTERS = {"commands": 6, "command-errors": 0, "swerrs": 0, "halts": 0,
                "interrupts": 174, "submitted": 170, "dropped": 0, "aborted": 0,
                "descriptors": 170, "descriptor-errors": 0, "bytes": 10 ** 6}

    def judge(self, text=LOG, **counts):
        import scenarios
        entry = scenarios.load()["dsa-dmatest"]
        args = runner.make_parser().parse_args(scenarios.runner_args(entry) + [
            "--qemu", "q", "--kernel", "k", "--initrd", "i"])
        args.registry_expect = runner.Expectations.from_entry(entry)
        self.assertTrue(runner.want_counters(args))
        dsa = dict(self.COUNTERS, **{k.replace("_", "-"): v for k, v in counts.items()})
        boot = runner.Boot()
        boot.lines = text.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        boot.device_stats = [dict(dsa, path="/machine/peripheral-anon/device[0]",
                                  type="dmalab-dsa", **{"counter-names": sorted(dsa)})]
        return runner.analyse(boot, *runner.judging(args))[1]

    def test_a_good_run_passes_without_ioatdma(self):
        self.assertEqual(self.judge(), [])
        # 6.12, where disabling the device would oops (init/dsa.sh dsa_evl_free_bug)
        kept = self.LOG.replace(
            "DMALAB: accel-config disable-device dsa0 rc=0\nDMALAB: dsa dsa0 state=disabled\n",
            "DMALAB: dsa dsa0 kept enabled: Linux 6.12.95+deb12-amd64 oopses in "
            "idxd_device_evl_free() on a device without an event log\n")
        self.assertNotEqual(kept, self.LOG)
        self.assertEqual(self.judge(kept), [])
        # but not a device the disable left enabled
        self.assertTrue(self.judge(self.LOG.replace("dsa0 state=disabled", "dsa0 state=enabled")))

    def test_what_fails_it(self):
        self.assertIn("dmalab-dsa: descriptor-errors is 2, expected == 0 "
                      "(descriptor-errors==0)", self.judge(descriptor_errors=2))
        self.assertIn("dmalab-dsa: descriptors is 100, expected >= 170 (descriptors>=170)",
                      self.judge(descriptors=100))
        failed = self.LOG.replace("summary 20 tests, 0 failures", "summary 20 tests, 1 failures")
        self.assertTrue(any("summary 20 tests, 0 failures" in r for r in self.judge(failed)))
        no_portal = self.LOG.replace("DMALAB: irq 170", "DMALAB: irq 0")
        self.assertIn("interrupt idxd-portal never fired (1 line(s), all 0)",
                      self.judge(no_portal))
        err = self.LOG.replace("DMALAB: dsa end", "DMALAB: error: accel-config disable-device "
                               "failed\nDMALAB: dsa end")
        self.assertIn("guest: error: accel-config disable-device failed", self.judge(err))
        # a counter the device does not have fails rather than passes
        reasons = runner.analyse(*self.without_counter("halts"))[1]
        self.assertTrue(any("dmalab-dsa has no counter 'halts'" in r for r in reasons), reasons)

    def without_counter(self, name):
        import scenarios
        entry = scenarios.load()["dsa-dmatest"]
        args = runner.make_parser().parse_args(scenarios.runner_args(entry) + [
            "--qemu", "q", "--kernel", "k", "--initrd", "i"])
        args.registry_expect = runner.Expectations.from_entry(entry)
        dsa = {k: v for k, v in self.COUNTERS.items() if k != name}
        boot = runner.Boot()
        boot.lines = self.LOG.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        boot.device_stats = [dict(dsa, path="p", type="dmalab-dsa",
                                  **{"counter-names": sorted(dsa)})]
        return (boot,) + runner.judging(args)

    def test_the_counters_are_read_in_one_query(self):
        from harness import qemu
        asked = []

        class Qmp:
            def command(self, name, path=None, property=None):
                asked.append((name, path, property))
                if name == "qom-list" and path == "/machine/peripheral-anon":
                    return [{"name": "device[0]", "type": "child<dmalab-dsa>"},
                            {"name": "x", "type": "child<pcie-root-port>"}]
                if name == "qom-list":
                    return []
                return {"counters": {"descriptors": 7, "bytes": 9, "halts": 0},
                        "fault-log": ""}[property]
        self.assertEqual(qemu.read_device_counters(Qmp()), [
            {"path": "/machine/peripheral-anon/device[0]", "type": "dmalab-dsa",
             "counter-names": ["descriptors", "bytes", "halts"], "descriptors": 7,
             "bytes": 9, "halts": 0, "fault-log": ""}])
        self.assertEqual([a for a in asked if a[0] == "qom-get"],
                         [("qom-get", "/machine/peripheral-anon/device[0]", "counters"),
                          ("qom-get", "/machine/peripheral-anon/device[0]", "fault-log")])

    def test_ioatdma_must_still_bind_where_a_dmalab_ioat_is(self):
        args = runner.make_parser().parse_args(["--judge-log", "x", "--device", "dmalab-dsa",
                                                "--device", "dmalab-ioat", "--scenario", "dsa"])
        boot = runner.Boot()
        boot.lines = self.LOG.splitlines()
        boot.stamps = [0.0] * len(boot.lines)
        boot.rc = 0
        self.assertIn("ioatdma not bound", runner.analyse(boot, *runner.judging(args))[1])
        args = runner.make_parser().parse_args(["--judge-log", "x", "--device", "dmalab-dsa",
                                                "--scenario", "dsa"])
        self.assertEqual(runner.analyse(boot, *runner.judging(args))[1], [])
        # a dmalab-ioat condition without one cannot be judged
        args = runner.make_parser().parse_args(["--qemu", "q", "--kernel", "k", "--initrd",
                                                "i", "--device", "dmalab-dsa", "--scenario",
                                                "dsa", "--min-device-descriptors", "5"])
        boot.device_stats = [dict(self.COUNTERS, path="p", type="dmalab-dsa",
                                  **{"counter-names": sorted(self.COUNTERS)})]
        self.assertIn("no dmalab-ioat on the command line: cannot check "
                      "--min-device-descriptors 5",
                      runner.analyse(boot, *runner.judging(args))[1])


class DmatestBesideIoatTests(unittest.TestCase):
    """dsa-dmatest-vs-ioat: dmatest over one dmalab-ioat channel and over dmalab-dsa's in one
    boot; every run's test count and failures, both devices' counters against the tests,
    and dmatest's summaries as bench-dmatest rows (a 6.1 run's lines, 2026-12-07)."""

    SIZES = (("16384", "100", "54377.37", "870038", "47258.97", "756143"),
             ("1048576", "20", "2984.18", "3055804", "2962.52", "3033624"),
             ("64", "50", "51867.21", "3112", "44722.71", "2683"))

    def log(self):
        out = ["Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP",
               "DMALAB: init kernel=6.1.0-57-amd64 scenario=dsa uptime=1.01",
               "DMALAB: ioatdma bound 0000:00:01.0 vendor=0x8086 device=0x2021",
               "DMALAB: dma channels=1 (dma0chan0)",
               "DMALAB: idxd bound 0000:00:02.0 vendor=0x8086 device=0x0b25",
               "DMALAB: dsa wq0.0 state=enabled",
               "DMALAB: dsa channels=1 (dma1chan0)",
               "DMALAB: dsa dmatest beside ioat channels (dma0chan0)"]
        for size, n, ioat_iops, ioat_kb, dsa_iops, dsa_kb in self.SIZES:
            for dev, chan, iops, kb in (("ioat", "dma0chan0", ioat_iops, ioat_kb),
                                        ("dsa", "dma1chan0", dsa_iops, dsa_kb)):
                out += ["DMALAB: dsa dmatest buf=%s iterations=%s channels=%s" % (size, n, chan),
                        "dmatest: %s-copy0: summary %s tests, 0 failures %s iops %s KB/s (0)"
                        % (chan, n, iops, kb),
                        "DMALAB: dmatest dev=%s chan=%s buf=%s tests=%s failures=0 iops=%s "
                        "kb_per_s=%s" % (dev, chan, size, n, iops, kb)]
            out.append("DMALAB: dsa dmatest end buf=%s" % size)
        return out + ["DMALAB: irq 2 PCI-MSI 32768-edge idxd-misc",
                      "DMALAB: irq 170 PCI-MSI 32769-edge idxd-portal",
                      "DMALAB: accel-config disable-wq dsa0/wq0.0 rc=0",
                      "DMALAB: dsa wq0.0 state=disabled", "DMALAB: dsa end",
                      "DMALAB: irq 175 PCI-MSI 16384-edge ioat-msix",
                      "DMALAB: ioat irq cpus 1", "DMALAB: done"]

    def judge(self, lines, dsa=None, ioat=None):
        """(reasons, facts) of a boot with these lines and counters."""
        import scenarios
        entry = scenarios.load()["dsa-dmatest-vs-ioat"]
        args = runner.make_parser().parse_args(scenarios.runner_args(entry) + [
            "--qemu", "q", "--kernel", "k", "--initrd", "i"])
        args.registry_expect = runner.Expectations.from_entry(entry)
        dsa = dict(DsaJudgeTests.COUNTERS, **dict({"bytes": 22613120}, **(dsa or {})))
        ioat = dict({"descriptors": 175, "bytes": 22615120, "errors": 0, "interrupts": 175,
                     "copy-descriptors": 171, "copy-bytes": 22615120,
                     "null-descriptors": 4}, **(ioat or {}))
        boot = runner.Boot()
        boot.lines = lines
        boot.stamps = [0.0] * len(lines)
        boot.rc = 0
        boot.device_stats = [dict(ioat, path="/machine/peripheral-anon/device[0]",
                                  type="dmalab-ioat"),
                             dict(dsa, path="/machine/peripheral-anon/device[1]",
                                  type="dmalab-dsa", **{"counter-names": sorted(dsa)})]
        facts, reasons = runner.analyse(boot, *runner.judging(args))[:2]
        return reasons, facts

    def test_a_good_run_passes_and_gives_both_devices_rows(self):
        reasons, facts = self.judge(self.log())
        self.assertEqual(reasons, [])
        rows = [(t, f["dev"], f["buf"], f["tests"]) for t, f in facts.bench]
        self.assertEqual(rows[:2], [("bench-dmatest", "ioat", "16384", "100"),
                                    ("bench-dmatest", "dsa", "16384", "100")])
        self.assertEqual(len(rows), 6)

    def test_what_fails_it(self):
        log = self.log()
        one_short = [l.replace("summary 20 tests", "summary 19 tests")
                     if "dma1chan0-copy0" in l else l for l in log]
        self.assertIn("no serial line matches '^dmatest: dma1chan0-copy0: summary 20 tests, "
                      "0 failures '", self.judge(one_short)[0])
        failed = [l.replace("tests=50 failures=0", "tests=50 failures=1") for l in log]
        self.assertTrue(self.judge(failed)[0])
        reasons = self.judge(log, dsa={"descriptors": 171})[0]
        self.assertIn("dmalab-dsa: descriptors is 171, expected == 170 (descriptors==170)",
                      reasons)
        reasons = self.judge(log, ioat={"copy-descriptors": 170})[0]
        self.assertIn("dmalab-ioat: copy-descriptors is 170, expected == 171 "
                      "(copy-descriptors==171)", reasons)
        self.assertTrue(self.judge(log, ioat={"copy-bytes": 22613120})[0])
        self.assertTrue(self.judge(log, dsa={"bytes": 22615120})[0])
        no_ioat_irq = [l.replace("irq 175 PCI-MSI", "irq 0 PCI-MSI") for l in log]
        self.assertIn("interrupt ioat-msix never fired (1 line(s), all 0)",
                      self.judge(no_ioat_irq)[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
