package capture

import (
	"net/netip"
	"testing"
	"time"
)

// A SYN flood of many times MaxFlows connections does not blind the
// assembler: a connection whose request is half sent when the flood starts
// finishes it, and connections opened during and after the flood are all
// seen. Before eviction, every connection after the first MaxFlows was
// ignored until the flood's halves expired (IdleTimeout, 2 minutes).
func TestSYNFloodDoesNotBlind(t *testing.T) {
	const maxFlows, flood = 256, 20_000
	a, got := collect(&AssemblerOptions{MaxFlows: maxFlows})
	ts := t0
	tick := func() time.Time { ts = ts.Add(time.Microsecond); return ts }

	early := conn{cli, srv, 5000}
	r := req("/early")
	a.Add(tick(), early.syn())
	a.Add(tick(), early.synAck())
	a.Add(tick(), early.at(0, r[:10]))

	want := []string{"GET http://h/early"}
	for i := 0; i < flood; i++ {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}), uint16(1024+i%50000))
		a.Add(tick(), conn{src, srv, uint32(i)}.syn())
		if i%1000 == 999 { // a real client now and then, mid-flood
			c := conn{netip.AddrPortFrom(netip.MustParseAddr("192.0.2.77"), uint16(2000+i/1000)), srv, 9}
			p := "/mid/" + string(rune('a'+i/1000))
			a.Add(tick(), c.syn())
			a.Add(tick(), c.synAck())
			a.Add(tick(), c.at(0, req(p)))
			want = append(want, "GET http://h"+p)
		}
		if a.Flows() > maxFlows {
			t.Fatalf("%d halves tracked, over MaxFlows %d", a.Flows(), maxFlows)
		}
	}
	a.Add(tick(), early.at(10, r[10:]))
	late := conn{netip.MustParseAddrPort("192.0.2.99:3333"), srv, 77}
	a.Add(tick(), late.syn())
	a.Add(tick(), late.at(0, req("/late")))
	want = append(want, "GET http://h/late")
	a.Flush()

	seen := map[string]bool{}
	for _, g := range *got {
		seen[g] = true
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("%s not found under the flood (%d requests found, stats %+v)", w, len(*got), a.Stats)
		}
	}
	if a.Stats.Evicted < flood-maxFlows {
		t.Errorf("evicted %d, want at least %d", a.Stats.Evicted, flood-maxFlows)
	}
}
