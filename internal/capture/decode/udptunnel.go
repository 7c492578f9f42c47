package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// UDPTunnel is a tunnel recognised by its UDP port (destination, else
// source; see Decoder.udp for what a datagram on a tunnel's port is taken
// for).
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

// udpTunnels is the Decoder's port table: a fixed array, scanned.
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

// kind returns the tunnel on port, 0 for none.
func (u *udpTunnels) kind(port uint16) EncapLayer {
	for _, t := range u.t[:u.n] {
		if t.Port == port {
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

// udp decodes a UDP datagram. Its destination port decides first: a
// datagram to a tunnel's port is decoded as the tunnel. Else one that looks
// like QUIC (when d.quic) is QUIC, whatever its source port: a client
// sending from a tunnel's port cannot hide its ClientHello. Else one from a
// tunnel's port is decoded as the tunnel. When a datagram does not decode
// as the tunnel it was taken for, it is tried as what it otherwise is:
// QUIC when it looks like QUIC; from a tunnel's port only, plain UDP
// (other). Either is counted by the reason ReasonTunnelPort, which names
// the tunnel tried.
func (d *Decoder) udp(data []byte, seg *Segment) (Result, Reason, error) {
	if len(data) < 8 {
		return Malformed, Reason{}, errShortUDP
	}
	be := binary.BigEndian
	src, dst := be.Uint16(data), be.Uint16(data[2:])
	p := udpPayload(data)
	if kind := d.tunnels.kind(dst); kind != 0 {
		return d.tunnelOr(kind, false, data, seg, Reason{ReasonTunnelPort, uint32(kind)})
	}
	if d.ClaimUDP != nil && d.ClaimUDP(p, src, dst) {
		why := Reason{ReasonIPProtocol, 17}
		if kind := d.tunnels.kind(src); kind != 0 {
			why = Reason{ReasonTunnelPort, uint32(kind)}
		}
		return d.quicDatagram(seg, src, dst, p, why)
	}
	if kind := d.tunnels.kind(src); kind != 0 {
		return d.tunnelOr(kind, true, data, seg, Reason{ReasonTunnelPort, uint32(kind)})
	}
	if d.tunnels.n > 0 { // no tunnel is decoded when none is configured
		kind, rejected := contentTunnel(p)
		if kind != 0 {
			return d.tunnelOr(kind, true, data, seg, Reason{ReasonTunnelContent, uint32(kind)})
		}
		if rejected != 0 {
			return Other, Reason{ReasonTunnelContent, uint32(rejected)}, nil
		}
	}
	return Other, Reason{ReasonIPProtocol, 17}, nil
}

// quicDatagram fills seg with a UDP datagram that looks like QUIC: the
// addresses of the innermost IP header, the ports, the payload.
func (d *Decoder) quicDatagram(seg *Segment, src, dst uint16, p []byte, why Reason) (Result, Reason, error) {
	d.addrs(seg, src, dst)
	seg.Payload = p
	seg.Encap = d.encap
	seg.Path = d.path.sum()
	return Datagram, why, nil
}

// tunnelOr decodes a UDP datagram as the tunnel kind, taken from its
// destination port, else (fromSrc) its source port. When that finds
// neither TCP, nor QUIC, nor a fragment inside, the datagram is tried as
// what it otherwise is (see udp), as it came: the tunnel's layer and path
// taken back, the addresses those of its own IP header. A QUIC Initial
// that happens to read as a tunnel carrying something else is still
// QUIC: the QUIC reader records nothing that does not authenticate.
//
// A datagram taken for a tunnel by its content (udpcontent.go) is tried
// as from the tunnel's port; when it does not read as the tunnel after
// all, it is plain UDP (or QUIC), counted by rejected: the reason given
// (ReasonTunnelPort for a tunnel's port).
func (d *Decoder) tunnelOr(kind EncapLayer, fromSrc bool, data []byte, seg *Segment, rejected Reason) (Result, Reason, error) {
	be := binary.BigEndian
	src, dst := be.Uint16(data), be.Uint16(data[2:])
	var srcIP, dstIP [16]byte // the tunnel overwrites d.ip4 or d.ip6
	v6 := d.v6
	if v6 {
		copy(srcIP[:], d.ip6.SrcIP.To16())
		copy(dstIP[:], d.ip6.DstIP.To16())
	} else {
		copy(srcIP[:], d.ip4.SrcIP.To4())
		copy(dstIP[:], d.ip4.DstIP.To4())
	}
	encapN, pathN := d.encap.n, d.path.n
	d.pathEndpoints()
	res, why, err := d.tunnel(kind, data[8:], seg)
	if res == TCP || res == Datagram || res == Fragment || d.Reassembled {
		return res, why, err
	}
	p := udpPayload(data)
	quic := d.ClaimUDP != nil && d.ClaimUDP(p, src, dst)
	if !quic && (!fromSrc || res == Other) {
		// To the tunnel's port: the tunnel's, undecoded or malformed. From
		// it, the tunnel's too when it read as the tunnel (a Teredo bubble,
		// ICMPv6 inside).
		return res, why, err
	}
	d.encap.n, d.path.n = encapN, pathN
	if v6 {
		seg.Src = netip.AddrPortFrom(netip.AddrFrom16(srcIP), src)
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom16(dstIP), dst)
	} else {
		seg.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(srcIP[:4])), src)
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(dstIP[:4])), dst)
	}
	why = rejected
	if !quic {
		return Other, why, nil
	}
	seg.Payload = p
	seg.Encap = d.encap
	seg.Path = d.path.sum()
	return Datagram, why, nil
}

