// Package http1 finds the HTTP/1.x requests in the client side of TCP
// streams, through SOCKS4/4a/5 handshakes and HTTP CONNECT tunnels, and
// recognises the streams of other protocols by their first bytes (TLS,
// SSH, SMTP, IMAP, POP3, FTP, the HTTP/2 preface): those are handed to the
// protocol that takes them (Protocol.Takers: TLS, h2c), else counted by
// kind (Stats.NonHTTP) and skipped.
//
// Every TCP stream starts with this package's parser (Protocol is the
// stream.Factory of the assembler): it keeps only what a request needs
// (method, target, Host), skips bodies by Content-Length or chunked
// encoding so that pipelined requests are found, skips junk line by line,
// and resynchronises at the next request line after a hole.
package http1

import (
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// Stats count what the parsers of one assembler found.
type Stats struct {
	Requests    uint64        // requests recorded
	ParseErrors uint64        // junk runs, bad framing
	NonHTTP     NonHTTPCounts // client streams of another protocol, by StreamKind: skipped
}

// Taker is a protocol that takes over the streams of a kind.
type Taker struct {
	Take stream.Taker
	// Start is true for a protocol that reads only the start of the
	// stream (a TLS ClientHello) into its own buffer: the stream is still
	// counted among the NonHTTP streams of its kind.
	Start bool
}

// Protocol reads the TCP streams of one assembler: it makes their parsers
// (stream.Factory), builds their records and keeps the totals.
type Protocol struct {
	sink    *stream.Sink
	proto   record.Proto
	maxLine int
	rec     record.Record
	url     []byte
	// Takers are the protocols that take over streams of each kind: a
	// stream of a kind without one is counted and skipped.
	Takers [NumStreamKinds]Taker
	// Stats are the totals: those of parsers still open are added when
	// they are collected (stream.Parser.Collect).
	Stats Stats
}

// ParserCost is the bytes of one stream's parser.
const ParserCost = int(unsafe.Sizeof(reqParser{}))

// New returns the Protocol of an assembler's Sink: its records are of
// proto, its lines at most maxLine bytes.
func New(sink *stream.Sink, proto record.Proto, maxLine int) *Protocol {
	return &Protocol{sink: sink, proto: proto, maxLine: maxLine}
}

// NewParser makes the parser of a new direction.
func (c *Protocol) NewParser() stream.Parser { return newStreamParser(c) }

// Answer reports whether b starts like an HTTP/1.x status line:
// "HTTP/1.x NNN".
func (c *Protocol) Answer(b []byte) bool {
	return len(b) >= 12 && string(b[:7]) == "HTTP/1." && b[8] == ' ' &&
		b[9] >= '0' && b[9] <= '9' && b[10] >= '0' && b[10] <= '9' && b[11] >= '0' && b[11] <= '9'
}

// Feed parses in-order bytes.
func (p *reqParser) Feed(b []byte, budget int) {
	p.budget = budget
	p.feed(b, p.report)
	p.cfg.sink.Overflows += uint64(p.overflows)
	p.overflows = 0
}

// Gap takes n bytes lost.
func (p *reqParser) Gap(n int64) { p.gap(n) }

// End ends the stream and releases the buffers.
func (p *reqParser) End() {
	p.close(p.report)
	p.Release()
}

// Held is the capacity of the buffers, and what the parser that took the
// stream over holds.
func (p *reqParser) Held() int {
	n := cap(p.line) + cap(p.req)
	if p.inner != nil {
		n += p.inner.Held()
	}
	return n
}

// Shed drops what is held, for the memory caps.
func (p *reqParser) Shed() (lost bool) {
	if p.inner != nil {
		lost = p.inner.Shed()
	} else if p.holding() {
		lost = true
		p.gap(-1)
	}
	p.Release()
	return lost
}

// Release forgets the buffers.
func (p *reqParser) Release() { p.line, p.req = nil, nil }

// Collect moves the counts into the totals.
func (p *reqParser) Collect() {
	p.collect(&p.cfg.Stats)
	if p.inner != nil {
		p.inner.Collect()
	}
}

// report builds the record of r and hands it to the sink.
func (p *reqParser) report(r *request) {
	c := p.cfg
	s := c.sink
	c.url = appendURL(c.url[:0], r, s.Dst)
	s.Start(&c.rec, c.proto)
	c.rec.Method, c.rec.URL, c.rec.Tunnel, c.rec.UserAgent = r.method, c.url, r.tunnel, r.userAgent
	c.Stats.Requests++
	s.Emit(&c.rec)
}
