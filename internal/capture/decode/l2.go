package decode

import (
	"encoding/binary"
	"errors"
)

// Layer-2 encapsulations, walked by hand (no gopacket layer: nothing to
// allocate or copy) down to IPv4 or IPv6, which gopacket decodes.

var (
	errShortL2    = errors.New("frame ends inside a layer-2 header")
	errMPLSStack  = errors.New("MPLS label stack without a bottom label within 16 labels")
	errShortPPPoE = errors.New("PPPoE session header longer than the frame")
)

// MaxMPLSLabels is the most MPLS labels read in one stack.
const MaxMPLSLabels = 16

// ether decodes an Ethernet frame.
func (d *Decoder) ether(data []byte, seg *Segment) (Result, Reason, error) {
	if len(data) < 14 {
		return Malformed, Reason{}, errShortL2
	}
	return d.etherType(binary.BigEndian.Uint16(data[12:]), data[14:], seg)
}

// etherType decodes what follows an EtherType (or an 802.3 length) t:
// VLAN tags, PPPoE sessions, MPLS stacks and LLC/SNAP headers, each
// recorded in d.encap, down to IP; at most MaxEncap of them.
func (d *Decoder) etherType(t uint16, rest []byte, seg *Segment) (Result, Reason, error) {
	be := binary.BigEndian
	for {
		switch {
		case t == 0x0800:
			return d.ip(rest, seg)
		case t == 0x86dd:
			return d.ip(rest, seg)
		case t == 0x8100 || t == 0x88a8 || t == 0x9100:
			if len(rest) < 4 {
				return Malformed, Reason{}, errShortL2
			}
			l := EncapVLAN
			if t != 0x8100 {
				l = EncapQinQ
			}
			if !d.encap.push(l) {
				return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
			}
			d.path.field(l, uint32(be.Uint16(rest)&0x0fff), 2) // the VLAN ID
			t, rest = be.Uint16(rest[2:]), rest[4:]
		case t == 0x8864:
			if len(rest) < 7 { // the session header, then a protocol of one byte or more
				return Malformed, Reason{}, errShortPPPoE
			}
			if !d.encap.push(EncapPPPoE) {
				return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
			}
			d.path.field(EncapPPPoE, uint32(be.Uint16(rest[2:])), 2) // the session ID
			if n := int(be.Uint16(rest[4:])); n >= 1 && n <= len(rest)-6 {
				rest = rest[:6+n] // without the Ethernet padding
			}
			// RFC 2516 forbids address and control bytes and
			// protocol-field compression in a session, but senders use
			// both: they are read as on a PPP link.
			proto, payload, ok := pppHeader(rest[6:])
			if !ok {
				return Malformed, Reason{}, errShortPPPoE
			}
			return d.pppPayload(proto, payload, seg)
		case t == 0x8847 || t == 0x8848:
			if !d.encap.push(EncapMPLS) {
				return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
			}
			bottom := false
			for range MaxMPLSLabels {
				if len(rest) < 4 {
					return Malformed, Reason{}, errShortL2
				}
				bottom, rest = rest[2]&1 == 1, rest[4:]
				if bottom {
					break
				}
			}
			if !bottom {
				return Malformed, Reason{}, errMPLSStack
			}
			if len(rest) == 0 {
				return Malformed, Reason{}, errShortL2
			}
			// What follows the bottom label is told by its first nibble,
			// as tshark does: IPv4, IPv6, a pseudowire control word (0)
			// and Ethernet, else Ethernet without a control word.
			switch rest[0] >> 4 {
			case 4:
				t = 0x0800
				continue
			case 6:
				t = 0x86dd
				continue
			case 0:
				if len(rest) < 4 {
					return Malformed, Reason{}, errShortL2
				}
				rest = rest[4:]
			}
			if !d.encap.push(EncapEthernet) {
				return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
			}
			if len(rest) < 14 {
				return Malformed, Reason{}, errShortL2
			}
			t, rest = be.Uint16(rest[12:]), rest[14:]
		case t < 0x600: // an 802.3 length (or a Linux cooked capture protocol): LLC
			if len(rest) >= 8 && rest[0] == 0xaa && rest[1] == 0xaa && rest[2] == 3 { // SNAP
				if !d.encap.push(EncapLLC) {
					return Undecoded, Reason{ReasonEncapDepth, MaxEncap}, nil
				}
				t, rest = be.Uint16(rest[6:]), rest[8:]
				continue
			}
			return Other, Reason{ReasonNonIP, 0}, nil // STP, NetBIOS, IPX over LLC ...
		case nonIPEtherType(t):
			return Other, Reason{ReasonNonIP, uint32(t)}, nil
		default:
			return Undecoded, Reason{ReasonEtherType, uint32(t)}, nil
		}
	}
}
