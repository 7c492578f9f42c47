package capture

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// AssemblerOptions bound the memory and the waiting of TCP reassembly.
// Zero fields take the value in DefaultAssemblerOptions.
type AssemblerOptions struct {
	// MaxFlowBuffer caps the bytes held for one direction of a
	// connection: out-of-order segments, a partial line, and a request line
	// and Host waiting for the end of the headers. Past it, the missing
	// bytes are taken as lost, or what the parser holds is dropped and the
	// flow resynchronises at its next request line.
	MaxFlowBuffer int
	// MaxBuffer caps the same bytes for all connections together.
	MaxBuffer int
	// MaxLine is the longest request or header line kept; longer request
	// lines are skipped as junk.
	MaxLine int
	// MaxFlows caps the connection directions tracked at once. At the cap
	// a direction that has carried no data (a SYN and nothing else, what a
	// SYN flood makes) is forgotten to make room, else one quiet for a
	// second of packet time is ended (Evicted); when a sample of them all
	// carried data within the second, segments of new ones are ignored
	// (and counted, SegmentsDenied).
	// Each costs FlowCost bytes besides what MaxBuffer counts: the default
	// bounds that to about 136 MiB.
	MaxFlows int
	// IdleTimeout ends a connection that has sent nothing for this long,
	// in packet time (never wall-clock time, so replays behave like live
	// capture).
	IdleTimeout time.Duration
	// GapTimeout is how long, in packet time, a hole in a stream is waited
	// for (a retransmission) before the bytes are taken as lost.
	GapTimeout time.Duration
	// MaxClosed caps the connection directions remembered after they
	// ended (FIN, RST) or stopped being tracked (idle, evicted), each
	// closedCost bytes: the oldest is forgotten first.
	MaxClosed int
	// ClosedLinger is how long, in packet time, a closed direction is
	// remembered: its late segments (retransmissions after FIN or RST, its
	// SYN sent again) are recognised as its own, never parsed as a new
	// connection, and a direction that was only expired or evicted goes on
	// as the same connection.
	ClosedLinger time.Duration
}

// DefaultAssemblerOptions are used for zero fields of AssemblerOptions.
var DefaultAssemblerOptions = AssemblerOptions{
	MaxFlowBuffer: 256 << 10,
	MaxBuffer:     128 << 20,
	MaxLine:       16 << 10,
	MaxFlows:      256 << 10,
	IdleTimeout:   2 * time.Minute,
	GapTimeout:    2 * time.Second,
	MaxClosed:     64 << 10,
	ClosedLinger:  2 * time.Minute,
}

func (o *AssemblerOptions) fill() {
	d := DefaultAssemblerOptions
	if o.MaxFlowBuffer <= 0 {
		o.MaxFlowBuffer = d.MaxFlowBuffer
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = d.MaxBuffer
	}
	if o.MaxLine <= 0 {
		o.MaxLine = d.MaxLine
	}
	if o.MaxFlows <= 0 {
		o.MaxFlows = d.MaxFlows
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = d.IdleTimeout
	}
	if o.GapTimeout <= 0 {
		o.GapTimeout = d.GapTimeout
	}
	if o.MaxClosed <= 0 {
		o.MaxClosed = d.MaxClosed
	}
	if o.ClosedLinger <= 0 {
		o.ClosedLinger = d.ClosedLinger
	}
}

// Request is one record found on the wire (record.Record): an HTTP
// request, or a TLS or QUIC ClientHello, or an HTTP/2 request (Proto says
// which). Its slices alias the parsers' buffers: they are valid only
// during the callback.
type Request = record.Record

// AssemblerStats count what the assembler saw.
type AssemblerStats struct {
	Flows          uint64 // connections (client directions) seen; a direction tracked again after eviction or expiry is not counted again
	Requests       uint64
	ParseErrors    uint64        // junk runs, bad framing
	NonHTTP        NonHTTPCounts // client streams of another protocol (TLS, SSH, ...), by StreamKind: skipped
	Gaps           uint64        // holes in a stream given up on
	Overflows      uint64        // times a buffer cap forced bytes to be dropped
	SegmentsDenied uint64        // segments of new connections ignored because MaxFlows were tracked
	Evicted        uint64        // halves forgotten at MaxFlows to make room: without data (a SYN and nothing else), else quiet for a second
	LateSegments   uint64        // segments of a connection direction that had ended (FIN, RST), dropped: retransmissions, its SYN again
}

