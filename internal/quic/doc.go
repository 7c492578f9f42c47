// Package quic finds the TLS ClientHello that a QUIC client sends in its
// Initial packets, from the client's UDP datagrams as a passive observer
// sees them.
//
// QUIC encrypts even its first packets, but with keys anyone can derive
// from the packet itself (RFC 9001 §5.2): HKDF over a salt fixed by the
// version and the Destination Connection ID of the client's first Initial.
// A Tracker does what the server would do with the client's Initials:
// parse the long headers (several packets coalesced in one datagram),
// remove header protection, decrypt and authenticate with AES-128-GCM,
// walk the frames, and put the CRYPTO frames back together by offset (out
// of order, overlapping, spread over several packets and datagrams) until
// the first handshake message is whole. That message, a ClientHello,
// is handed to the caller once per connection.
//
// QUIC version 1 (RFC 9000, RFC 9001), version 2 (RFC 9369) and drafts
// 27 to 32 are understood; other versions are counted and ignored.
//
// # What is trusted
//
// Only packets that authenticate are used, and only when every frame in
// them is one an Initial may carry (PADDING, PING, ACK, CRYPTO,
// CONNECTION_CLOSE); anything else is counted and its packet dropped. The
// keys being public, authentication proves only that the packet was made
// by someone who read its header, not by the client: a hostile sender can
// make a ClientHello of its choice, as it can send an HTTP request.
//
// # Bounds
//
// Connections whose ClientHello is in progress are bounded in number
// (Options.MaxConns), in CRYPTO bytes held (MaxBytes, MaxHello) and in
// packet-time age (Timeout). Connections whose ClientHello was reported
// are remembered, bounded in number and time (MaxDone, DoneLinger), so
// that their later Initials (retransmissions, acknowledgements, the
// Initials after a Retry or a version negotiation) do not report it again.
// A datagram of such a connection, and a datagram that is not a QUIC long
// header packet, allocate nothing.
package quic
