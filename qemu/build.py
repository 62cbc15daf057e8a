#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Obtain QEMU 10.0, hook dmalab's devices into it and build qemu-system-x86_64.

The source comes from Debian's `qemu` source package (unpacked with dpkg-source, so Debian's
patches apply) or from the tree named by QEMU_SRC. Downloads, source and build tree live in a
cache folder outside the git work tree; QEMU's hw/dmalab/ holds symbolic links back to this
checkout, so editing a dmalab file recompiles just that file.
"""

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PATCHES = sorted((REPO / "qemu" / "patches").glob("*.patch"))
DEBIAN_VERSION = "1:10.0.13+ds-0+deb13u1"
CONFIGURE_ARGS = [
    "--python=/usr/bin/python3",
    "--target-list=x86_64-softmmu",
    "--disable-docs",
    "--disable-tools",
    "--disable-guest-agent",
    "--disable-werror",
    "--without-default-features",
    "--enable-tcg",
    "--enable-kvm",  # used where /dev/kvm works; TCG otherwise (guest-tests/runner.py)
    "--enable-slirp",
    "--enable-fdt=system",
    "--enable-capstone",
    "--enable-plugins",  # TCG plugins: the DMA race detector (tools/race-detector)
    # vhost-user-net behind dmalab-vtd (scenarios vtd-vhost*)
    "--enable-vhost-user",
    "--enable-vhost-net",
    "--disable-rust",
    "--disable-install-blobs",
]
# --devices: dmalab's set (qemu/dmalab-devices.mak, linked into QEMU's configs as
# dmalab.mak), or QEMU's default devices for x86_64.
DEVICE_ARGS = {
    "dmalab": ["--without-default-devices", "--with-devices-x86_64=dmalab"],
    "default": [],
}
DEVICES_MAK = REPO / "qemu" / "dmalab-devices.mak"
# What QEMU's hw/dmalab/ links to, by name.
LINKS = {
    "meson.build": REPO / "devices" / "meson.build",
    "Kconfig": REPO / "devices" / "Kconfig",
    "trace-events": REPO / "devices" / "trace-events",
    "devices": REPO / "devices",
    "common": REPO / "common",
    "ioat": REPO / "ioat",
    "vtd": REPO / "vtd",
    "dsa": REPO / "dsa",
}


def log(msg):
    print(f"qemu/build.py: {msg}", flush=True)


def run(cmd, **kw):
    log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run(cmd, check=True, **kw)


def fetch_debian_source(cache: Path) -> Path:
    src = cache / "qemu-src"
    if (src / "VERSION").exists():
        return src
    dl = cache / "qemu-dl"
    dl.mkdir(parents=True, exist_ok=True)
    if not list(dl.glob("qemu_*.dsc")):
        try:
            run(["apt-get", "source", "--download-only", f"qemu={DEBIAN_VERSION}"], cwd=dl)
        except subprocess.CalledProcessError:
            # The pinned revision may have left the mirror; any 10.0.x from trixie will do.
            log(f"qemu={DEBIAN_VERSION} not available, trying the current trixie qemu")
            run(["apt-get", "source", "--download-only", "-t", "trixie", "qemu"], cwd=dl)
    dsc = sorted(dl.glob("qemu_*.dsc"))[-1]
    tmp = cache / "qemu-src.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    run(["dpkg-source", "-x", str(dsc), str(tmp)], stdout=subprocess.DEVNULL)
    version = (tmp / "VERSION").read_text().strip()
    if not version.startswith("10.0."):
        sys.exit(f"qemu/build.py: {dsc.name} is QEMU {version}, dmalab needs 10.0.x")
    tmp.rename(src)
    return src


def patches_digest() -> str:
    """What the tree's patches say, names and contents: Debian's source is unpacked again
    when it changes, as a patch changed after an older version of it was applied neither
    applies nor reverses."""
    h = hashlib.sha256()
    for p in PATCHES:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def applied(src: Path, patch: Path) -> bool:
    """True when `patch` is already in the tree (it reverses cleanly)."""
    return subprocess.run(["patch", "-p1", "-R", "--dry-run", "-s", "-f", "-i", str(patch)],
                          cwd=src, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


class PatchError(Exception):
    pass


def hook_devices(src: Path) -> bool:
    """Patches QEMU and points hw/dmalab at this checkout; True when the links moved (from
    another checkout of dmalab sharing the cache)."""
    for p in PATCHES:
        if not applied(src, p):
            # a dry run first, so that a patch that does not apply leaves the tree alone
            if subprocess.run(["patch", "-p1", "--forward", "--dry-run", "-s", "-i", str(p)],
                              cwd=src, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode != 0:
                raise PatchError(f"{p.name} neither applies to {src} nor is applied there "
                                 "(another version of it may be)")
            run(["patch", "-p1", "--forward", "-i", str(p)], cwd=src)
    hw = src / "hw" / "dmalab"
    hw.mkdir(exist_ok=True)
    moved = False
    for name, target in LINKS.items():
        link = hw / name
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
        moved = True
    # links an older layout of this tree made (dmaengine/, iommu/ before the device wings)
    for link in hw.iterdir():
        if link.is_symlink() and link.name not in LINKS:
            link.unlink()
            moved = True
    mak = src / "configs" / "devices" / "x86_64-softmmu" / "dmalab.mak"
    if not (mak.is_symlink() and Path(os.readlink(mak)) == DEVICES_MAK):
        if mak.is_symlink() or mak.exists():
            mak.unlink()
        mak.symlink_to(DEVICES_MAK)
    return moved


def prepare_source(cache: Path):
    """Debian's source, unpacked and patched: (the tree, whether hw/dmalab's links moved).
    The source is unpacked again when the patches changed since they were applied (the
    stamp qemu-src.patches says what they were) or one of them does not apply (a cache
    from before the stamp); QEMU is then rebuilt in full."""
    src = fetch_debian_source(cache)
    stamp = cache / "qemu-src.patches"
    if stamp.exists() and stamp.read_text() != patches_digest():
        log("dmalab's QEMU patches changed: unpacking Debian's source again "
            "(QEMU is then rebuilt in full)")
        shutil.rmtree(src)
        src = fetch_debian_source(cache)
    try:
        moved = hook_devices(src)
    except PatchError as e:
        log(f"{e}: unpacking Debian's source again (QEMU is then rebuilt in full)")
        shutil.rmtree(src)
        src = fetch_debian_source(cache)
        moved = hook_devices(src)
    stamp.write_text(patches_digest())
    return src, moved


def forget_dmalab_objects(build: Path):
    """Drops what QEMU's build compiled from hw/dmalab. Its dependency files name the paths
    through the links, and ninja compares modification times: after the links move to
    another checkout, a source older than its object (made from the other checkout's copy)
    would not be rebuilt."""
    if (build / "hw" / "dmalab").exists():
        shutil.rmtree(build / "hw" / "dmalab")
    for obj in build.glob("*.a.p/hw_dmalab_*"):
        obj.unlink()


def configure_args(devices: str, debug_info: bool) -> list:
    return (CONFIGURE_ARGS + DEVICE_ARGS[devices]
            + ["--enable-debug-info" if debug_info else "--disable-debug-info"])


def configure(src: Path, build: Path, args: list):
    stamp = build / "dmalab-configure.stamp"
    want = "\n".join([str(src)] + args)
    if (build / "build.ninja").exists() and stamp.exists() and stamp.read_text() == want:
        return
    build.mkdir(parents=True, exist_ok=True)
    run([str(src / "configure")] + args, cwd=build)
    stamp.write_text(want)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cache", default=os.environ.get("DMALAB_CACHE",
                                                      Path.home() / ".cache" / "dmalab"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--output", help="make this path a link to the built binary")
    ap.add_argument("--plugin-header", help="make this path a link to QEMU's qemu-plugin.h")
    ap.add_argument("--devices", choices=sorted(DEVICE_ARGS), default="dmalab",
                    help="dmalab: the boards and devices of qemu/dmalab-devices.mak (the "
                    "default, a shorter build); default: QEMU's default device set")
    ap.add_argument("--debug-info", action="store_true",
                    help="compile QEMU with debug information (-g; about 15%% longer)")
    args = ap.parse_args()

    cache = Path(args.cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "qemu.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        user_src = os.environ.get("QEMU_SRC")
        if user_src:
            src = Path(user_src).resolve()
            if not (src / "VERSION").read_text().startswith("10.0."):
                sys.exit(f"qemu/build.py: QEMU_SRC={src} is not a QEMU 10.0 tree")
            tag = hashlib.sha256(str(src).encode()).hexdigest()[:12]
            build = cache / f"qemu-build-{tag}"
        else:
            src, moved = prepare_source(cache)
            build = cache / "qemu-build"
        # Each configuration has its own build folder, so switching between them does not
        # rebuild all of QEMU each time.
        if args.devices != "dmalab" or args.debug_info:
            build = build.with_name(build.name + f"-{args.devices}" + ("-g" if args.debug_info else ""))
        if user_src:
            try:
                moved = hook_devices(src)
            except PatchError as e:
                sys.exit(f"qemu/build.py: {e}: give QEMU_SRC a clean QEMU 10.0 tree")
        if moved:
            log("hw/dmalab now points at %s: its objects are rebuilt" % REPO)
            forget_dmalab_objects(build)
        configure(src, build, configure_args(args.devices, args.debug_info))
        run(["ninja", "-C", str(build), f"-j{args.jobs}", "qemu-system-x86_64"])
        binary = build / "qemu-system-x86_64"
        for link, target in ((args.output, binary),
                             (args.plugin_header, src / "include" / "qemu" / "qemu-plugin.h")):
            if link:
                out = Path(link)
                if out.is_symlink() or out.exists():
                    out.unlink()
                out.symlink_to(target)
        print(binary)


if __name__ == "__main__":
    main()
