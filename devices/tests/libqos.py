#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Devices over qtest without firmware, as QEMU's libqos does it: PCI
configuration space, discovery and BARs on q35 (ECAM enabled by hand), and a
guest memory allocator for DMA buffers. libqtest.py has the QTest
connection itself."""

import collections

from libqtest import QTestError

Q35_MCH_ID = 0x29C08086     # vendor/device of q35's host bridge at 00:00.0
Q35_PCIEXBAR = 0x60         # MCH register: ECAM base, bit 0 enables (off at reset)
Q35_ECAM = 0xB0000000       # MCH_HOST_BRIDGE_PCIEXBAR_DEFAULT (hw/pci-host/q35.h)
Q35_ECAM_SIZE = 256 << 20   # length field 0: 256 buses


def _align(value, alignment):
    return -(-value // alignment) * alignment


def make_bdf(bus, dev, fn=0):
    """The 16-bit bus/device/function number PCI's methods take."""
    return bus << 8 | dev << 3 | fn


def bdf_str(bdf):
    return f"{bdf >> 8:02x}:{bdf >> 3 & 0x1F:02x}.{bdf & 7}"


Bar = collections.namedtuple("Bar", "addr size is_io is_64")
Msix = collections.namedtuple("Msix", "cap table pba count")


class PCI:
    """Config space, discovery and resources without firmware. On q35 this enables
    ECAM at ``ecam`` by writing the MCH's PCIEXBAR through 0xcf8 (SeaBIOS's job; reset
    leaves it off); ecam=None or another machine: 0xcf8/0xcfc only (offsets < 0x100).
    Memory BARs are allocated from ``mmio_start`` up to ``mmio_end`` (IOAPIC), IO BARs
    from port 0xc000. ``bars`` maps (bdf, bar) to the Bar placed by bar_map()."""

    def __init__(self, qt, ecam=Q35_ECAM, mmio_start=0xE0000000, mmio_end=0xFEC00000):
        self.qt, self.ecam, self.bars, self._parent, self._next_bus = qt, None, {}, {}, 1
        self._mmio, self._mmio_end, self._io = mmio_start, mmio_end, 0xC000
        if ecam is not None and self.pio_cfg_read(0, 0) == Q35_MCH_ID:
            self.pio_cfg_write(0, Q35_PCIEXBAR + 4, ecam >> 32)
            self.pio_cfg_write(0, Q35_PCIEXBAR, (ecam & 0xF0000000) | 1)
            self.ecam = ecam

    def pio_cfg_read(self, bdf, off, size=4):
        """Config read of 1/2/4 bytes through 0xcf8/0xcfc."""
        self.qt.outl(0xCF8, 0x80000000 | bdf << 8 | (off & 0xFC))
        return getattr(self.qt, "in" + "bwl"[size >> 1])(0xCFC + (off & 3))

    def pio_cfg_write(self, bdf, off, val, size=4):
        self.qt.outl(0xCF8, 0x80000000 | bdf << 8 | (off & 0xFC))
        getattr(self.qt, "out" + "bwl"[size >> 1])(0xCFC + (off & 3), val)

    def cfg_read(self, bdf, off, size=4):
        """Config read of 1/2/4 bytes: ECAM if enabled, else 0xcf8/0xcfc."""
        if self.ecam is None:
            return self.pio_cfg_read(bdf, off, size)
        return getattr(self.qt, "read" + "bwl"[size >> 1])(self.ecam + (bdf << 12) + off)

    def cfg_write(self, bdf, off, val, size=4):
        if self.ecam is None:
            return self.pio_cfg_write(bdf, off, val, size)
        getattr(self.qt, "write" + "bwl"[size >> 1])(self.ecam + (bdf << 12) + off, val)

    def _set_bits(self, bdf, off, bits, size=2):
        self.cfg_write(bdf, off, self.cfg_read(bdf, off, size) | bits, size)

    def devices(self, bus=0, bridges=True):
        """[(bdf, vendor, device)] on ``bus`` and, with ``bridges``, behind its PCI
        bridges, which get bus numbers if they have none (closed windows, bus master)."""
        found = []
        for bdf in range(bus << 8, (bus + 1) << 8):
            ids = self.cfg_read(bdf, 0)
            if ids in (0, 0xFFFFFFFF):
                continue
            found.append((bdf, ids & 0xFFFF, ids >> 16))
            if bridges and self.cfg_read(bdf, 0x0E, 1) & 0x7F == 1:
                found += self._scan_bridge(bus, bdf)
        return found

    def _scan_bridge(self, bus, bdf):
        sec = self.cfg_read(bdf, 0x19, 1)
        if sec == 0:
            sec, self._next_bus = self._next_bus, self._next_bus + 1
            self.cfg_write(bdf, 0x18, 0xFF << 16 | sec << 8 | bus)
            self.cfg_write(bdf, 0x20, 0xFFF0)  # memory window: base > limit, closed
            self.cfg_write(bdf, 0x24, 0xFFF0)  # prefetchable window too
        self._parent[sec] = bdf
        self._set_bits(bdf, 0x04, 0x6)
        below = self.devices(sec)
        self.cfg_write(bdf, 0x1A, max([sec] + [b >> 8 for b, _, _ in below]), 1)
        return below

    def find_device(self, vendor, device, index=0, bridges=True):
        """BDF of the ``index``-th function with these IDs, or None."""
        hits = [b for b, v, d in self.devices(0, bridges) if (v, d) == (vendor, device)]
        return hits[index] if index < len(hits) else None

    def find_capability(self, bdf, cap_id):
        """Config offset of standard capability ``cap_id``, or None."""
        has_list = self.cfg_read(bdf, 0x06, 2) & 0x10  # status: capability list
        off = self.cfg_read(bdf, 0x34, 1) & 0xFC if has_list else 0
        for _ in range(48):
            if off == 0:
                return None
            if self.cfg_read(bdf, off, 1) == cap_id:
                return off
            off = self.cfg_read(bdf, off + 1, 1) & 0xFC
        return None

    def find_ext_capability(self, bdf, cap_id):
        """Offset (>= 0x100) of PCIe extended capability ``cap_id``, or None (also
        without ECAM, and for conventional PCI functions)."""
        off = 0x100 if self.ecam is not None else 0
        while off >= 0x100:
            hdr = self.cfg_read(bdf, off)
            if hdr in (0, 0xFFFFFFFF):
                return None
            if hdr & 0xFFFF == cap_id:
                return off
            off = hdr >> 20 & 0xFFC
        return None

    def bar_size(self, bdf, bar):
        """(size, is_io, is_64) of BAR ``bar`` by the all-ones probe (size 0: none);
        decoding is off meanwhile and the BAR restored."""
        reg, cmd = 0x10 + 4 * bar, self.cfg_read(bdf, 0x04, 2)
        self.cfg_write(bdf, 0x04, cmd & ~0x3, 2)
        low = self.cfg_read(bdf, reg)
        is_io, is_64 = bool(low & 1), low & 0x7 == 0x4
        probe = 0
        for i, r in enumerate([reg, reg + 4] if is_64 else [reg]):
            saved = self.cfg_read(bdf, r)
            self.cfg_write(bdf, r, 0xFFFFFFFF)
            probe |= self.cfg_read(bdf, r) << 32 * i
            self.cfg_write(bdf, r, saved)
        self.cfg_write(bdf, 0x04, cmd, 2)
        if is_io and probe and not probe >> 16:
            probe |= 0xFFFF0000  # 16-bit IO decoder
        mask = (1 << (64 if is_64 else 32)) - 1
        probe &= mask & ~(0x3 if is_io else 0xF)
        return ((~probe & mask) + 1 if probe else 0), is_io, is_64

    def bar_map(self, bdf, bar, addr=None):
        """Sizes BAR ``bar`` (64-bit aware), puts it at ``addr`` or the next free
        aligned address (below 4 GiB, outside ECAM), widens upstream bridge windows,
        enables memory (or IO) decoding and bus mastering. Returns the address."""
        size, is_io, is_64 = self.bar_size(bdf, bar)
        if size == 0:
            raise QTestError(f"{bdf_str(bdf)} has no BAR{bar}")
        if addr is None and is_io:
            addr = _align(self._io, size)
            self._io = addr + size
        elif addr is None:
            addr = _align(self._mmio, max(size, 4096))
            if self.ecam is not None and self.ecam < addr + size and \
                    addr < self.ecam + Q35_ECAM_SIZE:
                addr = _align(self.ecam + Q35_ECAM_SIZE, max(size, 4096))
            if addr + size > self._mmio_end:
                raise QTestError(f"no MMIO space for {bdf_str(bdf)} BAR{bar}")
            self._mmio = addr + size
        self.cfg_write(bdf, 0x10 + 4 * bar, addr & 0xFFFFFFFF)
        if is_64:
            self.cfg_write(bdf, 0x14 + 4 * bar, addr >> 32)
        bus = bdf >> 8
        while bus in self._parent and not is_io:  # bridge memory windows, 1 MiB units
            br = self._parent[bus]
            base, limit = (self.cfg_read(br, o, 2) << 16 for o in (0x20, 0x22))
            lo, hi = addr, addr + size - 1
            if base <= limit:
                lo, hi = min(lo, base), max(hi, limit)
            self.cfg_write(br, 0x20, (hi >> 16 & 0xFFF0) << 16 | lo >> 16 & 0xFFF0)
            bus = br >> 8
        self._set_bits(bdf, 0x04, (0x1 if is_io else 0x2) | 0x4)
        self.bars[bdf, bar] = Bar(addr, size, is_io, is_64)
        return addr

    def bar_addr(self, bdf, bar):
        """Address of BAR ``bar``, mapping it with bar_map() first if needed."""
        if (bdf, bar) not in self.bars:
            self.bar_map(bdf, bar)
        return self.bars[bdf, bar].addr

    def msix_info(self, bdf):
        """Msix(cap, table, pba, count): guest-physical table/PBA addresses (their
        BARs are mapped if needed). QTestError without an MSI-X capability."""
        cap = self.find_capability(bdf, 0x11)
        if cap is None:
            raise QTestError(f"{bdf_str(bdf)} has no MSI-X capability")
        count = (self.cfg_read(bdf, cap + 2, 2) & 0x7FF) + 1
        table, pba = self.cfg_read(bdf, cap + 4), self.cfg_read(bdf, cap + 8)
        return Msix(cap, self.bar_addr(bdf, table & 7) + (table & ~7),
                    self.bar_addr(bdf, pba & 7) + (pba & ~7), count)

    def msix_enable(self, bdf):
        """Enables MSI-X and bus mastering and clears the function mask; vectors
        stay masked (reset state) until msix_set_vector(). Returns msix_info()."""
        info = self.msix_info(bdf)
        self._set_bits(bdf, 0x04, 0x4)
        ctrl = self.cfg_read(bdf, info.cap + 2, 2)
        self.cfg_write(bdf, info.cap + 2, (ctrl | 0x8000) & ~0x4000, 2)
        return info

    def msix_set_vector(self, bdf, vector, addr, data, masked=False):
        """Programs table entry ``vector`` to store 32-bit ``data`` at ``addr``
        (a RAM address works, see the module docstring) and unmasks it."""
        entry = self.msix_info(bdf).table + 16 * vector
        self.qt.writel(entry + 12, 1)
        for off, val in ((0, addr & 0xFFFFFFFF), (4, addr >> 32), (8, data),
                         (12, int(masked))):
            self.qt.writel(entry + off, val)

    def msix_vector(self, bdf, vector):
        """(addr, data, vector_control) read back from table entry ``vector``."""
        entry = self.msix_info(bdf).table + 16 * vector
        lo, hi, data, ctrl = (self.qt.readl(entry + 4 * i) for i in range(4))
        return hi << 32 | lo, data, ctrl

    def msix_mask(self, bdf, vector, masked=True):
        self.qt.writel(self.msix_info(bdf).table + 16 * vector + 12, int(masked))

    def msix_pending(self, bdf, vector):
        """PBA bit of ``vector``: it fired while masked."""
        pba = self.msix_info(bdf).pba + 8 * (vector // 64)
        return bool(self.qt.readq(pba) >> vector % 64 & 1)

    def msi_enable(self, bdf, addr, data):
        """Enables single-vector MSI storing 16-bit ``data`` (zero-extended to 32 bits)
        at ``addr`` (high dword used if the function is 64-bit capable), unmasks it,
        enables bus mastering. Returns the capability offset."""
        cap = self.find_capability(bdf, 0x05)
        if cap is None:
            raise QTestError(f"{bdf_str(bdf)} has no MSI capability")
        ctrl = self.cfg_read(bdf, cap + 2, 2)
        is_64 = bool(ctrl & 0x80)
        if addr >> 32 and not is_64:
            raise QTestError(f"{bdf_str(bdf)}: MSI is 32-bit, {addr:#x} out of reach")
        self.cfg_write(bdf, cap + 4, addr & 0xFFFFFFFF)
        if is_64:
            self.cfg_write(bdf, cap + 8, addr >> 32)
        self.cfg_write(bdf, cap + (0xC if is_64 else 0x8), data & 0xFFFF, 2)
        if ctrl & 0x100:  # per-vector masking
            self.cfg_write(bdf, cap + (0x10 if is_64 else 0xC), 0)
        self._set_bits(bdf, 0x04, 0x4)
        self.cfg_write(bdf, cap + 2, (ctrl & ~0x70) | 1, 2)  # MME = 1 vector, enable
        return cap


class GuestAlloc:
    """Bump allocator for test buffers in guest RAM from ``start`` (16 MiB) to ``end``
    (default: RAM size from QMP, capped at 2 GiB, below q35's 32-bit PCI hole)."""

    def __init__(self, qt, start=16 << 20, end=None):
        if end is None:
            end = min(qt.qmp("query-memory-size-summary")["base-memory"], 0x80000000)
        self.qt, self.start, self.next, self.end = qt, start, start, end

    def alloc(self, size, align=4096, fill=None):
        """Guest address of ``size`` free bytes aligned to ``align``, memset to
        ``fill`` if given."""
        addr = _align(self.next, align)
        if addr + size > self.end:
            raise QTestError(f"guest RAM exhausted allocating {size:#x} bytes")
        self.next = addr + size
        if fill is not None:
            self.qt.memset(addr, size, fill)
        return addr

    def reset(self):
        self.next = self.start
