#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the scenario and bench registry and its entries' expectations (no QEMU
needed); loading this loads test_registry_summaries.py (the bench and measure summaries)
and test_registry_image.py (image.py's cpio/ELF helpers) too."""

import glob
import io
import json
import os
import re
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# A module parameter's name in the exerciser's sources (guest-tests/module/*.c)
MODULE_PARAM_RE = re.compile(r"\bmodule_param(?:_named|_array|_cb|_string)?\(\s*(\w+)\s*,")
# dmalab_exercise.NAME in the harness's sources, the exerciser's module (.ko) aside
EXERCISER_WORD_RE = re.compile(r"\bdmalab_exercise\.(?!ko\b)(\w+)")


def harness_sources():
    """The harness's programs and studies (guest-tests/*.py, studies/*.py), not its tests."""
    return [p for p in sorted(glob.glob(os.path.join(HERE, "*.py")) +
                              glob.glob(os.path.join(HERE, "studies", "*.py")))
            if not os.path.basename(p).startswith("test_")]


def named_exerciser_parameters(scenarios, benches, sources=()):
    """{(where, name)}: the exerciser's parameters that the registry's scenarios (params,
    mode, dmalab_exercise.NAME words of kernel_args and of a runner append) and benches
    (their args), and the files `sources`, name."""
    out = set()
    for name, e in scenarios.items():
        where = "scenario %s, " % name
        out |= {(where + "params", k) for k in e.get("params", {})}
        if "mode" in e:
            out.add((where + "mode", "mode"))
        out |= {(where + "kernel_args", k)
                for k in EXERCISER_WORD_RE.findall(e.get("kernel_args", ""))}
        append = e.get("runner", {}).get("append", [])
        for text in append if isinstance(append, list) else [append]:
            out |= {(where + "runner append", k) for k in EXERCISER_WORD_RE.findall(text)}
    for name, b in benches.items():
        out |= {("bench %s" % name, k) for a in b.get("args", [])
                for k in EXERCISER_WORD_RE.findall(str(a))}
    for path in sources:
        with open(path) as f:
            rel = os.path.relpath(path, HERE)
            out |= {(rel, k) for k in EXERCISER_WORD_RE.findall(f.read())}
    return out


class RegistryTests(unittest.TestCase):
    """guest-tests/scenarios.json and scenarios.py."""

    def test_every_entry_parses(self):
        import scenarios
        reg = scenarios.load()
        self.assertIn("memcpy", reg)
        ap = runner.make_parser()
        for test, name, kernel, entry in scenarios.tests(reg):
            with self.subTest(test=test):
                args = ap.parse_args(scenarios.runner_args(entry) + [
                    "--qemu", "q", "--kernel", "k", "--initrd", "i"])
                self.assertTrue(entry.get("doc"), "a scenario says what it checks")
                for d in args.device:
                    self.assertNotIn("@", d)
                    if "fault-plan=" in d:
                        self.assertTrue(os.path.exists(d.split("fault-plan=")[1]))

    def test_an_entry_becomes_runner_arguments(self):
        import scenarios
        entry = {"devices": ["dmalab-vtd", "dmalab-ioat,fault-plan=@plans@/uaf.json"],
                 "kernel_args": "intel_iommu=on", "mode": "uaf",
                 "params": {"stale_expect": "fault"}, "iterations": 7,
                 "expect": {"min_ops": 10, "lines": ["^ok 2 a$", "^ok 3 b$"],
                            "vtd": ["faults==0"], "device_errors": "1+"},
                 "allow": ["^x"], "qemu_args": ["-icount", "shift=0"],
                 "runner": {"boots": 3, "same_fault_log": True}}
        a = runner.make_parser().parse_args(scenarios.runner_args(entry))
        a.registry_expect = runner.Expectations.from_entry(entry)
        x = runner.expectations(a)
        self.assertEqual(a.device, ["dmalab-vtd", "dmalab-ioat,fault-plan=" +
                                    os.path.join(scenarios.PLANS, "uaf.json")])
        self.assertEqual(a.append, ["intel_iommu=on dmalab_exercise.mode=uaf "
                                    "dmalab_exercise.stale_expect=fault"])
        self.assertEqual((a.iterations, x.ktap.min_ops, str(x.counters.errors),
                          a.timeout, a.boots, a.same_fault_log),
                         (7, 10, "1+", 300, 3, True))
        self.assertEqual(x.log.lines, ("^ok 2 a$", "^ok 3 b$"))
        self.assertEqual(([c.text for c in x.counters.vtd], x.log.allow, a.qemu_arg),
                         (["faults==0"], ("^x",), ["-icount", "shift=0"]))
        # the expectations are data all the way: none of them is a runner argument
        self.assertEqual([w for w in scenarios.runner_args(entry)
                          if w.startswith(("--expect", "--min", "--allow"))], [])

    def test_the_modelled_clock_unless_an_entry_says_why_not(self):
        import scenarios
        reg = scenarios.load()
        clocks = {n: a[a.index("--clock") + 1]
                  for n, a in ((n, scenarios.runner_args(e)) for n, e in reg.items())}
        self.assertEqual(clocks["raid-ops"], "modelled")
        self.assertEqual(clocks["vtd-stale-lazy-sm"], "modelled")
        self.assertEqual(clocks["vtd-vhost-sm"], "host", "a variant keeps its entry's clock")
        host = sorted(n for n, c in clocks.items() if c == "host")
        for n in host:
            self.assertTrue(reg[n]["clock"].startswith("host: ") and len(reg[n]["clock"]) > 20,
                            n)
        self.assertEqual(host, ["accel-fallback", "hostile-ring", "mmio-map-race", "movdir-mttcg",
                                "reset-qmp", "vtd-vhost", "vtd-vhost-ats", "vtd-vhost-ats-sm",
                                "vtd-vhost-sm"], "a new host-clock entry is a choice")
        for bad in ("host", "host: ", "modelled", 3):
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                json.dump({"scenarios": {"x": {"doc": "d", "clock": bad}}}, f)
                f.flush()
                with self.assertRaisesRegex(scenarios.RegistryError, "unknown clock"):
                    scenarios.load(f.name)

    def test_unknown_fields_are_refused(self):
        import scenarios
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"x": {"doc": "d", "expect": {"min_opps": 1}}}},
                      f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError, "expect.min_opps"):
                scenarios.load(f.name)

    def test_a_scalable_entry_stands_for_its_scalable_mode_variant(self):
        import scenarios
        entry = {"doc": "d", "kernels": ["6.1", "6.12"],
                 "devices": ["dmalab-vtd,audit=on,fault-plan=/p.json", "dmalab-ioat"],
                 "expect": {"min_ops": 5, "vtd": ["iotlb-inv-page>=1"]},
                 "scalable": {"vtd": ",first-stage=off", "doc": "s",
                              "expect": {"vtd": ["piotlb-inv-page>=1"]}}}
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"x": entry}}, f)
            f.flush()
            reg = scenarios.load(f.name)
        v = reg["x-sm"]
        self.assertEqual(v["devices"], [
            "dmalab-vtd,mode=scalable,first-stage=off,audit=on,fault-plan=/p.json",
            "dmalab-ioat"])
        self.assertEqual(v["expect"], {"min_ops": 5, "vtd": ["piotlb-inv-page>=1",
                                                             "pc-inv-global>=1"],
                                       "lines": [scenarios.SCALABLE_ECAP_LINE]})
        self.assertEqual(entry["expect"]["vtd"], ["iotlb-inv-page>=1"])  # unchanged
        ecap = "DMAR: dmar0: reg_base_addr fed90000 ver 1:0 cap 112078c222f0602 ecap %s"
        self.assertRegex(ecap % "1c80000002043", scenarios.SCALABLE_ECAP_LINE)
        self.assertRegex(ecap % "80000000000", scenarios.SCALABLE_ECAP_LINE)
        self.assertNotRegex(ecap % "2043", scenarios.SCALABLE_ECAP_LINE)
        self.assertNotRegex(ecap % "1070000002043", scenarios.SCALABLE_ECAP_LINE)
        self.assertEqual(reg["x"]["devices"][0], "dmalab-vtd,audit=on,fault-plan=/p.json")
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"y": dict(entry, scalable=True)}}, f)
            f.flush()
            plain = scenarios.load(f.name)
        self.assertEqual(plain["y"]["expect"], entry["expect"])
        self.assertEqual(plain["y-sm"]["expect"]["vtd"],
                         ["iotlb-inv-page>=1", "pc-inv-global>=1"])
        self.assertIn("scalable mode", v["doc"])
        self.assertEqual([t[0] for t in scenarios.tests(reg)],
                         ["x", "x-6.12", "x-sm", "x-sm-6.12"])
        for bad in ({"kernels": ["6.1"]}, {"vtdd": ","}):
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                json.dump({"scenarios": {"x": dict(entry, scalable=bad)}}, f)
                f.flush()
                with self.assertRaisesRegex(scenarios.RegistryError, "scalable: unknown"):
                    scenarios.load(f.name)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"x": {"doc": "d", "scalable": True}}}, f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError, "without dmalab-vtd"):
                scenarios.load(f.name)

    def test_every_bench_names_a_program_that_takes_its_arguments(self):
        import importlib
        import scenarios
        benches = scenarios.load_benches()
        self.assertIn("bench-host-cost", benches)
        for name, b in benches.items():
            with self.subTest(bench=name):
                self.assertTrue(b.get("doc"), "a bench says what it measures")
                prog = importlib.import_module(b["program"].removesuffix(".py"))
                extra = ["--qemu", "q", "--kernel", "k", "--initrd", "i", "--log-dir", "d"]
                if "race_plugin" in b.get("needs", []):
                    extra += ["--race-plugin", "p"]
                # The program's own parser, as meson calls it: an argument it does
                # not take ends parse_args() with SystemExit.
                with unittest.mock.patch("sys.stderr", io.StringIO()):
                    prog.make_parser().parse_args(b.get("args", []) + extra)
                with self.assertRaises(SystemExit), \
                        unittest.mock.patch("sys.stderr", io.StringIO()):
                    prog.make_parser().parse_args(b.get("args", []) + extra + ["--bogus"])

    def test_mmio_map_race_boots_under_tcg_whatever_kvm_can_do(self):
        # The race it reproduces is in TCG's MMIO TLB: under KVM it passes without the
        # patch. With KVM taken as usable (the probe skipped) auto must still pick TCG
        # and say why, and a forced KVM must be refused, not obeyed.
        import scenarios
        argv = scenarios.runner_args(scenarios.load()["mmio-map-race"]) + [
            "--qemu", "q", "--kernel", "k", "--initrd", "i"]
        env = {"DMALAB_KVM_PROBE": "skip", "DMALAB_ACCEL": "auto"}
        with unittest.mock.patch.dict(os.environ, env):
            ap = runner.make_parser()
            args = ap.parse_args(argv)
            runner.check_args(ap, args)
            self.assertEqual(args.accel_used, "tcg")
            self.assertIn("TCG's MMIO TLB", args.accel_why)
            cmd = runner.build_cmdline(args)
            self.assertEqual(cmd[cmd.index("-accel") + 1], "tcg")
            for forced in (["--accel", "kvm"], []):
                os.environ["DMALAB_ACCEL"] = "kvm"
                args = ap.parse_args(argv + forced)
                with self.assertRaises(SystemExit), \
                        unittest.mock.patch("sys.stderr", io.StringIO()) as err:
                    runner.check_args(ap, args)
                self.assertIn("KVM was asked for, but the race is in TCG's", err.getvalue())

    def test_a_paced_result_comes_with_its_parameters_and_back(self):
        # The exerciser checks pacing, and prints 'ok N paced', only with pace_
        # parameters: an entry with them must expect that result, and one expecting it
        # must give them, or dropping either drops the check without a word.
        import scenarios
        paced = 0
        for name, e in scenarios.load().items():
            params = {k for k in e.get("params", {}) if k.startswith("pace_")}
            wants = any(l.startswith("^ok ") and l.endswith(" paced$")
                        for l in e.get("expect", {}).get("lines", []))
            with self.subTest(scenario=name):
                self.assertEqual(bool(params), wants)
                if wants:
                    self.assertEqual(params, {"pace_bandwidth", "pace_latency_ns"})
            paced += wants
        self.assertGreaterEqual(paced, 1)   # memcpy-paced

    def test_every_exerciser_parameter_named_is_a_module_parameter(self):
        # Linux loads a module with a parameter it does not have ("dmalab_exercise: unknown
        # parameter 'x' ignored") with that parameter's default: a misspelt params key or
        # dmalab_exercise.X word would drop what its scenario or study is for, unseen.
        import scenarios
        have = set()
        for path in glob.glob(os.path.join(HERE, "module", "*.c")):
            with open(path) as f:
                have |= set(MODULE_PARAM_RE.findall(f.read()))
        self.assertGreaterEqual(have, {"mode", "iommu_expect", "stale_expect", "iterations"})
        named = named_exerciser_parameters(scenarios.load(), scenarios.load_benches(),
                                           harness_sources())
        self.assertEqual(sorted((where, k) for where, k in named if k not in have), [])
        self.assertIn(("scenario memcpy-iommu, params", "iommu_expect"), named)
        self.assertIn(("studies/dma_api.py", "mapcost_calls"), named)
        # what it reads: a misspelt key, a mode, kernel_args and runner appends
        entry = {"params": {"iommu_expct": "translated"}, "mode": "uaf",
                 "kernel_args": "intel_iommu=on dmalab_exercise.seeed=2",
                 "runner": {"append": ["dmalab_exercise.fast_ms=9 x.y=1"]}}
        self.assertEqual(sorted(named_exerciser_parameters({"x": entry}, {})),
                         [("scenario x, kernel_args", "seeed"),
                          ("scenario x, mode", "mode"),
                          ("scenario x, params", "iommu_expct"),
                          ("scenario x, runner append", "fast_ms")])

    def test_a_bench_with_an_unknown_field_is_refused(self):
        import scenarios
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"benches": {"x": {"doc": "d", "program": "p", "arg": []}}}, f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError, "arg"):
                scenarios.load_benches(f.name)


