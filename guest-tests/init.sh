#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# dmalab guest /init (busybox sh).  image.py copies this file into the
# initramfs.  It reads dmalab.* from the kernel command line, loads the
# I/OAT driver, reports what bound, runs the scenario, reports the ioat
# interrupts and powers off.  Lines meant for runner.py start with
# "DMALAB: ".  Modules get their MODNAME.param=value words from the kernel
# command line, as modprobe would pass them.

export PATH=/sbin:/bin:/usr/sbin:/usr/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

# Each line /init reports goes to the kernel's log as one record, so that the
# serial console prints it whole, never cut by a kernel message printed while
# it was being written (a tty write and a printk interleave character by
# character).  One open per line: /dev/kmsg's rate limit is per open file.
# Before devtmpfs is up, or if the write fails, the line goes to stdout.
line() { echo "$*" 2>/dev/null > /dev/kmsg || echo "$*"; }
say() { line "DMALAB: $*"; }

finish() {
	say "done"
	sync
	poweroff -f
	sleep 10
}

KVER=$(uname -r)
SCENARIO=memcpy
BIND_WAIT=10
DISK=""
PKTGEN=""
PKTGEN_RATE=1000
NICS=e1000e
PKTGEN_COUNT=2000
SWIOTLB_STATS=""
PROFILE=""
MD_COST_MIB=16
IPERF=""
IPERF_S=2
IPERF_WINDOW_MS=1000
XSK=""
XSK_SIZES=64
XSK_COUNT=2000
EX_PARAMS=""
for w in $(cat /proc/cmdline); do
	case "$w" in
	dmalab.scenario=*)	SCENARIO=${w#*=} ;;
	dmalab.dsa_run=*)	DSA_RUN=${w#*=} ;;
	dmalab.bind_wait=*)	BIND_WAIT=${w#*=} ;;
	dmalab.disk=*)		DISK=${w#*=} ;;
	dmalab.pktgen=*)	PKTGEN=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.pktgen_rate=*)	PKTGEN_RATE=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.nics=*)		NICS=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.pktgen_count=*)	PKTGEN_COUNT=${w#*=} ;;
	dmalab.swiotlb_stats=1)	SWIOTLB_STATS=1 ;;
	dmalab.profile=1)	PROFILE=1 ;;
	dmalab.md_cost_mib=[1-9]*)	MD_COST_MIB=${w#*=} ;;
	dmalab.iperf=*)		IPERF=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.iperf_s=[1-9]*)	IPERF_S=${w#*=} ;;
	dmalab.iperf_window_ms=[1-9]*)	IPERF_WINDOW_MS=${w#*=} ;;
	dmalab.xsk=*)		XSK=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.xsk_sizes=*)	XSK_SIZES=$(echo "${w#*=}" | tr , ' ') ;;
	dmalab.xsk_count=[1-9]*)	XSK_COUNT=${w#*=} ;;
	dmalab.iterations=*|dmalab.max_len=*|dmalab.seed=*|\
	dmalab.timeout_ms=*|dmalab.max_channels=*)
				EX_PARAMS="$EX_PARAMS ${w#dmalab.}" ;;
	esac
done

say "init kernel=$KVER scenario=$SCENARIO uptime=$(cut -d' ' -f1 /proc/uptime)"

# The parameters the kernel command line gives module $1 (MODNAME.param=value
# words; - and _ are the same in module names).
mod_params() {
	for w in $(cat /proc/cmdline); do
		m=${w%%=*}
		case "$m" in *.*) ;; *) continue ;; esac
		m=${m%%.*}
		case "$m" in *-*) m=$(echo "$m" | tr - _) ;; esac
		[ "$m" = "$1" ] && printf '%s ' "${w#*.}"
	done
}

# Load a module and its dependencies, in the order image.py computed.
load_mod() {
	list=/etc/dmalab/deps/$1
	if [ ! -f "$list" ]; then
		say "error: module $1 is not in the image"
		return 1
	fi
	while read -r ko; do
		name=$(basename "$ko" .ko | tr - _)
		[ -d "/sys/module/$name" ] && continue
		params=$(mod_params "$name")
		[ -n "$params" ] && say "insmod $name ${params% }"
		# shellcheck disable=SC2086  # one word per parameter
		if ! insmod "$ko" $params; then
			say "error: insmod $ko failed"
			return 1
		fi
	done < "$list"
	return 0
}

# List PCI functions so a missing or unbound device is easy to diagnose.
list_pci() {
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/vendor" ] || continue
		drv=none
		[ -e "$d/driver" ] && drv=$(basename "$(readlink "$d/driver")")
		say "pci ${d##*/} vendor=$(cat "$d/vendor") device=$(cat "$d/device") class=$(cat "$d/class") driver=$drv"
	done
}

