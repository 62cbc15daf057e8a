# SPDX-License-Identifier: GPL-2.0-or-later
"""Kernel modules as the initramfs needs them: their .modinfo (Debian's deb
ships no modules.dep), names, built-in modules, and the dependency closure
of the modules the guest loads."""

import gzip
import lzma
import os
import re
import struct

from imagelib.util import ImageError


def resolve_user_modules(modules_dir, ver):
    """Accept DIR holding lib/modules/<ver>/, or the <ver> dir itself."""
    base = os.path.join(modules_dir, "lib", "modules")
    if os.path.isdir(base):
        vers = sorted(v for v in os.listdir(base)
                      if os.path.isdir(os.path.join(base, v)))
        if ver:
            if ver not in vers:
                raise ImageError("%s has no %s (has: %s)" %
                                 (base, ver, " ".join(vers) or "nothing"))
        elif len(vers) == 1:
            ver = vers[0]
        else:
            raise ImageError("%s holds %s; choose one with --kernel-version"
                             % (base, " ".join(vers) or "no version"))
        return os.path.join(base, ver), ver
    if os.path.isdir(os.path.join(modules_dir, "kernel")) or \
            os.path.isfile(os.path.join(modules_dir, "modules.order")):
        moddir = os.path.abspath(modules_dir)
        return moddir, ver or os.path.basename(moddir.rstrip("/"))
    raise ImageError("--modules-dir %s holds neither lib/modules/<ver>/ nor "
                     "a kernel/ tree" % modules_dir)


def modinfo(data):
    """Key/value list from the .modinfo section of an ELF module."""
    if data[:4] != b"\x7fELF":
        raise ImageError("not an ELF file")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data,
                                                        0x3A)
        fmt, name_at, off_at = end + "IIQQQQ", 0, (4, 5)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data,
                                                        0x2E)
        fmt, name_at, off_at = end + "IIIIII", 0, (4, 5)
    sections = []
    for i in range(shnum):
        f = struct.unpack_from(fmt, data, shoff + i * shentsize)
        sections.append((f[name_at], f[off_at[0]], f[off_at[1]]))
    strtab_off, strtab_size = sections[shstrndx][1], sections[shstrndx][2]
    strtab = data[strtab_off:strtab_off + strtab_size]
    for name_off, off, size in sections:
        name = strtab[name_off:strtab.index(b"\0", name_off)]
        if name == b".modinfo":
            out = []
            for item in data[off:off + size].split(b"\0"):
                if b"=" in item:
                    k, v = item.split(b"=", 1)
                    out.append((k.decode(), v.decode(errors="replace")))
            return out
    return []


def read_module(path):
    """Uncompressed bytes of a .ko, .ko.xz or .ko.gz file."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        raise ImageError("%s: zstd-compressed modules are not supported; "
                         "install them uncompressed" % path)
    return data


def mod_name(filename):
    base = os.path.basename(filename)
    base = re.sub(r"\.ko(\.(xz|gz|zst))?$", "", base)
    return base.replace("-", "_")


def index_modules(moddir):
    """name -> path relative to moddir, for every module file."""
    index = {}
    for top, dirs, files in os.walk(moddir):
        dirs.sort()
        for f in sorted(files):
            if re.search(r"\.ko(\.(xz|gz|zst))?$", f):
                rel = os.path.relpath(os.path.join(top, f), moddir)
                index.setdefault(mod_name(f), rel)
    return index


def builtin_modules(moddir):
    """Names listed in modules.builtin (built into the kernel image)."""
    names = set()
    try:
        with open(os.path.join(moddir, "modules.builtin")) as f:
            for line in f:
                if line.strip():
                    names.add(mod_name(line.strip()))
    except OSError:
        pass
    return names


def resolve_modules(moddir, wanted):
    """Dependency closure of wanted, as [(name, rel_path, deps, data)] in
    load order (dependencies before their users), and the set of wanted
    names that are built into the kernel."""
    index = index_modules(moddir)
    builtin = builtin_modules(moddir)
    info = {}
    skipped = set()

    def visit(name, chain):
        if name in info or name in skipped:
            return
        if name in builtin and name not in index:
            skipped.add(name)
            return
        if name in chain:
            raise ImageError("module dependency cycle: %s" %
                             " -> ".join(chain + [name]))
        rel = index.get(name)
        if rel is None:
            raise ImageError("module %s not found under %s" % (name, moddir))
        data = read_module(os.path.join(moddir, rel))
        deps = []
        for k, v in modinfo(data):
            if k == "depends" and v:
                deps.extend(d.replace("-", "_") for d in v.split(",") if d)
        for d in deps:
            visit(d, chain + [name])
        deps = [d for d in deps if d not in skipped]
        info[name] = (rel, deps, data)
        order.append(name)

    order = []
    for w in wanted:
        visit(w, [])
    return [(n, info[n][0], info[n][1], info[n][2]) for n in order], skipped


def closure(name, deps_of):
    """Load order (deps first, name last) for one module."""
    out = []

    def walk(n):
        for d in deps_of[n]:
            walk(d)
        if n not in out:
            out.append(n)
    walk(name)
    return out
