package capture

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/h2c"
)

// fuzzSeg is one segment of FuzzAssembler's input, encoded in 8 bytes
// followed by its payload:
//
//	flags   bit 0 server to client, 1 SYN, 2 ACK, 3 FIN, 4 RST,
//	        5 seq relative to the connection's ISN (else absolute),
//	        6 payload from fuzzSnippets (else the next len bytes)
//	conn    connection (mod 4)
//	seq     4 bytes, big endian
//	dt      time step in 100 ms
//	len     payload length, or snippet index
type fuzzSeg struct {
	flags, conn byte
	seq         uint32
	dt, n       byte
	payload     string
}

const (
	fzServer = 1 << iota
	fzSYN
	fzACK
	fzFIN
	fzRST
	fzRel
	fzSnippet
)

var fuzzSnippets = []string{
	"GET / HTTP/1.1\r\nHost: f.example\r\n\r\n",
	"GET /a HTTP/1.1\r\n",
	"Host: h.example\r\n",
	"\r\n",
	"POST /p HTTP/1.1\r\nHost: f.example\r\nContent-Length: 5\r\n\r\n",
	"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\n",
	"GET /" + strings.Repeat("x", 300) + " HTTP/1.1\r\n",
	"Host: " + strings.Repeat("h", 300) + "\r\n",
	strings.Repeat("y", 3000),
	"X-Pad: " + strings.Repeat("z", 200) + "\r\n",
	// h2c (11 on): the preface and a request (GET http://f.example/h2,
	// HPACK), a DATA frame, an Upgrade request and the preface alone, a
	// HEADERS frame without END_HEADERS and its CONTINUATION.
	h2c.Preface + "\x00\x00\x00\x04\x00\x00\x00\x00\x00" + "\x00\x00\x12\x01\x05\x00\x00\x00\x01\x82\x86\x41\x09f.example\x44\x03/h2",
	"\x00\x00\x05\x00\x00\x00\x00\x00\x01hello",
	"GET /u HTTP/1.1\r\nHost: f.example\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n",
	h2c.Preface,
	"\x00\x00\x03\x01\x00\x00\x00\x00\x03\x82\x86\x41",
	"\x00\x00\x0c\x09\x04\x00\x00\x00\x03\x09f.example\x84\xbe",
}

func (s fuzzSeg) encode() []byte {
	b := []byte{s.flags, s.conn, 0, 0, 0, 0, s.dt, s.n}
	binary.BigEndian.PutUint32(b[2:], s.seq)
	if s.flags&fzSnippet == 0 {
		b[7] = byte(len(s.payload))
		b = append(b, s.payload...)
	}
	return b
}

func fuzzInput(segs ...fuzzSeg) []byte {
	var b []byte
	for _, s := range segs {
		b = append(b, s.encode()...)
	}
	return b
}

