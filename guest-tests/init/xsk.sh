# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# The AF_XDP workload: dmalab-xsk's receivers, their windows and counts (sourced by /init, guest-tests/init.sh, from /lib/dmalab/).

# dmalab.xsk=RATE[,RATE..]: the xdp study's workload (dmalab measure xdp), with the
# image of guest-tests/net_image.py (dmalab-xsk, libxdp).  The pair of igb on one
# QEMU hub: pktgen sends from the first to the second's MAC address, as in
# nic_pktgen, and the second receives each frame in turn with two receivers: the
# kernel's stack alone ("stack": no XDP program; IP drops the frames, which are
# addressed to no one here), then an AF_XDP socket on its queue 0 ("xsk":
# dmalab-xsk, libxdp's program in driver mode redirecting every frame to the
# socket, bound in copy mode, which hands each frame straight back to the fill
# ring).  Per receiver and rate (packets/s; 0: back to back) an idle window as
# long as the rate's windows (nic_pktgen's), then per size of dmalab.xsk_sizes
# (default 64) a window of dmalab.xsk_count packets (default 2000), its busy time
# read with cpu_time (the exerciser's cpu_us) around pktgen's run, and after a
# 100 ms pause for the last frames, both NICs' interrupts (nic_irqs), what the
# receiving NIC counted and the socket took (dmalab-xsk's counts, read on SIGUSR1
# before and after).  With dmalab.swiotlb_stats=1 a counting pass follows each
# window (the count costs instructions: kprobes): SWIOTLB_COUNT packets with the
# exerciser's kprobe on swiotlb_bounce (the copies swiotlb made, as in
# swiotlb_nic_count) and tracefs kprobe events on the DMA API's sync-for-CPU,
# sync-for-device, map and unmap functions (their hits in kprobe_profile: the
# calls made, whether they bounced or not), enabled around the pass only.  One
# "DMALAB: xsk" line per receiver, rate and size; the socket's fields and the
# counting pass's are -1 where there is none.
XSK_OUT=/tmp/dmalab-xsk.out
TRACEFS=/sys/kernel/tracing
nic_xsk() {
	command -v dmalab-xsk > /dev/null ||
		{ say "error: no dmalab-xsk in the image (guest-tests/net_image.py builds the one with it)"; return 1; }
	# the exerciser keeps the clock (cpu_us) and counts swiotlb's copies; the
	# xdp study boots no DMA engine, and the memcpy scenario, which loads it
	# otherwise, does not run (its KTAP reports no channel, which is not judged
	# outside that scenario)
	if [ ! -d /sys/module/dmalab_exercise ]; then
		# shellcheck disable=SC2046  # one word per parameter
		insmod "/lib/modules/$KVER/extra/dmalab_exercise.ko" $(mod_params dmalab_exercise) ||
			{ say "error: insmod dmalab_exercise failed"; return 1; }
	fi
	[ -r $CPU_US ] || { say "error: no cpu_us from the exerciser (dmalab_exercise.mode=clock)"; return 1; }
	NCPUS=$(grep -c '^cpu[0-9]' /proc/stat)
	load_mod pktgen && load_mod igb || return 1
	# libxdp pins its dispatcher in the BPF file system
	grep -q ' /sys/fs/bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
	ifaces=$(nic_two_ifaces igb) || return 1
	# shellcheck disable=SC2086  # one word per interface
	set -- $ifaces
	tx=$1 rx=$2
	dom=$(iommu_domain "$(readlink -f "/sys/class/net/$rx/device")")
	for i in $tx $rx; do
		ip link set "$i" up || { say "error: no $i"; return 1; }
	done
	xsk_carrier "$tx" "$rx" || return 1
	read -r mac < "/sys/class/net/$rx/address"
	pg=/proc/net/pktgen
	echo "rem_device_all" > $pg/kpktgend_0
	echo "add_device $tx" > $pg/kpktgend_0
	for c in "clone_skb 0" "dst 10.0.0.2" "dst_mac $mac"; do
		echo "$c" > "$pg/$tx"
	done
	XSK_PROBES=""
	if [ -n "$SWIOTLB_STATS" ]; then
		echo 0 > /sys/module/dmalab_exercise/parameters/bounce_probe ||
			{ say "error: no counter of swiotlb's copies (bounce_probe)"; return 1; }
		xsk_probes || say "error: no kprobe events for the DMA API's calls"
	fi
	XSK_PID=""
	for recv in stack xsk; do
		if [ $recv = xsk ]; then
			xsk_start || { xsk_stop; return 1; }
		fi
		for rate in $XSK; do
			xsk_rate || { xsk_stop; return 1; }
		done
		if [ $recv = xsk ]; then
			xsk_stop || return 1
		fi
	done
	return 0
}

