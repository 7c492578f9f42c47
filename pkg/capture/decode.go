package capture

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// decoder turns link-layer frames into TCP segments without allocating:
// link headers and layer-2 encapsulations by hand (l2.go), IP and TCP with
// gopacket's DecodingLayerParser over layers allocated once.
type decoder struct {
	lo      layers.Loopback
	ip4     layers.IPv4
	ip6     layers.IPv6
	tcp     layers.TCP
	payload gopacket.Payload

	loop    *gopacket.DecodingLayerParser // BSD loopback (NULL, LOOP)
	raw4    *gopacket.DecodingLayerParser
	raw6    *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType

	// encap is the last frame's encapsulation.
	encap Encap
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
	d := &decoder{}
	layersAll := []gopacket.DecodingLayer{&d.lo, &d.ip4, &d.ip6, &d.tcp, &d.payload}
	mk := func(first gopacket.LayerType) *gopacket.DecodingLayerParser {
		p := gopacket.NewDecodingLayerParser(first, layersAll...)
		p.IgnoreUnsupported = true
		return p
	}
	d.loop = mk(layers.LayerTypeLoopback)
	d.raw4, d.raw6 = mk(layers.LayerTypeIPv4), mk(layers.LayerTypeIPv6)
	d.decoded = make([]gopacket.LayerType, 0, 8)
	return d
}

// decode fills seg from a frame. seg.Payload aliases data. For a frame
// that carries no TCP segment (decodedOther, decodedNot) it returns why.
func (d *decoder) decode(lt layers.LinkType, data []byte, seg *Segment) (decodeResult, Reason, error) {
	d.encap.n = 0
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
		if err := d.loop.DecodeLayers(data, &d.decoded); err != nil {
			return decodedError, Reason{}, err
		}
		return d.segment(seg)
	case layers.LinkTypeRaw, 12, layers.LinkTypeIPv4, layers.LinkTypeIPv6: // 12: DLT_RAW on some systems
		if len(data) == 0 {
			return decodedError, Reason{}, errEmpty
		}
		if data[0]>>4 == 6 {
			return d.ip(d.raw6, data, seg)
		}
		return d.ip(d.raw4, data, seg)
	}
	return decodedNot, Reason{ReasonLinkType, uint32(lt)}, nil
}

// segment fills seg from the layers decoded.
func (d *decoder) segment(seg *Segment) (decodeResult, Reason, error) {
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

// why says where a frame without TCP stopped: at an IP protocol other than
// TCP (decodedOther), or at a loopback family not decoded (decodedNot).
// It reads the last layer decoded.
func (d *decoder) why() (decodeResult, Reason, error) {
	if len(d.decoded) == 0 {
		return decodedError, Reason{}, errEmpty
	}
	switch d.decoded[len(d.decoded)-1] {
	case layers.LayerTypeIPv4:
		return decodedOther, Reason{ReasonIPProtocol, uint32(d.ip4.Protocol)}, nil
	case layers.LayerTypeIPv6:
		return decodedOther, Reason{ReasonIPProtocol, uint32(d.ip6.NextHeader)}, nil
	case layers.LayerTypeLoopback:
		return decodedNot, Reason{ReasonFamily, uint32(d.lo.Family)}, nil
	}
	return decodedOther, Reason{}, nil
}
