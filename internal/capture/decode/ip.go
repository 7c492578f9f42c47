package decode

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var (
	errEmpty          = errors.New("empty frame")
	errIPVersion      = errors.New("IP version neither 4 nor 6")
	errShortExt       = errors.New("IPv6 extension header longer than the packet")
	errShortUDP       = errors.New("UDP header longer than the packet")
	errShortTun       = errors.New("tunnel header longer than the packet")
	errFragInDatagram = errors.New("IP fragment inside a reassembled datagram")
)

// maxIPv6Ext is the most IPv6 extension headers skipped before the
// transport header; a packet with more is malformed.
const maxIPv6Ext = 8

// ip decodes an IPv4 or IPv6 packet (told by its first nibble) and what it
// carries: TCP, or a tunnel (IP in IP, GRE, a UDP tunnel) down to TCP, at
// most MaxEncap tunnels deep.
func (d *Decoder) ip(data []byte, seg *Segment) (Result, Reason, error) {
	for {
		if len(data) == 0 {
			return Malformed, Reason{}, errEmpty
		}
		var proto layers.IPProtocol
		var payload []byte
		switch data[0] >> 4 {
		case 4:
			if err := d.ip4.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				return Malformed, Reason{}, err
			}
			d.v6, proto, payload = false, d.ip4.Protocol, d.ip4.Payload
			if d.ip4.Flags&layers.IPv4MoreFragments != 0 || d.ip4.FragOffset != 0 {
				if d.Reassembled {
					return Malformed, Reason{}, errFragInDatagram
				}
				key := fragKey{id: uint32(d.ip4.Id), proto: uint8(proto), path: d.path.sum()}
				copy(key.src[:], d.ip4.SrcIP.To4())
				copy(key.dst[:], d.ip4.DstIP.To4())
				buf, _, ok := d.frag.add(d.Now, key, int(d.ip4.FragOffset)*8, d.ip4.Flags&layers.IPv4MoreFragments != 0, 0, payload)
				if !ok {
					return Fragment, Reason{}, nil
				}
				d.Reassembled, payload = true, buf
			}
		case 6:
			if err := d.ip6.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
				return Malformed, Reason{}, err
			}
			d.v6, proto, payload = true, d.ip6.NextHeader, d.ip6.Payload
			if d.ip6.HopByHop != nil { // skipped by DecodeFromBytes
				proto = d.ip6.HopByHop.NextHeader
			}
			// hop-by-hop, routing, destination options, fragment
			for i := 0; proto == 0 || proto == 43 || proto == 60 || proto == layers.IPProtocolIPv6Fragment; i++ {
				if i == maxIPv6Ext || len(payload) < 8 {
					return Malformed, Reason{}, errShortExt
				}
				if proto == layers.IPProtocolIPv6Fragment {
					if d.Reassembled {
						return Malformed, Reason{}, errFragInDatagram
					}
					key := fragKey{id: binary.BigEndian.Uint32(payload[4:]), v6: true, path: d.path.sum()}
					copy(key.src[:], d.ip6.SrcIP.To16())
					copy(key.dst[:], d.ip6.DstIP.To16())
					off := int(binary.BigEndian.Uint16(payload[2:]) &^ 7)
					buf, next, ok := d.frag.add(d.Now, key, off, payload[3]&1 != 0, payload[0], payload[8:])
					if !ok {
						return Fragment, Reason{}, nil
					}
					d.Reassembled, proto, payload = true, layers.IPProtocol(next), buf
					continue
				}
				if (int(payload[1])+1)*8 > len(payload) {
					return Malformed, Reason{}, errShortExt
				}
				proto, payload = layers.IPProtocol(payload[0]), payload[(int(payload[1])+1)*8:]
			}
		default:
			return Malformed, Reason{}, errIPVersion
		}
		switch proto {
		case layers.IPProtocolTCP:
			return d.tcpSegment(payload, seg)
		case layers.IPProtocolIPv4, layers.IPProtocolIPv6:
			l := EncapIPIP
			switch {
			case d.v6 && proto == layers.IPProtocolIPv4:
				l = Encap4in6
			case d.v6:
				l = Encap6in6
			case proto == layers.IPProtocolIPv6:
				l = Encap6in4
			}
			if !d.encap.push(l) {
				return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
			}
			d.pathEndpoints()
			data = payload
			continue
		case layers.IPProtocolGRE:
			d.pathEndpoints()
			return d.gre(payload, seg)
		case layers.IPProtocolUDP:
			return d.udp(payload, seg)
		}
		return Other, Reason{ReasonIPProtocol, uint32(proto)}, nil
	}
}

