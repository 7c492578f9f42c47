package capture

import (
	"net/netip"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// tfo is a SYN carrying data, as TCP Fast Open sends it.
func (c conn) tfo(data string) *Segment {
	s := c.syn()
	s.Payload = []byte(data)
	return s
}

func (c conn) rst(off int) *Segment {
	return &Segment{Src: c.src, Dst: c.dst, Seq: c.isn + 1 + uint32(off), RST: true}
}

// TCP edge cases: data in a SYN, a SYN sent again, segments retransmitted
// after FIN or RST, overlapping copies that differ. Each request is
// reported once; the first copy of a byte wins.
func TestTransportEdgeCases(t *testing.T) {
	c := conn{cli, srv, 1000}
	r1, r2 := req("/1"), req("/2")
	x, y := req("/0123456789abcdef"), req("/ZZZZZZZZZZZZZZZZ") // same length
	tests := []struct {
		name  string
		segs  []*Segment
		want  []string
		flows uint64
		late  uint64 // LateSegments
	}{
		{"fast open: the request in the SYN", []*Segment{c.tfo(r1), c.synAck(), c.at(len(r1), r2), c.fin(len(r1 + r2))},
			[]string{"GET http://h/1", "GET http://h/2"}, 1, 0},
		{"fast open SYN sent again", []*Segment{c.tfo(r1), c.tfo(r1), c.synAck(), c.at(len(r1), r2)},
			[]string{"GET http://h/1", "GET http://h/2"}, 1, 0},
		{"fast open SYN with FIN", []*Segment{{Src: cli, Dst: srv, Seq: 1000, SYN: true, FIN: true, Payload: []byte(r1)}},
			[]string{"GET http://h/1"}, 1, 0},
		{"SYN sent again after data, the request whole", []*Segment{c.syn(), c.synAck(), c.at(0, r1), c.syn(), c.at(0, r1), c.at(len(r1), r2)},
			[]string{"GET http://h/1", "GET http://h/2"}, 1, 0},
		{"SYN sent again mid-request", []*Segment{c.syn(), c.at(0, r1[:10]), c.syn(), c.at(10, r1[10:])},
			[]string{"GET http://h/1"}, 1, 0},
		{"a new ISN on the same ports is a new connection", []*Segment{c.syn(), c.at(0, r1), conn{cli, srv, 50000}.syn(), conn{cli, srv, 50000}.at(0, r2)},
			[]string{"GET http://h/1", "GET http://h/2"}, 2, 0},
		{"retransmission after FIN", []*Segment{c.syn(), c.synAck(), c.at(0, r1), c.fin(len(r1)), c.at(0, r1), c.at(0, r1), c.fin(len(r1))},
			[]string{"GET http://h/1"}, 1, 2},
		{"retransmission after RST", []*Segment{c.syn(), c.at(0, r1+r2), c.rst(len(r1 + r2)), c.at(0, r1), c.at(len(r1), r2)},
			[]string{"GET http://h/1", "GET http://h/2"}, 1, 2},
		{"retransmission after the server's RST", []*Segment{c.syn(), c.synAck(), c.at(0, r1), {Src: srv, Dst: cli, Seq: 7778, RST: true}, c.at(0, r1)},
			[]string{"GET http://h/1"}, 1, 1},
		{"mid-request retransmission after FIN is not a new connection", []*Segment{c.syn(), c.at(0, r1+r2), c.fin(len(r1 + r2)), c.at(len(r1)+4, r2[4:])},
			[]string{"GET http://h/1", "GET http://h/2"}, 1, 1},
		{"SYN sent again after FIN", []*Segment{c.syn(), c.at(0, r1), c.fin(len(r1)), c.syn(), c.at(0, r1)},
			[]string{"GET http://h/1"}, 1, 2},
		{"after FIN, a new ISN is a new connection", []*Segment{c.syn(), c.at(0, r1), c.fin(len(r1)),
			conn{cli, srv, 90000}.syn(), conn{cli, srv, 90000}.at(0, r1)},
			[]string{"GET http://h/1", "GET http://h/1"}, 2, 0},
		{"after FIN, data past its end is a new connection", []*Segment{c.syn(), c.at(0, r1), c.fin(len(r1)),
			conn{cli, srv, 90000}.at(0, r2)},
			[]string{"GET http://h/1", "GET http://h/2"}, 2, 0},
		{"server retransmission after FIN is not a client", []*Segment{c.syn(), c.synAck(), c.at(0, r1), c.fin(len(r1)),
			{Src: srv, Dst: cli, Seq: 7778, ACK: true, Payload: []byte("HTTP/1.1 200 OK\r\n\r\n")},
			{Src: srv, Dst: cli, Seq: 7778 + 19, ACK: true, FIN: true, Payload: []byte(r2)},
			{Src: srv, Dst: cli, Seq: 7778 + 19, ACK: true, Payload: []byte(r2)}},
			[]string{"GET http://h/1"}, 1, 1},
		{"overlap: the bytes delivered first win", []*Segment{c.syn(), c.at(0, x[:20]), c.at(0, y)},
			[]string{"GET http://h/0123456789abcdeZ"}, 1, 0},
		{"overlap: the bytes held first win", []*Segment{c.syn(), c.at(10, x[10:]), c.at(0, y)},
			[]string{"GET http://h/ZZZZZ56789abcdef"}, 1, 0},
		{"overlap: a held copy starting earlier does not overwrite", []*Segment{c.syn(), c.at(10, x[10:]), c.at(5, y[5:]), c.at(0, y[:5])},
			[]string{"GET http://h/ZZZZZ56789abcdef"}, 1, 0},
		{"overlap: a held copy spanning two others keeps theirs", []*Segment{c.syn(), c.at(8, x[8:10]), c.at(14, x[14:16]), c.at(6, y[6:]), c.at(0, y[:6])},
			[]string{"GET http://h/ZZZ34ZZZZ9aZZZZZ"}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, got := collect(nil)
			for i, s := range tt.segs {
				a.Add(t0.Add(time.Duration(i)*time.Millisecond), s)
				checkHeld(t, a)
			}
			a.Flush()
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("got %q; want %q", *got, tt.want)
			}
			if a.Stats.Flows != tt.flows || a.Stats.LateSegments != tt.late || a.parsers.(*tcpProtocols).Stats.ParseErrors != 0 {
				t.Fatalf("stats %+v; want %d flows, %d late segments, no parse error", a.Stats, tt.flows, tt.late)
			}
			if a.Flows() != 0 || a.Buffered() != 0 {
				t.Fatalf("after Flush: %d flows, %d bytes buffered", a.Flows(), a.Buffered())
			}
		})
	}
}

