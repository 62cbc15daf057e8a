#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tools/testresults.py, what ./dmalab test accepts from meson: on result lists, and on a
small meson project of its own (a test that passes, one that skips) run for real."""

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testresults  # noqa: E402

LISTED = ["p:unit / faults", "p:unit / faults", "p:qtest / ioat-hostile-qtest"]
ALLOWED = {"ioat-hostile-qtest": (r"valgrind is not installed", "a reason")}


class CheckTests(unittest.TestCase):
    def check(self, results, listed=LISTED):
        return testresults.check_results(listed, results, ALLOWED)

    def test_every_listed_test_passed(self):
        self.assertEqual(self.check([(n, "OK", "") for n in LISTED]), [])

    def test_nothing_listed_or_no_results(self):
        self.assertIn("meson lists no test", self.check([], listed=[])[0])
        self.assertIn("no results", self.check(None)[0])

    def test_fewer_results_than_tests(self):
        # the two tests named faults are two: one result does not cover both
        wrong = self.check([("p:unit / faults", "OK", ""),
                            ("p:qtest / ioat-hostile-qtest", "OK", "")])
        self.assertEqual(wrong, ["1 of the 3 tests meson lists have no result: "
                                 "p:unit / faults"])

    def test_a_skip_not_allowed_fails(self):
        wrong = self.check([("p:unit / faults", "SKIP", "valgrind is not installed"),
                            ("p:unit / faults", "OK", ""),
                            ("p:qtest / ioat-hostile-qtest", "OK", "")])
        self.assertEqual(len(wrong), 1)
        self.assertIn("p:unit / faults skipped, and it is not on the allowed list", wrong[0])

    def test_an_allowed_skip_passes_for_its_reason_only(self):
        results = [("p:unit / faults", "OK", ""), ("p:unit / faults", "OK", "")]
        hostile = "p:qtest / ioat-hostile-qtest"
        self.assertEqual(self.check(results + [(hostile, "SKIP", "x: valgrind is not "
                                                "installed: ran without it")]), [])
        wrong = self.check(results + [(hostile, "SKIP", "DMALAB_NO_VALGRIND is set")])
        self.assertEqual(len(wrong), 1)
        self.assertIn("not because", wrong[0])

    def test_the_plots_may_not_skip(self):
        # ./dmalab test installs matplotlib: plots-selftest skipping there is a failure
        skipped = [("p:guest-unit / plots-selftest", "SKIP",
                    "test_plots.py: SKIP: python3-matplotlib is not installed")]
        wrong = testresults.check_results(["p:guest-unit / plots-selftest"], skipped)
        self.assertEqual(len(wrong), 1)
        self.assertIn("plots-selftest skipped, and it is not on the allowed list", wrong[0])

    def test_every_allowed_skip_has_a_reason(self):
        for name, (pattern, why) in testresults.ALLOWED_SKIPS.items():
            self.assertTrue(pattern and len(why) > 20, name)


class QemuPatchesSkipTests(unittest.TestCase):
    """qemu-patches (qemu/test_build.py) skips only where QEMU_SRC named the user's own QEMU
    tree, and says so; its skip is accepted for that reason only."""

    SCRIPT = Path(__file__).resolve().parent.parent / "qemu" / "test_build.py"
    NAME = "dmalab:qemu / qemu-patches"

    def run_test_build(self, qemu_src):
        """test_build.py on a cache without Debian's source package: (status, output)."""
        env = {k: v for k, v in os.environ.items() if k != "QEMU_SRC"}
        if qemu_src:
            env["QEMU_SRC"] = qemu_src
        with tempfile.TemporaryDirectory() as cache:
            res = subprocess.run([sys.executable, str(self.SCRIPT), cache], env=env,
                                 capture_output=True, text=True, timeout=60)
        return res.returncode, res.stdout + res.stderr

    def check(self, output):
        return testresults.check_results([self.NAME], [(self.NAME, "SKIP", output)])

    def test_the_skip_names_qemu_src_and_is_accepted(self):
        rc, out = self.run_test_build("/home/me/src/qemu")
        self.assertEqual(rc, 77, out)
        self.assertIn("QEMU_SRC=/home/me/src/qemu named your own QEMU tree", out)
        self.assertEqual(self.check(out), [])

    def test_without_qemu_src_there_is_no_reason_to_skip(self):
        rc, out = self.run_test_build(None)
        self.assertEqual(rc, 1, out)
        self.assertIn("QEMU_SRC is not set", out)
        # had it skipped with that output, or with the old message, the skip is refused
        for output in (out, "no Debian QEMU source package in /c: skipped"):
            wrong = self.check(output)
            self.assertEqual(len(wrong), 1, output)
            self.assertIn("qemu-patches skipped, but not because", wrong[0])


