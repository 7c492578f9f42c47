package http1

import (
	"bytes"
	"math"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// reqParser finds HTTP/1.x requests in one client-to-server byte stream,
// fed in order (a stream.Parser). It keeps only what a request needs
// (method, target, Host) and skips bodies by Content-Length or chunked
// encoding, so the next pipelined request is found. Junk between requests
// is skipped line by line; after a gap it resynchronises at the next
// request line. A stream recognised as another protocol's is handed to
// that protocol's parser when one takes it (Protocol.Takers), else
// skipped.
type reqParser struct {
	cfg      *Protocol // what is read, where records and counts go: shared
	line     []byte    // a line split across segments
	req      []byte    // SOCKS destination, method, target and host, back to back
	dest     int32     // req[:dest]: the SOCKS destination, host[:port]
	method   int32     // req[dest:method]
	target   int32     // req[method:target]
	host     int32     // req[hostAt:host]: the Host header's value, empty when none
	hostAt   int32     // where the Host value starts: target, or after the User-Agent when that came first
	ua       [2]int32  // req[ua[0]:ua[1]]: the User-Agent's value, cut to MaxUserAgent; empty when none
	hdrBytes int
	bodyLeft int64
	r        request
	budget   int // most bytes line and req may hold together, in capacity

	// counters, collected into cfg (overflows into its sink at each Feed)
	errors    uint32 // collected at the end and whenever Stats are read
	overflows uint32 // lines or requests dropped for the budget

	state     parseState
	version   byte // minor version: HTTP/1.version
	overflow  bool // discarding the rest of an over-long line
	hasHost   bool
	chunked   bool
	junk      bool  // inside a run of junk lines (counted once)
	socks     uint8 // 5: inside a SOCKS5 handshake, after the greeting
	connected bool  // after a CONNECT: the bytes that follow are the tunnel's
	pending   uint8 // a StreamKind + 1 recognised, not yet counted

	destPort  uint16 // the port a CONNECT or SOCKS tunnel opened, 0 when none
	upgrade   bool   // the request being parsed asked for "Upgrade: h2c"
	h2Upgrade bool   // the last request did: its server may have switched to HTTP/2

	inner stream.Parser // in state stInner: the protocol that took the stream over
}

type parseState uint8

const (
	stRequest   parseState = iota // expecting a request line
	stHeaders                     // inside the header section
	stBody                        // skipping bodyLeft bytes
	stChunkSize                   // expecting a chunk-size line
	stChunkData                   // skipping a chunk's bytes
	stChunkEnd                    // expecting the CRLF after a chunk
	stTrailers                    // inside the trailer section
	stSniff                       // at the start of a stream, or of a tunnel: see sniff
	stSkip                        // a stream of another protocol: its bytes are skipped
	stInner                       // another protocol's: the bytes go to p.inner
)

const maxHeaderBytes = 64 << 10

// keepCap is the largest buffer capacity a parser keeps for the next
// request once a long line or request is done with.
const keepCap = 4 << 10

// request is what the parser hands to emit; its slices alias the parser's
// buffer and are valid only during the call.
type request struct {
	method, target, host []byte
	userAgent            []byte
	dest                 []byte // the SOCKS destination, host[:port], if any
	hasHost              bool
	tunnel               bool // a CONNECT: target is the authority it opens
	minor                byte
}

// newReqParser returns a parser of lines up to maxLine bytes that hands
// no stream over and reports to no sink: for the tests, which call feed,
// gap and close with their own emit.
func newReqParser(maxLine int) *reqParser {
	return newStreamParser(New(stream.NewSink(nil), 0, maxLine))
}

func newStreamParser(cfg *Protocol) *reqParser {
	return &reqParser{cfg: cfg, budget: math.MaxInt, state: stSniff}
}

// fits reports whether buf (p.line or p.req) can hold n bytes within the
// budget: growing it takes a new array of about n bytes.
func (p *reqParser) fits(buf []byte, n int) bool {
	return n <= cap(buf) || n+cap(p.line)+cap(p.req)-cap(buf) <= p.budget
}

// overBudget drops what the parser holds, for the memory caps: the line
// being kept and the request whose headers had not ended. The stream
// resynchronises at the next request line.
func (p *reqParser) overBudget() {
	p.overflows++
	p.state, p.junk = stRequest, true
	p.line, p.req, p.dest = nil, nil, 0
}

// feed parses data, calling emit for every request whose header section
// ends in it.
func (p *reqParser) feed(data []byte, emit func(*request)) {
	for len(data) > 0 {
		if p.state >= stSniff {
			switch p.state {
			case stSkip:
				return
			case stInner:
				p.inner.Feed(data, p.innerBudget())
				return
			}
			data = p.sniff(data)
			continue
		}
		if p.state == stBody || p.state == stChunkData {
			n := int64(len(data))
			if n > p.bodyLeft {
				n = p.bodyLeft
			}
			data = data[n:]
			p.bodyLeft -= n
			if p.bodyLeft == 0 {
				if p.state == stBody {
					p.state = stRequest
				} else {
					p.state = stChunkEnd
				}
			}
			continue
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			p.keep(data)
			return
		}
		line := data[:i]
		data = data[i+1:]
		if p.overflow {
			p.overflow = false
			p.line = p.line[:0]
			p.lineTooLong()
			continue
		}
		if len(p.line) > 0 {
			if len(p.line)+len(line) > p.cfg.maxLine {
				p.line = p.line[:0]
				p.lineTooLong()
				continue
			}
			if !p.fits(p.line, len(p.line)+len(line)) {
				p.overBudget()
				continue
			}
			p.line = append(p.line, line...)
			line = p.line
			p.line = p.line[:0] // line stays valid until the next keep
			if cap(p.line) > keepCap {
				p.line = nil
			}
		}
		if len(line) > p.cfg.maxLine {
			p.lineTooLong()
			continue
		}
		if p.h2Upgrade && p.state == stRequest && string(line) == prefaceLine[:len(prefaceLine)-1] {
			p.upgraded() // the rest of data is HTTP/2's
			continue
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		p.handle(line, emit)
	}
}

// keep holds a partial line until its end arrives.
func (p *reqParser) keep(data []byte) {
	if p.overflow {
		return
	}
	if len(p.line)+len(data) > p.cfg.maxLine {
		p.overflow = true
		p.line = p.line[:0]
		return
	}
	if !p.fits(p.line, len(p.line)+len(data)) {
		p.overBudget()
		p.overflow = true // the rest of the line is dropped too
		return
	}
	p.line = append(p.line, data...)
}

// lineTooLong handles a line over maxLine: a request line is taken as junk,
// a header line is ignored.
func (p *reqParser) lineTooLong() {
	switch p.state {
	case stRequest:
		p.junkLine()
	case stHeaders, stTrailers:
		p.hdrBytes += p.cfg.maxLine
	default: // a chunk-size line: lost sync
		p.errors++
		p.state = stRequest
	}
}

func (p *reqParser) junkLine() {
	if !p.junk {
		p.errors++
		p.junk = true
	}
}

func (p *reqParser) handle(line []byte, emit func(*request)) {
	switch p.state {
	case stRequest:
		if len(line) == 0 {
			return // stray CRLF between requests
		}
		switch p.requestLine(line) {
		case lineJunk:
			p.junkLine()
			return
		case lineOverBudget:
			p.overBudget()
			return
		}
		p.junk = false
		p.state = stHeaders
	case stHeaders:
		if len(line) == 0 {
			p.endHeaders(emit)
			return
		}
		p.hdrBytes += len(line)
		if p.hdrBytes > maxHeaderBytes {
			p.errors++
			p.endHeaders(emit) // report what we have; body framing unknown
			p.state = stRequest
			return
		}
		p.header(line)
	case stChunkSize:
		size, ok := parseChunkSize(line)
		switch {
		case !ok:
			p.errors++
			p.state = stRequest
		case size == 0:
			p.state = stTrailers
		default:
			p.bodyLeft, p.state = size, stChunkData
		}
	case stChunkEnd:
		p.state = stChunkSize
		if len(line) != 0 {
			p.errors++
			p.state = stRequest
		}
	case stTrailers:
		if len(line) == 0 {
			p.state = stRequest
		}
	}
}

func (p *reqParser) endHeaders(emit func(*request)) {
	p.emit(emit)
	p.h2Upgrade = p.upgrade
	if cap(p.req) > keepCap {
		p.req = append([]byte(nil), p.req[:p.dest]...)
	}
	switch {
	case p.r.tunnel:
		p.state, p.connected = stSniff, true // the bytes after it: the tunnel, or a retry after a 407
		p.destPort = authorityPort(p.r.target)
		p.tunnelDest(p.r.target)
	case p.chunked:
		p.state = stChunkSize
	case p.bodyLeft > 0:
		p.state = stBody
	default:
		p.state = stRequest
	}
}

func (p *reqParser) emit(emit func(*request)) {
	method := p.req[p.dest:p.method]
	p.r = request{
		method: method, target: p.req[p.method:p.target], host: p.req[p.hostAt:p.host],
		userAgent: p.req[p.ua[0]:p.ua[1]],
		dest:      p.req[:p.dest], hasHost: p.hasHost, minor: p.version,
		tunnel: string(method) == "CONNECT",
	}
	emit(&p.r)
}

type lineKind uint8

const (
	lineRequest    lineKind = iota
	lineJunk                // not a request line
	lineOverBudget          // a request line the memory caps leave no room for
)

// requestLine parses "METHOD SP target SP HTTP/1.x" into p.req.
func (p *reqParser) requestLine(line []byte) lineKind {
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || sp > 32 {
		return lineJunk
	}
	for _, c := range line[:sp] {
		if !isTchar(c) {
			return lineJunk
		}
	}
	rest := line[sp+1:]
	sp2 := bytes.LastIndexByte(rest, ' ')
	if sp2 <= 0 {
		return lineJunk
	}
	target, ver := rest[:sp2], rest[sp2+1:]
	if len(ver) != 8 || string(ver[:7]) != "HTTP/1." || ver[7] < '0' || ver[7] > '9' {
		return lineJunk
	}
	for _, c := range target {
		if c <= ' ' || c == 0x7f {
			return lineJunk
		}
	}
	if int(p.dest) > len(p.req) { // the buffers were dropped for the memory caps
		p.dest = 0
	}
	if !p.fits(p.req, int(p.dest)+sp+len(target)) {
		return lineOverBudget
	}
	p.req = append(append(p.req[:p.dest], line[:sp]...), target...)
	p.method = p.dest + int32(sp) // int32: a method, a target and a Host of at most maxLine each
	p.target = p.method + int32(len(target))
	p.host, p.hostAt, p.ua = p.target, p.target, [2]int32{p.target, p.target}
	p.version = ver[7] - '0'
	p.hasHost, p.chunked, p.bodyLeft, p.hdrBytes = false, false, 0, 0
	p.upgrade, p.h2Upgrade = false, false
	return lineRequest
}

func (p *reqParser) header(line []byte) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
		return // obs-fold or junk: ignored
	}
	name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
	switch {
	case equalFold(name, "host"):
		if !p.hasHost {
			if !p.fits(p.req, len(p.req)+len(value)) {
				p.overBudget()
				return
			}
			p.hostAt = int32(len(p.req))
			p.req = append(p.req, value...)
			p.host = int32(len(p.req))
			p.hasHost = true
		}
	case equalFold(name, "user-agent"):
		if p.ua[0] == p.ua[1] {
			value = record.CutText(value, record.MaxUserAgent)
			if !p.fits(p.req, len(p.req)+len(value)) {
				p.overBudget()
				return
			}
			p.ua[0] = int32(len(p.req))
			p.req = append(p.req, value...)
			p.ua[1] = int32(len(p.req))
		}
	case equalFold(name, "content-length"):
		n, ok := parseDecimal(value)
		if !ok {
			p.errors++
		}
		p.bodyLeft = n
	case equalFold(name, "upgrade"):
		if hasToken(value, "h2c") {
			p.upgrade = true
		}
	case equalFold(name, "transfer-encoding"):
		v := bytes.TrimRight(value, " \t")
		if len(v) >= 7 && equalFold(v[len(v)-7:], "chunked") {
			p.chunked = true
		}
	}
}

