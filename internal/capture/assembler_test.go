package capture

import (
	"net/netip"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	cli = netip.MustParseAddrPort("192.0.2.10:40000")
	srv = netip.MustParseAddrPort("192.0.2.1:80")
	t0  = time.Unix(1_700_000_000, 0)
)

// conn builds the client's segments of one connection.
type conn struct {
	src, dst netip.AddrPort
	isn      uint32
}

func (c conn) syn() *Segment { return &Segment{Src: c.src, Dst: c.dst, Seq: c.isn, SYN: true} }
func (c conn) synAck() *Segment {
	return &Segment{Src: c.dst, Dst: c.src, Seq: 7777, SYN: true, ACK: true}
}

// at is a data segment starting off bytes into the stream.
func (c conn) at(off int, data string) *Segment {
	return &Segment{Src: c.src, Dst: c.dst, Seq: c.isn + 1 + uint32(off), ACK: true, Payload: []byte(data)}
}

func (c conn) fin(off int) *Segment {
	return &Segment{Src: c.src, Dst: c.dst, Seq: c.isn + 1 + uint32(off), ACK: true, FIN: true}
}

func collect(opts *AssemblerOptions) (*assembler, *[]string) {
	var got []string
	a := newAssembler(opts, func(r *Request) { got = append(got, string(r.Method)+" "+string(r.URL)) })
	return a, &got
}

func req(path string) string { return "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n" }

func TestAssemble(t *testing.T) {
	c := conn{cli, srv, 1000}
	r1, r2, r3 := req("/1"), req("/2"), req("/3")
	stream := r1 + r2 + r3
	tests := []struct {
		name string
		segs []*Segment
		want []string
		gaps uint64
	}{
		{"in order, three segments for one request", []*Segment{c.syn(), c.synAck(),
			c.at(0, r1[:5]), c.at(5, r1[5:20]), c.at(20, r1[20:]), c.fin(len(r1))},
			[]string{"GET http://h/1"}, 0},
		{"out of order", []*Segment{c.syn(), c.at(20, r1[20:]), c.at(5, r1[5:20]), c.at(0, r1[:5])},
			[]string{"GET http://h/1"}, 0},
		{"retransmission overlapping", []*Segment{c.syn(), c.at(0, stream[:30]), c.at(10, stream[10:50]),
			c.at(0, stream[:50]), c.at(50, stream[50:])},
			[]string{"GET http://h/1", "GET http://h/2", "GET http://h/3"}, 0},
		{"lost segment, then resync at the next request", []*Segment{c.syn(), c.at(0, r1), c.at(len(r1)+len(r2), r3)},
			[]string{"GET http://h/1", "GET http://h/3"}, 1},
		{"lost middle of a request", []*Segment{c.syn(), c.at(0, r1[:10]), c.at(15, r1[15:]+r2)},
			[]string{"GET http://h/2"}, 1},
		{"started before the capture, mid-request", []*Segment{c.at(7, r1[7:]+r2)},
			[]string{"GET http://h/2"}, 0},
		{"server direction ignored", []*Segment{c.syn(), c.synAck(), c.at(0, r1),
			{Src: srv, Dst: cli, Seq: 7778, ACK: true, Payload: []byte("HTTP/1.1 200 OK\r\n\r\nGET /body HTTP/1.1\r\nHost: x\r\n\r\n")}},
			[]string{"GET http://h/1"}, 0},
		{"server direction without handshake ignored", []*Segment{
			{Src: srv, Dst: cli, Seq: 5, ACK: true, Payload: []byte("HTTP/1.1 200 OK\r\n\r\n" + req("/no"))},
			{Src: srv, Dst: cli, Seq: 5 + 19 + uint32(len(req("/no"))), ACK: true, Payload: []byte(req("/no2"))}},
			nil, 0},
		{"sequence numbers wrap", []*Segment{conn{cli, srv, 0xfffffff0}.syn(), conn{cli, srv, 0xfffffff0}.at(10, stream[10:]),
			conn{cli, srv, 0xfffffff0}.at(0, stream[:10])},
			[]string{"GET http://h/1", "GET http://h/2", "GET http://h/3"}, 0},
		{"RST reports a request cut in its headers", []*Segment{c.syn(), c.at(0, "GET /cut HTTP/1.1\r\nHost: h\r\n"),
			{Src: srv, Dst: cli, RST: true}},
			[]string{"GET http://h/cut"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, got := collect(nil)
			for i, s := range tt.segs {
				a.Add(t0.Add(time.Duration(i)*time.Millisecond), s)
			}
			a.Flush()
			if !reflect.DeepEqual(*got, tt.want) || a.Stats.Gaps != tt.gaps {
				t.Fatalf("got %q, %d gaps; want %q, %d", *got, a.Stats.Gaps, tt.want, tt.gaps)
			}
			if a.Flows() != 0 || a.Buffered() != 0 {
				t.Fatalf("after Flush: %d flows, %d bytes buffered", a.Flows(), a.Buffered())
			}
		})
	}
}

