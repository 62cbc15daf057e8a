# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# The NIC workloads: pktgen windows, swiotlb's counts, iperf3's UDP runs (sourced by /init, guest-tests/init.sh, from /lib/dmalab/).

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
