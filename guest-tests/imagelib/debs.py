# SPDX-License-Identifier: GPL-2.0-or-later
"""Debian's kernel packages, downloaded with apt-get download and unpacked into
the cache, never installed: which version linux-image-amd64 means, the
image, and its headers and kbuild tools."""

import os
import re
import shutil
import tempfile

from imagelib.util import ImageError, file_sig, log, read_stamp, run, write_stamp


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
