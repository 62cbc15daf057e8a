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

# What the NICs counted as lost: $1's dropped and failed transmissions,
# $2's dropped and missed receptions.
nic_lost() {
	n=0
	for f in "$1/statistics/tx_dropped" "$1/statistics/tx_errors" \
		 "$2/statistics/rx_dropped" "$2/statistics/rx_missed_errors"; do
		read -r v < "/sys/class/net/$f"
		n=$((n + v))
	done
	echo "$n"
}

# The interfaces driver $1 drives, in name order ("eth0 eth1").
nic_ifaces() {
	for i in /sys/class/net/*; do
		[ -e "$i/device/driver" ] || continue
		[ "$(basename "$(readlink "$i/device/driver")")" = "$1" ] && printf '%s ' "${i##*/}"
	done
}

# The interfaces of driver $1 once there are two (up to 10 s), or an error
# line and status 1.
nic_two_ifaces() {
	tries=100
	while [ "$(nic_ifaces "$1" | wc -w)" -lt 2 ] && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ "$(nic_ifaces "$1" | wc -w)" -ge 2 ] || { say "error: fewer than two $1 interfaces"; return 1; }
	nic_ifaces "$1"
}

# dmalab.pktgen=SIZE[,SIZE..]: the NIC workload of dmalab measure's
# iommu-flush study.  For each driver of dmalab.nics (e1000e, igb; default
# e1000e) two NICs on one QEMU hub (the runner puts them there): the first
# sends, the second receives.  Linux's pktgen sends dmalab.pktgen_count
# packets of each SIZE from one to the other's MAC address at each rate of
# dmalab.pktgen_rate (packets/s, comma-separated; 0: as fast as it can),
# after a window as long (0: one second) with nothing sent (what the idle
# guest costs).  Each driver, rate and size prints one "# bench-nic" line:
# packets sent and received, those the NICs counted as lost, the rate
# achieved, wall and busy CPU time (cpu_time: clock_us is its unit), busy
# time per packet, whole (gross) and beyond the idle window's, and util_ppm,
# the CPU's utilisation at the rate achieved (busy time per packet times
# packets per second, in millionths).
nic_pktgen() {
	load_mod pktgen || return 1
	for drv in $NICS; do
		load_mod "$drv" || return 1
	done
	NCPUS=$(grep -c '^cpu[0-9]' /proc/stat)
	windows=0
	# dmalab.profile=1: an empty window first, what the two dmalab-mark
	# processes themselves add to each window (the first one's exit, the
	# second one's fork and exec)
	if [ -n "$PROFILE" ]; then
		dmalab-mark open $((0x08000000)) && windows=$((windows + 1))
		dmalab-mark close 1
	fi
	for drv in $NICS; do
		ifaces=$(nic_two_ifaces "$drv") || return 1
		# shellcheck disable=SC2086  # one word per interface
		set -- $ifaces
		nic_pair "$drv" "$1" "$2" || return 1
	done
	[ -n "$PROFILE" ] && echo "# dmalab-profile windows=$windows source=nic"
	return 0
}

# One driver's pair: $2 sends to $3, every rate and size.
nic_pair() {
	drv=$1 tx=$2 rx=$3
	for i in $tx $rx; do
		ip link set "$i" up || { say "error: no $i"; return 1; }
	done
	tries=100
	while [ "$(cat "/sys/class/net/$tx/carrier" "/sys/class/net/$rx/carrier" 2>/dev/null | tr -d '\n')" != 11 ] &&
	      [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ "$tries" -gt 0 ] || { say "error: $tx or $rx has no link"; return 1; }
	read -r mac < "/sys/class/net/$rx/address"
	pg=/proc/net/pktgen
	echo "rem_device_all" > $pg/kpktgend_0
	echo "add_device $tx" > $pg/kpktgend_0
	for rate in $PKTGEN_RATE; do
		# pktgen spins out a gap between packets under 100 us rather than
		# sleeping (net/core/pktgen.c, spin()): at such rates the CPU reads
		# busy whatever a packet costs, so they are not offered (a gap under
		# 150 us: 100 us and the packet's own work)
		if [ "$rate" -gt 0 ] && [ $((1000000000 / rate)) -lt 150000 ]; then
			echo "# nic: $drv rate $rate/s skipped: pktgen would spin between packets"
			continue
		fi
		# QEMU's igb drops frames without counting them when the receive queue
		# RSS picked is full and another is not (igb_receive_internal; the
		# e1000e_rx_not_written_to_guest trace event): back to back it lost up
		# to 14% of pktgen's frames, which no guest counter shows
		if [ "$rate" = 0 ] && [ "$drv" = igb ]; then
			echo "# nic: igb back to back skipped: QEMU's igb drops frames uncounted when a receive queue is full"
			continue
		fi
		# rate 0: back to back (pktgen's delay 0), after a one-second idle window
		delay=0 ms=1000
		if [ "$rate" -gt 0 ]; then
			delay=$((1000000000 / rate)) ms=$((PKTGEN_COUNT * 1000 / rate))
		fi
		for c in "count $PKTGEN_COUNT" "delay $delay" "clone_skb 0" \
			 "dst 10.0.0.2" "dst_mac $mac"; do
			echo "$c" > "$pg/$tx"
		done
		cpu_time; b0=$BUSY; t0=$NOW
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		cpu_time; idle_busy=$((BUSY - b0)); idle_us=$((NOW - t0))
		for size in $PKTGEN; do
			nic_window || return 1
		done
	done
}

