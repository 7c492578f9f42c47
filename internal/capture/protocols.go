package capture

import (
	"net/netip"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
	"github.com/urldedupd/urldedupd/internal/h2c"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

func init() {
	for p := range NumProtos {
		record.Name(p, protoNames[p])
	}
}

// parserCost is the bytes of the largest parser of a TCP stream, counted
// in FlowCost.
const parserCost = int(unsafe.Sizeof(reqParser{}))

// streamParsers makes the parsers of TCP streams (stream.Factory) for the
// protocols selected, builds their records and keeps their totals. One
// serves an assembler.
type streamParsers struct {
	sink    *stream.Sink
	maxLine int
	readTLS bool // ClientHellos are read (tls is recorded)
	readH2C bool // HTTP/2 streams are decoded (else skipped as StreamHTTP2)
	rec     Request
	url     []byte

	asm AssemblerStats // Requests, ParseErrors, NonHTTP
	tls TLSStats
	h2c H2CStats
}

func newStreamParsers(sink *stream.Sink, maxLine int, protos Protos) *streamParsers {
	return &streamParsers{sink: sink, maxLine: maxLine, readTLS: protos.Has(ProtoTLS), readH2C: protos.Has(ProtoH2C)}
}

// NewParser makes the parser of a new direction.
func (c *streamParsers) NewParser() stream.Parser { return newStreamParser(c) }

// Answer reports whether b starts like an HTTP/1.x status line:
// "HTTP/1.x NNN".
func (c *streamParsers) Answer(b []byte) bool {
	return len(b) >= 12 && string(b[:7]) == "HTTP/1." && b[8] == ' ' &&
		b[9] >= '0' && b[9] <= '9' && b[10] >= '0' && b[10] <= '9' && b[11] >= '0' && b[11] <= '9'
}

// newAssembler returns an assembler of every protocol that calls emit for
// every record. opts may be nil.
func newAssembler(opts *AssemblerOptions, emit func(*Request)) *assembler {
	return newProtoAssembler(opts, emit, AllProtos, nil)
}

// newProtoAssembler returns an assembler whose parsers read protos; made,
// when not nil, is set to their Factory.
func newProtoAssembler(opts *AssemblerOptions, emit func(*Request), protos Protos, made **streamParsers) *assembler {
	maxLine := DefaultAssemblerOptions.MaxLine
	if opts != nil && opts.MaxLine > 0 {
		maxLine = opts.MaxLine
	}
	var sp *streamParsers
	a := makeAssembler(opts, emit, func(s *stream.Sink) stream.Factory {
		sp = newStreamParsers(s, maxLine, protos)
		return sp
	})
	if made != nil {
		*made = sp
	}
	return a
}

// Feed parses in-order bytes (stream.Parser).
func (p *reqParser) Feed(b []byte, budget int) {
	p.budget = budget
	p.feed(b, p.report)
	p.cfg.sink.Overflows += p.overflows
	p.overflows = 0
}

// Gap takes n bytes lost (stream.Parser).
func (p *reqParser) Gap(n int64) { p.gap(n) }

// End ends the stream and releases the buffers (stream.Parser).
func (p *reqParser) End() {
	p.close(p.report)
	p.Release()
}

// Held is the capacity of the buffers (stream.Parser).
func (p *reqParser) Held() int { return cap(p.line) + cap(p.req) + p.h2Held() }

// Shed drops what is held, for the memory caps (stream.Parser).
func (p *reqParser) Shed() (lost bool) {
	if p.h2 != nil { // the decoder's table cannot be dropped and kept in step
		lost = true
		p.stopH2C(h2c.ErrLost)
	} else if p.holding() {
		lost = true
		p.gap(-1)
	}
	p.Release()
	return lost
}

// Release forgets the buffers (stream.Parser).
func (p *reqParser) Release() { p.line, p.req = nil, nil }

// Collect moves the counts into the totals (stream.Parser).
func (p *reqParser) Collect() {
	p.collect(&p.cfg.asm)
	p.collectTLS(&p.cfg.tls)
	p.collectH2C(&p.cfg.h2c)
}

// report builds the record of r and hands it to the sink.
func (p *reqParser) report(r *request) {
	c := p.cfg
	if r.hello != nil {
		c.onHello(r)
		return
	}
	s := c.sink
	proto, method, tunnel := ProtoHTTP, r.method, r.tunnel
	if r.h2 != nil {
		proto, method = ProtoH2C, r.h2.Method
		c.url, tunnel = appendH2URL(c.url[:0], r.h2, r.dest, s.Dst)
	} else {
		c.url = appendURL(c.url[:0], r, s.Dst)
	}
	s.Start(&c.rec, proto)
	c.rec.Method, c.rec.URL, c.rec.Tunnel = method, c.url, tunnel
	c.asm.Requests++
	s.Emit(&c.rec)
}

// onHello parses a ClientHello the parser collected and reports it: URL
// https://SNI[:port]/, or the server's address without SNI.
func (c *streamParsers) onHello(r *request) {
	s := c.sink
	s.Start(&c.rec, ProtoTLS)
	if err := tlshello.Parse(r.hello, &c.rec.Hello); err != nil {
		c.tls.Errors++
		return
	}
	server := s.Dst
	if r.destPort != 0 { // inside a CONNECT or SOCKS tunnel: the port it opened
		server = netip.AddrPortFrom(server.Addr(), r.destPort)
	}
	if len(c.rec.Hello.ServerName) == 0 {
		c.tls.NoSNI++
	}
	if c.rec.Hello.ECH {
		c.tls.ECH++
	}
	c.url = record.AppendHTTPSURL(c.url[:0], c.rec.Hello.ServerName, server)
	c.rec.URL = c.url
	s.Emit(&c.rec)
}
