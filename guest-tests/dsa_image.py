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

import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib import userspace  # noqa: E402

STAMP_VERSION = "1"
INFO = "dsa-image-info.json"
BASE_HELP = "the initramfs to add to (ioatdma_patched.py's, with dmatest.ko)"
# The packages whose versions the log names
SHOWN = ("accel-config",)

# accel-config and every library package its NEEDED entries lead to
PACKAGES = ("accel-config", "libaccel-config1", "libjson-c5", "libc6")
# The folder under <cache>/guest-dl/userspace they are unpacked into (NAME-root)
ROOT_NAME = "dsa"
# The executables: path in the unpacked packages -> path in the guest
PROGRAMS = {"usr/bin/accel-config": "usr/bin/accel-config"}


def main(argv=None):
    return userspace.programs_layer(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