# The interrupts the vectors of interfaces $@ have taken, on all CPUs: the
# /proc/interrupts lines whose name is an interface's, alone or followed by
# "-" (e1000e's eth0-rx-0, igb's eth1-TxRx-0).
nic_irqs() {
	awk -v ifs=" $* " 'NR == 1 { n = NF; next }
	{ name = $NF; sub(/-.*/, "", name) }
	index(ifs, " " name " ") { for (i = 2; i <= n + 1; i++) s += $i }
	END { print s + 0 }' /proc/interrupts
}

# What a pktgen window from $tx to $rx did, read after it ($pg, $rx0, $lost0 and
# $irq0 read before it): irqs, got (frames $rx received), lost (counted by the
# NICs), sent and pps, pktgen's own rate (its "Result:"; a window's wall time is
# longer, as pgctrl polls for the end every 100 ms).  Fails when pktgen sent nothing.
pktgen_counts() {
	irqs=$(($(nic_irqs "$tx" "$rx") - irq0))
	read -r got < "/sys/class/net/$rx/statistics/rx_packets"
	got=$((got - rx0))
	lost=$(($(nic_lost "$tx" "$rx") - lost0))
	sent=$(awk '/pkts-sofar/ { print $2; exit }' "$pg/$tx")
	pps=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+pps$/) { sub("pps", "", $i); print $i; exit } }' "$pg/$tx")
	[ "$sent" -gt 0 ] 2>/dev/null || { say "error: pktgen sent nothing"; return 1; }
}

# One window: pktgen sends $PKTGEN_COUNT packets of $size at $rate.  Its
# interrupts (both NICs') are read just outside it: pktgen sends nothing
# before its start or after its end, so they are the window's.
nic_window() {
	echo "pkt_size $size" > "$pg/$tx"
	read -r rx0 < "/sys/class/net/$rx/statistics/rx_packets"
	lost0=$(nic_lost "$tx" "$rx")
	irq0=$(nic_irqs "$tx" "$rx")
	# dmalab.profile=1: an instruction-profile window (docs/profile.rst)
	# around what is measured, opened and closed outside it
	if [ -n "$PROFILE" ]; then
		dmalab-mark open $((0x07000000 + size)) && windows=$((windows + 1))
	fi
	cpu_time; b0=$BUSY; t0=$NOW
	echo start > $pg/pgctrl
	cpu_time; busy=$((BUSY - b0)); wall=$((NOW - t0))
	[ -n "$PROFILE" ] && dmalab-mark close "$PKTGEN_COUNT"
	pktgen_counts || return 1
	# the idle window's busy time, scaled to this window's length
	base=$((idle_us > 0 ? idle_busy * wall / idle_us : 0))
	net=$((busy > base ? busy - base : 0))
	per=$((busy * 1000 / sent))
	echo "# bench-nic nic=$drv size=$size rate=$rate sent=$sent received=$got lost=$lost per_s=${pps:-0} wall_ms=$((wall / 1000)) busy_ms=$((busy / 1000)) idle_busy_ms=$((base / 1000)) busy_ns_per_packet=$per net_ns_per_packet=$((net * 1000 / sent)) util_ppm=$((per * ${pps:-0} / 1000 / NCPUS)) irqs=$irqs clock_us=$CLOCK_US cpus=$NCPUS"
}

