// Package h2c records the requests of cleartext HTTP/2 (h2c) streams. It
// takes a stream over (stream.Taker) when the stream starts with the
// HTTP/2 connection preface (prior knowledge), or when the client, after
// an HTTP/1.1 request asking for "Upgrade: h2c", sends the preface (the
// server switched); it decodes the client's frames and header blocks with
// internal/h2c and records each request, :scheme://:authority:path.
package h2c

import (
	"unsafe"

	"errors"
	"math"
	"net/netip"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
	"github.com/urldedupd/urldedupd/internal/counter"
	h2 "github.com/urldedupd/urldedupd/internal/h2c"
)

// Stats count the client streams decoded as cleartext HTTP/2 (h2c).
// A connection given up is counted once, by its reason; its requests
// before that were recorded.
type Stats struct {
	Connections uint64 // client streams decoded as HTTP/2: with the preface (prior knowledge) or after an Upgrade
	Upgrades    uint64 // of them, after an HTTP/1.1 "Upgrade: h2c" request that the server accepted
	FrameErrors uint64 // given up on framing that is not HTTP/2's (after the preface)
	HPACKErrors uint64 // given up on a header block HPACK could not decode: the connection's table is lost
	OverCap     uint64 // given up on a header block over h2.MaxHeaderBlock or a table over h2.MaxTableSize
	Lost        uint64 // given up on bytes lost in a frame header or header block, or on the memory caps (the decoder's table and buffers count in them)
}

// StatsCounters describes Stats' counters (internal/counter); the
// connections given up are one metric, by reason.
var StatsCounters = counter.Table[Stats]{
	{Name: "h2c_connections", Help: "Client streams decoded as cleartext HTTP/2 (h2c): with the preface, or after an accepted Upgrade: h2c", Text: "h2c connections", Field: func(s *Stats) *uint64 { return &s.Connections }},
	{Name: "h2c_upgrades", Help: "Of the h2c connections, those after an HTTP/1.1 Upgrade: h2c request", Text: "upgraded", Field: func(s *Stats) *uint64 { return &s.Upgrades }},
	{Name: "h2c_frame_errors", Help: "h2c connections given up on framing that is not HTTP/2's", Text: "given up: framing errors",
		Metric: "h2c_given_up", Label: "reason=frame", MetricHelp: "h2c connections given up, by reason: frame (not HTTP/2 framing), hpack (a header block HPACK could not decode), over_cap (a header block or HPACK table over its cap), lost (bytes lost in a frame header or header block, or the memory caps)",
		Field: func(s *Stats) *uint64 { return &s.FrameErrors }},
	{Name: "h2c_hpack_errors", Help: "h2c connections given up on a header block HPACK could not decode", Text: "HPACK errors", Metric: "h2c_given_up", Label: "reason=hpack", Field: func(s *Stats) *uint64 { return &s.HPACKErrors }},
	{Name: "h2c_over_cap", Help: "h2c connections given up on a header block or HPACK table over its cap", Text: "over the header caps", Metric: "h2c_given_up", Label: "reason=over_cap", Field: func(s *Stats) *uint64 { return &s.OverCap }},
	{Name: "h2c_lost", Help: "h2c connections given up on bytes lost in a frame header or header block, or on the memory caps", Text: "bytes lost or memory cap", Metric: "h2c_given_up", Label: "reason=lost", Field: func(s *Stats) *uint64 { return &s.Lost }},
}

// counts are what a parser has to count for Stats, collected by Collect:
// a stream starts HTTP/2 and is given up at most once.
type counts uint8

const (
	countConn counts = 1 << iota
	countUpgraded
	countFrameError
	countHPACKError
	countOverCap
	countLost
)

// Protocol reads the h2c streams of one assembler: it makes their parsers
// (Take), builds their records and keeps the totals.
type Protocol struct {
	sink  *stream.Sink
	proto record.Proto
	rec   record.Record
	url   []byte
	// Stats are the totals: those of parsers still open are added when
	// they are collected (stream.Parser.Collect).
	Stats Stats
	// Requests is the number of requests recorded.
	Requests uint64
}

// New returns the Protocol of an assembler's Sink, whose records are of
// proto.
func New(sink *stream.Sink, proto record.Proto) *Protocol {
	return &Protocol{sink: sink, proto: proto}
}

// Take starts decoding a stream from its connection preface, first (after
// an Upgrade, from the preface's first line, which the client sent once
// the server had switched).
func (c *Protocol) Take(h *stream.Handoff, first []byte) stream.Parser {
	p := &parser{c: c, dest: h.Dest, counts: countConn}
	start := h2.PriorKnowledge
	if h.Upgrade {
		start = h2.Upgraded
		p.counts |= countUpgraded
	}
	p.dec = h2.NewDecoder(start)
	return p
}

// parser decodes the client side of one HTTP/2 connection.
type parser struct {
	c      *Protocol
	dec    *h2.Decoder // nil once given up: the rest is skipped
	dest   []byte      // the SOCKS destination the stream opened with
	counts counts      // not yet collected
}

