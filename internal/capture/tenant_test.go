package capture

import (
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// tunnelFrame wraps payload in IPv4 from src to dst (protocol p; a UDP
// header to port when p is UDP) as an Ethernet frame, with gopacket's
// serializers: outer with the endpoints chosen.
func tunnelFrame(t *testing.T, src, dst string, p layers.IPProtocol, port uint16, payload []byte) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: p, SrcIP: net.ParseIP(src).To4(), DstIP: net.ParseIP(dst).To4()}
	ls := []gopacket.SerializableLayer{ethOf(layers.EthernetTypeIPv4), ip}
	if p == layers.IPProtocolUDP {
		u := &layers.UDP{SrcPort: 50000, DstPort: layers.UDPPort(port)}
		u.SetNetworkLayerForChecksum(ip)
		ls = append(ls, u)
	}
	return serialize(t, append(ls, gopacket.Payload(payload))...)
}

func vxlanHeader(vni uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{8, 0, 0, 0}, vni<<8)
}

// tenantWraps put an inner IP packet into a tenant's encapsulation: each
// pair differs only in what tells the tenants apart (a VLAN ID, a VNI, a
// tunnel's endpoints or key), and back reverses the outer endpoints, as
// the server's packets travel.
var tenantWraps = []struct {
	name  string
	encap string
	wrap  func(t *testing.T, tenant int, back bool, ip []byte) []byte
}{
	{"vlan", "vlan", func(t *testing.T, n int, _ bool, ip []byte) []byte {
		return cat(l2eth(0x8100), l2tag(uint16(10*n), 0x0800), ip)
	}},
	{"qinq service tag", "qinq/vlan", func(t *testing.T, n int, _ bool, ip []byte) []byte {
		return cat(l2eth(0x88a8), l2tag(uint16(100*n), 0x8100), l2tag(10, 0x0800), ip)
	}},
	{"vxlan vni", "vxlan/ethernet", func(t *testing.T, n int, back bool, ip []byte) []byte {
		a, b := "198.51.100.1", "198.51.100.2"
		if back {
			a, b = b, a
		}
		return tunnelFrame(t, a, b, layers.IPProtocolUDP, 4789, cat(vxlanHeader(uint32(100*n)), l2eth(0x0800), ip))
	}},
	{"vxlan endpoints", "vxlan/ethernet", func(t *testing.T, n int, back bool, ip []byte) []byte {
		a, b := "198.51.100.1", "198.51.100.2"
		if n == 2 {
			a = "198.51.100.3"
		}
		if back {
			a, b = b, a
		}
		return tunnelFrame(t, a, b, layers.IPProtocolUDP, 4789, cat(vxlanHeader(100), l2eth(0x0800), ip))
	}},
	{"geneve vni", "geneve/ethernet", func(t *testing.T, n int, back bool, ip []byte) []byte {
		a, b := "198.51.100.1", "198.51.100.2"
		if back {
			a, b = b, a
		}
		return tunnelFrame(t, a, b, layers.IPProtocolUDP, 6081, cat([]byte{0, 0, 0x65, 0x58, 0, 0, byte(n), 0}, l2eth(0x0800), ip))
	}},
	{"ipip endpoints", "ipip", func(t *testing.T, n int, back bool, ip []byte) []byte {
		a, b := "198.51.100.1", "198.51.100.2"
		if n == 2 {
			b = "198.51.100.4"
		}
		if back {
			a, b = b, a
		}
		return tunnelFrame(t, a, b, layers.IPProtocolIPv4, 0, ip)
	}},
	{"gre key", "gre", func(t *testing.T, n int, back bool, ip []byte) []byte {
		a, b := "198.51.100.1", "198.51.100.2"
		if back {
			a, b = b, a
		}
		return tunnelFrame(t, a, b, layers.IPProtocolGRE, 0, cat([]byte{0x20, 0, 8, 0, 0, 0, 0, byte(n)}, ip))
	}},
}