# dmalab.swiotlb_stats=1 with dmalab.pktgen (the swiotlb study): what swiotlb
# copies per packet on the NICs' path, in a counting pass of its own after
# nic_pktgen's timed one (the count costs instructions: a kprobe).  The
# exerciser's kprobe on swiotlb_bounce counts every copy between a buffer and
# its bounce slot (bounce_probe, bounce_stats: module/bounce.c) while pktgen
# sends SWIOTLB_COUNT packets of each size from the last pair nic_pktgen
# used ($tx to $rx), set up as it left them.  One "# bench-nic-bounce" line per size.
SWIOTLB_COUNT=200
swiotlb_nic_count() {
	p=/sys/module/dmalab_exercise/parameters
	pg=/proc/net/pktgen
	if ! echo 1 > $p/bounce_probe; then
		say "error: no counter of swiotlb's copies (bounce_probe)"
		return 1
	fi
	echo "count $SWIOTLB_COUNT" > "$pg/$tx"
	for size in $PKTGEN; do
		echo "pkt_size $size" > "$pg/$tx"
		read -r rx0 < "/sys/class/net/$rx/statistics/rx_packets"
		read -r tn0 tb0 fn0 fb0 < $p/bounce_stats
		echo start > $pg/pgctrl
		read -r tn tb fn fb < $p/bounce_stats
		read -r got < "/sys/class/net/$rx/statistics/rx_packets"
		sent=$(awk '/pkts-sofar/ { print $2; exit }' "$pg/$tx")
		[ "$sent" -gt 0 ] 2>/dev/null || { say "error: pktgen sent nothing"; return 1; }
		echo "# bench-nic-bounce size=$size sent=$sent received=$((got - rx0)) to_dev_copies=$((tn - tn0)) to_dev_bytes=$((tb - tb0)) from_dev_copies=$((fn - fn0)) from_dev_bytes=$((fb - fb0)) bytes_per_packet=$(((tb - tb0 + fb - fb0) / sent))"
	done
	echo 0 > $p/bounce_probe
	return 0
}

# dmalab.iperf=SIZE:MBIT[,SIZE:MBIT..]: the udp study's workload (dmalab
# measure udp), with the image of guest-tests/net_image.py (iperf3 and
# iproute2's ip as ip-full).  For each driver of dmalab.nics (e1000e, igb)
# two NICs on one QEMU hub: the first stays here as the client's
# (10.N.0.1), the second goes into a network namespace of its own as the
# server's (10.N.0.2), so that the datagrams leave through one NIC and come
# in through the other.  For each SIZE:MBIT an iperf3 server (-1: one test)
# and a client sending UDP datagrams of SIZE bytes at MBIT Mbit/s of payload
# (0: as fast as it can) for dmalab.iperf_s seconds; the window measured,
# dmalab.iperf_window_ms long, sits in the middle of the client's run, away
# from iperf3's start (exec, control connection) and end (results
# exchange).  One "DMALAB: iperf" line per run: what crossed in the window
# (the server's UDP InDatagrams), its wall and busy time (cpu_time: the
# exerciser's cpu_us), and over the whole run the datagrams the client's
# stack sent (in all, and by the window's end), the server's received,
# those counted lost (the server's UDP receive errors, failed reassemblies,
# the NICs' drops) and iperf3's own lost/total (the receiver's, as of the
# test's end: datagrams still on their way then are in neither); the IOMMU
# domain type of both NICs (none without an IOMMU).
nic_iperf() {
	for p in iperf3 ip-full; do
		command -v $p > /dev/null ||
			{ say "error: no $p in the image (guest-tests/net_image.py builds the one with it)"; return 1; }
	done
	[ -r $CPU_US ] || { say "error: no cpu_us from the exerciser (dmalab_exercise.mode=clock)"; return 1; }
	NCPUS=$(grep -c '^cpu[0-9]' /proc/stat)
	grep -q ' /run ' /proc/mounts || mount -t tmpfs tmpfs /run
	mkdir -p /run/netns
	# iperf3 -w 4M: igb fell short of 826 Mbit/s with the default socket
	# buffers (net.core.wmem_max caps SO_SNDBUF); not per namespace
	echo 8388608 > /proc/sys/net/core/wmem_max
	echo 8388608 > /proc/sys/net/core/rmem_max
	for drv in $NICS; do
		load_mod "$drv" || return 1
	done
	n=1
	for drv in $NICS; do
		ifaces=$(nic_two_ifaces "$drv") || return 1
		# shellcheck disable=SC2086  # one word per interface
		set -- $ifaces
		iperf_pair "$drv" "$1" "$2" "$n" || return 1
		n=$((n + 1))
	done
}

