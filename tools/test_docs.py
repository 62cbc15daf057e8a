#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/*.rst parse cleanly with docutils: no malformed table, no inconsistent title level,
no broken inline markup (any message at warning level or above fails).  Exits 77 (meson's
skip) without python3-docutils; ./dmalab test installs it, and fails on that skip."""

import io
import os
import sys
import unittest

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")

try:
    import docutils.core
    import docutils.utils
except ImportError:
    docutils = None


def problems(text):
    """docutils' messages about one document, at warning level or above."""
    out = io.StringIO()
    try:
        docutils.core.publish_string(text, writer_name="null", settings_overrides={
            "warning_stream": out, "report_level": 2, "halt_level": 5})
    except docutils.utils.SystemMessage as e:      # a severe one ends the parse
        out.write(str(e))
    return out.getvalue()


class DocsTests(unittest.TestCase):
    def test_every_page_parses_cleanly(self):
        pages = sorted(f for f in os.listdir(DOCS) if f.endswith(".rst"))
        self.assertTrue(pages)
        for page in pages:
            with self.subTest(page=page), open(os.path.join(DOCS, page)) as f:
                self.assertEqual(problems(f.read()), "")

    def test_a_malformed_table_is_found(self):
        bad = "t\n=\n\n====  ====\na     b\n====  ====\nlonger cell  c\n====  ====\n"
        self.assertIn("Malformed table", problems(bad))


if __name__ == "__main__":
    if docutils is None:
        print("docutils is not installed (python3-docutils): skipped")
        sys.exit(77)
    unittest.main(verbosity=2)
