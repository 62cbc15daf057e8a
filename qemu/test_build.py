#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""build.py's handling of dmalab's QEMU patches, on a copy of Debian's source package from
the cache (no configure, no compile): a patch that changed after an older version of it was
applied makes the source be unpacked again, with or without the stamp that records the
patches, and a patch that does not apply leaves the tree alone.  Exit 77 (skipped) without
the downloaded source package when QEMU_SRC names the user's own QEMU tree; without the
package and without QEMU_SRC, exit 1.

Usage: test_build.py CACHE"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
import build  # noqa: E402

CACHE = Path(sys.argv[1] if len(sys.argv) > 1 else Path.home() / ".cache" / "dmalab")
MARK = "referenced.  A"        # words in patch 0005's comment


class PatchTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="dmalab-build-test-"))
        shutil.copytree(CACHE / "qemu-dl", cls.tmp / "cache" / "qemu-dl")
        shutil.copytree(build.REPO / "qemu" / "patches", cls.tmp / "patches")
        # patch 0005 (physmem.c), whichever patches follow it
        cls.p0005 = cls.tmp / "patches" / next(p.name for p in build.PATCHES
                                              if p.name.startswith("0005-"))
        cls.text = cls.p0005.read_text()
        assert MARK in cls.text

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def prepare(self):
        """build.main()'s source steps; the quiet tree it leaves."""
        build.PATCHES = sorted((self.tmp / "patches").glob("*.patch"))
        with contextlib.redirect_stdout(io.StringIO()):
            return build.prepare_source(self.tmp / "cache")[0]

    def physmem(self, src):
        return (src / "system" / "physmem.c").read_text()

    def test_changed_patches_unpack_again(self):
        self.p0005.write_text(self.text)
        src = self.prepare()
        self.assertIn("tlb_view", self.physmem(src))
        # the patch changes after it was applied: the stamp says so
        self.p0005.write_text(self.text.replace(MARK, "referenced (changed).  A"))
        src = self.prepare()
        self.assertIn("referenced (changed)", self.physmem(src))
        # an older cache without the stamp, the other version applied: the patch does not
        # apply, and the source is unpacked again
        (self.tmp / "cache" / "qemu-src.patches").unlink()
        self.p0005.write_text(self.text)
        src = self.prepare()
        self.assertNotIn("referenced (changed)", self.physmem(src))
        self.assertIn("tlb_view", self.physmem(src))
        self.assertEqual(list(src.glob("system/*.rej")), [])

    def test_a_patch_that_does_not_apply_leaves_the_tree_alone(self):
        src = self.prepare()
        before = self.physmem(src)
        bad = self.tmp / "patches" / "9999-bad.patch"
        bad.write_text(self.text.replace("tlb_view", "tlb_other").replace(
            "CPUAddressSpace *cpuas = data.host_ptr;", "int nothing_like_this;"))
        try:
            build.PATCHES = sorted((self.tmp / "patches").glob("*.patch"))
            with self.assertRaises(build.PatchError):
                build.hook_devices(src)
            self.assertEqual(self.physmem(src), before)
        finally:
            bad.unlink()


if __name__ == "__main__":
    if not list((CACHE / "qemu-dl").glob("qemu_*.dsc")):
        # build.py downloads the package unless QEMU_SRC names a QEMU tree of the user's:
        # that is the one reason to skip, and the skip says which tree
        # (tools/testresults.py accepts the skip only when it does)
        if os.environ.get("QEMU_SRC"):
            print("no Debian QEMU source package in %s: QEMU_SRC=%s named your own QEMU "
                  "tree: skipped" % (CACHE, os.environ["QEMU_SRC"]))
            sys.exit(77)
        print("no Debian QEMU source package in %s, and QEMU_SRC is not set: the build "
              "should have downloaded it" % CACHE)
        sys.exit(1)
    unittest.main(argv=sys.argv[:1], verbosity=2)
