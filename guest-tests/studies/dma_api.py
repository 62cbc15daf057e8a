# SPDX-License-Identifier: GPL-2.0-or-later
"""dma-api: what dma_map_single(), dma_unmap_single() and a sync pair cost per call on
dmalab-ioat's device (the exerciser's mode=mapcost), without an IOMMU and behind dmalab-vtd
and intel-iommu; measure.py's docstring and docs/measure.rst say more.

One guest CPU: with two, Linux under TCG found the TSCs unsynchronised and timed with the
ACPI PM timer, whose tick (279 ns) was then the figures' resolution.  The modelled clock
at 1 ns per guest instruction by default (--host-clock for the host's); the mean per call
first, the empty timed region's cost subtracted (measure_tables.net_of_empty)."""

import measure_checks as checks
from measure_tables import BENCH_MAP, Counts, Table
from studies import orders
from studies.common import (INV_COLUMNS, MAP_BOUNCES, MAP_INVS, MODELLED_CPU, QUEUE, Study,
                            configs)

# Caching mode (CAP.CM), what a guest behind a vIOMMU with VFIO runs: the unit may cache
# not-present entries, so Linux invalidates on map as well as on unmap, and goes strict
# whatever it was asked ("IOMMU batching disallowed due to virtualization").
CM_LINE = r"^DMAR: IOMMU batching disallowed due to virtualization$"


def matrix(mode, ioat):
    """configs()'s, then dmalab-vtd in caching mode (vtd-cm)."""
    return configs(mode, True, ioat) + [
        ("vtd-cm", ["--device", "dmalab-vtd,caching-mode=on", "--device", ioat, "--append",
                    "intel_iommu=on dmalab_exercise.mode=" + mode] +
         checks.premise("translated", "DMA", CM_LINE))]


# --smp N (2 or more): the exerciser's concurrent windows, every CPU mapping and unmapping
# at once (mapcost_threads), which every configuration must print then
BENCH_MAPMT = Table("bench-mapmt", ("size", "threads"), "busy_ns_per_pair",
                    ["map_ns", "unmap_ns", "pairs"],
                    "guest CPU ns per map and unmap pair, every CPU mapping at once (all "
                    "CPUs' busy time; map_ns and unmap_ns: each thread's mean call)",
                    check=checks.concurrent_row, smp=2)

STUDY = Study("mapcost", True, "", [BENCH_MAP, BENCH_MAPMT], smp=1, icount=0, cpu=MODELLED_CPU,
              quick={"dmalab_exercise.mapcost_calls": 200}, expect=orders.dma_api,
              matrix=matrix)
STUDY.counts = [
    MAP_INVS,
    Counts("bench-mapmt", ("size", "threads"), "pairs", INV_COLUMNS,
           "per map and unmap pair, every CPU at once",
           QUEUE + " after every pair by the thread that made it, under one lock"),
    MAP_BOUNCES]



def profile_lines(profiles, labels, top=10):
    """With --profile, among the counts: instructions per operation of every window, and
    strict's over no IOMMU's, symbol by symbol, in the one-CPU unmap window and, at
    --smp 2 or more, in the window where every CPU maps and unmaps at once (the locks'
    slow paths show there)."""
    from studies.profiles import diff_lines, per_op_table, prof
    out = per_op_table(profiles, labels)
    if "no-iommu" not in profiles:
        return out
    for label in labels:
        if label.split(",")[0] not in ("vtd-strict", "intel-strict") or label not in profiles:
            continue
        names = {prof.window_name(w) for w in profiles[label][0].ids()}
        for window in ("unmap-4096", "mapmt-4096"):
            if window in names:
                out += diff_lines(profiles, label, "no-iommu", window, top)
    return out


STUDY.profile_lines = profile_lines
