package h2c

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// client writes a client's side of an HTTP/2 connection with
// golang.org/x/net/http2's Framer and hpack's Encoder: the frames are
// made by a real implementation, and by hand only where they must be
// broken.
type client struct {
	out bytes.Buffer
	fr  *http2.Framer
	hb  bytes.Buffer
	enc *hpack.Encoder
}

func newClient() *client {
	c := &client{}
	c.out.WriteString(Preface)
	c.fr = http2.NewFramer(&c.out, nil)
	c.fr.AllowIllegalWrites = true
	c.enc = hpack.NewEncoder(&c.hb)
	return c
}

// block HPACK-encodes name, value pairs.
func (c *client) block(kv ...string) []byte {
	c.hb.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := c.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]}); err != nil {
			panic(err)
		}
	}
	return bytes.Clone(c.hb.Bytes())
}

func (c *client) request(stream uint32, kv ...string) *client {
	c.headers(stream, c.block(kv...))
	return c
}

func (c *client) headers(stream uint32, block []byte) {
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: block, EndHeaders: true}); err != nil {
		panic(err)
	}
}

// get is an ordinary GET's header block.
func get(authority, path string) []string {
	return []string{":method", "GET", ":scheme", "http", ":authority", authority, ":path", path,
		"user-agent", "test/1.0", "accept", "*/*"}
}

func decodeAll(t *testing.T, start Start, data []byte) ([]string, error) {
	t.Helper()
	whole, err := decodePieces(t, start, data, func() int { return len(data) })
	// The same bytes one at a time must give the same requests and error.
	bytewise, err1 := decodePieces(t, start, data, func() int { return 1 })
	if strings.Join(whole, "\n") != strings.Join(bytewise, "\n") || errors.Unwrap(err) != errors.Unwrap(err1) {
		t.Errorf("whole %q %v, byte by byte %q %v", whole, err, bytewise, err1)
	}
	return whole, err
}