// holding reports whether the parser holds bytes it still needs: a partial
// line, or a request whose headers have not ended.
func (p *reqParser) holding() bool {
	return len(p.line) > 0 || p.state == stHeaders
}

// gap tells the parser that n bytes of the stream were lost (n < 0:
// unknown). Inside a body of known length it just skips them; anywhere
// else it resynchronises at the next request line.
func (p *reqParser) gap(n int64) {
	if p.state == stSkip {
		return
	}
	if p.state == stInner {
		p.inner.Gap(n)
		return
	}
	if n >= 0 && (p.state == stBody || p.state == stChunkData) && n < p.bodyLeft {
		p.bodyLeft -= n
		return
	}
	// The bytes up to the next LF may be the tail of a lost line; it fails
	// the request-line check, while a request that starts right after the
	// gap is kept.
	p.state = stRequest
	p.line, p.overflow = p.line[:0], false
	p.junk = true // the gap is counted by the assembler, not as junk
}

// close ends the stream: a request whose headers never ended is still
// reported, since its request line was seen.
func (p *reqParser) close(emit func(*request)) {
	if p.state == stHeaders {
		p.emit(emit)
	}
	if p.inner != nil {
		p.inner.End()
		p.inner.Collect()
		p.inner = nil
	}
	p.state, p.socks, p.connected, p.destPort, p.dest = stRequest, 0, false, 0, 0
	p.line, p.overflow, p.junk = p.line[:0], false, false
	p.upgrade, p.h2Upgrade = false, false
}

