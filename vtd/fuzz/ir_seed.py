#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a seed input for vtd-fuzz that turns interrupt remapping on: a fuzzer starting
from nothing rarely finds the register sequence (IQA, QIE, IRTA, SIRTP, IRE) before an
entry is read.  The bytes follow Program::run in vtd_fuzz.cc: the configuration (48-bit,
queued invalidation, remapping with EIM offered, a 4-entry IEC), no fault plan, then
operations: the queue at 0x20000, the table at 0x10000 (2 entries, xAPIC), entry 0 present
(vector 0x30, destination 1), two requests for it (a miss, a hit), entry 1 not present and
a request for it (22h), a global IEC invalidation through the queue, and a request after it.

A second seed, devtlb, offers device-TLBs as well and puts three device-TLB invalidation
descriptors through the queue (one page, 2^3 pages, and one with a reserved bit: IQE).

A third, translate-cm, offers caching mode, sets up a root, context and 4-level page table
and has three reads translated: a walk, a not-present page (a negative entry), its hit.

A fourth, scalable, offers scalable mode with first-stage tables (bit 7 of the remapping
byte, an even seed): a scalable-mode root table, the context entry of 00:01.0, its PASID
directory and RID_PASID's first-stage PASID entry, a 4-level first-stage table that maps
IOVA 0x1000 only, the 256-bit queue with a PASID-cache, a PASID-based IOTLB and a wait
descriptor, and reads of 0x1000 (a walk, a hit) and 0x2000 (not present).

A fifth, psc, maps two pages under one leaf table, reads both (a walk, then one under
the cached PDE) and puts IOTLB invalidations through the queue that keep the
paging-structure caches (page-selective with the hint) and drop them (without it;
domain-selective), each waited for.

