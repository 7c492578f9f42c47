package h2c

import (
	"net/netip"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
	h2 "github.com/urldedupd/urldedupd/internal/h2c"
)

// FuzzParser feeds the preface and arbitrary frames to the parser in
// pieces, with holes: it never panics, reports only URLs that keep the
// text rule, counts each connection once, and holds nothing once ended.
func FuzzParser(f *testing.F) {
	// A HEADERS frame on stream 1, END_HEADERS|END_STREAM: :method GET,
	// :scheme http, :path /, :authority h (literal without indexing).
	headers := "\x00\x00\x0a\x01\x05\x00\x00\x00\x01\x82\x86\x84\x41\x01h\x00\x00\x00"
	f.Add([]byte(headers), uint8(5), false, uint8(0))
	f.Add([]byte(headers+headers), uint8(0), true, uint8(7))
	f.Fuzz(func(t *testing.T, b []byte, piece uint8, upgrade bool, hole uint8) {
		sink := stream.NewSink(func(r *record.Record) {
			if !record.TextSafe(r.URL) {
				t.Fatalf("URL %q breaks the text rule", r.URL)
			}
		})
		sink.Dst = netip.MustParseAddrPort("192.0.2.1:80")
		c := New(sink, 3)
		preface := []byte(h2.Preface)
		p := c.Take(&stream.Handoff{Dest: []byte("d.example"), Upgrade: upgrade}, preface)
		p.Feed(preface, 1<<20)
		n := int(piece) + 1
		for i := 0; len(b) > 0; i++ {
			k := min(n, len(b))
			p.Feed(b[:k], 1<<20)
			b = b[k:]
			if hole != 0 && i == int(hole) {
				p.Gap(int64(hole))
			}
		}
		p.End()
		p.Collect()
		if c.Stats.Connections != 1 || p.Held() != 0 {
			t.Fatalf("stats %+v, holds %d after End", c.Stats, p.Held())
		}
		if gaveUp := c.Stats.FrameErrors + c.Stats.HPACKErrors + c.Stats.OverCap + c.Stats.Lost; gaveUp > 1 {
			t.Fatalf("given up %d times: %+v", gaveUp, c.Stats)
		}
	})
}
