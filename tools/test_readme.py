#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The README against what it describes, without a build:

- its top part (from the title to the end of "What you can do") is at most 120 lines;
- every `./dmalab VERB ...` names a verb tools/dmalab.py takes, and a race, study, test or
  verb that exists after it (race, measure, replay, test --stress, help);
- every `meson test -C DIR NAME` names a test of the registry (guest-tests/scenarios.json,
  through scenarios.py) or of a meson.build file, and every `--suite` a suite;
- every relative link, and every docs/ path it names, exists;
- each output block of "What you can do" comes from where its paragraph says: a
  `measure.py tables` command (run again here on the committed results file), a scenario
  that "must print" it (the lines its registry entry expects), or a docs page it links to;
- its durations are docs/timings.json's, with their dates, and so are docs/setup.rst's;
- docs/setup.rst's package lists are tools/dmalab.py's PACKAGES, BACKPORTS and
  PLOT_PACKAGES;
- the last line it says `./dmalab test` prints is the one tools/dmalab.py prints.

docs/setup.rst's commands are held to the same rules. Standard library only."""

import contextlib
import io
import json
import os
import re
import shlex
import sys
import unittest

sys.dont_write_bytecode = True
TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.path.insert(0, os.path.join(ROOT, "guest-tests"))
import dmalab  # noqa: E402
import scenarios  # noqa: E402
import studies  # noqa: E402
import test_doc_results  # noqa: E402

README = os.path.join(ROOT, "README.md")
SETUP = os.path.join(ROOT, "docs", "setup.rst")
TIMINGS = os.path.join(ROOT, "docs", "timings.json")
TOP_HEADING = "## What you can do"
MAX_TOP_LINES = 120


def read(path):
    with open(path) as f:
        return f.read()


# --- what exists ----------------------------------------------------------------------

