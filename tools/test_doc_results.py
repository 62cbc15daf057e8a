#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every figure the docs quote from a run is that run's output, regenerated here.

A literal block whose introducing paragraph names a command of the two that regenerate
figures is an excerpt of that command's output, checked line for line:

``python3 guest-tests/measure.py tables docs/results/NAME.json.gz``
    a study's tables from its committed results file (guest-tests/measure.py), and
    ``bench.py tables`` a bench comparison's (guest-tests/bench.py --results);
``build/vtd/tools/vtd-pciebench-replay PROP=VALUE ...``
    the held-out check of docs/measure.rst (vtd/tools/pciebench_replay.cc; the
    executable's path comes from $DMALAB_PCIEBENCH_REPLAY, which meson sets).

An excerpt's lines (less their common indentation and trailing blanks) must appear in the
output in the same order and, between lines of ``...``, one after the other. And: no
literal block that looks like a study's output stands without such a command; every file
in docs/results is quoted; the study pages hold no reStructuredText table of figures, which
no command could regenerate.  Standard library only."""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DOCS = os.path.join(ROOT, "docs")
sys.path.insert(0, os.path.join(ROOT, "guest-tests"))
sys.dont_write_bytecode = True

TABLES = re.compile(r"``python3 guest-tests/(measure|bench)\.py tables (docs/results/[\w.+-]+)``")
REPLAY = re.compile(r"``build/vtd/tools/vtd-pciebench-replay((?: [\w-]+=[\w.]+)*)``")
# the first lines of a study's tables (measure.py print_tables, measure_tables.table)
LOOKS_LIKE_OUTPUT = re.compile(r"^\s*(==== \S+ .*====$|(op|nic|size|way|window)=\S+ .*\(.*"
                               r"(ns|instructions?|datagram|packet|copy|call)\b)")
# The study pages: every figure of theirs comes from a results file
STUDY_PAGES = ("measure.rst", "swiotlb.rst", "offload.rst")
# reStructuredText tables there that hold no measured figure, by their first header cell:
# measure.rst's CPU profiles (numbers with their sources), offload.rst's configurations
NOT_FIGURES = ("profile", "configuration")


def literal_blocks(text):
    """[(line number, introducing paragraph, block lines dedented)] of every ``::`` block."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::") or line.lstrip().startswith(".."):
            continue
        start = i
        while start > 0 and lines[start - 1].strip():
            start -= 1
        intro = " ".join(x.strip() for x in lines[start:i + 1])
        indent = len(lines[start]) - len(lines[start].lstrip())
        block, j = [], i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > indent):
            block.append(lines[j].rstrip())
            j += 1
        while block and not block[-1]:
            block.pop()
        while block and not block[0]:
            block.pop(0)
        cut = min((len(b) - len(b.lstrip()) for b in block if b), default=0)
        out.append((i + 1, intro, [b[cut:] for b in block]))
    return out


