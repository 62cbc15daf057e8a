# SPDX-License-Identifier: GPL-2.0-or-later
"""What the cost studies share: a study's shape (Study), the IOMMU configurations most of
them boot (configs), dmalab-vtd property variants (--set, --sweep) and the modelled clock's
runner arguments. One module per study beside this one; measure.py runs them."""

import measure_checks as checks
from measure_tables import Counts

# The counts tables the studies share (measure_tables.Counts): the unit's invalidation
# queue as the exerciser reads it, swiotlb's copies, the NICs' interrupts.
QUEUE = "the unit's invalidation queue, read by the guest (IQH and the descriptors)"


def _queue_field(name):
    """A count read from the unit's queue: none where the guest had no unit to read
    (descs=-1)."""
    return lambda f: None if int(f["descs"]) < 0 else int(f[name])


INV_COLUMNS = [("descriptors", "descs"), ("waits", _queue_field("waits")),
               ("iotlb invs", _queue_field("iotlb_invs"))]
MAP_INVS = Counts("bench-inv", ("op", "size"), "calls", INV_COLUMNS, "per call",
                  QUEUE + " after each call, outside its timed region; a lazy flush "
                  "counts against the call read after it")
MAP_BOUNCES = Counts("bench-bounce", ("op", "size"), "calls",
                     [("bytes bounced", lambda f: int(f["to_dev_bytes"]) +
                       int(f["from_dev_bytes"])),
                      ("copies", lambda f: int(f["to_dev_copies"]) +
                       int(f["from_dev_copies"]))],
                     "per call", "a kprobe on swiotlb_bounce, untimed passes")
NIC_IRQS = Counts("bench-nic", ("nic", "size", "rate"), "sent", [("interrupts", "irqs")],
                  "per packet sent", "/proc/interrupts, both NICs' vectors, read just "
                  "outside the window")


def configs(mode, pt=True, ioat="dmalab-ioat"):
    """No IOMMU (the baseline); dmalab-vtd pass-through, lazy and strict; and
    QEMU's intel-iommu lazy and strict, the peer (it models no time: its
    invalidations and waits complete inside the guest's register write)."""
    mode = "dmalab_exercise.mode=" + mode
    vtd = ["--device", "dmalab-vtd", "--device", ioat, "--append"]
    intel = ["--device", "intel-iommu", "--device", ioat, "--append"]
    # What each one's boots must show (measure_checks.premise): the page mapped, the
    # device's domain and the kernel's line for the mode
    lazy = checks.premise("translated", "DMA-FQ", checks.policy("lazy"))
    strict = checks.premise("translated", "DMA", checks.policy("strict"))
    out = [("no-iommu", ["--device", ioat, "--append", mode] +
            checks.premise("identity", "none"))]
    if pt:
        out.append(("vtd-pt", vtd + ["intel_iommu=on iommu=pt " + mode] + checks.premise(
            "identity", "identity", r"^iommu: Default domain type: Passthrough")))
    return out + [("vtd-lazy", vtd + ["intel_iommu=on iommu.strict=0 " + mode] + lazy),
                  ("vtd-strict", vtd + ["intel_iommu=on iommu.strict=1 " + mode] + strict),
                  ("intel-lazy", intel + ["intel_iommu=on iommu.strict=0 " + mode] + lazy),
                  ("intel-strict", intel + ["intel_iommu=on iommu.strict=1 " + mode] +
                   strict)]


def hub_pairs(drivers, prefix, ends):
    """Runner arguments: two NICs of each driver (ends: their id suffixes), each pair on
    a QEMU hub of its own; igb's at addresses apart (each reserves slots for its VFs)."""
    out = []
    for hub, drv in enumerate(drivers):
        for end, addr in zip(ends, ("0x8", "0xa")):
            out += ["--qemu-arg=-netdev",
                    "--qemu-arg=hubport,id=%s-%s-%s,hubid=%d" % (prefix, drv, end, hub),
                    "--device", "%s,netdev=%s-%s-%s,romfile=%s" % (
                        drv, prefix, drv, end, ",addr=" + addr if drv == "igb" else "")]
    return out


def vtd_variants(configs, sets=(), sweep=None):
    """The configurations with dmalab-vtd's properties `sets` ("PROP=VALUE") added to
    each -device dmalab-vtd, and with `sweep` ("PROP=V1,V2,..."), each configuration
    that has dmalab-vtd once per value, labelled "LABEL,PROP=V"; the others once."""
    prop, values = None, [None]
    if sweep:
        prop, _, vals = sweep.partition("=")
        values = [v for v in vals.split(",") if v]
        if not prop or not values:
            raise ValueError("--sweep takes PROP=V1,V2,...: %r" % sweep)
    out = []
    for label, args in configs:
        if not any(a.split(",")[0] == "dmalab-vtd" for a in args):
            out.append((label, args))
            continue
        for v in values:
            props = list(sets) + (["%s=%s" % (prop, v)] if v is not None else [])
            out.append((label + ("" if v is None else ",%s=%s" % (prop, v)),
                        [a + "".join("," + x for x in props)
                         if a.split(",")[0] == "dmalab-vtd" else a for a in args]))
    return out


