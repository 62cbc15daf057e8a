#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest image with network user space: the image's initramfs with a second
cpio archive after it that holds iperf3 and iproute2's ip (as /usr/bin/ip-full,
beside busybox's ip, which has no netns), with the shared libraries they need and
the dynamic loader, all from Debian bookworm's packages (imagelib/userspace.py:
apt-get download into <cache>/guest-dl/userspace, dpkg-deb -x, nothing installed
on the host).  init.sh's dmalab.iperf workload (the udp study) runs them.

Outputs --out-initrd and, beside it, --out-info (JSON: the packages and their
versions, the files added and their sizes).  Nothing is rebuilt when the inputs
(the base initramfs, the .deb files, this script and userspace.py) did not change.
"""

import argparse
import hashlib
import io
import json
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib.cpio import Cpio, append_archive  # noqa: E402
from imagelib.util import ImageError, file_sig, read_stamp, sha256_file, write_stamp  # noqa: E402
from imagelib import userspace  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STAMP_VERSION = "1"

# The packages whose files the guest needs: the programs' own and every library
# package their NEEDED entries lead to (a missing one is an error naming the library).
PACKAGES = ("iperf3", "libiperf0", "libssl3", "libsctp1", "libc6",
            "iproute2", "libbpf1", "libelf1", "zlib1g", "libmnl0", "libbsd0", "libmd0",
            "libcap2")
# The executables: path in the unpacked packages -> path in the guest
PROGRAMS = {"usr/bin/iperf3": "usr/bin/iperf3", "bin/ip": "usr/bin/ip-full"}
# Folders the workload needs that the base image lacks (ip netns keeps its
# namespaces' mount points under /run/netns, on a tmpfs init.sh mounts there)
DIRS = ("run", "etc/netns")


def log(msg):
    print("net_image.py: " + msg, file=sys.stderr, flush=True)


def write_initrd(path, base, root):
    """base's archive, then one with PROGRAMS and what they need: the files added."""
    buf = io.BytesIO()
    cp = Cpio(buf)
    for d in DIRS:
        cp.mkdir(d)
    added = userspace.add_programs(cp, root, PROGRAMS)
    cp.trailer()
    append_archive(base, path, buf.getvalue())
    return added


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get(
        "DMALAB_CACHE", os.path.expanduser("~/.cache/dmalab")))
    ap.add_argument("--base-initrd", required=True, help="the image's initramfs.cpio.gz")
    ap.add_argument("--out-initrd", required=True, help="the initramfs to write")
    ap.add_argument("--out-info", help="the JSON to write (default: "
                    "net-image-info.json beside --out-initrd)")
    args = ap.parse_args(argv)
    base = os.path.abspath(args.base_initrd)
    out = os.path.abspath(args.out_initrd)
    info_path = os.path.abspath(args.out_info or os.path.join(
        os.path.dirname(out), "net-image-info.json"))
    try:
        root, versions = userspace.fetch(os.path.abspath(args.cache), "net", PACKAGES)
        h = hashlib.sha256()
        for part in [STAMP_VERSION, sha256_file(__file__), sha256_file(userspace.__file__),
                     file_sig(base)] + ["%s=%s" % kv for kv in sorted(versions.items())]:
            h.update(part.encode() + b"\n")
        key = h.hexdigest()
        if read_stamp(out + ".stamp") == key and os.path.isfile(out) and \
                os.path.isfile(info_path):
            log("up to date (%s)" % ", ".join("%s %s" % (p, versions[p])
                                              for p in ("iperf3", "iproute2")))
            return 0
        added = write_initrd(out, base, root)
        info = {"base_initrd": base, "packages": versions,
                "programs": PROGRAMS, "files": dict(added),
                "added_bytes": sum(n for _, n in added if isinstance(n, int)),
                "initrd_bytes": os.path.getsize(out),
                "base_bytes": os.path.getsize(base)}
        with open(info_path + ".tmp", "w") as f:
            json.dump(info, f, indent=1)
        os.replace(info_path + ".tmp", info_path)
        write_stamp(out + ".stamp", key)
        log("built %s: %d files, %d bytes added (iperf3 %s, iproute2 %s)" % (
            out, len(added), info["added_bytes"], versions["iperf3"], versions["iproute2"]))
    except (ImageError, OSError, ValueError) as e:
        log("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
