# SPDX-License-Identifier: GPL-2.0-or-later
"""Debian user-space programs for the guest, never installed on the host: their
packages downloaded with apt-get download and unpacked with dpkg-deb -x into the
cache (debs.download, debs.unpack_debs), the shared libraries each executable
needs found by following its ELF NEEDED entries (readelf -d) through the
unpacked multiarch folders, and the whole set (executables, libraries with
their SONAME links, the dynamic loader named by PT_INTERP) written into a cpio
archive.  No ld.so.cache is written: Debian's loader searches
/lib/x86_64-linux-gnu and /usr/lib/x86_64-linux-gnu without one."""

import argparse
import hashlib
import io
import json
import os
import re
import sys

from imagelib.cpio import Cpio, append_archive
from imagelib.debs import download, unpack_debs
from imagelib.util import (ImageError, file_sig, read_stamp, run, sha256_file,
                           write_stamp)

# Where the unpacked packages' libraries are, searched in this order
LIBDIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib", "usr/lib")

NEEDED_RE = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
INTERP_RE = re.compile(r"\[Requesting program interpreter: ([^\]]+)\]")


def fetch(cache, name, packages):
    """Download `packages` (names, or NAME=VERSION) into <cache>/guest-dl/userspace
    and unpack them into <cache>/guest-dl/userspace/NAME-root (both cached: a
    package already downloaded is not fetched again, the root is unpacked again only
    when the set of .deb files changed).  Returns (root, {package: version})."""
    dl = os.path.join(cache, "guest-dl", "userspace")
    os.makedirs(dl, exist_ok=True)
    debs = [download(dl, p) for p in packages]
    root = os.path.join(dl, name + "-root")
    unpack_debs(dl, debs, root)
    return root, {p.split("=")[0]: deb_version(d) for p, d in zip(packages, debs)}


def deb_version(deb):
    """The version in a .deb's file name (iperf3_3.12-1+deb12u2_amd64.deb), with
    apt's %3a for the epoch's colon decoded."""
    parts = os.path.basename(deb).split("_")
    if len(parts) < 3:
        raise ImageError("not a PACKAGE_VERSION_ARCH.deb name: %s" % deb)
    return parts[1].replace("%3a", ":")


def inside(root, path):
    """path (absolute in the guest's tree, or relative to it) as a host path under
    root, following symbolic links the way the guest would: an absolute target is
    taken from root, not from the host's /."""
    rel = path.lstrip("/")
    for _ in range(40):
        parts = rel.split("/")
        for i in range(1, len(parts) + 1):
            head = os.path.join(root, *parts[:i])
            if os.path.islink(head):
                target = os.readlink(head)
                base = "" if target.startswith("/") else "/".join(parts[:i - 1])
                rel = os.path.normpath(os.path.join(base, target.lstrip("/"),
                                                    *parts[i:])).lstrip("/")
                break
        else:
            return os.path.join(root, rel)
    raise ImageError("too many symbolic links under %s: %s" % (root, path))


def elf_info(path):
    """(NEEDED sonames, PT_INTERP or None) of an ELF file, from readelf."""
    out = run(["readelf", "-d", "-l", "-W", path])
    interp = INTERP_RE.search(out)
    return NEEDED_RE.findall(out), interp.group(1) if interp else None


def find_library(root, soname):
    """The path, relative to root, under which the guest's loader finds soname."""
    for d in LIBDIRS:
        if os.path.lexists(os.path.join(root, d, soname)):
            return d + "/" + soname
    raise ImageError("no %s under %s (%s): add the package that has it" % (
        soname, root, ", ".join(LIBDIRS)))


def closure(root, exes, built=()):
    """What the executables `exes` (paths relative to root) and `built` (host paths:
    programs built against the unpacked packages) need to run: ({soname: path
    relative to root}, {loader path}), following NEEDED entries through the
    libraries too."""
    libs, loaders = {}, set()
    todo = [inside(root, e) for e in exes] + list(built)
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if not os.path.isfile(path):
            raise ImageError("%s is not in the unpacked packages" % path)
        needed, interp = elf_info(path)
        if interp:
            loaders.add(interp)
        for soname in needed:
            if soname in libs:
                continue
            rel = find_library(root, soname)
            libs[soname] = rel
            todo.append(inside(root, rel))
    # the loader is a NEEDED entry of libc too; it is added once, as the loader
    for interp in loaders:
        libs.pop(os.path.basename(interp), None)
    return libs, loaders


def add_path(cp, root, rel, dest=None, added=None):
    """Put root/rel into the cpio archive at dest (default rel): a symbolic link as
    the link and what it points to, a file with its mode's execute bit.  `added`
    collects (guest path, size or "-> target") of what went in."""
    added = added if added is not None else []
    dest = (dest or rel).lstrip("/")
    if dest in {a for a, _ in added}:
        return added
    src = os.path.join(root, rel.lstrip("/"))
    if os.path.islink(src) and dest != rel.lstrip("/"):
        # put under another name: the file itself, not a link that would resolve
        # relative to its new folder
        src = inside(root, rel)
    if os.path.islink(src):
        target = os.readlink(src)
        cp.symlink(dest, target)
        added.append((dest, "-> " + target))
        if target.startswith("/"):
            nxt = target
        else:
            nxt = os.path.normpath(os.path.join(os.path.dirname(rel), target))
        return add_path(cp, root, nxt, None, added)
    with open(src, "rb") as f:
        data = f.read()
    cp.file(dest, data, 0o755 if os.stat(src).st_mode & 0o111 else 0o644)
    added.append((dest, len(data)))
    return added


