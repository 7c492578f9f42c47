#!/usr/bin/env python3
"""HTTP requests in VLAN-tagged frames, sent from one end of a veth pair
with a raw AF_PACKET socket (needs CAP_NET_RAW), for a live capture on the
other end: the receiving kernel takes the outer tag off each frame and
gives it to packet sockets beside the frame (tp_vlan_tci, tp_vlan_tpid).

For each kind, from its own source port to DST_IP:DST_PORT, a SYN and then
"GET /KIND HTTP/1.1" with Host vlan.example:
  plain    no tag
  dot1q    an 802.1Q tag, VLAN 10, priority 5
  dot1ad   an 802.1ad tag, VLAN 20
  qinq     an 802.1ad tag, VLAN 30, over an 802.1Q tag, VLAN 40
Prints how many frames it sent. Usage:
  vlaninject.py IFACE DST_MAC SRC_IP DST_IP DST_PORT
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inject import ipv4, tcp  # noqa: E402

KINDS = [
    ("plain", []),
    ("dot1q", [(0x8100, 5 << 13 | 10)]),
    ("dot1ad", [(0x88A8, 20)]),
    ("qinq", [(0x88A8, 30), (0x8100, 40)]),
]


def main():
    iface, dst_mac, src, dst, dport = sys.argv[1:6]
    dport = int(dport)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    dmac = bytes.fromhex(dst_mac.replace(":", ""))
    smac = bytes.fromhex("02000000beef")
    sent = 0
    for i, (kind, tags) in enumerate(KINDS):
        l2 = dmac + smac + b"".join(struct.pack("!HH", tpid, tci) for tpid, tci in tags) + struct.pack("!H", 0x0800)
        req = ("GET /%s HTTP/1.1\r\nHost: vlan.example\r\n\r\n" % kind).encode()
        for seq, flags, data in ((1000, 0x02, b""), (1001, 0x18, req)):
            s.send(l2 + ipv4(src, dst, 6, tcp(44000 + i, dport, seq, data, flags)))
            sent += 1
    s.close()
    print(sent)


if __name__ == "__main__":
    main()
