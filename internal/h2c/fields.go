package h2c

// MaxUserAgent bounds the user-agent kept: longer values are cut.
const MaxUserAgent = 512

// The header fields a request is made of.
const (
	fMethod = iota
	fScheme
	fAuthority
	fPath
	fHost
	fUserAgent
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

// keep keeps value if name is one a Request reports and its first.
func (d *Decoder) keep(name, value []byte) error {
	f := &d.fields
	var i int
	switch string(name) {
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
	case "user-agent":
		i = fUserAgent
		value = cut(value, MaxUserAgent)
	default:
		return nil
	}
	if f.set[i] {
		return nil
	}
	if n := len(f.buf) + len(value); n > cap(f.buf) {
		c := pow2(max(n, 128))
		if err := d.reserve(c, cap(f.buf)); err != nil {
			return err
		}
		f.buf = append(make([]byte, 0, c), f.buf...)
	}
	f.set[i] = true
	from := len(f.buf)
	f.buf = append(f.buf, value...)
	f.span[i].from, f.span[i].to = int32(from), int32(len(f.buf))
	return nil
}

// cut returns v's first n bytes at most, ending at a character's start
// (no UTF-8 sequence cut in two).
func cut(v []byte, n int) []byte {
	if len(v) <= n {
		return v
	}
	for i := 0; i < 3 && n > 0 && v[n]&0xc0 == 0x80; i++ {
		n-- // a continuation byte: back to the character's start
	}
	return v[:n]
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