# Until interfaces $@ all have a carrier (up to 10 s), else an error line and 1.
xsk_carrier() {
	tries=100
	for i in "$@"; do
		while [ "$(cat "/sys/class/net/$i/carrier" 2>/dev/null)" != 1 ] && [ "$tries" -gt 0 ]; do
			sleep 0.1
			tries=$((tries - 1))
		done
	done
	[ "$tries" -gt 0 ] || { say "error: no link on $*"; return 1; }
}

# The kprobe events of the counting passes, in group dmalab, created disabled:
# the DMA API's calls per packet, by the first function of each list the kernel
# has (6.1 exports dma_sync_single_for_cpu and _for_device; 6.12 inlines them
# around __dma_sync_single_for_cpu and _for_device, which run only where a sync
# is needed).  XSK_PROBES=1 once all four are there.
xsk_probes() {
	grep -q " $TRACEFS " /proc/mounts || mount -t tracefs tracefs $TRACEFS || return 1
	echo 0 > $TRACEFS/tracing_on
	for p in sync_cpu:dma_sync_single_for_cpu,__dma_sync_single_for_cpu \
		 sync_dev:dma_sync_single_for_device,__dma_sync_single_for_device \
		 map:dma_map_page_attrs unmap:dma_unmap_page_attrs; do
		name=xsk_${p%%:*} made=""
		for sym in $(echo "${p#*:}" | tr , ' '); do
			if echo "p:dmalab/$name $sym" >> $TRACEFS/kprobe_events 2>/dev/null; then
				made=$sym
				break
			fi
		done
		[ -n "$made" ] || return 1
		say "xsk-probe $name on $made"
	done
	XSK_PROBES=1
}

# The counting pass's counts so far: the exerciser's swiotlb copies (TO_CALLS
# TO_BYTES FROM_CALLS FROM_BYTES) and the probes' hits (sync_cpu sync_dev map
# unmap; -1 each without them).
xsk_tally() {
	read -r tn tb fn fb < /sys/module/dmalab_exercise/parameters/bounce_stats
	if [ -n "$XSK_PROBES" ]; then
		hits=$(awk '{ v[$1] = $2 } END { print v["xsk_sync_cpu"] + 0, v["xsk_sync_dev"] + 0, v["xsk_map"] + 0, v["xsk_unmap"] + 0 }' $TRACEFS/kprobe_profile)
	else
		hits="-1 -1 -1 -1"
	fi
	echo "$tn $tb $fn $fb $hits"
}

