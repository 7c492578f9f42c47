package capture

import (
	"github.com/urldedupd/urldedupd/internal/capture/proto/h2c"
	"github.com/urldedupd/urldedupd/internal/capture/proto/http1"
	quicproto "github.com/urldedupd/urldedupd/internal/capture/proto/quic"
	"github.com/urldedupd/urldedupd/internal/capture/proto/starttls"
	tlsproto "github.com/urldedupd/urldedupd/internal/capture/proto/tls"
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// The protocols, one package each under internal/capture/proto. A
// record's Proto is its protocol's place in this list; --proto and the
// records spell it by its name here. To add a protocol: its package, a
// line here, and a line in newTCPProtocols (or, for one over UDP, beside
// the QUIC reader in NewEngine).
const (
	ProtoHTTP Proto = iota // HTTP/1.x request (proto/http1, with SOCKS and CONNECT)
	ProtoTLS               // a TLS ClientHello over TCP (proto/tls)
	ProtoQUIC              // a ClientHello in QUIC Initial packets (proto/quic)
	ProtoH2C               // an HTTP/2 request in cleartext (proto/h2c)
	NumProtos
)

var protoNames = [NumProtos]string{"http", "tls", "quic", "h2c"}

func init() {
	for p := range NumProtos {
		record.Name(p, protoNames[p])
	}
}

// tcpProtocols are the protocols of one assembler's TCP streams: every
// stream starts with HTTP/1's parser (the stream.Factory), which hands a
// stream it recognises as another protocol's to that protocol's Taker.
type tcpProtocols struct {
	*http1.Protocol
	tls      *tlsproto.Protocol
	h2c      *h2c.Protocol
	starttls *starttls.Protocol
}

func newTCPProtocols(sink *stream.Sink, maxLine int, protos Protos) *tcpProtocols {
	t := &tcpProtocols{
		Protocol: http1.New(sink, ProtoHTTP, maxLine),
		tls:      tlsproto.New(sink, ProtoTLS),
		h2c:      h2c.New(sink, ProtoH2C),
	}
	t.starttls = starttls.New(t.tls.Take)
	if protos.Has(ProtoTLS) {
		t.Takers[http1.StreamTLS] = http1.Taker{Take: t.tls.Take, Start: true}
		// The protocols a client may start TLS in: their prelude is
		// walked, and the TLS after it read as TLS.
		for kind, f := range map[StreamKind]starttls.Framing{
			http1.StreamSMTP: starttls.Lines, http1.StreamIMAP: starttls.Lines, http1.StreamPOP3: starttls.Lines,
			http1.StreamFTP: starttls.Lines, http1.StreamFTPPOP3: starttls.Lines, http1.StreamXMPP: starttls.XML,
			http1.StreamLDAP: starttls.BER, http1.StreamPostgres: starttls.Length4, http1.StreamMySQL: starttls.MySQL,
			http1.StreamRDP: starttls.TPKT,
		} {
			t.Takers[kind] = http1.Taker{Take: t.starttls.Taker(f), Start: true}
		}
	}
	if protos.Has(ProtoH2C) {
		t.Takers[http1.StreamHTTP2] = http1.Taker{Take: t.h2c.Take}
	}
	return t
}

// stats fills the counts of the TCP protocols into s.
func (t *tcpProtocols) stats(s *Stats) {
	s.Assembler.Requests = t.Stats.Requests + t.h2c.Requests
	s.Assembler.ParseErrors = t.Stats.ParseErrors
	s.Assembler.NonHTTP = t.Stats.NonHTTP
	s.TLS = t.tls.Stats
	s.H2C = t.h2c.Stats
	s.StartTLS = t.starttls.Stats
}

// parserCost is the most bytes the parsers of a TCP stream take: HTTP/1's
// and that of the protocol it hands the stream to, counted in FlowCost.
const parserCost = http1.ParserCost + max(tlsproto.ParserCost, h2c.ParserCost, starttls.ParserCost+tlsproto.ParserCost)

// newAssembler returns an assembler of every protocol that calls emit for
// every record. opts may be nil.
func newAssembler(opts *AssemblerOptions, emit func(*Request)) *assembler {
	return newProtoAssembler(opts, emit, AllProtos, nil)
}

// newProtoAssembler returns an assembler whose parsers read protos; made,
// when not nil, is set to their protocols.
func newProtoAssembler(opts *AssemblerOptions, emit func(*Request), protos Protos, made **tcpProtocols) *assembler {
	maxLine := DefaultAssemblerOptions.MaxLine
	if opts != nil && opts.MaxLine > 0 {
		maxLine = opts.MaxLine
	}
	var t *tcpProtocols
	a := makeAssembler(opts, emit, func(s *stream.Sink) stream.Factory {
		t = newTCPProtocols(s, maxLine, protos)
		return t
	})
	if made != nil {
		*made = t
	}
	return a
}

// The names callers of capture use for the protocols' types.
type (
	// StreamKind is what a client stream that is not HTTP was recognised
	// as (http1.StreamKind).
	StreamKind = http1.StreamKind
	// NonHTTPCounts are the client streams recognised as another
	// protocol, by kind (http1.NonHTTPCounts).
	NonHTTPCounts = http1.NonHTTPCounts
	// TLSStats count the ClientHellos read from TCP streams
	// (proto/tls.Stats).
	TLSStats = tlsproto.Stats
	// H2CStats count the client streams decoded as cleartext HTTP/2
	// (proto/h2c.Stats).
	H2CStats = h2c.Stats
	// StartTLSStats count the client streams read for a TLS start after a
	// cleartext prelude (proto/starttls.Stats).
	StartTLSStats = starttls.Stats
	// QUICStats count the UDP datagrams read as QUIC and the ClientHellos
	// found in their Initial packets (proto/quic.Stats).
	QUICStats = quicproto.Stats
)

// The kinds of StreamKind (http1's).
const (
	StreamTLS      = http1.StreamTLS
	StreamSSH      = http1.StreamSSH
	StreamSMTP     = http1.StreamSMTP
	StreamIMAP     = http1.StreamIMAP
	StreamPOP3     = http1.StreamPOP3
	StreamFTP      = http1.StreamFTP
	StreamFTPPOP3  = http1.StreamFTPPOP3
	StreamTunnel   = http1.StreamTunnel
	StreamHTTP2    = http1.StreamHTTP2
	StreamXMPP     = http1.StreamXMPP
	StreamLDAP     = http1.StreamLDAP
	StreamPostgres = http1.StreamPostgres
	StreamMySQL    = http1.StreamMySQL
	StreamRDP      = http1.StreamRDP
	NumStreamKinds = http1.NumStreamKinds
)

// MaxUserAgent bounds the User-Agent a record carries
// (record.MaxUserAgent).
const MaxUserAgent = record.MaxUserAgent

// MaxHello caps the bytes of a TLS ClientHello collected from a TCP
// stream (proto/tls.MaxHello; docs/operations.md).
const MaxHello = tlsproto.MaxHello

// The counter tables of the protocols' stats (internal/counter).
var (
	NonHTTPCountsCounters = http1.NonHTTPCountsCounters
	TLSStatsCounters      = tlsproto.StatsCounters
	H2CStatsCounters      = h2c.StatsCounters
	StartTLSStatsCounters = starttls.StatsCounters
	QUICStatsCounters     = quicproto.StatsCounters
)
