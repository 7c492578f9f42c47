package capture

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// outer wraps payload in an IPv4 (or IPv6) header of protocol p, as an
// Ethernet frame, with gopacket's serializers.
func outer(t *testing.T, v6 bool, p layers.IPProtocol, udpPort uint16, payload []byte) []byte {
	t.Helper()
	var ip gopacket.NetworkLayer
	var ipl gopacket.SerializableLayer
	et := layers.EthernetTypeIPv4
	if v6 {
		x := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: p, SrcIP: net.ParseIP("2001:db8:ff::1"), DstIP: net.ParseIP("2001:db8:ff::2")}
		ip, ipl, et = x, x, layers.EthernetTypeIPv6
	} else {
		x := &layers.IPv4{Version: 4, TTL: 64, Protocol: p, SrcIP: net.IP{198, 51, 100, 1}, DstIP: net.IP{198, 51, 100, 2}}
		ip, ipl = x, x
	}
	ls := []gopacket.SerializableLayer{ethOf(et), ipl}
	if p == layers.IPProtocolUDP {
		u := &layers.UDP{SrcPort: 50000, DstPort: layers.UDPPort(udpPort)}
		u.SetNetworkLayerForChecksum(ip)
		ls = append(ls, u)
	}
	return serialize(t, append(ls, gopacket.Payload(payload))...)
}

func greHeader(flags, proto uint16) []byte {
	h := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, flags), proto)
	for _, bit := range []uint16{0x8000, 0x2000, 0x1000} {
		if flags&bit != 0 {
			h = append(h, 0, 0, 0, 7)
		}
	}
	return h
}

// tunnelCases wrap an inner IP packet (IPv6 when v6) into a frame.
var tunnelCases = []struct {
	name  string
	v6    bool // the inner packet
	wrap  func(t *testing.T, ip []byte) []byte
	encap string
}{
	{"ipip", false, func(t *testing.T, ip []byte) []byte { return outer(t, false, layers.IPProtocolIPv4, 0, ip) }, "ipip"},
	{"6in4", true, func(t *testing.T, ip []byte) []byte { return outer(t, false, layers.IPProtocolIPv6, 0, ip) }, "6in4"},
	{"4in6", false, func(t *testing.T, ip []byte) []byte { return outer(t, true, layers.IPProtocolIPv4, 0, ip) }, "4in6"},
	{"6in6", true, func(t *testing.T, ip []byte) []byte { return outer(t, true, layers.IPProtocolIPv6, 0, ip) }, "6in6"},
	{"gre", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolGRE, 0, cat(greHeader(0, 0x0800), ip))
	}, "gre"},
	{"gre key seq", true, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolGRE, 0, cat(greHeader(0x3000, 0x86dd), ip))
	}, "gre"},
	{"gretap over ipv6", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, true, layers.IPProtocolGRE, 0, cat(greHeader(0x2000, 0x6558), l2eth(0x0800), ip))
	}, "gre/ethernet"},
	{"erspan 1", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolGRE, 0, cat(greHeader(0, 0x88be), l2eth(0x0800), ip))
	}, "gre/erspan/ethernet"},
	{"erspan 2", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolGRE, 0, cat(greHeader(0x1000, 0x88be), []byte{0x10, 0x0a, 0, 1, 0, 0, 0, 0}, l2eth(0x8100), l2tag(10, 0x0800), ip))
	}, "gre/erspan/ethernet/vlan"},
	{"erspan 3", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolGRE, 0, cat(greHeader(0x1000, 0x22eb), []byte{0x20, 0x0a, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}, l2eth(0x0800), ip))
	}, "gre/erspan/ethernet"},
	{"vxlan", false, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolUDP, 4789, cat([]byte{8, 0, 0, 0, 0, 0, 42, 0}, l2eth(0x0800), ip))
	}, "vxlan/ethernet"},
	{"geneve", true, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolUDP, 6081, cat([]byte{1, 0, 0x65, 0x58, 0, 0, 5, 0, 1, 2, 3, 0}, l2eth(0x86dd), ip))
	}, "geneve/ethernet"},
	{"gtp", false, func(t *testing.T, ip []byte) []byte {
		h := binary.BigEndian.AppendUint16([]byte{0x30, 0xff}, uint16(len(ip)))
		return outer(t, false, layers.IPProtocolUDP, 2152, cat(h, []byte{0, 0, 0, 9}, ip))
	}, "gtp"},
	{"gtp with extension", false, func(t *testing.T, ip []byte) []byte {
		h := binary.BigEndian.AppendUint16([]byte{0x34, 0xff}, uint16(len(ip)+8))
		return outer(t, false, layers.IPProtocolUDP, 2152, cat(h, []byte{0, 0, 0, 9, 0, 0, 0, 0x85, 1, 0, 5, 0}, ip))
	}, "gtp"},
	{"teredo", true, func(t *testing.T, ip []byte) []byte {
		return outer(t, false, layers.IPProtocolUDP, 3544, cat([]byte{0, 0, 0xf2, 0x3f, 0x3f, 0x5c, 0x63, 0x9a}, ip))
	}, "teredo"},
	{"ayiya", true, func(t *testing.T, ip []byte) []byte {
		h := cat([]byte{0x41, 0x52, 0x11, 41, 0, 0, 0, 1}, make([]byte, 16+20))
		return outer(t, false, layers.IPProtocolUDP, 5072, cat(h, ip))
	}, "ayiya"},
}

// Every tunnel, built with gopacket's serializers and the headers of the
// RFCs: each request is found once with its encapsulation; tshark finds the
// same requests.
func TestTunnels(t *testing.T) {
	var all [][]byte
	var want []string
	for i, tc := range tunnelCases {
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
		if st := e.Stats(); len(got) != 1 || got[0] != w+" "+tc.encap || st.TCP != 2 {
			t.Errorf("%s: %q, want %q; stats %+v", tc.name, got, w+" "+tc.encap, st)
		}
		want = append(want, w)
	}
	p := filepath.Join(t.TempDir(), "tunnels.pcap")
	writeCapture(t, p, fmtPcap, layers.LinkTypeEthernet, all)
	out, err := exec.Command("tshark", "-r", p, "-Y", "http.request", "-T", "fields", "-e", "http.request.full_uri").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, want) {
		t.Errorf("tshark finds\n%q\nwant\n%q", got, want)
	}
}
