# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# dmalab.scenario=dsa-dpdk: DPDK's own dmadev self-tests on dmalab-dsa (sourced by /init,
# guest-tests/init.sh, from /lib/dmalab/; after dsa.sh, whose dsa_bdf it uses).  The
# image is dpdk_image.py's: Debian's dpdk-test (dpdk-dev 22.11) and DPDK's idxd PMD.
#
# No kernel driver of the device's own: the 8086:0b25 function goes to vfio-pci
# (driver_override; vfio_pci needs disable_denylist=1 on the kernel command line, as
# the DSA IDs are on its denylist), 2 MiB hugepages are reserved and hugetlbfs mounted,
# and dpdk-test runs its dmadev_autotest: EAL maps the function's BARs through VFIO,
# DPDK's dma_idxd PCI driver configures the device itself through BAR 0 (groups,
# engines, WQs, Enable Device) with max_queues=1 (one WQ, one dmadev: every WQ would
# be a device of its own, each running the whole test), and the test's copies, fills,
# bursts and failing copies (from IOVA 0, with EAL in IOVA-as-VA mode) go to the WQ's
# portal in BAR 2 with MOVDIR64B from user mode; completions are polled.  dpdk-test
# runs bounded by DPDK_TIMEOUT seconds of guest time (dmalab.dpdk_timeout=N).
#
# Lines for the judge: "DMALAB: dpdk vfio-pci bound BDF (8086:0b25) iommu_group=N",
# "DMALAB: dpdk hugepages 2048kB=N", "DMALAB: dpdk-test start ARGS", then dpdk-test's
# output line by line as "dpdk-test: LINE" (a line its progress counters rewrite with
# carriage returns shows their last state), and "DMALAB: dpdk-test end rc=N";
# "DMALAB: error: ..." on any failure.

DPDK_HUGEPAGES=64
DPDK_TIMEOUT=120
DPDK_TESTS=dmadev_autotest
DPDK_HUGE_SYS=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

# The function to vfio-pci (from whichever driver holds it): its IOMMU group's number
dpdk_vfio_bind() {
	d=/sys/bus/pci/devices/$1
	echo vfio-pci > "$d/driver_override" || return 1
	if [ -e "$d/driver" ]; then
		echo "$1" > "$d/driver/unbind" || return 1
	fi
	echo "$1" > /sys/bus/pci/drivers_probe
	[ "$(basename "$(readlink "$d/driver")")" = vfio-pci ] || return 1
	basename "$(readlink "$d/iommu_group")"
}

dpdk_scenario() {
	for w in $(cat /proc/cmdline); do
		case "$w" in
		dmalab.dpdk_timeout=[1-9]*)	DPDK_TIMEOUT=${w#*=} ;;
		dmalab.dpdk_hugepages=[1-9]*)	DPDK_HUGEPAGES=${w#*=} ;;
		esac
	done
	bdf=$(dsa_bdf) || { say "error: no 8086:0b25 PCI function"; list_pci; return 1; }
	load_mod vfio_iommu_type1 && load_mod vfio_pci || return 1
	say "dpdk vfio_pci disable_denylist=$(cat /sys/module/vfio_pci/parameters/disable_denylist 2>/dev/null)"
	if ! group=$(dpdk_vfio_bind "$bdf"); then
		say "error: vfio-pci did not take $bdf"
		list_pci
		return 1
	fi
	say "dpdk vfio-pci bound $bdf ($(cut -c3- "/sys/bus/pci/devices/$bdf/vendor"):$(cut -c3- "/sys/bus/pci/devices/$bdf/device")) iommu_group=$group"

	# EAL loads its plugin folder only when no folder on its path is world-writable:
	# the initramfs's root is (the kernel makes it so)
	chmod o-w /
	mkdir -p /dev/hugepages /var/run
	mount -t hugetlbfs nodev /dev/hugepages || { say "error: cannot mount hugetlbfs"; return 1; }
	echo "$DPDK_HUGEPAGES" > $DPDK_HUGE_SYS
	got=$(cat $DPDK_HUGE_SYS)
	say "dpdk hugepages 2048kB=$got"
	[ "$got" -ge "$DPDK_HUGEPAGES" ] || { say "error: $got of $DPDK_HUGEPAGES hugepages"; return 1; }

	# EAL: one lcore, no runtime files (--in-memory), no telemetry socket, IOVA as VA
	# (the error tests need an IOVA nothing maps: 0), only this function, one WQ; the
	# idxd PMD's configuration steps at debug level
	set -- -l 0 --in-memory --no-telemetry --iova-mode=va -a "$bdf,max_queues=1" \
		--log-level=pmd.dma.idxd:debug -- $DPDK_TESTS
	say "dpdk-test start $* (timeout ${DPDK_TIMEOUT}s)"
	# Its results are printf()s to stdout, its log goes to stderr: stdbuf makes stdout
	# line-buffered, so the two stay in the order they were written.  A test's progress
	# counters rewrite one line with carriage returns, 640 times for the copy test: awk
	# keeps the last state (it reads in blocks; sh's read takes a byte per system call).
	# The lines reach the kernel's log a little after dpdk-test wrote them: a kernel
	# message (the DMAR faults of the error tests) can come before the line written
	# just before it.
	rm -f /tmp/dpdk-test.rc
	t0=$(cut -d' ' -f1 /proc/uptime)
	{
		timeout "$DPDK_TIMEOUT" stdbuf -oL dpdk-test "$@"
		echo $? > /tmp/dpdk-test.rc
	} 2>&1 | awk '{ sub(/\r$/, ""); sub(/.*\r/, ""); if (length($0)) print; fflush() }' |
	while IFS= read -r l; do
		line "dpdk-test: $l"
	done
	rc=$(cat /tmp/dpdk-test.rc 2>/dev/null || echo none)
	say "dpdk-test end rc=$rc"
	say "dpdk-test uptime start=$t0 end=$(cut -d' ' -f1 /proc/uptime)"
	case "$rc" in
	0) ;;
	143) say "error: dpdk-test did not end within ${DPDK_TIMEOUT}s" ;;
	*) say "error: dpdk-test failed (rc=$rc)" ;;
	esac
}
