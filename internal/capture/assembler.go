package capture

import (
	"time"

	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// assembler reassembles the client-to-server direction of TCP connections
// and hands each direction's bytes, in order, to a stream.Parser that its
// Factory made for it; it knows no protocol.
//
// It takes segments in capture order, from any number of connections, and
// the parsers report their records, in stream order per connection,
// through its Sink to the emit function. Time is packet time throughout. An Assembler is not safe for
// concurrent use.
type assembler struct {
	opts   AssemblerOptions
	emit   func(*Request)
	flows  map[flowKey]*half
	closed closedTable // directions that ended or stopped being tracked, for a while
	free   [][]byte    // small buffers of delivered out-of-order segments, for reuse

	buffered  int   // every byte held, all flows: see Buffered
	now       int64 // latest packet time, ns
	lastSweep int64
	busy      *half          // the half being worked on, nil between calls: dropped after a panic
	peakFlows int            // most entries a.flows has had since it was made
	sink      *stream.Sink   // shared by the parsers: the direction being parsed, its records
	parsers   stream.Factory // makes each direction's parser

	Stats AssemblerStats
}

// makeAssembler returns an assembler that calls emit for every record its
// parsers report; parsers makes their Factory, given the Sink they report
// to. opts may be nil.
func makeAssembler(opts *AssemblerOptions, emit func(*Request), parsers func(*stream.Sink) stream.Factory) *assembler {
	a := &assembler{emit: emit, flows: make(map[flowKey]*half)}
	if opts != nil {
		a.opts = *opts
	}
	a.opts.fill()
	a.closed.max = a.opts.MaxClosed
	a.sink = stream.NewSink(a.record)
	a.parsers = parsers(a.sink)
	return a
}

// record hands a parser's record on.
func (a *assembler) record(r *Request) {
	if testHooks {
		testPanic(r.URL)
	}
	a.emit(r)
}

// reading points the sink at h, before its parser is called.
func (a *assembler) reading(h *half) {
	a.sink.Conn = stream.Conn{Src: h.key.src, Dst: h.key.dst, Encap: h.encap, Now: a.now}
}

// Buffered returns the bytes held for all connections: out-of-order
// segments, partial lines, request lines and Host values waiting for the
// end of their headers, and capacity kept for the next ones (the buffers'
// capacity, not only their length). It never exceeds MaxBuffer after Add
// returns. Each tracked direction takes FlowCost bytes more.
func (a *assembler) Buffered() int { return a.buffered }

// Flows returns the number of connection directions tracked.
func (a *assembler) Flows() int { return len(a.flows) }

// Add takes one TCP segment captured at time ts.
func (a *assembler) Add(ts time.Time, s *Segment) {
	a.add(ts, s)
	a.busy = nil
}

func (a *assembler) add(ts time.Time, s *Segment) {
	now := ts.UnixNano()
	switch {
	case now > a.now:
		a.now = now
	case a.now-now > int64(closedJump) && a.closed.len() > 0:
		// Into another capture's timeline (a file given twice): its
		// connections are not the ones that closed.
		a.closed.reset()
		if a.now-now > int64(timeJump) {
			a.now, a.lastSweep = now, now
		}
	case a.now-now > int64(timeJump):
		// Packet time went back a long way: past a far-future timestamp
		// (a damaged or hostile record) or into another capture's
		// timeline. Follow it: waiting for the old time to come back
		// would stop the sweeps that expire idle connections and holes.
		a.now, a.lastSweep = now, now
	}
	if a.now-a.lastSweep >= int64(time.Second) {
		a.sweep()
	}
	key := flowKey{s.Src, s.Dst, s.Path}
	h := a.flows[key]
	if s.RST {
		if h != nil {
			a.end(h, true)
		}
		if r := a.flows[flowKey{s.Dst, s.Src, s.Path}]; r != nil {
			a.end(r, true)
		}
		return
	}
	if h == nil {
		if len(s.Payload) == 0 && !s.SYN {
			return // a bare ACK or FIN of a connection we do not know
		}
		c, wasClosed := a.closed.get(key)
		if wasClosed && a.late(c, s) {
			a.Stats.LateSegments++
			return
		}
		if len(a.flows) >= a.opts.MaxFlows && !a.evict() {
			a.Stats.SegmentsDenied++
			return
		}
		h = &half{key: key}
		if wasClosed {
			a.closed.forget(key)
			if !c.ended && !s.SYN && seqDiff(s.Seq, c.end) >= 0 {
				// Expired or evicted, not ended: the same connection
				// goes on, and is not counted again.
				h.synced, h.role, h.start, h.next = true, c.role, c.start, c.end
			}
		}
		a.flows[key] = h
		a.peakFlows = max(a.peakFlows, len(a.flows))
	}
	a.busy = h
	h.lastSeen = now
	if len(s.Payload) > 0 {
		h.encap = s.Encap
	}
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

func (a *assembler) syn(h *half, s *Segment) {
	if h.synced && h.start == s.Seq+1 {
		// Its SYN sent again (the same ISN): the stream goes on. Data in
		// it (Fast Open) is a retransmission, trimmed like any other.
		if len(s.Payload) > 0 && h.role == roleClient {
			a.data(h, s.Seq+1, s.Payload)
			a.maybeFinish(h)
		}
		return
	}
	renew := h.synced && h.role == roleClient
	if renew { // a new connection on the same ports
		a.closeParser(h)
		a.dropOOO(h)
	}
	h.synced, h.next, h.start, h.fin = true, s.Seq+1, s.Seq+1, false
	if s.ACK {
		h.role = roleServer
		return
	}
	if renew {
		a.Stats.Flows++
	}
	a.setClient(h)
	if len(s.Payload) > 0 { // TCP Fast Open: the request in the SYN
		a.data(h, s.Seq+1, s.Payload)
		if s.FIN {
			h.fin, h.finSeq = true, s.Seq+1+uint32(len(s.Payload))
		}
		a.maybeFinish(h)
	}
}

// late reports whether s belongs to c, a direction that was closed: a
// retransmission of bytes it carried, or its SYN sent again.
func (a *assembler) late(c closedHalf, s *Segment) bool {
	if s.SYN {
		return s.Seq+1 == c.start
	}
	// A segment at or past the end is, after FIN or RST, a new connection
	// whose SYN was not seen; after the idle timeout or an eviction, the
	// same connection going on.
	return seqDiff(s.Seq, c.start) >= 0 && seqDiff(s.Seq, c.end) < 0
}

// end closes h, at its FIN or an RST (ended), or at the idle timeout or
// an eviction, and remembers where its stream ended.
func (a *assembler) end(h *half, ended bool) {
	a.closeHalf(h)
	a.rememberClosed(h, ended, false)
}

// rememberClosed keeps where h's stream ended, for ClosedLinger. A
// direction that carried no byte (a SYN, a port scan's RST) is not
// remembered, so that a SYN flood does not fill the table, unless it is
// evicted, to be counted once if its data come after all.
func (a *assembler) rememberClosed(h *half, ended, evicted bool) {
	if !h.synced || h.role == roleUnknown || (h.next == h.start && !evicted) {
		return
	}
	a.closed.remember(h.key, closedHalf{start: h.start, end: h.next, role: h.role, ended: ended, at: a.now})
}

func (a *assembler) finOnly(h *half, s *Segment) {
	if s.FIN {
		h.next = s.Seq + uint32(len(s.Payload)) + 1 // FIN takes a number
		a.remove(h)                                 // servers hold nothing but their half
		a.rememberClosed(h, true, false)
	}
}

func (a *assembler) setClient(h *half) {
	if h.role != roleClient {
		h.role = roleClient
		a.Stats.Flows++
	}
}

// data handles a segment's payload.
func (a *assembler) data(h *half, seq uint32, payload []byte) {
	if !h.synced { // the connection started before the capture
		h.synced, h.next, h.start = true, seq, seq
	}
	if h.role == roleUnknown {
		if r := a.flows[flowKey{h.key.dst, h.key.src, h.key.path}]; (r != nil && r.role == roleClient) || a.parsers.Answer(payload) {
			h.role = roleServer
			return
		}
		a.setClient(h)
	}
	d := seqDiff(seq, h.next)
	if d > 0 { // a hole before it: hold it, or give up on the first hole
		if n := heldSize(len(payload)); h.oooBytes+h.lineCap+n <= a.opts.MaxFlowBuffer && a.buffered+n <= a.opts.MaxBuffer {
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
	}
	a.inOrder(h, seq, payload)
}

// inOrder delivers payload, which starts at or before h.next. The first
// copy of a byte wins, whether it was delivered already or is held.
func (a *assembler) inOrder(h *half, seq uint32, payload []byte) {
	for {
		d := seqDiff(seq, h.next)
		if -d >= int64(len(payload)) {
			return // all seen before: a retransmission
		}
		payload, seq = payload[-d:], h.next
		if len(h.ooo) > 0 {
			if k := seqDiff(h.ooo[0].seq, seq); k < int64(len(payload)) {
				// It reaches held bytes: those came first. Deliver up to
				// them, then them, then what is left past them.
				if k > 0 {
					a.deliver(h, payload[:k])
				}
				a.drain(h)
				continue
			}
		}
		a.deliver(h, payload)
		a.drain(h)
		return
	}
}

// deliver parses in-order bytes and advances the stream.
func (a *assembler) deliver(h *half, b []byte) {
	h.next += uint32(len(b))
	p := a.parserOf(h)
	a.reading(h)
	// What the parser may hold, in capacity: it drops (and counts) a line
	// or request that would need more, without allocating for it.
	p.Feed(b, min(a.opts.MaxFlowBuffer-h.oooBytes, a.opts.MaxBuffer-a.buffered+h.lineCap))
	a.account(h)
}

func (a *assembler) parserOf(h *half) stream.Parser {
	if h.parser == nil {
		h.parser = a.parsers.NewParser()
	}
	return h.parser
}

// account brings what the parser of h holds (Held: a partial line, a
// message being collected, capacity kept for the next ones) into the
// totals. Over the flow's or the total cap, the parser sheds it (counted
// when the stream needed it: the parser resynchronises as after a hole).
func (a *assembler) account(h *half) {
	p := h.parser
	a.Stats.Overflows += a.sink.Overflows
	a.sink.Overflows = 0
	n := p.Held()
	a.buffered += n - h.lineCap
	h.lineCap = n
	if n > 0 && (h.oooBytes+n > a.opts.MaxFlowBuffer || a.buffered > a.opts.MaxBuffer) {
		if p.Shed() {
			a.Stats.Overflows++
		}
		a.buffered -= n
		h.lineCap = 0
	}
}

// hold keeps a copy of an out-of-order segment, sorted by sequence number.
func (a *assembler) hold(h *half, seq uint32, payload []byte) {
	buf := a.buffer(len(payload))
	copy(buf, payload)
	// The first copy of a byte wins: where held segments overlap this one,
	// their bytes are kept, so overlapping held copies never differ.
	for _, o := range h.ooo {
		if d := seqDiff(o.seq, seq); d >= 0 {
			if d < int64(len(buf)) {
				copy(buf[d:], o.data)
			}
		} else if -d < int64(len(o.data)) {
			copy(buf, o.data[-d:])
		}
	}
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
	h.oooBytes += cap(buf)
	a.buffered += cap(buf)
}

// Out-of-order segments are copied into buffers of smallBuf bytes (reused)
// or, when longer, of their own length; what is counted is the capacity.
const (
	smallBuf = 2048
	maxFree  = 1024 // small buffers kept for reuse: 2 MiB
)

// heldSize is the bytes a held copy of an n-byte payload takes.
func heldSize(n int) int { return max(n, smallBuf) }

func (a *assembler) buffer(n int) []byte {
	if n > smallBuf {
		return make([]byte, n)
	}
	if k := len(a.free); k > 0 {
		b := a.free[k-1]
		a.free = a.free[:k-1]
		return b[:n]
	}
	return make([]byte, n, smallBuf)
}

func (a *assembler) release(b []byte) {
	if cap(b) == smallBuf && len(a.free) < maxFree {
		a.free = append(a.free, b[:0])
	}
}

// drain delivers held segments that the stream has reached.
func (a *assembler) drain(h *half) {
	for len(h.ooo) > 0 {
		s := h.ooo[0]
		d := seqDiff(s.seq, h.next)
		if d > 0 {
			break
		}
		h.ooo = h.ooo[1:]
		h.oooBytes -= cap(s.data)
		a.buffered -= cap(s.data)
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
func (a *assembler) skipGap(h *half, seq uint32) {
	if d := seqDiff(seq, h.next); d > 0 {
		a.Stats.Gaps++
		a.parserOf(h).Gap(d)
		h.next = seq
	}
}

func (a *assembler) maybeFinish(h *half) {
	if h.fin && len(h.ooo) == 0 && seqDiff(h.finSeq, h.next) <= 0 {
		a.end(h, true)
	}
}

// closeHalf delivers what is held (skipping holes), ends the parser and
// forgets the half.
func (a *assembler) closeHalf(h *half) {
	a.busy = h
	for len(h.ooo) > 0 {
		a.skipGap(h, h.ooo[0].seq)
		a.drain(h)
	}
	a.closeParser(h)
	a.remove(h)
}

// closeParser ends the parser's stream and releases its buffers.
func (a *assembler) closeParser(h *half) {
	if p := h.parser; p != nil {
		a.reading(h)
		p.End()
		p.Collect()
		a.buffered -= h.lineCap
		h.lineCap = 0
	}
}

func (a *assembler) dropOOO(h *half) {
	for _, s := range h.ooo {
		a.buffered -= cap(s.data)
		a.release(s.data)
	}
	h.ooo, h.oooBytes = nil, 0
}

// timeJump is how far packet time may go back before the assembler
// follows it; smaller steps back (packets reordered across capture queues)
// leave its clock where it is.
const timeJump = time.Minute

// closedJump is how far packet time may go back before the closed
// directions are forgotten: retransmissions come later in packet time,
// and packets reordered across capture queues are a few milliseconds
// apart; a file given twice goes back by its whole duration.
const closedJump = 100 * time.Millisecond

// evictProbe is how many tracked halves evict looks at, at most.
const evictProbe = 64

// evictQuiet is how long, in packet time, a half that carries data must
// have been quiet before evict may end it.
const evictQuiet = int64(time.Second)

// evict makes room at the flow cap. It looks at a random sample of the
// tracked halves (map iteration starts at a random place) and forgets the
// first that holds no stream state: one that has sent a SYN (or a
// SYN-ACK) and nothing else, all a SYN flood creates. Forgetting it loses
// nothing: if its connection does send data later, the half is made again
// from that segment, as for a connection that started before the capture.
// Failing that, it ends the half of the sample quiet the longest, if it
// has been quiet for evictQuiet, as the idle timeout would (held bytes
// delivered, a request whose headers never ended reported): a flood of
// one-byte segments must be resent every second to hold the table.
// It reports false when every sampled half carried data within
// evictQuiet: the table is really that busy.
func (a *assembler) evict() bool {
	var quiet *half
	n := 0
	for _, h := range a.flows {
		if h.parser == nil && len(h.ooo) == 0 {
			a.remove(h)
			a.rememberClosed(h, false, true)
			a.Stats.Evicted++
			return true
		}
		if a.now-h.lastSeen >= evictQuiet && (quiet == nil || h.lastSeen < quiet.lastSeen) {
			quiet = h
		}
		if n++; n == evictProbe {
			break
		}
	}
	if quiet == nil {
		return false
	}
	a.busy = quiet
	a.closeHalf(quiet)
	a.rememberClosed(quiet, false, true)
	a.busy = nil
	a.Stats.Evicted++
	return true
}

// remove forgets h and everything counted for it.
func (a *assembler) remove(h *half) {
	a.buffered -= h.held()
	h.ooo, h.oooBytes, h.lineCap = nil, 0, 0
	if h.parser != nil {
		h.parser.Release()
	}
	delete(a.flows, h.key)
}

// dropBusy forgets the half that was being worked on when a panic
// interrupted the Assembler, whatever state it was left in, and recounts
// the bytes held from the halves that remain. It returns the dropped
// half's key. Its buffers are left to the garbage collector.
func (a *assembler) dropBusy() (src, dst string, ok bool) {
	h := a.busy
	a.busy = nil
	if h == nil || a.flows[h.key] != h {
		return "", "", false
	}
	delete(a.flows, h.key)
	n := 0
	for _, o := range a.flows {
		n += o.held()
	}
	a.buffered = n
	return h.key.src.String(), h.key.dst.String(), true
}

// sweep expires idle connections and gives up on old holes.
func (a *assembler) sweep() {
	a.lastSweep = a.now
	idle, gap := a.opts.IdleTimeout.Nanoseconds(), a.opts.GapTimeout.Nanoseconds()
	for _, h := range a.flows {
		// Times from before packet time went back are taken as now.
		h.lastSeen, h.gapSince = min(h.lastSeen, a.now), min(h.gapSince, a.now)
		switch {
		case a.now-h.lastSeen >= idle:
			a.end(h, false)
		case len(h.ooo) > 0 && a.now-h.gapSince >= gap:
			a.busy = h
			a.skipGap(h, h.ooo[0].seq)
			a.drain(h)
			a.maybeFinish(h)
		}
	}
	a.closed.expire(a.now, a.opts.ClosedLinger.Nanoseconds())
	a.shrink()
}

// shrink replaces the flow map when it holds a quarter or less of its
// peak: a Go map keeps its memory when entries are deleted, and a flood
// of connections that ended would otherwise hold it for good.
func (a *assembler) shrink() {
	if a.peakFlows < 1024 || len(a.flows) > a.peakFlows/4 {
		return
	}
	m := make(map[flowKey]*half, len(a.flows))
	for k, h := range a.flows {
		m[k] = h
	}
	a.flows, a.peakFlows = m, len(m)
}

// Flush ends every connection, as at the end of the input: held segments
// are delivered with their holes skipped, and requests whose headers never
// ended are reported.
func (a *assembler) Flush() {
	for _, h := range a.flows {
		a.closeHalf(h)
	}
	a.busy = nil
	a.shrink()
	a.collectErrors()
}

// collectErrors moves the counts of the parsers of open connections into
// their protocols' totals.
func (a *assembler) collectErrors() {
	for _, h := range a.flows {
		if h.parser != nil {
			h.parser.Collect()
		}
	}
}

// CurrentStats returns the counts so far, and moves those of the parsers
// of connections still open into their protocols' totals.
func (a *assembler) CurrentStats() AssemblerStats {
	a.collectErrors()
	return a.Stats
}
