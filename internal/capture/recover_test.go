package capture

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// A panic in the per-packet path (here from emit, on two URLs: one while
// a packet is processed, one while the connections are flushed at the end)
// is recovered at the source loop: reported with the file and packet
// number, counted, the connection dropped with its bytes uncounted, and
// the capture goes on.
func TestEngineRecoversFromPanic(t *testing.T) {
	s := netip.MustParseAddrPort("192.0.2.1:80")
	a := netip.MustParseAddrPort("192.0.2.10:40000")
	b := netip.MustParseAddrPort("192.0.2.10:40001")
	c := netip.MustParseAddrPort("192.0.2.10:40002")
	d := netip.MustParseAddrPort("192.0.2.10:40003")
	boom := get("/boom", "p.example")
	frames := [][]byte{
		frame(t, linkEth, tcpSeg{src: a, dst: s, seq: 100, syn: true}),
		frame(t, linkEth, tcpSeg{src: b, dst: s, seq: 200, syn: true}),
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 300, syn: true}),
		frame(t, linkEth, tcpSeg{src: d, dst: s, seq: 400, syn: true}),
		frame(t, linkEth, tcpSeg{src: a, dst: s, seq: 101, ack: true, payload: get("/a1", "p.example")}),
		// b holds an out-of-order segment and a partial line when it panics.
		frame(t, linkEth, tcpSeg{src: b, dst: s, seq: 201 + uint32(len(boom)) + 50, ack: true, payload: "held out of order"}),
		frame(t, linkEth, tcpSeg{src: b, dst: s, seq: 201, ack: true, payload: boom + "GET /partial"}), // packet 7
		frame(t, linkEth, tcpSeg{src: a, dst: s, seq: 101 + uint32(len(get("/a1", "p.example"))), ack: true, payload: get("/a2", "p.example")}),
		frame(t, linkEth, tcpSeg{src: c, dst: s, seq: 301, ack: true, payload: "GET /boom-at-flush HTTP/1.1\r\nHost: p.example\r\n"}),
		frame(t, linkEth, tcpSeg{src: d, dst: s, seq: 401, ack: true, payload: "GET /late HTTP/1.1\r\nHost: p.example\r\n"}),
	}
	path := filepath.Join(t.TempDir(), "panic.pcap")
	writeCapture(t, path, fmtPcap, layers.LinkTypeEthernet, frames)
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	e := NewEngine(nil, func(r *Request) {
		if strings.Contains(string(r.URL), "/boom") {
			panic("injected: " + string(r.URL))
		}
		got = append(got, string(r.URL))
	})
	var panics []*PanicError
	e.OnPanic = func(p *PanicError) { panics = append(panics, p) }
	if err := e.Run(context.Background(), src); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"http://p.example/a1", "http://p.example/a2", "http://p.example/late"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	st := e.Stats()
	if st.Panics != 2 || len(panics) != 2 {
		t.Fatalf("Stats.Panics %d, %d reported; want 2", st.Panics, len(panics))
	}
	p := panics[0]
	t.Logf("reported: %v", p)
	if !errors.Is(p, ErrPanic) || p.Where != path+": packet 7" || p.Flow != b.String()+" -> "+s.String() ||
		p.Value != "injected: http://p.example/boom" || !strings.Contains(string(p.Stack), "recover_test.go") {
		t.Errorf("first panic: %+v", p)
	}
	t.Logf("reported: %v", panics[1])
	if p := panics[1]; p.Flow != c.String()+" -> "+s.String() || !strings.Contains(p.Where, "flushing") {
		t.Errorf("second panic: %+v", p)
	}
	if e.asm.Buffered() != 0 || e.asm.Flows() != 0 {
		t.Errorf("after Run: %d bytes held, %d flows", e.asm.Buffered(), e.asm.Flows())
	}
}

// panicSource panics in Next for frames listed in bad, and yields the
// others.
type panicSource struct {
	memSource
	bad map[int]int // frame index: panics left
}

func (p *panicSource) Next(pkt *Packet) error {
	if n := p.bad[p.i]; n > 0 {
		p.bad[p.i] = n - 1
		panic("source failed")
	}
	return p.memSource.Next(pkt)
}

// A source that panics once is read on; one that panics again without
// yielding a frame in between ends the run with the PanicError, instead of
// looping.
func TestEnginePanickingSource(t *testing.T) {
	frames, _ := benchFrames(nil, 1, 10)
	for _, tt := range []struct {
		name       string
		bad        map[int]int
		wantReq    int
		wantPanics uint64
		wantErr    error
	}{
		{"once", map[int]int{5: 1}, 10, 1, nil},
		{"twice in a row", map[int]int{5: 2}, 2, 2, ErrPanic},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			e := NewEngine(nil, func(*Request) { n++ })
			err := e.Run(context.Background(), &panicSource{memSource{frames: frames}, tt.bad})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) || n != tt.wantReq || e.Stats().Panics != tt.wantPanics {
				t.Fatalf("err %v, %d requests, %d panics; want %v, %d, %d", err, n, e.Stats().Panics, tt.wantErr, tt.wantReq, tt.wantPanics)
			}
		})
	}
}