// maxTunnelDest bounds the authority of a CONNECT kept as its tunnel's
// destination: a host name (at most 253 bytes) and a port.
const maxTunnelDest = 262

// tunnelDest keeps the authority a CONNECT opened, without its userinfo,
// at the front of p.req as the tunnel's destination: the authority of a
// request inside the tunnel that names none (an HTTP/2 request without
// :authority). A longer one is not kept (the server's address will do).
// target aliases p.req (or the array it had), so it is copied first.
func (p *reqParser) tunnelDest(target []byte) {
	auth := record.WithoutUserinfo(target)
	if len(auth) > maxTunnelDest || len(auth) > cap(p.req) {
		p.req, p.dest = p.req[:0], 0
		return
	}
	var tmp [maxTunnelDest]byte
	n := copy(tmp[:], auth)
	d := record.AppendHostName(p.req[:0], tmp[:n]) // never longer than auth: within p.req's capacity
	p.req, p.dest = d, int32(len(d))
}

// upgraded starts HTTP/2 after a request that asked for "Upgrade: h2c":
// the client sends the connection preface (whose first line was just
// read) only once the server has answered 101 Switching Protocols (RFC
// 9113 §3.2; a server that declines answers in HTTP/1.1, and the client
// goes on in HTTP/1.1), so the client's bytes alone tell that the server
// switched. The upgraded request itself was stream 1, recorded as
// HTTP/1.1.
func (p *reqParser) upgraded() {
	p.h2Upgrade = false
	preface := []byte(prefaceLine)
	if !p.handOff(StreamHTTP2, preface, true) {
		p.state, p.pending = stSkip, uint8(StreamHTTP2)+1
		return
	}
	p.inner.Feed(preface, p.innerBudget())
}

