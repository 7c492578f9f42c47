package capture

import (
	"time"
)

// Assembler reassembles the client-to-server direction of TCP connections
// and finds the HTTP requests in it.
//
// It takes segments in capture order, from any number of connections, and
// calls the emit function, in stream order per connection, for every
// request. Time is packet time throughout. An Assembler is not safe for
// concurrent use.
type Assembler struct {
	opts  AssemblerOptions
	emit  func(*Request)
	flows map[flowKey]*half
	free  [][]byte // buffers of delivered out-of-order segments, for reuse

	buffered  int   // out-of-order and partial-line bytes, all flows
	now       int64 // latest packet time, ns
	lastSweep int64
	cur       *half // the half whose bytes are being parsed
	req       Request
	url       []byte

	Stats AssemblerStats
}

// NewAssembler returns an Assembler that calls emit for every request.
// opts may be nil.
func NewAssembler(opts *AssemblerOptions, emit func(*Request)) *Assembler {
	a := &Assembler{emit: emit, flows: make(map[flowKey]*half)}
	if opts != nil {
		a.opts = *opts
	}
	a.opts.fill()
	return a
}

// Buffered returns the bytes held for out-of-order segments and partial
// lines.
func (a *Assembler) Buffered() int { return a.buffered }

// Flows returns the number of connection directions tracked.
func (a *Assembler) Flows() int { return len(a.flows) }

// Add takes one TCP segment captured at time ts.
func (a *Assembler) Add(ts time.Time, s *Segment) {
	now := ts.UnixNano()
	if now > a.now {
		a.now = now
	}
	if a.now-a.lastSweep >= int64(time.Second) {
		a.sweep()
	}
	key := flowKey{s.Src, s.Dst}
	h := a.flows[key]
	if s.RST {
		if h != nil {
			a.closeHalf(h)
		}
		if r := a.flows[flowKey{s.Dst, s.Src}]; r != nil {
			a.closeHalf(r)
		}
		return
	}
	if h == nil {
		if len(s.Payload) == 0 && !s.SYN {
			return // a bare ACK or FIN of a connection we do not know
		}
		if len(a.flows) >= a.opts.MaxFlows {
			a.Stats.SegmentsDenied++
			return
		}
		h = &half{key: key}
		a.flows[key] = h
	}
	h.lastSeen = now
	if s.SYN {
		a.syn(h, s)
		return
	}
	if h.role == roleServer {
		a.finOnly(h, s)
		return
	}
	if len(s.Payload) > 0 {
		a.data(h, s.Seq, s.Payload)
	}
	if s.FIN {
		h.fin, h.finSeq = true, s.Seq+uint32(len(s.Payload))
	}
	a.maybeFinish(h)
}

func (a *Assembler) syn(h *half, s *Segment) {
	if h.synced && h.role == roleClient { // a new connection on the same ports
		a.closeParser(h)
		a.dropOOO(h)
	}
	h.synced, h.next, h.fin = true, s.Seq+1, false
	if s.ACK {
		h.role = roleServer
	} else {
		a.setClient(h)
	}
}

func (a *Assembler) finOnly(h *half, s *Segment) {
	if s.FIN {
		delete(a.flows, h.key) // servers hold nothing
	}
}

func (a *Assembler) setClient(h *half) {
	if h.role != roleClient {
		h.role = roleClient
		a.Stats.Flows++
	}
}

// data handles a segment's payload.
func (a *Assembler) data(h *half, seq uint32, payload []byte) {
	if !h.synced { // the connection started before the capture
		h.synced, h.next = true, seq
	}
	if h.role == roleUnknown {
		if r := a.flows[flowKey{h.key.dst, h.key.src}]; (r != nil && r.role == roleClient) || isResponse(payload) {
			h.role = roleServer
			return
		}
		a.setClient(h)
	}
	d := seqDiff(seq, h.next)
	if d > 0 { // a hole before it: hold it, or give up on the first hole
		if h.oooBytes+len(payload) <= a.opts.MaxFlowBuffer && a.buffered+len(payload) <= a.opts.MaxBuffer {
			a.hold(h, seq, payload)
			return
		}
		a.Stats.Overflows++
		if len(h.ooo) > 0 && seqDiff(h.ooo[0].seq, seq) < 0 {
			a.skipGap(h, h.ooo[0].seq) // held bytes come first
			a.drain(h)
			a.data(h, seq, payload)
			return
		}
		a.skipGap(h, seq)
		a.deliver(h, payload)
		a.drain(h)
		return
	}
	if -d >= int64(len(payload)) {
		return // all seen before: a retransmission
	}
	a.deliver(h, payload[-d:])
	a.drain(h)
}

// deliver parses in-order bytes and advances the stream.
func (a *Assembler) deliver(h *half, b []byte) {
	h.next += uint32(len(b))
	p := a.parserOf(h)
	a.cur = h
	p.feed(b, a.onRequest)
	a.accountLine(h)
}

func (a *Assembler) parserOf(h *half) *reqParser {
	if h.parser == nil {
		h.parser = newReqParser(a.opts.MaxLine)
	}
	return h.parser
}

// accountLine keeps the partial-line bytes of h in the total, dropping the
// partial line when the total is over its cap.
func (a *Assembler) accountLine(h *half) {
	p := h.parser
	n := cap(p.line) + cap(p.req)
	a.buffered += n - h.lineCap
	h.lineCap = n
	if a.buffered > a.opts.MaxBuffer && len(p.line) > 0 {
		a.Stats.Overflows++
		p.gap(-1)
		p.line, p.req = nil, nil
		a.buffered -= h.lineCap
		h.lineCap = 0
	}
}

