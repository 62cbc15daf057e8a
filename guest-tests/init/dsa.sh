# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# dmalab.scenario=dsa: Intel DSA (dmalab-dsa) under Linux's idxd, configured with
# accel-config and tested with dmatest, or with dmalab.dsa_run=exercise by the
# exerciser, dmalab_exercise.ko (sourced by /init, guest-tests/init.sh, from
# /lib/dmalab/).  The image is dsa_image.py's: accel-config (Debian's) on top of the
# ioatdma_patched image, which carries dmatest.ko.
#
# idxd binds the PCI function and puts dsa0 on the dsa bus, unconfigured.  Only a
# kernel, dedicated work queue works without an IOMMU and PASID (user WQs need SVA,
# shared ones ENQCMDS): group 0 gets engine0.0 and wq0.0 (dedicated, kernel, 16
# entries, named and, for 6.12, bound by driver_name to the dmaengine driver).
# Enabling the device sends Enable Device; enabling the WQ Enable WQ and registers a
# dmaengine channel (dmaNchanM).  dmatest runs memcpy on every channel of the device
# for each buffer size of DSA_DMATEST (SIZE:ITERATIONS words, each size its own
# number of iterations, so that the summary lines say which run they are), then the
# WQ is disabled (Drain WQ, Reset WQ) and the device (Disable Device).  With
# dmalab.dsa_run=exercise the exerciser runs on the channel instead, in the mode its
# dmalab_exercise.mode= word gives (memcpy, offload, ...); with dmalab.dsa_run=dmatest-ioat
# dmatest runs each size on ioatdma's channels first, then on the DSA channel, each run
# alone, and prints each channel's summary as a "DMALAB: dmatest dev=ioat|dsa ..." line.
#
# Lines for the judge: "DMALAB: idxd bound BDF vendor=... device=...", "DMALAB: dsa
# channels=N (names)", "DMALAB: dsa dmatest buf=SIZE iterations=N channels=...",
# dmatest's own "dmatest: dmaXchanY-copy0: summary N tests, 0 failures ...", "DMALAB:
# irq COUNT ... idxd-portal" lines, "DMALAB: dsa wq0.0 state=disabled" and "DMALAB:
# dsa dsa0 state=disabled", "DMALAB: dsa end"; "DMALAB: error: ..." on any failure.

DSA_DEV=dsa0
DSA_WQ=wq0.0
DSA_ENGINE=engine0.0
DSA_WQ_SIZE=16
DSA_DMATEST="16384:100 1048576:20 64:50"
DSA_SYS=/sys/bus/dsa/devices

# accel-config with its arguments; its output goes to the log line by line
accel() {
	out=$(accel-config "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | while IFS= read -r l; do
		[ -n "$l" ] && line "accel-config: $l"
	done
	say "accel-config $* rc=$rc"
	return $rc
}

# The PCI function idxd drives (8086:0b25), first one
dsa_bdf() {
	for d in /sys/bus/pci/devices/*; do
		[ -e "$d/vendor" ] || continue
		[ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x8086:0x0b25 ] && {
			echo "${d##*/}"
			return 0
		}
	done
	return 1
}

# DSA_DEV's attributes (those the kernel has) on one line
dsa_attrs() {
	s=""
	for a in version state configurable max_groups max_engines max_work_queues \
		max_work_queues_size max_transfer_size max_batch_size gen_cap op_cap \
		pasid_enabled cmd_status; do
		[ -r "$DSA_SYS/$DSA_DEV/$a" ] && s="$s $a=$(tr -d ' \n' < "$DSA_SYS/$DSA_DEV/$a")"
	done
	say "dsa $DSA_DEV${s}"
}

# What is known when something failed: the sysfs state and accel-config's view
dsa_diagnose() {
	dsa_attrs
	for a in state mode type name driver_name size group_id clients; do
		[ -r "$DSA_SYS/$DSA_WQ/$a" ] && say "dsa $DSA_WQ $a=$(cat "$DSA_SYS/$DSA_WQ/$a")"
	done
	accel list -i
}

# The dmaengine channels of PCI function $1 (their device link names it)
dsa_channels() {
	for c in /sys/class/dma/*; do
		[ -e "$c/device" ] || continue
		[ "$(basename "$(readlink -f "$c/device")")" = "$1" ] && printf '%s ' "${c##*/}"
	done
}

# The idxd lines of /proc/interrupts, as report_irqs prints ioat's ("DMALAB: irq
# <count over all CPUs> <rest of the line>"): the WQ's vector is freed with the WQ,
# so they are read while it is enabled
dsa_irqs() {
	awk '/idxd/ {
		n = 0
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++)
			n += $i
		s = ""
		for (; i <= NF; i++)
			s = s " " $i
		print "DMALAB: irq " n s
	}' /proc/interrupts | while IFS= read -r l; do line "$l"; done
}

