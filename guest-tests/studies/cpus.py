# SPDX-License-Identifier: GPL-2.0-or-later
"""CPU profiles for the cost studies (issue 42): a published CPU's speed, so that the
models' delays keep their weight against the guest's instructions.

The studies run on the modelled clock at -icount shift=0: 1 ns of guest time per guest
instruction, QEMU's fastest. A profile says how long an instruction takes on a real CPU
(t = 1 / (clock x IPC) ns) and what its devices take in real nanoseconds; the study then
sets every dmalab device delay to (real ns) / t modelled ns, so that in modelled time
an instruction and a delay keep the ratio they have on that CPU, and a figure's modelled
ns times t reads in that CPU's ns. Each number says where it comes from; what has no
published source says so, and is the models' chosen default. IPC is never sourced (no
measurement of the kernel's instructions per cycle on these paths was found): it is a
parameter of the run (--ipc, default 1), stated beside every figure.

"model" is no profile: the models' delays as they are, 1 ns per instruction (t = 1)."""

from dataclasses import dataclass, field

# dmalab-vtd's delays (vtd/include/dmalab/vtd/unit.h, Config) and dmalab-ioat's and
# dmalab-dsa's (property: unit) that a profile scales: virtual ns each, or bytes per second.
VTD_DELAYS = {"wait-ns": 500, "inv-desc-ns": 200, "inv-page-ns": 10, "walk-read-ns": 100}
IOAT_DELAYS = ("latency-ns", "jitter-ns")
IOAT_RATES = ("bandwidth",)


@dataclass(frozen=True)
class Source:
    value: float
    where: str          # what measured it, and where it is published


@dataclass(frozen=True)
class Profile:
    name: str
    cpu: str
    ghz: Source
    # real ns (or bytes/s) per dmalab-vtd and dmalab-ioat property; the others keep the
    # models' chosen values, as real ns on this CPU
    delays: dict = field(default_factory=dict)
    # dmalab-vtd properties that are no delay (sizes), set as they are, unless given
    shape: dict = field(default_factory=dict)

    def ns_per_insn(self, ipc):
        return 1.0 / (self.ghz.value * ipc)


PROFILES = {
    "cascade-lake-6234": Profile(
        "cascade-lake-6234", "Intel Xeon Gold 6234 (Cascade Lake), 3.3 GHz",
        Source(3.3, "the testbed of Rubin, Agarwal, Cai and Agarwal, \"Fast & Safe IO Memory "
                    "Protection\", SOSP 2024, section 2.2 (base clock)"),
        {"walk-read-ns": Source(197, "the same paper, section 2.2: the mean latency of one "
                                     "IOMMU read of memory during translation, fitted to "
                                     "iperf runs on that machine (Linux 6.0, strict mode)")}),
    "haswell-ep-2620v3": Profile(
        "haswell-ep-2620v3", "Intel Xeon E5-2620 v3 (Haswell-EP), 2.40 GHz",
        Source(2.4, "pcie-bench's published data (Neugebauer et al., SIGCOMM 2018; "
                    "github.com/pcie-bench/data), the host's sys-cpuinfo.txt brand string "
                    "(base clock)"),
        {"walk-read-ns": Source(227, "the same data: 64-byte random DMA reads over a 4-16 "
                                     "MiB window, median latency with 4 KiB IOMMU pages "
                                     "(intel_iommu=on,sp_off) less without; a whole IOTLB "
                                     "miss with the upper levels cached, which the unit's "
                                     "paging-structure caches make one read")},
        {"iotlb-entries": Source(120, "the same data, fitted here: with walk-read-ns 227 and "
                                      "8 ways, 120 entries give the 1 MiB window's mean "
                                      "latency difference (121.9 ns measured, 120.6 "
                                      "modelled: vtd/tools/pciebench_replay.cc); the "
                                      "2 MiB mean, held out, is then predicted within 1% "
                                      "(docs/measure.rst, CPU profiles)"),
         "iotlb-ways": Source(8, "chosen: no associativity of this IOTLB is published; "
                                 "the fit above assumes it")}),
}


def profile(name):
    """The profile called name, or None for "model"; KeyError names the known ones."""
    if name in (None, "model"):
        return None
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError("unknown CPU profile %r: model, %s" % (name, ", ".join(sorted(PROFILES))))


def _number(prop, value):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("a CPU profile scales %s, which must then be a plain number: %r"
                         % (prop, value))


def _scale_device(arg, prof, t):
    """One -device value with its delays in modelled ns for a CPU of t ns per instruction:
    each delay the value sets (in that CPU's ns), else the profile's, else the model's
    default (dmalab-vtd), divided by t; a bandwidth multiplied by t."""
    name, *props = arg.split(",")
    given = dict(p.split("=", 1) if "=" in p else (p, None) for p in props)
    if name == "dmalab-vtd":
        delays = {k: given.get(k, prof.delays[k].value if k in prof.delays else v)
                  for k, v in VTD_DELAYS.items()}
        rates = {}
        for k, src in prof.shape.items():
            given.setdefault(k, "%g" % src.value)
    elif name in ("dmalab-ioat", "dmalab-dsa"):
        # the same pacing properties (dmalab-dsa's bandwidth counts both streams of a copy)
        delays = {k: given[k] for k in IOAT_DELAYS if k in given}
        delays.update({k: prof.delays[k].value for k in IOAT_DELAYS
                       if k in prof.delays and k not in given})
        rates = {k: given[k] for k in IOAT_RATES if k in given}
    else:
        return arg
    for k, v in delays.items():
        given[k] = str(round(_number(k, v) / t))
    for k, v in rates.items():
        given[k] = str(max(1, round(_number(k, v) * t)))
    return ",".join([name] + [k if v is None else "%s=%s" % (k, v) for k, v in given.items()])


def apply(configs, prof, ipc):
    """configs ([(label, runner args)]) with every dmalab device's delays scaled for the
    profile (none for "model")."""
    if prof is None:
        return configs
    t = prof.ns_per_insn(ipc)
    return [(label, [_scale_device(a, prof, t) if i and args[i - 1] == "--device" else a
                     for i, a in enumerate(args)]) for label, args in configs]


def describe(prof, ipc):
    """What a table's figures are on this profile: one line, sources named in the docs."""
    if prof is None:
        return ("CPU profile: model (1 ns per instruction; the models' delays as set: "
                "nothing here is a published CPU)")
    t = prof.ns_per_insn(ipc)
    sourced = ", ".join("%s %g" % (k, s.value) for k, s in sorted(prof.delays.items()))
    if prof.shape:
        sourced += "; sizes set: %s" % ", ".join(
            "%s %g (%s)" % (k, s.value, "chosen" if s.where.startswith("chosen") else
                            "fitted") for k, s in sorted(prof.shape.items()))
    return ("CPU profile %s: %s x IPC %g (assumed, not measured) = %.3f ns per instruction; "
            "device delays in its ns, divided by %.3f into modelled ns (sourced: %s; the "
            "rest the models' chosen values); a figure's modelled ns x %.3f = ns on it"
            % (prof.name, prof.cpu, ipc, t, t, sourced or "none", t))
