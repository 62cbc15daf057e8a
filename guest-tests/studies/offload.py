# SPDX-License-Identifier: GPL-2.0-or-later
"""offload: NET_DMA's trade, a copy through dmalab-ioat against the guest CPU's memcpy(),
each configuration on its own modelled clock; measure.py's docstring and docs/offload.rst
say more."""

import measure_checks as checks
from measure_tables import Table, crossover
from studies.common import Study, modelled_clock
from studies.iommu_flush import COPY_ENGINE


# The offload study's second engine profile: slower to start and to move bytes.
SLOW_ENGINE = "latency-ns=10000,bandwidth=1000000000"
# Its CPU cost models: -icount shift N makes each guest instruction 2^N ns, and the
# guest's memcpy() is a rep movsb, one instruction per byte for TCG.
OFFLOAD_CPUS = (("cpu-1ns", 0, None), ("cpu-8ns", 3, None), ("cpu-32ns", 5, None),
                ("cpu-8ns-slow-engine", 3, SLOW_ENGINE))


def offload_configs(mode, ioat):
    """The same copies under several costs of a guest instruction (so of a
    CPU copy: 1, 8 and 32 ns per byte) with the study's engine, and one with a
    slower engine: each configuration its own modelled clock."""
    out = []
    for label, shift, engine in OFFLOAD_CPUS:
        dev = "dmalab-ioat," + engine if engine else ioat
        out.append((label, ["--device", dev, "--append", "dmalab_exercise.mode=" + mode]
                     + modelled_clock(shift) + checks.premise("identity", "none")))
    return out


# Each configuration sets its own modelled clock (offload_configs).
STUDY = Study("offload", False, COPY_ENGINE, [
    Table("bench-offload", ("op", "size"), "p50_ns", ["p99_ns"], "ns per copy",
          derived=lambda s, labels: crossover(s, labels))],
    smp=1, quick={"dmalab_exercise.offload_calls": 50}, matrix=offload_configs,
    own_clock=True)
