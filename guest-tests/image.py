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
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE_SRC = os.path.join(HERE, "module")
INIT_SCRIPT = os.path.join(HERE, "init.sh")
HELPER_SRC = os.path.join(HERE, "helpers")
EXERCISER = "dmalab_exercise"

# Modules the image carries (plus their dependencies).
WANTED_MODULES = [
    "dca", "ioatdma",
    "async_tx", "async_memcpy", "async_xor", "async_pq",
    "async_raid6_recov", "raid6_pq", "xor", "brd",
    "virtio_pci", "virtio_blk",
]

STAMP_VERSION = "1"


class ImageError(Exception):
    pass


def log(msg):
    print("image.py: " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    """Run a command; raise ImageError with its output on failure."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, **kw)
    if res.returncode != 0:
        raise ImageError("command failed (rc=%d): %s\n%s" %
                         (res.returncode, " ".join(cmd), res.stdout))
    return res.stdout


def file_sig(path):
    """Cheap identity of a file: path, size and mtime."""
    st = os.stat(path)
    return "%s:%d:%d" % (os.path.abspath(path), st.st_size, st.st_mtime_ns)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_stamp(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def write_stamp(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(value + "\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------- kernel ---

def apt_lists_sig():
    """Changes whenever apt's package lists do (apt-get update)."""
    parts = []
    for p in ("/var/lib/apt/lists", "/var/cache/apt/pkgcache.bin"):
        try:
            parts.append(file_sig(p))
        except OSError:
            parts.append(p + ":missing")
    return " ".join(parts)


def resolve_default_version(cache, backports=False):
    """Version string (e.g. 6.1.0-57-amd64) linux-image-amd64 depends on,
    in bookworm-backports with backports (e.g. 6.12.95+deb12-amd64).

    apt-cache takes about a second, so the answer is remembered until
    apt's lists change."""
    memo = os.path.join(cache, "guest-dl", ".default-version" +
                        ("-bpo" if backports else ""))
    sig = apt_lists_sig()
    old = read_stamp(memo)
    if old and old.split("|")[0] == sig:
        return old.split("|")[1]
    try:
        out = run(["apt-cache", "depends"] +
                  (["-t", "bookworm-backports"] if backports else []) +
                  ["linux-image-amd64"])
        for line in out.splitlines():
            m = re.match(r"\s*Depends:\s*linux-image-(\S+)\s*$", line)
            if m:
                os.makedirs(os.path.dirname(memo), exist_ok=True)
                write_stamp(memo, "%s|%s" % (sig, m.group(1)))
                return m.group(1)
        why = "no 'Depends: linux-image-...' line in apt-cache output"
    except (ImageError, OSError) as e:
        why = str(e).splitlines()[0]
    # Offline fallback: a single version of the series already unpacked.
    dl = os.path.join(cache, "guest-dl")
    have = sorted(d for d in os.listdir(dl)
                  if os.path.isfile(os.path.join(dl, d, ".extracted")) and
                  ("+deb" in d) == backports) \
        if os.path.isdir(dl) else []
    if len(have) == 1:
        log("apt-cache failed (%s); using cached kernel %s" % (why, have[0]))
        return have[0]
    raise ImageError("cannot resolve the kernel version: %s "
                     "(run 'apt-get update', or pass --kernel-version)" % why)


def find_deb(dl, pkg):
    prefix = pkg + "_"
    debs = sorted(f for f in os.listdir(dl)
                  if f.startswith(prefix) and f.endswith(".deb"))
    return os.path.join(dl, debs[-1]) if debs else None


def fetch_debian_kernel(cache, ver):
    """Download and unpack linux-image-<ver>; both steps are cached."""
    dl = os.path.join(cache, "guest-dl")
    os.makedirs(dl, exist_ok=True)
    deb = download(dl, "linux-image-" + ver)
    root = os.path.join(dl, ver)
    unpack_debs(dl, [deb], root)
    kernel = os.path.join(root, "boot", "vmlinuz-" + ver)
    moddir = os.path.join(root, "lib", "modules", ver)
    for p in (kernel, moddir):
        if not os.path.exists(p):
            raise ImageError("%s is missing from %s" % (p, deb))
    return kernel, moddir


def unpack_debs(dl, debs, root):
    """Unpack .deb files into root (dpkg-deb -x: nothing is installed);
    cached by the files' names."""
    marker = os.path.join(root, ".extracted")
    want = " ".join(sorted(os.path.basename(d) for d in debs))
    if read_stamp(marker) == want:
        return False
    log("unpacking %s" % want)
    tmp = tempfile.mkdtemp(prefix=".unpack-", dir=dl)
    try:
        for deb in debs:
            run(["dpkg-deb", "-x", deb, tmp])
        write_stamp(os.path.join(tmp, ".extracted"), want)
        if os.path.exists(root):
            shutil.rmtree(root)
        os.rename(tmp, root)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp)
    return True


