package capture

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// FuzzDecode runs arbitrary frames of every link type decoded through an
// Engine: never a panic, every frame counted exactly once (TCP, other,
// fragment, malformed or undecoded), an encapsulation of at most MaxEncap
// layers, and only absolute URLs.
func FuzzDecode(f *testing.F) {
	t := &testing.T{}
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
	ip := frame(t, linkRaw, tcpSeg{src: c, dst: s, seq: 2, ack: true, payload: get("/fuzz", "f.example")})
	for _, tc := range l2Cases {
		f.Add(uint16(layers.LinkTypeEthernet), tc.wrap(ip, false))
	}
	for _, tc := range tunnelCases {
		if !tc.v6 {
			f.Add(uint16(layers.LinkTypeEthernet), tc.wrap(t, ip))
		}
	}
	for _, tc := range linkCases {
		f.Add(uint16(tc.link), tc.wrap(ip))
	}
	for _, l := range []link{linkSLL, linkSLL2, linkNull, linkRaw} {
		f.Add(uint16(l.type_()), frame(t, l, tcpSeg{src: c, dst: s, seq: 2, ack: true, payload: get("/fuzz", "f.example")}))
	}
	f.Add(uint16(127), []byte{0, 0, 8, 0, 0, 0, 0, 0})
	for _, a := range [][2]string{{"192.0.2.10:40000", "192.0.2.1:80"}, {"[2001:db8::10]:40000", "[2001:db8::1]:80"}} {
		req := frame(t, linkRaw, tcpSeg{src: netip.MustParseAddrPort(a[0]), dst: netip.MustParseAddrPort(a[1]), seq: 2, ack: true, payload: get("/frag", "f.example")})
		for _, fr := range fragmentIP(t, req, 24, 5) { // each alone; the second copy of one fragment completes nothing
			f.Add(uint16(layers.LinkTypeRaw), fr)
		}
		fr := fragmentIP(t, req, 4096, 6) // one piece: for IPv6 an atomic fragment (offset 0, no more)
		f.Add(uint16(layers.LinkTypeRaw), fr[0])
	}
	// UDP tunnels on ports that are not theirs, found by content.
	f.Add(uint16(layers.LinkTypeEthernet), outer(t, false, layers.IPProtocolUDP, 40001, cat([]byte{8, 0, 0, 0, 0, 0, 42, 0}, l2eth(0x0800), ip)))
	ip6 := frame(t, linkRaw, tcpSeg{src: netip.MustParseAddrPort("[2001:db8::10]:40000"), dst: netip.MustParseAddrPort("[2001:db8::1]:80"), seq: 2, ack: true, payload: get("/fuzz", "f.example")})
	f.Add(uint16(layers.LinkTypeEthernet), outer(t, false, layers.IPProtocolUDP, 40002, ip6))
	f.Add(uint16(layers.LinkTypeEthernet), outer(t, false, layers.IPProtocolUDP, 40003, cat([]byte{0, 0, 0xf2, 0x3f, 0x3f, 0x5c, 0x63, 0x9a}, ip6)))
	addQUICSeeds(f)
	f.Fuzz(func(t *testing.T, lt uint16, data []byte) {
		var urls []string
		e := NewEngine(nil, func(r *Request) {
			urls = append(urls, string(r.URL))
			if len(r.Encap.Layers()) > MaxEncap {
				t.Fatalf("encapsulation of %d layers", len(r.Encap.Layers()))
			}
		})
		for _, d := range [][]byte{data, data} { // twice: a second copy can complete a request
			e.Packet(&Packet{Data: d, Link: layers.LinkType(lt)})
		}
		e.asm.Flush()
		st := e.Stats()
		if st.TCP+st.Other+st.QUICFrames+st.Fragments+st.DecodeErrors+st.Undecoded != st.Packets || st.Reasons.Undecoded() != st.Undecoded {
			t.Fatalf("frames counted %+v", st)
		}
		for _, u := range urls {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") { // https: a TLS or QUIC ClientHello
				t.Fatalf("URL %q", u)
			}
		}
	})
}
