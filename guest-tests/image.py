#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Build the dmalab guest: a kernel image plus a busybox initramfs.

Default: Debian's kernel that linux-image-amd64 currently depends on,
downloaded with apt-get into <cache>/guest-dl and unpacked there, with
its headers and kbuild tools (for the exerciser module) unpacked beside
it: nothing is installed on the host.
Override with --kernel-version, or bring your own kernel with
--kernel IMAGE --modules-dir DIR [--kbuild-dir DIR].

Outputs <out>/vmlinuz (the kernel image), <out>/initramfs.cpio.gz and
<out>/boot-kernel (the uncompressed PVH vmlinux taken out of the kernel
image when possible: it boots seconds faster under TCG; otherwise a copy
of the kernel image).  Nothing is rebuilt when the inputs did not change.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib.util import (  # noqa: E402
    ImageError,
    file_sig,
    log,
    read_stamp,
    run,
    sha256_file,
    write_stamp)
from imagelib.init_files import add_init, init_digest  # noqa: E402
from imagelib.debs import (  # noqa: E402
    fetch_debian_headers,
    fetch_debian_kernel,
    resolve_default_version)
from imagelib.kmods import (  # noqa: E402
    closure,
    index_modules,
    modinfo,
    resolve_modules,
    resolve_user_modules)
from imagelib.cpio import (  # noqa: E402
    Cpio,
    busybox_links)
from imagelib.kernel import (  # noqa: E402
    extract_vmlinux,
    has_pvh_note,
    write_boot_kernel)

# What test_runner.py takes from here.
__all__ = ["Cpio", "ImageError", "closure", "extract_vmlinux", "has_pvh_note",
           "modinfo", "main"]

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE_SRC = os.path.join(HERE, "module")
HELPER_SRC = os.path.join(HERE, "helpers")
EXERCISER = "dmalab_exercise"

# Modules the image carries (plus their dependencies).
WANTED_MODULES = [
    "dca", "ioatdma",
    "async_tx", "async_memcpy", "async_xor", "async_pq",
    "async_raid6_recov", "raid6_pq", "xor", "brd", "raid456",
    "crc32c_generic",  # libcrc32c's soft dependency (raid456 needs it), not in modules.dep
    "virtio_pci", "virtio_blk",
    "e1000e", "igb", "pktgen",  # the iommu-flush study's NIC workload (init.sh nic_pktgen)
    "vfio_pci", "vfio_iommu_type1",  # init.sh helper_scenario vfio
    "virtio_net",  # init.sh helper_scenario net
    "idxd",  # Intel DSA (and idxd_bus): init/dsa.sh, on dmalab-dsa
]

STAMP_VERSION = "1"


# ---------------------------------------------------------------- kernel ---


# ------------------------------------------------------- kernel modules ---


def build_exerciser(out, kbuild, ver):
    """Build module/ in a copy under out; return the .ko path."""
    if not os.path.isfile(os.path.join(kbuild, "Makefile")):
        hint = ""
        if kbuild.startswith("/usr/src/linux-headers-"):
            hint = " (the kernel's headers: --kbuild-dir DIR)"
        raise ImageError("kernel build tree %s not found%s" % (kbuild, hint))
    h = hashlib.sha256()
    h.update(STAMP_VERSION.encode())
    h.update(os.path.realpath(kbuild).encode())
    for p in ("Makefile", ".config", "include/config/kernel.release"):
        fp = os.path.join(kbuild, p)
        if os.path.exists(fp):
            h.update(file_sig(fp).encode())
    srcs = sorted(f for f in os.listdir(MODULE_SRC)
                  if f.endswith((".c", ".h")) or f in ("Kbuild", "Makefile"))
    for f in srcs:
        h.update(f.encode())
        h.update(sha256_file(os.path.join(MODULE_SRC, f)).encode())
    key = h.hexdigest()

    bdir = os.path.join(out, "module-build")
    ko = os.path.join(bdir, EXERCISER + ".ko")
    stamp = os.path.join(out, ".module-stamp")
    if read_stamp(stamp) == key and os.path.isfile(ko):
        return ko, False
    log("building %s.ko against %s" % (EXERCISER, kbuild))
    if os.path.exists(bdir):
        shutil.rmtree(bdir)
    os.makedirs(bdir)
    for f in srcs:
        shutil.copy2(os.path.join(MODULE_SRC, f), bdir)
    # No BTF for the test module: it would need pahole on the host (6.12's
    # kbuild runs it), and nothing in the guest reads the module's BTF.
    output = run(["make", "-C", kbuild, "M=" + bdir,
                  "CONFIG_DEBUG_INFO_BTF_MODULES=", "modules"])
    if re.search(r"\bwarning:", output):
        log("the module build printed warnings:\n" + output)
    if not os.path.isfile(ko):
        raise ImageError("make succeeded but %s is missing:\n%s" %
                         (ko, output))
    with open(ko, "rb") as f:
        magic = dict(modinfo(f.read())).get("vermagic", "")
    if magic.split(" ")[0] != ver:
        raise ImageError("%s was built for '%s', the guest kernel is %s; "
                         "use --kbuild-dir for the matching build tree" %
                         (ko, magic.split(" ")[0], ver))
    write_stamp(stamp, key)
    return ko, True


