package decode

import (
	"encoding/binary"
	"errors"

	"github.com/gopacket/gopacket/layers"
)

// Link types read by hand: IEEE 802.11 (bare, or behind a radiotap, Prism,
// AVS or PPI header), NFLOG and PPP.

// Link types not named by gopacket, decoded here.
const (
	LinkTypePrism    layers.LinkType = 119
	LinkTypeAVS      layers.LinkType = 163
	LinkTypePPPHDLC  layers.LinkType = 50
	LinkTypePPPWithD layers.LinkType = 204 // PPP with a direction byte
	LinkTypePPI      layers.LinkType = 192
	LinkTypeNFLOG    layers.LinkType = 239
)

var (
	errShortRadio = errors.New("frame ends inside its radio header")
	errShortWLAN  = errors.New("frame ends inside its 802.11 header")
	errShortNFLOG = errors.New("frame ends inside an NFLOG TLV")
	errShortPPP   = errors.New("frame ends inside its PPP header")
)

// radio skips a radio header (radiotap, Prism, AVS, PPI) and decodes the
// 802.11 frame after it.
func (d *Decoder) radio(lt layers.LinkType, data []byte, seg *Segment) (Result, Reason, error) {
	var n int
	switch lt {
	case layers.LinkTypeIEEE80211Radio: // it_len, little-endian
		if len(data) < 4 {
			return Malformed, Reason{}, errShortRadio
		}
		n = int(binary.LittleEndian.Uint16(data[2:]))
	case LinkTypePrism: // msglen, host order: little-endian in practice
		if len(data) < 8 {
			return Malformed, Reason{}, errShortRadio
		}
		n = int(binary.LittleEndian.Uint32(data[4:]))
		if n > 0xffff {
			n = int(binary.BigEndian.Uint32(data[4:]))
		}
	case LinkTypeAVS: // header length, big-endian
		if len(data) < 8 {
			return Malformed, Reason{}, errShortRadio
		}
		n = int(binary.BigEndian.Uint32(data[4:]))
	case LinkTypePPI: // pph_len and pph_dlt, little-endian
		if len(data) < 8 {
			return Malformed, Reason{}, errShortRadio
		}
		n = int(binary.LittleEndian.Uint16(data[2:]))
		switch dlt := binary.LittleEndian.Uint32(data[4:]); dlt {
		case uint32(layers.LinkTypeIEEE802_11):
		case uint32(layers.LinkTypeEthernet):
			if n > len(data) {
				return Malformed, Reason{}, errShortRadio
			}
			return d.ether(data[n:], seg)
		default:
			return Undecoded, Reason{ReasonLinkType, dlt}, nil
		}
	}
	if n < 4 || n > len(data) {
		return Malformed, Reason{}, errShortRadio
	}
	return d.wlan(data[n:], seg)
}

// wlan decodes an 802.11 frame: data and QoS data frames with LLC/SNAP
// inside; management and control frames, null data and protected
// (encrypted) frames carry nothing readable.
func (d *Decoder) wlan(data []byte, seg *Segment) (Result, Reason, error) {
	if len(data) < 24 {
		return Malformed, Reason{}, errShortWLAN
	}
	fc0, fc1 := data[0], data[1]
	typ, sub := fc0>>2&3, fc0>>4
	if fc0&3 != 0 || typ != 2 { // protocol version 0, data frames only
		return Other, Reason{ReasonWLAN, uint32(typ)}, nil
	}
	if sub&4 != 0 { // null data, QoS null: no payload
		return Other, Reason{ReasonWLAN, 2}, nil
	}
	if fc1&0x40 != 0 {
		return Undecoded, Reason{ReasonWLANProtected, 0}, nil
	}
	n := 24
	if fc1&3 == 3 { // to and from DS: a fourth address
		n += 6
	}
	if sub&8 != 0 { // QoS control, and an HT control with the order flag
		n += 2
		if fc1&0x80 != 0 {
			n += 4
		}
	}
	if len(data) < n {
		return Malformed, Reason{}, errShortWLAN
	}
	rest := data[n:]
	if len(rest) >= 8 && rest[0] == 0xaa && rest[1] == 0xaa && rest[2] == 3 {
		return d.etherType(binary.BigEndian.Uint16(rest[6:]), rest[8:], seg)
	}
	return Other, Reason{ReasonNonIP, 0}, nil
}

// nflog decodes an NFLOG frame: a 4-byte header (address family, version,
// group), then TLVs (length and type in host order: little-endian on the
// machines that write them, told apart by a sane length), the packet in
// NFULA_PAYLOAD (9), an IP packet.
func (d *Decoder) nflog(data []byte, seg *Segment) (Result, Reason, error) {
	if len(data) < 4 {
		return Malformed, Reason{}, errShortNFLOG
	}
	rest := data[4:]
	for i := 0; len(rest) > 0; i++ {
		if len(rest) < 4 || i == 64 {
			return Malformed, Reason{}, errShortNFLOG
		}
		l, t := int(binary.LittleEndian.Uint16(rest)), binary.LittleEndian.Uint16(rest[2:])
		if l < 4 || l > len(rest) {
			l, t = int(binary.BigEndian.Uint16(rest)), binary.BigEndian.Uint16(rest[2:])
		}
		if l < 4 || l > len(rest) {
			return Malformed, Reason{}, errShortNFLOG
		}
		if t&0x7fff == 9 {
			return d.ip(rest[4:l], seg)
		}
		rest = rest[min((l+3)&^3, len(rest)):]
	}
	return Other, Reason{ReasonNoPacket, 0}, nil // no payload logged
}

// ppp decodes a PPP frame (a raw PPP link type), with or without its
// HDLC address and control bytes, with a 1- or 2-byte protocol field.
func (d *Decoder) ppp(data []byte, seg *Segment) (Result, Reason, error) {
	proto, data, ok := pppHeader(data)
	if !ok {
		return Malformed, Reason{}, errShortPPP
	}
	return d.pppPayload(proto, data, seg)
}

// pppHeader reads the start of a PPP frame: the HDLC address and control
// bytes (0xff 0x03) when they are there (Address-and-Control-Field
// Compression leaves them out), then the protocol, in one byte when its
// first byte is odd (Protocol-Field Compression, RFC 1661 §6.5: 0x21 for
// IPv4) or else in two. ok is false when the frame ends first.
func pppHeader(data []byte) (proto uint16, rest []byte, ok bool) {
	if len(data) >= 2 && data[0] == 0xff && data[1] == 0x03 {
		data = data[2:]
	}
	switch {
	case len(data) >= 1 && data[0]&1 == 1:
		return uint16(data[0]), data[1:], true
	case len(data) >= 2:
		return binary.BigEndian.Uint16(data), data[2:], true
	}
	return 0, nil, false
}

// pppPayload decodes what a PPP frame of protocol proto carries: IPv4,
// IPv6 or MPLS; a control protocol (LCP, IPCP, PAP, CHAP ...) is other,
// any other protocol undecoded, by its number.
func (d *Decoder) pppPayload(proto uint16, data []byte, seg *Segment) (Result, Reason, error) {
	switch {
	case proto == 0x0021, proto == 0x0057:
		return d.ip(data, seg)
	case proto == 0x0281: // MPLS
		return d.etherType(0x8847, data, seg)
	case proto >= 0x8000:
		return Other, Reason{ReasonPPP, uint32(proto)}, nil
	}
	return Undecoded, Reason{ReasonPPP, uint32(proto)}, nil
}
