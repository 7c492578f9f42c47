package quic

import (
	"net/netip"
	"testing"
)

// A flow key gives back the addresses it was made of, tells IPv4 from
// IPv4-mapped IPv6, and reverses.
func TestFlowKey(t *testing.T) {
	for _, tc := range []struct{ client, server string }{
		{"192.0.2.10:50000", "192.0.2.1:443"},
		{"[2001:db8::10]:50000", "[2001:db8::1]:443"},
		{"[::ffff:192.0.2.10]:50000", "[::ffff:192.0.2.1]:443"},
		{"0.0.0.0:0", "[::]:0"},
	} {
		c, s := netip.MustParseAddrPort(tc.client), netip.MustParseAddrPort(tc.server)
		k := makeFlowKey(c, s)
		if gc, gs := k.addrs(); gc != c || gs != s {
			t.Errorf("%s %s: back as %s %s", c, s, gc, gs)
		}
		if r := k.reverse(); r != makeFlowKey(s, c) || r.reverse() != k || r == k {
			t.Errorf("%s %s: reverse %+v", c, s, r)
		}
	}
	v4 := makeFlowKey(netip.MustParseAddrPort("192.0.2.10:1"), testServer)
	mapped := makeFlowKey(netip.MustParseAddrPort("[::ffff:192.0.2.10]:1"), testServer)
	if v4 == mapped {
		t.Error("IPv4 and IPv4-mapped IPv6 share a key")
	}
}