def build_helpers(out):
    """Static userspace programs from helpers/*.c (dmalab_cow.c becomes
    /bin/dmalab-cow); returns [(name, path)]."""
    built = []
    bdir = os.path.join(out, "helpers")
    os.makedirs(bdir, exist_ok=True)
    for src in sorted(f for f in os.listdir(HELPER_SRC) if f.endswith(".c")):
        name = src[:-2].replace("_", "-")
        exe = os.path.join(bdir, name)
        h = hashlib.sha256()
        # the program, every header beside it, and the module's uapi header
        headers = sorted(f for f in os.listdir(HELPER_SRC) if f.endswith(".h"))
        for dep in ([os.path.join(HELPER_SRC, src)] +
                    [os.path.join(HELPER_SRC, f) for f in headers] +
                    [os.path.join(MODULE_SRC, "race_uapi.h")]):
            h.update(sha256_file(dep).encode())
        stamp = exe + ".stamp"
        if read_stamp(stamp) != h.hexdigest() or not os.path.isfile(exe):
            log("building %s" % name)
            run(["gcc", "-static", "-Os", "-Wall", "-Wextra", "-Werror",
                 "-o", exe, os.path.join(HELPER_SRC, src)])
            write_stamp(stamp, h.hexdigest())
        built.append((name, exe))
    return built


# ----------------------------------------------------------------- cpio ---


def write_initramfs(path, busybox, ver, mods, builtin, exerciser_ko,
                    helpers=()):
    buf = io.BytesIO()
    cp = Cpio(buf)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev",
              "tmp", "run", "root", "etc/dmalab/deps",
              "lib/modules/%s/extra" % ver):
        cp.mkdir(d)
    cp.chardev("dev/console", 5, 1)
    cp.chardev("dev/null", 1, 3, 0o666)
    with open(busybox, "rb") as f:
        cp.file("bin/busybox", f.read(), 0o755)
    for link in busybox_links(busybox):
        if link not in ("init", "linuxrc"):
            cp.symlink(link, "/bin/busybox")
    add_init(cp)
    for name, exe in helpers:
        with open(exe, "rb") as f:
            cp.file("bin/" + name, f.read(), 0o755)

    mroot = "lib/modules/%s" % ver
    deps_of = {}
    rel_of = {}
    for name, rel, deps, data in mods:
        rel = re.sub(r"\.(xz|gz|zst)$", "", rel)   # stored uncompressed
        rel_of[name] = rel
        deps_of[name] = deps
        cp.file("%s/%s" % (mroot, rel), data)
    rel_of[EXERCISER] = "extra/%s.ko" % EXERCISER
    deps_of[EXERCISER] = []
    with open(exerciser_ko, "rb") as f:
        cp.file("%s/%s" % (mroot, rel_of[EXERCISER]), f.read())

    # modules.dep in depmod's format (nearest dependency first), and a
    # ready-made insmod order per module for the modprobe-free /init.
    dep_lines = []
    for name in sorted(rel_of):
        chain = closure(name, deps_of)[:-1]
        dep_lines.append("%s: %s" % (rel_of[name], " ".join(
            rel_of[d] for d in reversed(chain))))
        cp.file("etc/dmalab/deps/%s" % name, "".join(
            "/%s/%s\n" % (mroot, rel_of[d])
            for d in closure(name, deps_of)).encode())
    for name in sorted(builtin):
        cp.file("etc/dmalab/deps/%s" % name, b"")    # built in: nothing
    cp.file("%s/modules.dep" % mroot, ("\n".join(dep_lines) + "\n").encode())
    cp.file("etc/dmalab/kernel-version", (ver + "\n").encode())
    cp.trailer()

    tmp = path + ".tmp"
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                           compresslevel=6) as gz:
            gz.write(buf.getvalue())
    os.replace(tmp, path)
    return len(buf.getvalue())


# ------------------------------------------------------- fast boot path ---


# ----------------------------------------------------------------- main ---

