#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's pieces that need no guest: the modelled clock's arguments, dmalab-vtd's
--set and --sweep variants, what --same-counts compares and how main() acts on it (run by
runner-selftest)."""

import contextlib
import io
import os
import sys
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import runner  # noqa: E402


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


class SameCountsWiringTests(unittest.TestCase):
    """main() with --same-counts, each boot a mocked runner.bench_boot whose QMP counters
    the test chooses: what reaches the verdict."""

    ARGS = ["--study", "dma-api", "--qemu", "q", "--kernel", "k", "--initrd", "i",
            "--icount", "5", "--same-counts"]

    def run_main(self, extra, stats):
        """main() with boots whose device counters are stats(boot number); returns (exit
        status, boots run, output)."""
        boots = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            boot = runner.Boot()
            boot.device_stats = stats(len(boots))
            boots.append(label)
            row = ("bench-map", {"op": "map", "size": "4096", "p50_ns": "100", "p99_ns": "200"})
            return boot, [(None, {"bench": [row]}, [])], []

        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = measure.main(self.ARGS + extra)
        return rc, boots, out.getvalue()

    @staticmethod
    def waits(n):
        return [{"type": "dmalab-ioat", "descriptors": 10, "bytes": 4096},
                {"type": "dmalab-vtd", "waits": n, "audit": False}]

    def test_one_boot_is_refused_before_anything_boots(self):
        for extra in (["--quick"], ["--repeat", "1"], ["--quick", "--repeat", "1"]):
            rc, boots, out = self.run_main(extra, lambda i: self.waits(i))
            self.assertEqual((rc, boots), (2, []), extra)
            self.assertIn("needs --repeat 2 or more", out)

    def test_counters_that_differ_between_boots_fail(self):
        # boots alternate: the six configurations, then all six again
        rc, boots, out = self.run_main(["--repeat", "2"], lambda i: self.waits(128 + i // 6))
        self.assertEqual(len(boots), 12)
        self.assertEqual(rc, 1, out)
        self.assertIn("device counters differ between boots: no-iommu dmalab-vtd.waits "
                      "128/129", out)

    def test_equal_counters_pass(self):
        rc, boots, out = self.run_main(["--repeat", "2"], lambda i: self.waits(128))
        self.assertEqual(rc, 0, out)
        self.assertIn("device counters and guest figures identical", out)

    def test_boots_without_counters_fail(self):
        rc, _, out = self.run_main(["--repeat", "2"], lambda i: None)
        self.assertEqual(rc, 1, out)
        self.assertIn("no device counters were read in a boot of: intel-lazy", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
