#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Build Linux's ioatdma with dmalab's patches, for the guest image in --image.

The source is Debian's linux-source-<series> package of the same version as
the image's kernel (linux-image-6.1.0-57-amd64 6.1.192-3 takes
linux-source-6.1 6.1.192-3), downloaded with apt-get download into
<cache>/guest-dl; only drivers/dma/ioat/ and drivers/dma/dmaengine.h are
unpacked from it, next to the download.  Nothing is installed on the host.
guest-tests/ioatdma/*.patch are applied in order and the module is built
against the image's kernel headers.  Linux's dmatest (drivers/dma/dmatest.c,
unchanged: Debian's kernels do not build it) is built beside it, for the
scenario dmatest.

Outputs --out-ko, the module, and --out-initrd: the image's initramfs
with a second cpio archive after it, which the kernel unpacks over the first,
so that the patched ioatdma.ko takes the place of Debian's, dmatest.ko sits in
extra/ and /etc/dmalab/ioatdma-patches names the patches (init.sh reports them).
Nothing is rebuilt when the inputs did not change.
"""

import argparse
import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib.util import ImageError, file_sig, read_stamp, run, sha256_file, write_stamp  # noqa: E402
from imagelib.debs import find_deb  # noqa: E402
from imagelib.kmods import index_modules, modinfo  # noqa: E402
from imagelib.cpio import Cpio, append_archive  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PATCHES = sorted(glob.glob(os.path.join(HERE, "ioatdma", "*.patch")))
# What the module's build reads from the kernel tree: its own directory, and
# the dmaengine core's private header it includes as "../dmaengine.h".
WANTED = ("drivers/dma/ioat/", "drivers/dma/dmaengine.h", "drivers/dma/dmatest.c")
STAMP_VERSION = "1"


def log(msg):
    print("ioatdma_patched.py: " + msg, file=sys.stderr, flush=True)


def source_version(dl, ver):
    """Debian's source version of the unpacked linux-image-<ver>, from its
    .deb's name (linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb)."""
    deb = find_deb(dl, "linux-image-" + ver)
    if deb is None:
        raise ImageError("no linux-image-%s .deb in %s: the patched ioatdma is built only "
                         "for a Debian kernel the image fetched (with your own kernel, "
                         "apply guest-tests/ioatdma/*.patch to its tree)" % (ver, dl))
    return os.path.basename(deb).split("_")[1]


def fetch_source(dl, ver):
    """Unpack WANTED from linux-source-<series>=<version> into the cache;
    returns the directory holding drivers/."""
    srcver = source_version(dl, ver)
    m = re.match(r"(\d+\.\d+)", ver)
    if not m:
        raise ImageError("cannot tell the kernel series of %s" % ver)
    pkg = "linux-source-" + m.group(1)
    deb = os.path.join(dl, "%s_%s_all.deb" % (pkg, srcver))
    if not os.path.isfile(deb):
        log("downloading %s=%s with apt-get (about 140 MB)" % (pkg, srcver))
        run(["apt-get", "download", "%s=%s" % (pkg, srcver)], cwd=dl)
        if not os.path.isfile(deb):
            raise ImageError("apt-get download %s=%s left no %s" % (pkg, srcver, deb))
    root = os.path.join(dl, "%s_%s-ioat" % (pkg, srcver))
    marker = os.path.join(root, ".extracted")
    if read_stamp(marker) == os.path.basename(deb) and \
            os.path.isfile(os.path.join(root, "drivers", "dma", "dmatest.c")):
        return root
    log("unpacking %s from %s" % (" ".join(WANTED), os.path.basename(deb)))
    tmp = root + ".tmp"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    found = []
    # The .deb holds usr/src/linux-source-X.tar.xz: read both archives as
    # streams and keep the few files wanted.
    deb_tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    try:
        with tarfile.open(fileobj=deb_tar.stdout, mode="r|") as outer:
            for member in outer:
                if not re.match(r"(\./)?usr/src/linux-source-[^/]+\.tar\.xz$", member.name):
                    continue
                with tarfile.open(fileobj=outer.extractfile(member), mode="r|xz") as inner:
                    for m in inner:
                        rel = m.name.split("/", 1)[1] if "/" in m.name else ""
                        if not m.isfile() or not rel.startswith(WANTED):
                            continue
                        dest = os.path.join(tmp, rel)
                        os.makedirs(os.path.dirname(dest), exist_ok=True)
                        with open(dest, "wb") as f:
                            shutil.copyfileobj(inner.extractfile(m), f)
                        found.append(rel)
                break
    finally:
        deb_tar.stdout.close()
        deb_tar.wait()
    if "drivers/dma/dmaengine.h" not in found or \
            "drivers/dma/ioat/init.c" not in found:
        raise ImageError("%s holds no drivers/dma/ioat/init.c and dmaengine.h" % deb)
    write_stamp(os.path.join(tmp, ".extracted"), os.path.basename(deb))
    if os.path.exists(root):
        shutil.rmtree(root)
    os.rename(tmp, root)
    return root


def build_module(src, bdir, kbuild, ver):
    """Copy the source into bdir, apply the patches, build; returns the .ko."""
    if os.path.exists(bdir):
        shutil.rmtree(bdir)
    shutil.copytree(os.path.join(src, "drivers"), os.path.join(bdir, "drivers"))
    for p in PATCHES:
        run(["patch", "-p1", "--forward", "-i", p], cwd=bdir)
    mdir = os.path.join(bdir, "drivers", "dma", "ioat")
    log("building the patched ioatdma.ko against %s" % kbuild)
    # As for the exerciser: no BTF (it would need pahole on the host).
    run(["make", "-C", kbuild, "M=" + mdir, "CONFIG_DEBUG_INFO_BTF_MODULES=", "modules"])
    ko = os.path.join(mdir, "ioatdma.ko")
    if not os.path.isfile(ko):
        raise ImageError("make succeeded but %s is missing" % ko)
    with open(ko, "rb") as f:
        magic = dict(modinfo(f.read())).get("vermagic", "")
    if magic.split(" ")[0] != ver:
        raise ImageError("%s was built for '%s', the guest kernel is %s" % (ko, magic, ver))
    return ko


def build_dmatest(src, bdir, kbuild):
    """Linux's dmatest, unchanged, built as an external module (Debian's kernels
    do not set CONFIG_DMATEST); returns the .ko."""
    mdir = os.path.join(bdir, "dmatest")
    os.makedirs(mdir)
    shutil.copy2(os.path.join(src, "drivers", "dma", "dmatest.c"), mdir)
    with open(os.path.join(mdir, "Kbuild"), "w") as f:
        f.write("obj-m += dmatest.o\n")
    log("building dmatest.ko against %s" % kbuild)
    run(["make", "-C", kbuild, "M=" + mdir, "CONFIG_DEBUG_INFO_BTF_MODULES=", "modules"])
    ko = os.path.join(mdir, "dmatest.ko")
    if not os.path.isfile(ko):
        raise ImageError("make succeeded but %s is missing" % ko)
    return ko


def write_initramfs(path, base, kos):
    """base's archive, then one that puts each ko at its place ({rel: ko}) and
    names the patches."""
    buf = io.BytesIO()
    cp = Cpio(buf)
    for rel, ko in kos.items():
        with open(ko, "rb") as f:
            cp.file(rel, f.read())
    cp.file("etc/dmalab/ioatdma-patches",
            (" ".join(os.path.basename(p) for p in PATCHES) + "\n").encode())
    cp.trailer()
    append_archive(base, path, buf.getvalue())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get(
        "DMALAB_CACHE", os.path.expanduser("~/.cache/dmalab")))
    ap.add_argument("--base-initrd", required=True,
                    help="the image's initramfs.cpio.gz (image.py's output folder also "
                    "holds the image-info.json this reads)")
    ap.add_argument("--out-initrd", required=True, help="the initramfs to write")
    ap.add_argument("--out-ko", required=True,
                    help="the module to write (it is built in a folder beside it)")
    args = ap.parse_args()
    try:
        base = os.path.abspath(args.base_initrd)
        with open(os.path.join(os.path.dirname(base), "image-info.json")) as f:
            info = json.load(f)
        ver, kbuild = info["kernel_version"], info["kbuild_dir"]
        dl = os.path.join(os.path.abspath(args.cache), "guest-dl")
        rel = index_modules(info["modules_dir"]).get("ioatdma")
        if rel is None:
            raise ImageError("the image's kernel %s has no ioatdma module" % ver)
        rel = "lib/modules/%s/%s" % (ver, re.sub(r"\.(xz|gz|zst)$", "", rel))

        if not PATCHES:
            raise ImageError("no patches in %s" % os.path.join(HERE, "ioatdma"))
        ko_out, initrd = os.path.abspath(args.out_ko), os.path.abspath(args.out_initrd)
        # The module depends on the kernel and the patches, the initramfs also on
        # the image's: a new /init does not rebuild the module.
        h = hashlib.sha256()
        for part in [STAMP_VERSION, ver, sha256_file(__file__),
                     file_sig(os.path.join(kbuild, "Makefile"))] + \
                [sha256_file(p) for p in PATCHES]:
            h.update(part.encode() + b"\n")
        ko_key = h.hexdigest()
        h.update(file_sig(base).encode())
        initrd_key = h.hexdigest()
        dmatest = os.path.join(os.path.dirname(ko_out), "dmatest.ko")
        if read_stamp(ko_out + ".stamp") != ko_key or not os.path.isfile(ko_out) or \
                not os.path.isfile(dmatest):
            src = fetch_source(dl, ver)
            ko = build_module(src, ko_out + ".build", kbuild, ver)
            # Debian's modules carry no debug information; neither do these.
            run(["objcopy", "--strip-debug", ko, ko_out])
            run(["objcopy", "--strip-debug",
                 build_dmatest(src, ko_out + ".build", kbuild), dmatest])
            write_stamp(ko_out + ".stamp", ko_key)
        if read_stamp(initrd + ".stamp") == initrd_key and os.path.isfile(initrd):
            log("up to date (kernel %s)" % ver)
            return 0
        write_initramfs(initrd, base, {rel: ko_out,
                                       "lib/modules/%s/extra/dmatest.ko" % ver: dmatest})
        write_stamp(initrd + ".stamp", initrd_key)
        log("built %s with %s" % (initrd, ", ".join(os.path.basename(p) for p in PATCHES)))
    except (ImageError, OSError, KeyError, ValueError, tarfile.TarError) as e:
        log("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
