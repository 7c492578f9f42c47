package h2c

import "errors"

var (
	// ErrPreface is returned when the stream does not begin with the
	// HTTP/2 client connection preface.
	ErrPreface = errors.New("h2c: not the HTTP/2 connection preface")
	// ErrFrame is returned for framing that breaks RFC 9113 in a way
	// that leaves the header blocks unreadable: a CONTINUATION where none
	// may be, another frame inside a header block, a HEADERS frame on
	// stream 0 or whose padding is longer than the frame.
	ErrFrame = errors.New("h2c: HTTP/2 framing error")
	// ErrHPACK is returned for a header block that HPACK cannot decode:
	// the connection's dynamic table is lost with it.
	ErrHPACK = errors.New("h2c: HPACK decoding error")
	// ErrHeaderBlock is returned for a header block (HEADERS and its
	// CONTINUATIONs), or a decoded header field, longer than
	// MaxHeaderBlock.
	ErrHeaderBlock = errors.New("h2c: header block over the cap")
	// ErrTableSize is returned for a dynamic table size update above
	// MaxTableSize.
	ErrTableSize = errors.New("h2c: HPACK dynamic table size over the cap")
	// ErrLost is returned by Lost for bytes lost where they cannot be
	// skipped: a frame header or a header block.
	ErrLost = errors.New("h2c: bytes lost from the stream")
	// ErrMemory is returned when the decoder would grow what it holds
	// past the limit set by SetLimit.
	ErrMemory = errors.New("h2c: memory limit reached")
)