def registry_tests():
    """{meson test name: suite} of the guest scenarios and benches, as meson reads them."""
    out = {}
    for cmd, name_at, suite_at in (("meson", 0, 3), ("meson-benches", 0, 3)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = scenarios.main([cmd])
        assert rc == 0, "scenarios.py %s failed" % cmd
        for line in buf.getvalue().splitlines():
            f = line.split("\t")
            out[f[name_at]] = f[suite_at]
    return out


def meson_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        if "meson.build" in files:
            yield os.path.join(top, "meson.build")


LIST_RE = re.compile(r"foreach\s+(\w+)\s*:\s*\[(.*?)\]", re.S)
CALL_RE = re.compile(r"\b(?:test|benchmark)\(\s*([^,]+),")


def evaluate(expr, var, value):
    """A test's name: 'literal', VAR, VAR.replace('a', 'b') and sums of them; None for
    anything else (f[0]: the registry's names)."""
    out = ""
    for term in expr.split("+"):
        term = term.strip()
        m = re.fullmatch(r"'([^']*)'", term)
        r = re.fullmatch(r"(\w+)\.replace\('([^']*)',\s*'([^']*)'\)", term)
        if m:
            out += m.group(1)
        elif term == var and value is not None:
            out += value
        elif r and r.group(1) == var and value is not None:
            out += value.replace(r.group(2), r.group(3))
        else:
            return None
    return out


def meson_build_tests():
    """({test and benchmark names}, {suites}) the meson.build files declare."""
    names, suites = set(), set()
    for path in meson_files():
        text = re.sub(r"#.*", "", read(path))
        suites |= set(re.findall(r"suite:\s*'([^']+)'", text))
        loops = []          # (start, end, var, values) of each foreach block
        for m in LIST_RE.finditer(text):
            end = text.find("endforeach", m.end())
            loops.append((m.start(), end, m.group(1), re.findall(r"'([^']*)'", m.group(2))))
        for c in CALL_RE.finditer(text):
            loop = next((l for l in loops if l[0] < c.start() < l[1]), None)
            for value in (loop[3] if loop else [None]):
                name = evaluate(c.group(1), loop[2] if loop else None, value)
                if name is not None:
                    names.add(name)
    return names, suites


_KNOWN = {}


def known():
    """Everything a command may name."""
    if not _KNOWN:
        reg = registry_tests()
        names, suites = meson_build_tests()
        _KNOWN.update(
            verbs={v for v, _, _, _ in dmalab.VERBS},
            races={t[len("race-"):] for t in dmalab.race_scenarios()},
            studies=set(studies.STUDIES),
            guest_tests=set(reg),
            tests=set(reg) | names,
            suites=set(reg.values()) | suites)
    return _KNOWN


# --- the README's parts ---------------------------------------------------------------

def top_part(text):
    """The README's lines from the title to the end of "What you can do" (trailing blank
    lines left out), or None without that section."""
    lines = text.splitlines()
    if TOP_HEADING not in lines:
        return None
    end = next((i for i in range(lines.index(TOP_HEADING) + 1, len(lines))
                if lines[i].startswith("## ")), len(lines))
    top = lines[:end]
    while top and not top[-1].strip():
        top.pop()
    return top


def fenced_blocks(lines):
    """[(info string, block lines, the paragraph before it)] of the ``` blocks."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info, j = lines[i][3:].strip(), i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            end = i                 # the paragraph before, over blank lines
            while end > 0 and not lines[end - 1].strip():
                end -= 1
            k = end
            while k > 0 and lines[k - 1].strip() and not lines[k - 1].startswith("```"):
                k -= 1
            out.append((info, lines[i + 1:j], " ".join(lines[k:end])))
            i = j + 1
        else:
            i += 1
    return out


def snippets(text, rst=False):
    """The command-like pieces of a page: inline code, and the lines of sh blocks (or of
    reStructuredText's literal blocks), each less a trailing # comment."""
    lines = text.splitlines()
    out = []
    if rst:
        out += re.findall(r"``(.+?)``", text, re.S)
        out += [l for _, _, block in test_doc_results.literal_blocks(text) for l in block]
    else:
        prose = re.sub(r"^```.*?^```$", "", text, flags=re.M | re.S)
        out += re.findall(r"`([^`]+)`", prose)
        out += [l for info, block, _ in fenced_blocks(lines) if info == "sh" for l in block]
    return [re.sub(r"\s+#\s.*$", "", " ".join(s.split())) for s in out]


def placeholder(word):
    return word == "..." or re.fullmatch(r"[A-Z][A-Z0-9_]*\.*", word) is not None


def words_after(snippet, prefix):
    """The words after each occurrence of prefix, up to a shell separator."""
    for m in re.finditer(re.escape(prefix), snippet):
        try:
            words = shlex.split(snippet[m.end():])
        except ValueError:
            words = snippet[m.end():].split()
        cut = next((i for i, w in enumerate(words) if w in ("&&", ";", "|", "||")),
                   len(words))
        yield words[:cut]


def dmalab_problems(text, rst=False):
    k, problems = known(), []
    for s in snippets(text, rst):
        for words in words_after(s, "./dmalab"):
            if words[:1] == ["--accel"]:
                words = words[2:]
            if not words or placeholder(words[0]) or words[0].startswith("-"):
                continue
            verb, args = words[0], [w for w in words[1:] if not placeholder(w)]
            first = args[0] if args and not args[0].startswith("-") else None
            if verb not in k["verbs"]:
                problems.append("`%s`: ./dmalab takes no verb %r" % (s, verb))
            elif verb == "race" and first and first not in k["races"] and \
                    first.removeprefix("race-") not in k["races"]:
                problems.append("`%s`: no race scenario %r" % (s, first))
            elif verb == "measure" and first and first not in k["studies"]:
                problems.append("`%s`: no study %r" % (s, first))
            elif verb == "replay" and first and first not in k["guest_tests"]:
                problems.append("`%s`: no guest test %r" % (s, first))
            elif verb == "help" and first and first not in dmalab.DETAILS:
                problems.append("`%s`: no verb %r to help with" % (s, first))
            elif verb == "test" and "--stress" in args:
                for i, w in enumerate(args):
                    prev = args[i - 1] if i else ""
                    if w.startswith("-") or prev in ("--stress", "--first-seed"):
                        continue
                    if w not in k["guest_tests"]:
                        problems.append("`%s`: no guest test %r" % (s, w))
    return problems


MESON_OPTS_WITH_VALUE = {"--suite", "--no-suite", "--setup", "--repeat", "--num-processes",
                         "-j", "--timeout-multiplier", "-t", "--wrapper"}


def meson_problems(text, rst=False):
    k, problems = known(), []
    for s in snippets(text, rst):
        for words in words_after(s, "meson test -C "):
            i = 1                   # words[0] is the build folder
            while i < len(words):
                w = words[i]
                if w in MESON_OPTS_WITH_VALUE:
                    if w in ("--suite", "--no-suite") and i + 1 < len(words) and \
                            not placeholder(words[i + 1]) and words[i + 1] not in k["suites"]:
                        problems.append("`%s`: no suite %r" % (s, words[i + 1]))
                    i += 2
                    continue
                if not w.startswith("-") and not placeholder(w) and w not in k["tests"]:
                    problems.append("`%s`: no test %r in the registry or meson.build" % (s, w))
                i += 1
    return problems


def link_problems(text):
    problems = []
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    targets += re.findall(r"(?<![\w/.-])(docs/[\w./-]*[\w/])", text)
    for t in targets:
        if re.match(r"[a-z]+:", t) or t.startswith("#"):
            continue
        path = os.path.join(ROOT, t.split("#")[0])
        if not os.path.exists(path):
            problems.append("%s: no such file" % t)
    return problems


def length_problems(text):
    top = top_part(text)
    if top is None:
        return ["no %r section" % TOP_HEADING]
    if len(top) > MAX_TOP_LINES:
        return ["the top part is %d lines, more than %d" % (len(top), MAX_TOP_LINES)]
    return []


def normal(s):
    return " ".join(s.split())


def output_problems(text):
    """Each output block of the top part against the source its paragraph names."""
    problems = []
    for info, block, intro in fenced_blocks(top_part(text) or []):
        if info == "sh":
            continue
        lines = [l for l in block if l.strip() and l.strip() != "..."]
        t = re.search(r"`python3 guest-tests/(measure|bench)\.py tables "
                      r"(docs/results/[\w.+-]+)`", intro)
        m = re.search(r"`meson test -C build ([\w.-]+)[^`]*`", intro)
        docs = re.findall(r"\]\((docs/[^)#\s]+\.rst)\)", intro)
        if t:
            out = test_doc_results.tables_output(t.group(1), t.group(2))
            wrong = "no output" if out is None else test_doc_results.unmatched(block, out)
            if wrong:
                problems.append("%s: not in its output: %r" % (t.group(0), wrong))
        elif m and "must print" in intro:
            entry = scenario_entry(m.group(1))
            expected = (entry or {}).get("expect", {}).get("lines", [])
            for l in lines:
                cut = l[:-3] if l.endswith("...") else l
                if not any(re.search(r, cut) for r in expected):
                    problems.append("%s expects no line like %r" % (m.group(1), l))
        elif docs:
            texts = [normal(read(os.path.join(ROOT, d))) for d in docs
                     if os.path.exists(os.path.join(ROOT, d))]
            for l in lines:
                if not any(normal(l) in t for t in texts):
                    problems.append("%r is in none of %s" % (l, ", ".join(docs)))
        else:
            problems.append("an output block with no source: %r" % (block[:1],))
    return problems


def scenario_entry(test):
    for name, scenario, _, entry in scenarios.tests(scenarios.load()):
        if name == test:
            return entry
    return None


DURATION_RE = re.compile(r"\b(\d+) min(?:utes?)?\b(?: (\d+) s\b)?")


def stated(minutes, secs, seconds):
    if secs is not None:
        return minutes * 60 + secs == seconds
    return minutes == round(seconds / 60)


def paragraphs(text):
    return [normal(p) for p in re.split(r"\n\s*\n", text)]


def timing_problems(text, timings, strict=True):
    """Each current figure (timings.json's "test" and "demo") stated with its date; with
    strict (the README), no other duration stated at all."""
    current = {k: v for k, v in timings.items() if isinstance(v, dict) and "seconds" in v}
    problems, seen = [], set()
    for p in paragraphs(text):
        for m in DURATION_RE.finditer(p):
            minutes, secs = int(m.group(1)), m.group(2) and int(m.group(2))
            hits = [k for k, v in current.items() if stated(minutes, secs, v["seconds"])
                    and v["date"] in p]
            seen |= set(hits)
            if strict and not hits:
                problems.append("%r is not a figure of docs/timings.json with its date"
                                % m.group(0))
    problems += ["the %s time of docs/timings.json (%d s, %s) is not stated" % (
        k, current[k]["seconds"], current[k]["date"]) for k in sorted(set(current) - seen)]
    return problems


def earlier_problems(text, timings):
    """Earlier figures keep their place in docs/setup.rst, as minutes and seconds."""
    out = []
    for e in timings.get("earlier", []):
        want = "%d min %d s" % divmod(e["seconds"], 60)
        if want not in normal(text):
            out.append("earlier %s figure %s (%s) is not stated" % (e["what"], want,
                                                                    e.get("date")))
    return out


def package_problems(text):
    """docs/setup.rst's three lists: a definition list whose term names the Python list,
    the packages the leading ``name`` words of its definition."""
    problems = []
    lines = text.splitlines()
    for name in ("PACKAGES", "BACKPORTS", "PLOT_PACKAGES"):
        at = [i for i, l in enumerate(lines) if l and not l[0].isspace()
              and "``%s``" % name in l]
        if len(at) != 1:
            problems.append("docs/setup.rst: %d terms name ``%s``" % (len(at), name))
            continue
        body, i = [], at[0] + 1
        while i < len(lines) and lines[i].startswith(" "):
            body.append(lines[i].strip())
            i += 1
        lead = re.match(r"(\s*``[^`\s]+``)+", " ".join(body))
        stated_pkgs = re.findall(r"``([^`\s]+)``", lead.group(0)) if lead else []
        want = list(getattr(dmalab, name))
        if sorted(stated_pkgs) != sorted(want):
            problems.append("docs/setup.rst's %s: %s; tools/dmalab.py: %s" % (
                name, " ".join(stated_pkgs), " ".join(want)))
    return problems


def last_line_problems(text):
    """`./dmalab test`'s last line as the README gives it, and as test() prints it."""
    src = read(os.path.join(TOOLS, "dmalab.py"))
    printed = re.search(r'f"\{passed\} passed, \{[^}]+\} failed, \{skipped\} skipped"', src)
    if not printed:
        return ["tools/dmalab.py's test() no longer prints 'N passed, M failed, K skipped'"]
    if "`N passed, M failed, K skipped`" not in text:
        return ["the README does not give ./dmalab test's last line"]
    return []


# --- the tests ------------------------------------------------------------------------

class Readme(unittest.TestCase):
    def setUp(self):
        self.text = read(README)
        self.setup = read(SETUP)
        self.timings = json.loads(read(TIMINGS))

    def test_top_part_fits(self):
        self.assertEqual(length_problems(self.text), [])

    def test_dmalab_commands_exist(self):
        self.assertEqual(dmalab_problems(self.text), [])
        self.assertEqual(dmalab_problems(self.setup, rst=True), [])

    def test_meson_tests_exist(self):
        self.assertEqual(meson_problems(self.text), [])
        self.assertEqual(meson_problems(self.setup, rst=True), [])

    def test_links_exist(self):
        self.assertEqual(link_problems(self.text), [])

    def test_output_comes_from_its_source(self):
        self.assertEqual(output_problems(self.text), [])

    def test_timings_are_the_measured_ones(self):
        self.assertEqual(timing_problems(self.text, self.timings), [])
        self.assertEqual(timing_problems(self.setup, self.timings, strict=False), [])
        self.assertEqual(earlier_problems(self.setup, self.timings), [])

    def test_package_lists_are_dmalab_s(self):
        self.assertEqual(package_problems(self.setup), [])

    def test_last_line_of_test(self):
        self.assertEqual(last_line_problems(self.text), [])


class Breakage(unittest.TestCase):
    """Each check finds its fault in a copy of the README or docs/setup.rst."""

    def setUp(self):
        self.text = read(README)
        self.setup = read(SETUP)
        self.timings = json.loads(read(TIMINGS))

    def changed(self, old, new, text=None):
        text = self.text if text is None else text
        self.assertIn(old, text)
        return text.replace(old, new, 1)

    def test_a_long_top_part(self):
        self.assertTrue(length_problems(self.text.replace(
            TOP_HEADING + "\n", TOP_HEADING + "\n" + "x\n" * 120, 1)))
        self.assertTrue(length_problems(self.text.replace(TOP_HEADING, "## Things")))

    def test_a_wrong_verb_race_study_or_test(self):
        for old, new in (("./dmalab demo", "./dmalab demonstrate"),
                         ("./dmalab race cow", "./dmalab race cows"),
                         ("./dmalab measure dma-api", "./dmalab measure dma-apis")):
            self.assertTrue(dmalab_problems(self.changed(old, new)), new)
        self.assertTrue(dmalab_problems("`./dmalab replay memcpi`"))
        self.assertTrue(dmalab_problems("`./dmalab test --stress 2 --busy raid-opz`"))
        self.assertFalse(dmalab_problems("`./dmalab replay NAME --seed N --clock C`"))

    def test_a_wrong_meson_test_or_suite(self):
        self.assertTrue(meson_problems(self.changed("meson test -C build vfio-ir",
                                                    "meson test -C build vfio-irq")))
        self.assertTrue(meson_problems("`meson test -C build --suite guests`"))
        self.assertFalse(meson_problems("`meson test -C build-san --suite unit`\n"
                                        "`meson test -C build --benchmark dsa-ops`\n"
                                        "`meson test -C build vtd-translate test-cli`"))

    def test_a_broken_link(self):
        self.assertTrue(link_problems(self.changed("(docs/setup.rst)", "(docs/set-up.rst)")))
        self.assertTrue(link_problems("see docs/nothing.rst"))

    def test_output_not_from_its_source(self):
        for old, new in (("2587  2585-2588", "2588  2585-2588"),
                         ("ok 2 get-user-pages-loses-the-data", "ok 2 gup-loses-the-data"),
                         ("8 copies of 4096 bytes", "9 copies of 4096 bytes"),
                         ("```\nok 2 get", "```sh\n```\n\n```\nok 2 get")):
            self.assertTrue(output_problems(self.changed(old, new)), new)

    def test_a_stale_duration(self):
        self.assertTrue(timing_problems(self.changed("56 min", "37 min"), self.timings))
        self.assertTrue(timing_problems(self.changed("on 2026-12-07 (commit",
                                                     "on 2026-12-06 (commit"), self.timings))
        self.assertTrue(timing_problems(self.text + "\nIt takes 10 minutes.\n", self.timings))
        later = dict(self.timings, test=dict(self.timings["test"], seconds=3600))
        self.assertTrue(timing_problems(self.text, later))
        self.assertTrue(timing_problems(self.setup, later, strict=False))

    def test_a_package_list_that_differs(self):
        self.assertTrue(package_problems(self.changed("``valgrind`` ", "", self.setup)))
        self.assertTrue(package_problems(self.changed("``python3-docutils``", "``python3-x``",
                                                      self.setup)))
        self.assertTrue(package_problems(self.changed("(``BACKPORTS``)", "", self.setup)))

    def test_another_last_line(self):
        self.assertTrue(last_line_problems(self.changed("`N passed, M failed, K skipped`",
                                                        "`N passed`")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