def rst_tables(text):
    """[(line number, first header cell)] of every simple and grid table."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        simple = re.fullmatch(r"=+( +=+)+", line.strip())
        grid = re.fullmatch(r"\+(-+\+)+", line.strip())
        if not (simple or grid) or (i and lines[i - 1].strip()):
            continue
        head = lines[i + 1].strip().strip("|").split()[:1] if i + 1 < len(lines) else []
        out.append((i + 1, head[0] if head else ""))
    return out


def unmatched(excerpt, output):
    """None when excerpt's lines appear in output as described above, else the first
    line that does not."""
    segments, seg = [], []
    for line in excerpt:
        if line.strip() == "...":
            segments.append(seg)
            seg = []
        elif line:
            seg.append(line)
    segments.append(seg)
    out = [line.rstrip() for line in output.splitlines()]
    at = 0
    for seg in [s for s in segments if s]:
        for k in range(at, len(out) - len(seg) + 1):
            if out[k:k + len(seg)] == seg:
                at = k + len(seg)
                break
        else:
            # the longest head of the segment that matches anywhere from `at`
            for n in range(len(seg), 0, -1):
                if any(out[k:k + n] == seg[:n] for k in range(at, len(out))):
                    return seg[n] if n < len(seg) else seg[-1]
            return seg[0]
    return None


_OUTPUTS = {}


def tables_output(tool, path):
    """What `TOOL.py tables PATH` prints (None when it refuses the file)."""
    if (tool, path) not in _OUTPUTS:
        module = __import__(tool)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = module.tables_from(os.path.join(ROOT, path))
        _OUTPUTS[(tool, path)] = buf.getvalue() if rc == 0 else None
    return _OUTPUTS[(tool, path)]


def replay_output(args):
    exe = os.environ.get("DMALAB_PCIEBENCH_REPLAY")
    if not exe:
        return None
    key = ("replay", args)
    if key not in _OUTPUTS:
        _OUTPUTS[key] = subprocess.run([exe] + shlex.split(args), capture_output=True,
                                       text=True, check=True).stdout
    return _OUTPUTS[key]


def pages():
    return sorted(f for f in os.listdir(DOCS) if f.endswith(".rst"))


def read(page):
    with open(os.path.join(DOCS, page)) as f:
        return f.read()


class Excerpts(unittest.TestCase):
    def test_every_excerpt_is_the_commands_output(self):
        seen = 0
        for page in pages():
            for lineno, intro, block in literal_blocks(read(page)):
                t, r = TABLES.search(intro), REPLAY.search(intro)
                if not (t or r):
                    continue
                with self.subTest(page=page, line=lineno):
                    if t:
                        output = tables_output(t.group(1), t.group(2))
                        self.assertIsNotNone(output, "%s is no results file" % t.group(2))
                    else:
                        output = replay_output(r.group(1).strip())
                        if output is None:
                            self.skipTest("DMALAB_PCIEBENCH_REPLAY is not set")
                    wrong = unmatched(block, output)
                    self.assertIsNone(wrong, "%s:%d: not in the output, or out of order: %r"
                                      % (page, lineno, wrong))
                    seen += 1
        self.assertGreater(seen, 0)

    def test_no_runs_output_stands_without_its_command(self):
        for page in pages():
            for lineno, intro, block in literal_blocks(read(page)):
                if TABLES.search(intro) or REPLAY.search(intro):
                    continue
                looks = [b for b in block if LOOKS_LIKE_OUTPUT.match(b)]
                self.assertEqual(looks, [], "%s:%d: a run's output without the command that "
                                 "regenerates it" % (page, lineno))

    def test_every_results_file_is_quoted(self):
        quoted = {t.group(2) for page in pages() for _, intro, _ in literal_blocks(read(page))
                  for t in [TABLES.search(intro)] if t}
        files = {"docs/results/" + f for f in os.listdir(os.path.join(DOCS, "results"))}
        self.assertEqual(sorted(files - quoted), [])
        self.assertEqual(sorted(quoted - files), [])

    def test_the_study_pages_hold_no_table_of_figures(self):
        for page in STUDY_PAGES:
            for lineno, head in rst_tables(read(page)):
                self.assertIn(head, NOT_FIGURES, "%s:%d: a table no command regenerates: "
                              "quote the run's output instead" % (page, lineno))


class Matching(unittest.TestCase):
    OUT = "a\nb\nc\nd\ne\n"

    def test_lines_in_order_and_together(self):
        self.assertIsNone(unmatched(["b", "c"], self.OUT))
        self.assertIsNone(unmatched(["a", "...", "d", "e"], self.OUT))
        self.assertEqual(unmatched(["b", "d"], self.OUT), "d")      # not together
        self.assertEqual(unmatched(["d", "...", "b"], self.OUT), "b")  # not in order
        self.assertEqual(unmatched(["b", "x"], self.OUT), "x")      # not there

    def test_blocks_and_their_paragraphs(self):
        text = ("Intro ``python3 guest-tests/measure.py tables docs/results/x.json.gz``\n"
                "prints::\n\n    one\n      two\n\nafter\n")
        [(lineno, intro, block)] = literal_blocks(text)
        self.assertEqual((lineno, block), (2, ["one", "  two"]))
        self.assertEqual(TABLES.search(intro).groups(), ("measure", "docs/results/x.json.gz"))

    def test_a_table_is_found(self):
        text = "x\n\n====  ====\nsize  ns\n====  ====\n1     2\n====  ====\n"
        self.assertEqual(rst_tables(text), [(3, "size")])


if __name__ == "__main__":
    unittest.main(verbosity=2)
