#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A stand-in for qemu-system-x86_64 in test_runner.py: a scripted guest on
stdout and just enough QMP for runner.run_qemu, behaving as QEMU 10.0 does
where the runner depends on it.

Its own options (any order, among QEMU's, which it ignores otherwise):
  --boot-text FILE   the serial lines of one boot, printed by every boot
  --ends E,E,...     how each boot ends: reset (the guest resets the
                     machine, as through port 0xcf9), host (prints
                     "DMALAB: reset-me" and waits for the host to reset it)
                     or poweroff (prints "DMALAB: done" and powers off)
  --descriptors N    what the device counts in each boot (descriptors and
                     interrupts N, bytes --bytes); 0 is a device that did
                     nothing
  --bytes N
  --eager            cont answers only once the guest has run as far as it
                     can (its lines and events come before the reply)
  --no-kvm           with -accel kvm, fail to start as QEMU does on a host
                     whose KVM cannot run a guest (exit status 1, before any
                     guest output); other accelerators boot

and QEMU's: -qmp unix:PATH,server=on,wait=off, -no-shutdown, -action
reboot=shutdown.  Like QEMU: a reset clears the device's counters and sends
RESET; with reboot=shutdown any reset request (the guest's or system_reset)
becomes a SHUTDOWN with its reason, and with -no-shutdown the machine then
pauses until system_reset (RESET) and cont; after a warm reset the firmware
resets the machine once more, as SeaBIOS does, before the next boot."""

import json
import select
import socket
import sys
import time


class Machine:
    def __init__(self, argv):
        opt = {"--boot-text": None, "--ends": "poweroff",
               "--descriptors": "100", "--bytes": "4096"}
        self.eager = "--eager" in argv
        self.accel = argv[argv.index("-accel") + 1] if "-accel" in argv[:-1] else "tcg"
        if "--no-kvm" in argv and self.accel.split(",")[0] == "kvm":
            print("qemu-system-x86_64: -accel kvm: failed to initialize kvm: "
                  "Operation not supported", file=sys.stderr, flush=True)
            sys.exit(1)
        self.qmp_path = None
        self.no_shutdown = False
        self.reboot_action = "reset"
        i = 0
        while i < len(argv):
            a = argv[i]
            if a in opt:
                opt[a] = argv[i + 1]
                i += 1
            elif a == "-qmp":
                self.qmp_path = argv[i + 1].split(",")[0][len("unix:"):]
                i += 1
            elif a == "-action" and argv[i + 1].startswith("reboot="):
                self.reboot_action = argv[i + 1][len("reboot="):]
                i += 1
            elif a == "-no-shutdown":
                self.no_shutdown = True
            i += 1
        with open(opt["--boot-text"]) as f:
            self.text = f.read().splitlines()
        self.ends = opt["--ends"].split(",")
        self.per_boot = int(opt["--descriptors"]), int(opt["--bytes"])
        self.counters = dict.fromkeys(
            ("descriptors", "bytes", "errors", "interrupts"), 0)
        self.state = "running"  # or "shutdown", "prelaunch"
        self.boot = 0
        self.printed = False
        self.guest = self.program(warm=False)
        self.waiting = False    # the guest idles until the host resets it
        self.conn = None
        self.negotiated = False
        self.buf = b""

    # ---- the guest ----------------------------------------------------
    def program(self, warm):
        if warm:
            yield "reset"   # the firmware's own reset after a warm reset
        if self.boot:
            print("SeaBIOS (version fake)", flush=True)
        n, nbytes = self.per_boot
        self.counters.update(descriptors=n, bytes=nbytes, interrupts=n)
        for line in self.text:
            print(line, flush=True)
            time.sleep(0.002)
        self.printed = True
        end = self.ends[min(self.boot, len(self.ends) - 1)]
        if end == "host":
            print("DMALAB: reset-me", flush=True)
            yield "wait"
        elif end == "poweroff":
            print("DMALAB: done", flush=True)
            yield "poweroff"
        else:
            yield "reset"

    def step(self):
        what = next(self.guest, "wait")
        if what == "reset":
            self.reset_request("guest-reset", guest=True)
        elif what == "poweroff":
            self.shutdown("guest-shutdown", guest=True)
        elif what == "wait":
            self.waiting = True

    # ---- QEMU's run states --------------------------------------------
    def event(self, name, data=None):
        msg = {"event": name, "timestamp": {"seconds": int(time.time()),
                                            "microseconds": 0}}
        if data is not None:
            msg["data"] = data
        self.send(msg)

    def reset_request(self, reason, guest):
        if self.reboot_action == "shutdown":
            self.shutdown(reason, guest)
        else:
            self.reset(reason, guest)

    def shutdown(self, reason, guest):
        self.event("SHUTDOWN", {"guest": guest, "reason": reason})
        if not self.no_shutdown:
            sys.exit(0)
        self.event("STOP")
        self.state = "shutdown"

    def reset(self, reason, guest):
        self.counters = dict.fromkeys(self.counters, 0)
        self.event("RESET", {"guest": guest, "reason": reason})
        # a reset after a boot ran is warm: the firmware resets once more
        warm, self.printed = self.printed, False
        self.boot += warm
        self.guest = self.program(warm)
        self.waiting = False
        if self.state == "shutdown":
            self.state = "prelaunch"

    # ---- QMP ----------------------------------------------------------
    def send(self, msg):
        # A reply carries its command's id, as QEMU's do.
        if ("return" in msg or "error" in msg) and "id" in self.asked:
            msg = dict(msg, id=self.asked["id"])
        self.conn.sendall(json.dumps(msg).encode() + b"\n")

    def command(self, msg):
        self.asked = msg
        name, arg = msg.get("execute"), msg.get("arguments", {})
        if name == "qmp_capabilities":
            # QEMU sends no event before; here the guest starts only now
            self.negotiated = True
            ret = {}
        elif name == "qom-list":
            ret = [{"name": "device[0]", "type": "child<dmalab-ioat>"}] \
                if arg["path"] == "/machine/peripheral-anon" else []
        elif name == "qom-get":
            # the device's counters in one query, as dmalab's glue answers it
            ret = dict(self.counters) if arg["property"] == "counters" else ""
        elif name == "set-action":
            self.reboot_action = arg.get("reboot", self.reboot_action)
            ret = {}
        elif name == "system_reset":
            self.send({"return": {}})
            self.reset_request("host-qmp-system-reset", guest=False)
            return
        elif name == "cont":
            if self.state == "shutdown":
                self.send({"error": {"class": "GenericError", "desc":
                                     "Resetting the Virtual Machine is "
                                     "required"}})
                return
            self.state = "running"
            self.event("RESUME")
            while self.eager and self.state == "running" and \
                    not self.waiting:
                self.step()
            ret = {}
        elif name == "quit":
            self.send({"return": {}})
            sys.exit(0)
        else:
            ret = {}
        self.send({"return": ret})

    def run(self):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.qmp_path)
        srv.listen(1)
        srv.settimeout(10)
        self.conn, _ = srv.accept()
        self.asked = {}
        self.send({"QMP": {"version": {}, "capabilities": []}})
        while True:
            idle = self.state != "running" or self.waiting or \
                not self.negotiated
            ready, _, _ = select.select([self.conn], [], [],
                                        0.05 if idle else 0)
            if ready:
                chunk = self.conn.recv(65536)
                if not chunk:
                    return
                self.buf += chunk
                while b"\n" in self.buf:
                    line, self.buf = self.buf.split(b"\n", 1)
                    if line.strip():
                        self.command(json.loads(line))
            if not idle:
                self.step()


if __name__ == "__main__":
    Machine(sys.argv[1:]).run()
