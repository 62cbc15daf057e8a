#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""measure.py's pieces that need no guest: the modelled clock, dmalab-vtd's --set and --sweep
variants, --same-counts and how main() acts on it, --smp, --cpu-profile; loading this loads
test_measure_checks.py and test_measure_tables.py too (run by runner-selftest)."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402
import runner  # noqa: E402
from test_measure_checks import copy_row, nic_row, sg_row  # noqa: E402


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
            "--icount", "5", "--same-counts", "--seeds", "1", "--builds", "1"]

    def run_main(self, extra, stats):
        """main() with boots whose device counters are stats(boot number); returns (exit
        status, boots run, output)."""
        boots = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            boot = runner.Boot()
            boot.device_stats = stats(len(boots))
            boots.append(label)
            row = ("bench-map", {"op": "map", "size": "4096", "p50_ns": "100", "p99_ns": "200"})
            return boot, [(None, runner.Facts(bench=[row]), [])], []

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
        # boots alternate: the seven configurations, then all seven again
        rc, boots, out = self.run_main(["--repeat", "2"], lambda i: self.waits(128 + i // 7))
        self.assertEqual(len(boots), 14)   # 7 configurations, 2 boots each
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


class IommuFlushWiringTests(unittest.TestCase):
    """main() for iommu-flush with mocked boots: the modelled CPU's speed in every header,
    --rates reaching the guest, --quick's configurations and the service-demand split."""

    def run_main(self, extra):
        argvs = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            argvs.append((label, argv))
            boot = runner.Boot()
            boot.device_stats = [{"type": "dmalab-vtd", "waits": 10,
                                  "wait-modelled-ns": 7500}]
            busy = {"no-iommu": 1000}.get(label, 3000 if "strict" in label else 2000)
            rows = [copy_row(4096, busy), nic_row(64, busy), sg_row("pages", 1000, 1000)]
            return boot, [(None, runner.Facts(bench=rows), [])], []
        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = measure.main(["--study", "iommu-flush", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i"] + extra)
        return rc, argvs, out.getvalue()

    def test_quick_boots_dmalab_vtd_only_on_a_1_ns_cpu(self):
        rc, argvs, out = self.run_main(["--quick", "--rates", "1000,0"])
        self.assertEqual(rc, 0, out)
        self.assertEqual([l for l, _ in argvs], ["no-iommu", "vtd-lazy", "vtd-strict"])
        argv = " ".join(argvs[0][1])
        self.assertIn("shift=0,sleep=off", argv)
        self.assertIn("dmalab_exercise.copycost_rates=1000,0", argv)
        self.assertIn("dmalab.pktgen_rate=1000,0", argv)
        self.assertIn("-icount shift=0: 1 ns per guest instruction, a 1-GIPS CPU", out)
        self.assertIn("size=4096 rate=1000 (guest CPU ns per copy, gross, 1 ns per guest "
                      "instruction):", out)
        # 1.000 waits per unmap, 750 ns per wait (QMP), two unmaps a copy
        split = [l.split() for l in out.splitlines() if l.strip().startswith("vtd-strict ")]
        self.assertIn(["vtd-strict", "3,000", "3,000", "1.000", "750", "1500", "3,024"], split)

    def test_quick_boots_the_e1000e_pair_only_and_the_full_run_both(self):
        # igb's boots do not repeat to the count (studies/iommu_flush.py, NIC_QUICK)
        _, quick, _ = self.run_main(["--quick", "--repeat", "2", "--same-counts"])
        _, full, _ = self.run_main(["--rates", "1000"])
        for _, argv in quick:
            self.assertIn("e1000e,netdev=dlx-e1000e-tx", " ".join(argv))
            self.assertNotIn("igb", " ".join(argv))
        for _, argv in full:
            self.assertIn("igb,netdev=dlx-igb-tx", " ".join(argv))
            self.assertIn("dmalab.nics=e1000e,igb", " ".join(argv))

    def test_the_spread_boots_the_nominal_rate_and_only_first_boots_are_profiled(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = os.path.join(tmp, "b.cpio.gz")
            with unittest.mock.patch.object(measure.prov, "second_build",
                                            lambda k, i, d: b), \
                    unittest.mock.patch.object(measure.studies.profiles, "load",
                                               unittest.mock.Mock(side_effect=OSError)):
                _, argvs, out = self.run_main(["--profile", "p.so"])
        rates = {}
        for label, argv in argvs:
            line = " ".join(argv)
            rates[label] = (line.split("copycost_rates=")[1].split()[0],
                            "--profile-plugin" in argv)
        self.assertEqual(rates["no-iommu"], ("1000,2000,5000,10000,0", True))
        self.assertEqual(rates["no-iommu [seed=2]"], ("1000", False))
        self.assertEqual(rates["vtd-strict [build=b]"], ("1000", False))
        self.assertEqual(len(argvs), 3 * 8)  # 8 configurations, 3 boots each

    def test_shift_5_says_32_ns(self):
        rc, _, out = self.run_main(["--quick", "--icount", "5"])
        self.assertIn("32 ns per guest instruction, a 31.25-MIPS CPU", out)


class OffloadWiringTests(unittest.TestCase):
    """main() for offload with mocked boots: the DSA configuration on the study's CPU, its
    rows checked, and its device's descriptors against the copies its rows saw complete."""

    def run_main(self, dsa_descriptors, dsa_rows):
        from test_studies import offload_row
        argvs = []

        def bench_boot(rp, argv, label, log_path=None, verbose=False):
            argvs.append((label, argv))
            boot = runner.Boot()
            dsa = label == "dsa"
            boot.device_stats = [{"type": "dmalab-dsa" if dsa else "dmalab-ioat",
                                  "descriptors": dsa_descriptors if dsa else 1000}]
            rows = dsa_rows if dsa else [offload_row("cpu", 170, 0, 0, 0),
                                         offload_row("wait", 170, 0, 170, 0)]
            return boot, [(None, runner.Facts(bench=rows), [])], []
        out = io.StringIO()
        with unittest.mock.patch.object(measure.runner, "bench_boot", bench_boot), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = measure.main(["--study", "offload", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i", "--quick", "--configs", "engine,dsa"])
        return rc, argvs, out.getvalue()

    def test_dsa_boots_are_judged_on_their_rows_and_counters(self):
        from test_studies import offload_row
        rows = [offload_row("cpu", 170, 0, 0, 0), offload_row("wait", 170, 170, 0, 170),
                offload_row("overlap", 10, 160, 0, 10)]
        rc, argvs, out = self.run_main(330, rows)
        self.assertEqual(rc, 0, out)
        argv = " ".join(dict(argvs)["dsa"])
        self.assertIn("--cpu max,-erms,-fsrm,-fzrm,-fsrs,-fsrc", argv)
        self.assertIn("--device dmalab-dsa,latency-ns=2000,bandwidth=8000000000", argv)
        self.assertIn("dmalab.dsa_run=exercise dmalab_exercise.mode=offload", argv)
        self.assertIn("dsa: wait and ordered slept until the engine's callbacks", out)
        rc, _, out = self.run_main(331, rows)
        self.assertEqual(rc, 1, out)
        self.assertIn("dmalab-dsa completed 331 descriptors, the exerciser saw 330 copies "
                      "complete", out)
        rows[1] = offload_row("wait", 170, 0, 170, 0)     # polled: not what idxd allows
        rc, _, out = self.run_main(330, rows)
        self.assertEqual(rc, 1, out)
        self.assertIn("op=wait size=4096: interrupts asked, polls and sleeps 0, 170, 0 where "
                      "the channel wants 170, 0, 170", out)


class SmpTests(unittest.TestCase):
    """--smp N: the TSC kept as the clocksource on the modelled clock, mapcost's
    concurrent windows, no profiler (it crashes such guests), and --configs."""

    @staticmethod
    def args(*argv):
        return measure.make_parser().parse_args(
            ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--study", "dma-api"] +
            list(argv))

    def words(self, args):
        from studies import STUDIES
        study = STUDIES["dma-api"]
        self.assertIsNotNone(measure.settle(args, study))
        clock = measure.clock_args(args, study, ("ref", 1, "a", 1000), False)
        return clock[clock.index("--append") + 1].split(), clock

    def test_four_cpus_keep_the_tsc_and_map_on_every_cpu(self):
        words, clock = self.words(self.args("--smp", "4"))
        self.assertIn("tsc=reliable", words)
        self.assertIn("dmalab_exercise.mapcost_threads=4", words)
        self.assertEqual(clock[clock.index("--smp") + 1], "4")
        words, clock = self.words(self.args())
        self.assertNotIn("tsc=reliable", words)
        self.assertNotIn("dmalab_exercise.mapcost_threads=4", " ".join(words))
        self.assertEqual(clock[clock.index("--smp") + 1], "1")
        # the host clock: Linux's own choice of clocksource stands
        words, _ = self.words(self.args("--smp", "4", "--host-clock"))
        self.assertNotIn("tsc=reliable", words)

    def test_no_profiler_with_more_than_one_cpu_on_the_modelled_clock(self):
        from studies import STUDIES
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertIsNone(measure.settle(self.args("--smp", "2", "--profile", "p.so"),
                                             STUDIES["dma-api"]))
        self.assertIn("crashes in boot", err.getvalue())
        self.assertIsNotNone(measure.settle(self.args("--profile", "p.so"),
                                            STUDIES["dma-api"]))

    def test_configs_picks_and_refuses_unknown_ones(self):
        from studies import STUDIES
        configs = measure.settle(self.args("--configs", "vtd-strict,no-iommu"),
                                 STUDIES["dma-api"])
        self.assertEqual([c[0] for c in configs], ["no-iommu", "vtd-strict"])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertIsNone(measure.settle(self.args("--configs", "vtd-nope"),
                                             STUDIES["dma-api"]))
        self.assertIn("no configuration vtd-nope", err.getvalue())


class CpuProfileTests(unittest.TestCase):
    """--cpu-profile: the devices' delays in a published CPU's ns, scaled to its
    instructions on the 1-ns modelled clock."""

    CONFIGS = [("vtd-strict", ["--device", "dmalab-vtd,mode=scalable",
                               "--device", "dmalab-ioat,latency-ns=2000,bandwidth=4000000000",
                               "--append", "intel_iommu=on a=b,c=d"]),
               ("set", ["--device", "dmalab-vtd,wait-ns=1000"])]

    def test_every_delay_is_divided_and_every_bandwidth_multiplied_by_t(self):
        from studies import cpus
        prof = cpus.profile("cascade-lake-6234")
        self.assertAlmostEqual(prof.ns_per_insn(1), 1 / 3.3)
        (_, a), (_, b) = cpus.apply(self.CONFIGS, prof, 1)
        # t = 0.303 ns: the model's 500, 200, 10 ns and the paper's 197 ns walk read
        self.assertEqual(a[1], "dmalab-vtd,mode=scalable,wait-ns=1650,inv-desc-ns=660,"
                               "inv-page-ns=33,walk-read-ns=650")
        self.assertEqual(a[3], "dmalab-ioat,latency-ns=6600,bandwidth=1212121212")
        self.assertEqual(a[5], "intel_iommu=on a=b,c=d")       # not a device
        self.assertTrue(b[1].startswith("dmalab-vtd,wait-ns=3300,"))   # --set: that CPU's ns
        # IPC 2 halves t
        (_, a2), _ = cpus.apply(self.CONFIGS, prof, 2)
        self.assertIn("wait-ns=3300", a2[1])
        self.assertEqual(cpus.apply(self.CONFIGS, cpus.profile("model"), 1), self.CONFIGS)

    def test_a_profiles_sizes_are_set_as_they_are_unless_given(self):
        from studies import cpus
        prof = cpus.profile("haswell-ep-2620v3")
        (_, a), _ = cpus.apply(self.CONFIGS, prof, 1)
        self.assertIn("iotlb-entries=120,iotlb-ways=8", a[1])
        (_, a), = cpus.apply([("x", ["--device", "dmalab-vtd,iotlb-entries=64"])], prof, 1)
        self.assertIn("iotlb-entries=64,", a[1])
        self.assertNotIn("iotlb-entries=120", a[1])
        self.assertIn("iotlb-entries 120 (fitted), iotlb-ways 8 (chosen)",
                      cpus.describe(prof, 1))

    def test_the_models_defaults_are_the_ones_scaled(self):
        """VTD_DELAYS must be dmalab-vtd's defaults (vtd/include/dmalab/vtd/unit.h)."""
        import re
        from studies import cpus
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "vtd", "include", "dmalab", "vtd",
                               "unit.h")) as f:
            header = f.read()
        for prop, ns in cpus.VTD_DELAYS.items():
            member = prop.replace("-", "_")
            m = re.search(r"uint64_t %s = (\d+);" % member, header)
            self.assertIsNotNone(m, member)
            self.assertEqual(int(m.group(1)), ns, prop)

    def test_every_profile_number_names_its_source(self):
        from studies import cpus
        for prof in cpus.PROFILES.values():
            self.assertGreater(len(prof.ghz.where), 20, prof.name)
            for k, s in prof.delays.items():
                self.assertIn(k, cpus.VTD_DELAYS.keys() | set(cpus.IOAT_DELAYS)
                              | set(cpus.IOAT_RATES), prof.name)
                self.assertGreater(len(s.where), 20, (prof.name, k))

    def run_main(self, *extra):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = measure.main(["--study", "dma-api", "--qemu", "q", "--kernel", "k",
                               "--initrd", "i"] + list(extra))
        return rc, err.getvalue()

    def test_a_profile_needs_the_1_ns_clock_and_a_known_name(self):
        rc, err = self.run_main("--cpu-profile", "pentium-4")
        self.assertEqual(rc, 2)
        self.assertIn("unknown CPU profile 'pentium-4'", err)
        rc, err = self.run_main("--cpu-profile", "cascade-lake-6234", "--icount", "3")
        self.assertEqual(rc, 2)
        self.assertIn("--icount 0", err)
        rc, err = self.run_main("--cpu-profile", "cascade-lake-6234", "--ipc", "0")
        self.assertEqual(rc, 2)
        self.assertIn("--ipc must be above 0", err)


def load_tests(loader, tests, pattern):
    """Running this file (or loading it, as test_runner.py does) runs its parts too."""
    import test_measure_checks
    import test_measure_tables
    for module in (test_measure_checks, test_measure_tables):
        tests.addTests(loader.loadTestsFromModule(module))
    return tests


if __name__ == "__main__":
    unittest.main(verbosity=2)