func TestDecoder(t *testing.T) {
	big := strings.Repeat("v", 5000)
	tests := []struct {
		name  string
		start Start
		make  func(c *client)
		want  []string
	}{
		{"one request", PriorKnowledge, func(c *client) {
			c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
			c.fr.WriteWindowUpdate(0, 1<<20)
			c.request(1, get("example.com", "/a?b=c")...)
		}, []string{"1 GET http example.com /a?b=c"}},
		{"dynamic table across requests", PriorKnowledge, func(c *client) {
			c.request(1, get("example.com", "/one")...)
			c.request(3, get("example.com", "/one")...)
			c.request(5, get("other.example", "/two")...)
		}, []string{"1 GET http example.com /one", "3 GET http example.com /one", "5 GET http other.example /two"}},
		{"host header when no :authority", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "GET", ":scheme", "http", ":path", "/h", "host", "h.example:8080")
		}, []string{"1 GET http h.example:8080 /h"}},
		{":authority wins over host", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "GET", "host", "h.example", ":scheme", "http", ":authority", "a.example", ":path", "/")
		}, []string{"1 GET http a.example /"}},
		{"no authority at all", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "OPTIONS", ":scheme", "http", ":path", "*")
		}, []string{"1 OPTIONS http  *"}},
		{"first of a repeated field", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "GET", ":scheme", "http", ":authority", "a.example", ":path", "/first", ":path", "/second")
		}, []string{"1 GET http a.example /first"}},
		{"CONNECT", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "CONNECT", ":authority", "tunnel.example:443")
		}, []string{"1 CONNECT  tunnel.example:443 "}},
		{"trailers are not requests, and stay in the table", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "POST", ":scheme", "http", ":authority", "a.example", ":path", "/up")
			c.fr.WriteData(1, false, []byte("body"))
			c.request(1, "x-checksum", "abc123") // indexed by the encoder
			c.request(3, ":method", "GET", ":scheme", "http", ":authority", "a.example", ":path", "/after", "x-checksum", "abc123")
		}, []string{"1 POST http a.example /up", "3 GET http a.example /after"}},
		{"stream 1 after an upgrade", Upgraded, func(c *client) {
			c.request(1, "x-trailer", "t") // the upgraded request's trailers
			c.request(3, get("up.example", "/next")...)
		}, []string{"3 GET http up.example /next"}},
		{"stream 1 with prior knowledge", PriorKnowledge, func(c *client) {
			c.request(1, get("pk.example", "/first")...)
		}, []string{"1 GET http pk.example /first"}},
		{"even and lower streams are not requests", PriorKnowledge, func(c *client) {
			c.request(5, get("a.example", "/five")...)
			c.request(2, get("a.example", "/even")...)
			c.request(3, get("a.example", "/lower")...)
			c.request(7, get("a.example", "/seven")...)
		}, []string{"5 GET http a.example /five", "7 GET http a.example /seven"}},
		{"CONTINUATION", PriorKnowledge, func(c *client) {
			b := c.block(append(get("c.example", "/cont"), "x-big", big)...)
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:10]})
			c.fr.WriteContinuation(1, false, b[10:2000])
			c.fr.WriteContinuation(1, false, nil)
			c.fr.WriteContinuation(1, true, b[2000:])
		}, []string{"1 GET http c.example /cont"}},
		{"PADDED and PRIORITY", PriorKnowledge, func(c *client) {
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.block(get("p.example", "/pad")...),
				EndHeaders: true, PadLength: 200, Priority: http2.PriorityParam{StreamDep: 0, Weight: 15}})
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: c.block(get("p.example", "/pad2")...),
				EndHeaders: true, PadLength: 1})
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: c.block(get("p.example", "/prio")...),
				EndHeaders: true, Priority: http2.PriorityParam{StreamDep: 3, Exclusive: true, Weight: 255}})
		}, []string{"1 GET http p.example /pad", "3 GET http p.example /pad2", "5 GET http p.example /prio"}},
		{"HEADERS of only padding, then CONTINUATION", PriorKnowledge, func(c *client) {
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, PadLength: 7})
			c.fr.WriteContinuation(1, true, c.block(get("e.example", "/empty-first")...))
		}, []string{"1 GET http e.example /empty-first"}},
		{"frames skipped by length", PriorKnowledge, func(c *client) {
			c.request(1, ":method", "POST", ":scheme", "http", ":authority", "d.example", ":path", "/data")
			c.fr.WriteData(1, false, bytes.Repeat([]byte("PRI * HTTP/2.0\r\n"), 1000))
			c.fr.WritePing(false, [8]byte{1})
			c.fr.WriteRSTStream(1, http2.ErrCodeCancel)
			c.fr.WritePriority(9, http2.PriorityParam{Weight: 1})
			c.fr.WriteRawFrame(0xfa, 0xff, 9, []byte("an unknown frame type"))
			c.fr.WriteDataPadded(1, true, []byte("x"), make([]byte, 100))
			c.request(3, get("d.example", "/after")...)
		}, []string{"1 POST http d.example /data", "3 GET http d.example /after"}},
		{"a 64 KiB dynamic table", PriorKnowledge, func(c *client) {
			c.enc.SetMaxDynamicTableSizeLimit(MaxTableSize)
			c.enc.SetMaxDynamicTableSize(MaxTableSize)
			var kv []string
			for i := range 10 {
				kv = append(kv, "x-f"+string(rune('a'+i)), big)
			}
			c.request(1, append(get("t.example", "/fill"), kv...)...)
			// x-fa is still in a 64 KiB table (not in a 4 KiB one): the
			// encoder refers to it by index.
			c.request(3, append(get("t.example", "/ref"), "x-fa", big)...)
		}, []string{"1 GET http t.example /fill", "3 GET http t.example /ref"}},
		{"table size down to 0 and back", PriorKnowledge, func(c *client) {
			c.request(1, get("z.example", "/one")...)
			c.enc.SetMaxDynamicTableSize(0)
			c.request(3, get("z.example", "/two")...)
			c.enc.SetMaxDynamicTableSize(4096)
			c.request(5, get("z.example", "/three")...)
			c.request(7, get("z.example", "/three")...)
		}, []string{"1 GET http z.example /one", "3 GET http z.example /two", "5 GET http z.example /three", "7 GET http z.example /three"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient()
			tt.make(c)
			got, err := decodeAll(t, tt.start, c.out.Bytes())
			if err != nil {
				t.Fatalf("error %v after %q", err, got)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("requests\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// blockOfSize is a valid header block of exactly n bytes (n > 2000) for a
// GET of path: its last field is sized to fill it.
func blockOfSize(c *client, n int, path string) []byte {
	b := c.block(get("cap.example", path)...)
	for len(b) < n-20000 {
		b = append(b, c.block("x-fill", strings.Repeat("\xff", 15000))...)
	}
	// The last field by a fresh encoder (a literal name, whatever c's
	// table holds), sized by a probe of the same form.
	last := func(n int) []byte { return newClient().block("x-last", strings.Repeat("\xff", n)) }
	over := len(last(1000)) - 1000 // the field's bytes besides its value
	b = append(b, last(n-len(b)-over)...)
	if len(b) != n {
		panic("blockOfSize: wrong length")
	}
	return b
}

// writeBlock sends a header block on stream in frames of 16 KiB.
func writeBlock(c *client, stream uint32, b []byte) {
	const max = 16384
	first := b[:min(len(b), max)]
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: first, EndHeaders: len(first) == len(b)})
	for b = b[len(first):]; len(b) > 0; {
		k := min(len(b), max)
		c.fr.WriteContinuation(stream, k == len(b), b[:k])
		b = b[k:]
	}
}

func TestCaps(t *testing.T) {
	t.Run("header block of MaxHeaderBlock", func(t *testing.T) {
		c := newClient()
		writeBlock(c, 1, blockOfSize(c, MaxHeaderBlock, "/at-cap"))
		got, err := decodeAll(t, PriorKnowledge, c.out.Bytes())
		if err != nil || len(got) != 1 || got[0] != "1 GET http cap.example /at-cap" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("header block over MaxHeaderBlock", func(t *testing.T) {
		c := newClient()
		c.request(1, get("cap.example", "/before")...)
		writeBlock(c, 3, blockOfSize(c, MaxHeaderBlock+1, "/over-cap"))
		c.request(5, get("cap.example", "/after")...)
		got, err := decodeAll(t, PriorKnowledge, c.out.Bytes())
		if !errors.Is(err, ErrHeaderBlock) || len(got) != 1 {
			t.Fatalf("got %q, %v; want 1 request then ErrHeaderBlock", got, err)
		}
	})
	t.Run("field decoded past MaxHeaderBlock", func(t *testing.T) {
		// 'a' is 5 bits in Huffman: 100,000 of them take 62,500 bytes,
		// within MaxHeaderBlock, and decode to more.
		c := newClient()
		b := c.block(append(get("huff.example", "/h"), "x-h", strings.Repeat("a", 100000))...)
		if len(b) > MaxHeaderBlock {
			t.Fatalf("block of %d bytes", len(b))
		}
		writeBlock(c, 1, b)
		got, err := decodeAll(t, PriorKnowledge, c.out.Bytes())
		if !errors.Is(err, ErrHeaderBlock) || len(got) != 0 {
			t.Fatalf("got %q, %v; want ErrHeaderBlock", got, err)
		}
	})
	for _, size := range []uint32{MaxTableSize, MaxTableSize + 1, 1 << 20} {
		c := newClient()
		c.request(1, get("ts.example", "/before")...)
		c.enc.SetMaxDynamicTableSizeLimit(1 << 20)
		c.enc.SetMaxDynamicTableSize(size)
		c.request(3, get("ts.example", "/after")...)
		got, err := decodeAll(t, PriorKnowledge, c.out.Bytes())
		if size <= MaxTableSize {
			if err != nil || len(got) != 2 {
				t.Errorf("table size %d: got %q, %v", size, got, err)
			}
		} else if !errors.Is(err, ErrTableSize) || len(got) != 1 {
			t.Errorf("table size %d: got %q, %v; want ErrTableSize", size, got, err)
		}
	}
}

// raw is a frame written by hand: 9-byte header and payload.
func raw(typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags,
		byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
	return append(b, payload...)
}

func TestHostile(t *testing.T) {
	ok := newClient().block(get("h.example", "/ok")...)
	over := raw(frameHeaders, 0, 1, nil)
	over[0], over[1], over[2] = 0x01, 0x00, 0x01 // 65537 bytes declared: given up before they come
	tests := []struct {
		name  string
		bytes []byte // after the preface
		want  error
	}{
		{"CONTINUATION without HEADERS", raw(frameContinuation, flagEndHeaders, 1, ok), ErrFrame},
		{"DATA inside a header block", append(raw(frameHeaders, 0, 1, ok[:3]), raw(0, 0, 1, []byte("x"))...), ErrFrame},
		{"CONTINUATION of another stream", append(raw(frameHeaders, 0, 1, ok[:3]), raw(frameContinuation, flagEndHeaders, 3, ok[3:])...), ErrFrame},
		{"HEADERS on stream 0", raw(frameHeaders, flagEndHeaders, 0, ok), ErrFrame},
		{"padding longer than the frame", raw(frameHeaders, flagEndHeaders|flagPadded, 1, append([]byte{byte(len(ok) + 1)}, ok...)), ErrFrame},
		{"HEADERS shorter than PRIORITY", raw(frameHeaders, flagEndHeaders|flagPriority, 1, []byte{0, 0, 0}), ErrFrame},
		{"HEADERS shorter than its pad length", raw(frameHeaders, flagEndHeaders|flagPadded, 1, nil), ErrFrame},
		{"index 0", raw(frameHeaders, flagEndHeaders, 1, []byte{0x80}), ErrHPACK},
		{"index past the tables", raw(frameHeaders, flagEndHeaders, 1, []byte{0xff, 0x10}), ErrHPACK},
		{"integer overflow", raw(frameHeaders, flagEndHeaders, 1, append([]byte{0xff}, bytes.Repeat([]byte{0xff}, 12)...)), ErrHPACK},
		{"block ends inside a field", raw(frameHeaders, flagEndHeaders, 1, ok[:len(ok)-2]), ErrHPACK},
		{"size update after a field", raw(frameHeaders, flagEndHeaders, 1, append(append([]byte{}, ok...), 0x20)), ErrHPACK},
		{"size update over the cap (65537)", raw(frameHeaders, flagEndHeaders, 1, []byte{0x3f, 0xe2, 0xff, 0x03}), ErrTableSize},
		{"size update over the cap, one byte a frame", append(raw(frameHeaders, 0, 1, []byte{0x3f}),
			append(raw(frameContinuation, 0, 1, []byte{0xe2, 0xff}), raw(frameContinuation, flagEndHeaders, 1, []byte{0x03})...)...), ErrTableSize},
		{"declared block over the cap", over, ErrHeaderBlock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := append([]byte(Preface), tt.bytes...)
			data = append(data, newClient().request(1, get("late.example", "/late")...).out.Bytes()[len(Preface):]...)
			got, err := decodeAll(t, PriorKnowledge, data)
			if !errors.Is(err, tt.want) || len(got) != 0 {
				t.Fatalf("got %q, %v; want %v", got, err, tt.want)
			}
		})
	}
	t.Run("not the preface", func(t *testing.T) {
		for _, s := range []string{"GET / HTTP/1.1\r\n\r\n", "PRI * HTTP/2.0\r\n\r\nXX", "\x16\x03\x01"} {
			if _, err := decodeAll(t, PriorKnowledge, []byte(s)); !errors.Is(err, ErrPreface) {
				t.Errorf("%q: %v, want ErrPreface", s, err)
			}
		}
	})
	t.Run("the error sticks", func(t *testing.T) {
		d := NewDecoder(PriorKnowledge)
		emitted := 0
		emit := func(*Request) { emitted++ }
		err := d.Feed(append([]byte(Preface), raw(frameContinuation, 0, 1, nil)...), emit)
		if !errors.Is(err, ErrFrame) {
			t.Fatalf("%v", err)
		}
		again := d.Feed(newClient().request(1, get("x.example", "/")...).out.Bytes()[len(Preface):], emit)
		if again != err || emitted != 0 {
			t.Errorf("after the error: %v, %d requests", again, emitted)
		}
	})
}

func TestLost(t *testing.T) {
	c := newClient()
	c.request(1, ":method", "POST", ":scheme", "http", ":authority", "l.example", ":path", "/up")
	c.fr.WriteData(1, false, make([]byte, 1000))
	c.request(3, get("l.example", "/after")...)
	data := c.out.Bytes()
	// Find the DATA frame's payload: after the preface, the first HEADERS.
	i := bytes.Index(data, []byte{0x00, 0x03, 0xe8, 0x00}) // length 1000, type DATA
	if i < 0 {
		t.Fatal("no DATA frame")
	}
	payload := i + frameHeaderLen
	for _, tt := range []struct {
		name       string
		from, lost int
		want       error
		requests   int
	}{
		{"inside DATA", payload + 10, 500, nil, 2},
		{"to the end of DATA", payload, 1000, nil, 2},
		{"past the end of DATA", payload + 10, 1000, ErrLost, 1},
		{"a frame header", i, 5, ErrLost, 1},
		{"unknown length", payload + 10, -1, ErrLost, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(PriorKnowledge)
			n := 0
			emit := func(*Request) { n++ }
			err := d.Feed(data[:tt.from], emit)
			if err == nil {
				err = d.Lost(tt.lost)
			}
			if err == nil {
				skip := max(tt.lost, 0)
				err = d.Feed(data[tt.from+skip:], emit)
			}
			if !errors.Is(err, tt.want) || n != tt.requests {
				t.Errorf("%v, %d requests; want %v, %d", err, n, tt.want, tt.requests)
			}
		})
	}
}

// fullTable is a connection that raises the dynamic table to
// MaxTableSize and fills it, then sends one request: per block, n
// literal fields with incremental indexing, each a new name and value.
func fullTable(conn, n int) []byte {
	c := newClient()
	c.enc.SetMaxDynamicTableSizeLimit(MaxTableSize)
	c.enc.SetMaxDynamicTableSize(MaxTableSize)
	stream := uint32(1)
	for size := 0; size < 2*MaxTableSize; stream += 2 {
		kv := get("full.example", fmt.Sprintf("/%d/%d", conn, stream))
		for k := range n {
			name, value := fmt.Sprintf("x-%d-%d", stream, k), fmt.Sprintf("%d.%d.%d", conn, stream, k)
			kv = append(kv, name, value)
			size += len(name) + len(value) + 32
		}
		c.request(stream, kv...)
	}
	return c.out.Bytes()
}

func TestHeld(t *testing.T) {
	if s := unsafe.Sizeof(Decoder{}); s > DecoderCost {
		t.Errorf("a Decoder is %d bytes, DecoderCost %d", s, DecoderCost)
	}
	d := NewDecoder(PriorKnowledge)
	if d.Held() != DecoderCost {
		t.Errorf("a new decoder holds %d", d.Held())
	}
	// Small entries: the most entries a table of MaxTableSize holds.
	for _, n := range []int{1, 100} {
		d := NewDecoder(PriorKnowledge)
		if err := d.Feed(fullTable(0, n), func(*Request) {}); err != nil {
			t.Fatal(err)
		}
		if d.tab.size < MaxTableSize*9/10 || d.tab.max != MaxTableSize {
			t.Fatalf("%d a block: table of %d, max %d", n, d.tab.size, d.tab.max)
		}
		if h := d.Held(); h < DecoderCost+int(d.tab.size)-d.tab.n*entryOverhead || h > DecoderCost+MaxTableSize*11/8+4*keepCap {
			t.Errorf("%d a block: a full table, %d entries, holds %d", n, d.tab.n, h)
		}
	}
	c := newClient()
	c.request(1, get("held.example", "/")...)
	b := blockOfSize(c, MaxHeaderBlock, "/big")
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: b[:len(b)-1]})
	d = NewDecoder(PriorKnowledge)
	if err := d.Feed(c.out.Bytes(), func(*Request) {}); err != nil {
		t.Fatal(err)
	}
	// A header block open: held whole until it ends.
	if h := d.Held(); h < DecoderCost+len(b)-1 || h > DecoderCost+MaxTableSize*11/8+MaxHeaderBlock+3*keepCap {
		t.Errorf("holds %d with a block of %d open", h, len(b)-1)
	}
}

