# SPDX-License-Identifier: GPL-2.0-or-later
"""What the image builder's parts share: its error, logging, running commands,
and the stamps that let a warm build return at once."""

import hashlib
import os
import subprocess
import sys


class ImageError(Exception):
    pass


def log(msg):
    print("image.py: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    """Run a command; raise ImageError with its output on failure."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, **kw)
    if res.returncode != 0:
        raise ImageError("command failed (rc=%d): %s\n%s" %
                         (res.returncode, " ".join(cmd), res.stdout))
    return res.stdout


def file_sig(path):
    """Cheap identity of a file: path, size and mtime."""
    st = os.stat(path)
    return "%s:%d:%d" % (os.path.abspath(path), st.st_size, st.st_mtime_ns)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_stamp(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def write_stamp(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(value + "\n")
    os.replace(tmp, path)