def download(dl, pkg):
    deb = find_deb(dl, pkg)
    if deb is None:
        log("downloading %s with apt-get" % pkg)
        run(["apt-get", "download", pkg], cwd=dl)
        deb = find_deb(dl, pkg)
        if deb is None:
            raise ImageError("apt-get download %s left no .deb in %s" %
                             (pkg, dl))
    return deb


def headers_packages(ver):
    """linux-headers-<ver> and the headers and kbuild packages it depends on
    (-common, linux-kbuild-*), by name; not the kernel image or compiler."""
    pkg = "linux-headers-" + ver
    out = run(["apt-cache", "depends", pkg])
    names = [pkg]
    for line in out.splitlines():
        m = re.match(r"\s*\|?Depends:\s*(linux-(?:headers|kbuild)-\S+)\s*$",
                     line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    if not any(n.startswith("linux-kbuild-") for n in names):
        raise ImageError("apt-cache depends %s names no linux-kbuild "
                         "package:\n%s" % (pkg, out))
    return names


def fetch_debian_headers(cache, ver):
    """The kernel build tree for <ver>, from Debian's headers packages
    downloaded and unpacked under the cache, never installed: installing
    them would also install a kernel image into the host's /boot (6.12's
    headers depend on it).  Returns the folder to give make -C."""
    dl = os.path.join(cache, "guest-dl")
    os.makedirs(dl, exist_ok=True)
    root = os.path.join(dl, ver + "-headers")
    kbuild = os.path.join(root, "usr", "src", "linux-headers-" + ver)
    if os.path.isfile(os.path.join(root, ".extracted")):
        return kbuild  # no apt-cache call once unpacked (works offline)
    debs = [download(dl, p) for p in headers_packages(ver)]
    if unpack_debs(dl, debs, root):
        # The arch folder's Makefile includes the -common one by its absolute
        # /usr/src path; point it at the unpacked copy.  scripts/ and tools/
        # are relative links into usr/lib/linux-kbuild-*, unpacked beside it.
        mk = os.path.join(kbuild, "Makefile")
        with open(mk) as f:
            text = f.read()
        fixed = re.sub(r"^include\s+/usr/src/(\S+)$",
                       lambda m: "include " + os.path.join(root, "usr", "src",
                                                           m.group(1)),
                       text, flags=re.M)
        if fixed == text:
            raise ImageError("%s does not include a /usr/src Makefile:\n%s"
                             % (mk, text))
        with open(mk, "w") as f:
            f.write(fixed)
    return kbuild


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


# ------------------------------------------------------- kernel modules ---

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
        for dep in (os.path.join(HELPER_SRC, src),
                    os.path.join(MODULE_SRC, "race_uapi.h")):
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

class Cpio:
    """Minimal writer for the 'newc' cpio format the kernel unpacks."""

    def __init__(self, fileobj):
        self.f = fileobj
        self.ino = 1
        self.dirs = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0), nlink=1):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0,
            rdev[0], rdev[1], len(name_b), 0))
        self.ino += 1
        self.f.write(hdr.encode() + name_b)
        self.f.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        self.f.write(data)
        self.f.write(b"\0" * ((4 - len(data) % 4) % 4))

    def mkdir(self, path):
        path = path.strip("/")
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.dirs:
                self.dirs.add(p)
                self._entry(p, 0o040755, nlink=2)

    def file(self, path, data, mode=0o644):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o100000 | mode, data)

    def symlink(self, path, target):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o120777, target.encode())

    def chardev(self, path, major, minor, mode=0o600):
        path = path.strip("/")
        self.mkdir(os.path.dirname(path))
        self._entry(path, 0o020000 | mode, rdev=(major, minor))

    def trailer(self):
        self._entry("TRAILER!!!", 0, nlink=1)


def busybox_links(busybox):
    out = run([busybox, "--list-full"])
    links = []
    for line in out.split():
        line = line.strip("/")
        if line and line != "bin/busybox" and "/" in line:
            links.append(line)
    return sorted(set(links))


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
    with open(INIT_SCRIPT, "rb") as f:
        cp.file("init", f.read(), 0o755)
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