Usage: ir_seed.py CORPUS_DIR  (writes CORPUS_DIR/ir-enable, devtlb, devtlb-ite,
translate-cm, scalable and psc)"""

import os
import struct
import sys


# What every seed writes, as Program::run in vtd_fuzz.cc reads it, appended to b.
def reg(b, off, value, shift):  # case 2: an 8-byte register write of value << shift
    b.extend(struct.pack("<BHHB", 2, off, value, shift))


def reg64(b, off, value):  # case 0: an 8-byte write of any value
    b.extend(struct.pack("<BHBQ", 0, off, 3, value))


def raw(b, addr, value):  # case 4: 8 bytes at addr (a multiple of 4)
    b.extend(struct.pack("<BHQ", 4, addr // 4, value))


def read(b, devfn, page):  # case 6: a translation for a read of page << 12
    b.extend(struct.pack("<BBBHBBB", 6, 0, devfn, page, 12, 1, 1))


def seed():
    b = bytearray([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0])  # configuration
    b.append(0)  # no fault plan

    def steps():  # case 8: eight timer expiries
        b.extend([8, 7])

    def irte(slot, dst, vector, low):  # case 13, an entry (upper qword 0: no SID check)
        b.extend(struct.pack("<BHBHBBQ", 13, slot, 2, dst, vector, low, 0))

    def iec_global(slot):  # case 13, a global IEC invalidation descriptor
        b.extend(struct.pack("<BHBHBBQ", 13, slot, 1, 0, 0, 0, 0))

    def interrupt(handle):  # case 12: remappable format (IF), data 0, requester 01:00.0
        b.extend(struct.pack("<BBHBHH", 12, 9, handle, 0, 0, 0x100))

    reg(b, 0x90, 0x2000, 4)    # IQA
    reg(b, 0x18, 0x400, 16)    # GCMD: QIE
    steps()
    reg(b, 0xB8, 0x1000, 4)    # IRTA
    reg(b, 0x18, 0x500, 16)    # GCMD: QIE, SIRTP
    steps()
    reg(b, 0x18, 0x600, 16)    # GCMD: QIE, IRE
    steps()
    irte(0x1000, 0x100, 0x30, 0x01)  # slot * 16 = 0x10000: entry 0, P
    interrupt(1)            # address bit 4 (IF), handle 0
    interrupt(1)
    irte(0x1001, 0x200, 0x31, 0x00)  # entry 1, not present
    interrupt(3)            # handle 1
    iec_global(0x2000)
    reg(b, 0x88, 0x10, 0)      # IQT: one descriptor
    steps()
    b.extend(struct.pack("<BH", 9, 5000))  # case 9: time passes
    steps()
    interrupt(1)
    return bytes(b)


def devtlb_seed(ite=False):
    # the configuration as above, with device-TLBs (bit 4 of the remapping byte); with ite,
    # a device-TLB time-out of 1 ns (bit 6, then its byte) and the harness's fault plan,
    # whose delays then make device-TLB descriptors time out (ITE)
    b = bytearray([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x53 if ite else 0x13, 0])
    if ite:
        b.extend([0, 1, 0])  # the time-out; a plan, its seed
        b.extend(struct.pack("<H", 10000))  # its delay
    else:
        b.append(0)  # no fault plan

    def devtlb(slot, sid, hi):  # case 13, kind 4|2: a device-TLB descriptor with its hi
        b.extend(struct.pack("<BHBHBBQ", 13, slot, 6, sid, 0, 0, hi))

    reg(b, 0x90, 0x2000, 4)    # IQA
    reg(b, 0x18, 0x400, 16)    # GCMD: QIE
    b.extend([8, 7])
    devtlb(0x2000, 0x100, 0x5000)          # one page
    devtlb(0x2001, 0x100, 0x3000 | 1)      # S: 2^3 pages
    devtlb(0x2002, 0x100, 0x1000 | 2)      # reserved bit 1: IQE
    reg(b, 0x88, 0x30, 0)      # IQT: three descriptors
    b.extend([8, 7])
    b.extend(struct.pack("<BH", 9, 5000))  # case 9: time passes
    b.extend([8, 7])
    return bytes(b)


def translate_seed():
    # the configuration with queued invalidation and caching mode (bit 5 of the remapping
    # byte), a root table at 0x30000, bus 0's context table at 0x31000, device 00:01.0 in
    # domain 1 with a 4-level table at 0x32000 that maps IOVA 0x1000 only; TE on, then
    # reads of 0x1000 (a walk), of 0x2000 (not present: a negative entry), and again
    b = bytearray([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x20, 0])
    b.append(0)  # no fault plan

    raw(b, 0x30000, 0x31001)                   # root entry, bus 0
    raw(b, 0x31000 + 8 * 16, 0x32001)          # context entry 00:01.0: P, TT 0
    raw(b, 0x31000 + 8 * 16 + 8, 1 << 8 | 2)   # DID 1, AW 4-level
    for level, (at, nxt) in enumerate([(0x32000, 0x33003), (0x33000, 0x34003),
                                       (0x34000, 0x35003), (0x35008, 0x9003)]):
        raw(b, at, nxt)
    reg(b, 0x20, 0x3000, 4)    # RTADDR
    reg(b, 0x18, 0x4000, 16)   # GCMD: SRTP
    b.extend([8, 7])
    reg(b, 0x18, 0x8000, 16)   # GCMD: TE
    b.extend([8, 7])
    read(b, 8, 1)
    read(b, 8, 2)
    read(b, 8, 2)
    return bytes(b)


def scalable_seed():
    b = bytearray([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0x80, 0])
    b.append(0)  # no fault plan

    raw(b, 0x30000, 0x31001)                    # root entry, bus 0: LP, lower context table
    raw(b, 0x31000 + 8 * 32, 0x36000 | 2 << 9 | 1)  # 00:01.0: PASID directory, PDTS 2, P
    raw(b, 0x36000, 0x37001)                    # directory entry 0
    raw(b, 0x37000, 1 << 6 | 1)                 # PASID 0: PGTT first stage, P
    raw(b, 0x37008, 2)                          # domain 2
    raw(b, 0x37010, 0x32000)                    # FLPTR
    for at, nxt in [(0x32000, 0x33007), (0x33000, 0x34007), (0x34000, 0x35007),
                    (0x35008, 0x9067)]:      # P, RW, US (and A, D in the leaf)
        raw(b, at, nxt)
    raw(b, 0x20000, 3 << 4 | 7)                 # PASID-cache, global
    raw(b, 0x20020, 2 << 16 | 2 << 4 | 6)       # PASID-based IOTLB, domain 2 PASID 0
    raw(b, 0x20040, 1 << 32 | 1 << 5 | 5)       # wait: status 1
    raw(b, 0x20048, 0x3e000)
    reg64(b, 0x20, 0x30000 | 1 << 10)           # RTADDR, TTM 01
    reg(b, 0x18, 0x4000, 16)                    # GCMD: SRTP
    b.extend([8, 7])
    reg64(b, 0x90, 0x20000 | 1 << 11 | 1)       # IQA: DW, QS 1
    reg(b, 0x18, 0x400, 16)                     # GCMD: QIE
    b.extend([8, 7])
    reg(b, 0x18, 0x8400, 16)                    # GCMD: TE, QIE
    b.extend([8, 7])
    read(b, 8, 1)
    read(b, 8, 1)
    read(b, 8, 2)
    reg(b, 0x88, 0x60, 0)                       # IQT: three 256-bit descriptors
    b.extend([8, 7])
    b.extend(struct.pack("<BH", 9, 5000))
    b.extend([8, 7])
    read(b, 8, 1)
    return bytes(b)


def psc_seed():
    # legacy tables as translate_seed's, without caching mode, mapping 0x1000 and 0x2000
    # under one leaf table; the paging-structure caches on (seed byte 0). Reads fill and
    # use them; queued IOTLB invalidations then keep them (page-selective with the hint,
    # IH) and drop them (page-selective without it, domain-selective), each waited for.
    b = bytearray([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    b.append(0)  # no fault plan

    def iotlb(at, g, addr, ih):  # an IOTLB invalidation descriptor, domain 1
        raw(b, at, 1 << 16 | g << 4 | 2)
        raw(b, at + 8, addr | (1 << 6 if ih else 0))

    def wait(at, data):  # status data written to 0x3e000
        raw(b, at, data << 32 | 1 << 5 | 5)
        raw(b, at + 8, 0x3e000)

    raw(b, 0x30000, 0x31001)                   # root entry, bus 0
    raw(b, 0x31000 + 8 * 16, 0x32001)          # context entry 00:01.0: P, TT 0
    raw(b, 0x31000 + 8 * 16 + 8, 1 << 8 | 2)   # DID 1, AW 4-level
    for at, nxt in [(0x32000, 0x33003), (0x33000, 0x34003), (0x34000, 0x35003),
                    (0x35008, 0x9003), (0x35010, 0xa003)]:
        raw(b, at, nxt)
    iotlb(0x20000, 3, 0x1000, True)         # page-selective with IH: the caches stay
    wait(0x20010, 1)
    iotlb(0x20020, 3, 0x1000, False)        # without: the entries over 0x1000 go
    iotlb(0x20030, 2, 0, False)             # domain-selective: all of domain 1's
    wait(0x20040, 2)
    reg(b, 0x20, 0x3000, 4)    # RTADDR
    reg(b, 0x18, 0x4000, 16)   # GCMD: SRTP
    b.extend([8, 7])
    reg64(b, 0x90, 0x20000)    # IQA: QS 0, 128-bit descriptors
    reg(b, 0x18, 0x400, 16)    # GCMD: QIE
    b.extend([8, 7])
    reg(b, 0x18, 0x8400, 16)   # GCMD: TE, QIE
    b.extend([8, 7])
    read(b, 8, 1)              # a walk of four reads
    read(b, 8, 2)              # under the cached PDE: one read
    reg(b, 0x88, 0x20, 0)      # IQT: the hinted invalidation and a wait
    b.extend([8, 7])
    b.extend(struct.pack("<BH", 9, 5000))
    b.extend([8, 7])
    read(b, 8, 2)
    reg(b, 0x88, 0x50, 0)      # IQT: the other two and a wait
    b.extend([8, 7])
    b.extend(struct.pack("<BH", 9, 5000))
    b.extend([8, 7])
    read(b, 8, 1)
    return bytes(b)


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):  # not a directory "--help"
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    with open(os.path.join(sys.argv[1], "ir-enable"), "wb") as f:
        f.write(seed())
    with open(os.path.join(sys.argv[1], "devtlb"), "wb") as f:
        f.write(devtlb_seed())
    with open(os.path.join(sys.argv[1], "devtlb-ite"), "wb") as f:
        f.write(devtlb_seed(ite=True))
    with open(os.path.join(sys.argv[1], "translate-cm"), "wb") as f:
        f.write(translate_seed())
    with open(os.path.join(sys.argv[1], "scalable"), "wb") as f:
        f.write(scalable_seed())
    with open(os.path.join(sys.argv[1], "psc"), "wb") as f:
        f.write(psc_seed())
    return 0


if __name__ == "__main__":
    sys.exit(main())