# The dmaengine channels of the PCI functions ioatdma drives
ioat_channels() {
	for c in /sys/class/dma/*; do
		[ -e "$c/device/driver" ] || continue
		[ "$(basename "$(readlink -f "$c/device/driver")")" = ioatdma ] && printf '%s ' "${c##*/}"
	done
}

# dmatest's summary of channel $2's last run as a figure line of device $1: "DMALAB: dmatest
# dev=NAME chan=CHANNEL buf=SIZE tests=N failures=N iops=X kb_per_s=N" (its copy thread's
# "summary N tests, N failures X iops N KB/s" line, read back from the kernel's log), which
# the runner tabulates as bench-dmatest rows
dmatest_bench() {
	s=$(dmesg | sed -n "s/^.*dmatest: $2-copy0: summary \([0-9]*\) tests, \([0-9]*\) failures \([0-9.]*\) iops \([0-9]*\) KB\/s.*/\1 \2 \3 \4/p" | tail -n 1)
	# shellcheck disable=SC2086  # the four figures
	[ -n "$s" ] && set -- "$1" "$2" $s &&
		say "dmatest dev=$1 chan=$2 buf=$size tests=$3 failures=$4 iops=$5 kb_per_s=$6"
}

# How many summary lines dmatest printed so far for the channels $1 (names)
dmatest_summaries() {
	n=0
	for c in $1; do
		n=$((n + $(dmesg | grep -c "dmatest: $c-copy[0-9]*: summary ")))
	done
	echo $n
}

# One dmatest run of $size bytes and $iters iterations (dsa_dmatest's) on the channels $2
# (names) of device $1; with $3 (bench) its summaries as bench lines too (dmatest_bench)
dmatest_group() {
	# the parameters are taken when a channel is added
	if ! { echo "$size" > "$p"/test_buf_size && echo "$iters" > "$p"/iterations; }; then
		say "error: dmatest refused buf=$size iterations=$iters"
		return 1
	fi
	for c in $2; do
		echo "$c" > "$p"/channel || { say "error: dmatest refused channel $c"; return 1; }
	done
	say "dsa dmatest buf=$size iterations=$iters channels=$(echo "$2" | tr ' ' ,)"
	want=$(($(dmatest_summaries "$2") + $(echo "$2" | wc -w)))
	echo 1 > "$p"/run || { say "error: dmatest did not start"; return 1; }
	# dmatest's wait returns at once while a thread it woke has not run yet (its
	# "pending" state): with two vCPUs on the modelled clock it had not, and the next
	# run's channel joined the running one.  Sleep first, and wait until every channel
	# printed its summary
	tries=100
	while sleep 0.1 && cat "$p"/wait > /dev/null &&
		[ "$(dmatest_summaries "$2")" -lt "$want" ]; do
		tries=$((tries - 1))
		[ $tries -gt 0 ] || { say "error: dmatest printed no summary for $2"; return 1; }
	done
	if [ -n "$3" ]; then
		for c in $2; do dmatest_bench "$1" "$c"; done
	fi
	return 0
}

# dmatest, one run per SIZE:ITERATIONS word of DSA_DMATEST on each device in turn: the
# arguments are pairs of a device's name and its channels (names, space separated), e.g.
# "dsa 'dma0chan0'"; each run's threads run alone.  With more than one device each run's
# summaries are bench lines too.
dsa_dmatest() {
	ko=/lib/modules/$KVER/extra/dmatest.ko
	[ -f "$ko" ] || { say "error: no dmatest.ko in the image"; return 1; }
	# shellcheck disable=SC2046  # one word per parameter
	insmod "$ko" $(mod_params dmatest) || { say "error: insmod dmatest failed"; return 1; }
	p=/sys/module/dmatest/parameters
	echo 0 > $p/dmatest		# memcpy
	bench=""
	[ $# -gt 2 ] && bench=1
	for run in $DSA_DMATEST; do
		size=${run%:*} iters=${run#*:}
		dev=""
		for a in "$@"; do
			if [ -z "$dev" ]; then
				dev=$a
				continue
			fi
			dmatest_group "$dev" "$a" $bench || return 1
			dev=""
		done
		say "dsa dmatest end buf=$size"
	done
	# release the channels (the WQ cannot be disabled while a client holds one)
	echo 0 > $p/run
	rmmod dmatest || say "error: rmmod dmatest failed"
	return 0
}

# Does unbinding DSA_DEV from idxd (accel-config disable-device) crash this kernel?  Linux
# 6.12's stable releases (Debian's 6.12.95, and 6.12.118) took upstream's removal of the
# GENCFG.evl_en check from idxd_device_evl_free() without the "if (!evl) return" that
# came with it upstream: idxd_device_drv_remove() calls it after Disable Device and Reset
# Device, and on a device without an event log (GENCAP bits 14:13 = 0: every DSA 1.0, real
# or modelled) idxd->evl is NULL and mutex_lock(&evl->lock) oopses; the device lock left
# held then hangs the power-off.  There the device is left enabled (idxd's shutdown sends
# Disable Device at the power-off).
dsa_evl_free_bug() {
	case "$KVER" in 6.12.*) ;; *) return 1 ;; esac
	cap=$(cat "$DSA_SYS/$DSA_DEV/gen_cap" 2>/dev/null) || return 1
	[ $(((cap >> 13) & 3)) -eq 0 ]
}