// Feed decodes the client's HTTP/2 bytes; a connection given up is
// skipped from then on. The decoder's table and buffers grow within the
// budget (the flow's and the total caps): past it the connection is given
// up, counted as lost and as an overflow.
func (p *parser) Feed(data []byte, budget int) {
	if p.dec == nil {
		return
	}
	p.dec.SetLimit(budget)
	if err := p.dec.Feed(data, p.report); err != nil {
		p.stop(err)
	}
}

// Gap tells the decoder bytes were lost: within a frame's payload that
// is skipped, it goes on; else the connection is given up.
func (p *parser) Gap(n int64) {
	if p.dec == nil {
		return
	}
	if err := p.dec.Lost(int(min(n, math.MaxInt32))); err != nil {
		p.stop(err)
	}
}

// End forgets the decoder.
func (p *parser) End() { p.dec = nil }

// Held is what the decoder holds, for the memory caps.
func (p *parser) Held() int {
	if p.dec == nil {
		return 0
	}
	return p.dec.Held()
}

// Shed gives the connection up: the decoder's table cannot be dropped and
// kept in step.
func (p *parser) Shed() bool {
	if p.dec == nil {
		return false
	}
	p.stop(h2.ErrLost)
	return true
}

// Release forgets the decoder.
func (p *parser) Release() { p.dec = nil }

// Collect moves the counts into the totals.
func (p *parser) Collect() {
	c := p.counts
	if c == 0 {
		return
	}
	s := &p.c.Stats
	for _, f := range [...]struct {
		bit counts
		n   *uint64
	}{{countConn, &s.Connections}, {countUpgraded, &s.Upgrades}, {countFrameError, &s.FrameErrors},
		{countHPACKError, &s.HPACKErrors}, {countOverCap, &s.OverCap}, {countLost, &s.Lost}} {
		if c&f.bit != 0 {
			*f.n++
		}
	}
	p.counts = 0
}

// stop gives the HTTP/2 connection up, counting why.
func (p *parser) stop(err error) {
	switch {
	case errors.Is(err, h2.ErrHPACK):
		p.counts |= countHPACKError
	case errors.Is(err, h2.ErrHeaderBlock), errors.Is(err, h2.ErrTableSize):
		p.counts |= countOverCap
	case errors.Is(err, h2.ErrLost):
		p.counts |= countLost
	case errors.Is(err, h2.ErrMemory):
		p.counts |= countLost
		p.c.sink.Overflows++
	default:
		p.counts |= countFrameError
	}
	// The last request reported points into the decoder: both go, or
	// the decoder's table would stay in memory, no longer counted.
	p.dec = nil
	p.c.rec.Method = nil
}

// report records a request.
func (p *parser) report(r *h2.Request) {
	c := p.c
	s := c.sink
	var tunnel bool
	c.url, tunnel = appendH2URL(c.url[:0], r, p.dest, s.Dst)
	s.Start(&c.rec, c.proto)
	c.rec.Method, c.rec.URL, c.rec.Tunnel, c.rec.UserAgent = r.Method, c.url, tunnel, r.UserAgent
	c.Requests++
	s.Emit(&c.rec)
}

// appendH2URL appends the URL of an HTTP/2 request sent to server:
// :scheme://:authority:path, the authority from :authority, else the Host
// field, else the SOCKS destination the stream opened with, else the
// server's address (and port unless 80). A CONNECT without :path (RFC
// 9113 §8.5) is the authority it opens, a tunnel, as for HTTP/1.1. The
// authority's userinfo ("user:password@", which RFC 9113 §8.3.1 forbids)
// is left out: it is a credential, never recorded.
// HPACK carries any bytes: the authority is taken as a TLS server name is
// (bytes that would end the host made '_'), a scheme keeps only the
// characters of one (RFC 3986 §3.1; others made '_'), and control bytes
// and spaces in the path are percent-encoded, so that no field ends the
// URL, changes its host or breaks a line of the text formats.
func appendH2URL(dst []byte, r *h2.Request, dest []byte, server netip.AddrPort) (url []byte, tunnel bool) {
	if string(r.Method) == "CONNECT" && len(r.Path) == 0 {
		return record.AppendHostName(dst, record.WithoutUserinfo(r.Authority)), true
	}
	if len(r.Scheme) > 0 {
		dst = appendScheme(dst, r.Scheme)
	} else {
		dst = append(dst, "http"...)
	}
	dst = append(dst, "://"...)
	switch {
	case len(r.Authority) > 0:
		dst = record.AppendHostName(dst, record.WithoutUserinfo(r.Authority))
	case len(dest) > 0:
		dst = append(dst, dest...)
	default:
		dst = record.AppendHost(dst, server, 80)
	}
	return record.AppendPath(dst, r.Path), false
}

// appendScheme appends a URL scheme as sent, its bytes other than
// letters, digits, '+', '-' and '.' made '_'.
func appendScheme(dst, scheme []byte) []byte {
	for _, c := range scheme {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// ParserCost is the bytes of one stream's parser (its decoder counts in
// what it holds: internal/h2c.DecoderCost).
const ParserCost = int(unsafe.Sizeof(parser{}))
