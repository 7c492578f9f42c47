package capture

import (
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/quic"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// quicPort is the UDP port QUIC runs on for HTTP/3: a long header packet
// of a version not understood is counted (QUICStats.UnknownVersion) only
// to or from it, as elsewhere it is more likely another protocol.
const quicPort = 443

// QUICStats count the UDP datagrams read as QUIC and the ClientHellos
// found in their Initial packets.
type QUICStats struct {
	quic.Stats        // the datagrams, packets and connections (see internal/quic)
	NoSNI      uint64 // ClientHellos without a server name: recorded under the server's address
	ECH        uint64 // ClientHellos with an encrypted_client_hello extension: the name recorded is the public one
	Errors     uint64 // ClientHellos put together that could not be parsed: not recorded
	TunnelPort uint64 // datagrams on a UDP tunnel's port read as QUIC, not as the tunnel (Reasons: ReasonTunnelPort)
}

// QUICStatsCounters describes QUICStats' counters (internal/counter):
// quic.StatsCounters, then the ClientHellos' own. Like the other tables
// made of tables, it is made when first asked for, not at every start.
var QUICStatsCounters = sync.OnceValue(func() counter.Table[QUICStats] {
	return append(counter.Nest(quic.StatsCounters, "", func(s *QUICStats) *quic.Stats { return &s.Stats }), quicHelloCounters...)
})

var quicHelloCounters = counter.Table[QUICStats]{
	{Name: "hellos_without_sni", Help: "ClientHellos without a server name: recorded under the server's address", Text: "without SNI", Field: func(s *QUICStats) *uint64 { return &s.NoSNI }},
	{Name: "ech_hellos", Help: "ClientHellos with an encrypted_client_hello extension: the name recorded is the public one", Text: "with ECH", Field: func(s *QUICStats) *uint64 { return &s.ECH }},
	{Name: "hello_errors", Help: "ClientHellos put together that could not be parsed: not recorded", Text: "unparsable", Field: func(s *QUICStats) *uint64 { return &s.Errors }},
	{Name: "tunnel_port", Help: "UDP datagrams on a tunnel's port (from it, or to it and not decoded as the tunnel) read as QUIC", Metric: "tunnel_port_datagrams", Field: func(s *QUICStats) *uint64 { return &s.TunnelPort }},
}

// Counter is one named count, for summaries and metrics.
type Counter struct {
	Name  string // snake_case: "auth_failed"
	Help  string
	Value uint64
}

// Counters lists s's counts by name, in QUICStatsCounters' order.
func (s *QUICStats) Counters() []Counter {
	t := QUICStatsCounters()
	c := make([]Counter, len(t))
	for i := range t {
		d := &t[i]
		c[i] = Counter{Name: d.Name, Help: d.Help, Value: d.Value(s)}
	}
	return c
}

// Add adds o's counts to s.
func (s *QUICStats) Add(o *QUICStats) { QUICStatsCounters().Add(s, o) }

// quicReader reads the ClientHellos of QUIC connections out of client
// Initial packets (internal/quic) and records them as the assembler records a
// TLS ClientHello.
type quicReader struct {
	tr    *quic.Tracker
	emit  func(*Request)
	now   time.Time
	encap Encap // of the datagram being read: a ClientHello is reported while its last one is
	req   Request
	url   []byte
	stats QUICStats // NoSNI, ECH, Errors, TunnelPort; the rest is tr.Stats
}

func newQUICReader(opts *quic.Options, emit func(*Request)) *quicReader {
	q := &quicReader{emit: emit}
	q.tr = quic.NewTracker(opts, q.hello)
	return q
}

// isQUIC reports whether a UDP payload between ports src and dst is given
// to the tracker: it starts with an Initial of a version understood, or
// with any long header to or from port 443.
func isQUIC(payload []byte, src, dst uint16) bool {
	if quic.IsInitial(payload) {
		return true
	}
	if src != quicPort && dst != quicPort {
		return false
	}
	_, ok := quic.IsLongHeader(payload)
	return ok
}

// add takes a datagram the decoder found to be QUIC.
func (q *quicReader) add(ts time.Time, seg *Segment) {
	q.now, q.encap = ts, seg.Encap
	q.tr.Add(ts, seg.Src, seg.Dst, seg.Payload)
}

// hello records a ClientHello: URL https://SNI[:port]/, or the server's
// address without SNI.
func (q *quicReader) hello(c *quic.ClientHello) {
	q.req = Request{Time: q.now, Src: c.Client, Dst: c.Server, Proto: ProtoQUIC, Encap: q.encap}
	if err := tlshello.Parse(c.Message, &q.req.Hello); err != nil {
		q.stats.Errors++
		return
	}
	if len(q.req.Hello.ServerName) == 0 {
		q.stats.NoSNI++
	}
	if q.req.Hello.ECH {
		q.stats.ECH++
	}
	q.url = record.AppendHTTPSURL(q.url[:0], q.req.Hello.ServerName, c.Server)
	q.req.URL = q.url
	q.emit(&q.req)
	q.req = Request{}
}

func (q *quicReader) currentStats() QUICStats {
	s := q.stats
	s.Stats = q.tr.Stats
	return s
}