# Is there a PCI function ioatdma could drive (Intel, class 0x0880xx; not DSA or IAA,
# which are idxd's)?
have_candidate() {
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/vendor" ] || continue
		[ "$(cat "$d/vendor")" = 0x8086 ] || continue
		case "$(cat "$d/device")" in 0x0b25|0x0cfe) continue ;; esac
		case "$(cat "$d/class")" in 0x0880*) return 0 ;; esac
	done
	return 1
}

# Wait (bounded) until ioatdma has bound at least one device.  PCI probing
# normally finishes inside insmod; only wait when there is a candidate.
wait_bound() {
	tries=$((BIND_WAIT * 10))
	have_candidate || tries=1
	while [ "$tries" -gt 0 ]; do
		for d in /sys/bus/pci/drivers/ioatdma/[0-9a-f]*:*; do
			[ -e "$d" ] && return 0
		done
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

report_bound() {
	n=0
	for d in /sys/bus/pci/drivers/ioatdma/[0-9a-f]*:*; do
		[ -e "$d" ] || continue
		bdf=${d##*/}
		say "ioatdma bound $bdf vendor=$(cat "$d/vendor") device=$(cat "$d/device")"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || say "ioatdma not bound"
}

# Interrupt lines of ioatdma: "irq <count summed over CPUs> <rest of the line>", then
# "ioat irq cpus <how many CPUs took at least one of them>".
report_irqs() {
	awk '/ioat/ {
		n = 0
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) {
			n += $i
			if ($i > 0)
				took[i] = 1
		}
		s = ""
		for (; i <= NF; i++)
			s = s " " $i
		print "DMALAB: irq " n s
	}
	END {
		c = 0
		for (i in took)
			c++
		print "DMALAB: ioat irq cpus " c
	}' /proc/interrupts | while IFS= read -r l; do line "$l"; done
}

report_channels() {
	names=""
	n=0
	for c in /sys/class/dma/*; do
		[ -e "$c" ] || continue
		names="$names ${c##*/}"
		n=$((n + 1))
	done
	say "dma channels=$n (${names# })"
}

# Centiseconds in a /proc/uptime figure ("12.05" -> 1205).
centis() {
	c=${1#*.}
	echo $((${1%.*} * 100 + ${c#0}))
}

# The time so far in us: NOW (wall) and BUSY (wall times the number of
# CPUs, less the idle time the kernel counted on all of them; under NO_HZ
# idle time is measured, while /proc/stat's busy fields are sampled at ticks
# and miss work done between them).  From the exerciser's cpu_us where it is
# loaded, in whole us, else from /proc/uptime in 10 ms units; CLOCK_US is the
# unit.  Builtins and one $(...) subshell only: measuring starts no program
# inside the window it measures.
CPU_US=/sys/module/dmalab_exercise/parameters/cpu_us
cpu_time() {
	if [ -r $CPU_US ] && read -r NOW BUSY < $CPU_US; then
		CLOCK_US=1
		return
	fi
	read -r up idle < /proc/uptime
	NOW=$(($(centis "$up") * 10000))
	BUSY=$((NOW * NCPUS - $(centis "$idle") * 10000))
	CLOCK_US=10000
}

# The workloads, each in a file of its own (guest-tests/init/).
. /lib/dmalab/nic.sh
. /lib/dmalab/xsk.sh
. /lib/dmalab/dsa.sh
. /lib/dmalab/dpdk.sh

case "$SCENARIO" in
boot|memcpy|raid5|raid6|mdcost|dmatest|vfio|net|movdir|dsa|dsa-vfio|dsa-dpdk) ;;
*)
	say "error: unknown scenario '$SCENARIO' (known: boot memcpy raid5 raid6 mdcost dmatest vfio net movdir dsa dsa-vfio dsa-dpdk)"
	finish
	;;
esac

. /lib/dmalab/md.sh

# dmalab.scenario=movdir: dmalab-movdir, MOVDIRI and MOVDIR64B from user mode.
# dmalab.scenario=vfio|dsa-vfio|net: helper program dmalab-$1 (helpers/) after
# the modules it needs: dmalab-vfio hands dmalab-ioat from ioatdma to vfio-pci and
# drives it through VFIO's type1 IOMMU driver; dmalab-dsa-vfio does the same with
# dmalab-dsa (idxd is not loaded: the function goes to vfio-pci unclaimed);
# dmalab-net echoes raw frames.
helper_scenario() {
	load_mod "$2" && load_mod "$3" || return 1
	"dmalab-$1"
	say "dmalab-$1 end rc=$?"
}

# The image of guest-tests/ioatdma_patched.py carries ioatdma built with
# dmalab's patches in place of Debian's, and names them here.
if [ -f /etc/dmalab/ioatdma-patches ]; then
	say "ioatdma patched: $(cat /etc/dmalab/ioatdma-patches)"
fi
load_mod ioatdma
if wait_bound; then
	report_bound
else
	report_bound
	list_pci
fi
report_channels

# The exerciser (dmalab_exercise.ko) with EX_PARAMS and the module's words of
# the kernel command line; after the channels it tests are up (dmalab.scenario=
# memcpy: ioatdma's, here; dsa with dmalab.dsa_run=exercise: idxd's, dsa.sh).
exercise_run() {
	EX_PARAMS="$EX_PARAMS $(mod_params dmalab_exercise)"
	EX_PARAMS=${EX_PARAMS% }
	# mode=copycost and mode=mapcost read the remapping unit's invalidation
	# queue (counts.c), mode=irfault its interrupt remapping table (irfault.c)
	VTD_ADDR=/sys/class/iommu/dmar0/intel-iommu/address
	case " $EX_PARAMS " in
	*" mode=copycost "* | *" mode=mapcost "* | *" mode=irfault "*)
		[ -r $VTD_ADDR ] && EX_PARAMS="$EX_PARAMS vtd_base=0x$(cat $VTD_ADDR)" ;;
	esac
	say "exercise start params=${EX_PARAMS# }"
	# shellcheck disable=SC2086  # word splitting of the parameters is wanted
	insmod "/lib/modules/$KVER/extra/dmalab_exercise.ko" $EX_PARAMS
	rc=$?
	say "exercise end rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
	# mode=cow leaves its second half to a process that can fork.
	case " $EX_PARAMS " in
	*" mode=cow "*)
		/bin/dmalab-cow
		say "dmalab-cow end rc=$?"
		;;
	esac
}
if [ "$SCENARIO" = memcpy ]; then
	exercise_run
