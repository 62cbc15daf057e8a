# SPDX-License-Identifier: GPL-2.0-or-later
"""A QMP client: line-delimited JSON over the unix socket QEMU listens on."""

import json
import socket
import time


class QmpError(Exception):
    pass


class Qmp:
    """Just enough of a QMP client: line-delimited JSON over a unix socket."""

    def __init__(self, path, proc, wait=15.0):
        end = time.monotonic() + wait
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError as e:
                self.sock.close()
                if proc.poll() is not None or time.monotonic() > end:
                    raise QmpError("cannot connect to QMP: %s" % e)
                time.sleep(0.05)
        self.buf = b""
        self.events = []
        self.sock.settimeout(10)
        self._message()  # greeting
        self.command("qmp_capabilities")

    def fileno(self):
        return self.sock.fileno()

    def _message(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QmpError("QMP connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, **arguments):
        msg = {"execute": name}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._message()
            if "event" in reply:
                self.events.append(reply)
            elif "error" in reply:
                raise QmpError("%s: %s" % (name, reply["error"].get("desc")))
            elif "return" in reply:
                return reply["return"]

    def pending_events(self):
        """Events that have arrived, without blocking for more."""
        self.sock.setblocking(False)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self.buf += chunk
        except BlockingIOError:
            pass
        finally:
            self.sock.settimeout(10)
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" in msg:
                self.events.append(msg)
        out, self.events = self.events, []
        return out

    def close(self):
        self.sock.close()