// FuzzAssembler feeds the reassembler arbitrary sequences of segments of
// four connections (direction, flags, sequence numbers, payloads, time
// steps), with caps small enough to be reached, and checks after every
// segment that nothing panics, the bytes counted are the bytes held (by a
// recount), never negative nor over MaxBuffer, no flow holds more than
// MaxFlowBuffer, and every URL reported is absolute; after Flush nothing is
// held or tracked.
func FuzzAssembler(f *testing.F) {
	isn := func(v uint32) []fuzzSeg { // a handshake at isn v, for conn 0
		return []fuzzSeg{{flags: fzSYN, seq: v}, {flags: fzServer | fzSYN | fzACK, seq: 7}}
	}
	req := "GET /w HTTP/1.1\r\nHost: h\r\n\r\n"
	far := func(v uint32, off uint32) []byte { // a request, then a segment off past the next byte
		segs := append(isn(v), fuzzSeg{flags: fzACK, seq: v + 1, payload: req},
			fuzzSeg{flags: fzACK, seq: v + 1 + uint32(len(req)) + off, payload: req},
			fuzzSeg{flags: fzACK, seq: v + 1 + uint32(len(req)), payload: req})
		return fuzzInput(segs...)
	}
	for _, v := range []uint32{0, 1, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1} {
		f.Add(far(v, 1<<31))   // the pair that once panicked
		f.Add(far(v, 1<<32-1)) // just before: 2^32 apart from the next byte
		f.Add(far(v, 1<<31-1))
	}
	f.Add(fuzzInput(fuzzSeg{flags: fzACK, seq: 1<<32 - 10, payload: "GET /wrap HTTP/1.1\r\nHost: h\r\n\r\n"}))
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 1}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1, n: 7},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 500, n: 9}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 4000, n: 9, dt: 30},
		fuzzSeg{flags: fzRST, conn: 1}))
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 2}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 2, seq: 1, n: 5},
		fuzzSeg{flags: fzACK | fzRel | fzFIN | fzSnippet, conn: 2, seq: 1 + uint32(len(fuzzSnippets[5])), n: 0}))
	// Fast Open, its SYN again, an RST, then retransmissions.
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzSnippet, conn: 3, seq: 100, n: 5}, fuzzSeg{flags: fzSYN | fzSnippet, conn: 3, seq: 100, n: 5},
		fuzzSeg{flags: fzRST | fzRel, conn: 3, seq: 1}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 3, seq: 1, n: 5},
		fuzzSeg{flags: fzSYN | fzSnippet, conn: 3, seq: 100, n: 5}))
	// ClientHellos: whole (snippets), and one over records of 100 bytes
	// in segments of 200, then bytes after it that look like HTTP.
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, seq: 1, n: byte(helloSnippet)}))
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 1}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1, n: byte(helloSnippet + 1)},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1 + uint32(len(fuzzSnippets[helloSnippet+1])), n: 0}))
	hello := records(realHello(f, "curl"), 100)
	segs := []fuzzSeg{{flags: fzSYN | fzRel, conn: 2}}
	for off := 0; off < len(hello); off += 200 {
		segs = append(segs, fuzzSeg{flags: fzACK | fzRel, conn: 2, seq: 1 + uint32(off), payload: string(hello[off:min(off+200, len(hello))])})
	}
	f.Add(fuzzInput(segs...))
	// STARTTLS: an SMTP prelude, then the hello in the same stream; a
	// PostgreSQL SSLRequest, then the hello.
	smtp := "EHLO c.example\r\nSTARTTLS\r\n"
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 3}, fuzzSeg{flags: fzACK | fzRel, conn: 3, seq: 1, payload: smtp},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 3, seq: 1 + uint32(len(smtp)), n: byte(helloSnippet)}))
	pg := "\x00\x00\x00\x08\x04\xd2\x16\x2f"
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 1}, fuzzSeg{flags: fzACK | fzRel, conn: 1, seq: 1, payload: pg},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1 + uint32(len(pg)), n: byte(helloSnippet)}))
	// h2c: a connection with prior knowledge, then DATA and a request in
	// two frames (its second field from the dynamic table); an Upgrade,
	// the preface after it, a request; an Upgrade declined.
	f.Add(fuzzInput(append(isn(50), fuzzSeg{flags: fzACK | fzRel | fzSnippet, seq: 1, n: 11},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, seq: 1 + uint32(len(fuzzSnippets[11])), n: 12},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, seq: 1 + uint32(len(fuzzSnippets[11])+len(fuzzSnippets[12])), n: 15},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, seq: 1 + uint32(len(fuzzSnippets[11])+len(fuzzSnippets[12])+len(fuzzSnippets[15])), n: 16})...))
	up := fuzzSnippets[13]
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 1}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1, n: 13},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 1, seq: 1 + uint32(len(up)), n: 14},
		fuzzSeg{flags: fzACK | fzRel, conn: 1, seq: 1 + uint32(len(up)+len(h2c.Preface)), payload: fuzzSnippets[11][len(h2c.Preface):]}))
	f.Add(fuzzInput(fuzzSeg{flags: fzSYN | fzRel, conn: 2}, fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 2, seq: 1, n: 13},
		fuzzSeg{flags: fzACK | fzRel | fzSnippet, conn: 2, seq: 1 + uint32(len(up)), n: 0}))
	opts := AssemblerOptions{MaxFlowBuffer: 8192, MaxBuffer: 16384, MaxLine: 256, MaxFlows: 6,
		IdleTimeout: 5 * time.Second, GapTimeout: time.Second, MaxClosed: 3, ClosedLinger: 10 * time.Second}
	srvAddr := netip.MustParseAddrPort("192.0.2.1:80")
	f.Fuzz(func(t *testing.T, data []byte) {
		a := newAssembler(&opts, func(r *Request) {
			if r.Proto == ProtoH2C && (r.Tunnel || strings.Contains(string(r.URL), "://")) {
				return // :scheme and :authority are as sent
			}
			if !strings.HasPrefix(string(r.URL), "http://") && (r.Proto != ProtoTLS || !strings.HasPrefix(string(r.URL), "https://")) {
				t.Fatalf("URL %q", r.URL)
			}
		})
		ts := t0
		var isns [4]uint32
		for i := 0; len(data) >= 8 && i < 1000; i++ {
			flags, conn, seq, dt, n := data[0], data[1]&3, binary.BigEndian.Uint32(data[2:]), data[6], int(data[7])
			data = data[8:]
			var payload []byte
			if flags&fzSnippet != 0 {
				payload = []byte(fuzzSnippets[n%len(fuzzSnippets)])
			} else {
				n = min(n, len(data))
				payload, data = data[:n], data[n:]
			}
			if flags&fzSYN != 0 && flags&fzRel == 0 {
				isns[conn] = seq
			}
			if flags&fzRel != 0 {
				seq += isns[conn]
			}
			cl := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), 40000+uint16(conn))
			s := &Segment{Src: cl, Dst: srvAddr, Seq: seq, SYN: flags&fzSYN != 0, ACK: flags&fzACK != 0,
				FIN: flags&fzFIN != 0, RST: flags&fzRST != 0, Payload: payload}
			if flags&fzServer != 0 {
				s.Src, s.Dst = s.Dst, s.Src
			}
			ts = ts.Add(time.Duration(dt) * 100 * time.Millisecond)
			a.Add(ts, s)
			checkHeld(t, a)
		}
		a.Flush()
		if a.Buffered() != 0 || a.Flows() != 0 {
			t.Fatalf("after Flush: %d bytes held, %d flows", a.Buffered(), a.Flows())
		}
	})
}

