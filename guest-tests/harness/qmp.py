# SPDX-License-Identifier: GPL-2.0-or-later
"""The one QMP client of dmalab's tests: the guest harness and the qtests
(devices/tests/libqtest.py) both use it.

JSON lines over a connected stream socket. Every read has a deadline, replies are
matched to their command by id (a late reply is never taken for the next one), and
events are kept, in arrival order, for the caller to take.
"""

import json
import socket
import time


class QmpError(Exception):
    """A QMP command failed (``error``: QMP's {"class", "desc"} object), or the
    connection did (``error`` None)."""

    def __init__(self, msg, error=None):
        super().__init__(msg)
        self.error = error


def _default_fail(msg, wait=0.0):
    return QmpError(msg)


class LineStream:
    """Lines over a socket; every call has a deadline. After a timeout a ``sticky``
    stream refuses further use: a late reply would pass for the next answer.
    ``fail(msg, wait)`` makes the exception raised (``wait``: how long the caller
    may wait for a QEMU that dropped the connection to exit)."""

    def __init__(self, sock, name, fail=_default_fail, sticky=False):
        self.sock, self.name, self.fail, self.sticky = sock, name, fail, sticky
        self.buf, self.broken = bytearray(), None

    def _error(self, msg, wait=1.0):
        self.broken = msg if self.sticky else None
        return self.fail(f"{self.name}: {msg}", wait=wait)

    def send(self, text, deadline):
        if self.broken:
            raise self.fail(f"{self.name} unusable after: {self.broken}")
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            self.sock.sendall(text.encode() + b"\n")
        except OSError as e:
            raise self._error(f"send failed: {e}") from None

    def _fill(self, chunk):
        if not chunk:
            raise self._error("QEMU closed the connection")
        self.buf += chunk

    def readline(self, deadline):
        while (eol := self.buf.find(b"\n")) < 0:
            if deadline <= time.monotonic():
                raise self._error("no reply before the timeout", wait=0)
            self.sock.settimeout(deadline - time.monotonic())
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError as e:
                raise self._error(f"receive failed: {e}") from None
            self._fill(chunk)
        line = self.buf[:eol].decode()
        del self.buf[:eol + 1]
        return line

    def ready_lines(self):
        """The complete lines that have arrived, without blocking for more."""
        self.sock.setblocking(False)
        try:
            # A closed connection ends the reading here; the next blocking read
            # reports it.
            while chunk := self.sock.recv(1 << 16):
                self.buf += chunk
        except BlockingIOError:
            pass
        except OSError as e:
            raise self._error(f"receive failed: {e}") from None
        finally:
            self.sock.setblocking(True)
        lines = []
        while (eol := self.buf.find(b"\n")) >= 0:
            lines.append(self.buf[:eol].decode())
            del self.buf[:eol + 1]
        return lines


class Qmp:
    """A QMP session on a connected socket: reads the greeting and negotiates
    capabilities. ``timeout`` (s) bounds each command unless it names its own."""

    def __init__(self, sock, timeout=10.0, fail=_default_fail):
        self.timeout, self.events, self._id = timeout, [], 0
        self._stream = LineStream(sock, "QMP", fail)
        self._read(time.monotonic() + timeout)  # the greeting
        self.command("qmp_capabilities")

    @classmethod
    def connect(cls, path, proc, wait=15.0, timeout=10.0):
        """Connects to the QMP server QEMU (``proc``) listens on at ``path``,
        retrying for ``wait`` s while it starts up."""
        end = time.monotonic() + wait
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                return cls(sock, timeout)
            except OSError as e:
                sock.close()
                if proc.poll() is not None or time.monotonic() > end:
                    raise QmpError("cannot connect to QMP: %s" % e) from None
                time.sleep(0.05)

    def fileno(self):
        return self._stream.sock.fileno()

    def _keep(self, line):
        msg = json.loads(line)
        if "event" in msg:
            self.events.append(msg)
        return msg

    def _read(self, deadline):
        return self._keep(self._stream.readline(deadline))

    def raw(self, name, arguments=None, timeout=None):
        """Sends a command; returns the whole reply ({"return"} or {"error"})."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        self._id += 1
        msg = {"execute": name, "id": self._id}
        if arguments:
            msg["arguments"] = arguments
        self._stream.send(json.dumps(msg), deadline)
        while True:  # events are kept on the way; stale replies skipped by id
            reply = self._read(deadline)
            if "event" not in reply and reply.get("id") == self._id:
                return reply

    def command(self, name, timeout=None, **arguments):
        """Runs a command; returns its "return" value or raises QmpError.
        Hyphenated argument names: command("cmd", **{"x-arg": 1})."""
        reply = self.raw(name, arguments, timeout)
        if "error" in reply:
            error = reply["error"]
            raise QmpError(f"QMP {name}: {error.get('class')}: {error.get('desc')}", error)
        return reply["return"]

    def pop_events(self, name=None):
        """Takes the events received so far (all, or those called ``name``)."""
        got = [e for e in self.events if name in (None, e["event"])]
        self.events = [e for e in self.events if e not in got]
        return got

    def pending_events(self):
        """Takes every event, including those that have arrived unread, without
        blocking for more."""
        for line in self._stream.ready_lines():
            self._keep(line)
        return self.pop_events()

    def wait_event(self, name, timeout=None):
        """Takes the first event ``name``, reading until it arrives; the stream's
        failure after ``timeout`` s."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for event in self.events:
                if event["event"] == name:
                    self.events.remove(event)
                    return event
            self._read(deadline)

    def close(self):
        self._stream.sock.close()
