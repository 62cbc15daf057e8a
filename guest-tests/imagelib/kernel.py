# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel QEMU boots: the ELF vmlinux unpacked from a bzImage with a PVH
entry note, booted without real-mode setup and decompression."""

import gzip
import io
import lzma
import os
import shutil
import struct

from imagelib.util import log


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
