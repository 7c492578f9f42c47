package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// UDPTunnel is a tunnel recognised by its UDP port (destination, else
// source).
type UDPTunnel struct {
	Kind EncapLayer // EncapVXLAN, EncapGeneve, EncapGTP, EncapTeredo or EncapAYIYA
	Port uint16
}

// DefaultUDPTunnels are the IANA ports of the UDP tunnels decoded, and
// Linux's old VXLAN port.
var DefaultUDPTunnels = []UDPTunnel{
	{EncapVXLAN, 4789}, {EncapVXLAN, 8472}, {EncapGeneve, 6081}, {EncapGTP, 2152},
	{EncapTeredo, 3544}, {EncapAYIYA, 5072},
}

// MaxUDPTunnels is the most UDP tunnel ports configured at once.
const MaxUDPTunnels = 32

// ErrTunnelSpec is returned by ParseUDPTunnel for a specification that is
// not KIND:PORT with a known kind and a port in 1..65535.
var ErrTunnelSpec = errors.New("not a UDP tunnel (KIND:PORT, KIND one of vxlan, geneve, gtp, teredo, ayiya)")

// ParseUDPTunnel parses "vxlan:4789".
func ParseUDPTunnel(s string) (UDPTunnel, error) {
	kind, port, ok := strings.Cut(s, ":")
	p, err := strconv.ParseUint(port, 10, 16)
	if !ok || err != nil || p == 0 {
		return UDPTunnel{}, fmt.Errorf("%q: %w", s, ErrTunnelSpec)
	}
	for _, k := range []EncapLayer{EncapVXLAN, EncapGeneve, EncapGTP, EncapTeredo, EncapAYIYA} {
		if k.String() == kind {
			return UDPTunnel{k, uint16(p)}, nil
		}
	}
	return UDPTunnel{}, fmt.Errorf("%q: %w", s, ErrTunnelSpec)
}

// udpTunnels is the decoder's port table: a fixed array, scanned.
type udpTunnels struct {
	t [MaxUDPTunnels]UDPTunnel
	n int
}

func (u *udpTunnels) set(ts []UDPTunnel) {
	u.n = 0
	for _, t := range ts {
		if u.n < MaxUDPTunnels {
			u.t[u.n] = t
			u.n++
		}
	}
}

func (u *udpTunnels) kind(src, dst uint16) EncapLayer {
	for _, t := range u.t[:u.n] {
		if t.Port == dst {
			return t.Kind
		}
	}
	for _, t := range u.t[:u.n] {
		if t.Port == src {
			return t.Kind
		}
	}
	return 0
}

// udpPayload returns a UDP datagram's payload: up to the UDP length when
// it is within the packet, else the rest of the packet.
func udpPayload(data []byte) []byte {
	if n := int(binary.BigEndian.Uint16(data[4:])); n >= 8 && n <= len(data) {
		return data[8:n]
	}
	return data[8:]
}

// udp decodes a UDP datagram: a tunnel by its port; QUIC (when d.quic),
// its addresses and payload in seg; else other.
func (d *decoder) udp(data []byte, seg *Segment) (decodeResult, Reason, error) {
	if len(data) < 8 {
		return decodedError, Reason{}, errShortUDP
	}
	be := binary.BigEndian
	src, dst := be.Uint16(data), be.Uint16(data[2:])
	kind := d.tunnels.kind(src, dst)
	if kind == 0 {
		if p := udpPayload(data); d.quic && isQUIC(p, src, dst) {
			d.addrs(seg, src, dst)
			seg.Payload = p
			seg.Encap = d.encap
			return decodedQUIC, Reason{ReasonIPProtocol, 17}, nil
		}
		return decodedOther, Reason{ReasonIPProtocol, 17}, nil
	}
	if !d.encap.push(kind) {
		return decodedNot, Reason{ReasonEncapDepth, MaxEncap}, nil
	}
	d.pathEndpoints()
	p := data[8:]
	notDecoded, signal := Reason{ReasonTunnel, uint32(kind)}, Reason{ReasonTunnelSignal, uint32(kind)}
	switch kind {
	case EncapVXLAN: // flags (I), reserved, VNI, reserved; then Ethernet
		if len(p) < 8 {
			return decodedError, Reason{}, errShortTun
		}
		if p[0]&0x08 == 0 {
			return decodedNot, notDecoded, nil
		}
		d.path.field(EncapVXLAN, uint32(p[4])<<16|uint32(p[5])<<8|uint32(p[6]), 3)
		return d.innerEther(p[8:], seg)
	case EncapGeneve: // version, option length, flags, protocol, VNI; options
		if len(p) < 8 {
			return decodedError, Reason{}, errShortTun
		}
		n := 8 + int(p[0]&0x3f)*4
		if p[0]>>6 != 0 {
			return decodedNot, notDecoded, nil
		}
		if len(p) < n {
			return decodedError, Reason{}, errShortTun
		}
		d.path.field(EncapGeneve, uint32(p[4])<<16|uint32(p[5])<<8|uint32(p[6]), 3)
		proto := be.Uint16(p[2:])
		if proto == 0x6558 {
			return d.innerEther(p[n:], seg)
		}
		return d.etherType(proto, p[n:], seg)
	case EncapGTP: // GTPv1-U: G-PDU carries IP
		if len(p) < 8 {
			return decodedError, Reason{}, errShortTun
		}
		if p[0]>>5 != 1 || p[0]&0x10 == 0 {
			return decodedNot, notDecoded, nil
		}
		if p[1] != 0xff { // echo, error indication, end marker ...: no user data
			return decodedOther, signal, nil
		}
		n := 8
		if p[0]&0x07 != 0 { // sequence number, N-PDU number, next extension type
			n = 12
			if len(p) < n {
				return decodedError, Reason{}, errShortTun
			}
			for next, i := p[11], 0; next != 0; i++ {
				if i == 8 || len(p) < n+4 || p[n] == 0 || len(p) < n+int(p[n])*4 {
					return decodedError, Reason{}, errShortTun
				}
				n += int(p[n]) * 4
				next = p[n-1]
			}
		}
		return d.ip(p[n:], seg)
	case EncapTeredo: // IPv6, after an origin indication or authentication header
		for i := 0; i < 2 && len(p) >= 2 && p[0] == 0; i++ {
			switch p[1] {
			case 0: // origin indication
				if len(p) < 8 {
					return decodedError, Reason{}, errShortTun
				}
				p = p[8:]
			case 1: // authentication
				if len(p) < 4 || len(p) < 4+int(p[2])+int(p[3])+9 {
					return decodedError, Reason{}, errShortTun
				}
				p = p[4+int(p[2])+int(p[3])+9:]
			default:
				return decodedNot, notDecoded, nil
			}
		}
		if len(p) == 0 || p[0]>>4 != 6 {
			return decodedOther, signal, nil // a bubble, or not Teredo
		}
		return d.ip(p, seg)
	case EncapAYIYA: // identity, signature, next header
		if len(p) < 8 {
			return decodedError, Reason{}, errShortTun
		}
		n := 8 + 1<<(p[0]>>4) + int(p[1]>>4)*4
		if len(p) < n {
			return decodedError, Reason{}, errShortTun
		}
		if p[2]&0x0f != 1 || (p[3] != 4 && p[3] != 41) { // not a forward of IP
			return decodedOther, signal, nil
		}
		return d.ip(p[n:], seg)
	}
	return decodedNot, notDecoded, nil
}