// prefaceLine is the first line of the HTTP/2 connection preface.
const prefaceLine = "PRI * HTTP/2.0\r\n"

// handOff gives the rest of the stream, from first on, to the protocol
// that takes streams of kind, if one does and takes this one.
func (p *reqParser) handOff(kind StreamKind, first []byte, upgrade bool) bool {
	t := p.cfg.Takers[kind].Take
	if t == nil {
		return false
	}
	h := stream.Handoff{DestPort: p.destPort, Upgrade: upgrade}
	if int(p.dest) <= len(p.req) {
		h.Dest = p.req[:p.dest]
	}
	in := t(&h, first)
	if in == nil {
		return false
	}
	p.inner, p.state = in, stInner
	return true
}

// innerBudget is what the parser that took the stream over may hold: the
// budget less this parser's buffers.
func (p *reqParser) innerBudget() int { return p.budget - cap(p.line) - cap(p.req) }

// hasToken reports whether the comma-separated list v holds token
// (compared without case).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if equalFold(bytes.Trim(t, " \t"), token) {
			return true
		}
	}
	return false
}

// tchar marks the bytes of an HTTP token (RFC 9110 §5.6.2).
var tchar = func() (t [256]bool) {
	for c := '0'; c <= 'z'; c++ {
		if c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' {
			t[c] = true
		}
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func isTchar(c byte) bool { return tchar[c] }

func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseChunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.Trim(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
