package capture

import (
	"errors"
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"net/netip"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/h2c"
)

// H2CStats count the client streams decoded as cleartext HTTP/2 (h2c).
// A connection given up is counted once, by its reason; its requests
// before that were recorded.
type H2CStats struct {
	Connections uint64 // client streams decoded as HTTP/2: with the preface (prior knowledge) or after an Upgrade
	Upgrades    uint64 // of them, after an HTTP/1.1 "Upgrade: h2c" request that the server accepted
	FrameErrors uint64 // given up on framing that is not HTTP/2's (after the preface)
	HPACKErrors uint64 // given up on a header block HPACK could not decode: the connection's table is lost
	OverCap     uint64 // given up on a header block over h2c.MaxHeaderBlock or a table over h2c.MaxTableSize
	Lost        uint64 // given up on bytes lost in a frame header or header block, or on the memory caps (the decoder's table and buffers count in them)
}

// H2CStatsCounters describes H2CStats' counters (internal/counter); the
// connections given up are one metric, by reason.
var H2CStatsCounters = counter.Table[H2CStats]{
	{Name: "h2c_connections", Help: "Client streams decoded as cleartext HTTP/2 (h2c): with the preface, or after an accepted Upgrade: h2c", Text: "h2c connections", Field: func(s *H2CStats) *uint64 { return &s.Connections }},
	{Name: "h2c_upgrades", Help: "Of the h2c connections, those after an HTTP/1.1 Upgrade: h2c request", Text: "upgraded", Field: func(s *H2CStats) *uint64 { return &s.Upgrades }},
	{Name: "h2c_frame_errors", Help: "h2c connections given up on framing that is not HTTP/2's", Text: "given up: framing errors",
		Metric: "h2c_given_up", Label: "reason=frame", MetricHelp: "h2c connections given up, by reason: frame (not HTTP/2 framing), hpack (a header block HPACK could not decode), over_cap (a header block or HPACK table over its cap), lost (bytes lost in a frame header or header block, or the memory caps)",
		Field: func(s *H2CStats) *uint64 { return &s.FrameErrors }},
	{Name: "h2c_hpack_errors", Help: "h2c connections given up on a header block HPACK could not decode", Text: "HPACK errors", Metric: "h2c_given_up", Label: "reason=hpack", Field: func(s *H2CStats) *uint64 { return &s.HPACKErrors }},
	{Name: "h2c_over_cap", Help: "h2c connections given up on a header block or HPACK table over its cap", Text: "over the header caps", Metric: "h2c_given_up", Label: "reason=over_cap", Field: func(s *H2CStats) *uint64 { return &s.OverCap }},
	{Name: "h2c_lost", Help: "h2c connections given up on bytes lost in a frame header or header block, or on the memory caps", Text: "bytes lost or memory cap", Metric: "h2c_given_up", Label: "reason=lost", Field: func(s *H2CStats) *uint64 { return &s.Lost }},
}

// h2Counts are what a parser has to count for H2CStats, collected by
// the assembler: a stream starts HTTP/2 and is given up at most once.
type h2Counts uint8

const (
	h2Conn h2Counts = 1 << iota
	h2Upgraded
	h2FrameError
	h2HPACKError
	h2OverCap
	h2Lost
)

// prefaceLine is the first line of the HTTP/2 connection preface.
const prefaceLine = "PRI * HTTP/2.0\r\n"

// startH2C makes the rest of the stream HTTP/2, from its preface on.
func (p *reqParser) startH2C(start h2c.Start) {
	p.h2 = h2c.NewDecoder(start)
	p.state = stH2C
	p.h2Counts |= h2Conn
	if start == h2c.Upgraded {
		p.h2Counts |= h2Upgraded
	}
}

// feedH2C decodes the client's HTTP/2 bytes; a connection given up is
// skipped from then on. The decoder's table and buffers grow within the
// parser's budget (the flow's and the total caps): past it the
// connection is given up, counted as lost and as an overflow.
func (p *reqParser) feedH2C(data []byte, emit func(*request)) {
	p.h2.SetLimit(p.budget - cap(p.line) - cap(p.req))
	err := p.h2.Feed(data, func(r *h2c.Request) {
		p.r = request{h2: r, dest: p.req[:p.dest]}
		emit(&p.r)
	})
	if err != nil {
		p.stopH2C(err)
	}
}

// stopH2C gives the HTTP/2 connection up, counting why.
func (p *reqParser) stopH2C(err error) {
	switch {
	case errors.Is(err, h2c.ErrHPACK):
		p.h2Counts |= h2HPACKError
	case errors.Is(err, h2c.ErrHeaderBlock), errors.Is(err, h2c.ErrTableSize):
		p.h2Counts |= h2OverCap
	case errors.Is(err, h2c.ErrLost):
		p.h2Counts |= h2Lost
	case errors.Is(err, h2c.ErrMemory):
		p.h2Counts |= h2Lost
		p.overflows++
	default:
		p.h2Counts |= h2FrameError
	}
	// The last request reported points into the decoder: both go, or
	// the decoder's table would stay in memory, no longer counted.
	p.h2, p.r.h2 = nil, nil
	p.state = stSkip
}

// h2Held is what the HTTP/2 decoder holds, for the memory caps.
func (p *reqParser) h2Held() int {
	if p.h2 == nil {
		return 0
	}
	return p.h2.Held()
}

// collectH2C moves the parser's HTTP/2 counts into s.
func (p *reqParser) collectH2C(s *H2CStats) {
	c := p.h2Counts
	if c == 0 {
		return
	}
	for _, f := range [...]struct {
		bit h2Counts
		n   *uint64
	}{{h2Conn, &s.Connections}, {h2Upgraded, &s.Upgrades}, {h2FrameError, &s.FrameErrors},
		{h2HPACKError, &s.HPACKErrors}, {h2OverCap, &s.OverCap}, {h2Lost, &s.Lost}} {
		if c&f.bit != 0 {
			*f.n++
		}
	}
	p.h2Counts = 0
}

// appendH2URL appends the URL of an HTTP/2 request sent to server:
// :scheme://:authority:path, the authority from :authority, else the Host
// field, else the SOCKS destination the stream opened with, else the
// server's address (and port unless 80). A CONNECT without :path (RFC
// 9113 §8.5) is the authority it opens, a tunnel, as for HTTP/1.1.
// HPACK carries any bytes: the authority is taken as a TLS server name is
// (bytes that would end the host made '_'), a scheme keeps only the
// characters of one (RFC 3986 §3.1; others made '_'), and control bytes
// and spaces in the path are percent-encoded, so that no field ends the
// URL, changes its host or breaks a line of the text formats.
func appendH2URL(dst []byte, r *h2c.Request, dest []byte, server netip.AddrPort) (url []byte, tunnel bool) {
	if string(r.Method) == "CONNECT" && len(r.Path) == 0 {
		return record.AppendHostName(dst, r.Authority), true
	}
	if len(r.Scheme) > 0 {
		dst = appendScheme(dst, r.Scheme)
	} else {
		dst = append(dst, "http"...)
	}
	dst = append(dst, "://"...)
	switch {
	case len(r.Authority) > 0:
		dst = record.AppendHostName(dst, r.Authority)
	case len(dest) > 0:
		dst = append(dst, dest...)
	default:
		dst = appendHostPort(dst, server)
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
