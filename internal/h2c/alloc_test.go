package h2c

import (
	"fmt"
	"testing"
)

// established is a decoder past its preface, SETTINGS and a first request.
func established(t testing.TB) *Decoder {
	c := newClient()
	c.fr.WriteSettings()
	c.request(1, ":method", "POST", ":scheme", "http", ":authority", "a.example", ":path", "/upload")
	d := NewDecoder(PriorKnowledge)
	if err := d.Feed(c.out.Bytes(), func(*Request) {}); err != nil {
		t.Fatal(err)
	}
	return d
}

// A segment of DATA on an established connection allocates nothing,
// whether it starts a frame or holds only payload.
func TestDataAllocs(t *testing.T) {
	d := established(t)
	c := newClient()
	c.fr.WriteData(1, false, make([]byte, 1400))
	frame := c.out.Bytes()[len(Preface):]
	payload := make([]byte, 1400)
	c.out.Reset()
	c.fr.WriteData(1, false, make([]byte, 1<<20-1))
	hdr := c.out.Bytes()[:frameHeaderLen] // a 1 MiB frame's header, then payload segments
	// emit is a new closure each call, as a caller's would be: Feed does
	// not keep it, so it need not be allocated.
	requests := 0
	if n := testing.AllocsPerRun(1000, func() {
		if err := d.Feed(frame, func(*Request) { requests++ }); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a DATA frame: %v allocations", n)
	}
	if err := d.Feed(hdr, nil); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(700, func() {
		if err := d.Feed(payload, func(*Request) { requests++ }); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a DATA payload segment: %v allocations", n)
	}
	if requests != 0 {
		t.Errorf("%d requests from DATA", requests)
	}
}

// requestFrames is a browser-like request's HEADERS frame: after the
// first, its fields come from the dynamic table, but for a new path.
func requestFrames(stream uint32, c *client, path string) []byte {
	c.out.Reset()
	c.request(stream, ":method", "GET", ":scheme", "http", ":authority", "www.example.com", ":path", path,
		"user-agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
		"accept", "*/*", "accept-language", "en-US,en;q=0.5", "referer", "http://www.example.com/")
	return append([]byte(nil), c.out.Bytes()...)
}

// connection is a connection's preface and first request, then n more
// requests, for the same path when samePath.
func connection(n int, samePath bool) [][]byte {
	c := newClient()
	frames := [][]byte{append([]byte(Preface), requestFrames(1, c, "/static/app.js")...)}
	for i := range n {
		path := "/static/app.js"
		if !samePath {
			path = fmt.Sprintf("/static/%d.js", i)
		}
		frames = append(frames, requestFrames(uint32(3+2*i), c, path))
	}
	return frames
}

// A request whose fields are all in the dynamic table allocates nothing
// either; a literal field costs hpack a string (BenchmarkRequest measures).
func TestIndexedRequestAllocs(t *testing.T) {
	frames := connection(101, true)
	d := NewDecoder(PriorKnowledge)
	got := 0
	emit := func(*Request) { got++ }
	if err := d.Feed(frames[0], emit); err != nil {
		t.Fatal(err)
	}
	i := 1
	n := testing.AllocsPerRun(100, func() {
		if err := d.Feed(frames[i], emit); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if n != 0 || got != 102 {
		t.Errorf("an indexed request: %v allocations, %d requests", n, got)
	}
}

// BenchmarkRequest: a connection's first request (the Decoder's own
// allocation and every field literal), a later request for a new path
// (the path literal), and one for the same path (all indexed).
func BenchmarkRequest(b *testing.B) {
	emit := func(*Request) {}
	b.Run("first", func(b *testing.B) {
		frame := connection(0, true)[0]
		b.ReportAllocs()
		for b.Loop() {
			NewDecoder(PriorKnowledge).Feed(frame, emit)
		}
	})
	for _, bc := range []struct {
		name     string
		samePath bool
	}{{"new-path", false}, {"same-path", true}} {
		b.Run(bc.name, func(b *testing.B) {
			frames := connection(1000, bc.samePath)
			var d *Decoder
			i := len(frames)
			b.ReportAllocs()
			for b.Loop() {
				if i == len(frames) {
					b.StopTimer()
					d, i = NewDecoder(PriorKnowledge), 1
					d.Feed(frames[0], emit)
					b.StartTimer()
				}
				d.Feed(frames[i], emit)
				i++
			}
		})
	}
}

// BenchmarkData: DATA frames of 16 KiB, fed in 1448-byte segments.
func BenchmarkData(b *testing.B) {
	d := established(b)
	c := newClient()
	c.fr.WriteData(1, false, make([]byte, 16384))
	frame := c.out.Bytes()[len(Preface):]
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		for p := frame; len(p) > 0; {
			n := min(len(p), 1448)
			d.Feed(p[:n], nil)
			p = p[n:]
		}
	}
}
