# SPDX-License-Identifier: GPL-2.0-or-later
"""dma-api: what dma_map_single(), dma_unmap_single() and a sync pair cost per call on
dmalab-ioat's device (the exerciser's mode=mapcost), without an IOMMU and behind dmalab-vtd
and intel-iommu; measure.py's docstring and docs/measure.rst say more.

One guest CPU: with two, Linux under TCG found the TSCs unsynchronised and timed with the
ACPI PM timer, whose tick (279 ns) was then the figures' resolution.  The modelled clock
at 1 ns per guest instruction by default (--host-clock for the host's); the mean per call
first, the empty timed region's cost subtracted (measure_tables.net_of_empty)."""

import measure_checks as checks
from measure_tables import BENCH_MAP
from studies import orders
from studies.common import MAP_BOUNCES, MAP_INVS, MODELLED_CPU, Study, configs

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


STUDY = Study("mapcost", True, "", [BENCH_MAP], smp=1, icount=0, cpu=MODELLED_CPU,
              quick={"dmalab_exercise.mapcost_calls": 200}, expect=orders.dma_api,
              matrix=matrix)
STUDY.counts = [MAP_INVS, MAP_BOUNCES]
