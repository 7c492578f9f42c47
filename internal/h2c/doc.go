// Package h2c reads the requests out of the client side of a cleartext
// HTTP/2 connection (h2c, RFC 9113), as a passive observer: a packet
// capture sees the bytes the client sent and nothing else is asked of it.
//
// A Decoder is fed the client's bytes in whatever pieces they arrive (TCP
// segments, in stream order). It checks the connection preface, then
// walks the frames by their 9-byte headers. HEADERS frames (with their
// PADDED and PRIORITY fields) and the CONTINUATION frames that follow
// them until END_HEADERS carry a header block, which is kept and decoded
// whole when it ends, keeping the connection's dynamic table. The HPACK
// decoder is this package's own (golang.org/x/net/http2/hpack decodes
// only the Huffman codes): its table holds its entries' bytes in one
// ring buffer, so that what a connection holds is known exactly (Held)
// and can be capped (SetLimit).
// Each header block that opens a new stream is one request: its :method,
// :scheme, :authority (else the Host field) and :path are handed to the
// caller. Every other frame, DATA above all, is skipped by its length and
// never buffered: a segment that holds only DATA costs a few comparisons
// and allocates nothing.
//
// # What is and is not a request
//
// Client streams are opened in increasing order of their identifiers
// (RFC 9113 §5.1.1), so a header block on a stream identifier not above
// every one seen before is a trailer section (or a protocol error) and not
// a request; it is still decoded, because it may change the dynamic table.
// After an HTTP/1.1 "Upgrade: h2c" the upgraded request was stream 1 (it
// was sent, and is recorded, as HTTP/1.1): NewDecoder(Upgraded) starts
// with stream 1 taken, so its response's trailers are not mistaken for
// a request either.
//
// # Limits
//
// The wire is hostile, and a header block that could not be decoded
// leaves the HPACK state of the connection unknown: the decoder then
// gives up the connection (every later call returns the same error,
// ignoring its bytes). It gives up on
//   - a header block, or a decoded header field, longer than
//     MaxHeaderBlock (ErrHeaderBlock);
//   - a dynamic table size update above MaxTableSize (ErrTableSize);
//   - bytes that are not HPACK (ErrHPACK) or not HTTP/2 framing (ErrFrame,
//     ErrPreface).
//
// The server's SETTINGS_HEADER_TABLE_SIZE travels in the other direction
// and the API does not take it. It only bounds what the client's encoder
// may choose; the size the encoder does use is signalled in the client's
// own header blocks (RFC 7541 §4.2), which the decoder follows. A passive
// observer has nothing to enforce: if the server accepted a block, the
// server decoded it the way this decoder does. MaxTableSize is therefore
// this package's own cap, on memory: 64 KiB, sixteen times the protocol's
// default, larger than common servers advertise (nghttp2 and Go's
// net/http use 4 KiB). A connection holds its dynamic table (at most
// MaxTableSize of bytes and 12 bytes an entry), the open header block (at
// most MaxHeaderBlock), the names and values decoded from it, and the
// request's pseudo-header values; Held counts the capacity of each.
// SetLimit caps it: growth past the limit gives the connection up
// (ErrMemory) before anything is allocated.
//
// Allocation is per header block at most, not per packet: buffers are
// kept from one block to the next (up to 4 KiB each), and the dynamic
// table grows with what the client indexes, by doubling. Frames other
// than HEADERS and CONTINUATION allocate nothing.
package h2c
