#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dmalab-dsa driven as Linux's idxd drives it, over qtest: the device found and its BARs
mapped, a group, an engine and a dedicated WQ configured and enabled with idxd's commands,
descriptors submitted to the WQ's portal as MOVDIR64B delivers them (eight ascending 8-byte
writes), completion records in guest RAM and MSI-X vectors aimed at RAM, so that each
interrupt is a word the test reads back."""

import struct

from libqtest import PCI, GuestAlloc, QTest

VENDOR, DEVICE = 0x8086, 0x0B25

# BAR 0 registers, as dsa/include/dmalab/dsa/spec/registers.h has them.
VERSION, GENCAP, WQCAP, GRPCAP, ENGCAP, OPCAP, OFFSETS = 0x00, 0x10, 0x20, 0x30, 0x38, 0x40, 0x60
GENCFG, GENCTRL, GENSTS, INTCAUSE, CMD, CMDSTS, CMDCAP = 0x80, 0x88, 0x90, 0x98, 0xA0, 0xA8, 0xB0
SWERR0, SWERR1, SWERR2 = 0xC0, 0xC8, 0xD0
CMDSTS_ACTIVE = 1 << 31
CMD_INT_REQ = 1 << 31
INTC_SWERR, INTC_CMD = 0x1, 0x2
# Commands.
ENABLE_DEVICE, DISABLE_DEVICE, DRAIN_ALL, ABORT_ALL, RESET_DEVICE = 1, 2, 3, 4, 5
ENABLE_WQ, DISABLE_WQ, DRAIN_WQ, ABORT_WQ, RESET_WQ = 6, 7, 8, 9, 10
# Table entries (spec/config.h).
GRPCFG_STRIDE, GRPWQCFG, GRPENGCFG, GRPFLAGS = 64, 0x00, 0x20, 0x28
WQCFG_STRIDE, WQ_SIZE, WQ_THRESHOLD, WQ_MODE, WQ_LIMITS, WQ_STATUS = 32, 0x0, 0x4, 0x8, 0xC, 0x18
# Portals (spec/pci.h): WQ n's limited MSI-X portal, where idxd submits.
PORTAL_STRIDE, PORTAL_LIMITED = 0x4000, 0x1000

# Opcodes and flags (spec/descriptor.h).
NOOP, BATCH, DRAIN, MEMMOVE, FILL, COMPARE = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05
CRCGEN = 0x10
CRAV, RCR, RCI = 1 << 2, 1 << 3, 1 << 4
SUCCESS = 0x01


def descriptor(op, flags=0, completion=0, src=0, dst=0, size=0, handle=0, w5=0, w6=0, w7=0):
    w0 = op << 56 | flags << 32
    return [w0, completion, src, dst, size | handle << 32, w5, w6, w7]


class Dsa:
    """One dmalab-dsa in a qtest machine: `device` is its -device value, `args` more QEMU
    arguments."""

    def __init__(self, qemu, device="dmalab-dsa", args=(), machine="q35", timeout=30.0,
                 wrapper=None):
        self.qt = QTest(qemu, list(args) + ["-device", device], machine=machine,
                        timeout=timeout, wrapper=wrapper or ())
        self.pci = PCI(self.qt)
        self.bdf = self.pci.find_device(VENDOR, DEVICE)
        assert self.bdf is not None, "dmalab-dsa not found"
        self.bar0 = self.pci.bar_map(self.bdf, 0)
        self.bar2 = self.pci.bar_map(self.bdf, 2)
        self.mem = GuestAlloc(self.qt)
        self.irq_area = self.mem.alloc(4096, fill=0)
        offsets = self.qt.readq(self.bar0 + OFFSETS)
        self.grpcfg = (offsets & 0xFFFF) * 0x100
        self.wqcfg = (offsets >> 16 & 0xFFFF) * 0x100
        self.nvec = self.pci.msix_info(self.bdf).count

    def close(self):
        return self.qt.close()

    # Registers.
    def rd(self, off, size=4):
        return getattr(self.qt, "read" + "bwlq"[size.bit_length() - 1])(self.bar0 + off)

    def wr(self, off, val, size=4):
        getattr(self.qt, "write" + "bwlq"[size.bit_length() - 1])(self.bar0 + off, val)

    def wq_reg(self, wq, off):
        return self.wqcfg + WQCFG_STRIDE * wq + off

    def grp_reg(self, g, off):
        return self.grpcfg + GRPCFG_STRIDE * g + off

    # Interrupts: MSI-X vector v writes (0xD0 | v) to irq_area + 4 * v.
    def use_msix(self):
        self.pci.msix_enable(self.bdf)
        for v in range(self.nvec):
            self.pci.msix_set_vector(self.bdf, v, self.irq_area + 4 * v, 0xD0 | v)

    def irq_word(self, v):
        return self.qt.readl(self.irq_area + 4 * v)

    def clear_irqs(self):
        self.qt.memset(self.irq_area, 4096, 0)

    # Commands, as idxd_cmd_exec issues them.
    def command(self, cmd, operand=0, settle_ns=10_000_000):
        self.wr(CMD, CMD_INT_REQ | cmd << 20 | operand)
        for _ in range(1000):
            sts = self.rd(CMDSTS)
            if not sts & CMDSTS_ACTIVE:
                return sts & 0xFF
            self.qt.clock_step(settle_ns // 100)
        raise AssertionError(f"command {cmd} never completed")

    def bring_up(self, wq=0, size=16, engines=0b1):
        """idxd_device_config and idxd_wq_enable: group 0 with WQ `wq` and `engines`, the
        WQ dedicated with `size` slots and 2 MiB transfers, then Enable Device and WQ."""
        self.use_msix()
        assert self.command(RESET_DEVICE) == 0
        self.wr(GENCTRL, 0x3)  # SWERR and halt interrupts, as idxd enables them
        self.wr(self.grp_reg(0, GRPWQCFG), 1 << wq, 8)
        self.wr(self.grp_reg(0, GRPENGCFG), engines, 8)
        self.wr(self.grp_reg(0, GRPFLAGS), 96 << 20, 8)
        self.wr(self.wq_reg(wq, WQ_SIZE), size)
        self.wr(self.wq_reg(wq, WQ_MODE), 1)  # dedicated
        self.wr(self.wq_reg(wq, WQ_LIMITS), 21 | 5 << 5)
        assert self.command(ENABLE_DEVICE) == 0
        assert self.command(ENABLE_WQ, wq) == 0
        self.wr(INTCAUSE, self.rd(INTCAUSE))

    def submit(self, wq, words, slot=0):
        """One MOVDIR64B, as QEMU delivers it to the portal."""
        at = self.bar2 + PORTAL_STRIDE * wq + PORTAL_LIMITED + 64 * slot
        for i, w in enumerate(words):
            self.qt.writeq(at + 8 * i, w & (1 << 64) - 1)

    def record(self, addr):
        """(status, result, bytes_completed, fault_addr, word2) of the record at addr."""
        raw = self.qt.memread(addr, 32)
        status, result, _, done, fault, w2, _ = struct.unpack("<BBHIQQQ", raw)
        return status, result, done, fault, w2

    def settle(self, ns=10_000_000, steps=64):
        """Advances virtual time so the engines' steps run."""
        for _ in range(steps):
            self.qt.clock_step(ns // steps)
