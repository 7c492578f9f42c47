package capture

import (
	"fmt"
	"strings"

	quicproto "github.com/urldedupd/urldedupd/internal/capture/proto/quic"
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// Proto is what a record came from (record.Proto): its protocol's place
// in the list (protocols.go). A Protos set holds up to MaxProtos of them.
type Proto = record.Proto

const (
	ProtoHTTP Proto = iota // HTTP/1.x request
	ProtoTLS               // a TLS ClientHello over TCP
	ProtoQUIC              // a ClientHello in QUIC Initial packets
	ProtoH2C               // an HTTP/2 request in cleartext
	NumProtos
)

var protoNames = [NumProtos]string{"http", "tls", "quic", "h2c"}

// Protos is a set of Proto, bit 1<<p for each: up to MaxProtos
// protocols (it was a uint8, eight at most).
type Protos uint64

// MaxProtos is the most protocols a Protos set holds.
const MaxProtos = record.MaxProtos

// AllProtos is every protocol: what a zero Options.Protos means.
const AllProtos Protos = 1<<NumProtos - 1

// NumProtos must fit in a Protos: this fails to compile when it does not.
var _ [MaxProtos - NumProtos]struct{}

// Has reports whether p is in s.
func (s Protos) Has(p Proto) bool { return p < NumProtos && s&(1<<p) != 0 }

// String lists the set as ParseProtos reads it: "http,tls".
func (s Protos) String() string {
	var names []string
	for p := range NumProtos {
		if s.Has(p) {
			names = append(names, p.String())
		}
	}
	return strings.Join(names, ",")
}

// ParseProtos reads a comma-separated list of protocol names ("http,tls,
// quic,h2c"; spaces around names are allowed). An unknown or empty name,
// or an empty list, is ErrProtos.
func ParseProtos(list string) (Protos, error) {
	var s Protos
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		p := Proto(0)
		for p < NumProtos && protoNames[p] != name {
			p++
		}
		if p == NumProtos {
			return 0, fmt.Errorf("%w %q (known: %s)", ErrProtos, name, AllProtos)
		}
		s |= 1 << p
	}
	return s, nil
}

// TLSStats count the ClientHellos read from TCP streams.
type TLSStats struct {
	NoSNI    uint64 // hellos without a server name: recorded under the server's address
	ECH      uint64 // hellos with an encrypted_client_hello extension: the name recorded is the public one
	Errors   uint64 // handshakes that started like a ClientHello but could not be parsed
	TooLarge uint64 // handshakes longer than MaxHello: not recorded
}

// TLSStatsCounters describes TLSStats' counters (internal/counter).
var TLSStatsCounters = counter.Table[TLSStats]{
	{Name: "tls_hellos_without_sni", Help: "TLS ClientHellos without a server name (recorded under the server's address)", Text: "TLS ClientHellos without SNI", Field: func(s *TLSStats) *uint64 { return &s.NoSNI }},
	{Name: "tls_ech_hellos", Help: "TLS ClientHellos with an encrypted_client_hello extension (the name recorded is the public one)", Text: "with ECH", Field: func(s *TLSStats) *uint64 { return &s.ECH }},
	{Name: "tls_hello_errors", Help: "TLS handshakes that started like a ClientHello but could not be parsed", Text: "unparsable", Field: func(s *TLSStats) *uint64 { return &s.Errors }},
	{Name: "tls_hellos_too_large", Help: "TLS handshakes longer than the ClientHello cap, not recorded", Text: "over the size cap", Field: func(s *TLSStats) *uint64 { return &s.TooLarge }},
}

// QUICStats count the UDP datagrams read as QUIC and the ClientHellos
// found in their Initial packets (package proto/quic).
type QUICStats = quicproto.Stats

// QUICStatsCounters describes QUICStats' counters (internal/counter).
var QUICStatsCounters = quicproto.StatsCounters
