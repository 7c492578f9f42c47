package capture

import (
	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"net"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var testMAC = net.HardwareAddr{2, 0, 0, 0, 0, 1}

// serialize builds a frame from gopacket layers.
func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func ethOf(et layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: testMAC, DstMAC: testMAC, EthernetType: et}
}

func ip4Of(p layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, TTL: 64, Protocol: p, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
}

// TestReasons: frames without TCP are counted by reason, as other (read,
// not TCP) or undecoded (a format not decoded), never as malformed.
func TestReasons(t *testing.T) {
	arp := serialize(t, ethOf(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: testMAC, SourceProtAddress: []byte{192, 0, 2, 1},
		DstHwAddress: testMAC, DstProtAddress: []byte{192, 0, 2, 2}})
	icmp := serialize(t, ethOf(layers.EthernetTypeIPv4), ip4Of(layers.IPProtocolICMPv4), &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)})
	u, ip := &layers.UDP{SrcPort: 1, DstPort: 53}, ip4Of(layers.IPProtocolUDP)
	u.SetNetworkLayerForChecksum(ip)
	udp := serialize(t, ethOf(layers.EthernetTypeIPv4), ip, u, gopacket.Payload("q"))
	lcp := serialize(t, ethOf(layers.EthernetTypePPPoESession), gopacket.Payload("\x11\x00\x00\x01\x00\x06\xc0\x21\x01\x01\x00\x04"))
	pppOther := serialize(t, ethOf(layers.EthernetTypePPPoESession), gopacket.Payload("\x11\x00\x00\x01\x00\x06\x00\x3d\x01\x01\x00\x04"))
	vlanMACsec := serialize(t, ethOf(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 5, Type: 0x88e5}, gopacket.Payload("\x00\x01\x01\x40"))
	llc := serialize(t, &layers.Ethernet{SrcMAC: testMAC, DstMAC: testMAC, EthernetType: layers.EthernetTypeLLC}, gopacket.Payload("\x42\x42\x03\x00\x00\x00\x00\x00"))
	fr := func(b []byte, n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = b
		}
		return out
	}
	cat := func(fs ...[][]byte) (out [][]byte) {
		for _, f := range fs {
			out = append(out, f...)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		link      layers.LinkType
		frames    [][]byte
		other     uint64
		undecoded uint64
		counts    []ReasonCount
		describe  []string
	}{
		{"802.15.4", 195, fr([]byte("\x41\xc8\x00\xff\xff\xff\xff"), 26), 0, 26,
			[]ReasonCount{{Reason: Reason{Kind: decode.ReasonLinkType, Code: 195}, Frames: 26}},
			[]string{"26 frames of link type 195 (IEEE 802.15.4) were not decoded"}},
		{"unnamed link type", 4000, fr([]byte("x"), 1), 0, 1,
			[]ReasonCount{{Reason: Reason{Kind: decode.ReasonLinkType, Code: 4000}, Frames: 1}},
			[]string{"1 frame of link type 4000 was not decoded"}},
		{"ethernet", layers.LinkTypeEthernet, cat(fr(arp, 3), fr(icmp, 2), fr(udp, 4), fr(lcp, 5), fr(pppOther, 1), fr(vlanMACsec, 6), fr(llc, 7)), 21, 7,
			[]ReasonCount{{Reason: Reason{Kind: decode.ReasonNonIP, Code: 0x0806}, Frames: 3}, {Reason: Reason{Kind: decode.ReasonIPProtocol, Code: 1}, Frames: 2}, {Reason: Reason{Kind: decode.ReasonIPProtocol, Code: 17}, Frames: 4},
				{Reason: Reason{Kind: decode.ReasonPPP, Code: 0xc021}, Frames: 5}, {Reason: Reason{Kind: decode.ReasonPPP, Code: 0x003d}, Frames: 1}, {Reason: Reason{Kind: decode.ReasonEtherType, Code: 0x88e5}, Frames: 6}, {Reason: Reason{Kind: decode.ReasonNonIP, Code: 0}, Frames: 7}},
			[]string{"1 frame of PPP protocol 0x003d was not decoded", "6 frames of EtherType 0x88e5 (MACsec) were not decoded"}},
		{"loopback family", layers.LinkTypeNull, fr([]byte("\x07\x00\x00\x00abcd"), 2), 0, 2,
			[]ReasonCount{{Reason: Reason{Kind: decode.ReasonFamily, Code: 7}, Frames: 2}},
			[]string{"2 frames of loopback address family 7 were not decoded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "in.pcap")
			writeCapture(t, p, fmtPcap, tc.link, tc.frames)
			_, st, err := replay(t, p)
			if err != nil {
				t.Fatal(err)
			}
			if st.DecodeErrors != 0 || st.Other != tc.other || st.Undecoded != tc.undecoded || st.Reasons.Undecoded() != tc.undecoded {
				t.Fatalf("malformed %d other %d undecoded %d (reasons %d), want 0 %d %d", st.DecodeErrors, st.Other, st.Undecoded,
					st.Reasons.Undecoded(), tc.other, tc.undecoded)
			}
			if got := st.Reasons.Counts(); !reflect.DeepEqual(got, tc.counts) {
				t.Errorf("reasons %v, want %v", got, tc.counts)
			}
			if got := st.Reasons.Describe(); !reflect.DeepEqual(got, tc.describe) {
				t.Errorf("described %q, want %q", got, tc.describe)
			}
		})
	}
}

// TestReasonsCap: past MaxReasons distinct reasons, frames are lumped (by
// undecoded or other), and counting allocates nothing.
func TestReasonsCap(t *testing.T) {
	e := NewEngine(nil, func(*Request) {})
	var frames [][]byte
	for i := range MaxReasons + 4 {
		frames = append(frames, serialize(t, ethOf(layers.EthernetType(0x9900+i)), gopacket.Payload("abcd")))
	}
	icmp := serialize(t, ethOf(layers.EthernetTypeIPv4), ip4Of(layers.IPProtocolICMPv4), &layers.ICMPv4{})
	frames = append(frames, icmp, icmp)
	for _, f := range frames {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
	}
	st := e.Stats()
	if n := len(st.Reasons.Counts()); n != MaxReasons {
		t.Fatalf("%d reasons, want %d", n, MaxReasons)
	}
	if st.Reasons.LumpedUndecoded != 4 || st.Reasons.LumpedOther != 2 || st.Reasons.Undecoded() != MaxReasons+4 || st.Undecoded != MaxReasons+4 || st.Other != 2 {
		t.Fatalf("lumped %d undecoded, %d other; undecoded %d (stats %d), other %d", st.Reasons.LumpedUndecoded,
			st.Reasons.LumpedOther, st.Reasons.Undecoded(), st.Undecoded, st.Other)
	}
	d := st.Reasons.Describe()
	if last := d[len(d)-1]; last != "4 frames of further link types or protocols were not decoded" {
		t.Errorf("last sentence %q", last)
	}
	var merged Reasons
	merged.Merge(&st.Reasons)
	merged.Merge(&st.Reasons)
	if merged.Undecoded() != 2*(MaxReasons+4) || merged.LumpedOther != 4 {
		t.Errorf("merged: undecoded %d, lumped other %d", merged.Undecoded(), merged.LumpedOther)
	}
	i := 0
	n := testing.AllocsPerRun(100, func() {
		e.Packet(&Packet{Data: frames[i%len(frames)], Link: layers.LinkTypeEthernet})
		e.Packet(&Packet{Data: frames[0], Link: 127})
		i++
	})
	if n != 0 {
		t.Fatalf("%v allocations per frame without TCP", n)
	}
}
