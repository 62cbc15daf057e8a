#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of ./dmalab's guidance: the verb list names every verb main() takes, each
with an example that is itself a command ./dmalab takes; `./dmalab measure` and `./dmalab
race` alone list what exists and build nothing; a verb that does not exist is refused."""

import ast
import os
import subprocess
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True
TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
sys.path.insert(0, str(TOOLS))
import dmalab  # noqa: E402

sys.path.insert(0, str(REPO / "guest-tests"))
import scenarios  # noqa: E402
import studies  # noqa: E402


def run(*args):
    # A build folder that does not exist and a PATH without meson or ninja: a verb that
    # only lists must not need either.
    env = dict(os.environ, DMALAB_BUILD="/nonexistent/dmalab-build", PATH="/usr/bin:/bin")
    env.pop("DMALAB_ACCEL", None)
    return subprocess.run([sys.executable, str(TOOLS / "dmalab.py")] + list(args),
                          capture_output=True, text=True, env=env, timeout=60)


def dispatched():
    """The verbs main() compares `cmd` with."""
    tree = ast.parse((TOOLS / "dmalab.py").read_text())
    main = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "main")
    verbs = set()
    for node in ast.walk(main):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and \
                node.left.id == "cmd":
            for c in node.comparators:
                for v in (c.elts if isinstance(c, ast.Tuple) else [c]):
                    if isinstance(v, ast.Constant) and not v.value.startswith("-"):
                        verbs.add(v.value)
    return verbs


class CliTests(unittest.TestCase):
    def test_every_verb_listed_with_an_example(self):
        listed = {v for v, _, _, _ in dmalab.VERBS}
        self.assertEqual(listed, dispatched())
        self.assertEqual(listed, set(dmalab.DETAILS))
        out = run()
        self.assertEqual(out.returncode, 0, out.stderr)
        for verb, _, what, example in dmalab.VERBS:
            self.assertIn("  %-8s %s" % (verb, what), out.stdout)
            self.assertIn("e.g. " + example, out.stdout)
            words = example.split()
            self.assertEqual(words[:2], ["./dmalab", verb])

    def test_examples_name_what_exists(self):
        races = {t[len("race-"):] for t, _, _, _ in scenarios.tests(scenarios.load())
                 if t.startswith("race-")}
        tests = {t for t, _, _, _ in scenarios.tests(scenarios.load())}
        for verb, _, _, example in dmalab.VERBS:
            words = example.split()[2:]
            if verb == "race" and words:
                self.assertIn(words[0], races)
            if verb == "measure" and words:
                self.assertIn(words[0], studies.STUDIES)
            if verb in ("replay", "help") and words:
                self.assertIn(words[0], tests if verb == "replay" else dmalab.DETAILS)

    def test_measure_alone_lists_the_studies(self):
        out = run("measure")
        self.assertEqual(out.returncode, 0, out.stderr)
        names = [l.split()[0] for l in out.stdout.splitlines() if l and not l[0].isspace()]
        self.assertEqual(names[:len(studies.STUDIES)], list(studies.STUDIES))

    def test_race_alone_lists_the_races(self):
        out = run("race")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("cow ", out.stdout)

    def test_help_of_each_verb(self):
        for verb in dmalab.DETAILS:
            for args in (("help", verb), (verb, "--help")):
                out = run(*args)
                self.assertEqual(out.returncode, 0, (args, out.stderr))
                self.assertTrue(out.stdout.startswith("usage: ./dmalab " + verb), args)

    def test_unknown_verb_refused(self):
        for args in (("bogus",), ("help", "bogus"), ("test", "--bogus")):
            out = run(*args)
            self.assertEqual(out.returncode, 2, args)
            self.assertIn("dmalab:", out.stderr)


if __name__ == "__main__":
    unittest.main()