class MesonTests(unittest.TestCase):
    """run_checked() on a real meson build folder."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = Path(cls.tmp.name) / "src"
        src.mkdir()
        (src / "meson.build").write_text(
            "project('p', meson_version: '>=1.0.0')\n"
            "sh = find_program('sh')\n"
            "test('fine', sh, args: ['-c', 'echo fine'], suite: 'a')\n"
            "test('other', sh, args: ['-c', 'echo other'], suite: 'b')\n"
            "test('skipper', sh, args: ['-c', 'echo no tool here; exit 77'], suite: 'c')\n")
        cls.build = Path(cls.tmp.name) / "build"
        subprocess.run(["meson", "setup", str(cls.build), str(src)], check=True,
                       stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_checked(self, suites, **kw):
        with contextlib.redirect_stdout(io.StringIO()):
            return testresults.run_checked(self.build, suites, **kw)

    def test_a_run_of_passing_tests_is_accepted(self):
        rc, results, problems = self.run_checked(["a", "b"])
        self.assertEqual((rc, problems), (0, []))
        self.assertEqual(sorted(r for _, r, _ in results), ["OK", "OK"])

    def test_no_test_in_the_suites_fails(self):
        rc, _, problems = self.run_checked(["nothing"])
        self.assertEqual(rc, 0)   # meson's own verdict
        self.assertIn("meson lists no test", problems[0])

    def test_an_unlisted_skip_fails(self):
        rc, _, problems = self.run_checked(["a", "c"])
        self.assertEqual(rc, 0)   # meson's own verdict
        self.assertEqual(len(problems), 1)
        self.assertIn("p:c / skipper skipped", problems[0])
        rule = {"skipper": ("no tool here", "the test says why")}
        self.assertEqual(self.run_checked(["a", "c"], allowed=rule)[2], [])

    def test_a_build_with_one_suite_names_its_tests_bare(self):
        # meson drops 'project:suite / ' from the names when the build has one suite
        # (the sanitizer build: unit only), in --list and in testlog.json alike
        src = Path(self.tmp.name) / "one"
        src.mkdir()
        (src / "meson.build").write_text(
            "project('q', meson_version: '>=1.0.0')\n"
            "sh = find_program('sh')\n"
            "test('alone', sh, args: ['-c', 'exit 0'], suite: 'unit')\n"
            "test('also', sh, args: ['-c', 'exit 0'], suite: 'unit')\n")
        build = Path(self.tmp.name) / "one-build"
        subprocess.run(["meson", "setup", str(build), str(src)], check=True,
                       stdout=subprocess.DEVNULL)
        self.assertEqual(sorted(testresults.listed_tests(build, ["unit"])),
                         ["alone", "also"])
        with contextlib.redirect_stdout(io.StringIO()):
            rc, results, problems = testresults.run_checked(build, ["unit"])
        self.assertEqual((rc, problems, len(results)), (0, [], 2))

    def test_the_last_runs_results_do_not_count(self):
        self.assertEqual(self.run_checked(["a"])[2], [])
        # a "run" that runs nothing and exits 0 leaves the last results behind
        rc, _, problems = self.run_checked(["a"], command=["true"])
        self.assertEqual(rc, 0)
        self.assertEqual(problems, ["no results: meson wrote no meson-logs/testlog.json "
                                    "for this run"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