def has_pvh_note(elf):
    """True when an ELF64 kernel carries the Xen PVH entry note, which lets
    QEMU boot it directly (no real-mode setup, no decompression)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != 4:                         # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == 18:  # XEN_ELFNOTE_PHYS32_ENTRY
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


def extract_vmlinux(bzimage):
    """The uncompressed ELF inside an x86 bzImage, or None with a reason."""
    with open(bzimage, "rb") as f:
        d = f.read()
    if len(d) < 0x250 or d[0x202:0x206] != b"HdrS":
        return None, "not an x86 bzImage"
    version, = struct.unpack_from("<H", d, 0x206)
    if version < 0x208:
        return None, "boot protocol %#x has no payload fields" % version
    setup_sects = d[0x1f1] or 4
    start = (setup_sects + 1) * 512
    off, length = struct.unpack_from("<II", d, 0x248)
    payload = d[start + off:start + off + length]
    try:
        if payload[:6] == b"\xfd7zXZ\0":
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(
                payload)
        elif payload[:2] == b"\x1f\x8b":
            elf = gzip.GzipFile(fileobj=io.BytesIO(payload)).read()
        elif payload[:3] == b"BZh":
            import bz2
            elf = bz2.BZ2Decompressor().decompress(payload)
        elif payload[:3] == b"\x5d\0\0":
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(
                payload)
        else:
            return None, "payload compression %r not supported" % \
                payload[:4]
    except (lzma.LZMAError, OSError, EOFError, ValueError) as e:
        return None, "cannot decompress the payload: %s" % e
    if not has_pvh_note(elf):
        return None, "the kernel has no PVH entry note (CONFIG_PVH)"
    return elf, None


def write_boot_kernel(path, kernel):
    """<out>/boot-kernel: the uncompressed PVH vmlinux when the kernel
    allows it (QEMU boots it seconds faster under TCG), else the kernel
    image itself."""
    elf, why = extract_vmlinux(kernel)
    tmp = path + ".tmp"
    if elf is None:
        log("boot-kernel is a copy of the kernel image (%s)" % why)
        shutil.copyfile(kernel, tmp)
    else:
        with open(tmp, "wb") as f:
            f.write(elf)
    os.replace(tmp, path)
    return elf is not None


# ----------------------------------------------------------------- main ---

def main():
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
    args = ap.parse_args()

    try:
        if args.print_kernel_version:
            print(args.kernel_version or
                  resolve_default_version(os.path.abspath(args.cache),
                                          args.backports))
            return 0
        if not args.out:
            raise ImageError("--out is required")
        if bool(args.kernel) != bool(args.modules_dir):
            raise ImageError("--kernel and --modules-dir go together")
        cache = os.path.abspath(args.cache)
        out = os.path.abspath(args.out)
        os.makedirs(out, exist_ok=True)

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
        kbuild = os.path.abspath(kbuild)
        if not os.path.isfile(args.busybox):
            raise ImageError("%s not found (apt-get install busybox-static)"
                             % args.busybox)

        ko, built = build_exerciser(out, kbuild, ver)
        helpers = build_helpers(out)

        vmlinuz = os.path.join(out, "vmlinuz")
        boot_kernel = os.path.join(out, "boot-kernel")
        initrd = os.path.join(out, "initramfs.cpio.gz")
        info_path = os.path.join(out, "image-info.json")

        # Stamp of everything the outputs depend on.
        index = index_modules(moddir)
        h = hashlib.sha256()
        for part in (STAMP_VERSION, ver, file_sig(kernel),
                     file_sig(args.busybox), sha256_file(ko),
                     sha256_file(INIT_SCRIPT),
                     " ".join(sha256_file(e) for _, e in helpers),
                     sha256_file(os.path.abspath(__file__))):
            h.update(part.encode() + b"\n")
        for name in WANTED_MODULES:
            if name in index:
                h.update(file_sig(os.path.join(moddir, index[name])).encode())
        key = h.hexdigest()
        stamp = os.path.join(out, ".image-stamp")
        if not args.force and read_stamp(stamp) == key and all(
                os.path.isfile(p) for p in (vmlinuz, initrd, boot_kernel,
                                            info_path)):
            log("up to date (kernel %s)" % ver)
        else:
            mods, builtin = resolve_modules(moddir, WANTED_MODULES)
            shutil.copyfile(kernel, vmlinuz + ".tmp")
            os.replace(vmlinuz + ".tmp", vmlinuz)
            pvh = write_boot_kernel(boot_kernel, kernel)
            size = write_initramfs(initrd, args.busybox, ver, mods, builtin,
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
            write_stamp(stamp, key)
            log("built image for kernel %s (%d modules, cpio %d KiB)" %
                (ver, len(mods) + 1, size // 1024))
    except ImageError as e:
        log("error: %s" % e)
        return 1

    print("kernel-version: %s" % ver)
    print("vmlinuz: %s" % vmlinuz)
    print("boot-kernel: %s" % boot_kernel)
    print("initramfs: %s" % initrd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
