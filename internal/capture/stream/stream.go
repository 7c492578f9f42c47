// Package stream is the contract between the TCP assembler of package
// capture and the protocol parsers: the assembler hands the in-order
// bytes of each client direction, its holes and its end to a Parser made
// for that direction, and the parser reports what it finds through the
// Sink the assembler gave it. The contract knows no protocol.
//
// # Calls
//
// The assembler makes a direction's Parser when its first byte (or hole)
// comes, then calls Feed with the bytes in stream order, Gap for the
// bytes given up on, and End when the connection ends (FIN, RST, idle,
// evicted, flushed). After End the same Parser may be fed again: a new
// connection on the same ports. Before each call the assembler sets the
// Sink's Conn to the direction's addresses, encapsulation and time.
//
// # Memory
//
// What a parser holds across calls (a partial line, a message being
// collected, a decoder's table) counts against the assembler's caps:
// Feed is told how many bytes, by capacity, the parser may hold at most
// (its budget), Held reports what it holds, and Shed makes it give that
// up when the caps are exceeded. A parser that drops bytes for its
// budget counts it in Sink.Overflows.
//
// # Allocation
//
// Feed, Gap and the records they report must allocate nothing once the
// parser's buffers have grown: the per-packet path is allocation-free.
package stream

import (
	"net/netip"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"github.com/urldedupd/urldedupd/internal/capture/record"
)

// Parser reads one client direction of one TCP connection.
type Parser interface {
	// Feed parses the next bytes of the stream, in order. The parser may
	// hold at most budget bytes, by capacity, once it returns.
	Feed(b []byte, budget int)
	// Gap tells the parser that n bytes of the stream were lost (n < 0:
	// an unknown number).
	Gap(n int64)
	// End ends the stream: what is pending is reported, buffers are
	// released.
	End()
	// Held is the bytes the parser holds, by capacity.
	Held() int
	// Shed drops what the parser holds, for the memory caps; it reports
	// whether bytes the stream still needed were lost (an overflow).
	Shed() bool
	// Release forgets the parser's buffers: the direction is forgotten.
	Release()
	// Collect moves the counts the parser keeps into its protocol's
	// totals.
	Collect()
}

// Conn is the direction a parser is reading, as the assembler sets it
// before each call.
type Conn struct {
	Src, Dst netip.AddrPort // client and server
	Encap    decode.Encap   // of the last segment with data
	Now      int64          // packet time, ns
}

// Sink takes what the parsers of one assembler find. One Sink is shared
// by all of them; it is not safe for concurrent use.
type Sink struct {
	Conn
	// Overflows counts the times a parser dropped bytes for its budget;
	// the assembler moves them into its own count.
	Overflows uint64
	emit      func(*record.Record)
}

// NewSink returns a Sink that hands records to emit.
func NewSink(emit func(*record.Record)) *Sink { return &Sink{emit: emit} }

// Start fills r's connection fields (Time, Src, Dst, Encap) from the
// direction being read, and its Proto.
func (s *Sink) Start(r *record.Record, p record.Proto) {
	*r = record.Record{Time: time.Unix(0, s.Now), Src: s.Src, Dst: s.Dst, Proto: p, Encap: s.Encap}
}

// Emit reports r; its slices must stay valid until Emit returns.
func (s *Sink) Emit(r *record.Record) { s.emit(r) }

// Factory makes the Parser of a new direction.
type Factory interface {
	NewParser() Parser
	// Answer reports whether b, the first bytes of a direction whose SYN
	// was not seen, are a server's answer: the direction is then not
	// parsed.
	Answer(b []byte) bool
}

// Handoff is what a parser passes on when it has recognised the rest of
// its stream as another protocol's (a TLS handshake, the HTTP/2 preface)
// at the start of the stream, after a proxy handshake, or where a tunnel
// opens.
type Handoff struct {
	// Dest is the host[:port] a proxy handshake (SOCKS) opened, if any;
	// it stays valid while the stream lasts.
	Dest []byte
	// DestPort is the port a tunnel (CONNECT, SOCKS) opened, 0 when none.
	DestPort uint16
	// Upgrade marks a stream that switched protocols after a request
	// asked it to (an HTTP/1.1 Upgrade the server accepted).
	Upgrade bool
}

// Taker makes the parser that takes a stream over from another: first
// are the stream's bytes from where the protocol starts (the first to be
// fed). It returns nil when the protocol does not read such a stream.
type Taker func(h *Handoff, first []byte) Parser
