#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest image with network user space: the image's initramfs with a second
cpio archive after it that holds iperf3 and iproute2's ip (as /usr/bin/ip-full,
beside busybox's ip, which has no netns), dmalab-xsk (helpers/net/dmalab_xsk.c, an
AF_XDP receive-and-drop socket) with libxdp's BPF program files, the shared
libraries they need and the dynamic loader, all from Debian bookworm's packages
(imagelib/userspace.py: apt-get download into <cache>/guest-dl/userspace, dpkg-deb
-x, nothing installed on the host), and this tree's init.sh as /init (with the parts it sources, guest-tests/init/).  init.sh's
dmalab.iperf workload (the udp study) and dmalab.xsk workload (the xdp study) run
them.

dmalab-xsk is built here with the host's gcc against the headers and link-time
libraries of libxdp-dev and libbpf-dev, unpacked beside the rest (they do not go
into the image); it is linked dynamically, not static like image.py's helpers, and
runs on the image's libxdp.so.1 and libbpf.so.1.  /init is this tree's init.sh, so
that an image built on another tree's base initramfs runs this tree's workloads.

Outputs --out-initrd and, beside it, --out-info (JSON: the packages and their
versions, the files added and their sizes) and the folder net-helpers (dmalab-xsk).
Nothing is rebuilt when the inputs (the base initramfs, the .deb files, this script,
userspace.py, dmalab_xsk.c and init.sh) did not change.
"""

import hashlib
import io
import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib.cpio import Cpio, append_archive  # noqa: E402
from imagelib.util import ImageError, file_sig, read_stamp, run, sha256_file, write_stamp  # noqa: E402
from imagelib import userspace  # noqa: E402
from imagelib.init_files import add_init, init_digest  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STAMP_VERSION = "2"

# The packages whose files the guest needs: the programs' own and every library
# package their NEEDED entries lead to (a missing one is an error naming the library).
PACKAGES = ("iperf3", "libiperf0", "libssl3", "libsctp1", "libc6",
            "iproute2", "libbpf1", "libelf1", "zlib1g", "libmnl0", "libbsd0", "libmd0",
            "libcap2", "libxdp1")
# What dmalab-xsk is built against, unpacked beside them and not put in the image:
# libxdp's and libbpf's headers and their libxdp.so and libbpf.so links
BUILD_PACKAGES = ("libxdp-dev", "libbpf-dev")
# The folder under <cache>/guest-dl/userspace they are unpacked into (NAME-root)
ROOT_NAME = "net-xdp"
# The executables: path in the unpacked packages -> path in the guest
PROGRAMS = {"usr/bin/iperf3": "usr/bin/iperf3", "bin/ip": "usr/bin/ip-full"}
# dmalab-xsk: its source and its path in the guest
XSK_SRC = os.path.join(HERE, "helpers", "net", "dmalab_xsk.c")
XSK_GUEST = "usr/bin/dmalab-xsk"
# libxdp's BPF program files, which it loads at run time from this folder (its
# compiled-in BPF_OBJECT_PATH): the default program for AF_XDP sockets (and the one
# for kernels before 5.3) and the dispatcher that runs it
BPF_DIR = "usr/lib/x86_64-linux-gnu/bpf"
BPF_OBJECTS = ("xsk_def_xdp_prog.o", "xsk_def_xdp_prog_5.3.o", "xdp-dispatcher.o")
# The tree's /init
# Folders the workload needs that the base image lacks (ip netns keeps its
# namespaces' mount points under /run/netns, on a tmpfs init.sh mounts there)
DIRS = ("run", "etc/netns")


def log(msg):
    print("net_image.py: " + msg, file=sys.stderr, flush=True)


def build_xsk(root, outdir, versions):
    """dmalab-xsk built into outdir/net-helpers from XSK_SRC with the host's gcc, with
    the headers and libraries unpacked in root (only when the source, the packages'
    versions or gcc changed): its path."""
    bdir = os.path.join(outdir, "net-helpers")
    os.makedirs(bdir, exist_ok=True)
    exe = os.path.join(bdir, "dmalab-xsk")
    libdirs = [os.path.join(root, d) for d in ("usr/lib/x86_64-linux-gnu",
                                               "lib/x86_64-linux-gnu")]
    h = hashlib.sha256()
    for part in [sha256_file(XSK_SRC), run(["gcc", "-dumpfullversion"]).strip()] + [
            "%s=%s" % (p, versions.get(p)) for p in ("libxdp-dev", "libbpf-dev",
                                                     "libxdp1", "libbpf1")]:
        h.update(part.encode() + b"\n")
    if read_stamp(exe + ".stamp") == h.hexdigest() and os.path.isfile(exe):
        return exe
    log("building dmalab-xsk")
    run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror",
         "-I", os.path.join(root, "usr/include"), "-o", exe, XSK_SRC] +
        ["-L" + libdirs[0]] + ["-Wl,-rpath-link=" + ":".join(libdirs), "-lxdp", "-lbpf"])
    write_stamp(exe + ".stamp", h.hexdigest())
    return exe


def write_initrd(path, base, root, xsk):
    """base's archive, then one with PROGRAMS, dmalab-xsk (xsk: the built one), what
    they need, libxdp's BPF program files and init.sh as /init (and its parts): the
    files added."""
    buf = io.BytesIO()
    cp = Cpio(buf)
    for d in DIRS:
        cp.mkdir(d)
    added = userspace.add_programs(cp, root, PROGRAMS, {xsk: XSK_GUEST})
    for name in BPF_OBJECTS:
        userspace.add_path(cp, root, BPF_DIR + "/" + name, None, added)
    added += add_init(cp)
    cp.trailer()
    append_archive(base, path, buf.getvalue())
    return added


def main(argv=None):
    cache, base, out, info_path = userspace.layer_args(
        __doc__.splitlines()[0], "net-image-info.json", "the image's initramfs.cpio.gz", argv)
    try:
        root, versions = userspace.fetch(cache, ROOT_NAME, PACKAGES + BUILD_PACKAGES)
        xsk = build_xsk(root, os.path.dirname(out), versions)
        key = userspace.layer_key([STAMP_VERSION, sha256_file(__file__),
                                   sha256_file(userspace.__file__), file_sig(base),
                                   sha256_file(xsk), init_digest()], versions)
        if userspace.layer_current(out, info_path, key):
            log("up to date (%s)" % ", ".join("%s %s" % (p, versions[p])
                                              for p in ("iperf3", "iproute2", "libxdp1")))
            return 0
        added = write_initrd(out, base, root, xsk)
        info = userspace.layer_done(out, info_path, base, key, added, {
            "packages": versions, "build_packages": list(BUILD_PACKAGES),
            "programs": PROGRAMS, "built": {os.path.basename(xsk): XSK_GUEST}})
        log("built %s: %d files, %d bytes added (iperf3 %s, iproute2 %s, libxdp1 %s)" % (
            out, len(added), info["added_bytes"], versions["iperf3"], versions["iproute2"],
            versions["libxdp1"]))
    except (ImageError, OSError, ValueError) as e:
        log("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
