package h2c

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const (
	// MaxHeaderBlock is the longest header block (a HEADERS frame's
	// fragment and its CONTINUATIONs' together), and the longest decoded
	// header field, that a Decoder reads; past it the connection is given
	// up (ErrHeaderBlock).
	MaxHeaderBlock = 64 << 10
	// MaxTableSize is the largest HPACK dynamic table a Decoder keeps; a
	// dynamic table size update above it gives the connection up
	// (ErrTableSize). See the package doc for why it is not taken from the
	// server's SETTINGS.
	MaxTableSize = 64 << 10

	// defaultTableSize is SETTINGS_HEADER_TABLE_SIZE's initial value: the
	// encoder's table until it signals another size (RFC 9113 §6.5.2).
	defaultTableSize = 4096
	// keepCap is the largest buffer (header block, values) kept for the
	// next request.
	keepCap = 4 << 10
)

// Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

const (
	frameHeaderLen    = 9
	frameHeaders      = 0x1
	frameContinuation = 0x9

	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// Start is how the client's HTTP/2 bytes begin.
type Start uint8

const (
	// PriorKnowledge: the TCP stream starts with the preface.
	PriorKnowledge Start = iota
	// Upgraded: the bytes after an HTTP/1.1 "Upgrade: h2c" request that
	// the server accepted (101 Switching Protocols); they start with the
	// preface, and stream 1 is the upgraded request, already sent as
	// HTTP/1.1.
	Upgraded
)

// Request is one HTTP/2 request: the pseudo-header fields of the header
// block that opened its stream. Its slices alias the Decoder's buffer and
// are valid only during the emit call. A field that was not sent is
// empty.
type Request struct {
	StreamID  uint32
	Method    []byte // :method
	Scheme    []byte // :scheme
	Authority []byte // :authority, else the Host header field
	Path      []byte // :path
	UserAgent []byte // the user-agent field, its first MaxUserAgent bytes
}

type state uint8

const (
	stPreface state = iota // matching the preface; n bytes matched
	stHeader               // reading a frame header into hdr; n bytes read
	stSkip                 // skipping left bytes
	stPrefix               // reading a HEADERS frame's pad length and priority; n of want read
	stBlock                // left bytes of header block fragment, then pad bytes of padding
)

// Decoder decodes the client side of one HTTP/2 connection. The zero
// value is not ready: use NewDecoder. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	state  state
	n      int
	want   int
	hdr    [frameHeaderLen]byte
	pre    [6]byte // pad length (1) and priority (5)
	left   int
	pad    int
	flags  byte
	stream uint32 // the stream of the open header block

	inBlock   bool   // a header block is open: only its CONTINUATION may follow
	blockLen  int    // bytes of the open header block so far
	isRequest bool   // the open header block opens a new stream
	last      uint32 // the highest client stream opened

	block     []byte // the open header block's fragments
	tab       table
	name, val sink // a name and a value decoded from Huffman, or copied out of tab
	fields    fields
	limit     int // the most Held may grow to
	req       Request
	err       error
}

// NewDecoder returns a Decoder for a connection that begins as start says.
func NewDecoder(start Start) *Decoder {
	d := &Decoder{limit: math.MaxInt}
	d.tab.max = defaultTableSize
	d.name.d, d.val.d = d, d
	if start == Upgraded {
		d.last = 1
	}
	return d
}

// Feed decodes the next bytes the client sent, calling emit for each
// request whose header block ends in them. It returns nil, or the error
// that made the decoder give the connection up (ErrPreface, ErrFrame,
// ErrHPACK, ErrHeaderBlock or ErrTableSize, wrapped): from then on every
// call returns that same error and its bytes are ignored.
func (d *Decoder) Feed(data []byte, emit func(*Request)) error {
	for len(data) > 0 && d.err == nil {
		var k int
		switch d.state {
		case stPreface:
			k = min(len(data), len(Preface)-d.n)
			if string(data[:k]) != Preface[d.n:d.n+k] {
				d.fail(ErrPreface)
				break
			}
			if d.n += k; d.n == len(Preface) {
				d.state, d.n = stHeader, 0
			}
		case stHeader:
			k = copy(d.hdr[d.n:], data)
			if d.n += k; d.n == frameHeaderLen {
				d.n = 0
				d.frame(emit)
			}
		case stSkip:
			k = min(len(data), d.left)
			if d.left -= k; d.left == 0 {
				d.state = stHeader
			}
		case stPrefix:
			k = copy(d.pre[d.n:d.want], data)
			if d.n += k; d.n == d.want {
				d.n = 0
				d.prefixDone(emit)
			}
		case stBlock:
			k = min(len(data), d.left)
			d.write(data[:k])
			if d.left -= k; d.left == 0 && d.err == nil {
				d.fragmentDone(emit)
			}
		}
		data = data[k:]
	}
	return d.err
}

