#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guest image for DPDK's dmadev self-tests: a base initramfs with a second cpio
archive after it that holds DPDK's unit-test application, dpdk-test (Debian bookworm's
dpdk-dev 22.11, which ships it; its dmadev_autotest tests every DMA device DPDK found),
the PMD that drives DSA from user space (librte-dma-idxd23's librte_dma_idxd, in DPDK's
plugin folder, which EAL loads at start), coreutils' stdbuf, the shared libraries they
need and the dynamic loader, all from Debian's packages (imagelib/userspace.py:
apt-get download into <cache>/guest-dl/userspace, dpkg-deb -x, nothing installed on the
host).

dpdk-test is linked against most of DPDK's libraries and a few PMDs, whose packages are
all listed here, and through libpcap against libdbus and libsystemd.  The plugin folder
(/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0) holds only the PMDs dpdk-test links and the
idxd one: no other DMA driver, so that DPDK finds no DMA device but dmalab-dsa's queues
(dma_skeleton, which dmadev_autotest's API part creates, is left out: its instance would
run the same copy tests on the CPU).

The base is image.py's initramfs (vfio, vfio_pci, vfio_iommu_type1 are in every image).
init.sh's scenario dsa-dpdk (guest-tests/init/dpdk.sh) hands dmalab-dsa to vfio-pci,
reserves hugepages and runs dpdk-test's dmadev_autotest on it.

What it writes, and when it is rebuilt, are as for dsa_image.py
(imagelib/userspace.py, programs_layer).
"""

import os
import sys

sys.dont_write_bytecode = True     # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imagelib import userspace  # noqa: E402

STAMP_VERSION = "1"
INFO = "dpdk-image-info.json"
BASE_HELP = "the initramfs to add to (image.py's)"
# The packages whose versions the log names
SHOWN = ("dpdk-dev", "librte-dma-idxd23")

# DPDK's libraries dpdk-test is linked against (librte_NAME.so.23 is in librte-NAME23,
# or librte-NAME-23 where NAME ends in a digit), in its NEEDED order
DPDK_LIBS = ("kvargs", "telemetry", "eal", "ring", "rcu", "mempool", "mbuf", "net",
             "meter", "ethdev", "pci", "cmdline", "metrics", "hash", "timer", "acl",
             "bbdev", "bitratestats", "bpf", "cfgfile", "compressdev", "cryptodev",
             "distributor", "efd", "eventdev", "gpudev", "gro", "gso", "ip-frag",
             "jobstats", "latencystats", "lpm", "member", "pcapng", "power", "rawdev",
             "regexdev", "dmadev", "rib", "reorder", "sched", "security", "stack", "vhost",
             "ipsec", "fib", "port", "pdump", "table", "pipeline", "graph", "node",
             "bus-pci", "bus-vdev", "mempool-ring", "mempool-stack", "event-skeleton",
             "net-bond", "net-ring", "net-null", "crypto-scheduler")
# dpdk-test (dpdk-dev), the idxd PMD, stdbuf (coreutils), DPDK's libraries and every other
# library package their NEEDED entries lead to
PACKAGES = (("dpdk-dev", "librte-dma-idxd23", "coreutils") +
            tuple("librte-%s23" % n for n in DPDK_LIBS) +
            ("libc6", "libnuma1", "libfdt1", "zlib1g", "libbsd0", "libmd0", "libjansson4",
             "libelf1", "libpcap0.8", "libdbus-1-3", "libsystemd0", "liblzma5", "libzstd1",
             "liblz4-1", "libcap2", "libgcrypt20", "libgpg-error0"))
# The folder under <cache>/guest-dl/userspace they are unpacked into (NAME-root)
ROOT_NAME = "dpdk"
# DPDK's plugin folder (EAL's RTE_EAL_PMD_PATH in Debian's build): EAL loads every
# librte_*.so.23 in it at start
PMD_DIR = "usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"
# What goes in: path in the unpacked packages -> path in the guest.  stdbuf and the
# library it preloads make dpdk-test's stdout line-buffered into a pipe: its test
# results are printf()s to stdout, DPDK's log goes to stderr unbuffered, and init's
# reader keeps them in the order they were written.
PROGRAMS = {"usr/bin/dpdk-test": "usr/bin/dpdk-test",
            PMD_DIR + "/librte_dma_idxd.so.23": PMD_DIR + "/librte_dma_idxd.so.23",
            "usr/bin/stdbuf": "usr/bin/stdbuf",
            "usr/libexec/coreutils/libstdbuf.so": "usr/libexec/coreutils/libstdbuf.so"}


def main(argv=None):
    return userspace.programs_layer(sys.modules[__name__], argv)


if __name__ == "__main__":
    sys.exit(main())
