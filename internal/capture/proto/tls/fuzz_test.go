package tls

import (
	"net/netip"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// FuzzParser feeds a stream that starts like a TLS handshake to the parser
// in pieces: it never panics, holds no more than its budget, reports only
// URLs that keep the text rule, and holds nothing once ended.
func FuzzParser(f *testing.F) {
	f.Add([]byte("\x16\x03\x01\x00\x08\x01\x00\x00\x04\x03\x03\x00\x00"), uint8(3))
	f.Add([]byte("\x16\x03\x01\x00\x02\x01\x00\x16\x03\x01\x00\x02\x00\x02"), uint8(1))
	f.Add([]byte("\x16\x03\x01\x40\x00\x01\x00\xff\xff"), uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, piece uint8) {
		const budget = 4096
		sink := stream.NewSink(func(r *record.Record) {
			if !record.TextSafe(r.URL) {
				t.Fatalf("URL %q breaks the text rule", r.URL)
			}
		})
		sink.Dst = netip.MustParseAddrPort("192.0.2.1:443")
		p := New(sink, 1).Take(&stream.Handoff{DestPort: 8443}, b)
		if p == nil {
			if len(b) > 0 && b[0] == 0x16 {
				t.Fatal("a handshake record declined")
			}
			return
		}
		n := int(piece) + 1
		for len(b) > 0 {
			k := min(n, len(b))
			p.Feed(b[:k], budget)
			b = b[k:]
			if h := p.Held(); h > budget {
				t.Fatalf("holds %d bytes, budget %d", h, budget)
			}
		}
		p.End()
		p.Collect()
		if p.Held() != 0 {
			t.Fatalf("holds %d bytes after End", p.Held())
		}
	})
}
