package capture

import (
	"context"
	"errors"
	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"io"
	"sync"
	"sync/atomic"

	quicproto "github.com/urldedupd/urldedupd/internal/capture/proto/quic"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/quic"
)

// Options configure an Engine. A nil *Options means the defaults.
type Options struct {
	Assembler AssemblerOptions
	// Ports, when not empty, limits parsing to connections whose server
	// port is one of these. By default every port is parsed: requests are
	// recognised by their method token.
	Ports []uint16
	// UDPTunnels are the UDP ports whose datagrams are decoded as tunnels
	// (at most MaxUDPTunnels). Nil means DefaultUDPTunnels; an empty,
	// non-nil slice none.
	UDPTunnels []UDPTunnel
	// Defrag bounds IP fragment reassembly.
	Defrag DefragOptions
	// Protos selects what is recorded; zero means AllProtos.
	Protos Protos
	// QUIC bounds the QUIC connections followed until their ClientHello
	// (when Protos has ProtoQUIC).
	QUIC quic.Options
}

// Stats count what an Engine has seen.
type Stats struct {
	Packets      uint64
	Bytes        uint64 // captured bytes
	TCP          uint64 // TCP segments
	Other        uint64 // frames read that are not TCP over IP (ARP, ICMP, UDP ...), nor read as QUIC: not an error
	QUICFrames   uint64 // frames read that carry a UDP datagram handed to the QUIC reader (QUIC.Datagrams counts reassembled ones too)
	Undecoded    uint64 // frames of a link type, EtherType ... not decoded (Reasons say which)
	Fragments    uint64 // IPv4 and IPv6 fragments (a fragment that completes a datagram too)
	Defrag       DefragStats
	DecodeErrors uint64 // malformed frames
	KernelDrops  uint64 // frames the kernel dropped (live sources)
	Panics       uint64 // panics recovered from: the packet skipped, its connection dropped
	Assembler    AssemblerStats
	// Records are the records emitted, by protocol (counted by the Engine,
	// for every protocol, in one place: Engine.record).
	Records [NumProtos]uint64
	TLS     TLSStats  // ClientHellos over TCP
	QUIC    QUICStats // ClientHellos in QUIC Initial packets
	H2C     H2CStats  // cleartext HTTP/2 connections
	// StartTLS count the streams read for a TLS start after a cleartext
	// prelude (SMTP STARTTLS, PostgreSQL's SSLRequest ...).
	StartTLS StartTLSStats
	// Reasons count the Other and Undecoded frames by reason.
	Reasons Reasons
}

// StatsCounters describes every counter of Stats (internal/counter), those
// of the types inside it included, but for Reasons (which have their own
// Merge and Counts): the text and JSON summaries, the daemon's metrics and
// its sum over restarted engines are loops over it. It is made when first
// asked for, not at the start of every command.
var StatsCounters = sync.OnceValue(func() counter.Table[Stats] {
	t := counter.Table[Stats]{
		{Name: "packets", Help: "Frames captured", Text: "packets", Field: func(s *Stats) *uint64 { return &s.Packets }},
		{Name: "bytes", Help: "Bytes captured", Unit: "bytes", Text: "bytes", Field: func(s *Stats) *uint64 { return &s.Bytes }},
		{Name: "tcp_segments", Help: "TCP segments read", Not: counter.JSON, Field: func(s *Stats) *uint64 { return &s.TCP }},
		{Name: "kernel_drops", Help: "Frames the kernel dropped (ring full)", Text: "kernel drops", Merge: counter.Max, Field: func(s *Stats) *uint64 { return &s.KernelDrops }},
		{Name: "malformed_frames", Help: "Frames that could not be parsed (truncated or inconsistent headers)", Text: "malformed frames", Field: func(s *Stats) *uint64 { return &s.DecodeErrors }},
		{Name: "ip_fragments", Help: "IPv4 and IPv6 fragments read", Text: "IP fragments", Field: func(s *Stats) *uint64 { return &s.Fragments }},
		{Name: "panics_recovered", Help: "Panics recovered from while reading or handling a frame (the connection, or all of the source's, dropped); capture went on", Text: "panics recovered", Metric: "panics", Field: func(s *Stats) *uint64 { return &s.Panics }},
		{Name: "other_frames", Help: "Frames read that carry no TCP (ARP, ICMP, UDP ...): not an error", Field: func(s *Stats) *uint64 { return &s.Other }},
		{Name: "quic_frames", Help: "Frames read that carry a UDP datagram read as QUIC (counted here, not as other frames)", Field: func(s *Stats) *uint64 { return &s.QUICFrames }},
		{Name: "undecoded_frames", Help: "Frames of a link type, EtherType ... not decoded (the metrics count them by reason)", Not: counter.Metrics, Field: func(s *Stats) *uint64 { return &s.Undecoded }},
	}
	t = append(t, counter.Nest(AssemblerStatsCounters, "", func(s *Stats) *AssemblerStats { return &s.Assembler })...)
	t = append(t, counter.Nest(DefragStatsCounters, "", func(s *Stats) *DefragStats { return &s.Defrag })...)
	t = append(t, counter.Nest(TLSStatsCounters, "", func(s *Stats) *TLSStats { return &s.TLS })...)
	t = append(t, counter.Nest(H2CStatsCounters, "", func(s *Stats) *H2CStats { return &s.H2C })...)
	t = append(t, counter.Nest(StartTLSStatsCounters, "", func(s *Stats) *StartTLSStats { return &s.StartTLS })...)
	for p := range NumProtos {
		t = append(t, counter.Desc[Stats]{Name: "records:" + p.String(), Help: "records of " + p.String(),
			Metric: "records", Label: "proto=" + p.String(), Text: p.String(),
			MetricHelp: "Records found, by protocol: http (HTTP/1.x requests), tls (ClientHellos over TCP), quic (ClientHellos in QUIC Initials), h2c (cleartext HTTP/2 requests); only the protocols selected (proto)",
			Field:      func(s *Stats) *uint64 { return &s.Records[p] }})
	}
	t = append(t, counter.Nest(QUICStatsCounters(), "quic_", func(s *Stats) *QUICStats { return &s.QUIC })...)
	return append(t, counter.Nest(NonHTTPCountsCounters(), "", func(s *Stats) *NonHTTPCounts { return &s.Assembler.NonHTTP })...)
})

