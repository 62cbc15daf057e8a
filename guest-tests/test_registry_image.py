#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of image.py's cpio writer, ELF and boot-kernel helpers (no QEMU;
test_registry.py runs them)."""

import io
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import image   # noqa: E402


class ImageTests(unittest.TestCase):
    def test_cpio_roundtrip(self):
        buf = io.BytesIO()
        cp = image.Cpio(buf)
        cp.file("etc/a/b.txt", b"hello")
        cp.symlink("bin/sh", "/bin/busybox")
        cp.chardev("dev/console", 5, 1)
        cp.trailer()
        with tempfile.TemporaryDirectory() as d:
            res = subprocess.run(["/bin/busybox", "cpio", "-t"],
                                 input=buf.getvalue(),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, cwd=d)
        names = res.stdout.decode().split()
        for n in ("etc", "etc/a", "etc/a/b.txt", "bin/sh", "dev/console"):
            self.assertIn(n, names)

    def test_modinfo_of_busybox_like_elf(self):
        with self.assertRaises(image.ImageError):
            image.modinfo(b"not an elf")

    def test_boot_kernel_fallback(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(b"\0" * 4096)
            f.flush()
            elf, why = image.extract_vmlinux(f.name)
        self.assertIsNone(elf)
        self.assertIn("bzImage", why)
        self.assertFalse(image.has_pvh_note(b"\x7fELF" + b"\0" * 60))

    def test_closure_order(self):
        deps = {"a": ["b", "c"], "b": ["c"], "c": []}
        self.assertEqual(image.closure("a", deps), ["c", "b", "a"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
