package capture

import (
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// decoder turns link-layer frames into TCP segments without allocating:
// gopacket's DecodingLayerParser over layers allocated once.
type decoder struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	sll     layers.LinuxSLL
	sll2    layers.LinuxSLL2
	lo      layers.Loopback
	ip4     layers.IPv4
	ip6     layers.IPv6
	tcp     layers.TCP
	payload gopacket.Payload

	parsers map[layers.LinkType]*gopacket.DecodingLayerParser
	raw4    *gopacket.DecodingLayerParser
	raw6    *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

// decodeResult says what a frame was.
type decodeResult uint8

const (
	decodedTCP      decodeResult = iota
	decodedOther                 // not TCP over IP: not counted as an error
	decodedFragment              // an IPv4 fragment: not reassembled
	decodedError                 // malformed
	decodedNot                   // of a format not decoded (a link type, EtherType ...): counted by reason
)

func newDecoder() *decoder {
	d := &decoder{parsers: make(map[layers.LinkType]*gopacket.DecodingLayerParser)}
	layersAll := []gopacket.DecodingLayer{&d.eth, &d.dot1q, &d.sll, &d.sll2, &d.lo, &d.ip4, &d.ip6, &d.tcp, &d.payload}
	mk := func(first gopacket.LayerType) *gopacket.DecodingLayerParser {
		p := gopacket.NewDecodingLayerParser(first, layersAll...)
		p.IgnoreUnsupported = true
		return p
	}
	d.parsers[layers.LinkTypeEthernet] = mk(layers.LayerTypeEthernet)
	d.parsers[layers.LinkTypeLinuxSLL] = mk(layers.LayerTypeLinuxSLL)
	d.parsers[layers.LinkTypeLinuxSLL2] = mk(layers.LayerTypeLinuxSLL2)
	d.parsers[layers.LinkTypeNull] = mk(layers.LayerTypeLoopback)
	d.parsers[layers.LinkTypeLoop] = d.parsers[layers.LinkTypeNull]
	d.raw4, d.raw6 = mk(layers.LayerTypeIPv4), mk(layers.LayerTypeIPv6)
	d.parsers[layers.LinkTypeIPv4] = d.raw4
	d.parsers[layers.LinkTypeIPv6] = d.raw6
	d.decoded = make([]gopacket.LayerType, 0, 8)
	return d
}

// supported reports whether frames of link type lt can be decoded.
func (d *decoder) supported(lt layers.LinkType) bool {
	_, ok := d.parsers[lt]
	return ok || lt == layers.LinkTypeRaw || lt == 12 // DLT_RAW on some systems
}

// decode fills seg from a frame. seg.Payload aliases data. For a frame
// that carries no TCP segment (decodedOther, decodedNot) it returns why.
func (d *decoder) decode(lt layers.LinkType, data []byte, seg *Segment) (decodeResult, Reason, error) {
	p := d.parsers[lt]
	if p == nil {
		if !d.supported(lt) {
			return decodedNot, Reason{ReasonLinkType, uint32(lt)}, nil
		}
		if len(data) == 0 {
			return decodedError, Reason{}, errEmpty
		}
		p = d.raw4
		if data[0]>>4 == 6 {
			p = d.raw6
		}
	}
	if err := p.DecodeLayers(data, &d.decoded); err != nil {
		return decodedError, Reason{}, err
	}
	var haveIP4, haveIP6, haveTCP bool
	for _, t := range d.decoded {
		switch t {
		case layers.LayerTypeIPv4:
			haveIP4 = true
		case layers.LayerTypeIPv6:
			haveIP6 = true
		case layers.LayerTypeTCP:
			haveTCP = true
		}
	}
	switch {
	case haveIP4 && (d.ip4.Flags&layers.IPv4MoreFragments != 0 || d.ip4.FragOffset != 0):
		return decodedFragment, Reason{}, nil
	case !haveTCP:
		return d.why()
	case haveIP4:
		seg.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d.ip4.SrcIP.To4())), uint16(d.tcp.SrcPort))
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(d.ip4.DstIP.To4())), uint16(d.tcp.DstPort))
	case haveIP6:
		seg.Src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d.ip6.SrcIP.To16())), uint16(d.tcp.SrcPort))
		seg.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(d.ip6.DstIP.To16())), uint16(d.tcp.DstPort))
	default:
		return decodedOther, Reason{ReasonIPProtocol, uint32(layers.IPProtocolTCP)}, nil
	}
	t := &d.tcp
	seg.Seq, seg.SYN, seg.ACK, seg.FIN, seg.RST = t.Seq, t.SYN, t.ACK, t.FIN, t.RST
	seg.Payload = t.Payload
	return decodedTCP, Reason{}, nil
}

// why says where a frame without TCP stopped: at a protocol carrying no IP
// or at an IP protocol other than TCP (decodedOther), or at one not decoded
// (decodedNot). It reads the last layer decoded.
func (d *decoder) why() (decodeResult, Reason, error) {
	if len(d.decoded) == 0 {
		return decodedError, Reason{}, errEmpty
	}
	var next uint16
	switch d.decoded[len(d.decoded)-1] {
	case layers.LayerTypeIPv4:
		return decodedOther, Reason{ReasonIPProtocol, uint32(d.ip4.Protocol)}, nil
	case layers.LayerTypeIPv6:
		return decodedOther, Reason{ReasonIPProtocol, uint32(d.ip6.NextHeader)}, nil
	case layers.LayerTypeLoopback:
		return decodedNot, Reason{ReasonFamily, uint32(d.lo.Family)}, nil
	case layers.LayerTypeEthernet:
		next = uint16(d.eth.EthernetType) // 0 for an 802.3 length frame (LLC)
	case layers.LayerTypeDot1Q:
		next = uint16(d.dot1q.Type)
	case layers.LayerTypeLinuxSLL:
		next = uint16(d.sll.EthernetType)
	case layers.LayerTypeLinuxSLL2:
		next = uint16(d.sll2.ProtocolType)
	default:
		return decodedOther, Reason{}, nil
	}
	if nonIPEtherType(next) {
		return decodedOther, Reason{ReasonNonIP, uint32(next)}, nil
	}
	return decodedNot, Reason{ReasonEtherType, uint32(next)}, nil
}