# The IOMMU domain type of the PCI device at sysfs path $1 (DMA, DMA-FQ,
# identity), "none" where it is in no IOMMU group.
iommu_domain() {
	t=none
	[ -r "$1/iommu_group/type" ] && read -r t < "$1/iommu_group/type"
	echo "$t"
}

# UDP_IN, UDP_ERR and UDP_OUT from /proc/$1/net/snmp (the counters of
# process $1's network namespace): builtins only, as it is read inside the
# window.  UDP_IN stays empty when the file is not as expected.
udp_counts() {
	UDP_IN="" hdr=""
	while read -r p a _ c d rest; do
		[ "$p" = Udp: ] || continue
		if [ -z "$hdr" ]; then
			hdr="$a $c $d"
			[ "$hdr" = "InDatagrams InErrors OutDatagrams" ] || return 1
			continue
		fi
		UDP_IN=$a UDP_ERR=$c UDP_OUT=$d
		return 0
	done < "/proc/$1/net/snmp"
	return 1
}

# What the server's namespace counted as lost: failed IP reassemblies
# (/proc/$1/net/snmp's Ip ReasmFails) and its interface $2's dropped and
# missed receptions (/proc/$1/net/dev: drop and fifo).
srv_lost() {
	awk -v ifc="$2:" '
	$1 == "Ip:" { if (!h) { for (i = 2; i <= NF; i++) if ($i == "ReasmFails") k = i; h = 1 } else r = $k }
	$1 == ifc { d = $5 + $6 }
	END { print r + d }' "/proc/$1/net/snmp" "/proc/$1/net/dev"
}

# One driver's pair: $2 the client's NIC, $3 the server's, subnet 10.$4.0.0/24.
iperf_pair() {
	drv=$1 cli=$2 srvif=$3 net=10.$4.0 ns=srv$4
	IP=ip-full
	dom_cli=$(iommu_domain "$(readlink -f "/sys/class/net/$cli/device")")
	dom_srv=$(iommu_domain "$(readlink -f "/sys/class/net/$srvif/device")")
	$IP netns add "$ns" || { say "error: ip netns add $ns"; return 1; }
	$IP link set "$srvif" netns "$ns" || { say "error: $srvif not moved to $ns"; return 1; }
	# the server's namespace takes the datagrams' 12 fragments however far apart
	# they arrive (the default distance check, 64, failed reassemblies with two CPUs)
	$IP netns exec "$ns" sh -c 'echo 0 > /proc/sys/net/ipv4/ipfrag_max_dist' ||
		{ say "error: ipfrag_max_dist not set in $ns"; return 1; }
	$IP link set lo up && $IP addr add "$net.1/24" dev "$cli" && $IP link set "$cli" up &&
		$IP -n "$ns" link set lo up && $IP -n "$ns" addr add "$net.2/24" dev "$srvif" &&
		$IP -n "$ns" link set "$srvif" up || { say "error: $drv pair not set up"; return 1; }
	tries=100
	while ! { $IP link show "$cli" | grep -q LOWER_UP && $IP -n "$ns" link show "$srvif" | grep -q LOWER_UP; } &&
	      [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ "$tries" -gt 0 ] || { say "error: $cli or $srvif has no link"; return 1; }
	# a process that stays in the server's namespace for the pair's runs:
	# /proc/$NSPID/net holds the namespace's counters between servers
	$IP netns exec "$ns" sleep 100000 &
	NSPID=$!
	lead=$(((IPERF_S * 1000 - IPERF_WINDOW_MS) / 2))
	[ "$lead" -ge 100 ] || { say "error: dmalab.iperf_window_ms $IPERF_WINDOW_MS leaves no lead-in in $IPERF_S s"; return 1; }
	for run in $IPERF; do
		iperf_run "${run%%:*}" "${run#*:}" || { kill $NSPID; return 1; }
	done
	kill $NSPID
}

# Seconds for sleep from milliseconds $1 ("0.250").
secs() {
	echo "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"
}

