#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A vhost-user network backend of dmalab's own (docs/interop/vhost-user.rst in QEMU's
tree): one queue pair of split rings behind the platform IOMMU (VIRTIO_F_IOMMU_PLATFORM),
returning every frame the guest sends with its MAC addresses swapped.

It reaches guest memory only through IOVA translations it asks QEMU for (IOTLB misses on
the backend channel) and keeps them until QEMU invalidates them (the IOMMU notifiers).
Each access is split at the edges of the translations it uses, so a ring or buffer that
is contiguous in IOVA but not in guest memory is read and written where it is.

Usage: vhost_backend.py SOCKET_PATH   (listens there, serves one QEMU, prints its counts
on exit as "vhost-user: backend received N (D dropped), sent N (D dropped)" and the work
QEMU's disconnect cut short as "vhost-user: backend abandoned N at QEMU's disconnect")."""

import array
import collections
import mmap
import os
import select
import selectors
import signal
import socket
import struct
import sys
import time

# Requests (front-end to back-end) and back-end requests.
GET_FEATURES, SET_FEATURES, SET_OWNER, RESET_OWNER = 1, 2, 3, 4
SET_MEM_TABLE, SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE = 5, 8, 9, 10
GET_VRING_BASE, SET_VRING_KICK, SET_VRING_CALL, SET_VRING_ERR = 11, 12, 13, 14
GET_PROTOCOL_FEATURES, SET_PROTOCOL_FEATURES, GET_QUEUE_NUM = 15, 16, 17
SET_VRING_ENABLE, SET_BACKEND_REQ_FD, IOTLB_MSG = 18, 21, 22
BACKEND_IOTLB_MSG = 1
VERSION, REPLY, NEED_REPLY = 0x1, 0x4, 0x8
IOTLB_MISS, IOTLB_UPDATE, IOTLB_INVALIDATE = 1, 2, 3
ACCESS_RO, ACCESS_WO = 0x1, 0x2

F_PROTOCOL_FEATURES = 1 << 30
F_VERSION_1 = 1 << 32
F_IOMMU_PLATFORM = 1 << 33
FEATURES = F_PROTOCOL_FEATURES | F_VERSION_1 | F_IOMMU_PLATFORM
PROTO_REPLY_ACK, PROTO_BACKEND_REQ = 1 << 3, 1 << 5
PROTOCOL_FEATURES = PROTO_REPLY_ACK | PROTO_BACKEND_REQ

DESC_NEXT, DESC_WRITE = 1, 2
NET_HDR = 12            # virtio_net_hdr with num_buffers (VIRTIO_F_VERSION_1)
RX, TX = 0, 1
DEBUG = os.environ.get("DMALAB_VHOST_DEBUG")   # set: every message and receive pass logged
MAX_FRAME = NET_HDR + 65535  # a longer chain is dropped, not read
MISS_WAIT = 5.0         # seconds an IOTLB miss may take before the access is dropped


class Unmapped(Exception):
    pass


class Ring:
    def __init__(self):
        self.num = 0
        self.desc = self.avail = self.used = 0
        self.last_avail = 0
        self.used_idx = 0
        self.kick = self.call = None
        self.enabled = False


class Backend:
    def __init__(self, conn):
        self.conn = conn
        self.req = None                     # the back-end channel (IOTLB misses)
        self.regions = []                   # (uaddr, size, mmap)
        self.iotlb = []                     # (iova, size, uaddr, perm)
        self.rings = [Ring(), Ring()]
        self.protocol = 0
        self.pending = collections.deque()  # frames waiting for a receive buffer
        self.received = self.sent = self.rx_dropped = self.tx_dropped = 0
        self.abandoned = 0  # work cut short by QEMU's disconnect
        self.sel = selectors.DefaultSelector()
        self.sel.register(conn, selectors.EVENT_READ, "conn")
        self.closed = False

    # --- the front-end's messages ---------------------------------------------------

    def recv_msg(self):
        fds = array.array("i")
        hdr, anc, _, _ = self.conn.recvmsg(12, socket.CMSG_SPACE(8 * 4))
        if len(hdr) < 12:
            raise EOFError
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
        request, flags, size = struct.unpack("<III", hdr)
        payload = b""
        while len(payload) < size:
            chunk = self.conn.recv(size - len(payload))
            if not chunk:
                raise EOFError
            payload += chunk
        return request, flags, payload, list(fds)

    def reply(self, request, payload):
        self.conn.sendall(struct.pack("<III", request, VERSION | REPLY, len(payload)) + payload)

    def handle(self):
        request, flags, p, fds = self.recv_msg()
        if DEBUG:
            print("msg %d flags %#x %s" % (request, flags, p[:40].hex()), flush=True)
        answered = False
        if request == GET_FEATURES:
            self.reply(request, struct.pack("<Q", FEATURES))
            answered = True
        elif request == GET_PROTOCOL_FEATURES:
            self.reply(request, struct.pack("<Q", PROTOCOL_FEATURES))
            answered = True
        elif request == SET_PROTOCOL_FEATURES:
            self.protocol = struct.unpack_from("<Q", p)[0]
        elif request == GET_QUEUE_NUM:
            self.reply(request, struct.pack("<Q", 1))
            answered = True
        elif request == SET_MEM_TABLE:
            self.set_mem_table(p, fds)
        elif request in (SET_VRING_NUM, SET_VRING_BASE, SET_VRING_ENABLE):
            index, num = struct.unpack_from("<II", p)
            ring = self.rings[index]
            if request == SET_VRING_NUM:
                ring.num = num
            elif request == SET_VRING_BASE:
                ring.last_avail = ring.used_idx = num
            else:
                ring.enabled = bool(num)
        elif request == GET_VRING_BASE:
            index, _ = struct.unpack_from("<II", p)
            ring = self.rings[index]
            ring.enabled = False
            self.set_fd(ring, "kick", None)
            self.reply(request, struct.pack("<II", index, ring.last_avail))
            answered = True
        elif request == SET_VRING_ADDR:
            index, _, desc, used, avail, _ = struct.unpack_from("<IIQQQQ", p)
            ring = self.rings[index]
            ring.desc, ring.used, ring.avail = desc, used, avail
        elif request in (SET_VRING_KICK, SET_VRING_CALL, SET_VRING_ERR):
            value = struct.unpack_from("<Q", p)[0]
            fd = fds[0] if fds and not value & 0x100 else None
            if request == SET_VRING_ERR:
                if fd is not None:
                    os.close(fd)
            else:
                ring = self.rings[value & 0xff]
                self.set_fd(ring, "kick" if request == SET_VRING_KICK else "call", fd)
                if request == SET_VRING_KICK and not self.protocol:
                    ring.enabled = True
        elif request == SET_BACKEND_REQ_FD:
            self.req = socket.socket(fileno=fds[0])
        elif request == IOTLB_MSG:
            self.iotlb_msg(p)
        elif request not in (SET_FEATURES, SET_OWNER, RESET_OWNER):
            for fd in fds:
                os.close(fd)
        if flags & NEED_REPLY and not answered:
            self.reply(request, struct.pack("<Q", 0))

    def set_fd(self, ring, which, fd):
        old = getattr(ring, which)
        if old is not None:
            if which == "kick":
                self.sel.unregister(old)
            os.close(old)
        setattr(ring, which, fd)
        if fd is not None and which == "kick":
            self.sel.register(fd, selectors.EVENT_READ, ring)

    def set_mem_table(self, p, fds):
        for _, _, m in self.regions:
            m.close()
        self.regions = []
        nregions = struct.unpack_from("<I", p)[0]
        for i in range(nregions):
            _, size, uaddr, offset = struct.unpack_from("<QQQQ", p, 8 + 32 * i)
            m = mmap.mmap(fds[i], size + offset, mmap.MAP_SHARED,
                          mmap.PROT_READ | mmap.PROT_WRITE)
            self.regions.append((uaddr, size, memoryview(m)[offset:offset + size], m))
            os.close(fds[i])
        self.regions = [(u, s, v) for u, s, v, _ in self.regions]

    def iotlb_msg(self, p):
        iova, size, uaddr, perm, kind = struct.unpack_from("<QQQBB", p)
        if kind == IOTLB_UPDATE:
            self.iotlb.append((iova, size, uaddr, perm))
        elif kind == IOTLB_INVALIDATE:
            end = iova + size
            self.iotlb = [e for e in self.iotlb if e[0] + e[1] <= iova or e[0] >= end]

    # --- guest memory through the IOTLB ---------------------------------------------

    def lookup(self, iova, write):
        need = ACCESS_WO if write else ACCESS_RO
        for start, size, uaddr, perm in self.iotlb:
            if start <= iova < start + size and perm & need:
                return uaddr + (iova - start), start + size - iova
        return None

    def translate(self, iova, write):
        """(host view, bytes it covers) for iova, asking QEMU on a miss."""
        found = self.lookup(iova, write)
        deadline = time.monotonic() + MISS_WAIT
        if found is None:
            miss = struct.pack("<QQQBB", iova, 0, 0, ACCESS_WO if write else ACCESS_RO,
                               IOTLB_MISS).ljust(32, b"\0")
            self.req.sendall(struct.pack("<III", BACKEND_IOTLB_MSG, VERSION, len(miss)) + miss)
        while found is None:
            if time.monotonic() > deadline or self.closed:
                raise Unmapped(hex(iova))
            ready, _, _ = select.select([self.conn], [], [], 0.1)
            if ready:
                self.handle_or_close()
            found = self.lookup(iova, write)
        uaddr, covered = found
        for start, size, view in self.regions:
            if start <= uaddr < start + size:
                off = uaddr - start
                n = min(covered, size - off)
                return view[off:off + n]
        raise Unmapped(hex(iova))

    def read(self, iova, n):
        out = bytearray()
        while len(out) < n:
            view = self.translate(iova + len(out), False)
            take = min(n - len(out), len(view))
            out += view[:take]
        return bytes(out)

    def write(self, iova, data):
        done = 0
        while done < len(data):
            view = self.translate(iova + done, True)
            take = min(len(data) - done, len(view))
            view[:take] = data[done:done + take]
            done += take

    # --- split rings ----------------------------------------------------------------

    def chain(self, ring, head):
        """[(addr, len, writable)] of the descriptor chain at head (at most num long)."""
        out, i = [], head
        for _ in range(ring.num):
            addr, length, flags, nxt = struct.unpack("<QIHH", self.read(ring.desc + 16 * i, 16))
            out.append((addr, length, bool(flags & DESC_WRITE)))
            if not flags & DESC_NEXT:
                break
            i = nxt % ring.num
        return out

    def next_head(self, ring):
        idx = struct.unpack("<H", self.read(ring.avail + 2, 2))[0]
        if idx == ring.last_avail & 0xffff:
            return None
        head = struct.unpack("<H", self.read(ring.avail + 4 + 2 * (ring.last_avail % ring.num),
                                             2))[0]
        ring.last_avail += 1
        return head % ring.num

    def put_used(self, ring, head, length):
        self.write(ring.used + 4 + 8 * (ring.used_idx % ring.num), struct.pack("<II", head, length))
        ring.used_idx += 1
        self.write(ring.used + 2, struct.pack("<H", ring.used_idx & 0xffff))
        if ring.call is not None:
            os.write(ring.call, struct.pack("<Q", 1))

    def transmit(self):
        ring = self.rings[TX]
        while ring.enabled and ring.num:
            head = self.next_head(ring)
            if head is None:
                break
            parts = [(a, n) for a, n, w in self.chain(ring, head) if not w]
            total = sum(n for _, n in parts)
            if not NET_HDR + 12 <= total <= MAX_FRAME:
                self.put_used(ring, head, 0)
                self.tx_dropped += 1
                print("vhost-user: dropped a frame of %d bytes" % total, flush=True)
                continue
            frame = b"".join(self.read(a, n) for a, n in parts)
            self.put_used(ring, head, 0)
            self.received += 1
            body = frame[NET_HDR:]
            self.pending.append(body[6:12] + body[0:6] + body[12:])
        self.receive()

    def receive(self):
        ring = self.rings[RX]
        if DEBUG:
            print("receive: pending %d enabled %s num %d last_avail %d" % (
                len(self.pending), ring.enabled, ring.num, ring.last_avail), flush=True)
        while self.pending and ring.enabled and ring.num:
            head = self.next_head(ring)
            if head is None:
                return
            data = struct.pack("<BBHHHHH", 0, 0, 0, 0, 0, 0, 1) + self.pending.popleft()
            done = 0
            for addr, n, writable in self.chain(ring, head):
                if writable and done < len(data):
                    take = min(n, len(data) - done)
                    self.write(addr, data[done:done + take])
                    done += take
            if done < len(data):
                self.rx_dropped += 1
            else:
                self.sent += 1
            self.put_used(ring, head, done)

    # --- the loop -------------------------------------------------------------------

    def handle_or_close(self):
        try:
            self.handle()
        except (EOFError, ConnectionError):
            self.closed = True

    def run(self):
        while not self.closed:
            for key, _ in self.sel.select(timeout=0.5):
                if key.data == "conn":
                    self.handle_or_close()
                    continue
                try:
                    os.read(key.fd, 8)
                except BlockingIOError:
                    pass
                try:
                    self.transmit() if key.data is self.rings[TX] else self.receive()
                except Unmapped as e:
                    # QEMU went away while a translation was asked for: the device
                    # stopped, which is not a frame the backend failed
                    if self.closed:
                        self.abandoned += 1
                    else:
                        self.tx_dropped += 1
                        print("vhost-user: dropped: no translation of %s" % e, flush=True)

    def counts(self):
        return ("vhost-user: backend received %d (%d dropped), sent %d (%d dropped)\n"
                "vhost-user: backend abandoned %d at QEMU's disconnect" % (
                    self.received, self.tx_dropped, self.sent, self.rx_dropped,
                    self.abandoned))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sys.argv[1])
    server.listen(1)
    backend = None

    def stop(*_):
        if backend:
            print(backend.counts(), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    conn, _ = server.accept()
    backend = Backend(conn)
    backend.run()
    stop()


if __name__ == "__main__":
    sys.exit(main())