fi
case "$SCENARIO" in
dmatest) dmatest_scenario ;;
dsa) dsa_scenario ;;
raid5) md_scenario raid5 3 ;;
raid6) md_scenario raid6 4 ;;
mdcost) mdcost_scenario ;;
vfio) helper_scenario vfio vfio_iommu_type1 vfio_pci ;;
dsa-vfio) helper_scenario dsa-vfio vfio_iommu_type1 vfio_pci ;;
dsa-dpdk) dpdk_scenario ;;
movdir)
	/bin/dmalab-movdir
	say "dmalab-movdir end rc=$?"
	;;
net) helper_scenario net virtio_pci virtio_net ;;
esac
report_irqs

if [ -n "$IPERF" ]; then
	nic_iperf || say "error: the iperf workload failed"
fi
if [ -n "$XSK" ]; then
	nic_xsk || say "error: the xsk workload failed"
fi
if [ -n "$PKTGEN" ]; then
	nic_pktgen || say "error: the pktgen workload failed"
	if [ -n "$SWIOTLB_STATS" ]; then
		swiotlb_nic_count || say "error: swiotlb's copies were not counted"
	fi
fi

# dmalab.profile=1 (the instruction profiler, docs/profile.rst): the functions
# of the kernel and its modules, from /proc/kallsyms, for guest-tests/profile.py
# to name the code the profile counted.  Debian's System.map is a placeholder
# (the real one is in the -dbg package), and the full list is too long for the
# console: it goes to the second serial port, which the runner writes to a file
# beside the log.  Printed after every window closed; closing the tty waits for
# its output to drain.
if [ -n "$PROFILE" ]; then
	if [ -c /dev/ttyS1 ] && grep ' [tTwW] ' /proc/kallsyms > /dev/ttyS1; then
		say "kallsyms written to ttyS1"
	else
		say "error: cannot write /proc/kallsyms to ttyS1"
	fi
fi

# dmalab.ksyms=1 (the race detector): our module's symbols, for the runner to
# name the function behind each reported PC.
if grep -qw dmalab.ksyms=1 /proc/cmdline; then
	grep '\[dmalab_exercise\]' /proc/kallsyms | while read -r addr type name rest; do
		say "ksym $addr $type $name"
	done
fi

# dmalab.disk=vda: read a virtio-blk disk whole (its DMA goes through the
# platform IOMMU when QEMU gives it iommu_platform=on) and print its checksum.
if [ -n "$DISK" ]; then
	load_mod virtio_pci && load_mod virtio_blk
	tries=100
	while [ ! -b "/dev/$DISK" ] && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	if [ -b "/dev/$DISK" ]; then
		sum=$(sha256sum "/dev/$DISK" | cut -d' ' -f1)
		bytes=$(cat "/sys/block/$DISK/size")
		say "disk $DISK sha256=$sum bytes=$((bytes * 512))"
	else
		say "error: /dev/$DISK did not appear"
		list_pci
	fi
fi

finish
