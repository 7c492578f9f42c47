package decode

import (
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Segment is the part of a TCP segment the assembler needs, as the
// Decoder fills it from a frame (for a QUIC datagram: its addresses and
// payload).
type Segment struct {
	Src, Dst netip.AddrPort
	Seq      uint32
	SYN      bool
	ACK      bool
	FIN      bool
	RST      bool
	Payload  []byte
	Encap    Encap // what the segment came through; kept per direction for Request.Encap
	// Path identifies the encapsulation path (VLAN IDs, VNI, tunnel
	// endpoints and keys; see encap.go), the same both ways: a direction
	// is keyed by its addresses and Path, so that tenants reusing
	// addresses are kept apart. 0 without identifying encapsulation.
	// Engine sets it from the Decoder.
	Path uint64
}

// Decoder turns link-layer frames into TCP segments without allocating:
// link headers, layer-2 encapsulations (l2.go) and tunnels (ip.go,
// udptunnel.go) by hand; IPv4, IPv6 and TCP headers with gopacket's layers,
// allocated once.
type Decoder struct {
	lo  layers.Loopback
	ip4 layers.IPv4
	ip6 layers.IPv6
	tcp layers.TCP
	v6  bool // the innermost IP header is d.ip6, else d.ip4

	tunnels udpTunnels
	frag    *defragmenter

	// ClaimUDP, when set, is asked of every UDP datagram that is not a
	// tunnel's: one it claims (QUIC, for package capture) is decoded as a
	// Datagram, its addresses and payload in the Segment.
	ClaimUDP func(payload []byte, src, dst uint16) bool
	// Now is the frame's time, for fragment timeouts: set it before
	// Decode.
	Now time.Time
	// Reassembled says the frame Decode took completed an IP datagram
	// from fragments.
	Reassembled bool
	// encap is the frame's encapsulation, built as it is decoded and
	// copied into its Segment.
	encap Encap
	// path is the identity of the frame's encapsulation (encap.go), built
	// as it is decoded: in the keys of fragments and of its Segment.
	path encapPath
}

// Result says what a frame was.
type Result uint8

// What a frame was.
const (
	TCP       Result = iota // a TCP segment, in the Segment
	Other                   // not TCP over IP: not counted as an error
	Fragment                // an IPv4 or IPv6 fragment that did not complete its datagram
	Malformed               // malformed: the error says why
	Undecoded               // of a format not decoded (a link type, EtherType ...): counted by reason
	Datagram                // a UDP datagram ClaimUDP claimed: its addresses and payload in the Segment; other too
)

// New returns a Decoder recognising the given UDP tunnels
// (DefaultUDPTunnels when nil) and reassembling IP fragments.
func New(tunnels []UDPTunnel, defrag DefragOptions) *Decoder {
	d := &Decoder{frag: newDefragmenter(defrag)}
	if tunnels == nil {
		tunnels = DefaultUDPTunnels
	}
	d.tunnels.set(tunnels)
	return d
}

// Decode fills seg from a frame of link type lt. seg.Payload aliases data.
// For a frame that carries no TCP segment (Other, Undecoded) it returns
// why; for a Malformed one, the error.
func (d *Decoder) Decode(lt layers.LinkType, data []byte, seg *Segment) (Result, Reason, error) {
	d.encap.n = 0
	d.path.n = 0
	d.Reassembled = false
	switch lt {
	case layers.LinkTypeEthernet:
		return d.ether(data, seg)
	case layers.LinkTypeLinuxSLL:
		if len(data) < 16 {
			return Malformed, Reason{}, errShortL2
		}
		return d.etherType(binary.BigEndian.Uint16(data[14:]), data[16:], seg)
	case layers.LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return Malformed, Reason{}, errShortL2
		}
		return d.etherType(binary.BigEndian.Uint16(data[0:]), data[20:], seg)
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if err := d.lo.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return Malformed, Reason{}, err
		}
		switch d.lo.Family {
		case layers.ProtocolFamilyIPv4, layers.ProtocolFamilyIPv6BSD, layers.ProtocolFamilyIPv6FreeBSD,
			layers.ProtocolFamilyIPv6Darwin, layers.ProtocolFamilyIPv6Linux:
			return d.ip(d.lo.Payload, seg)
		}
		return Undecoded, Reason{ReasonFamily, uint32(d.lo.Family)}, nil
	case layers.LinkTypeRaw, 12, layers.LinkTypeIPv4, layers.LinkTypeIPv6: // 12: DLT_RAW on some systems
		return d.ip(data, seg)
	case layers.LinkTypeIEEE802_11:
		return d.wlan(data, seg)
	case layers.LinkTypeIEEE80211Radio, LinkTypePrism, LinkTypeAVS, LinkTypePPI:
		return d.radio(lt, data, seg)
	case LinkTypeNFLOG:
		return d.nflog(data, seg)
	case layers.LinkTypePPP, LinkTypePPPHDLC:
		return d.ppp(data, seg)
	case LinkTypePPPWithD:
		if len(data) < 1 {
			return Malformed, Reason{}, errShortPPP
		}
		return d.ppp(data[1:], seg)
	}
	return Undecoded, Reason{ReasonLinkType, uint32(lt)}, nil
}

// FragStats returns the counts of fragment reassembly so far.
func (d *Decoder) FragStats() FragStats { return d.frag.stats }

// CountInvalid counts a reassembled datagram that did not decode
// (FragStats.Invalid).
func (d *Decoder) CountInvalid() { d.frag.stats.Invalid++ }
