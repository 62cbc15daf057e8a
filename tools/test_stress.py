#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of tools/stress.py: the options of ./dmalab test --stress and ./dmalab
replay, what each run adds to its test's command line, and the tally, with a stand-in
for meson test (no build, no QEMU)."""

import io
import os
import sys
import tempfile
import unittest
import unittest.mock

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress  # noqa: E402


class StressTests(unittest.TestCase):
    def test_options(self):
        self.assertEqual(stress.parse_stress(["--stress", "20", "--busy", "raid-ops",
                                              "raid-ops-6.12"]),
                         (20, True, None, ["raid-ops", "raid-ops-6.12"]))
        self.assertEqual(stress.parse_stress(["raid-ops", "--stress", "3", "--first-seed",
                                              "7"]), (3, False, 7, ["raid-ops"]))
        for bad in (["--stress", "0", "x"], ["--stress", "2"], ["--stress", "2", "--bogus",
                                                                 "x"]):
            with self.assertRaises(ValueError):
                stress.parse_stress(bad)

    def test_each_run_has_its_seed_on_the_host_clock_and_failures_say_how_to_replay(self):
        calls = []

        def fake(build, name, args, verbose=False, log=None, multiplier=1):
            calls.append((name, args, multiplier))
            seed = int(args[args.index("--seed") + 1])
            with open(args[args.index("--log") + 1], "w") as f:
                f.write("serial\n")
            return 1 if (name, seed) == ("b", 11) else 0

        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(stress, "meson_test", fake), \
                unittest.mock.patch("sys.stdout", io.StringIO()) as out:
            rc = stress.stress(d, ["--stress", "2", "--first-seed", "10", "a", "b"])
            kept = sorted(os.listdir(os.path.join(d, "stress")))
        self.assertEqual(rc, 1)
        self.assertEqual([(n, a[a.index("--seed") + 1], a[a.index("--clock") + 1])
                          for n, a, _ in calls],
                         [("a", "10", "host"), ("a", "11", "host"), ("b", "10", "host"),
                          ("b", "11", "host")])
        self.assertTrue(all(m > 1 for _, _, m in calls), "a busy host gets more time")
        text = out.getvalue()
        self.assertIn("a                            2 of 2 passed", text)
        self.assertIn("b                            1 of 2 passed", text)
        self.assertIn("replay: ./dmalab replay b --seed 11 --clock host", text)
        self.assertEqual(kept, ["b.seed11.log"], "only a failing run's files are kept")

    def test_replay_takes_a_seed_and_a_clock_only(self):
        with unittest.mock.patch.object(stress, "meson_test", lambda *a, **k: (a, k)):
            args, kw = stress.replay("build", ["raid-ops", "--seed", "3", "--clock", "host"])
        self.assertEqual(args, ("build", "raid-ops", ["--seed", "3", "--clock", "host"]))
        self.assertTrue(kw["verbose"])
        with unittest.mock.patch("sys.stderr", io.StringIO()):
            self.assertEqual(stress.replay("build", ["raid-ops", "--timeout", "1"]), 2)
            self.assertEqual(stress.replay("build", []), 2)

    def test_busy_host_starts_a_loop_per_core_and_ends_them(self):
        with stress.BusyHost(True) as busy:
            self.assertEqual(len(busy.procs), os.cpu_count() or 1)
            self.assertTrue(all(p.poll() is None for p in busy.procs))
        self.assertTrue(all(p.poll() is not None for p in busy.procs))
        with stress.BusyHost(False) as idle:
            self.assertEqual(idle.procs, [])


class TestCommandTests(unittest.TestCase):
    """./dmalab test with words after it that are not --stress runs nothing."""

    def run_main(self, *words):
        import dmalab
        out, err = io.StringIO(), io.StringIO()
        with unittest.mock.patch.object(dmalab, "test", side_effect=AssertionError("ran")), \
                unittest.mock.patch.object(sys, "argv", ["dmalab"] + list(words)), \
                unittest.mock.patch.object(sys, "stdout", out), \
                unittest.mock.patch.object(sys, "stderr", err):
            with self.assertRaises(SystemExit) as cm:
                dmalab.main()
        return cm.exception.code, out.getvalue(), err.getvalue()

    def test_help_and_unknown_words_run_no_suite(self):
        code, out, _ = self.run_main("test", "--help")
        self.assertEqual(code, 0)
        self.assertIn("./dmalab test --stress N", out)
        code, _, err = self.run_main("test", "raid-ops")
        self.assertEqual(code, 2)
        self.assertIn("usage: ./dmalab test", err)

    def test_test_alone_runs_the_suite(self):
        import dmalab
        with unittest.mock.patch.object(dmalab, "test", return_value=0) as suite, \
                unittest.mock.patch.object(sys, "argv", ["dmalab", "test"]):
            with self.assertRaises(SystemExit) as cm:
                dmalab.main()
        self.assertEqual(cm.exception.code, 0)
        suite.assert_called_once()


if __name__ == "__main__":
    unittest.main()
