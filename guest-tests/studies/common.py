# SPDX-License-Identifier: GPL-2.0-or-later
"""What the cost studies share: a study's shape (Study), the IOMMU configurations most of
them boot (configs), dmalab-vtd property variants (--set, --sweep) and the modelled clock's
runner arguments. One module per study beside this one; measure.py runs them."""

import measure_checks as checks


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


class Study:
    """What a study boots: the exerciser's `mode`, with or without
    pass-through, dmalab-ioat with `engine`'s properties unless --engine says
    otherwise, `smp` CPUs, `extra` runner arguments (other devices, kernel
    parameters), by default on the modelled clock -icount `icount`; `quick`
    the module parameters of its smoke run; and its `tables`.  `matrix(mode,
    ioat)` gives the configurations (default: the IOMMU set of configs());
    with `own_clock` each of them sets its own clock, and --icount and
    --host-clock are refused."""

    def __init__(self, mode, pt, engine, tables, smp=None, quick=None, icount=None,
                 extra=(), matrix=None, own_clock=False):
        self.mode, self.pt, self.engine, self.icount = mode, pt, engine, icount
        self.own_clock = own_clock
        self.smp, self.quick, self.extra = smp, dict(quick or {}), list(extra)
        self.tables = tables
        self.matrix = matrix or (lambda mode, ioat: configs(mode, self.pt, ioat))

    def configs(self, engine=None):
        engine = self.engine if engine is None else engine
        return [(label, args + self.extra) for label, args in
                self.matrix(self.mode, "dmalab-ioat" + ("," + engine if engine else ""))]


def modelled_clock(shift):
    """The runner's arguments for modelled time: TCG with -icount (guest time counts
    guest instructions, and idle time jumps to the next timer: sleep=off), QEMU's
    guest random numbers (RDRAND, which -cpu max has) from a fixed seed, and the RTC
    on virtual time from a fixed date. Without the last two, each boot read the host's
    clock and random numbers: Linux seeds its own generator from both, and waits for
    the RTC's update-in-progress bit to clear, so boots of the same configuration ran
    different instructions and their timer-driven counts (lazy flushes) differed."""
    return ["--accel", "tcg"] + ["--qemu-arg=" + a for a in (
        "-icount", "shift=%d,sleep=off" % shift, "-seed", "1",
        "-rtc", "base=2026-01-01T00:00:00,clock=vm")]