func (a *Assembler) onRequest(r *request) {
	h := a.cur
	a.url = appendURL(a.url[:0], r, h.key.dst)
	a.req = Request{Time: time.Unix(0, a.now), Src: h.key.src, Dst: h.key.dst, Method: r.method, URL: a.url}
	a.Stats.Requests++
	a.emit(&a.req)
}

// hold keeps a copy of an out-of-order segment, sorted by sequence number.
func (a *Assembler) hold(h *half, seq uint32, payload []byte) {
	buf := a.buffer(len(payload))
	copy(buf, payload)
	i := len(h.ooo)
	for i > 0 && seqDiff(h.ooo[i-1].seq, seq) > 0 {
		i--
	}
	h.ooo = append(h.ooo, segment{})
	copy(h.ooo[i+1:], h.ooo[i:])
	h.ooo[i] = segment{seq, buf}
	if h.oooBytes == 0 {
		h.gapSince = a.now
	}
	h.oooBytes += len(payload)
	a.buffered += len(payload)
}

func (a *Assembler) buffer(n int) []byte {
	for i := len(a.free) - 1; i >= 0 && i >= len(a.free)-8; i-- {
		if b := a.free[i]; cap(b) >= n {
			a.free[i] = a.free[len(a.free)-1]
			a.free = a.free[:len(a.free)-1]
			return b[:n]
		}
	}
	return make([]byte, n, max(n, 2048))
}

func (a *Assembler) release(b []byte) {
	if len(a.free) < 4096 {
		a.free = append(a.free, b[:0])
	}
}

// drain delivers held segments that the stream has reached.
func (a *Assembler) drain(h *half) {
	for len(h.ooo) > 0 {
		s := h.ooo[0]
		d := seqDiff(s.seq, h.next)
		if d > 0 {
			break
		}
		h.ooo = h.ooo[1:]
		h.oooBytes -= len(s.data)
		a.buffered -= len(s.data)
		if -d < int64(len(s.data)) {
			a.deliver(h, s.data[-d:])
		}
		a.release(s.data)
	}
	if len(h.ooo) == 0 {
		h.ooo = h.ooo[:0:0]
	} else {
		h.gapSince = a.now
	}
}

// skipGap gives up on the bytes before seq.
func (a *Assembler) skipGap(h *half, seq uint32) {
	if d := seqDiff(seq, h.next); d > 0 {
		a.Stats.Gaps++
		a.parserOf(h).gap(d)
		h.next = seq
	}
}

func (a *Assembler) maybeFinish(h *half) {
	if h.fin && len(h.ooo) == 0 && seqDiff(h.finSeq, h.next) <= 0 {
		a.closeHalf(h)
	}
}

// closeHalf delivers what is held (skipping holes), ends the parser and
// forgets the half.
func (a *Assembler) closeHalf(h *half) {
	for len(h.ooo) > 0 {
		a.skipGap(h, h.ooo[0].seq)
		a.drain(h)
	}
	a.closeParser(h)
	delete(a.flows, h.key)
}

func (a *Assembler) closeParser(h *half) {
	if h.parser != nil {
		a.cur = h
		h.parser.close(a.onRequest)
		a.Stats.ParseErrors += h.parser.errors
		h.parser.errors = 0
		a.buffered -= h.lineCap
		h.lineCap = 0
	}
}

func (a *Assembler) dropOOO(h *half) {
	for _, s := range h.ooo {
		a.buffered -= len(s.data)
		a.release(s.data)
	}
	h.ooo, h.oooBytes = nil, 0
}

// sweep expires idle connections and gives up on old holes.
func (a *Assembler) sweep() {
	a.lastSweep = a.now
	idle, gap := a.opts.IdleTimeout.Nanoseconds(), a.opts.GapTimeout.Nanoseconds()
	for _, h := range a.flows {
		switch {
		case a.now-h.lastSeen >= idle:
			a.closeHalf(h)
		case len(h.ooo) > 0 && a.now-h.gapSince >= gap:
			a.skipGap(h, h.ooo[0].seq)
			a.drain(h)
			a.maybeFinish(h)
		}
	}
}

// Flush ends every connection, as at the end of the input: held segments
// are delivered with their holes skipped, and requests whose headers never
// ended are reported.
func (a *Assembler) Flush() {
	for _, h := range a.flows {
		a.closeHalf(h)
	}
	a.collectErrors()
}

// collectErrors moves the parse errors of open connections into Stats.
func (a *Assembler) collectErrors() {
	for _, h := range a.flows {
		if h.parser != nil {
			a.Stats.ParseErrors += h.parser.errors
			h.parser.errors = 0
		}
	}
}

// CurrentStats returns the counts so far, including the parse errors of
// connections still open.
func (a *Assembler) CurrentStats() AssemblerStats {
	a.collectErrors()
	return a.Stats
}

// isResponse reports whether b starts like an HTTP/1.x status line:
// "HTTP/1.x NNN".
func isResponse(b []byte) bool {
	return len(b) >= 12 && string(b[:7]) == "HTTP/1." && b[8] == ' ' &&
		b[9] >= '0' && b[9] <= '9' && b[10] >= '0' && b[10] <= '9' && b[11] >= '0' && b[11] <= '9'
}
