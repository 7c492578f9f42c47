// Package record holds what every protocol parser of package capture
// reports: a Record (an HTTP request, a ClientHello, ...), the Proto it
// came from, and the text rule and URL builders each protocol applies to
// the bytes it takes off the wire.
//
// It knows no protocol by name: a Proto is a protocol's place in
// capture's list (internal/capture/protocols.go), named there with Name.
package record

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture/decode"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// Proto is what a record came from: the place of its protocol in
// capture's list. A set of them holds up to MaxProtos.
type Proto uint8

// MaxProtos is the most protocols there can be.
const MaxProtos = 64

var protoNames [MaxProtos]string

// Name gives p its name, as --proto and the records spell it. The
// protocol list calls it once a protocol, at init.
func Name(p Proto, name string) { protoNames[p] = name }

// String returns the protocol's name ("http", "tls" ...), or "protoN"
// for a number no protocol has.
func (p Proto) String() string {
	if p < MaxProtos && protoNames[p] != "" {
		return protoNames[p]
	}
	return fmt.Sprintf("proto%d", uint8(p))
}

// Record is one record found on the wire: an HTTP request, or a TLS or
// QUIC ClientHello, or an HTTP/2 request (Proto says which). Its slices
// alias the parser's buffers: they are valid only during the callback.
type Record struct {
	Time     time.Time      // of the packet that completed the request's headers (or the ClientHello)
	Src, Dst netip.AddrPort // client and server
	Proto    Proto
	Method   []byte // empty for TLS and QUIC
	// URL is absolute: http://host[:port]/target; for a tunnel, host:port;
	// for TLS and QUIC https://SNI[:port]/ (the port unless 443; the
	// server's address when there is no SNI). Reported by an Engine, URL
	// and Method hold no control, U+2028, U+2029 or byte that is not
	// UTF-8 (TextSafe).
	URL []byte
	// Encap is what the request's direction came through: the
	// encapsulation of the last segment carrying data that the direction
	// took before the request was reported (Segment.Encap; Engine sets it
	// from the decoder). A request reported at a flush or an expiry
	// keeps its own, whatever came last on the wire. If a direction's
	// encapsulation changes mid-stream with the same Segment.Path (an
	// MPLS label added), requests after the change carry the new one; a
	// request whose bytes came both ways carries that of its last
	// segment. Another Path (another VLAN ID, VNI, tunnel endpoint) is
	// another direction.
	Encap decode.Encap
	// Tunnel marks a CONNECT: URL is the authority it opens, not a
	// resource, and the bytes after it are not parsed as HTTP.
	Tunnel bool
	// Hello is what the ClientHello offered, for TLS and QUIC.
	Hello tlshello.Hello
	// JA4 is the ClientHello's JA4 fingerprint (internal/ja4), for TLS
	// and QUIC; empty otherwise.
	JA4 []byte
	// UserAgent is the request's User-Agent, as sent but for its bytes
	// the text rule forbids, at most MaxUserAgent bytes, for HTTP/1 and
	// h2c; empty when the request had none.
	UserAgent []byte
}

// MaxUserAgent bounds the User-Agent a record carries: longer values are
// cut (at a character's start).
const MaxUserAgent = 512

// CutText returns b's first n bytes at most, ending at a character's
// start (no UTF-8 sequence cut in two).
func CutText(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for i := 0; i < 3 && n > 0 && b[n]&0xc0 == 0x80; i++ {
		n-- // a continuation byte: back to the character's start
	}
	return b[:n]
}
