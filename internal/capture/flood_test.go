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

// A flood of one-byte segments, each opening a direction that carries
// data, fills the table; once those directions have been quiet for a
// second of packet time, new connections evict them. Within the second
// the table is really full, and segments of new connections are denied
// and counted.
func TestDataFloodDoesNotBlind(t *testing.T) {
	const maxFlows = 256
	a, got := collect(&AssemblerOptions{MaxFlows: maxFlows})
	for i := 0; i < maxFlows; i++ {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), uint16(1024+i))
		a.Add(t0, &Segment{Src: src, Dst: srv, Seq: uint32(i), ACK: true, Payload: []byte("x")})
	}
	soon := conn{netip.MustParseAddrPort("192.0.2.50:5000"), srv, 1}
	a.Add(t0.Add(100*time.Millisecond), soon.syn())
	a.Add(t0.Add(100*time.Millisecond), soon.at(0, req("/soon")))
	if a.Stats.SegmentsDenied != 2 {
		t.Errorf("within a second of the flood: %d segments denied, want 2", a.Stats.SegmentsDenied)
	}
	later := conn{netip.MustParseAddrPort("192.0.2.51:5001"), srv, 1}
	at := t0.Add(1500 * time.Millisecond)
	a.Add(at, later.syn())
	a.Add(at, later.at(0, req("/later")))
	a.Flush()
	found := false
	for _, g := range *got {
		found = found || g == "GET http://h/later"
	}
	if !found || a.Stats.Evicted == 0 {
		t.Fatalf("request after the flood went quiet: found %v, evicted %d (%q)", found, a.Stats.Evicted, *got)
	}
}

// One far-future timestamp does not stop expiry: when packet time comes
// back, the assembler follows it, so holes still time out and idle
// connections still end. Before, its clock stayed in the future and no
// sweep ran again until the end of the input.
func TestTimeJumpBack(t *testing.T) {
	a, _ := collect(nil)
	outlier := conn{netip.MustParseAddrPort("192.0.2.60:6000"), srv, 1}
	a.Add(t0, outlier.at(0, req("/x")))
	a.Add(t0.AddDate(100, 0, 0), outlier.at(len(req("/x")), req("/y")))

	holed := conn{netip.MustParseAddrPort("192.0.2.61:6001"), srv, 1}
	ts := t0.Add(time.Second)
	a.Add(ts, holed.syn())
	a.Add(ts, holed.at(10, "a segment after a hole"))
	busy := conn{netip.MustParseAddrPort("192.0.2.62:6002"), srv, 1}
	for i := 0; i < 180; i++ { // three minutes of packet time, a packet a second
		ts = ts.Add(time.Second)
		a.Add(ts, busy.at(i, "z"))
	}
	if a.Stats.Gaps == 0 {
		t.Errorf("the hole never timed out after the far-future packet")
	}
	if n := a.Flows(); n != 1 {
		t.Errorf("%d directions tracked after 3 minutes, want 1 (the busy one)", n)
	}
}