// Two tenants (VLANs, VXLAN or Geneve segments, tunnels between other
// endpoints or with another key) reuse the same inner addresses, ports
// and initial sequence number, each sending its own request: both
// requests are found, each with its own encapsulation. Keying a
// connection by its 5-tuple alone took tenant B's SYN and request for
// retransmissions of tenant A's and dropped them, counted nowhere.
func TestTenantsReusingAddresses(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.5:40000"), netip.MustParseAddrPort("10.0.0.1:80")
	for _, tc := range tenantWraps {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
			send := func(n int, seg tcpSeg) {
				e.Packet(&Packet{Data: tc.wrap(t, n, false, frame(t, linkRaw, seg)), Link: layers.LinkTypeEthernet})
			}
			for n := 1; n <= 2; n++ {
				send(n, tcpSeg{src: c, dst: s, seq: 1000, syn: true})
			}
			for n := 1; n <= 2; n++ {
				send(n, tcpSeg{src: c, dst: s, seq: 1001, ack: true, payload: get("/t"+string(rune('0'+n)), "tenant"+string(rune('0'+n))+".example")})
			}
			e.asm.Flush()
			want := []string{"http://tenant1.example/t1 " + tc.encap, "http://tenant2.example/t2 " + tc.encap}
			if st := e.Stats(); !slices.Equal(got, want) || st.Assembler.Flows != 2 || st.TCP != 4 {
				t.Errorf("records %q, want %q; %d flows, %d TCP segments", got, want, st.Assembler.Flows, st.TCP)
			}
		})
	}
}

// The encapsulation in a connection's key is the same both ways: the
// server's reset, coming back through the tunnel with its endpoints
// reversed, ends the client's direction of its own tenant only, whose
// unfinished request is then reported; the other tenant's waits for the
// end of the input.
func TestTenantPathBothWays(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.5:40000"), netip.MustParseAddrPort("10.0.0.1:80")
	for _, tc := range tenantWraps {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
			for n := 1; n <= 2; n++ {
				for _, seg := range []tcpSeg{{src: c, dst: s, seq: 1000, syn: true},
					{src: c, dst: s, seq: 1001, ack: true, payload: "GET /t" + string(rune('0'+n)) + " HTTP/1.1\r\nHost: h\r\n"}} {
					e.Packet(&Packet{Data: tc.wrap(t, n, false, frame(t, linkRaw, seg)), Link: layers.LinkTypeEthernet})
				}
			}
			ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP(s.Addr().AsSlice()), DstIP: net.IP(c.Addr().AsSlice())}
			tcp := &layers.TCP{SrcPort: layers.TCPPort(s.Port()), DstPort: layers.TCPPort(c.Port()), Seq: 5000, RST: true, ACK: true}
			tcp.SetNetworkLayerForChecksum(ip)
			rst := serialize(t, ip, tcp)
			e.Packet(&Packet{Data: tc.wrap(t, 2, true, rst), Link: layers.LinkTypeEthernet})
			if want := []string{"http://h/t2"}; !slices.Equal(got, want) {
				t.Fatalf("after tenant 2's reset: records %q, want %q", got, want)
			}
			e.asm.Flush()
			if want := []string{"http://h/t2", "http://h/t1"}; !slices.Equal(got, want) {
				t.Errorf("at the end: records %q, want %q", got, want)
			}
		})
	}
}

// Two tenants send fragmented requests with the same inner addresses and
// the same IP identification, their fragments interleaved: each datagram
// is put together from its own tenant's fragments. Keyed without the
// encapsulation, tenant B's first fragment was taken for a copy of A's
// (dropped: the first copy wins), and B's datagram was never whole.
func TestTenantFragments(t *testing.T) {
	c, s := netip.MustParseAddrPort("10.0.0.5:40000"), netip.MustParseAddrPort("10.0.0.1:80")
	for _, tc := range tenantWraps {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)) })
			var frags [3][][]byte
			for n := 1; n <= 2; n++ {
				e.Packet(&Packet{Data: tc.wrap(t, n, false, frame(t, linkRaw, tcpSeg{src: c, dst: s, seq: 1000, syn: true})), Link: layers.LinkTypeEthernet})
				req := "GET /t" + string(rune('0'+n)) + " HTTP/1.1\r\nHost: tenant" + string(rune('0'+n)) + ".example\r\nX-Pad: " + strings.Repeat(string(rune('a'+n)), 1000) + "\r\n\r\n"
				frags[n] = fragmentIP(t, frame(t, linkRaw, tcpSeg{src: c, dst: s, seq: 1001, ack: true, payload: req}), 512, 7)
			}
			for i := range frags[1] {
				for n := 1; n <= 2; n++ {
					e.Packet(&Packet{Data: tc.wrap(t, n, false, frags[n][i]), Link: layers.LinkTypeEthernet,
						Info: gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000, int64(i))}})
				}
			}
			e.asm.Flush()
			want := []string{"http://tenant1.example/t1", "http://tenant2.example/t2"}
			if st := e.Stats(); !slices.Equal(got, want) || st.Defrag.Reassembled != 2 || st.Defrag.Invalid != 0 {
				t.Errorf("records %q, want %q; defrag %+v", got, want, st.Defrag)
			}
		})
	}
}