# idxd's own account (its dev_dbg lines, on with idxd.dyndbg=+p, are in the kernel's
# log but below the console's level): every command it sent and the status it read
dsa_debug() {
	dmesg -r | grep '^<7>.*idxd' | while IFS= read -r l; do line "idxd-debug: ${l#<7>}"; done
}

dsa_scenario() {
	dsa_run
	rc=$?
	# an error line (from here or dmatest's failures) asks for idxd's debug lines
	if [ $rc -ne 0 ] || dmesg | grep -q "DMALAB: error\|dmatest: .*result #"; then
		dsa_debug
	fi
	return $rc
}

dsa_run() {
	bdf=$(dsa_bdf) || { say "error: no 8086:0b25 PCI function"; list_pci; return 1; }
	load_mod idxd || return 1
	say "accel-config version $(accel-config --version 2>&1)"
	tries=$((BIND_WAIT * 10))
	while [ ! -e "$DSA_SYS/$DSA_DEV" ] && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	d=/sys/bus/pci/drivers/idxd/$bdf
	if [ -e "$d" ]; then
		say "idxd bound $bdf vendor=$(cat "$d/vendor") device=$(cat "$d/device")"
	else
		say "error: idxd did not bind $bdf"
		list_pci
		return 1
	fi
	[ -e "$DSA_SYS/$DSA_DEV" ] || { say "error: no $DSA_DEV on the dsa bus"; return 1; }
	dsa_attrs

	# group 0: one engine and one dedicated kernel WQ for dmaengine.  --driver-name
	# writes the WQ's driver_name, which 6.12 requires to be "dmaengine" for the
	# dmaengine driver to take the WQ (6.1 has no such attribute: accel-config skips
	# it when the file is missing)
	if ! { accel config-engine "$DSA_DEV/$DSA_ENGINE" --group-id=0 &&
		accel config-wq "$DSA_DEV/$DSA_WQ" --group-id=0 --mode=dedicated \
			--type=kernel --name=dmaengine --driver-name=dmaengine \
			--wq-size=$DSA_WQ_SIZE --priority=10 &&
		accel enable-device "$DSA_DEV" &&
		accel enable-wq "$DSA_DEV/$DSA_WQ"; }; then
		say "error: accel-config could not configure and enable $DSA_DEV"
		dsa_diagnose
		return 1
	fi
	say "dsa $DSA_WQ state=$(cat "$DSA_SYS/$DSA_WQ/state")"
	accel list

	chans=$(dsa_channels "$bdf")
	chans=${chans% }
	n=0
	for c in $chans; do n=$((n + 1)); done
	say "dsa channels=$n ($chans)"
	if [ "$n" -eq 0 ]; then
		say "error: no dmaengine channel on $bdf"
		dsa_diagnose
	elif [ "$DSA_RUN" = exercise ]; then
		exercise_run
	elif [ "$DSA_RUN" = dmatest-ioat ]; then
		ioat=$(ioat_channels)
		ioat=${ioat% }
		say "dsa dmatest beside ioat channels ($ioat)"
		if [ -z "$ioat" ]; then
			say "error: no ioatdma channel to run dmatest on"
		else
			dsa_dmatest ioat "$ioat" dsa "$chans"
		fi
	else
		dsa_dmatest dsa "$chans"
	fi
	dsa_irqs

	# Drain WQ and Reset WQ (the dmaengine driver's remove), then Disable Device
	accel disable-wq "$DSA_DEV/$DSA_WQ" || say "error: accel-config disable-wq failed"
	say "dsa $DSA_WQ state=$(cat "$DSA_SYS/$DSA_WQ/state")"
	if dsa_evl_free_bug; then
		say "dsa $DSA_DEV kept enabled: Linux $KVER oopses in idxd_device_evl_free() on a device without an event log"
	else
		accel disable-device "$DSA_DEV" || say "error: accel-config disable-device failed"
		say "dsa $DSA_DEV state=$(cat "$DSA_SYS/$DSA_DEV/state")"
	fi
	say "dsa end"
}