// AssemblerStatsCounters describes AssemblerStats' counters
// (internal/counter), but for NonHTTP (NonHTTPCountsCounters).
var AssemblerStatsCounters = counter.Table[AssemblerStats]{
	{Name: "tcp_flows", Help: "TCP connections (client directions) seen", Text: "tcp flows", Field: func(s *AssemblerStats) *uint64 { return &s.Flows }},
	{Name: "requests_parsed", Help: "HTTP/1.x requests the assembler parsed (the summaries count requests as they are decided)", Not: counter.JSON | counter.Metrics, Field: func(s *AssemblerStats) *uint64 { return &s.Requests }},
	{Name: "parse_errors", Help: "HTTP parse errors (junk runs, bad framing)", Text: "parse errors", Field: func(s *AssemblerStats) *uint64 { return &s.ParseErrors }},
	{Name: "reassembly_gaps", Help: "Holes in TCP streams given up on", Text: "reassembly gaps", Field: func(s *AssemblerStats) *uint64 { return &s.Gaps }},
	{Name: "buffer_overflows", Help: "Times a reassembly buffer cap forced held bytes to be dropped", Text: "buffer overflows", Field: func(s *AssemblerStats) *uint64 { return &s.Overflows }},
	{Name: "segments_denied", Help: "Segments of new connections ignored because the flow cap was reached", Text: "segments over the flow cap", Field: func(s *AssemblerStats) *uint64 { return &s.SegmentsDenied }},
	{Name: "flows_evicted", Help: "Connection directions made room for at the flow cap: without data (a SYN flood), else quiet for a second", Text: "flows evicted at the flow cap", Field: func(s *AssemblerStats) *uint64 { return &s.Evicted }},
	{Name: "late_segments", Help: "Segments of connection directions that had ended (retransmissions after FIN or RST, a SYN again), dropped", Text: "late segments of closed connections", Field: func(s *AssemblerStats) *uint64 { return &s.LateSegments }},
}

type role uint8

const (
	roleUnknown role = iota
	roleClient
	roleServer
)

// half is one direction of a connection.
type half struct {
	key      flowKey
	role     role
	synced   bool
	fin      bool
	encap    Encap  // of the last segment with data: Request.Encap
	next     uint32 // next expected sequence number
	finSeq   uint32
	start    uint32 // the first stream byte seen: the ISN + 1, or the first payload's
	lastSeen int64
	ooo      []segment // out of order, sorted by seq
	oooBytes int
	gapSince int64
	parser   stream.Parser // made at the first byte or hole
	lineCap  int           // what the parser holds (Held), counted in the total
}

// FlowCost is the fixed bytes a tracked direction takes (its struct, its
// parser, the largest of the protocols', and its map entry, rounded up),
// bounded by MaxFlows.
const FlowCost = int(unsafe.Sizeof(half{})+unsafe.Sizeof(flowKey{})) + parserCost + 16

// held is the bytes counted for h against the caps: out-of-order segments
// and what its parser holds, by capacity.
func (h *half) held() int { return h.oooBytes + h.lineCap }

type segment struct {
	seq  uint32
	data []byte
}

// flowKey is a direction's key: its addresses and its encapsulation path.
type flowKey struct {
	src, dst netip.AddrPort
	path     uint64
}

// seqDiff is a - b in sequence space (RFC 9293 §3.4), wrap-around safe:
// in [-2^31, 2^31). It is widened to int64 so that negating it never
// overflows: two segments exactly 2^31 apart give -2^31, and -(-2^31) must
// be 2^31, not -2^31 again (which once sliced a payload at a negative
// index).
func seqDiff(a, b uint32) int64 { return int64(int32(a - b)) }