// A direction tracked again after the idle timeout or an eviction goes on
// as the same connection: its requests are found, and it is counted once.
func TestFlowsCountConnections(t *testing.T) {
	r1, r2 := req("/1"), req("/2")
	t.Run("expired", func(t *testing.T) {
		c := conn{cli, srv, 1000}
		other := conn{netip.MustParseAddrPort("192.0.2.11:40001"), srv, 1}
		a, got := collect(&AssemblerOptions{IdleTimeout: time.Second})
		a.Add(t0, c.syn())
		a.Add(t0, c.at(0, r1))
		a.Add(t0.Add(3*time.Second), other.syn()) // the sweep expires c
		if a.Flows() != 1 {
			t.Fatalf("%d flows tracked, want c expired", a.Flows())
		}
		a.Add(t0.Add(3*time.Second), c.at(len(r1), r2))
		a.Add(t0.Add(3*time.Second), c.at(0, r1)) // a retransmission of what it sent before
		a.Flush()
		if want := []string{"GET http://h/1", "GET http://h/2"}; !reflect.DeepEqual(*got, want) || a.Stats.Flows != 2 {
			t.Fatalf("got %q, %d flows; want %q, 2", *got, a.Stats.Flows, want)
		}
	})
	t.Run("evicted", func(t *testing.T) {
		c := conn{cli, srv, 1000}
		b := conn{netip.MustParseAddrPort("192.0.2.11:40001"), srv, 1}
		a, got := collect(&AssemblerOptions{MaxFlows: 1})
		a.Add(t0, c.syn())
		a.Add(t0, c.at(0, r1))
		a.Add(t0.Add(2*time.Second), b.syn())           // c is quiet: evicted
		a.Add(t0.Add(2*time.Second), c.at(len(r1), r2)) // b carried nothing: evicted
		a.Add(t0.Add(4*time.Second), b.at(0, r1))       // c quiet: evicted
		a.Flush()
		if want := []string{"GET http://h/1", "GET http://h/2", "GET http://h/1"}; !reflect.DeepEqual(*got, want) || a.Stats.Flows != 2 || a.Stats.Evicted != 3 {
			t.Fatalf("got %q, stats %+v; want %q, 2 flows, 3 evicted", *got, a.Stats, want)
		}
	})
}

