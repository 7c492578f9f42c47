package decode

import "encoding/binary"

// UDP tunnels by content. A tunnel on a port that is not its own (Teredo
// relays on any port, a VXLAN fabric on a private port) would leave its
// traffic unread: a UDP datagram on no tunnel's port, that is not QUIC, is
// tried as each tunnel by content, as Zeek finds Teredo. A tunnel's header
// must hold its fixed values, and the IP packet inside must be whole:
// its version, and its lengths agreeing with the datagram's (exactly, or
// within an Ethernet frame's padding). A datagram whose header matched but
// whose inside did not is counted as tried and rejected
// (ReasonTunnelContent), and read as plain UDP.

// contentTunnel returns the tunnel p, a UDP payload, is by content (0 for
// none), and, when none, the tunnel whose header matched first but whose
// inside did not (0 when none matched).
func contentTunnel(p []byte) (kind, rejected EncapLayer) {
	for _, k := range [...]EncapLayer{EncapGTP, EncapVXLAN, EncapGeneve, EncapAYIYA, EncapTeredo} {
		tried, ok := looksLike(k, p)
		if ok {
			return k, 0
		}
		if tried && rejected == 0 {
			rejected = k
		}
	}
	return 0, rejected
}

// looksLike reports whether p's header is kind's (tried) and whether what
// it carries is a whole IP packet (ok).
func looksLike(kind EncapLayer, p []byte) (tried, ok bool) {
	be := binary.BigEndian
	switch kind {
	case EncapGTP: // GTPv1-U G-PDU: version 1, PT 1, message 0xff, its length the rest
		if len(p) < 8 || p[0]&0xf8 != 0x30 || p[1] != 0xff {
			return false, false
		}
		n := 8
		if p[0]&0x07 != 0 {
			if len(p) < 12 || p[11] != 0 { // extension headers are not tried by content
				return true, false
			}
			n = 12
		}
		return true, int(be.Uint16(p[2:])) == len(p)-8 && wholeIP(p[n:], 0, true)
	case EncapVXLAN: // flags: I only; reserved bytes zero
		if len(p) < 8 || p[0] != 0x08 || p[1]|p[2]|p[3]|p[7] != 0 {
			return false, false
		}
		return true, wholeEther(p[8:])
	case EncapGeneve: // version 0, no reserved flag, Ethernet inside
		if len(p) < 8 || p[0]>>6 != 0 || p[1]&0x3f != 0 || be.Uint16(p[2:]) != 0x6558 || p[7] != 0 {
			return false, false
		}
		n := 8 + int(p[0]&0x3f)*4
		if len(p) < n {
			return true, false
		}
		return true, wholeEther(p[n:])
	case EncapAYIYA: // a forward (opcode 1) of IPv4 or IPv6
		if len(p) < 8 || p[2]&0x0f != 1 || (p[3] != 4 && p[3] != 41) || p[0]>>4 > 4 || p[1]>>4 > 5 {
			return false, false
		}
		n := 8 + 1<<(p[0]>>4) + int(p[1]>>4)*4
		if len(p) < n {
			return true, false
		}
		v := 4
		if p[3] == 41 {
			v = 6
		}
		return true, wholeIP(p[n:], v, true)
	case EncapTeredo: // origin indication and authentication headers, then IPv6
		headers := false
		for i := 0; i < 2 && len(p) >= 2 && p[0] == 0 && p[1] <= 1; i++ {
			headers = true
			n := 8
			if p[1] == 1 {
				if len(p) < 4 {
					return true, false
				}
				n = 4 + int(p[2]) + int(p[3]) + 9
			}
			if len(p) < n {
				return true, false
			}
			p = p[n:]
		}
		if !headers && !ipv6Like(p) {
			return false, false
		}
		return true, wholeIP(p, 6, true)
	}
	return false, false
}

// ipv6Like reports whether p starts like an IPv6 header worth trying: at
// least 40 bytes, version 6, a next header that is TCP, UDP, ICMPv6, a
// fragment, an extension header or none, and a hop limit.
func ipv6Like(p []byte) bool {
	if len(p) < 40 || p[0]>>4 != 6 || p[7] == 0 {
		return false
	}
	switch p[6] {
	case 0, 6, 17, 43, 44, 58, 59, 60:
		return true
	}
	return false
}

// wholeIP reports whether p is one IP packet of version v (4 or 6; 0:
// either): a header of its version whose lengths agree with len(p) —
// exactly, or, when !exact, within an Ethernet frame's padding.
func wholeIP(p []byte, v int, exact bool) bool {
	var n int
	switch {
	case len(p) >= 20 && p[0]>>4 == 4 && (v == 0 || v == 4):
		ihl := int(p[0]&0x0f) * 4
		n = int(binary.BigEndian.Uint16(p[2:]))
		if ihl < 20 || n < ihl {
			return false
		}
	case len(p) >= 40 && p[0]>>4 == 6 && (v == 0 || v == 6):
		n = 40 + int(binary.BigEndian.Uint16(p[4:]))
	default:
		return false
	}
	if exact {
		return n == len(p)
	}
	return n <= len(p) && len(p)-n < 46 // the most padding a minimum Ethernet frame has
}

// wholeEther reports whether p is an Ethernet frame (one VLAN tag at
// most) carrying one whole IP packet, or an ARP packet for IPv4 over
// Ethernet (what an overlay carries besides IP).
func wholeEther(p []byte) bool {
	if len(p) < 14 {
		return false
	}
	et, rest := binary.BigEndian.Uint16(p[12:]), p[14:]
	if et == 0x8100 && len(rest) >= 4 {
		et, rest = binary.BigEndian.Uint16(rest[2:]), rest[4:]
	}
	switch et {
	case 0x0800:
		return wholeIP(rest, 4, false)
	case 0x86dd:
		return wholeIP(rest, 6, false)
	case 0x0806:
		return len(rest) >= 28 && len(rest) < 28+46 && string(rest[:6]) == "\x00\x01\x08\x00\x06\x04"
	}
	return false
}