def make_parser():
    """Return the command line's parser."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get(
        "DMALAB_CACHE", os.path.expanduser("~/.cache/dmalab")),
        help="download/unpack cache (default $DMALAB_CACHE or "
             "~/.cache/dmalab)")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--print-kernel-version", action="store_true",
                    help="print the default kernel version and exit")
    ap.add_argument("--backports", action="store_true",
                    help="the default kernel is bookworm-backports' "
                         "linux-image-amd64 (6.12) instead of bookworm's")
    ap.add_argument("--kernel-version",
                    help="Debian kernel version, e.g. 6.1.0-57-amd64 "
                         "(default: what linux-image-amd64 depends on)")
    ap.add_argument("--kernel", help="use this kernel image instead")
    ap.add_argument("--modules-dir",
                    help="with --kernel: DIR/lib/modules/<ver>/ or <ver> dir")
    ap.add_argument("--kbuild-dir",
                    help="kernel build tree for the exerciser module "
                         "(default: Debian's headers for the kernel, "
                         "unpacked in the cache; <modules>/build for "
                         "--kernel)")
    ap.add_argument("--busybox", default="/bin/busybox",
                    help="static busybox binary (default /bin/busybox)")
    ap.add_argument("--force", action="store_true",
                    help="rebuild even if the inputs look unchanged")
    return ap


def resolve_kernel(args, cache):
    """Return (kernel, moddir, ver, kbuild): the user's or Debian's kernel."""
    if args.kernel:
        kernel = os.path.abspath(args.kernel)
        if not os.path.isfile(kernel):
            raise ImageError("kernel %s not found" % kernel)
        moddir, ver = resolve_user_modules(args.modules_dir,
                                           args.kernel_version)
        kbuild = args.kbuild_dir
        if not kbuild:
            build_link = os.path.join(moddir, "build")
            kbuild = build_link if os.path.isfile(
                os.path.join(build_link, "Makefile")) else \
                "/usr/src/linux-headers-" + ver
    else:
        ver = args.kernel_version or resolve_default_version(
            cache, args.backports)
        kernel, moddir = fetch_debian_kernel(cache, ver)
        kbuild = args.kbuild_dir or fetch_debian_headers(cache, ver)
    return kernel, moddir, ver, os.path.abspath(kbuild)


def output_paths(out):
    """Return the outputs' paths: vmlinuz, boot-kernel, initramfs, info."""
    return (os.path.join(out, "vmlinuz"),
            os.path.join(out, "boot-kernel"),
            os.path.join(out, "initramfs.cpio.gz"),
            os.path.join(out, "image-info.json"))


def stamp_key(ver, kernel, moddir, busybox, ko, helpers):
    """Return the stamp of everything the outputs depend on."""
    index = index_modules(moddir)
    h = hashlib.sha256()
    for part in (STAMP_VERSION, ver, file_sig(kernel),
                 file_sig(busybox), sha256_file(ko),
                 init_digest(),
                 " ".join(sha256_file(e) for _, e in helpers),
                 sha256_file(os.path.abspath(__file__))):
        h.update(part.encode() + b"\n")
    for name in WANTED_MODULES:
        if name in index:
            h.update(file_sig(os.path.join(moddir, index[name])).encode())
    return h.hexdigest()


def write_outputs(out, kernel, moddir, ver, kbuild, busybox, ko, helpers):
    """Write the outputs under out; return (mods, initramfs size)."""
    vmlinuz, boot_kernel, initrd, info_path = output_paths(out)
    mods, builtin = resolve_modules(moddir, WANTED_MODULES)
    shutil.copyfile(kernel, vmlinuz + ".tmp")
    os.replace(vmlinuz + ".tmp", vmlinuz)
    pvh = write_boot_kernel(boot_kernel, kernel)
    size = write_initramfs(initrd, busybox, ver, mods, builtin,
                           ko, helpers)
    info = {
        "kernel_version": ver,
        "kernel": kernel,
        "boot_kernel_pvh": pvh,
        "modules_dir": moddir,
        "kbuild_dir": kbuild,
        "modules": [m[0] for m in mods] + [EXERCISER],
        "builtin": sorted(builtin),
        "initramfs_bytes": size,
    }
    with open(info_path, "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    return mods, size


def build_image(args):
    """Build the image into --out unless up to date; return (ver, out)."""
    if not args.out:
        raise ImageError("--out is required")
    if bool(args.kernel) != bool(args.modules_dir):
        raise ImageError("--kernel and --modules-dir go together")
    cache = os.path.abspath(args.cache)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    kernel, moddir, ver, kbuild = resolve_kernel(args, cache)
    if not os.path.isfile(args.busybox):
        raise ImageError("%s not found (apt-get install busybox-static)"
                         % args.busybox)

    ko, built = build_exerciser(out, kbuild, ver)
    helpers = build_helpers(out)

    key = stamp_key(ver, kernel, moddir, args.busybox, ko, helpers)
    stamp = os.path.join(out, ".image-stamp")
    if not args.force and read_stamp(stamp) == key and all(
            os.path.isfile(p) for p in output_paths(out)):
        log("up to date (kernel %s)" % ver)
    else:
        mods, size = write_outputs(out, kernel, moddir, ver, kbuild,
                                   args.busybox, ko, helpers)
        write_stamp(stamp, key)
        log("built image for kernel %s (%d modules, cpio %d KiB)" %
            (ver, len(mods) + 1, size // 1024))
    return ver, out


def main():
    """Build the image (or print the kernel version); return the exit code."""
    args = make_parser().parse_args()
    try:
        if args.print_kernel_version:
            print(args.kernel_version or
                  resolve_default_version(os.path.abspath(args.cache),
                                          args.backports))
            return 0
        ver, out = build_image(args)
    except ImageError as e:
        log("error: %s" % e)
        return 1

    vmlinuz, boot_kernel, initrd, _ = output_paths(out)
    print("kernel-version: %s" % ver)
    print("vmlinuz: %s" % vmlinuz)
    print("boot-kernel: %s" % boot_kernel)
    print("initramfs: %s" % initrd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