// Closed directions are remembered for ClosedLinger of packet time, at
// most MaxClosed of them: past either, a retransmission is taken for a
// connection that began before the capture, as before.
func TestClosedCaps(t *testing.T) {
	r1 := req("/1")
	port := func(i int) conn {
		return conn{netip.AddrPortFrom(cli.Addr(), uint16(41000+i)), srv, 1000}
	}
	t.Run("MaxClosed", func(t *testing.T) {
		a, got := collect(&AssemblerOptions{MaxClosed: 2})
		for i := range 5 {
			a.Add(t0, port(i).syn())
			a.Add(t0, port(i).at(0, r1))
			a.Add(t0, port(i).fin(len(r1)))
			if a.closed.len() > 2 {
				t.Fatalf("%d closed directions remembered, cap 2", a.closed.len())
			}
		}
		a.Add(t0, port(4).at(0, r1)) // remembered: dropped
		a.Add(t0, port(0).at(0, r1)) // forgotten at the cap: reported again
		a.Flush()
		if len(*got) != 6 || a.Stats.LateSegments != 1 {
			t.Fatalf("%d requests, %d late segments; want 6, 1", len(*got), a.Stats.LateSegments)
		}
	})
	t.Run("ClosedLinger", func(t *testing.T) {
		a, got := collect(&AssemblerOptions{ClosedLinger: 10 * time.Second})
		c := port(0)
		a.Add(t0, c.syn())
		a.Add(t0, c.at(0, r1))
		a.Add(t0, c.fin(len(r1)))
		a.Add(t0.Add(9*time.Second), c.at(0, r1)) // within: dropped
		a.Add(t0.Add(12*time.Second), port(1).syn())
		a.Add(t0.Add(12*time.Second), c.at(0, r1)) // past: reported again
		a.Flush()
		if len(*got) != 2 || a.Stats.LateSegments != 1 || a.closed.len() != 0 {
			t.Fatalf("%d requests, %d late segments, %d remembered; want 2, 1, 0", len(*got), a.Stats.LateSegments, a.closed.len())
		}
	})
	t.Run("time going back forgets", func(t *testing.T) {
		a, got := collect(nil)
		c := port(0)
		for range 2 { // a capture given twice
			a.Add(t0, c.syn())
			a.Add(t0.Add(time.Second), c.at(0, r1))
			a.Add(t0.Add(time.Second), c.fin(len(r1)))
		}
		a.Flush()
		if len(*got) != 2 || a.Stats.Flows != 2 {
			t.Fatalf("%d requests, %d flows; want 2, 2", len(*got), a.Stats.Flows)
		}
	})
}

// The closed directions remembered at the default cap take at most
// MaxClosed × closedCost bytes, however many connections close.
func TestClosedMemory(t *testing.T) {
	racetest.SkipSequential(t)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	a := newAssembler(nil, func(*Request) {})
	a.Add(t0, conn{cli, srv, 1}.syn()) // the flow map made
	before := heap()
	r := req("/1")
	for i := range 10 * DefaultAssemblerOptions.MaxClosed {
		c := conn{netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}), uint16(40000+i>>16)), srv, 1}
		a.Add(t0, c.syn())
		a.Add(t0, c.at(0, r))
		a.Add(t0, c.fin(len(r)))
	}
	grown := heap() - before
	limit := uint64(DefaultAssemblerOptions.MaxClosed * closedCost)
	t.Logf("%d closed directions remembered: heap +%d KiB (%d B each), limit %d KiB", a.closed.len(), grown>>10, grown/uint64(a.closed.len()), limit>>10)
	if a.closed.len() != DefaultAssemblerOptions.MaxClosed || grown > limit {
		t.Fatalf("%d remembered, heap +%d bytes; want %d, at most %d", a.closed.len(), grown, DefaultAssemblerOptions.MaxClosed, limit)
	}
	runtime.KeepAlive(a)
}