# One run: datagrams of $1 bytes at $2 Mbit/s (0: unlimited).
iperf_run() {
	size=$1 rate=$2
	rm -f /tmp/iperf-srv.log /tmp/iperf-cli.log
	# ip netns exec execs iperf3 in place: $! is the server's pid
	$IP netns exec "$ns" iperf3 -s -1 > /tmp/iperf-srv.log 2>&1 &
	SRV=$!
	tries=50
	while ! grep -qE ':1451 0+:0000 0A' "/proc/$SRV/net/tcp" "/proc/$SRV/net/tcp6" 2>/dev/null &&
	      [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ "$tries" -gt 0 ] || { say "error: the iperf3 server did not listen"; return 1; }
	udp_counts $$ || { say "error: unexpected /proc/net/snmp"; return 1; }
	out0=$UDP_OUT
	udp_counts $NSPID
	in0=$UDP_IN err0=$UDP_ERR
	lost0=$(srv_lost $NSPID "$srvif")
	read -r txd0 < "/sys/class/net/$cli/statistics/tx_dropped"
	iperf3 -c "$net.2" -u -l "$size" -b "${rate}M" -t "$IPERF_S" -w 4M > /tmp/iperf-cli.log 2>&1 &
	CLI=$!
	sleep "$(secs "$lead")"
	# the NICs' interrupts: read beside the datagram counts, while the
	# client sends (so a reading's own time lets in a few more of either)
	irq0=$(nic_irqs "$cli" "$srvif")
	udp_counts $NSPID
	win_in0=$UDP_IN
	udp_counts $$
	win_out0=$UDP_OUT
	cpu_time; b0=$BUSY t0=$NOW
	sleep "$(secs "$IPERF_WINDOW_MS")"
	cpu_time; busy=$((BUSY - b0)) wall=$((NOW - t0))
	udp_counts $$
	win_out=$((UDP_OUT - win_out0)) by_end=$((UDP_OUT - out0))
	udp_counts $NSPID
	win_in=$((UDP_IN - win_in0))
	win_irqs=$(($(nic_irqs "$cli" "$srvif") - irq0))
	wait $CLI
	rc=$?
	# the server ends after its results exchange with the client
	tries=50
	while [ -d "/proc/$SRV" ] && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ -d "/proc/$SRV" ] && { say "error: the iperf3 server did not end"; kill "$SRV"; }
	if [ "$rc" != 0 ]; then
		say "error: iperf3 client rc=$rc"
		while read -r l; do say "iperf3: $l"; done < /tmp/iperf-cli.log
		return 1
	fi
	wait "$SRV" 2>/dev/null
	udp_counts $$
	sent=$((UDP_OUT - out0))
	udp_counts $NSPID
	received=$((UDP_IN - in0))
	read -r txd < "/sys/class/net/$cli/statistics/tx_dropped"
	lost=$((UDP_ERR - err0 + txd - txd0 + $(srv_lost $NSPID "$srvif") - lost0))
	# iperf3's own report: the sender's datagrams and the receiver's lost/total
	ip3=$(awk '$NF == "sender" || $NF == "receiver" {
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, a, "/"); v[$NF] = a[1] " " a[2] } }
		END { print v["sender"] " " v["receiver"] }' /tmp/iperf-cli.log)
	# shellcheck disable=SC2086  # four numbers
	set -- $ip3
	[ $# = 4 ] || { say "error: no sender and receiver lines from iperf3"; return 1; }
	if [ "$win_in" -le 0 ] || [ "$wall" -le 0 ]; then
		say "error: nothing crossed in the window"
		return 1
	fi
	say "iperf nic=$drv size=$size rate=$rate window_us=$wall busy_us=$busy win_received=$win_in win_sent=$win_out per_s=$((win_in * 1000000 / wall)) kbit_s=$((win_in * size * 8000 / wall)) util_ppm=$((busy * 1000000 / wall / NCPUS)) busy_ns_per_datagram=$((busy * 1000 / win_in)) win_irqs=$win_irqs sent=$sent sent_by_window_end=$by_end received=$received lost=$lost iperf_sent=$2 iperf_lost=$3 iperf_total=$4 domain=$dom_cli domain_srv=$dom_srv clock_us=$CLOCK_US cpus=$NCPUS"
}

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

case "$SCENARIO" in
boot|memcpy|raid5|raid6|mdcost|dmatest|vfio|net|movdir) ;;
*)
	say "error: unknown scenario '$SCENARIO' (known: boot memcpy raid5 raid6 mdcost dmatest vfio net movdir)"
	finish
	;;