// checkHeld checks the assembler's accounting against a recount.
func checkHeld(t *testing.T, a *assembler) {
	t.Helper()
	n := 0
	for _, h := range a.flows {
		if h.oooBytes < 0 || h.lineCap < 0 || h.oooBytes+h.lineCap > a.opts.MaxFlowBuffer {
			t.Fatalf("a flow holds %d out-of-order and %d parser bytes (cap %d)", h.oooBytes, h.lineCap, a.opts.MaxFlowBuffer)
		}
		ooo := 0
		for _, s := range h.ooo {
			ooo += cap(s.data)
		}
		line := 0
		if h.parser != nil {
			line = h.parser.Held()
		}
		if ooo != h.oooBytes || line != h.lineCap {
			t.Fatalf("a flow counts %d+%d bytes, holds %d+%d", h.oooBytes, h.lineCap, ooo, line)
		}
		n += h.held()
	}
	if c := a.closed.len(); c > a.opts.MaxClosed || a.closed.n < c {
		t.Fatalf("%d closed directions remembered, %d in order, cap %d", c, a.closed.n, a.opts.MaxClosed)
	}
	if b := a.Buffered(); b != n || b < 0 || b > a.opts.MaxBuffer {
		t.Fatalf("Buffered %d, recount %d, cap %d", b, n, a.opts.MaxBuffer)
	}
}