def add_programs(cp, root, exes, built=None):
    """Write the executables {path in root: path in the guest}, and `built` {host
    path: path in the guest} (programs built against the unpacked packages), with
    every library they need and their loader into the archive cp: a list of (guest
    path, size or link target), what went in."""
    built = built or {}
    libs, loaders = closure(root, list(exes), sorted(built))
    added = []
    for interp in sorted(loaders):
        add_path(cp, root, interp, None, added)
    for soname in sorted(libs):
        add_path(cp, root, libs[soname], None, added)
    for src, dest in sorted(exes.items()):
        add_path(cp, root, src, dest, added)
    for src, dest in sorted(built.items()):
        with open(src, "rb") as f:
            data = f.read()
        cp.file(dest, data, 0o755)
        added.append((dest.lstrip("/"), len(data)))
    return added


# ---- A layer of user-space programs appended to a base image (net_image.py, dsa_image.py,
# dpdk_image.py)


def layer_args(description, info_name, base_help, argv=None):
    """The command line every layer script takes: (cache, base initramfs, the initramfs to
    write, the info JSON to write; info_name beside the output by default)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--cache", default=os.environ.get(
        "DMALAB_CACHE", os.path.expanduser("~/.cache/dmalab")))
    ap.add_argument("--base-initrd", required=True, help=base_help)
    ap.add_argument("--out-initrd", required=True, help="the initramfs to write")
    ap.add_argument("--out-info", help="the JSON to write (default: %s beside "
                    "--out-initrd)" % info_name)
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out_initrd)
    return (os.path.abspath(args.cache), os.path.abspath(args.base_initrd), out,
            os.path.abspath(args.out_info or os.path.join(os.path.dirname(out), info_name)))


def layer_key(parts, versions):
    """The digest of what a layer is built from: `parts` (strings) and the packages'
    versions."""
    h = hashlib.sha256()
    for part in list(parts) + ["%s=%s" % kv for kv in sorted(versions.items())]:
        h.update(part.encode() + b"\n")
    return h.hexdigest()


def layer_current(out, info_path, key):
    """True when the layer at `out` was built from `key` and its info is there."""
    return read_stamp(out + ".stamp") == key and os.path.isfile(out) and \
        os.path.isfile(info_path)


def layer_done(out, info_path, base, key, added, info):
    """Writes the layer's info JSON (`info` with the files added and the sizes) and its
    stamp; returns the info."""
    info = dict(info, base_initrd=base, files=dict(added),
                added_bytes=sum(n for _, n in added if isinstance(n, int)),
                initrd_bytes=os.path.getsize(out), base_bytes=os.path.getsize(base))
    with open(info_path + ".tmp", "w") as f:
        json.dump(info, f, indent=1)
    os.replace(info_path + ".tmp", info_path)
    write_stamp(out + ".stamp", key)
    return info


def programs_initrd(path, base, root, programs):
    """base's archive, then one with `programs` and what they need: the files added."""
    buf = io.BytesIO()
    cp = Cpio(buf)
    added = add_programs(cp, root, programs)
    cp.trailer()
    append_archive(base, path, buf.getvalue())
    return added


def programs_layer(script, argv=None):
    """The whole of a layer script that adds Debian's programs to a base initramfs, the
    module `script` (dsa_image.py, dpdk_image.py) declaring what: its docstring's first
    line, BASE_HELP (what the base initramfs is), INFO (the info JSON's name), ROOT_NAME,
    PACKAGES, PROGRAMS (path in the unpacked packages -> path in the guest), SHOWN (the
    packages whose versions the log names) and STAMP_VERSION. It reads the command line,
    fetches the packages into <cache>/guest-dl/userspace/<ROOT_NAME>-root, writes the layer
    only when its inputs changed, and returns the exit status."""
    name = os.path.basename(script.__file__)

    def log(msg):
        print("%s: %s" % (name, msg), file=sys.stderr, flush=True)

    root_name, packages, programs = script.ROOT_NAME, script.PACKAGES, script.PROGRAMS
    shown, stamp = script.SHOWN, script.STAMP_VERSION
    cache, base, out, info_path = layer_args(script.__doc__.splitlines()[0], script.INFO,
                                             script.BASE_HELP, argv)
    try:
        root, versions = fetch(cache, root_name, packages)
        key = layer_key([stamp, sha256_file(script.__file__), sha256_file(__file__),
                         file_sig(base)], versions)
        what = ", ".join("%s %s" % (p, versions[p]) for p in shown)
        if layer_current(out, info_path, key):
            log("up to date (%s)" % what)
            return 0
        added = programs_initrd(out, base, root, programs)
        info = layer_done(out, info_path, base, key, added,
                          {"packages": versions, "programs": programs})
        log("built %s: %d files, %d bytes added (%s)" % (out, len(added), info["added_bytes"],
                                                        what))
    except (ImageError, OSError, ValueError) as e:
        log("error: %s" % e)
        return 1
    return 0
