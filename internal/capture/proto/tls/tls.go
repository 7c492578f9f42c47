// Package tls reads the ClientHello at the start of a TLS stream over TCP
// and records it: https://SNI[:port]/, or the server's address when the
// hello has no server name. It takes a stream over (stream.Taker) when the
// stream's first bytes, or those after a CONNECT or SOCKS handshake, are a
// TLS handshake record; it collects the first handshake message across
// TCP segments and TLS records, parses it with internal/tlshello, and
// skips the rest of the stream, which is encrypted.
package tls

import (
	"unsafe"

	"net/netip"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/ja4"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// MaxHello caps the bytes of a ClientHello collected from a TCP stream
// (the handshake message, its TLS record headers removed). A handshake
// that says it is longer is counted (Stats.TooLarge) and its stream
// skipped. The bytes held count against the assembler's caps like any
// other.
const MaxHello = 64 << 10

// maxRecord is the longest TLS record fragment taken: 2^14 bytes of
// plaintext (RFC 8446 §5.1), with room for the expansion TLS 1.2 allows.
const maxRecord = 1<<14 + 2048

// Stats count the ClientHellos read from TCP streams.
type Stats struct {
	NoSNI    uint64 // hellos without a server name: recorded under the server's address
	ECH      uint64 // hellos with an encrypted_client_hello extension: the name recorded is the public one
	Errors   uint64 // handshakes that started like a ClientHello but could not be parsed
	TooLarge uint64 // handshakes longer than MaxHello: not recorded
}

// StatsCounters describes Stats' counters (internal/counter).
var StatsCounters = counter.Table[Stats]{
	{Name: "tls_hellos_without_sni", Help: "TLS ClientHellos without a server name (recorded under the server's address)", Text: "TLS ClientHellos without SNI", Field: func(s *Stats) *uint64 { return &s.NoSNI }},
	{Name: "tls_ech_hellos", Help: "TLS ClientHellos with an encrypted_client_hello extension (the name recorded is the public one)", Text: "with ECH", Field: func(s *Stats) *uint64 { return &s.ECH }},
	{Name: "tls_hello_errors", Help: "TLS handshakes that started like a ClientHello but could not be parsed", Text: "unparsable", Field: func(s *Stats) *uint64 { return &s.Errors }},
	{Name: "tls_hellos_too_large", Help: "TLS handshakes longer than the ClientHello cap, not recorded", Text: "over the size cap", Field: func(s *Stats) *uint64 { return &s.TooLarge }},
}

// Protocol reads the ClientHellos of the streams of one assembler: it
// makes their parsers (Take), builds their records and keeps the totals.
type Protocol struct {
	sink  *stream.Sink
	proto record.Proto
	rec   record.Record
	url   []byte
	ja4   []byte
	hash  ja4.Hasher
	// Stats are the totals: those of parsers still open are added when
	// they are collected (stream.Parser.Collect).
	Stats Stats
}

// New returns the Protocol of an assembler's Sink, whose records are of
// proto.
func New(sink *stream.Sink, proto record.Proto) *Protocol {
	return &Protocol{sink: sink, proto: proto}
}

// Take starts reading a stream whose first bytes are a TLS record; it
// declines (nil) a stream that does not start with a handshake record.
func (t *Protocol) Take(h *stream.Handoff, first []byte) stream.Parser {
	if len(first) == 0 || first[0] != 0x16 {
		return nil
	}
	return &parser{t: t, destPort: h.DestPort, on: true}
}

// parser collects the first handshake message of one stream.
type parser struct {
	t        *Protocol
	buf      []byte  // the message, when split across segments or records
	recHdr   [5]byte // a TLS record header split across segments
	recHdrN  uint8   // bytes of recHdr held
	on       bool    // still collecting: else the rest of the stream is skipped
	recLeft  uint16  // bytes of the current record still to come
	destPort uint16  // the port a CONNECT or SOCKS tunnel opened, 0 when none
	errors   uint8   // counts not yet collected
	tooLarge uint8
}

// Feed collects the ClientHello across TCP segments and TLS records, and
// reports it when whole. Then, or at the first thing that is not a
// ClientHello, the stream is skipped: nothing after it is readable.
func (p *parser) Feed(data []byte, budget int) {
	for len(data) > 0 && p.on {
		if p.recLeft == 0 {
			k := copy(p.recHdr[p.recHdrN:], data)
			p.recHdrN += uint8(k)
			data = data[k:]
			if p.recHdrN < uint8(len(p.recHdr)) {
				return
			}
			p.recHdrN = 0
			n := int(p.recHdr[3])<<8 | int(p.recHdr[4])
			if p.recHdr[0] != 0x16 || p.recHdr[1] != 3 || n > maxRecord {
				if len(p.buf) > 0 {
					p.errors++ // a ClientHello cut by a record that is not its own
				}
				p.stop()
				return
			}
			p.recLeft = uint16(n)
			continue
		}
		k := min(len(data), int(p.recLeft))
		frag := data[:k]
		data = data[k:]
		p.recLeft -= uint16(k)
		p.fragment(frag, budget)
	}
}

// fragment takes the payload of a handshake record.
func (p *parser) fragment(frag []byte, budget int) {
	if len(frag) == 0 {
		return
	}
	if len(p.buf) == 0 {
		if frag[0] != tlshello.TypeClientHello {
			p.stop() // a stream picked up after its start, or not TLS
			return
		}
		if n, ok := tlshello.HandshakeLen(frag); ok && len(frag) >= n && n <= MaxHello {
			p.report(frag[:n]) // whole in one fragment: nothing copied
			return
		}
	}
	need := len(p.buf) + len(frag)
	n, known := tlshello.HandshakeLen(p.buf)
	if !known {
		if len(p.buf) > 0 && need >= 4 {
			var hdr [4]byte
			copy(hdr[copy(hdr[:], p.buf):], frag)
			n, known = tlshello.HandshakeLen(hdr[:])
		} else {
			n, known = tlshello.HandshakeLen(frag)
		}
	}
	if known && n > MaxHello {
		p.tooLarge++
		p.stop()
		return
	}
	size := need
	if known {
		size = n // the whole message: one buffer of the right size
	}
	if cap(p.buf) < size {
		if size > budget {
			p.t.sink.Overflows++
			p.stop()
			return
		}
		buf := make([]byte, len(p.buf), size)
		copy(buf, p.buf)
		p.buf = buf
	}
	take := len(frag)
	if known {
		take = min(take, n-len(p.buf))
	}
	p.buf = append(p.buf, frag[:take]...)
	if known && len(p.buf) == n {
		p.report(p.buf)
	}
}

// report parses a whole ClientHello and records it, then ends the
// stream's parsing.
func (p *parser) report(msg []byte) {
	p.t.report(msg, p.destPort)
	p.stop()
}

// stop skips the rest of the stream and releases the buffer.
func (p *parser) stop() {
	p.on = false
	p.buf = nil
	p.recLeft, p.recHdrN = 0, 0
}

// Gap gives the stream up: a hole in a ClientHello cannot be filled.
func (p *parser) Gap(int64) { p.stop() }

// End releases the buffer.
func (p *parser) End() { p.stop() }

// Held is the capacity of the buffer.
func (p *parser) Held() int { return cap(p.buf) }

// Shed gives the stream up if part of a ClientHello is held.
func (p *parser) Shed() bool {
	if len(p.buf) > 0 {
		p.stop()
		return true
	}
	return false
}

// Release forgets the buffer.
func (p *parser) Release() { p.buf = nil }

// Collect moves the counts into the totals.
func (p *parser) Collect() {
	p.t.Stats.Errors += uint64(p.errors)
	p.t.Stats.TooLarge += uint64(p.tooLarge)
	p.errors, p.tooLarge = 0, 0
}

// report parses a ClientHello and reports it: URL https://SNI[:port]/,
// or the server's address without SNI.
func (t *Protocol) report(msg []byte, destPort uint16) {
	s := t.sink
	s.Start(&t.rec, t.proto)
	if err := tlshello.Parse(msg, &t.rec.Hello); err != nil {
		t.Stats.Errors++
		return
	}
	server := s.Dst
	if destPort != 0 { // inside a CONNECT or SOCKS tunnel: the port it opened
		server = netip.AddrPortFrom(server.Addr(), destPort)
	}
	if len(t.rec.Hello.ServerName) == 0 {
		t.Stats.NoSNI++
	}
	if t.rec.Hello.ECH {
		t.Stats.ECH++
	}
	t.url = record.AppendHTTPSURL(t.url[:0], t.rec.Hello.ServerName, server)
	t.rec.URL = t.url
	t.ja4 = t.hash.Append(t.ja4[:0], ja4.TCP, &t.rec.Hello)
	t.rec.JA4 = t.ja4
	s.Emit(&t.rec)
}

// ParserCost is the bytes of one stream's parser.
const ParserCost = int(unsafe.Sizeof(parser{}))
