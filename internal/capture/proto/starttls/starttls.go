// Package starttls reads the cleartext prelude with which a client starts
// TLS inside another protocol — SMTP, IMAP and POP3 STARTTLS, FTP's AUTH
// TLS, XMPP's <starttls/>, LDAP's StartTLS extended operation,
// PostgreSQL's SSLRequest, MySQL's SSL request, RDP's X.224 negotiation —
// and hands the TLS that follows it to the TLS protocol, so that the
// ClientHello and its server name are recorded as on a TLS port.
//
// It takes a stream over (stream.Taker) once HTTP/1's sniffer has
// recognised the stream's protocol by its first client bytes, and walks
// the client's messages by that protocol's framing (lines, XML tags, BER
// elements, length-prefixed packets) without keeping them: a TLS
// handshake record at the start of a message ends the prelude. The
// prelude is bounded (MaxPrelude): past it, or on bytes that do not frame
// as the protocol's, the stream is given up, counted.
package starttls

import (
	"encoding/binary"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/capture/stream"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// MaxPrelude bounds the client bytes read before TLS starts: what a
// client sends before STARTTLS is a greeting and a few commands (an SMTP
// EHLO, an XMPP stream header, an 8-byte SSLRequest). A longer prelude
// (a session that never starts TLS and goes on in clear) is given up.
const MaxPrelude = 16 << 10

// Framing is how a protocol's client messages are delimited.
type Framing uint8

const (
	Lines   Framing = iota // text lines ending in LF: SMTP, IMAP, POP3, FTP
	XML                    // XML ending in '>': XMPP
	BER                    // BER elements, tag and length: LDAP
	Length4                // a 4-byte big-endian length counting itself: PostgreSQL's startup messages
	MySQL                  // a 3-byte little-endian length and a sequence byte: MySQL packets
	TPKT                   // a TPKT header, 3 0 and a 2-byte big-endian length counting it: RDP
	numFramings
)

var framingNames = [numFramings]string{"lines", "xml", "ber", "length4", "mysql", "tpkt"}

func (f Framing) String() string {
	if f < numFramings {
		return framingNames[f]
	}
	return "framing?"
}

// Stats count the streams read for a TLS start after a cleartext
// prelude. Each stream is counted once: started, or given up by one
// reason, or (ended with no TLS and no reason) in none.
type Stats struct {
	Preludes  uint64 // client streams whose prelude was read (the protocols by name: non_http)
	Started   uint64 // of them, those where TLS started: handed to TLS, their ClientHello recorded there
	OverCap   uint64 // given up: no TLS within MaxPrelude bytes
	Malformed uint64 // given up: bytes that do not frame as the protocol's, or bytes lost in the prelude
}

// StatsCounters describes Stats' counters (internal/counter).
var StatsCounters = counter.Table[Stats]{
	{Name: "starttls_preludes", Help: "Client streams of a protocol that can start TLS (SMTP, IMAP, POP3, FTP, XMPP, LDAP, PostgreSQL, MySQL, RDP) read for its start", Text: "STARTTLS preludes read", Field: func(s *Stats) *uint64 { return &s.Preludes }},
	{Name: "starttls_started", Help: "Of them, streams where TLS started after the prelude (the ClientHello read as TLS)", Text: "TLS started", Field: func(s *Stats) *uint64 { return &s.Started }},
	{Name: "starttls_over_cap", Help: "Streams given up with no TLS within the prelude cap", Text: "no TLS within the prelude cap",
		Metric: "starttls_given_up", Label: "reason=over_cap", MetricHelp: "STARTTLS preludes given up, by reason: over_cap (no TLS within the prelude cap), malformed (bytes that do not frame as the protocol's, or lost)",
		Field: func(s *Stats) *uint64 { return &s.OverCap }},
	{Name: "starttls_malformed", Help: "Streams given up on bytes that do not frame as the protocol's, or lost", Text: "malformed or lost", Metric: "starttls_given_up", Label: "reason=malformed", Field: func(s *Stats) *uint64 { return &s.Malformed }},
}

// Protocol reads the preludes of one assembler's streams and hands TLS to
// tls.
type Protocol struct {
	tls stream.Taker
	// Stats are the totals: those of parsers still open are added when
	// they are collected (stream.Parser.Collect).
	Stats  Stats
	takers [numFramings]stream.Taker
}

// New returns a Protocol that hands the TLS after a prelude to tls.
func New(tls stream.Taker) *Protocol {
	c := &Protocol{tls: tls}
	for f := range numFramings {
		c.takers[f] = func(h *stream.Handoff, first []byte) stream.Parser {
			return &parser{c: c, framing: f, destPort: h.DestPort, counts: countPrelude}
		}
	}
	return c
}

// Taker returns the Taker of streams whose messages frame as f: it takes
// every stream, from its first byte.
func (c *Protocol) Taker(f Framing) stream.Taker { return c.takers[f] }

type counts uint8

const (
	countPrelude counts = 1 << iota
	countStarted
	countOverCap
	countMalformed
)

// parser walks one client stream's prelude.
type parser struct {
	c        *Protocol
	inner    stream.Parser // TLS's, once it started
	seen     int           // prelude bytes read
	skip     int           // bytes of the current message still to skip (length framings)
	scanning bool          // inside a line or tag: skipping to its end (text framings)
	done     bool          // given up: the rest is skipped
	hdr      [8]byte       // the start of a message, split across segments
	hdrN     uint8
	framing  Framing
	destPort uint16
	counts   counts
}

// Feed walks the prelude; once TLS starts, the bytes go to TLS's parser.
func (p *parser) Feed(data []byte, budget int) {
	for len(data) > 0 && p.inner == nil && !p.done {
		if p.seen >= MaxPrelude {
			p.giveUp(countOverCap)
			return
		}
		switch {
		case p.skip > 0:
			k := min(p.skip, len(data), MaxPrelude-p.seen)
			p.skip -= k
			p.seen += k
			data = data[k:]
		case p.scanning:
			end := byte('\n')
			if p.framing == XML {
				end = '>'
			}
			i := 0
			for i < len(data) && data[i] != end && p.seen+i < MaxPrelude {
				i++
			}
			if i < len(data) && data[i] == end {
				i++
				p.scanning = false
			}
			p.seen += i
			data = data[i:]
		default:
			data = p.start(data, budget)
		}
	}
	if p.inner != nil && len(data) > 0 {
		p.inner.Feed(data, budget)
	}
}

// start reads the start of a message: a TLS handshake record hands the
// stream to TLS; anything else is a message of the protocol, skipped. It
// returns the bytes not yet used.
func (p *parser) start(data []byte, budget int) []byte {
	k := copy(p.hdr[p.hdrN:], data)
	h := p.hdr[:int(p.hdrN)+k]
	n, res := p.message(h)
	switch res {
	case needMore:
		p.hdrN += uint8(k)
		return nil
	case bad:
		p.giveUp(countMalformed)
		return nil
	case isTLS:
		in := p.c.tls(&stream.Handoff{DestPort: p.destPort}, h)
		if in == nil {
			p.giveUp(countMalformed)
			return nil
		}
		p.inner, p.counts = in, p.counts|countStarted
		if p.hdrN > 0 { // the held bytes first
			in.Feed(p.hdr[:p.hdrN], budget)
		}
		p.hdrN = 0
		return data
	}
	// A message of the protocol: n bytes from its first (n < 0: scan to
	// its end), of which p.hdrN were held and are counted now.
	p.seen += int(p.hdrN)
	if n < 0 {
		// The held bytes (a 0x16 and at most one more) may hold the
		// line's or tag's end.
		p.scanning = true
		for _, c := range p.hdr[1:max(p.hdrN, 1)] {
			if c == '\n' && p.framing == Lines || c == '>' && p.framing == XML {
				p.scanning = false
			}
		}
		p.hdrN = 0
		return data
	}
	n -= int(p.hdrN)
	p.hdrN, p.skip = 0, n
	return data
}

type result uint8

const (
	message  result = iota // a message of the protocol, n bytes long (n < 0: to its delimiter)
	isTLS                  // a TLS handshake record starts here
	needMore               // more bytes are needed to tell
	bad                    // not the protocol's framing
)

// message tells what starts with h, the first bytes of a message.
func (p *parser) message(h []byte) (int, result) {
	if h[0] == 0x16 { // a TLS handshake record: 0x16 3 0..4
		if len(h) < 3 {
			return 0, needMore
		}
		if h[1] == 3 && h[2] <= 4 {
			return 0, isTLS
		}
	}
	switch p.framing {
	case Lines, XML:
		return -1, message
	case BER:
		return berLen(h)
	case Length4:
		if len(h) < 4 {
			return 0, needMore
		}
		n := binary.BigEndian.Uint32(h)
		if n < 4 || n > MaxPrelude {
			return 0, bad
		}
		return int(n), message
	case MySQL:
		if len(h) < 4 {
			return 0, needMore
		}
		return 4 + (int(h[0]) | int(h[1])<<8 | int(h[2])<<16), message
	case TPKT:
		if len(h) < 4 {
			return 0, needMore
		}
		n := int(binary.BigEndian.Uint16(h[2:]))
		if h[0] != 3 || n < 4 {
			return 0, bad
		}
		return n, message
	}
	return 0, bad
}

// berLen reads the length of a BER element (an LDAPMessage is a
// SEQUENCE, 0x30): its tag, its length (short form, or long form in up to
// four bytes) and its contents.
func berLen(h []byte) (int, result) {
	if h[0] != 0x30 {
		return 0, bad
	}
	if len(h) < 2 {
		return 0, needMore
	}
	l := int(h[1])
	if l < 0x80 {
		return 2 + l, message
	}
	k := l & 0x7f
	if k == 0 || k > 4 { // indefinite length, or longer than any prelude
		return 0, bad
	}
	if len(h) < 2+k {
		return 0, needMore
	}
	n := 0
	for _, c := range h[2 : 2+k] {
		n = n<<8 | int(c)
	}
	if n > MaxPrelude {
		return 0, bad
	}
	return 2 + k + n, message
}

// giveUp stops reading the stream, counting why.
func (p *parser) giveUp(why counts) {
	p.done, p.counts = true, p.counts|why
	p.hdrN, p.skip, p.scanning = 0, 0, false
}

// Gap gives the stream up if it lost bytes of the prelude; in TLS, TLS's
// parser decides.
func (p *parser) Gap(n int64) {
	if p.inner != nil {
		p.inner.Gap(n)
		return
	}
	if !p.done {
		p.giveUp(countMalformed)
	}
}

// End ends the stream.
func (p *parser) End() {
	if p.inner != nil {
		p.inner.End()
	}
	p.done = true
}

// Held is what TLS's parser holds: the prelude holds no more than its
// fixed header bytes.
func (p *parser) Held() int {
	if p.inner != nil {
		return p.inner.Held()
	}
	return 0
}

// Shed sheds what TLS's parser holds.
func (p *parser) Shed() bool {
	if p.inner != nil {
		return p.inner.Shed()
	}
	return false
}

// Release forgets TLS's parser's buffers.
func (p *parser) Release() {
	if p.inner != nil {
		p.inner.Release()
	}
}

// Collect moves the counts into the totals, and TLS's parser's into its.
func (p *parser) Collect() {
	s := &p.c.Stats
	for _, c := range [...]struct {
		bit counts
		n   *uint64
	}{{countPrelude, &s.Preludes}, {countStarted, &s.Started}, {countOverCap, &s.OverCap}, {countMalformed, &s.Malformed}} {
		if p.counts&c.bit != 0 {
			*c.n++
		}
	}
	p.counts = 0
	if p.inner != nil {
		p.inner.Collect()
	}
}

// ParserCost is the bytes of one stream's parser, TLS's taken over
// stream counted by TLS.
const ParserCost = int(unsafe.Sizeof(parser{}))