# The modelled CPU of every study: QEMU's "max" without the fast-string features, so
# that a byte has one price whatever code path moves it.  TCG counts one instruction per
# iteration of a rep-string instruction, so with ERMS (6.1's memcpy and memset are then
# rep movsb and rep stosb), FSRM (6.12's memcpy), FSRS (6.12's memset, rep stosb),
# FZRM or FSRC, a copy or fill costs one instruction per byte: 1 ns per byte at 1 ns per
# instruction, dearer than any CPU's, and only on the paths Linux switched to those
# instructions.  Without them Linux copies and fills with its other routines (6.1: rep
# movsq and rep stosq where the CPU has REP_GOOD, else loops of 8-byte moves; 6.12:
# memcpy_orig and memset_orig), at a rate each study measures and prints (the mapcost
# modes' memcpy and memset rows: ns per byte at the shift it runs at).  Until
# 2026-12-06 iommu-flush ran plain "max" and the others kept FSRS.
MODELLED_CPU = "max,-erms,-fsrm,-fzrm,-fsrs,-fsrc"


class Study:
    """What a study boots: the exerciser's `mode`, with or without
    pass-through, dmalab-ioat with `engine`'s properties unless --engine says
    otherwise, `smp` CPUs, QEMU's `cpu` model, `extra` runner arguments (other
    devices, kernel parameters), by default on the modelled clock -icount
    `icount`; `quick` the module parameters of its smoke run (`quick_extra`, when
    given, its runner arguments in place of `extra`); its `tables`;
    `rated`: whether it has an offered rate (--rate, which its spread varies
    by --rate-spread; by default where a table is keyed by "rate");
    `expect(runs, labels, tables) -> (lines, failures)`: what --expect-order
    checks (by default measure_checks.expect_order where a table has a
    bound).  `matrix(mode, ioat)` gives the
    configurations (default: the IOMMU set of configs()).  A study may set
    `check_boot(label, rows, counters) -> [what is wrong]`: what each passed
    boot's rows and its devices' counters (measure_tables.unit_counters) must
    agree on (offload: the descriptors the device completed)."""

    def __init__(self, mode, pt, engine, tables, smp=None, quick=None, icount=None,
                 extra=(), matrix=None, cpu=None, rated=False,
                 expect=None, quick_extra=None):
        self.mode, self.pt, self.engine, self.icount = mode, pt, engine, icount
        self.cpu = cpu
        self.smp, self.quick, self.extra = smp, dict(quick or {}), list(extra)
        self.quick_extra = None if quick_extra is None else list(quick_extra)
        self.tables = tables
        # by default: rated where a table is keyed by the rate, and the order strict >
        # lazy > no IOMMU where a table knows its figures' resolution (iommu-flush)
        self.rated = rated or any("rate" in t.keys for t in tables)
        self.expect = expect or (checks.expect_order if any(t.bound for t in tables)
                                 else None)
        self.matrix = matrix or (lambda mode, ioat: configs(mode, self.pt, ioat))

    def configs(self, engine=None, quick=False):
        engine = self.engine if engine is None else engine
        extra = self.quick_extra if quick and self.quick_extra is not None else self.extra
        return [(label, args + extra) for label, args in
                self.matrix(self.mode, "dmalab-ioat" + ("," + engine if engine else ""))]


def modelled_clock(shift, seed=1):
    """The runner's arguments for modelled time: TCG with -icount (guest time counts
    guest instructions, and idle time jumps to the next timer: sleep=off), QEMU's
    guest random numbers (RDRAND, which -cpu max has) from a fixed seed (seed: the
    studies' spread boots more than one), and the RTC
    on virtual time from a fixed date. Without the last two, each boot read the host's
    clock and random numbers: Linux seeds its own generator from both, and waits for
    the RTC's update-in-progress bit to clear, so boots of the same configuration ran
    different instructions and their timer-driven counts (lazy flushes) differed."""
    return ["--accel", "tcg"] + ["--qemu-arg=" + a for a in (
        "-icount", "shift=%d,sleep=off" % shift, "-seed", str(seed),
        "-rtc", "base=2026-01-01T00:00:00,clock=vm")]
