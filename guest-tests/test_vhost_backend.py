#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""harness/vhost_backend.py without QEMU: its IOTLB (updates, invalidations, accesses
split at the edges of translations that are not adjacent in guest memory, misses asked for
on the back-end channel), its split rings, and the vhost-user messages it answers, over a
socket pair (run by runner-selftest)."""

import mmap
import os
import socket
import struct
import sys
import unittest

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
import vhost_backend as vb  # noqa: E402

PAGE = 4096
UADDR = 0x7f0000000000  # where "QEMU" has guest memory


def iotlb(kind, iova, size=0, uaddr=0, perm=vb.ACCESS_RO | vb.ACCESS_WO):
    return struct.pack("<QQQBB", iova, size, uaddr, perm, kind).ljust(32, b"\0")


class Rig(unittest.TestCase):
    """A backend over a socket pair, with 16 pages of guest memory mapped at UADDR."""

    def setUp(self):
        self.qemu, theirs = socket.socketpair()
        self.req_qemu, req_theirs = socket.socketpair()
        self.backend = vb.Backend(theirs)
        self.backend.req = req_theirs
        self.ram = mmap.mmap(-1, 16 * PAGE)
        self.backend.regions = [(UADDR, 16 * PAGE, memoryview(self.ram))]
        self.addCleanup(self.close)

    def close(self):
        self.backend.regions = []
        for s in (self.qemu, self.req_qemu, self.backend.conn, self.backend.req):
            s.close()

    def send(self, request, payload, flags=vb.VERSION):
        self.qemu.sendall(struct.pack("<III", request, flags, len(payload)) + payload)
        self.backend.handle()

    def map(self, iova, page):
        """IOVA page -> guest page `page` (an IOTLB update, acknowledged)."""
        self.send(vb.IOTLB_MSG, iotlb(vb.IOTLB_UPDATE, iova, PAGE, UADDR + page * PAGE),
                  vb.VERSION | vb.NEED_REPLY)
        hdr = self.qemu.recv(12 + 8)
        self.assertEqual(struct.unpack_from("<III", hdr), (vb.IOTLB_MSG, vb.VERSION | vb.REPLY, 8))


class IotlbTests(Rig):
    def test_an_access_across_translations_goes_to_each_page(self):
        # contiguous in IOVA, pages 5 and 2 in guest memory: DPDK 22.11 would read page 6
        self.map(0x10000, 5)
        self.map(0x11000, 2)
        self.ram[6 * PAGE:7 * PAGE] = b"\xee" * PAGE
        self.ram[2 * PAGE:3 * PAGE] = b"\x22" * PAGE
        self.ram[5 * PAGE + PAGE - 4:6 * PAGE] = b"\x55" * 4
        self.assertEqual(self.backend.read(0x10ffc, 8), b"\x55" * 4 + b"\x22" * 4)
        self.backend.write(0x10ffe, b"abcd")
        self.assertEqual(self.ram[6 * PAGE - 2:6 * PAGE], b"ab")
        self.assertEqual(self.ram[2 * PAGE:2 * PAGE + 2], b"cd")
        self.assertEqual(self.ram[6 * PAGE:6 * PAGE + 2], b"\xee\xee")

    def test_an_invalidation_takes_the_translation_away_and_a_miss_is_asked_for(self):
        self.map(0x10000, 5)
        self.send(vb.IOTLB_MSG, iotlb(vb.IOTLB_INVALIDATE, 0x10000, PAGE))
        self.assertIsNone(self.backend.lookup(0x10000, False))
        old = vb.MISS_WAIT
        vb.MISS_WAIT = 0.2
        try:
            with self.assertRaises(vb.Unmapped):
                self.backend.read(0x10008, 4)
        finally:
            vb.MISS_WAIT = old
        hdr = self.req_qemu.recv(12 + 32)
        request, flags, size = struct.unpack_from("<III", hdr)
        iova, _, _, perm, kind = struct.unpack_from("<QQQBB", hdr, 12)
        self.assertEqual((request, size, iova, perm, kind),
                         (vb.BACKEND_IOTLB_MSG, 32, 0x10008, vb.ACCESS_RO, vb.IOTLB_MISS))

    def test_a_read_only_translation_is_not_written_through(self):
        self.send(vb.IOTLB_MSG, iotlb(vb.IOTLB_UPDATE, 0x10000, PAGE, UADDR, vb.ACCESS_RO),
                  vb.VERSION)
        self.assertIsNotNone(self.backend.lookup(0x10000, False))
        self.assertIsNone(self.backend.lookup(0x10000, True))


class RingTests(Rig):
    NUM = 8

    def setUp(self):
        super().setUp()
        # rings at IOVA 0x20000 (descriptors), 0x21000 (avail), 0x22000 (used); buffers at
        # 0x30000 on; all on guest pages 8-15
        for i, iova in enumerate((0x20000, 0x21000, 0x22000, 0x30000, 0x31000)):
            self.map(iova, 8 + i)
        for index in (vb.RX, vb.TX):
            ring = self.backend.rings[index]
            ring.num, ring.enabled = self.NUM, True
        self.offset = {vb.RX: 0, vb.TX: 0x800}

    def page(self, iova):
        return (8 + [0x20000, 0x21000, 0x22000, 0x30000, 0x31000].index(iova & ~0xfff)) * PAGE \
            + (iova & 0xfff)

    def put(self, iova, data):
        self.ram[self.page(iova):self.page(iova) + len(data)] = data

    def get(self, iova, n):
        return bytes(self.ram[self.page(iova):self.page(iova) + n])

    def offer(self, index, addr, length, write):
        ring = self.backend.rings[index]
        base = self.offset[index]
        ring.desc, ring.avail, ring.used = 0x20000 + base, 0x21000 + base, 0x22000 + base
        self.put(ring.desc, struct.pack("<QIHH", addr, length, vb.DESC_WRITE if write else 0, 0))
        self.put(ring.avail, struct.pack("<HHH", 0, 1, 0))

    def test_a_frame_comes_back_with_its_addresses_swapped(self):
        frame = bytes(range(6)) + bytes(range(10, 16)) + b"\x88\xb5" + b"payload"
        self.put(0x30000, bytes(vb.NET_HDR) + frame)
        self.offer(vb.TX, 0x30000, vb.NET_HDR + len(frame), False)
        self.offer(vb.RX, 0x31000, 2048, True)
        self.backend.transmit()
        self.assertEqual((self.backend.received, self.backend.sent), (1, 1))
        got = self.get(0x31000, vb.NET_HDR + len(frame))
        self.assertEqual(got[vb.NET_HDR:], frame[6:12] + frame[0:6] + frame[12:])
        used = self.get(0x22000, 4 + 8)
        self.assertEqual(struct.unpack("<HHII", used), (0, 1, 0, vb.NET_HDR + len(frame)))

    def test_a_chain_longer_than_a_frame_is_dropped_unread(self):
        self.offer(vb.TX, 0x30000, 1 << 30, False)
        self.backend.transmit()
        self.assertEqual((self.backend.received, self.backend.tx_dropped), (0, 1))
        self.assertEqual(struct.unpack("<H", self.get(0x22802, 2))[0], 1)  # returned, used


class MessageTests(Rig):
    def test_features_and_acknowledgements(self):
        self.send(vb.GET_FEATURES, b"")
        request, flags, size, value = struct.unpack("<IIIQ", self.qemu.recv(20))
        self.assertEqual((request, flags, size), (vb.GET_FEATURES, vb.VERSION | vb.REPLY, 8))
        self.assertTrue(value & vb.F_IOMMU_PLATFORM and value & vb.F_VERSION_1)
        self.send(vb.SET_VRING_NUM, struct.pack("<II", 1, 256), vb.VERSION | vb.NEED_REPLY)
        self.assertEqual(struct.unpack("<IIIQ", self.qemu.recv(20))[3], 0)
        self.assertEqual(self.backend.rings[1].num, 256)
        self.send(vb.SET_VRING_BASE, struct.pack("<II", 1, 7))
        self.send(vb.GET_VRING_BASE, struct.pack("<II", 1, 0))
        self.assertEqual(struct.unpack("<IIIII", self.qemu.recv(20))[3:], (1, 7))


if __name__ == "__main__":
    unittest.main()
