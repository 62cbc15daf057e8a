#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest image for dmalab-dsa: a base initramfs with a second cpio archive after it
that holds Intel's accel-config (the DSA/IAA configuration tool, Debian bookworm's
accel-config and libaccel-config1) with the shared libraries it needs and the dynamic
loader, all from Debian's packages (imagelib/userspace.py: apt-get download into
<cache>/guest-dl/userspace, dpkg-deb -x, nothing installed on the host).

The base is the image of ioatdma_patched.py, which carries dmatest.ko (Debian's
kernels do not build dmatest); idxd.ko and idxd_bus.ko are in every image (image.py's
WANTED_MODULES).  init.sh's scenario dsa (guest-tests/init/dsa.sh) configures the
device with accel-config and runs dmatest on its channels.

Outputs --out-initrd and --out-info (JSON: the packages and their versions, the files
added and their sizes).  Nothing is rebuilt when the inputs (the base initramfs, the
.deb files, this script and userspace.py) did not change.
"""

import io
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib.cpio import Cpio, append_archive  # noqa: E402
from imagelib.util import ImageError, file_sig, sha256_file  # noqa: E402
from imagelib import userspace  # noqa: E402

STAMP_VERSION = "1"

# accel-config and every library package its NEEDED entries lead to
PACKAGES = ("accel-config", "libaccel-config1", "libjson-c5", "libc6")
# The folder under <cache>/guest-dl/userspace they are unpacked into (NAME-root)
ROOT_NAME = "dsa"
# The executables: path in the unpacked packages -> path in the guest
PROGRAMS = {"usr/bin/accel-config": "usr/bin/accel-config"}


def log(msg):
    print("dsa_image.py: " + msg, file=sys.stderr, flush=True)


def write_initrd(path, base, root):
    """base's archive, then one with PROGRAMS and what they need: the files added."""
    buf = io.BytesIO()
    cp = Cpio(buf)
    added = userspace.add_programs(cp, root, PROGRAMS)
    cp.trailer()
    append_archive(base, path, buf.getvalue())
    return added


def main(argv=None):
    cache, base, out, info_path = userspace.layer_args(
        __doc__.splitlines()[0], "dsa-image-info.json",
        "the initramfs to add to (ioatdma_patched.py's, with dmatest.ko)", argv)
    try:
        root, versions = userspace.fetch(cache, ROOT_NAME, PACKAGES)
        key = userspace.layer_key([STAMP_VERSION, sha256_file(__file__),
                                   sha256_file(userspace.__file__), file_sig(base)], versions)
        if userspace.layer_current(out, info_path, key):
            log("up to date (accel-config %s)" % versions["accel-config"])
            return 0
        added = write_initrd(out, base, root)
        info = userspace.layer_done(out, info_path, base, key, added,
                                    {"packages": versions, "programs": PROGRAMS})
        log("built %s: %d files, %d bytes added (accel-config %s)" % (
            out, len(added), info["added_bytes"], versions["accel-config"]))
    except (ImageError, OSError, ValueError) as e:
        log("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