func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// frame starts the frame whose header is in d.hdr. emit is passed down,
// not kept, so that a caller's closure need not escape.
func (d *Decoder) frame(emit func(*Request)) {
	length := int(d.hdr[0])<<16 | int(d.hdr[1])<<8 | int(d.hdr[2])
	typ, flags := d.hdr[3], d.hdr[4]
	stream := binary.BigEndian.Uint32(d.hdr[5:]) & 0x7fffffff
	if d.inBlock {
		if typ != frameContinuation || stream != d.stream {
			d.fail(fmt.Errorf("%w: frame type %d on stream %d inside the header block of stream %d",
				ErrFrame, typ, stream, d.stream))
			return
		}
		d.flags = flags
		d.fragment(length, 0, emit)
		return
	}
	switch typ {
	case frameHeaders:
		if stream == 0 {
			d.fail(fmt.Errorf("%w: HEADERS on stream 0", ErrFrame))
			return
		}
		d.openBlock(stream)
		d.flags = flags
		d.want = 0
		if flags&flagPadded != 0 {
			d.want++
		}
		if flags&flagPriority != 0 {
			d.want += 5
		}
		if length < d.want {
			d.fail(fmt.Errorf("%w: HEADERS of %d bytes shorter than its fields", ErrFrame, length))
			return
		}
		if d.want == 0 {
			d.fragment(length, 0, emit)
			return
		}
		d.state, d.n, d.left = stPrefix, 0, length
	case frameContinuation:
		d.fail(fmt.Errorf("%w: CONTINUATION outside a header block", ErrFrame))
	default:
		d.skip(length)
	}
}

func (d *Decoder) skip(n int) {
	d.state, d.left = stSkip, n
	if n == 0 {
		d.state = stHeader
	}
}

// prefixDone reads a HEADERS frame's pad length; what is left of the
// frame (d.left less the prefix) is fragment, then padding.
func (d *Decoder) prefixDone(emit func(*Request)) {
	pad := 0
	if d.flags&flagPadded != 0 {
		pad = int(d.pre[0])
	}
	rest := d.left - d.want
	if pad > rest {
		d.fail(fmt.Errorf("%w: padding of %d bytes in %d", ErrFrame, pad, rest))
		return
	}
	d.fragment(rest-pad, pad, emit)
}

// fragment starts n bytes of header block fragment followed by pad bytes.
func (d *Decoder) fragment(n, pad int, emit func(*Request)) {
	d.blockLen += n
	if d.blockLen > MaxHeaderBlock {
		d.fail(fmt.Errorf("%w: stream %d, more than %d bytes", ErrHeaderBlock, d.stream, MaxHeaderBlock))
		return
	}
	d.left, d.pad = n, pad
	if n == 0 {
		d.fragmentDone(emit)
		return
	}
	d.state = stBlock
}

// fragmentDone ends a frame's fragment: the block ends with the frame's
// END_HEADERS, and padding is skipped.
func (d *Decoder) fragmentDone(emit func(*Request)) {
	if d.flags&flagEndHeaders != 0 {
		d.closeBlock(emit)
	}
	d.skip(d.pad)
}

func (d *Decoder) openBlock(stream uint32) {
	d.inBlock, d.stream, d.blockLen = true, stream, 0
	d.isRequest = stream&1 == 1 && stream > d.last
	if d.isRequest {
		d.last = stream
	}
	d.fields.reset()
}