esac

# dmalab.scenario=raid5|raid6: an md array over brd RAM disks, made through md's
# sysfs interface (no mdadm in the image, no superblock: metadata_version none),
# so that raid456 computes parity through async_tx, which offloads XOR (and PQ)
# to ioatdma's channels where they offer it.  The array resyncs, a file of
# random data is written through it and read back, and md's own check
# recomputes every stripe's parity and counts mismatches.
MD=md0
md_array() {
	level=$1 n=$2 kib=$3 first=${4:-0}
	# crc32c_generic first: libcrc32c (raid456 needs it) asks the crypto API
	# for crc32c, a soft dependency the image's module lists do not follow
	load_mod brd && load_mod crc32c_generic && load_mod raid456 || return 1
	echo "$MD" > /sys/module/md_mod/parameters/new_array || return 1
	md=/sys/block/"$MD"/md
	echo none > "$md"/metadata_version && echo "$level" > "$md"/level &&
		echo "$n" > "$md"/raid_disks && echo 65536 > "$md"/chunk_size || return 1
	i=0
	while [ $i -lt "$n" ]; do
		r=$((first + i))
		echo "1:$r" > "$md"/new_dev || return 1
		echo $i > "$md"/dev-ram$r/slot && echo "$kib" > "$md"/dev-ram$r/size || return 1
		i=$((i + 1))
	done
	echo "$kib" > "$md"/component_size
	echo active > "$md"/array_state || return 1
	[ -b /dev/"$MD" ] || mknod /dev/"$MD" b 9 "${MD#md}"
	return 0
}

md_wait_idle() {
	tries=600
	while [ "$(cat /sys/block/"$MD"/md/sync_action)" != idle ] && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ $tries -gt 0 ]
}

# dmalab.scenario=dmatest: Linux's dmatest on every channel, a thread per
# operation the channel offers (copy, and XOR and PQ where ioatdma keeps
# them), each printing its summary line.  Debian does not build dmatest: the
# image with the patched ioatdma (guest-tests/ioatdma_patched.py) carries it,
# built from Debian's kernel source.
dmatest_scenario() {
	ko=/lib/modules/$KVER/extra/dmatest.ko
	[ -f $ko ] || { say "error: no dmatest.ko in the image"; return 1; }
	# shellcheck disable=SC2046  # one word per parameter
	insmod $ko $(mod_params dmatest) || { say "error: insmod dmatest failed"; return 1; }
	p=/sys/module/dmatest/parameters
	echo 1 > $p/run || { say "error: dmatest did not start"; return 1; }
	cat $p/wait > /dev/null
	say "dmatest end"
}

# Until md has run a check and finished it: md starts the sync thread after
# the write to sync_action returns, so "idle" alone may still be the state
# before the check; last_sync_action names the check once its thread ran.
md_wait_checked() {
	tries=600
	while { [ "$(cat /sys/block/"$MD"/md/sync_action)" != idle ] ||
		[ "$(cat /sys/block/"$MD"/md/last_sync_action)" != check ]; } &&
		[ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ $tries -gt 0 ]
}

# The array's first $1 MiB read back against the written data's hash $2,
# then md's check: MD_DATA (same or DIFFERENT) and MD_BAD (md's mismatch_cnt,
# counted by the check that md_wait_checked saw run).
md_verify() {
	# O_DIRECT reads: from the array, not from the page cache
	got=$(dd if=/dev/"$MD" bs=1048576 count="$1" iflag=direct 2>/dev/null |
		sha256sum | cut -d' ' -f1)
	MD_DATA=$([ "$2" = "$got" ] && echo same || echo DIFFERENT)
	echo check > /sys/block/"$MD"/md/sync_action ||
		{ say "error: md check not started"; return 1; }
	md_wait_checked || { say "error: md check did not run to its end"; return 1; }
	MD_BAD=$(cat /sys/block/"$MD"/md/mismatch_cnt)
}

md_scenario() {
	level=$1 n=$2
	md_array "$level" "$n" 4096 || { say "error: md $level array not made"; return 1; }
	md_wait_idle || { say "error: md $level resync did not finish"; return 1; }
	say "md $level resync done: $(cat /sys/block/md0/md/sync_completed) $(cat /proc/mdstat | tr '\n' ' ')"
	dd if=/dev/urandom of=/tmp/mddata bs=65536 count=64 2>/dev/null
	want=$(sha256sum /tmp/mddata | cut -d' ' -f1)
	dd if=/tmp/mddata of=/dev/md0 bs=65536 oflag=direct 2>/dev/null || { say "error: write"; return 1; }
	md_verify 4 "$want" || return 1
	say "md $level data $MD_DATA mismatch_cnt=$MD_BAD"
}