class ExpectationTests(unittest.TestCase):
    """harness/expect.py: a registry entry's expectations as dataclasses, the
    runner's options over them, and the errors a bad one gives."""

    # How an expect field was once handed to the runner, as an option: the
    # registry's expectations must judge as those options did.
    OPTIONS = {"channels": "--expect-channels", "min_ops": "--min-ops",
               "min_device_descriptors": "--min-device-descriptors",
               "min_device_bytes": "--min-device-bytes",
               "device_errors": "--expect-device-errors", "irq": "--expect-irq",
               "lines": "--expect-line", "vtd": "--expect-vtd", "ioat": "--expect-ioat",
               "dsa": "--expect-dsa",
               "races": "--expect-race", "race_count": "--expect-race-count",
               "allow_skip": "--allow-skip"}

    def test_an_entry_becomes_dataclasses(self):
        from harness import expect as ex
        x = ex.Expectations.from_entry({
            "expect": {"channels": 2, "min_ops": 10, "min_device_descriptors": 5,
                       "min_device_bytes": 4096, "device_errors": "1",
                       "irq": ["ioat-msix"], "lines": ["^ok 2 a$"],
                       "vtd": ["iotlb-inv-page>=ops*2", "faults==0", "waits<ops/4",
                               "walks>ops"],
                       "races": ["kind=write"], "race_count": 2},
            "allow": ["^DMAR: x"]})
        self.assertEqual(x.binding, ex.Binding(False, "0x8086:0x2021", 2))
        self.assertEqual(x.ktap, ex.KtapResults(min_ops=10))
        self.assertEqual(x.counters.errors, ex.DeviceErrors(1, False))
        self.assertEqual((x.counters.min_descriptors, x.counters.min_bytes), (5, 4096))
        inv, faults, waits, walks = x.counters.vtd
        self.assertEqual((inv.counter, inv.op, inv.want(100)), ("iotlb-inv-page", ">=", 200))
        self.assertEqual((faults.counter, faults.op, faults.want(100)), ("faults", "==", 0))
        self.assertEqual((waits.want(100), walks.want(100)), (25, 100))
        self.assertTrue(inv.holds(200, 100))
        self.assertFalse(inv.holds(199, 100))
        self.assertFalse(walks.holds(100, 100))
        self.assertEqual(x.log, ex.LogLines(("^ok 2 a$",), ("^DMAR: x",), ("ioat-msix",)))
        self.assertEqual(x.races, ex.RaceReports(("kind=write",), 2))
        self.assertEqual(x.liveness, ex.Liveness(None))
        # nothing expected: the defaults, and -1 channels for any number
        self.assertEqual(ex.Expectations.from_entry({}), ex.Expectations())
        self.assertIsNone(ex.Expectations.from_entry(
            {"expect": {"channels": -1}}).binding.channels)
        self.assertEqual(ex.Expectations.from_entry(
            {"expect": {"device_errors": "3+"}}).counters.errors, ex.DeviceErrors(3, True))

    def test_a_bad_expectation_says_what_is_wrong(self):
        from harness import expect as ex
        for field, value, words in (
                ("min_ops", "10", "expect.min_ops: '10' is not a whole number"),
                ("channels", True, "expect.channels: True is not a whole number"),
                ("lines", "^ok 1 x$", "expect.lines: '^ok 1 x$' is not a list of strings"),
                ("vtd", ["faults=0"], "'faults=0': want NAME OP VALUE"),
                ("vtd", ["faults==ops*x"], "'faults==ops*x': want NAME OP VALUE"),
                ("device_errors", "1-", "expected N or N+, got '1-'"),
                ("lines", ["ok 2 a"], "a KTAP result line must be anchored ('^ok 2 a')"),
                ("lines", ["(a"], "an expected line '(a': missing )"),
                ("races", ["[x"], "an expected race '[x'"),
                ("min_opps", 1, "unknown expect.min_opps")):
            with self.subTest(field=field, value=value):
                with self.assertRaises(ex.ExpectationError) as cm:
                    ex.Expectations.from_entry({"expect": {field: value}})
                self.assertIn(words, str(cm.exception))
        with self.assertRaisesRegex(ex.ExpectationError, "a skip allowed for '\\('"):
            ex.KtapResults(allow_skip=("(",))

    def test_the_registry_refuses_a_bad_expectation_by_name(self):
        import scenarios
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"scenarios": {"x": {"doc": "d", "expect": {"vtd": ["faults"]}}}}, f)
            f.flush()
            with self.assertRaisesRegex(scenarios.RegistryError,
                                        "scenario x: --expect-vtd 'faults': want NAME"):
                scenarios.load(f.name)

    def test_options_add_to_the_entry_or_replace_its_values(self):
        base = runner.Expectations.from_entry(
            {"expect": {"min_ops": 10, "lines": ["^a$"], "vtd": ["faults==0"],
                        "device_errors": "1+"}, "allow": ["^x"]})

        def over(*argv):
            args = runner.make_parser().parse_args(["--judge-log", "f"] + list(argv))
            args.registry_expect = base
            return runner.expectations(args)
        self.assertEqual(over(), base)
        x = over("--min-ops", "5", "--expect-line", "^b$", "--allow", "^y",
                 "--expect-vtd", "waits>=1", "--expect-device-errors", "0",
                 "--expect-channels", "-1", "--expect-id", "", "--expect-unbound",
                 "--probe-qmp", "2.5", "--expect-race-count", "0")
        self.assertEqual((x.ktap.min_ops, x.log.lines, x.log.allow),
                         (5, ("^a$", "^b$"), ("^x", "^y")))
        self.assertEqual([c.text for c in x.counters.vtd], ["faults==0", "waits>=1"])
        self.assertEqual(x.counters.errors, runner.DeviceErrors(0, False))
        self.assertEqual(x.binding, runner.Binding(True, "", None))
        self.assertEqual((x.liveness.max_round_trip, x.races.count), (2.5, 0))

    def test_every_entry_judges_as_its_options_did(self):
        # Each scenario's expectations, built from the registry, against the same
        # expectations handed to the runner as options: the same dataclasses.
        import scenarios
        for name, entry in scenarios.load().items():
            argv = ["--judge-log", "f"]
            for key, value in entry.get("expect", {}).items():
                for one in value if isinstance(value, list) else [value]:
                    argv += [self.OPTIONS[key], str(one)]
            for a in entry.get("allow", []):
                argv += ["--allow", a]
            with self.subTest(scenario=name):
                args = runner.make_parser().parse_args(argv)
                self.assertEqual(runner.Expectations.from_entry(entry),
                                 runner.expectations(args))

    def test_run_hands_the_entry_expectations_to_the_runner(self):
        import scenarios
        entry = scenarios.load()["vtd-stale-strict"]
        with unittest.mock.patch.object(runner, "main", return_value=0) as main:
            self.assertEqual(scenarios.main(["run", "vtd-stale-strict", "--timeout", "9"]),
                             0)
        argv, expect = main.call_args.args
        self.assertEqual(argv, scenarios.runner_args(entry) + ["--timeout", "9"])
        self.assertEqual(expect, runner.Expectations.from_entry(entry))
        self.assertTrue(expect.counters.vtd)


def load_tests(loader, tests, pattern):
    """Running this file (or loading it, as test_runner.py does) runs its parts too."""
    import test_registry_image
    import test_registry_summaries
    for module in (test_registry_summaries, test_registry_image):
        tests.addTests(loader.loadTestsFromModule(module))
    return tests


if __name__ == "__main__":
    unittest.main(verbosity=2)
