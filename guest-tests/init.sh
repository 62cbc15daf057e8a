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

say() { echo "DMALAB: $*"; }

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
EX_PARAMS=""
for w in $(cat /proc/cmdline); do
	case "$w" in
	dmalab.scenario=*)	SCENARIO=${w#*=} ;;
	dmalab.bind_wait=*)	BIND_WAIT=${w#*=} ;;
	dmalab.disk=*)		DISK=${w#*=} ;;
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

# Is there a PCI function ioatdma could drive (Intel, class 0x0880xx)?
have_candidate() {
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/vendor" ] || continue
		[ "$(cat "$d/vendor")" = 0x8086 ] || continue
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

# Interrupt lines of ioatdma: "irq <count summed over CPUs> <rest of the line>".
report_irqs() {
	awk '/ioat/ {
		n = 0
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++)
			n += $i
		s = ""
		for (; i <= NF; i++)
			s = s " " $i
		print "DMALAB: irq " n s
	}' /proc/interrupts
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

case "$SCENARIO" in
boot|memcpy) ;;
*)
	say "error: unknown scenario '$SCENARIO' (known: boot memcpy)"
	finish
	;;
esac

load_mod ioatdma
if wait_bound; then
	report_bound
else
	report_bound
	list_pci
fi
report_channels

if [ "$SCENARIO" = memcpy ]; then
	EX_PARAMS="$EX_PARAMS $(mod_params dmalab_exercise)"
	EX_PARAMS=${EX_PARAMS% }
	say "exercise start params=${EX_PARAMS# }"
	# shellcheck disable=SC2086  # word splitting of the parameters is wanted
	insmod "/lib/modules/$KVER/extra/dmalab_exercise.ko" $EX_PARAMS
	say "exercise end rc=$? uptime=$(cut -d' ' -f1 /proc/uptime)"
	# mode=cow leaves its second half to a process that can fork.
	case " $EX_PARAMS " in
	*" mode=cow "*)
		/bin/dmalab-cow
		say "dmalab-cow end rc=$?"
		;;
	esac
fi
report_irqs

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
