# SPDX-License-Identifier: GPL-2.0-or-later
"""iommu-flush: the guest CPU a mapped copy through dmalab-ioat and a pktgen packet between
two e1000e cost at a fixed offered rate, without an IOMMU and behind dmalab-vtd and
intel-iommu, lazy and strict; measure.py's docstring and docs/measure.rst say more."""

import measure_checks as checks
from measure_tables import Table
from studies.common import Study


# The copy study's engine: every copy completes latency-ns after its data
# moved at `bandwidth` bytes/s, whatever the IOMMU does, so that in every
# configuration the waiting thread sleeps and is woken by the interrupt (with
# dmalab-ioat's defaults a copy without an IOMMU finishes inside the doorbell
# write, and its waiter never sleeps, while one behind dmalab-vtd waits for
# the modelled table walks: the configurations would differ by a sleep and
# wake-up rather than by what the IOMMU costs).  The figures are a chosen
# profile of the order of one I/OAT channel's, not a measured one.
COPY_ENGINE = "latency-ns=2000,bandwidth=4000000000"

# The flush study runs on the modelled clock unless told otherwise: on the
# host's, whether a copy has completed by the time its thread waits (so whether
# it sleeps) depends on how fast the host emulates the code in between, and in
# host-driven runs most copies did not sleep.  Its guest has one CPU: with two, the waiting thread and the
# completion interrupt land on the same CPU or on different ones from boot to
# boot, and the wake-up's cost (an IPI or none) moved its figures by up to 2x
# between identical modelled-time boots.
#
# Its NIC workload (init.sh's nic_pktgen): two e1000e on one QEMU hub, so the
# first one's transmissions are the second one's receptions with no host
# networking, both behind the IOMMU when there is one; pktgen sends 64- and
# 1500-byte packets at the same rate as the copies.
NIC = ["--qemu-arg=-netdev", "--qemu-arg=hubport,id=dlx-tx,hubid=0",
       "--qemu-arg=-netdev", "--qemu-arg=hubport,id=dlx-rx,hubid=0",
       "--device", "e1000e,netdev=dlx-tx,romfile=",
       "--device", "e1000e,netdev=dlx-rx,romfile=",
       "--append", "dmalab.pktgen=64,1500"]

STUDY = Study("copycost", False, COPY_ENGINE, [
    Table("bench-copy", ("size", "rate"), "net_ns_per_copy",
          ["per_s", "slept", "busy_ns_per_copy", "pacing_ns_per_slot"],
          "guest CPU ns per copy beyond the pacing's", check=checks.copy_row,
          bound=checks.copy_bound),
    Table("bench-nic", ("size", "rate"), "busy_ns_per_packet",
          ["per_s", "sent", "received", "net_ns_per_packet", "idle_busy_ms"],
          "guest CPU ns per packet sent and received", check=checks.nic_row,
          bound=checks.nic_bound)],
    smp=1, quick={"dmalab_exercise.copycost_ms": 300, "dmalab.pktgen_count": 300},
    icount=5, extra=NIC)
