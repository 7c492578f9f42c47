#!/usr/bin/env python3
"""Hostile frames for a live capture, sent from one end of a veth pair with
a raw AF_PACKET socket (needs CAP_NET_RAW).

Sends, to DST_MAC from SRC_IP to DST_IP:DST_PORT:
  - pairs of TCP segments of one 4-tuple, with payloads and no SYN, whose
    sequence numbers are 2^31 or 2^32 - 1 apart, or that far from the byte
    after the first segment, starting at and around the wrap points (24
    pairs);
  - COUNT random frames from SEED: garbage of random length and EtherType,
    IPv4 headers cut short, bad IHL or total length, TCP headers cut short
    or with a data offset past the end, and TCP segments of random flags,
    sequence numbers and payloads on a few 4-tuples.
Prints how many frames it sent. Usage:
  inject.py IFACE DST_MAC SRC_IP DST_IP DST_PORT SEED COUNT
"""
import random
import socket
import struct
import sys


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ipv4(src, dst, proto, payload, ihl=5, total=None, options=b""):
    total = 20 + len(options) + len(payload) if total is None else total
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total & 0xFFFF, 1, 0, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst)) + options
    h = h[:10] + struct.pack("!H", checksum(h)) + h[12:]
    return h + payload


def tcp(sport, dport, seq, payload, flags=0x18, offset=5):
    return struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 1, offset << 4, flags, 65535, 0, 0) + payload


def main():
    iface, dst_mac, src, dst, dport, seed, count = sys.argv[1:8]
    dport, count = int(dport), int(count)
    rng = random.Random(int(seed))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    dmac = bytes.fromhex(dst_mac.replace(":", ""))
    smac = bytes.fromhex("02000000beef")
    sent = 0

    def send(payload, ethertype=0x0800):
        nonlocal sent
        s.send(dmac + smac + struct.pack("!H", ethertype) + payload)
        sent += 1

    def segment(sport, seq, data, flags=0x18):
        send(ipv4(src, dst, 6, tcp(sport, dport, seq, data, flags)))

    # The wrap points: each pair on its own 4-tuple. The second segment is
    # 2^31 (or 2^32 - 1) from the first one's sequence number, and from the
    # byte after it (the next one expected).
    req = b"GET /wrap HTTP/1.1\r\nHost: x\r\n\r\n"
    n = len(req)
    pairs = []
    for base in (0x12345678, 0, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, (1 << 32) - n):
        for off in (1 << 31, (1 << 32) - 1):
            pairs += [(base, base + off), (base, base + n + off)]
    for i, (a, b) in enumerate(pairs):
        segment(41000 + i, a, req)
        segment(41000 + i, b, req)

    for _ in range(count):
        kind = rng.randrange(7)
        if kind == 0:  # garbage of any EtherType
            send(rng.randbytes(rng.randrange(0, 1500)), rng.randrange(0x10000))
        elif kind == 1:  # IPv4 cut short
            send(ipv4(src, dst, 6, tcp(42000, dport, 1, b"x"))[:rng.randrange(0, 20)])
        elif kind == 2:  # bad IHL or total length
            send(ipv4(src, dst, 6, tcp(42001, dport, 1, b"GET / HTTP/1.1\r\n"),
                      ihl=rng.choice([0, 1, 4, 6, 15]), total=rng.choice([0, 19, 21, 65535])))
        elif kind == 3:  # TCP header cut short
            send(ipv4(src, dst, 6, tcp(42002, dport, 1, b"")[:rng.randrange(0, 20)]))
        elif kind == 4:  # data offset past the end, or below 5
            send(ipv4(src, dst, 6, tcp(42003, dport, 1, b"GET", offset=rng.choice([0, 1, 4, 6, 15]))))
        elif kind == 5:  # random IPv4 payload under a good header
            send(ipv4(src, dst, rng.choice([6, 17, 1, 255]), rng.randbytes(rng.randrange(0, 200))))
        else:  # TCP segments: random flags, sequence numbers and payloads
            seq = rng.choice([0, 1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, rng.randrange(1 << 32)])
            data = rng.choice([b"", req, b"GET /" + rng.randbytes(rng.randrange(0, 300)), rng.randbytes(rng.randrange(0, 1400))])
            segment(43000 + rng.randrange(4), seq, data, rng.randrange(256))
    s.close()
    print(sent)


if __name__ == "__main__":
    main()
