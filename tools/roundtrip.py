#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where a dmalab-ioat descriptor's round trip goes, from a QEMU trace log.

Run QEMU with the log trace backend and host timestamps:
  -trace dmalab_ioat_mmio_write -trace dmalab_ioat_decided -trace dmalab_ioat_completed
  -trace dmalab_ioat_irq -msg timestamp=on -D trace.log
then: roundtrip.py trace.log

For each descriptor whose start a DMACOUNT doorbell caused, it splits host wall time into:
  doorbell -> start     DMACOUNT write to the model starting the descriptor (the host's
                        wake-up of the channel's timer, or 0 with sync-start)
  start -> complete     the data phase and the policy's completion time
  complete -> message   interrupt delivery inside the model and QEMU
  message -> doorbell   the guest: interrupt, ioatdma's cleanup tasklet, the client's
                        callback and its next submission (includes vCPU scheduling)
and prints the median and 90th percentile of each, in microseconds. These are host wall
times under TCG: they describe this machine and build, not hardware.
"""

import re
import statistics
import sys

LINE = re.compile(r"^\d+@(\d+)\.(\d+):(\w+) (.*)$")
CHAN_STRIDE = 0x80


def parse(path):
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                t = int(m.group(1)) * 1_000_000 + int(m.group(2))
                events.append((t, m.group(3), m.group(4)))
    return events


def breakdown(events):
    doorbell = {}  # channel -> time of the last DMACOUNT write not yet followed by a start
    started, completed, messaged = {}, {}, {}
    spans = {"doorbell -> start": [], "start -> complete": [], "complete -> message": [],
             "message -> doorbell": []}
    for t, name, args in events:
        if name == "dmalab_ioat_mmio_write":
            m = re.match(r"offset 0x([0-9a-f]+) size (\d+)", args)
            off = int(m.group(1), 16)
            if off >= CHAN_STRIDE and off % CHAN_STRIDE == 6:
                ch = off // CHAN_STRIDE - 1
                doorbell.setdefault(ch, t)
                if ch in messaged:
                    spans["message -> doorbell"].append(t - messaged.pop(ch))
        elif name == "dmalab_ioat_decided":
            ch = int(args.split()[1])
            if ch in doorbell:
                spans["doorbell -> start"].append(t - doorbell.pop(ch))
                started[ch] = t
        elif name == "dmalab_ioat_completed":
            ch = int(args.split()[1])
            if ch in started:
                spans["start -> complete"].append(t - started.pop(ch))
                completed[ch] = t
        elif name == "dmalab_ioat_irq":
            m = re.match(r"vector (\d+) msix (\d) sent (\d)", args)
            ch = int(m.group(1))
            if ch in completed and m.group(3) == "1":
                spans["complete -> message"].append(t - completed.pop(ch))
                messaged[ch] = t
    return spans


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: roundtrip.py TRACE_LOG")
    spans = breakdown(parse(sys.argv[1]))
    print("%-22s %8s %10s %10s" % ("span", "samples", "median us", "p90 us"))
    total = 0.0
    for name, v in spans.items():
        if not v:
            print("%-22s %8d %10s %10s" % (name, 0, "-", "-"))
            continue
        v.sort()
        med = statistics.median(v)
        total += med
        print("%-22s %8d %10.1f %10.1f" % (name, len(v), med, v[int(len(v) * 0.9)]))
    print("%-22s %8s %10.1f" % ("sum of medians", "", total))


if __name__ == "__main__":
    main()
