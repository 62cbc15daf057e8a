# SPDX-License-Identifier: GPL-2.0-or-later
"""What a study's figures came from, and the second build of the exerciser its spread
boots: the commit, the QEMU binary, the guest kernel, the initramfs and the modules in it
(hashes), for every result file measure.py writes; and an initramfs whose exerciser was
built again, from the same source, in another folder.

Why a second build: the exerciser carries DWARF debug information (about 3.3 of its 3.5 MB),
which names the folder it was built in. Built from the same source elsewhere, its code and
data sections are the same byte for byte, but the file is not: the guest then inflates a
different initramfs and copies a different module at insmod, runs other instructions
before the study's windows open, and its timers (the tick, lazy mode's flush timer) fall
elsewhere among the measured calls. The studies' spread includes a boot with that build."""

import fcntl
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODULE_SRC = os.path.join(HERE, "module")
EXERCISER = "dmalab_exercise.ko"

sys.path.insert(0, HERE)
from imagelib.cpio import Cpio  # noqa: E402


def open_text(path, mode="r"):
    """A results file for reading or writing text, gzip'd when its name ends in .gz (as
    docs/results keeps them)."""
    return gzip.open(path, mode + "t") if path.endswith(".gz") else open(path, mode)


def sha256(path, n=16):
    """The first n hex digits of a file's SHA-256 (None when it does not exist)."""
    if not path or not os.path.isfile(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:n]


def cpio_files(data):
    """{path: contents} of the regular files in a newc cpio archive, or in several of them
    one after another, each gzip'd or not (as the kernel unpacks an initramfs: a later
    file of the same name replaces the earlier)."""
    out = {}
    data = data.lstrip(b"\0")
    while data:
        if data[:2] == b"\x1f\x8b":
            dec = zlib.decompressobj(31)
            raw = dec.decompress(data)
            data = dec.unused_data.lstrip(b"\0")
            while raw:
                raw = _newc(raw, out)
        elif data[:6] == b"070701":
            data = _newc(data, out)
        else:
            break
    return out


def _newc(raw, out):
    """Reads newc entries from raw into out until the trailer; returns what follows."""
    pos = 0
    while raw[pos:pos + 6] == b"070701":
        hdr = raw[pos:pos + 110]
        mode = int(hdr[14:22], 16)
        size = int(hdr[54:62], 16)
        namesize = int(hdr[94:102], 16)
        name = raw[pos + 110:pos + 110 + namesize - 1].decode()
        pos += 110 + namesize
        pos += (4 - pos % 4) % 4
        body = raw[pos:pos + size]
        pos += size
        pos += (4 - pos % 4) % 4
        if name == "TRAILER!!!":
            return raw[pos:].lstrip(b"\0")
        if mode & 0o170000 == 0o100000:
            out[name] = body
    return b""


def initrd_modules(initrd):
    """{module file name: SHA-256 prefix} of the .ko files the initramfs ends up with."""
    with open(initrd, "rb") as f:
        files = cpio_files(f.read())
    return {os.path.basename(p): hashlib.sha256(b).hexdigest()[:16]
            for p, b in sorted(files.items()) if p.endswith(".ko")}


def git(*args):
    try:
        return subprocess.run(["git", "-C", REPO] + list(args), capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def provenance(qemu, kernel, initrd):
    """The commit (and whether the tree had changes), the QEMU binary, the kernel, the
    initramfs and its modules (the exerciser and the patched ioatdma among them)."""
    mods = initrd_modules(initrd) if initrd and os.path.isfile(initrd) else {}
    return {"commit": git("rev-parse", "--short=12", "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "qemu_sha256": sha256(qemu), "kernel_sha256": sha256(kernel),
            "initrd_sha256": sha256(initrd),
            "modules_sha256": {k: v for k, v in mods.items()
                               if k in (EXERCISER, "ioatdma.ko", "e1000e.ko")}}


def image_info(kernel):
    """image.py's image-info.json beside the kernel, or {}."""
    path = os.path.join(os.path.dirname(os.path.abspath(kernel)), "image-info.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def source_key():
    h = hashlib.sha256()
    for f in sorted(os.listdir(MODULE_SRC)):
        if f.endswith((".c", ".h")) or f in ("Kbuild", "Makefile"):
            h.update(f.encode())
            with open(os.path.join(MODULE_SRC, f), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()[:16]


def second_build_paths(initrd, ver, workdir):
    """(module folder, initramfs) of the second build of `initrd` for kernel `ver`.
    Named by the kernel: the 6.1 and 6.12 images are both "initramfs.cpio.gz", and two
    studies of different kernels at once must not use each other's second build (one
    that did booted 6.1 with 6.12's modules)."""
    return (os.path.join(workdir, "module-build-b-" + ver),
            os.path.join(workdir, "%s-%s-build-b.cpio.gz" % (
                os.path.basename(initrd).split(".")[0], ver)))


def second_build(kernel, initrd, workdir, log=print):
    """initrd with the exerciser built again, from the same source, in another folder
    (workdir/module-build-b-VERSION): the path of the initramfs it writes beside the
    first (NAME-VERSION-build-b.cpio.gz in workdir, VERSION the kernel's). Raises
    RuntimeError when it cannot."""
    info = image_info(kernel)
    ver, kbuild = info.get("kernel_version"), info.get("kbuild_dir")
    if not ver or not kbuild:
        raise RuntimeError("no image-info.json beside %s: cannot rebuild the exerciser" %
                           kernel)
    key = "\n".join([source_key(), ver, sha256(initrd) or ""])
    bdir, out = second_build_paths(initrd, ver, workdir)
    os.makedirs(workdir, exist_ok=True)
    # two studies at once with one --log-dir: the second waits for the first's build,
    # then finds it stamped (each removing the other's folder mid-build failed both)
    with open(bdir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _second_build_locked(kbuild, ver, initrd, key, bdir, out, log)


def _second_build_locked(kbuild, ver, initrd, key, bdir, out, log):
    """second_build()'s work, with its folder's lock held."""
    stamp = out + ".stamp"
    try:
        with open(stamp) as f:
            if f.read() == key and os.path.isfile(out):
                return out
    except OSError:
        pass
    log("measure: building the exerciser a second time, in %s" % bdir)
    if os.path.exists(bdir):
        shutil.rmtree(bdir)
    os.makedirs(bdir)
    for f in os.listdir(MODULE_SRC):
        if f.endswith((".c", ".h")) or f in ("Kbuild", "Makefile"):
            shutil.copy2(os.path.join(MODULE_SRC, f), bdir)
    r = subprocess.run(["make", "-C", kbuild, "M=" + bdir, "CONFIG_DEBUG_INFO_BTF_MODULES=",
                        "modules"], capture_output=True, text=True)
    ko = os.path.join(bdir, EXERCISER)
    if r.returncode or not os.path.isfile(ko):
        raise RuntimeError("the second build of the exerciser failed:\n" + r.stdout + r.stderr)
    buf = io.BytesIO()
    cp = Cpio(buf)
    with open(ko, "rb") as f:
        cp.file("lib/modules/%s/extra/%s" % (ver, EXERCISER), f.read())
    cp.trailer()
    with open(out + ".tmp", "wb") as raw:
        with open(initrd, "rb") as f:
            shutil.copyfileobj(f, raw)
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(buf.getvalue())
    os.replace(out + ".tmp", out)
    with open(stamp, "w") as f:
        f.write(key)
    return out