// Decoded is the number of frames read through to their network layer or
// to a protocol known to carry none: all but the undecoded and malformed.
func (s *Stats) Decoded() uint64 { return s.TCP + s.Other + s.QUICFrames + s.Fragments }

// Engine decodes frames, reassembles TCP, follows QUIC Initials and
// reports HTTP requests and ClientHellos. It is
// not safe for concurrent use; run one per source.
type Engine struct {
	stopped atomic.Bool // Stop was called
	dec     *decode.Decoder
	asm     *assembler
	tcp     *tcpProtocols     // the parsers of TCP streams and their totals
	quic    *quicproto.Reader // nil unless Protos has ProtoQUIC
	ports   *[65536]bool
	protos  Protos
	emit    func(*Request)
	seg     Segment
	pkt     Packet
	stats   Stats
	safe    Request // a record made to hold to the text rule, and its text
	text    []byte

	panicked bool   // a panic was recovered from
	panicAt  uint64 // stats.Packets at the last one

	// Name, when set, starts the position of a PanicError ("eth1: packet
	// 12"); for a FileSource the position already names the file.
	Name string
	// OnPanic, when set, is called with every panic Run recovers from.
	OnPanic func(*PanicError)
	// LastError is the last malformed frame's error, for diagnostics.
	LastError error
	// Idle, when set, is called when a live source had no frame within
	// its poll timeout: a moment to flush output.
	Idle func()
	// Tick, when set, is called from Run every 4096 frames, when idle and
	// at the end: a moment to publish Stats to other goroutines.
	Tick func()
}

// NewEngine returns an Engine that calls emit for every request found.
func NewEngine(opts *Options, emit func(*Request)) *Engine {
	if opts == nil {
		opts = &Options{}
	}
	e := &Engine{dec: decode.New(opts.UDPTunnels, opts.Defrag), protos: opts.Protos, emit: emit}
	if e.protos == 0 {
		e.protos = AllProtos
	}
	e.asm = newProtoAssembler(&opts.Assembler, e.record, e.protos, &e.tcp)
	if e.protos.Has(ProtoQUIC) {
		e.quic = quicproto.NewReader(&opts.QUIC, ProtoQUIC, e.record)
		e.dec.ClaimUDP = quicproto.Claim
	}
	if len(opts.Ports) > 0 {
		e.ports = new([65536]bool)
		for _, p := range opts.Ports {
			e.ports[p] = true
		}
	}
	return e
}

// record reports r, when its protocol is selected: every record of every
// protocol goes through here, where it is counted and held to the text
// rule (record/text.go): a Method or URL holding what the rule forbids (which
// each protocol's URL builder already keeps out) is reported with those
// bytes percent-encoded, so that no record of any protocol can start a
// line, a column or a terminal escape in the text it is written as.
func (e *Engine) record(r *Request) {
	if !e.protos.Has(r.Proto) {
		return
	}
	e.stats.Records[r.Proto]++
	if !TextSafe(r.URL) || !TextSafe(r.Method) || !TextSafe(r.UserAgent) {
		e.text = AppendTextSafe(e.text[:0], r.Method)
		m := len(e.text)
		e.text = AppendTextSafe(e.text, r.URL)
		u := len(e.text)
		e.text = AppendTextSafe(e.text, r.UserAgent)
		e.safe = *r
		e.safe.Method, e.safe.URL, e.safe.UserAgent = e.text[:m:m], e.text[m:u:u], e.text[u:]
		r = &e.safe
	}
	e.emit(r)
}