# dmalab-xsk on $rx, until it is bound and igb, which resets to attach an XDP
# program, has its link again.
xsk_start() {
	rm -f $XSK_OUT
	dmalab-xsk "$rx" > $XSK_OUT 2> /tmp/dmalab-xsk.err &
	XSK_PID=$!
	tries=100
	while ! grep -q '^xsk ready' $XSK_OUT 2>/dev/null && [ "$tries" -gt 0 ] && [ -d /proc/$XSK_PID ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	if ! grep -q '^xsk ready' $XSK_OUT 2>/dev/null; then
		say "error: dmalab-xsk did not bind a socket on $rx"
		while read -r l; do say "dmalab-xsk: $l"; done < /tmp/dmalab-xsk.err
		return 1
	fi
	say "xsk-socket $(head -n 1 $XSK_OUT)"
	xsk_carrier "$rx" || return 1
	sleep 0.2
}

# dmalab-xsk's counts so far (it prints a line on SIGUSR1): SOCK_RX, SOCK_BYTES,
# SOCK_POLLS, SOCK_BATCHES, SOCK_DROPPED, SOCK_INVALID, SOCK_FULL, SOCK_EMPTY.
xsk_counts() {
	n0=$(wc -l < $XSK_OUT)
	kill -USR1 "$XSK_PID" || return 1
	tries=100
	while [ "$(wc -l < $XSK_OUT)" -le "$n0" ] && [ "$tries" -gt 0 ]; do
		sleep 0.02
		tries=$((tries - 1))
	done
	SOCK_RX=""
	for kv in $(tail -n 1 $XSK_OUT); do
		case "$kv" in
		rx=*)		SOCK_RX=${kv#*=} ;;
		bytes=*)	SOCK_BYTES=${kv#*=} ;;
		polls=*)	SOCK_POLLS=${kv#*=} ;;
		batches=*)	SOCK_BATCHES=${kv#*=} ;;
		rx_dropped=*)	SOCK_DROPPED=${kv#*=} ;;
		rx_invalid=*)	SOCK_INVALID=${kv#*=} ;;
		rx_ring_full=*)	SOCK_FULL=${kv#*=} ;;
		fill_empty=*)	SOCK_EMPTY=${kv#*=} ;;
		esac
	done
	[ -n "$SOCK_RX" ] || { say "error: no counts from dmalab-xsk"; return 1; }
}

# Ends dmalab-xsk (if it runs) and reports its last counts.
xsk_stop() {
	[ -n "$XSK_PID" ] || return 0
	kill -INT "$XSK_PID"
	wait "$XSK_PID"
	rc=$?
	XSK_PID=""
	say "xsk-socket end rc=$rc $(tail -n 1 $XSK_OUT | sed 's/^xsk //')"
	[ $rc = 0 ] || { while read -r l; do say "dmalab-xsk: $l"; done < /tmp/dmalab-xsk.err; return 1; }
}

# One rate of receiver $recv: the idle window, then each size.
xsk_rate() {
	# pktgen spins out gaps under 100 us (nic_pair says why such rates are not offered)
	if [ "$rate" -gt 0 ] && [ $((1000000000 / rate)) -lt 150000 ]; then
		echo "# xsk: rate $rate/s skipped: pktgen would spin between packets"
		return 0
	fi
	delay=0 ms=1000
	if [ "$rate" -gt 0 ]; then
		delay=$((1000000000 / rate)) ms=$((XSK_COUNT * 1000 / rate))
	fi
	echo "delay $delay" > "$pg/$tx"
	cpu_time; b0=$BUSY; t0=$NOW
	sleep "$(secs "$ms")"
	cpu_time; idle_busy=$((BUSY - b0)); idle_us=$((NOW - t0))
	for size in $XSK_SIZES; do
		xsk_window || return 1
	done
}

# One window: pktgen sends $XSK_COUNT packets of $size at $rate to receiver $recv.
xsk_window() {
	echo "pkt_size $size" > "$pg/$tx"
	echo "count $XSK_COUNT" > "$pg/$tx"
	read -r rx0 < "/sys/class/net/$rx/statistics/rx_packets"
	lost0=$(nic_lost "$tx" "$rx")
	irq0=$(nic_irqs "$tx" "$rx")
	sock0="-1 -1 -1 -1 -1 -1 -1 -1"
	if [ $recv = xsk ]; then
		xsk_counts || return 1
		sock0="$SOCK_RX $SOCK_BYTES $SOCK_POLLS $SOCK_BATCHES $SOCK_DROPPED $SOCK_INVALID $SOCK_FULL $SOCK_EMPTY"
	fi
	cpu_time; b0=$BUSY; t0=$NOW
	echo start > $pg/pgctrl
	cpu_time; busy=$((BUSY - b0)); wall=$((NOW - t0))
	# the last frames may still be on their way in as pktgen returns
	sleep 0.1
	pktgen_counts || return 1
	sock="-1 -1 -1 -1 -1 -1 -1 -1"
	if [ $recv = xsk ]; then
		xsk_counts || return 1
		# shellcheck disable=SC2086  # eight numbers
		set -- $sock0
		sock="$((SOCK_RX - $1)) $((SOCK_BYTES - $2)) $((SOCK_POLLS - $3)) $((SOCK_BATCHES - $4)) $((SOCK_DROPPED - $5)) $((SOCK_INVALID - $6)) $((SOCK_FULL - $7)) $((SOCK_EMPTY - $8))"
	fi
	counted="-1 -1 -1 -1 -1 -1 -1 -1 -1 -1"
	if [ -n "$SWIOTLB_STATS" ]; then
		xsk_count_pass || return 1
	fi
	base=$((idle_us > 0 ? idle_busy * wall / idle_us : 0))
	net=$((busy > base ? busy - base : 0))
	per=$((busy * 1000 / sent))
	# shellcheck disable=SC2086  # eight numbers, then ten
	set -- $sock $counted
	say "xsk receiver=$recv size=$size rate=$rate sent=$sent received=$got lost=$lost per_s=${pps:-0} wall_us=$wall busy_us=$busy idle_busy_us=$base busy_ns_per_packet=$per net_ns_per_packet=$((net * 1000 / sent)) util_ppm=$((per * ${pps:-0} / 1000 / NCPUS)) irqs=$irqs sock_rx=$1 sock_bytes=$2 sock_polls=$3 sock_batches=$4 sock_dropped=$5 sock_invalid=$6 sock_full=$7 sock_empty=$8 count_sent=$9 count_received=${10} to_dev_copies=${11} to_dev_bytes=${12} from_dev_copies=${13} from_dev_bytes=${14} syncs_cpu=${15} syncs_dev=${16} maps=${17} unmaps=${18} domain=$dom clock_us=$CLOCK_US cpus=$NCPUS"
}

# The counting pass after a window: COUNTED, "SENT RECEIVED" and what
# xsk_tally counted meanwhile.
xsk_count_pass() {
	echo "count $SWIOTLB_COUNT" > "$pg/$tx"
	read -r c_rx0 < "/sys/class/net/$rx/statistics/rx_packets"
	echo 1 > /sys/module/dmalab_exercise/parameters/bounce_probe || return 1
	[ -n "$XSK_PROBES" ] && echo 1 > $TRACEFS/events/dmalab/enable
	c0=$(xsk_tally)
	echo start > $pg/pgctrl
	sleep 0.1
	c1=$(xsk_tally)
	[ -n "$XSK_PROBES" ] && echo 0 > $TRACEFS/events/dmalab/enable
	echo 0 > /sys/module/dmalab_exercise/parameters/bounce_probe
	read -r c_rx < "/sys/class/net/$rx/statistics/rx_packets"
	c_sent=$(awk '/pkts-sofar/ { print $2; exit }' "$pg/$tx")
	# shellcheck disable=SC2086  # eight numbers each
	set -- $c0 $c1
	counted="$c_sent $((c_rx - c_rx0)) $(($9 - $1)) $((${10} - $2)) $((${11} - $3)) $((${12} - $4))"
	if [ -n "$XSK_PROBES" ]; then
		counted="$counted $((${13} - $5)) $((${14} - $6)) $((${15} - $7)) $((${16} - $8))"
	else
		counted="$counted -1 -1 -1 -1"
	fi
}
