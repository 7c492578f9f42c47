package h2c

import (
	"fmt"

	"golang.org/x/net/http2/hpack"
)

// The header fields a request is made of.
const (
	fMethod = iota
	fScheme
	fAuthority
	fPath
	fHost
	numFields
)

// fields keeps, from the header fields hpack emits for one block, the
// values a Request reports: the first of each name, copied into buf.
type fields struct {
	buf  []byte
	span [numFields]struct{ from, to int32 }
	set  [numFields]bool
}

func (f *fields) reset() {
	f.buf = f.buf[:0]
	f.set = [numFields]bool{}
}

// add is hpack's emit function.
func (f *fields) add(hf hpack.HeaderField) {
	var i int
	switch hf.Name {
	case ":method":
		i = fMethod
	case ":scheme":
		i = fScheme
	case ":authority":
		i = fAuthority
	case ":path":
		i = fPath
	case "host":
		i = fHost
	default:
		return
	}
	if f.set[i] {
		return
	}
	f.set[i] = true
	from := len(f.buf)
	f.buf = append(f.buf, hf.Value...)
	f.span[i].from, f.span[i].to = int32(from), int32(len(f.buf))
}

func (f *fields) get(i int) []byte {
	if !f.set[i] {
		return nil
	}
	s := f.span[i]
	return f.buf[s.from:s.to:s.to]
}

// done lets a large buffer go once its request has been reported.
func (f *fields) done() {
	if cap(f.buf) > keepCap {
		f.buf = nil
	}
	f.reset()
}

// sizeScan reads the dynamic table size updates that may open a header
// block (RFC 7541 §4.2), across fragments, to tell an update over
// MaxTableSize from other HPACK errors, and to know the table's size.
type sizeScan struct {
	on, inInt bool
	val       uint64
	shift     uint
}

func (s *sizeScan) feed(p []byte, size *uint32) error {
	for _, b := range p {
		if !s.inInt {
			if b&0xe0 != 0x20 { // not a size update: the scan is over
				s.on = false
				return nil
			}
			if b&0x1f < 0x1f { // a 5-bit value, below any cap
				*size = uint32(b & 0x1f)
				continue
			}
			s.inInt, s.val, s.shift = true, 0x1f, 0
			continue
		}
		s.val += uint64(b&0x7f) << s.shift
		if s.val > MaxTableSize {
			return fmt.Errorf("%w: an update to more than %d bytes", ErrTableSize, MaxTableSize)
		}
		if b&0x80 == 0 {
			s.inInt = false
			*size = uint32(s.val)
			continue
		}
		if s.shift += 7; s.shift > 56 { // hpack reports the overflow
			s.on = false
			return nil
		}
	}
	return nil
}
