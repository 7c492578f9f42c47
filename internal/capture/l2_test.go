package capture

import (
	"encoding/binary"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"github.com/urldedupd/urldedupd/internal/tsharktest"
)

// Layer-2 headers for built frames, by hand (as the wire has them).
func l2eth(et uint16) []byte {
	return binary.BigEndian.AppendUint16([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}, et)
}
func l2tag(vid, et uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, vid), et)
}
func l2pppoe(ip []byte, v6 bool) []byte {
	proto := uint16(0x0021)
	if v6 {
		proto = 0x0057
	}
	h := []byte{0x11, 0, 0x12, 0x34}
	h = binary.BigEndian.AppendUint16(h, uint16(len(ip)+2))
	return binary.BigEndian.AppendUint16(h, proto)
}

// l2pppoeShort is a PPPoE session header whose PPP header has the HDLC
// address and control bytes when acfc is false, and a protocol field
// compressed to one byte (Protocol-Field Compression).
func l2pppoeShort(ip []byte, v6, addrControl bool) []byte {
	ppp := []byte{0x21}
	if v6 {
		ppp[0] = 0x57
	}
	if addrControl {
		ppp = cat([]byte{0xff, 0x03}, ppp)
	}
	h := []byte{0x11, 0, 0x12, 0x35}
	h = binary.BigEndian.AppendUint16(h, uint16(len(ip)+len(ppp)))
	return cat(h, ppp)
}
func l2label(label uint32, bottom bool) []byte {
	v := label<<12 | 64
	if bottom {
		v |= 1 << 8
	}
	return binary.BigEndian.AppendUint32(nil, v)
}
func ipEtype(v6 bool) uint16 {
	if v6 {
		return 0x86dd
	}
	return 0x0800
}
func cat(bs ...[]byte) []byte { return slices.Concat(bs...) }

// l2Cases wrap an IP packet in each layer-2 encapsulation, with the
// encapsulation the request must report.
var l2Cases = []struct {
	name  string
	wrap  func(ip []byte, v6 bool) []byte
	encap string
}{
	{"plain", func(ip []byte, v6 bool) []byte { return cat(l2eth(ipEtype(v6)), ip) }, ""},
	{"vlan", func(ip []byte, v6 bool) []byte { return cat(l2eth(0x8100), l2tag(10, ipEtype(v6)), ip) }, "vlan"},
	{"qinq", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x88a8), l2tag(100, 0x8100), l2tag(10, ipEtype(v6)), ip)
	}, "qinq/vlan"},
	{"three tags", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x9100), l2tag(1, 0x88a8), l2tag(2, 0x8100), l2tag(3, ipEtype(v6)), ip)
	}, "qinq/qinq/vlan"},
	{"pppoe", func(ip []byte, v6 bool) []byte { return cat(l2eth(0x8864), l2pppoe(ip, v6), ip) }, "pppoe"},
	{"pppoe pfc", func(ip []byte, v6 bool) []byte { return cat(l2eth(0x8864), l2pppoeShort(ip, v6, false), ip) }, "pppoe"},
	{"pppoe address control pfc", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x8864), l2pppoeShort(ip, v6, true), ip)
	}, "pppoe"},
	{"vlan pppoe", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x8100), l2tag(7, 0x8864), l2pppoe(ip, v6), ip)
	}, "vlan/pppoe"},
	{"mpls ip", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x8847), l2label(100, false), l2label(200, true), ip)
	}, "mpls"},
	{"mpls pw with control word", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x8847), l2label(300, true), []byte{0, 0, 0, 0}, l2eth(ipEtype(v6)), ip)
	}, "mpls/ethernet"},
	{"mpls pw without control word", func(ip []byte, v6 bool) []byte {
		return cat(l2eth(0x8847), l2label(301, true), []byte{0xa2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}, binary.BigEndian.AppendUint16(nil, ipEtype(v6)), ip)
	}, "mpls/ethernet"},
	{"llc snap", func(ip []byte, v6 bool) []byte {
		llc := cat([]byte{0xaa, 0xaa, 3, 0, 0, 0}, binary.BigEndian.AppendUint16(nil, ipEtype(v6)))
		return cat(l2eth(uint16(len(llc)+len(ip))), llc, ip)
	}, "llc"},
}

