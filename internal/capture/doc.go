// Package capture finds the URLs in captured traffic: HTTP/1.x requests
// (with SOCKS and CONNECT tunnels), the server names of TLS and QUIC
// ClientHellos, and cleartext HTTP/2 (h2c) requests.
//
// An Engine takes frames from a Source (capture files through OpenFiles,
// an interface through OpenLive; package internal/capture/source), decodes
// them down to TCP and UDP (link types, layer 2, IP, tunnels, fragments;
// package internal/capture/decode), reassembles the client side of each
// TCP connection, follows QUIC Initials, and hands every request found to
// its emit function as a Request, held to the text rule (TextSafe). Options select the protocols
// (Protos), ports, tunnels and the caps on memory; Stats count what was
// seen, by reason.
//
// Nothing on the path of a packet allocates once the Engine has warmed
// up: a Request and its byte slices are valid only during the emit call.
// An Engine is not safe for concurrent use; run one per source.
//
// The reassembly (this package's assembler) knows no protocol: it hands
// the bytes of each client direction, in order, to a parser through the
// contract of package stream. Each protocol is a package under
// internal/capture/proto (http1 with SOCKS and CONNECT, tls, h2c, quic),
// listed in protocols.go; records, their Proto and the text rule are
// package record's.
//
// docs/capture.md describes the decoding, the reassembly and each
// protocol; docs/design.md lists the packages and the files to touch to
// add a protocol.
package capture
