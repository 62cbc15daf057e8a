# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=sh
# The md scenarios (raid5, raid6, mdcost) and dmatest (sourced by /init, guest-tests/init.sh, from /lib/dmalab/).

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