// Every layer-2 encapsulation, IPv4 and IPv6: the request is found once
// with its encapsulation, and tshark finds the same requests in the same
// frames.
func TestL2Encapsulations(t *testing.T) {
	var all [][]byte
	var want []string
	for _, v6 := range []bool{false, true} {
		c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
		if v6 {
			c, s = netip.MustParseAddrPort("[2001:db8::10]:40000"), netip.MustParseAddrPort("[2001:db8::1]:80")
		}
		for i, tc := range l2Cases {
			host := strings.ReplaceAll(tc.name, " ", "-") + ".example"
			src := netip.AddrPortFrom(c.Addr(), c.Port()+uint16(i))
			syn := frame(t, linkRaw, tcpSeg{src: src, dst: s, seq: 1, syn: true})
			data := frame(t, linkRaw, tcpSeg{src: src, dst: s, seq: 2, ack: true, payload: get("/"+tc.encap, host)})
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
			for _, ip := range [][]byte{syn, data} {
				f := tc.wrap(ip, v6)
				all = append(all, f)
				e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
			}
			e.asm.Flush()
			w := "http://" + host + "/" + tc.encap + " " + tc.encap
			if st := e.Stats(); len(got) != 1 || got[0] != w || st.TCP != 2 || st.DecodeErrors+st.Other+st.Undecoded != 0 {
				t.Errorf("%s (IPv6 %v): %q, want %q; stats %+v", tc.name, v6, got, w, st)
			}
			if tc.name != "pppoe address control pfc" { // RFC 2516 forbids them, and tshark 4.0 does not read them
				want = append(want, "http://"+host+"/"+tc.encap)
			}
		}
	}
	p := filepath.Join(t.TempDir(), "l2.pcap")
	writeCapture(t, p, fmtPcap, layers.LinkTypeEthernet, all)
	// tshark reads MPLS pseudowires only when told which labels carry them.
	out, err := exec.Command("tshark", "-r", p, "-d", "mpls.label==300,pwethcw", "-d", "mpls.label==301,pwethnocw",
		"-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, want) {
		t.Errorf("tshark finds\n%q\nwant\n%q", got, want)
	}
}

// More than MaxEncap layers: undecoded, counted by that reason; a frame
// that ends inside a layer-2 header is malformed.
func TestL2Bounds(t *testing.T) {
	ip := frame(t, linkRaw, tcpSeg{src: netip.MustParseAddrPort("192.0.2.10:40000"), dst: netip.MustParseAddrPort("192.0.2.1:80"), seq: 1, syn: true})
	deep := l2eth(0x8100)
	for i := range MaxEncap {
		et := uint16(0x8100)
		if i == MaxEncap-1 {
			et = 0x0800
		}
		deep = cat(deep, l2tag(uint16(i), et))
	}
	deeper := cat(l2eth(0x8100), l2tag(99, 0x8100), deep[14:])
	stack := l2eth(0x8847)
	for i := range decode.MaxMPLSLabels + 1 {
		stack = cat(stack, l2label(uint32(i), false))
	}
	e := NewEngine(nil, func(*Request) {})
	for _, f := range [][]byte{cat(deep, ip), cat(deeper, ip), cat(stack, ip), l2eth(0x8100)[:13], cat(l2eth(0x8864), []byte{0x11, 0})} {
		e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
	}
	st := e.Stats()
	if st.TCP != 1 || st.Undecoded != 1 || st.DecodeErrors != 3 || len(st.Reasons.Counts()) != 1 || st.Reasons.Counts()[0].Reason != (Reason{Kind: decode.ReasonEncapDepth, Code: MaxEncap}) {
		t.Fatalf("stats %+v", st)
	}
	if d := st.Reasons.Describe(); len(d) != 1 || d[0] != "1 frame of encapsulation deeper than 8 layers was not decoded" {
		t.Fatalf("%q", d)
	}
}

// Real traffic (http.pcap: curl's requests, scripts/make-captures.sh)
// re-framed as a PPPoE session whose PPP header uses Protocol-Field
// Compression (one byte, 0x21 or 0x57: no PPP stack runs in this kernel
// to make such a capture directly): every request is found, as in the
// plain capture, with "encap":"pppoe", and tshark finds the same.
func TestPPPoECompressedRealTraffic(t *testing.T) {
	src, err := OpenFiles("testdata/captures/http.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var frames [][]byte
	for {
		var p Packet
		if err := src.Next(&p); err != nil {
			break
		}
		if len(p.Data) < 14 {
			continue
		}
		et := binary.BigEndian.Uint16(p.Data[12:])
		if et != 0x0800 && et != 0x86dd {
			continue
		}
		ip := p.Data[14:]
		proto := byte(0x21)
		if et == 0x86dd {
			proto = 0x57
		}
		h := binary.BigEndian.AppendUint16([]byte{0x11, 0, 0x12, 0x34}, uint16(len(ip)+1))
		frames = append(frames, cat(p.Data[:12], []byte{0x88, 0x64}, h, []byte{proto}, ip))
	}
	if len(frames) < 50 {
		t.Fatalf("%d frames", len(frames))
	}
	path := filepath.Join(t.TempDir(), "pppoe.pcap")
	writeCapture(t, path, fmtPcap, layers.LinkTypeEthernet, frames)
	want := readLines(t, "testdata/captures/http.urls")
	var got []string
	st := runEngine(t, nil, path, func(r *Request) {
		if r.Encap.String() != "pppoe" {
			t.Errorf("%s: encap %q", r.URL, r.Encap)
		}
		got = append(got, string(r.Method)+" "+string(r.URL))
	})
	slices.Sort(got)
	if !slices.Equal(got, want) || st.Undecoded != 0 || st.DecodeErrors != 0 {
		t.Errorf("got %q\nwant %q\nundecoded %d malformed %d", got, want, st.Undecoded, st.DecodeErrors)
	}
	if fromTshark := tsharktest.Requests(t, path); !slices.Equal(fromTshark, want) {
		t.Errorf("tshark finds\n%q\nwant\n%q", fromTshark, want)
	}
}