// tcpSegment fills seg from a TCP header and the innermost IP header.
func (d *Decoder) tcpSegment(data []byte, seg *Segment) (Result, Reason, error) {
	t := &d.tcp
	if err := t.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		return Malformed, Reason{}, err
	}
	d.addrs(seg, uint16(t.SrcPort), uint16(t.DstPort))
	seg.Seq, seg.SYN, seg.ACK, seg.FIN, seg.RST = t.Seq, t.SYN, t.ACK, t.FIN, t.RST
	seg.Payload = t.Payload
	seg.Encap = d.encap
	seg.Path = d.path.sum()
	return TCP, Reason{}, nil
}

// pathEndpoints adds the endpoints of the IP header just decoded, which
// carries a tunnel, to the path.
func (d *Decoder) pathEndpoints() {
	if d.v6 {
		d.path.endpoints(d.ip6.SrcIP.To16(), d.ip6.DstIP.To16())
	} else {
		d.path.endpoints(d.ip4.SrcIP.To4(), d.ip4.DstIP.To4())
	}
}

// addrs sets seg's addresses from the innermost IP header and the ports.
func (d *Decoder) addrs(seg *Segment, src, dst uint16) {
	if d.v6 {
		seg.Src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d.ip6.SrcIP.To16())), src)
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d.ip6.DstIP.To16())), dst)
	} else {
		seg.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d.ip4.SrcIP.To4())), src)
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d.ip4.DstIP.To4())), dst)
	}
}

// gre decodes a GRE header (RFC 2784/2890: checksum, key and sequence
// number optional) and what it carries: IP, Ethernet (transparent
// Ethernet bridging), ERSPAN types I, II and III, or any EtherType
// decoded (MPLS ...).
func (d *Decoder) gre(data []byte, seg *Segment) (Result, Reason, error) {
	if !d.encap.push(EncapGRE) {
		return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
	}
	if len(data) < 4 {
		return Malformed, Reason{}, errShortTun
	}
	be := binary.BigEndian
	flags, proto := be.Uint16(data), be.Uint16(data[2:])
	if flags&7 != 0 || flags&0x4000 != 0 { // version 1 (PPTP), source routing
		return Undecoded, Reason{ReasonTunnel, uint32(EncapGRE)}, nil
	}
	n := 4
	if flags&0x8000 != 0 { // checksum
		n += 4
	}
	if flags&0x2000 != 0 { // key
		n += 4
	}
	if flags&0x1000 != 0 { // sequence number
		n += 4
	}
	if len(data) < n {
		return Malformed, Reason{}, errShortTun
	}
	if flags&0x2000 != 0 { // the key, after the checksum
		k := 4
		if flags&0x8000 != 0 {
			k = 8
		}
		d.path.field(EncapGRE, be.Uint32(data[k:]), 4)
	}
	rest := data[n:]
	switch proto {
	case 0x6558: // transparent Ethernet bridging
		return d.innerEther(rest, seg)
	case 0x88be, 0x22eb: // ERSPAN: type I has no sequence number, no header
		if !d.encap.push(EncapERSPAN) {
			return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
		}
		h := 0
		switch {
		case proto == 0x22eb: // type III: 12 bytes, 8 more with the O flag
			h = 12
			if len(rest) >= 12 && rest[11]&1 != 0 {
				h = 20
			}
		case flags&0x1000 != 0: // type II
			h = 8
		}
		if len(rest) < h {
			return Malformed, Reason{}, errShortTun
		}
		if h > 0 { // types II and III: the session ID
			d.path.field(EncapERSPAN, uint32(be.Uint16(rest[2:])&0x3ff), 2)
		}
		return d.innerEther(rest[h:], seg)
	}
	return d.etherType(proto, rest, seg)
}

// innerEther decodes an Ethernet frame carried by a tunnel.
func (d *Decoder) innerEther(data []byte, seg *Segment) (Result, Reason, error) {
	if !d.encap.push(EncapEthernet) {
		return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
	}
	return d.ether(data, seg)
}