# dmalab.scenario=mdcost (the offload study's RAID rows, dmalab measure
# offload): what an md write costs the CPU with parity computed by the CPU or
# offloaded.  RAID5 over 3 RAM disks (md0, ram0-2), then RAID6 over 4 (md1,
# ram3-6), each of 16 MiB (brd.rd_nr=7 brd.rd_size=16384 on the command
# line): once resynced, dmalab.md_cost_mib MiB (default 16) of random data
# prepared beforehand go to the array with O_DIRECT in 1 MiB writes, timed
# with cpu_time (the exerciser, loaded first, gives it in us), read back
# equal, and md's check must find no mismatch.  One "# bench-raid" line each.
md_cost() {
	level=$1 n=$2 first=$3 MD=$4
	md_array "$level" "$n" 16384 "$first" || { say "error: md $level array not made"; return 1; }
	md_wait_idle || { say "error: md $level resync did not finish"; return 1; }
	dd if=/dev/urandom of=/tmp/mddata bs=1048576 count="$MD_COST_MIB" 2>/dev/null
	want=$(sha256sum /tmp/mddata | cut -d' ' -f1)
	# dmalab.profile=1: an instruction-profile window around the write
	# (docs/profile.rst), its size the RAID level, its operations the MiB
	[ -n "$PROFILE" ] && dmalab-mark open $((0x0b000000 + ${level#raid}))
	cpu_time
	t0=$NOW b0=$BUSY
	dd if=/tmp/mddata of=/dev/"$MD" bs=1048576 oflag=direct 2>/dev/null ||
		{ say "error: md $level write"; return 1; }
	cpu_time
	[ -n "$PROFILE" ] && dmalab-mark close "$MD_COST_MIB"
	wall=$((NOW - t0)) busy=$((BUSY - b0))
	md_verify "$MD_COST_MIB" "$want" || return 1
	if [ "$MD_DATA" != same ] || [ "$MD_BAD" != 0 ]; then
		say "error: md $level data $MD_DATA mismatch_cnt=$MD_BAD"
	fi
	echo "# bench-raid level=$level mib=$MD_COST_MIB wall_us=$wall busy_us=$busy busy_ns_per_mib=$((busy * 1000 / MD_COST_MIB)) wall_ns_per_mib=$((wall * 1000 / MD_COST_MIB)) mb_per_s=$((MD_COST_MIB * 1048576 / (wall > 0 ? wall : 1))) util_ppm=$((busy * 1000000 / (wall > 0 ? wall : 1) / NCPUS)) clock_us=$CLOCK_US cpus=$NCPUS"
	echo clear > /sys/block/"$MD"/md/array_state
	rm -f /tmp/mddata
}

mdcost_scenario() {
	# shellcheck disable=SC2046  # one word per parameter
	insmod "/lib/modules/$KVER/extra/dmalab_exercise.ko" $(mod_params dmalab_exercise) ||
		{ say "error: insmod dmalab_exercise failed"; return 1; }
	NCPUS=$(grep -c '^cpu[0-9]' /proc/stat)
	cpu_time
	[ "$CLOCK_US" = 1 ] || { say "error: no cpu_us from the exerciser"; return 1; }
	md_cost raid5 3 0 md0 && md_cost raid6 4 3 md1
}

# dmalab.scenario=movdir: dmalab-movdir, MOVDIRI and MOVDIR64B from user mode.
# dmalab.scenario=vfio|net: helper program dmalab-$1 (helpers/) after the
# modules it needs: dmalab-vfio hands dmalab-ioat from ioatdma to vfio-pci and
# drives it through VFIO's type1 IOMMU driver; dmalab-net echoes raw frames.
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

if [ "$SCENARIO" = memcpy ]; then
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
fi
case "$SCENARIO" in
dmatest) dmatest_scenario ;;
raid5) md_scenario raid5 3 ;;
raid6) md_scenario raid6 4 ;;
mdcost) mdcost_scenario ;;
vfio) helper_scenario vfio vfio_iommu_type1 vfio_pci ;;
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
