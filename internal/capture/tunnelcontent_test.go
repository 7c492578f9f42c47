package capture

import (
	"encoding/binary"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/urldedupd/urldedupd/internal/capture/decode"
)

// The UDP tunnels on ports that are not theirs, found by content: each
// request is found once with its encapsulation, and tshark, told each
// port's tunnel (Teredo by its heuristic), finds the same requests. A
// GTP-U header with extension headers is not tried by content: its
// request is not found, and the datagram is counted as tried and
// rejected.
func TestTunnelsByContent(t *testing.T) {
	const port = 40001
	cases := []struct {
		name   string
		v6     bool
		wrap   func(t *testing.T, ip []byte) []byte
		encap  string
		tshark string // -d for tshark
	}{
		{"vxlan", false, func(t *testing.T, ip []byte) []byte {
			return outer(t, false, layers.IPProtocolUDP, port, cat([]byte{8, 0, 0, 0, 0, 0, 42, 0}, l2eth(0x0800), ip))
		}, "vxlan/ethernet", "vxlan"},
		{"vxlan vlan", true, func(t *testing.T, ip []byte) []byte {
			return outer(t, false, layers.IPProtocolUDP, port+1, cat([]byte{8, 0, 0, 0, 0, 0, 43, 0}, l2eth(0x8100), l2tag(9, 0x86dd), ip))
		}, "vxlan/ethernet/vlan", "vxlan"},
		{"geneve", true, func(t *testing.T, ip []byte) []byte {
			return outer(t, false, layers.IPProtocolUDP, port+2, cat([]byte{1, 0, 0x65, 0x58, 0, 0, 5, 0, 1, 2, 3, 0}, l2eth(0x86dd), ip))
		}, "geneve/ethernet", "geneve"},
		{"gtp", false, func(t *testing.T, ip []byte) []byte {
			h := binary.BigEndian.AppendUint16([]byte{0x30, 0xff}, uint16(len(ip)))
			return outer(t, false, layers.IPProtocolUDP, port+3, cat(h, []byte{0, 0, 0, 9}, ip))
		}, "gtp", "gtp"},
		{"teredo", true, func(t *testing.T, ip []byte) []byte {
			return outer(t, false, layers.IPProtocolUDP, port+4, ip)
		}, "teredo", ""},
		{"teredo origin indication", true, func(t *testing.T, ip []byte) []byte {
			return outer(t, false, layers.IPProtocolUDP, port+5, cat([]byte{0, 0, 0xf2, 0x3f, 0x3f, 0x5c, 0x63, 0x9a}, ip))
		}, "teredo", ""},
		{"ayiya", true, func(t *testing.T, ip []byte) []byte {
			h := cat([]byte{0x41, 0x52, 0x11, 41, 0, 0, 0, 1}, make([]byte, 16+20))
			return outer(t, false, layers.IPProtocolUDP, port+6, cat(h, ip))
		}, "ayiya", "ayiya"},
	}
	var all [][]byte
	var want []string
	args := []string{"-o", "teredo.heuristic_teredo:TRUE"}
	for i, tc := range cases {
		c, s := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("192.0.2.1:80")
		if tc.v6 {
			c, s = netip.MustParseAddrPort("[2001:db8::10]:40000"), netip.MustParseAddrPort("[2001:db8::1]:80")
		}
		c = netip.AddrPortFrom(c.Addr(), c.Port()+uint16(i))
		host := strings.ReplaceAll(tc.name, " ", "-") + ".example"
		var got []string
		e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
		for _, seg := range []tcpSeg{{src: c, dst: s, seq: 1, syn: true}, {src: c, dst: s, seq: 2, ack: true, payload: get("/"+tc.encap, host)}} {
			f := tc.wrap(t, frame(t, linkRaw, seg))
			all = append(all, f)
			e.Packet(&Packet{Data: f, Link: layers.LinkTypeEthernet})
		}
		e.asm.Flush()
		w := "http://" + host + "/" + tc.encap
		if st := e.Stats(); len(got) != 1 || got[0] != w+" "+tc.encap || st.TCP != 2 || len(st.Reasons.Counts()) != 0 {
			t.Errorf("%s: %q, want %q; stats %+v", tc.name, got, w+" "+tc.encap, st)
		}
		want = append(want, w)
		if tc.tshark != "" {
			args = append(args, "-d", "udp.port=="+strconv.Itoa(port+i)+","+tc.tshark)
		}
	}
	p := filepath.Join(t.TempDir(), "tunnels.pcap")
	writeCapture(t, p, fmtPcap, layers.LinkTypeEthernet, all)
	out, err := exec.Command("tshark", append(append([]string{"-r", p}, args...), "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri")...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, want) {
		t.Errorf("tshark finds\n%q\nwant\n%q", got, want)
	}
}

