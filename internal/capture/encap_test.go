package capture

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// A record's encapsulation is its own direction's, not that of whatever
// frame was being handled when it was reported. Connection A sends its
// request line and Host through a VLAN and stops before the end of its
// headers; connection B, plain Ethernet, sends a whole request. A's request
// is reported later, at a flush, at its idle expiry while a plain frame of
// a third connection is handled, or at its FIN after its last bytes came
// through an MPLS label too, on the same VLAN (a change of encapsulation
// mid-stream: the last segment's wins; a change of VLAN ID would be
// another direction, TestTenantsReusingAddresses).
func TestRequestEncapIsItsDirections(t *testing.T) {
	vlan := func(ip []byte) []byte { return cat(l2eth(0x8100), l2tag(10, 0x0800), ip) }
	vlanMPLS := func(ip []byte) []byte { return cat(l2eth(0x8100), l2tag(10, 0x8847), l2label(100, true), ip) }
	plain := func(ip []byte) []byte { return cat(l2eth(0x0800), ip) }
	srv := netip.MustParseAddrPort("192.0.2.1:80")
	cliA, cliB, cliC := netip.MustParseAddrPort("192.0.2.10:40001"), netip.MustParseAddrPort("192.0.2.10:40002"), netip.MustParseAddrPort("192.0.2.10:40003")
	head := "GET /a HTTP/1.1\r\nHost: a.example\r\n"
	t0 := time.Unix(1_700_000_000, 0)
	type pkt struct {
		wrap func([]byte) []byte
		seg  tcpSeg
		at   time.Duration
	}
	a := []pkt{
		{vlan, tcpSeg{src: cliA, dst: srv, seq: 1, syn: true}, 0},
		{vlan, tcpSeg{src: cliA, dst: srv, seq: 2, ack: true, payload: head}, time.Millisecond},
	}
	b := []pkt{
		{plain, tcpSeg{src: cliB, dst: srv, seq: 1, syn: true}, time.Second},
		{plain, tcpSeg{src: cliB, dst: srv, seq: 2, ack: true, payload: get("/b", "b.example")}, time.Second + time.Millisecond},
	}
	for _, tc := range []struct {
		name  string
		pkts  []pkt
		flush bool
		want  []string
	}{
		{"at a flush", slices.Concat(a, b), true,
			[]string{"http://b.example/b ", "http://a.example/a vlan"}},
		{"at its idle expiry", slices.Concat(a, b, []pkt{
			{plain, tcpSeg{src: cliC, dst: srv, seq: 1, syn: true}, 3 * time.Minute},
		}), false, []string{"http://b.example/b ", "http://a.example/a vlan"}},
		{"its end came through mpls", slices.Concat(a, b, []pkt{
			{vlanMPLS, tcpSeg{src: cliA, dst: srv, seq: 2 + uint32(len(head)), ack: true, fin: true, payload: "\r\n"}, 2 * time.Second},
		}), false, []string{"http://b.example/b ", "http://a.example/a vlan/mpls"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			e := NewEngine(nil, func(r *Request) { got = append(got, string(r.URL)+" "+r.Encap.String()) })
			for _, p := range tc.pkts {
				e.Packet(&Packet{Data: p.wrap(frame(t, linkRaw, p.seg)), Link: layers.LinkTypeEthernet,
					Info: gopacket.CaptureInfo{Timestamp: t0.Add(p.at)}})
			}
			if tc.flush {
				e.asm.Flush()
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("records %q, want %q", got, tc.want)
			}
		})
	}
}