// What Held counts is what the heap holds: 100 connections, each with a
// dynamic table of 64 KiB full of small entries (what took hpack's table
// to about 2.5 times its size).
func TestHeldIsTheHeap(t *testing.T) {
	racetest.SkipSequential(t)
	const conns = 100
	streams := make([][]byte, conns)
	for i := range streams {
		streams[i] = fullTable(i, 100)
	}
	var before, after runtime.MemStats
	runtime.GC() // twice, to empty the pools' victim caches
	runtime.GC()
	runtime.ReadMemStats(&before)
	ds := make([]*Decoder, conns)
	held := 0
	for i := range ds {
		ds[i] = NewDecoder(PriorKnowledge)
		if err := ds[i].Feed(streams[i], func(*Request) {}); err != nil {
			t.Fatal(err)
		}
		held += ds[i].Held()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int(after.HeapAlloc) - int(before.HeapAlloc)
	t.Logf("%d decoders: Held %d KiB, heap %d KiB", conns, held>>10, heap>>10)
	if heap > held*21/20+64<<10 {
		t.Errorf("the heap grew by %d KiB, Held counts %d KiB", heap>>10, held>>10)
	}
	runtime.KeepAlive(ds)
	runtime.KeepAlive(streams)
}

// SetLimit is reached and refused: the table, the header block and the
// values stop growing at the limit, the connection is given up
// (ErrMemory) and Held never passes it.
func TestLimit(t *testing.T) {
	c := newClient()
	c.request(1, get("limit.example", "/small")...)
	small := c.out.Len()
	big := newClient()
	writeBlock(big, 1, blockOfSize(big, 40000, "/big"))
	for _, tt := range []struct {
		name  string
		data  []byte
		limit int
		want  int // requests
	}{
		{"table", fullTable(0, 10), 32 << 10, 1},
		{"header block", big.out.Bytes(), 16 << 10, 0},
		{"first request", c.out.Bytes()[:small], DecoderCost + 100, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, step := range []int{len(tt.data), 1000, 1} {
				d := NewDecoder(PriorKnowledge)
				d.SetLimit(tt.limit)
				n, peak := 0, 0
				var err error
				for p := tt.data; len(p) > 0 && err == nil; p = p[min(step, len(p)):] {
					err = d.Feed(p[:min(step, len(p))], func(*Request) { n++ })
					peak = max(peak, d.Held())
				}
				if !errors.Is(err, ErrMemory) || peak > tt.limit || n < tt.want {
					t.Errorf("in pieces of %d: %v, peak %d over a limit of %d, %d requests", step, err, peak, tt.limit, n)
				}
			}
		})
	}
	// Without a limit, the same bytes decode.
	d := NewDecoder(PriorKnowledge)
	if err := d.Feed(fullTable(0, 10), func(*Request) {}); err != nil {
		t.Fatal(err)
	}
}

// The static table is hpack's.
func TestStaticTable(t *testing.T) {
	for i, f := range staticTable {
		hf, err := hpack.NewDecoder(4096, nil).DecodeFull([]byte{0x80 | byte(i+1)})
		if err != nil || len(hf) != 1 || hf[0].Name != f[0] || hf[0].Value != f[1] {
			t.Errorf("index %d: %q, hpack %v %v", i+1, f, hf, err)
		}
	}
}
