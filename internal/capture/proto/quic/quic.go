// Package quic records the ClientHellos of QUIC connections: the Reader
// takes the UDP datagrams the decoder hands it (those Claim accepts),
// follows client Initial packets with internal/quic until their
// ClientHello is whole, and reports it as a record, https://SNI[:port]/,
// as a TLS ClientHello over TCP is.
package quic

import (
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/ja4"
	wire "github.com/urldedupd/urldedupd/internal/quic"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// port is the UDP port QUIC runs on for HTTP/3: a long header packet of
// a version not understood is counted (Stats.UnknownVersion) only to or
// from it, as elsewhere it is more likely another protocol.
const port = 443

// Stats count the UDP datagrams read as QUIC and the ClientHellos found
// in their Initial packets.
type Stats struct {
	wire.Stats        // the datagrams, packets and connections (see internal/quic)
	NoSNI      uint64 // ClientHellos without a server name: recorded under the server's address
	ECH        uint64 // ClientHellos with an encrypted_client_hello extension: the name recorded is the public one
	Errors     uint64 // ClientHellos put together that could not be parsed: not recorded
	TunnelPort uint64 // datagrams on a UDP tunnel's port read as QUIC, not as the tunnel (Reasons: ReasonTunnelPort)
}

// StatsCounters describes Stats' counters (internal/counter):
// quic.StatsCounters, then the ClientHellos' own. Like the other tables
// made of tables, it is made when first asked for, not at every start.
var StatsCounters = sync.OnceValue(func() counter.Table[Stats] {
	return append(counter.Nest(wire.StatsCounters, "", func(s *Stats) *wire.Stats { return &s.Stats }), helloCounters...)
})

var helloCounters = counter.Table[Stats]{
	{Name: "hellos_without_sni", Help: "ClientHellos without a server name: recorded under the server's address", Text: "without SNI", Field: func(s *Stats) *uint64 { return &s.NoSNI }},
	{Name: "ech_hellos", Help: "ClientHellos with an encrypted_client_hello extension: the name recorded is the public one", Text: "with ECH", Field: func(s *Stats) *uint64 { return &s.ECH }},
	{Name: "hello_errors", Help: "ClientHellos put together that could not be parsed: not recorded", Text: "unparsable", Field: func(s *Stats) *uint64 { return &s.Errors }},
	{Name: "tunnel_port", Help: "UDP datagrams on a tunnel's port (from it, or to it and not decoded as the tunnel) read as QUIC", Metric: "tunnel_port_datagrams", Field: func(s *Stats) *uint64 { return &s.TunnelPort }},
}

// Reader reads the ClientHellos of QUIC connections out of client
// Initial packets and reports them. It is not safe for concurrent use.
type Reader struct {
	tr    *wire.Tracker
	proto record.Proto
	emit  func(*record.Record)
	now   time.Time
	encap decode.Encap // of the datagram being read: a ClientHello is reported while its last one is
	rec   record.Record
	url   []byte
	ja4   []byte
	hash  ja4.Hasher
	stats Stats // NoSNI, ECH, Errors, TunnelPort; the rest is tr.Stats
}

// NewReader returns a Reader that reports each ClientHello to emit, as a
// record of proto.
func NewReader(opts *wire.Options, proto record.Proto, emit func(*record.Record)) *Reader {
	q := &Reader{proto: proto, emit: emit}
	q.tr = wire.NewTracker(opts, q.hello)
	return q
}

// Claim reports whether a UDP payload between ports src and dst is read
// as QUIC: it starts with an Initial of a version understood, or with any
// long header to or from port 443. It is the decoder's ClaimUDP.
func Claim(payload []byte, src, dst uint16) bool {
	if wire.IsInitial(payload) {
		return true
	}
	if src != port && dst != port {
		return false
	}
	_, ok := wire.IsLongHeader(payload)
	return ok
}

// Add takes a datagram Claim accepted, captured at ts.
func (q *Reader) Add(ts time.Time, seg *decode.Segment) {
	q.now, q.encap = ts, seg.Encap
	q.tr.Add(ts, seg.Src, seg.Dst, seg.Payload)
}

// CountTunnelPort counts a datagram on a UDP tunnel's port read as QUIC.
func (q *Reader) CountTunnelPort() { q.stats.TunnelPort++ }

// hello records a ClientHello: URL https://SNI[:port]/, or the server's
// address without SNI.
func (q *Reader) hello(c *wire.ClientHello) {
	q.rec = record.Record{Time: q.now, Src: c.Client, Dst: c.Server, Proto: q.proto, Encap: q.encap}
	if err := tlshello.Parse(c.Message, &q.rec.Hello); err != nil {
		q.stats.Errors++
		return
	}
	if len(q.rec.Hello.ServerName) == 0 {
		q.stats.NoSNI++
	}
	if q.rec.Hello.ECH {
		q.stats.ECH++
	}
	q.url = record.AppendHTTPSURL(q.url[:0], q.rec.Hello.ServerName, c.Server)
	q.rec.URL = q.url
	q.ja4 = q.hash.Append(q.ja4[:0], ja4.QUIC, &q.rec.Hello)
	q.rec.JA4 = q.ja4
	q.emit(&q.rec)
	q.rec = record.Record{}
}

// Stats returns the counts so far.
func (q *Reader) Stats() Stats {
	s := q.stats
	s.Stats = q.tr.Stats
	return s
}
