# SPDX-License-Identifier: GPL-2.0-or-later
"""A gzip'd newc cpio writer for the initramfs, and busybox's applet links."""

import gzip
import os
import shutil

from imagelib.util import run


class Cpio:
    """Minimal writer for the 'newc' cpio format the kernel unpacks."""

    def __init__(self, fileobj):
        self.f = fileobj
        self.ino = 1
        self.dirs = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(name_b), 0))
        self.ino += 1
        self.f.write(hdr.encode() + name_b)
        self.f.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        self.f.write(data)
        self.f.write(b"\0" * ((4 - len(data) % 4) % 4))

    def mkdir(self, path):
        path = path.strip("/")
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.dirs:
                self.dirs.add(p)
                self._entry(p, 0o040755, nlink=2)

    def file(self, path, data, mode=0o644):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o100000 | mode, data)

    def symlink(self, path, target):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o120777, target.encode())

    def chardev(self, path, major, minor, mode=0o600):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o020000 | mode, rdev=(major, minor))

    def trailer(self):
        self._entry("TRAILER!!!", 0, nlink=1)


def append_archive(base, path, archive):
    """path: the initramfs `base` with the cpio archive `archive` (bytes, trailer
    included) after it, gzip'd as a member of its own (the kernel unpacks one after the
    other, later files replacing earlier ones); written whole or not at all."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        with open(base, "rb") as f:
            shutil.copyfileobj(f, raw)
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(archive)
    os.replace(tmp, path)


def busybox_links(busybox):
    out = run([busybox, "--list-full"])
    links = []
    for line in out.split():
        line = line.strip("/")
        if line and line != "bin/busybox" and "/" in line:
            links.append(line)
    return sorted(set(links))
