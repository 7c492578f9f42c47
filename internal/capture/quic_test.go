package capture

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// quicCapture is one of internal/quic's committed captures of quic-go: raw IPv4,
// the client's datagrams and the server's.
func quicCapture(name string) string {
	return filepath.Join("..", "quic", "testdata", "quicgo-"+name+".pcap")
}

// runQUIC replays a capture with opts and returns its records' URLs.
func runQUIC(t *testing.T, opts *Options, path string) ([]string, Stats) {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var urls []string
	e := NewEngine(opts, func(r *Request) {
		if r.Proto != ProtoQUIC || len(r.Method) != 0 || len(r.Hello.ServerName) == 0 {
			t.Errorf("record %+v", r)
		}
		urls = append(urls, string(r.URL))
	})
	if err := e.Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	return urls, e.Stats()
}

// QUIC records are made only when Protos has quic, and only for the
// server ports Ports lists; the datagrams stay counted as other (UDP).
func TestQUICProtosAndPorts(t *testing.T) {
	path := quicCapture("two-connections")
	for _, tc := range []struct {
		name string
		opts Options
		want int
	}{
		{"all", Options{}, 2},
		{"quic", Options{Protos: 1 << ProtoQUIC}, 2},
		{"http,tls,h2c", Options{Protos: AllProtos &^ (1 << ProtoQUIC)}, 0},
		{"port 443", Options{Ports: []uint16{443}}, 2},
		{"port 80", Options{Ports: []uint16{80}}, 0},
	} {
		urls, st := runQUIC(t, &tc.opts, path)
		if len(urls) != tc.want || st.Records[ProtoQUIC] != uint64(tc.want) || st.QUIC.Hellos != uint64(tc.want) || st.QUICFrames+st.Other != st.Packets || tc.want > 0 && st.QUICFrames == 0 {
			t.Errorf("%s: %q, stats %+v", tc.name, urls, st)
		}
		if tc.want > 0 && (urls[0] != "https://a.example/" || urls[1] != "https://b.example/") {
			t.Errorf("%s: %q", tc.name, urls)
		}
	}
}

// After a QUIC connection's ClientHello, its datagrams (and its server's)
// allocate nothing, nor do UDP datagrams that are not QUIC (DNS, a short
// header packet on 443).
func TestEngineAllocationsQUIC(t *testing.T) {
	src, err := OpenFiles(quicCapture("v1-two-initials"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var frames []Packet
	for {
		var p Packet
		if err := src.Next(&p); err != nil {
			break
		}
		p.Data = append([]byte(nil), p.Data...)
		frames = append(frames, p)
	}
	hellos := 0
	e := NewEngine(nil, func(r *Request) { hellos++ })
	for i := range frames {
		e.Packet(&frames[i])
	}
	if hellos != 1 || len(frames) < 4 {
		t.Fatalf("%d hellos in %d frames", hellos, len(frames))
	}
	c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:443")
	dns := udpFrame(t, c, netip.MustParseAddrPort("192.0.2.1:53"), []byte{0xc1, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0})
	short := udpFrame(t, c, s, []byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	before := e.Stats()
	all := append(frames, Packet{Data: dns, Link: layers.LinkTypeRaw}, Packet{Data: short, Link: layers.LinkTypeRaw})
	i := 0
	n := testing.AllocsPerRun(200, func() {
		e.Packet(&all[i%len(all)])
		i++
	})
	after := e.Stats()
	if n != 0 || hellos != 1 || after.QUIC.Late == before.QUIC.Late || after.QUIC.FromServer == before.QUIC.FromServer {
		t.Errorf("%v allocations per datagram; %d hellos; stats %+v", n, hellos, after.QUIC)
	}
}

// udpFrame is a raw IPv4 frame of one UDP datagram.
func udpFrame(t *testing.T, src, dst netip.AddrPort, payload []byte) []byte {
	t.Helper()
	udp := make([]byte, 8+len(payload))
	udp[0], udp[1] = byte(src.Port()>>8), byte(src.Port())
	udp[2], udp[3] = byte(dst.Port()>>8), byte(dst.Port())
	udp[4], udp[5] = byte(len(udp)>>8), byte(len(udp))
	copy(udp[8:], payload)
	n := 20 + len(udp)
	ip := []byte{0x45, 0, byte(n >> 8), byte(n), 0, 1, 0, 0, 64, 17, 0, 0}
	ip = append(ip, src.Addr().AsSlice()...)
	ip = append(ip, dst.Addr().AsSlice()...)
	return append(ip, udp...)
}

// addQUICSeeds adds the first frames of the QUIC captures (client
// Initials, the server's reply) to a fuzz corpus of (link type, frame).
func addQUICSeeds(f *testing.F) {
	for _, name := range []string{"v1", "v2", "v1-two-initials", "retry"} {
		src, err := OpenFiles(quicCapture(name))
		if err != nil {
			f.Fatal(err)
		}
		for range 3 {
			var p Packet
			if src.Next(&p) != nil {
				break
			}
			f.Add(uint16(p.Link), append([]byte(nil), p.Data...))
		}
		src.Close()
	}
}

// A QUIC record carries the encapsulation its datagrams came through, as
// a TLS or HTTP record does: quic-go's Initials, raw IPv4 in the capture,
// replayed inside a VLAN tag and plain.
func TestQUICRecordEncap(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func([]byte) []byte
		want string
	}{
		{"vlan", func(ip []byte) []byte { return cat(l2eth(0x8100), l2tag(10, 0x0800), ip) }, "https://a.example/ vlan"},
		{"plain", func(ip []byte) []byte { return cat(l2eth(0x0800), ip) }, "https://a.example/ "},
	} {
		src, err := OpenFiles(quicCapture("v1"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
		for {
			var p Packet
			if src.Next(&p) != nil {
				break
			}
			e.Packet(&Packet{Data: tc.wrap(p.Data), Link: layers.LinkTypeEthernet, Info: p.Info})
		}
		src.Close()
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: records %q, want [%q]", tc.name, got, tc.want)
		}
	}
}