// write keeps a fragment of the open header block, which is decoded
// whole when it ends (it is at most MaxHeaderBlock).
func (d *Decoder) write(p []byte) {
	if n := len(d.block) + len(p); n > cap(d.block) {
		c := min(pow2(max(n, 512)), MaxHeaderBlock)
		if err := d.reserve(c, cap(d.block)); err != nil {
			d.fail(err)
			return
		}
		d.block = append(make([]byte, 0, c), d.block...)
	}
	d.block = append(d.block, p...)
}

// reserve reports, as ErrMemory, a buffer of capacity old grown to n
// that would take Held past the limit.
func (d *Decoder) reserve(n, old int) error {
	if held := d.Held() - old + n; held > d.limit {
		return fmt.Errorf("%w: stream %d: %d bytes held, over %d", ErrMemory, d.stream, held, d.limit)
	}
	return nil
}

func (d *Decoder) hpackFailed(err error) {
	switch {
	case errors.Is(err, errFieldLength):
		d.fail(fmt.Errorf("%w: stream %d: a field longer than %d bytes", ErrHeaderBlock, d.stream, MaxHeaderBlock))
	case errors.Is(err, ErrTableSize), errors.Is(err, ErrMemory):
		d.fail(err)
	default:
		d.fail(fmt.Errorf("%w: stream %d: %w", ErrHPACK, d.stream, err))
	}
}

func (d *Decoder) closeBlock(emit func(*Request)) {
	d.inBlock = false
	// A trailer section's fields are decoded only for the dynamic table.
	err := d.decodeBlock(d.block, d.isRequest)
	if cap(d.block) > keepCap {
		d.block = nil
	}
	d.block = d.block[:0]
	d.name.done()
	d.val.done()
	if err != nil {
		d.hpackFailed(err)
		return
	}
	if !d.isRequest {
		return
	}
	f := &d.fields
	d.req = Request{
		StreamID:  d.stream,
		Method:    f.get(fMethod),
		Scheme:    f.get(fScheme),
		Authority: f.get(fAuthority),
		Path:      f.get(fPath),
		UserAgent: f.get(fUserAgent),
	}
	if len(d.req.Authority) == 0 {
		d.req.Authority = f.get(fHost)
	}
	emit(&d.req)
	d.req = Request{}
	f.done()
}

// DecoderCost is what a Decoder takes before it holds anything: its own
// struct, counted by Held.
const DecoderCost = 512

// Held is how many bytes the Decoder holds, for a caller that caps
// memory: DecoderCost and the capacity of every buffer it allocated —
// the dynamic table (its entries' bytes, at most its maximum size, and
// 12 bytes an entry, at most one per 32 bytes of that size), the open
// header block, and the names and values being decoded. Between header
// blocks that is at most DecoderCost + 1.375*MaxTableSize + 4*keepCap;
// while a block is decoded, at most about MaxTableSize + 5*MaxHeaderBlock
// more. It never exceeds a limit set by SetLimit.
func (d *Decoder) Held() int {
	return DecoderCost + d.tab.held() + cap(d.block) + cap(d.name.b) + cap(d.val.b) + cap(d.fields.buf)
}

// SetLimit caps what Held may grow to: a buffer or table that would take
// it past n gives the connection up instead (ErrMemory), before anything
// is allocated. A new Decoder has no limit. The limit may change between
// calls to Feed, and may be below what the Decoder holds already, which
// it keeps.
func (d *Decoder) SetLimit(n int) { d.limit = n }

// Lost tells the Decoder that n bytes of the client's stream were lost
// (a hole in the capture). Inside a frame that is being skipped (DATA
// above all), up to its end, it goes on; elsewhere the frame
// boundaries or the HPACK state are lost, and it gives the connection up
// with ErrLost. n < 0 means an unknown number of bytes.
func (d *Decoder) Lost(n int) error {
	if d.err == nil {
		if n >= 0 && d.state == stSkip && n <= d.left {
			d.skip(d.left - n)
		} else {
			d.fail(fmt.Errorf("%w: %d bytes", ErrLost, n))
		}
	}
	return d.err
}