// What is tried by content and rejected: a datagram whose start is a
// tunnel's header but whose inside is not a whole IP packet is counted by
// that reason (once, whatever else it might have been) and read as plain
// UDP; a datagram that matches no header is plain UDP, as before; with no
// UDP tunnel configured nothing is tried.
func TestTunnelsByContentRejected(t *testing.T) {
	ip6 := frame(t, linkRaw, tcpSeg{src: netip.MustParseAddrPort("[2001:db8::10]:40000"), dst: netip.MustParseAddrPort("[2001:db8::1]:80"), seq: 1, syn: true})
	short := slices.Clone(ip6)
	binary.BigEndian.PutUint16(short[4:], binary.BigEndian.Uint16(short[4:])+8) // says 8 bytes more than it has
	gtpExt := cat(binary.BigEndian.AppendUint16([]byte{0x34, 0xff}, uint16(len(ip6)+8)), []byte{0, 0, 0, 9, 0, 0, 0, 0x85, 1, 0, 5, 0}, ip6)
	for _, tc := range []struct {
		name    string
		payload []byte
		tunnels []UDPTunnel
		why     Reason
	}{
		{"teredo whose lengths disagree", short, nil, Reason{Kind: decode.ReasonTunnelContent, Code: uint32(decode.EncapTeredo)}},
		{"teredo origin indication, then no IPv6", cat([]byte{0, 0, 1, 2, 3, 4, 5, 6}, []byte("not ipv6")), nil, Reason{Kind: decode.ReasonTunnelContent, Code: uint32(decode.EncapTeredo)}},
		{"vxlan header, no IP inside", cat([]byte{8, 0, 0, 0, 0, 0, 42, 0}, l2eth(0x0806), make([]byte, 28)), nil, Reason{Kind: decode.ReasonTunnelContent, Code: uint32(decode.EncapVXLAN)}},
		{"gtp with extension headers", gtpExt, nil, Reason{Kind: decode.ReasonTunnelContent, Code: uint32(decode.EncapGTP)}},
		{"dns query", []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 0, 1, 0, 1}, nil, Reason{Kind: decode.ReasonIPProtocol, Code: 17}},
		{"teredo with no tunnel configured", ip6, []UDPTunnel{}, Reason{Kind: decode.ReasonIPProtocol, Code: 17}},
	} {
		e := NewEngine(&Options{UDPTunnels: tc.tunnels}, func(*Request) {})
		e.Packet(&Packet{Data: outer(t, false, layers.IPProtocolUDP, 40000, tc.payload), Link: layers.LinkTypeEthernet})
		st := e.Stats()
		var why Reason
		if cs := st.Reasons.Counts(); len(cs) == 1 && cs[0].Frames == 1 {
			why = cs[0].Reason
		}
		if st.TCP != 0 || st.Other != 1 || why != tc.why || st.DecodeErrors != 0 {
			t.Errorf("%s: reason %v, want %v; stats %+v", tc.name, why, tc.why, st)
		}
	}
}

// The kernel's own VXLAN on port 9999 (scripts/make-vxlan-capture.sh):
// every request over the overlay is found, with its encapsulation, by
// content; the overlay's ARP is read as the tunnel's, not rejected.
func TestKernelVXLANOnAnotherPort(t *testing.T) {
	const path = "testdata/captures/vxlan-9999.pcap"
	want := readLines(t, "testdata/captures/vxlan-9999.urls")
	var got []string
	st := runEngine(t, nil, path, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range st.Reasons.Counts() {
		if c.Kind == decode.ReasonTunnelContent {
			t.Errorf("%d frames rejected as %v", c.Frames, c.Reason)
		}
	}
	// Without UDP tunnels, nothing is tried: no request is found.
	got = got[:0]
	runEngine(t, &Options{UDPTunnels: []UDPTunnel{}}, path, func(r *Request) { got = append(got, string(r.URL)) })
	if len(got) != 0 {
		t.Errorf("without tunnels: %q", got)
	}
}

// Real Teredo (scripts/make-teredo-capture.sh): two miredo clients carry
// curl's IPv6 requests between their own ephemeral UDP ports, never 3544
// (but for one qualification datagram). Every request is found, by
// content, with its encapsulation; tshark, with its Teredo heuristic on,
// finds the same.
func TestTeredoOnEphemeralPorts(t *testing.T) {
	const path = "testdata/captures/teredo.pcap"
	want := readLines(t, "testdata/captures/teredo.urls")
	var got []string
	st := runEngine(t, nil, path, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
	slices.Sort(got)
	if !slices.Equal(got, want) || st.DecodeErrors != 0 {
		t.Errorf("got %q, want %q; %d malformed", got, want, st.DecodeErrors)
	}
	out, err := exec.Command("tshark", "-r", path, "-o", "teredo.heuristic_teredo:TRUE", "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	fromTshark := strings.Fields(string(out))
	slices.Sort(fromTshark)
	var urls []string
	for _, w := range want {
		urls = append(urls, strings.Fields(w)[0])
	}
	if !slices.Equal(fromTshark, urls) {
		t.Errorf("tshark finds %q, want %q", fromTshark, urls)
	}
}