// tunnel decodes p, a UDP payload, as the tunnel kind.
func (d *Decoder) tunnel(kind EncapLayer, p []byte, seg *Segment) (Result, Reason, error) {
	if !d.encap.push(kind) {
		return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
	}
	be := binary.BigEndian
	notDecoded, signal := Reason{ReasonTunnel, uint32(kind)}, Reason{ReasonTunnelSignal, uint32(kind)}
	switch kind {
	case EncapVXLAN: // flags (I), reserved, VNI, reserved; then Ethernet
		if len(p) < 8 {
			return Malformed, Reason{}, errShortTun
		}
		if p[0]&0x08 == 0 {
			return Undecoded, notDecoded, nil
		}
		d.path.field(EncapVXLAN, uint32(p[4])<<16|uint32(p[5])<<8|uint32(p[6]), 3)
		return d.innerEther(p[8:], seg)
	case EncapGeneve: // version, option length, flags, protocol, VNI; options
		if len(p) < 8 {
			return Malformed, Reason{}, errShortTun
		}
		n := 8 + int(p[0]&0x3f)*4
		if p[0]>>6 != 0 {
			return Undecoded, notDecoded, nil
		}
		if len(p) < n {
			return Malformed, Reason{}, errShortTun
		}
		d.path.field(EncapGeneve, uint32(p[4])<<16|uint32(p[5])<<8|uint32(p[6]), 3)
		proto := be.Uint16(p[2:])
		if proto == 0x6558 {
			return d.innerEther(p[n:], seg)
		}
		return d.etherType(proto, p[n:], seg)
	case EncapGTP: // GTPv1-U: G-PDU carries IP
		if len(p) < 8 {
			return Malformed, Reason{}, errShortTun
		}
		if p[0]>>5 != 1 || p[0]&0x10 == 0 {
			return Undecoded, notDecoded, nil
		}
		if p[1] != 0xff { // echo, error indication, end marker ...: no user data
			return Other, signal, nil
		}
		n := 8
		if p[0]&0x07 != 0 { // sequence number, N-PDU number, next extension type
			n = 12
			if len(p) < n {
				return Malformed, Reason{}, errShortTun
			}
			for next, i := p[11], 0; next != 0; i++ {
				if i == 8 || len(p) < n+4 || p[n] == 0 || len(p) < n+int(p[n])*4 {
					return Malformed, Reason{}, errShortTun
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
					return Malformed, Reason{}, errShortTun
				}
				p = p[8:]
			case 1: // authentication
				if len(p) < 4 || len(p) < 4+int(p[2])+int(p[3])+9 {
					return Malformed, Reason{}, errShortTun
				}
				p = p[4+int(p[2])+int(p[3])+9:]
			default:
				return Undecoded, notDecoded, nil
			}
		}
		if len(p) == 0 || p[0]>>4 != 6 {
			return Other, signal, nil // a bubble, or not Teredo
		}
		if len(p) >= 40 && p[4]|p[5] == 0 && p[6] == 59 {
			return Other, signal, nil // a bubble: an IPv6 header with no next header and nothing after it (RFC 4380 §2.8)
		}
		return d.ip(p, seg)
	case EncapAYIYA: // identity, signature, next header
		if len(p) < 8 {
			return Malformed, Reason{}, errShortTun
		}
		n := 8 + 1<<(p[0]>>4) + int(p[1]>>4)*4
		if len(p) < n {
			return Malformed, Reason{}, errShortTun
		}
		if p[2]&0x0f != 1 || (p[3] != 4 && p[3] != 41) { // not a forward of IP
			return Other, signal, nil
		}
		return d.ip(p[n:], seg)
	}
	return Undecoded, notDecoded, nil
}