// Packet takes one frame.
func (e *Engine) Packet(p *Packet) {
	e.stats.Packets++
	e.stats.Bytes += uint64(len(p.Data))
	e.dec.Now = p.Info.Timestamp
	res, why, err := e.dec.Decode(p.Link, p.Data, &e.seg)
	if e.dec.Reassembled {
		e.reassembled(p, res, why, err)
		return
	}
	switch res {
	case decode.Other:
		e.stats.Other++
		e.stats.Reasons.Add(why, 1)
		return
	case decode.Datagram:
		// A frame is counted once: as QUIC when the QUIC reader takes it,
		// else as another frame by its reason.
		if !e.quicDatagram(p, why) {
			e.stats.Other++
			e.stats.Reasons.Add(why, 1)
			return
		}
		e.stats.QUICFrames++
		return
	case decode.Undecoded:
		e.stats.Undecoded++
		e.stats.Reasons.Add(why, 1)
		return
	case decode.Fragment:
		e.stats.Fragments++
		return
	case decode.Malformed:
		e.stats.DecodeErrors++
		e.LastError = err
		return
	}
	e.stats.TCP++
	if e.ports != nil && !e.ports[e.seg.Dst.Port()] && !e.ports[e.seg.Src.Port()] {
		return
	}
	e.asm.Add(p.Info.Timestamp, &e.seg)
}

// quicDatagram hands a UDP datagram that looks like QUIC to the QUIC
// reader, unless Ports leaves out both its ports, and reports whether it
// did; why is the frame's reason (ReasonTunnelPort: on a tunnel's port,
// counted).
func (e *Engine) quicDatagram(p *Packet, why Reason) bool {
	if e.ports != nil && !e.ports[e.seg.Dst.Port()] && !e.ports[e.seg.Src.Port()] {
		return false
	}
	if why.Kind == decode.ReasonTunnelPort {
		e.quic.CountTunnelPort()
	}
	e.quic.Add(p.Info.Timestamp, &e.seg)
	return true
}

// reassembled handles a frame that completed an IP datagram: the frame is
// counted as a fragment; a TCP segment in the datagram goes to the
// assembler, a QUIC datagram to the QUIC reader, a malformed one is counted
// as an invalid datagram, anything else is not counted further.
func (e *Engine) reassembled(p *Packet, res decode.Result, why Reason, err error) {
	e.stats.Fragments++
	switch res {
	case decode.TCP:
		if e.ports != nil && !e.ports[e.seg.Dst.Port()] && !e.ports[e.seg.Src.Port()] {
			return
		}
		e.asm.Add(p.Info.Timestamp, &e.seg)
	case decode.Datagram:
		e.quicDatagram(p, why)
	case decode.Malformed, decode.Fragment:
		e.dec.CountInvalid()
		e.LastError = err
	}
}

// Run reads src to its end, or until ctx is done or src fails, then flushes
// the connections still open. It returns src's error (nil at the end of
// the input, ctx's error when it is done); what came before has been
// processed and reported either way.
//
// A panic while a packet is processed (in decoding, reassembly, parsing or
// emit) does not end the run: it is counted (Stats.Panics), reported to
// OnPanic with the packet's position, the connection being worked on is
// dropped, and the run goes on with the next packet. Only a source that
// panics twice without yielding a packet in between ends the run, with the
// PanicError. The recovery sits around the loop, not in it: it costs
// nothing per packet.
func (e *Engine) Run(ctx context.Context, src Source) error {
	var err error
	for {
		var ok bool
		if err, ok = e.runSafely(ctx, src); ok {
			break
		}
	}
	e.stats.KernelDrops = src.Drops()
	for !e.flushSafely(src) {
	}
	if e.Tick != nil {
		e.Tick()
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// runSafely runs the loop until it ends (ok) or a packet panics.
func (e *Engine) runSafely(ctx context.Context, src Source) (err error, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			if perr, stuck := e.recovered(v, src, false); stuck {
				err, ok = perr, true
			}
		}
	}()
	return e.loop(ctx, src), true
}

// flushSafely flushes the open connections; a panic drops the connection
// being flushed, and reports false so that the rest are flushed again
// (each retry has one connection fewer: it ends).
func (e *Engine) flushSafely(src Source) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			perr, _ := e.recovered(v, src, true)
			ok = perr.Flow == "" // nothing dropped: no progress to retry with
		}
	}()
	e.asm.Flush()
	return true
}

func (e *Engine) loop(ctx context.Context, src Source) error {
	for n := 0; ; n++ {
		if e.stopped.Load() {
			return ErrStopped
		}
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if n&4095 == 0 && e.Tick != nil {
				e.Tick()
			}
		}
		if err := src.Next(&e.pkt); errors.Is(err, ErrNoPacket) {
			if e.Idle != nil {
				e.Idle()
			}
			if e.Tick != nil {
				e.Tick()
			}
			if err = ctx.Err(); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		e.Packet(&e.pkt)
	}
}

// Stop makes Run return ErrStopped before it reads the next packet (the
// packets read so far are processed). It is safe to call from any
// goroutine, and cheap to check: Run looks at it every packet, where it
// looks at its context every 1,024.
func (e *Engine) Stop() { e.stopped.Store(true) }

// Stats returns the counts so far.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.Defrag = DefragStats(e.dec.FragStats())
	s.Assembler = e.asm.CurrentStats()
	e.tcp.stats(&s)
	if e.quic != nil {
		s.QUIC = e.quic.Stats()
	}
	return s
}
