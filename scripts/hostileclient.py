#!/usr/bin/env python3
"""Hostile clients of the urldedupd API, for tests and benchmarks.

Usage: hostileclient.py MODE --addr SOCKET|HOST:PORT --conns N [options]

Modes, each over N connections at once:
  stall      POST /v1/check with Content-Length SIZE, send all but the last
             byte, then nothing.
  slowloris  POST /v1/check with Content-Length SIZE, then one byte of body
             per connection every 1/RATE seconds.
  headers    GET /healthz whose head comes at one byte every 1/RATE seconds
             and never ends (with --head-size: HEAD_SIZE bytes of it at
             once first).
  idle       connect and send nothing (with --request: one GET first, kept
             alive, then nothing).
When every connection has sent what it will send (or been answered), the
script prints "ready" on a line; it then waits until every connection is
closed by the server or --duration seconds have passed since the start, and
prints one JSON line: how many connections got each status ("none": no
answer), how many the server closed, and the most seconds from connect to
close among them. It always exits within --duration plus a few seconds.
"""
import argparse
import json
import resource
import selectors
import socket
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("mode", choices=["stall", "slowloris", "headers", "idle"])
p.add_argument("--addr", required=True)
p.add_argument("--conns", type=int, required=True)
p.add_argument("--size", type=int, default=1000, help="Content-Length of a body")
p.add_argument("--rate", type=float, default=1.0, help="slowloris: body bytes a second per connection")
p.add_argument("--head-size", type=int, default=0, help="headers: bytes of the head sent at once first")
p.add_argument("--request", action="store_true", help="idle: one GET request first")
p.add_argument("--duration", type=float, default=30.0, help="give up after this many seconds")
a = p.parse_args()

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < a.conns + 64:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.conns + 64), hard))

start = time.monotonic()
deadline = start + a.duration


def connect():
    if a.addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(a.addr)
    else:
        host, port = a.addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.setblocking(False)
    return s


LINE = b"http://hostile.example/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
CHUNK = LINE * (65536 // len(LINE) + 1)


class Conn:
    def __init__(self):
        self.sock = connect()
        self.opened = time.monotonic()
        self.closed = None
        self.status = None
        self.inbuf = b""
        self.body_sent = 0
        self.head = b""
        if a.mode in ("stall", "slowloris"):
            self.head = ("POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                         "Content-Length: %d\r\n\r\n" % a.size).encode()
        elif a.mode == "headers":
            self.head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * a.head_size
        elif a.request:
            self.head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        self.ev = selectors.EVENT_READ | selectors.EVENT_WRITE
        self.answered = False
        self.to_send = 0  # body bytes allowed so far
        if a.mode == "stall":
            self.to_send = a.size - 1

    def pending(self):
        return self.closed is None and self.status is None and (self.head or self.body_sent < self.to_send)

    def write(self):
        try:
            if self.head:
                n = self.sock.send(self.head)
                self.head = self.head[n:]
                return
            left = self.to_send - self.body_sent
            if a.mode == "headers":
                n = self.sock.send(b"a" * left)
            else:
                off = self.body_sent % len(LINE)
                n = self.sock.send(CHUNK[off:off + min(left, 65536)])
            self.body_sent += n
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:  # the server closed: read what it answered first
            while self.closed is None:
                self.read(final=True)

    def read(self, final=False):
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            if final:
                self.close()
            return
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        self.inbuf += data
        if self.status is None and not self.answered and b"\r\n" in self.inbuf:
            line = self.inbuf.split(b"\r\n", 1)[0].split()
            self.status = line[1].decode() if len(line) > 1 else "bad"
            if a.mode == "idle":  # the GET's answer: the connection is kept
                self.status, self.inbuf = None, b""
                self.answered = True
        self.inbuf = self.inbuf[-4096:]

    def close(self):
        if self.closed is None:
            self.closed = time.monotonic()
            sel.unregister(self.sock)
            self.sock.close()


sel = selectors.DefaultSelector()
conns = []
for _ in range(a.conns):
    c = Conn()
    conns.append(c)
    sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)

ready = False
next_byte = time.monotonic() + 1 / a.rate
while time.monotonic() < deadline:
    now = time.monotonic()
    if a.mode in ("slowloris", "headers") and now >= next_byte:
        for c in conns:
            if c.closed is None and c.status is None and (a.mode == "headers" or c.to_send < a.size - 1):
                c.to_send += 1
        next_byte += 1 / a.rate
    for c in conns:
        if c.closed is None:
            ev = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.pending() else 0)
            if ev != c.ev:
                sel.modify(c.sock, ev, c)
                c.ev = ev
    if not ready and not any(c.pending() for c in conns):
        if a.mode != "idle" or not a.request or all(c.answered or c.closed for c in conns):
            ready = True
            print("ready", flush=True)
    if all(c.closed is not None for c in conns):
        break
    timeout = min(0.2, max(0.0, deadline - now))
    if a.mode in ("slowloris", "headers"):
        timeout = min(timeout, max(0.0, next_byte - now))
    for key, ev in sel.select(timeout):
        c = key.data
        if ev & selectors.EVENT_READ:
            c.read()
        if ev & selectors.EVENT_WRITE and c.closed is None:
            c.write()

if not ready:
    print("ready", flush=True)
status = {}
for c in conns:
    k = c.status or "none"
    status[k] = status.get(k, 0) + 1
closed = [c.closed - c.opened for c in conns if c.closed is not None]
print(json.dumps({
    "conns": len(conns),
    "status": status,
    "closed": len(closed),
    "max_close_s": round(max(closed), 3) if closed else None,
    "elapsed_s": round(time.monotonic() - start, 3),
}), flush=True)
for c in conns:
    if c.closed is None:
        c.sock.close()
