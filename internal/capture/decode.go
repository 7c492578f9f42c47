package capture

import (
	"encoding/binary"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// decoder turns link-layer frames into TCP segments without allocating:
// link headers, layer-2 encapsulations (l2.go) and tunnels (ip.go,
// udptunnel.go) by hand; IPv4, IPv6 and TCP headers with gopacket's layers,
// allocated once.
type decoder struct {
	lo  layers.Loopback
	ip4 layers.IPv4
	ip6 layers.IPv6
	tcp layers.TCP
	v6  bool // the innermost IP header is d.ip6, else d.ip4

	tunnels udpTunnels
	quic    bool // UDP datagrams that look like QUIC are decodedQUIC
	frag    *defragmenter
	// now is the frame's time, for fragment timeouts.
	now time.Time
	// reassembled says the frame completed an IP datagram from fragments.
	reassembled bool
	// encap is the frame's encapsulation, built as it is decoded and
	// copied into its Segment.
	encap Encap
	// path is the identity of the frame's encapsulation (encap.go), built
	// as it is decoded: in the keys of fragments and of its Segment.
	path encapPath
}

// decodeResult says what a frame was.
type decodeResult uint8

const (
	decodedTCP      decodeResult = iota
	decodedOther                 // not TCP over IP: not counted as an error
	decodedFragment              // an IPv4 or IPv6 fragment that did not complete its datagram
	decodedError                 // malformed
	decodedNot                   // of a format not decoded (a link type, EtherType ...): counted by reason
	decodedQUIC                  // a UDP datagram that looks like QUIC (see isQUIC): its addresses and payload in the segment; other too
)

// newDecoder returns a decoder recognising the given UDP tunnels
// (DefaultUDPTunnels when nil) and reassembling IP fragments.
func newDecoder(tunnels []UDPTunnel, defrag DefragOptions) *decoder {
	d := &decoder{frag: newDefragmenter(defrag)}
	if tunnels == nil {
		tunnels = DefaultUDPTunnels
	}
	d.tunnels.set(tunnels)
	return d
}

// decode fills seg from a frame. seg.Payload aliases data. For a frame
// that carries no TCP segment (decodedOther, decodedNot) it returns why.
func (d *decoder) decode(lt layers.LinkType, data []byte, seg *Segment) (decodeResult, Reason, error) {
	d.encap.n = 0
	d.path.n = 0
	d.reassembled = false
	switch lt {
	case layers.LinkTypeEthernet:
		return d.ether(data, seg)
	case layers.LinkTypeLinuxSLL:
		if len(data) < 16 {
			return decodedError, Reason{}, errShortL2
		}
		return d.etherType(binary.BigEndian.Uint16(data[14:]), data[16:], seg)
	case layers.LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return decodedError, Reason{}, errShortL2
		}
		return d.etherType(binary.BigEndian.Uint16(data[0:]), data[20:], seg)
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if err := d.lo.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return decodedError, Reason{}, err
		}
		switch d.lo.Family {
		case layers.ProtocolFamilyIPv4, layers.ProtocolFamilyIPv6BSD, layers.ProtocolFamilyIPv6FreeBSD,
			layers.ProtocolFamilyIPv6Darwin, layers.ProtocolFamilyIPv6Linux:
			return d.ip(d.lo.Payload, seg)
		}
		return decodedNot, Reason{ReasonFamily, uint32(d.lo.Family)}, nil
	case layers.LinkTypeRaw, 12, layers.LinkTypeIPv4, layers.LinkTypeIPv6: // 12: DLT_RAW on some systems
		return d.ip(data, seg)
	case layers.LinkTypeIEEE802_11:
		return d.wlan(data, seg)
	case layers.LinkTypeIEEE80211Radio, linkTypePrism, linkTypeAVS, linkTypePPI:
		return d.radio(lt, data, seg)
	case linkTypeNFLOG:
		return d.nflog(data, seg)
	case layers.LinkTypePPP, linkTypePPPHDLC:
		return d.ppp(data, seg)
	case linkTypePPPWithD:
		if len(data) < 1 {
			return decodedError, Reason{}, errShortPPP
		}
		return d.ppp(data[1:], seg)
	}
	return decodedNot, Reason{ReasonLinkType, uint32(lt)}, nil
}