// A hole is waited for GapTimeout of packet time, then skipped; idle
// connections end after IdleTimeout of packet time, never wall time.
func TestAssembleTimeouts(t *testing.T) {
	c := conn{cli, srv, 1}
	other := conn{netip.MustParseAddrPort("192.0.2.11:40001"), srv, 1}
	a, got := collect(&AssemblerOptions{GapTimeout: time.Second, IdleTimeout: 10 * time.Second})
	a.Add(t0, c.syn())
	a.Add(t0, c.at(0, req("/1")))
	a.Add(t0, c.at(len(req("/1"))+5, req("/3")))                    // hole of 5 bytes
	a.Add(t0.Add(500*time.Millisecond), other.at(0, req("/other"))) // time passes on another flow
	if len(*got) != 2 {
		t.Fatalf("before the gap timeout: %q", *got)
	}
	a.Add(t0.Add(1500*time.Millisecond), other.at(len(req("/other")), req("/other2")))
	if want := []string{"GET http://h/1", "GET http://h/other", "GET http://h/3", "GET http://h/other2"}; !reflect.DeepEqual(*got, want) {
		t.Fatalf("after the gap timeout: %q, want %q", *got, want)
	}
	a.Add(t0.Add(12*time.Second), other.at(len(req("/other"))+len(req("/other2")), "GET /x"))
	if a.Flows() != 1 {
		t.Fatalf("idle connection not expired: %d flows", a.Flows())
	}
}

