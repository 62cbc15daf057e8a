# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest's /init and the workload files it sources, as the images carry them:
guest-tests/init.sh becomes /init, guest-tests/init/NAME.sh /lib/dmalab/NAME.sh."""

import hashlib
import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = os.path.join(HERE, "init")
PARTS_DIR = "lib/dmalab"


def init_files():
    """[(path in the image, source file)]: /init first, then its parts by name."""
    parts = sorted(f for f in os.listdir(PARTS) if f.endswith(".sh"))
    return [("init", os.path.join(HERE, "init.sh"))] + [
        ("%s/%s" % (PARTS_DIR, f), os.path.join(PARTS, f)) for f in parts]


def add_init(cp):
    """Writes every init file into the cpio archive cp (executable); returns
    [(path, size)]."""
    added = []
    for path, src in init_files():
        with open(src, "rb") as f:
            data = f.read()
        cp.file(path, data, 0o755)
        added.append((path, len(data)))
    return added


def init_digest():
    """One hash of every init file's path and content."""
    h = hashlib.sha256()
    for path, src in init_files():
        with open(src, "rb") as f:
            h.update(path.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()


def init_text():
    """All of the init files' text, /init first: what the guest's shell runs."""
    out = []
    for _, src in init_files():
        with open(src) as f:
            out.append(f.read())
    return "\n".join(out)
