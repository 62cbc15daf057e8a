#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's pieces that need no guest: the modelled clock's arguments, dmalab-vtd's
--set and --sweep variants, and what --same-counts compares (run by runner-selftest)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402


class ModelledClockTests(unittest.TestCase):
    def test_seed_and_rtc_come_with_icount(self):
        qemu = [a.split("=", 1)[1] for a in measure.modelled_clock(5)
                if a.startswith("--qemu-arg=")]
        self.assertEqual(qemu[:2], ["-icount", "shift=5,sleep=off"])
        self.assertIn("-seed", qemu)
        rtc = qemu[qemu.index("-rtc") + 1]
        self.assertIn("clock=vm", rtc)
        self.assertIn("base=", rtc)   # a fixed date, not the host's


class VariantTests(unittest.TestCase):
    CONFIGS = [("no-iommu", ["--device", "dmalab-ioat", "--append", "x"]),
               ("vtd-strict", ["--device", "dmalab-vtd", "--device", "dmalab-ioat"]),
               ("intel-lazy", ["--device", "intel-iommu", "--device", "dmalab-ioat"])]

    def test_set_reaches_dmalab_vtd_only(self):
        out = dict(measure.vtd_variants(self.CONFIGS, ["wait-ns=5000", "iotlb-entries=64"]))
        self.assertEqual(list(out), ["no-iommu", "vtd-strict", "intel-lazy"])
        self.assertIn("dmalab-vtd,wait-ns=5000,iotlb-entries=64", out["vtd-strict"])
        self.assertEqual(out["intel-lazy"], self.CONFIGS[2][1])
        self.assertEqual(out["no-iommu"], self.CONFIGS[0][1])

    def test_sweep_repeats_each_dmalab_vtd_configuration(self):
        out = measure.vtd_variants(self.CONFIGS, ["iotlb-entries=64"], "wait-ns=0,10000")
        self.assertEqual([label for label, _ in out],
                         ["no-iommu", "vtd-strict,wait-ns=0", "vtd-strict,wait-ns=10000",
                          "intel-lazy"])
        self.assertIn("dmalab-vtd,iotlb-entries=64,wait-ns=10000", out[2][1])

    def test_a_sweep_without_values_is_refused(self):
        for bad in ("wait-ns", "wait-ns=", "=1,2"):
            with self.assertRaises(ValueError):
                measure.vtd_variants(self.CONFIGS, [], bad)


class SameCountsTests(unittest.TestCase):
    def test_differences_are_named(self):
        runs = {"a": [[("bench-copy", {"size": "4096", "busy_us": "10", "per_s": "999"})],
                      [("bench-copy", {"size": "4096", "busy_us": "11", "per_s": "999"})]]}
        counters = {"a": [{"dmalab-vtd": {"waits": 130, "faults": 0}},
                          {"dmalab-vtd": {"waits": 128, "faults": 0}}]}
        devices, figures = measure.repeat_differences(runs, counters, ["a"])
        self.assertEqual(devices, ["a dmalab-vtd.waits 130/128"])
        self.assertEqual(figures, ["a bench-copy 4096 None busy_us 10/11"])

    def test_identical_boots_have_none(self):
        boot = [("bench-nic", {"size": "64", "sent": "300"})]
        devices, figures = measure.repeat_differences(
            {"a": [boot, list(boot)]}, {"a": [{"dmalab-ioat": {"descriptors": 5}}] * 2}, ["a"])
        self.assertEqual((devices, figures), ([], []))


if __name__ == "__main__":
    unittest.main(verbosity=2)