// Memory stays within the caps, whatever the traffic: every cap is
// reached, what it drops is counted, Buffered (every byte held, by
// capacity) never exceeds MaxBuffer, and a flow whose bytes were dropped
// resynchronises at its next request.
func TestAssembleCaps(t *testing.T) {
	client := func(i int) conn {
		return conn{netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(20 + i>>14)}), uint16(10000+i&0x3fff)), srv, 1}
	}
	long := func(n int) string { return "GET /" + strings.Repeat("l", n) + " HTTP/1.1\r\nHost: caps.example\r\n" }
	tests := []struct {
		name  string
		opts  AssemblerOptions
		flows int
		segs  func(c conn) []*Segment
		check func(t *testing.T, a *assembler, got []string)
	}{
		{"MaxFlows", AssemblerOptions{MaxFlows: 100}, 1000,
			func(c conn) []*Segment { return []*Segment{c.syn(), c.at(0, req("/f"))} },
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.SegmentsDenied != 900*2 || len(got) != 100 {
					t.Errorf("%d denied, %d requests; want 1800, 100", a.Stats.SegmentsDenied, len(got))
				}
			}},
		// The case of the issue: complete request lines whose headers never
		// end were held uncounted (100,000 flows reached 1.69 GB).
		{"MaxBuffer by request lines waiting for headers", AssemblerOptions{MaxBuffer: 1 << 20}, 1000,
			func(c conn) []*Segment { return []*Segment{c.syn(), c.at(0, long(16000))} },
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 || uint64(len(got))+a.Stats.Overflows != 1000 || a.Stats.SegmentsDenied != 0 {
					t.Errorf("%d overflows + %d requests kept, %d segments denied; want 1000, some overflows",
						a.Stats.Overflows, len(got), a.Stats.SegmentsDenied)
				}
			}},
		{"MaxBuffer by Host headers waiting for the end", AssemblerOptions{MaxBuffer: 1 << 20}, 1000,
			func(c conn) []*Segment {
				return []*Segment{c.syn(), c.at(0, "GET / HTTP/1.1\r\nHost: "+strings.Repeat("h", 16000)+"\r\n")}
			},
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 || uint64(len(got))+a.Stats.Overflows != 1000 || a.Stats.SegmentsDenied != 0 {
					t.Errorf("%d overflows + %d requests kept, %d segments denied; want 1000, some overflows",
						a.Stats.Overflows, len(got), a.Stats.SegmentsDenied)
				}
			}},
		{"MaxBuffer by partial lines", AssemblerOptions{MaxBuffer: 256 << 10}, 1000,
			func(c conn) []*Segment {
				return []*Segment{c.syn(), c.at(0, "GET /partial-"+strings.Repeat("p", 3000))}
			},
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 {
					t.Errorf("no overflow")
				}
			}},
		{"MaxBuffer by out-of-order segments", AssemblerOptions{MaxBuffer: 256 << 10}, 1000,
			func(c conn) []*Segment { return []*Segment{c.syn(), c.at(1000, strings.Repeat("x", 1000))} },
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 || a.Stats.Gaps == 0 {
					t.Errorf("stats %+v", a.Stats)
				}
			}},
		{"MaxFlowBuffer by out-of-order segments", AssemblerOptions{MaxFlowBuffer: 64 << 10}, 1,
			func(c conn) []*Segment {
				segs := []*Segment{c.syn()}
				for j := range 100 {
					segs = append(segs, c.at(1000+j*1000, strings.Repeat("x", 998)+"\r\n"))
				}
				return append(segs, c.at(1000+100*1000, req("/after")))
			},
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 || !reflect.DeepEqual(got, []string{"GET http://h/after"}) {
					t.Errorf("got %q, stats %+v", got, a.Stats)
				}
			}},
		// Small segments are held in buffers of 2 KiB: counted as such.
		{"MaxFlowBuffer by 1-byte out-of-order segments", AssemblerOptions{MaxFlowBuffer: 64 << 10}, 1,
			func(c conn) []*Segment {
				segs := []*Segment{c.syn()}
				for j := range 1000 {
					segs = append(segs, c.at(10+2*j, "x"))
				}
				return segs
			},
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 {
					t.Errorf("stats %+v", a.Stats)
				}
			}},
		{"MaxFlowBuffer by a request line", AssemblerOptions{MaxFlowBuffer: 8 << 10, MaxLine: 64 << 10}, 1,
			func(c conn) []*Segment {
				l := long(20000) + "\r\n"
				var segs []*Segment
				for off := 0; off < len(l); off += 1000 {
					segs = append(segs, c.at(off, l[off:min(off+1000, len(l))]))
				}
				return append(segs, c.at(len(l), req("/after")))
			},
			func(t *testing.T, a *assembler, got []string) {
				if a.Stats.Overflows == 0 || !reflect.DeepEqual(got, []string{"GET http://h/after"}) {
					t.Errorf("got %q, stats %+v", got, a.Stats)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, got := collect(&tt.opts)
			maxBuf := a.opts.MaxBuffer
			for i := range tt.flows {
				for _, s := range tt.segs(client(i)) {
					a.Add(t0, s)
					if a.Buffered() > maxBuf {
						t.Fatalf("flow %d: %d bytes buffered, over %d", i, a.Buffered(), maxBuf)
					}
					for _, h := range a.flows {
						if h.oooBytes+h.lineCap > a.opts.MaxFlowBuffer {
							t.Fatalf("flow %d: %d bytes held for one flow, over %d", i, h.oooBytes+h.lineCap, a.opts.MaxFlowBuffer)
						}
					}
				}
			}
			a.Flush()
			tt.check(t, a, *got)
			if a.Buffered() != 0 || a.Flows() != 0 {
				t.Fatalf("after Flush: %d buffered, %d flows", a.Buffered(), a.Flows())
			}
		})
	}
}

