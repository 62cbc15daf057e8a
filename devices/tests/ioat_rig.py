#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-ioat driven as a guest driver would, over qtest: the device found and mapped,
channels set up the way Linux's ioatdma sets them up, descriptor chains in guest RAM, and
MSI-X vectors aimed at RAM so each interrupt is a word the test reads back."""

import random
import struct

from libqtest import PCI, GuestAlloc, QTest

VENDOR, DEVICE = 0x8086, 0x2021

# Registers (BAR0), as in ioat/include/dmalab/ioat/spec/registers.h.
CHANCNT, XFERCAP, GENCTRL, INTRCTRL, ATTNSTATUS, CBVER = 0x00, 0x01, 0x02, 0x03, 0x04, 0x08
INTRDELAY, CS_STATUS, DMACAPABILITY = 0x0C, 0x0E, 0x10
CHANCTRL, DMA_COMP, CHANCMD, DMACOUNT, CHANSTS = 0x00, 0x02, 0x04, 0x06, 0x08
CHAINADDR, CHANCMP, CDAR, CHANERR, CHANERR_MSK = 0x10, 0x18, 0x20, 0x28, 0x2C
STRIDE = 0x80
MSIX_TABLE = 0x1000

INTRCTRL_MASTER_INT_EN, INTRCTRL_INT_STATUS, INTRCTRL_INT = 0x01, 0x02, 0x04
INTRCTRL_MSIX_VECTOR_CONTROL = 0x08
CHANCTRL_RUN = 0x1D  # INT_REARM | ERR_COMPLETION_EN | ANY_ERR_ABORT_EN | ERR_INT_EN
CHANCTRL_INT_REARM = 0x01
CMD_START, CMD_APPEND, CMD_SUSPEND, CMD_ABORT, CMD_RESUME, CMD_RESET = 1, 2, 4, 8, 0x10, 0x20
ACTIVE, DONE, SUSPENDED, HALTED = 0, 1, 2, 3

CTL_INT_EN, CTL_COMPL_WRITE, CTL_FENCE, CTL_NULL = 0x01, 0x08, 0x10, 0x20

CHANERR_SRC_ADDR = 1 << 0
CHANERR_DEST_ADDR = 1 << 1
CHANERR_NEXT_ADDR = 1 << 2
CHANERR_NEXT_DESC_ALIGN = 1 << 3
CHANERR_CHANCMD = 1 << 5
CHANERR_READ_DATA = 1 << 8
CHANERR_WRITE_DATA = 1 << 9
CHANERR_CONTROL = 1 << 10
CHANERR_LENGTH = 1 << 11
CHANERR_COMPLETION_ADDR = 1 << 12

CFG_CHANERR_INT, CFG_CHANERRMSK_INT = 0x180, 0x184


def descriptor(size, ctl, src, dst, nxt):
    return struct.pack("<IIQQQQQQQ", size, ctl, src, dst, nxt, 0, 0, 0, 0)


class Ioat:
    """One dmalab-ioat in a qtest machine. `args` are extra QEMU arguments; `device` the
    -device value."""

    def __init__(self, qemu, device="dmalab-ioat", args=(), machine="q35", timeout=30.0,
                 wrapper=None, device_id=DEVICE):
        self.qt = QTest(qemu, list(args) + ["-device", device], machine=machine,
                        timeout=timeout, wrapper=wrapper or ())
        self.pci = PCI(self.qt)
        self.bdf = self.pci.find_device(VENDOR, device_id)
        assert self.bdf is not None, "dmalab-ioat not found"
        self.bar = self.pci.bar_map(self.bdf, 0)
        self.mem = GuestAlloc(self.qt)
        self.nchan = self.qt.readb(self.bar + CHANCNT)
        self.irq_area = self.mem.alloc(4096, fill=0)

    def close(self):
        return self.qt.close()

    # Registers.
    def reg(self, ch, off):
        return self.bar + (STRIDE * (ch + 1) if ch is not None else 0) + off

    def rd(self, ch, off, size):
        return getattr(self.qt, "read" + "bwlq"[size.bit_length() - 1])(self.reg(ch, off))

    def wr(self, ch, off, val, size):
        getattr(self.qt, "write" + "bwlq"[size.bit_length() - 1])(self.reg(ch, off), val)

    def chansts(self, ch):
        return self.qt.readq(self.reg(ch, CHANSTS))

    def state(self, ch):
        return self.chansts(ch) & 7

    def chanerr(self, ch):
        return self.qt.readl(self.reg(ch, CHANERR))

    # Interrupts: MSI-X vector v writes (0xA0 | v) to irq_area + 4 * v.
    def use_msix(self):
        self.pci.msix_enable(self.bdf)
        for v in range(self.nchan):
            self.pci.msix_set_vector(self.bdf, v, self.irq_area + 4 * v, 0xA0 | v)
        self.wr(None, INTRCTRL, INTRCTRL_MASTER_INT_EN | INTRCTRL_MSIX_VECTOR_CONTROL, 1)

    def irq_word(self, v):
        return self.qt.readl(self.irq_area + 4 * v)

    def clear_irqs(self):
        self.qt.memset(self.irq_area, 4096, 0)

    # Channels, as ioat_alloc_chan_resources programs them.
    def setup(self, ch):
        completion = self.mem.alloc(64, align=64, fill=0)
        self.wr(ch, CHANCMD, CMD_RESET, 1)
        self.wr(ch, CHANCTRL, CHANCTRL_RUN, 2)
        self.wr(ch, CHANCMP, completion & 0xFFFFFFFF, 4)
        self.wr(ch, CHANCMP + 4, completion >> 32, 4)
        return completion

    def chain(self, descs):
        """Writes a chain of descriptors [(size, ctl, src, dst)], each pointing at the
        next (the last at a spare slot); returns their addresses."""
        base = self.mem.alloc(64 * (len(descs) + 1), align=64, fill=0)
        for i, (size, ctl, src, dst) in enumerate(descs):
            self.qt.memwrite(base + 64 * i, descriptor(size, ctl, src, dst, base + 64 * (i + 1)))
        return [base + 64 * i for i in range(len(descs))]

    def start(self, ch, first, count):
        self.wr(ch, CHAINADDR, first & 0xFFFFFFFF, 4)
        self.wr(ch, CHAINADDR + 4, first >> 32, 4)
        self.wr(ch, DMACOUNT, count, 2)

    def buffer(self, size, seed=1):
        data = bytes((seed + i * 7 + (i >> 8)) & 0xFF for i in range(size))
        addr = self.mem.alloc(size, fill=0)
        self.qt.memwrite(addr, data)
        return addr, data

    def settle(self, ns=10_000_000, steps=64):
        """Advances virtual time so pending steps run."""
        for _ in range(steps):
            self.qt.clock_step(ns // steps)


class Buf:
    """A copy's source (random bytes) and destination. The destination is pre-filled with
    the complement of the source, so each byte is either copied or visibly untouched, and it
    sits between guard bands that must never change."""
    GUARD = 256
    GUARD_BYTE = b"\x5a"

    def __init__(self, io, size, seed):
        self.io, self.size = io, size
        self.data = random.Random(seed).randbytes(size)
        self.src = io.mem.alloc(size)
        io.qt.memwrite(self.src, self.data)
        self.region = io.mem.alloc(size + 2 * self.GUARD)
        self.dst = self.region + self.GUARD
        self.blank = self.data.translate(bytes(range(255, -1, -1)))
        self.guard = self.GUARD_BYTE * self.GUARD
        io.qt.memwrite(self.region, self.guard + self.blank + self.guard)

    def read(self):
        got = self.io.qt.memread(self.region, self.size + 2 * self.GUARD)
        return got[:self.GUARD], got[self.GUARD:-self.GUARD], got[-self.GUARD:]

    def copied_prefix(self):
        """Bytes copied so far, checking that they form a prefix and the rest is untouched."""
        head, body, tail = self.read()
        if head != self.guard or tail != self.guard:
            raise AssertionError(f"guard bytes around {self.dst:#x} overwritten")
        n = next((i for i in range(self.size) if body[i] != self.data[i]), self.size)
        if body[n:] != self.blank[n:]:
            raise AssertionError(f"{self.dst:#x}: copy is not a prefix: byte {n} differs, "
                                 "and later bytes are not untouched")
        return n

    def check(self, tc, copied=True):
        head, body, tail = self.read()
        tc.assertEqual(head, self.guard, f"guard before {self.dst:#x} overwritten")
        tc.assertEqual(tail, self.guard, f"guard after {self.dst:#x} overwritten")
        want = self.data if copied else self.blank
        if body != want:
            bad = next(i for i in range(self.size) if body[i] != want[i])
            tc.fail(f"destination {self.dst:#x} ({self.size} bytes) "
                    f"{'not copied' if copied else 'written'}: first wrong byte at +{bad:#x}")