// A long request line is not kept at capacity once its request is done.
func TestAssembleReleasesBuffers(t *testing.T) {
	c := conn{cli, srv, 1}
	a, got := collect(nil)
	a.Add(t0, c.syn())
	r := "GET /" + strings.Repeat("r", 15000) + " HTTP/1.1\r\nHost: h\r\n\r\n"
	off := 0
	for ; off < len(r); off += 1000 {
		a.Add(t0, c.at(off, r[off:min(off+1000, len(r))]))
	}
	a.Add(t0, c.at(len(r), req("/small")))
	if len(*got) != 2 {
		t.Fatalf("got %d requests", len(*got))
	}
	const keepCap = 4 << 10 // the capacity HTTP/1's parser keeps for the next request (proto/http1)
	if n := a.Buffered(); n > 2*keepCap {
		t.Fatalf("%d bytes held after the long request ended", n)
	}
	// Large out-of-order segments, delivered: their buffers are not kept
	// for reuse; small ones are, up to maxFree.
	big := strings.Repeat("b", 60000) + "\r\n"
	off = len(r) + len(req("/small"))
	for i := 1; i <= 20; i++ {
		a.Add(t0, c.at(off+i*len(big), big))
	}
	for i := range 3000 {
		a.Add(t0, c.at(off+21*len(big)+10+i*2, "s"))
	}
	a.Add(t0, c.at(off, big))
	a.Flush()
	if len(a.free) == 0 || len(a.free) > maxFree {
		t.Fatalf("%d buffers kept for reuse, want 1..%d", len(a.free), maxFree)
	}
	for _, b := range a.free {
		if cap(b) != smallBuf {
			t.Fatalf("a buffer of %d bytes kept for reuse", cap(b))
		}
	}
}

// The flow map does not keep the memory of a flood of connections once
// they are gone (a Go map does not shrink by itself).
func TestAssembleReleasesFlowMap(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	a, _ := collect(&AssemblerOptions{IdleTimeout: time.Second})
	before := heap()
	for i := range 200000 {
		c := conn{netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}), 40000), srv, 1}
		a.Add(t0, c.syn())
	}
	full := heap()
	// One more connection, 2 s later: the sweep expires the 200,000.
	a.Add(t0.Add(2*time.Second), conn{cli, srv, 1}.syn())
	after := heap()
	t.Logf("heap: %d KiB before, %d KiB with 200,000 flows, %d KiB after they expired", before>>10, full>>10, after>>10)
	if a.Flows() != 1 || after > before+1<<20 {
		t.Fatalf("%d flows; %d KiB still held after the flood expired", a.Flows(), (after-before)>>10)
	}
	runtime.KeepAlive(a)
}

// At the cap, a request line that does not fit is dropped without being
// copied: no garbage for the collector to chase, whatever the flood.
func TestAssembleDropsWithoutCopying(t *testing.T) {
	a, _ := collect(&AssemblerOptions{MaxBuffer: 1 << 20})
	line := "GET /" + strings.Repeat("l", 15000) + " HTTP/1.1\r\nHost: h\r\n"
	var segs []*Segment // built first: their payloads are the test's allocations
	for i := range 2000 {
		c := conn{netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}), 40000), srv, 1}
		segs = append(segs, c.syn(), c.at(0, line))
	}
	for _, s := range segs[:2000] { // fills the 1 MiB and the flow map
		a.Add(t0, s)
	}
	over := a.Stats.Overflows
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, s := range segs[2000:] {
		a.Add(t0, s)
	}
	runtime.ReadMemStats(&after)
	perFlow := (after.TotalAlloc - before.TotalAlloc) / 1000
	t.Logf("%d bytes allocated per flow over the cap", perFlow)
	if a.Stats.Overflows-over != 1000 || perFlow > 2048 {
		t.Fatalf("%d of 1000 dropped; %d bytes allocated per flow", a.Stats.Overflows-over, perFlow)
	}
}
