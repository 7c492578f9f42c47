package h2c

import (
	"errors"
	"fmt"
	"math/bits"

	"golang.org/x/net/http2/hpack"
)

// HPACK (RFC 7541) is decoded here, not by golang.org/x/net/http2/hpack,
// for memory: hpack's dynamic table keeps a string, a HeaderField and
// their allocation overhead per entry, about 2.5 times the table size as
// HPACK counts it, which a memory cap could only guess. This table keeps
// its entries' bytes in one ring buffer and 12 bytes of position per
// entry, all of it counted by Held. Only hpack's Huffman decoder is used.

// entryOverhead is what HPACK adds to an entry's name and value when it
// sizes the table (RFC 7541 §4.1): a table of size s has at most
// s/entryOverhead entries.
const entryOverhead = 32

// entrySize is the bytes an entry's position takes in the table.
const entrySize = 12

// entry is where a dynamic table entry's bytes are in the ring: name
// then value, from off, wrapping at the end.
type entry struct{ off, nameLen, valLen uint32 }

// table is the dynamic table (RFC 7541 §2.3.2): its entries' bytes in a
// ring (data), their positions in another (ents, oldest at first).
type table struct {
	data      []byte
	w, used   int // where the next bytes go; bytes in use, ending at w
	ents      []entry
	first, n  int
	size, max uint32 // HPACK's size of the entries, and its maximum
}

// held is the capacity the table holds.
func (t *table) held() int { return cap(t.data) + cap(t.ents)*entrySize }

// at is the dynamic table's entry i, 1 the newest.
func (t *table) at(i int) (e entry, ok bool) {
	if i < 1 || i > t.n {
		return entry{}, false
	}
	return t.ents[(t.first+t.n-i)%len(t.ents)], true
}

// bytes are n bytes of the ring from off: a slice of it, or, when they
// wrap, a copy in s.
func (t *table) bytes(off, n uint32, s *sink) ([]byte, error) {
	if int(off)+int(n) <= len(t.data) {
		return t.data[off : off+n], nil
	}
	k := len(t.data) - int(off)
	s.b = s.b[:0]
	if err := s.add(t.data[off:], t.data[:int(n)-k]); err != nil {
		return nil, err
	}
	return s.b, nil
}

func (t *table) evictOldest() {
	e := t.ents[t.first]
	t.first = (t.first + 1) % len(t.ents)
	t.n--
	t.used -= int(e.nameLen + e.valLen)
	t.size -= e.nameLen + e.valLen + entryOverhead
}

// setMax applies a dynamic table size update; the buffers of a table
// made much smaller are made smaller too.
func (t *table) setMax(m uint32) {
	t.max = m
	for t.size > m {
		t.evictOldest()
	}
	if len(t.data) > int(m) || len(t.ents) > int(m)/entryOverhead {
		if t.n == 0 {
			t.data, t.ents, t.w, t.used, t.first = nil, nil, 0, 0, 0
			return
		}
		t.resize(min(pow2(max(t.used, 256)), int(m)), min(pow2(max(t.n, 16)), int(m)/entryOverhead))
	}
}

// add inserts an entry, evicting the oldest to make room (RFC 7541
// §4.4); name must not alias the table. An entry larger than the table
// empties it. It fails only when d refuses the memory.
func (t *table) add(d *Decoder, name, value []byte) error {
	sz := uint32(len(name)+len(value)) + entryOverhead
	for t.n > 0 && t.size+sz > t.max {
		t.evictOldest()
	}
	if sz > t.max {
		return nil
	}
	l := len(name) + len(value)
	if t.used+l > len(t.data) || len(t.data) == 0 || t.n == len(t.ents) {
		if err := t.grow(d, l); err != nil {
			return err
		}
	}
	off := t.w
	for _, p := range [2][]byte{name, value} {
		k := copy(t.data[t.w:], p)
		copy(t.data, p[k:])
		t.w = (t.w + len(p)) % len(t.data)
	}
	t.used += l
	t.ents[(t.first+t.n)%len(t.ents)] = entry{uint32(off), uint32(len(name)), uint32(len(value))}
	t.n++
	t.size += sz
	return nil
}

// grow makes room for one more entry of l bytes: rings of a power of two
// bytes and entries, at most what the table's maximum can hold.
func (t *table) grow(d *Decoder, l int) error {
	dataCap, entsCap := len(t.data), len(t.ents)
	if t.used+l > dataCap || dataCap == 0 { // an empty entry takes a place too
		dataCap = min(pow2(max(t.used+l, 2*dataCap, 256)), int(t.max))
	}
	if t.n == entsCap {
		entsCap = min(pow2(max(2*entsCap, 16)), int(t.max)/entryOverhead)
	}
	if err := d.reserve(dataCap+entsCap*entrySize, t.held()); err != nil {
		return err
	}
	t.resize(dataCap, entsCap)
	return nil
}

// resize moves the entries to rings of these sizes, from their starts.
func (t *table) resize(dataCap, entsCap int) {
	data, ents := make([]byte, dataCap), make([]entry, entsCap)
	pos := 0
	for i := range t.n {
		e := t.ents[(t.first+i)%len(t.ents)]
		n := int(e.nameLen + e.valLen)
		k := copy(data[pos:pos+n], t.data[e.off:])
		copy(data[pos+k:pos+n], t.data[:n-k])
		ents[i] = entry{uint32(pos), e.nameLen, e.valLen}
		pos += n
	}
	t.data, t.ents, t.first, t.w = data, ents, 0, pos%max(dataCap, 1)
}

func pow2(n int) int { return 1 << bits.Len(uint(n-1)) }

// sink collects a string the block does not hold as it is: Huffman
// decoded, or wrapped in the table's ring. It grows through its
// Decoder, which may refuse.
type sink struct {
	d *Decoder
	b []byte
}

// Write is for hpack.HuffmanDecode.
func (s *sink) Write(p []byte) (int, error) {
	return len(p), s.add(p, nil)
}

func (s *sink) add(p, q []byte) error {
	n := len(s.b) + len(p) + len(q)
	if n > MaxHeaderBlock {
		return errFieldLength
	}
	if n > cap(s.b) {
		c := pow2(max(n, 256))
		if err := s.d.reserve(c, cap(s.b)); err != nil {
			return err
		}
		s.b = append(make([]byte, 0, c), s.b...)
	}
	s.b = append(append(s.b, p...), q...)
	return nil
}

// done lets a large buffer go.
func (s *sink) done() {
	if cap(s.b) > keepCap {
		s.b = nil
	}
	s.b = s.b[:0]
}

var (
	errFieldLength = errors.New("a field longer than the cap")
	errTruncated   = errors.New("block ends inside a field")
	errOverflow    = errors.New("integer overflow")
	errIndex       = errors.New("invalid index")
	errLateUpdate  = errors.New("dynamic table size update after a header field")
)

// readInt reads an integer of an n-bit prefix (RFC 7541 §5.1): past 63
// bits it stops with errOverflow, at the end of b with errTruncated, as
// hpack does.
func readInt(b []byte, n uint) (uint64, []byte, error) {
	mask := byte(1)<<n - 1
	v := uint64(b[0] & mask)
	b = b[1:]
	if v < uint64(mask) {
		return v, b, nil
	}
	var shift uint
	for i, c := range b {
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, b[i+1:], nil
		}
		if shift += 7; shift > 56 {
			return 0, nil, errOverflow
		}
	}
	return 0, nil, errTruncated
}

// readString reads a string literal (RFC 7541 §5.2): the block's bytes,
// or, Huffman-coded, their decoding in s.
func readString(b []byte, s *sink) ([]byte, []byte, error) {
	str, huff, b, err := readRaw(b)
	if err != nil {
		return nil, nil, err
	}
	if str, err = decodeString(str, huff, s); err != nil {
		return nil, nil, err
	}
	return str, b, nil
}

// readRaw reads a string literal's length and bytes, not decoded, as
// hpack does first for both strings of a field (a length over the cap is
// found before a bad Huffman code in the name).
func readRaw(b []byte) (str []byte, huff bool, rest []byte, err error) {
	if len(b) == 0 {
		return nil, false, nil, errTruncated
	}
	huff = b[0]&0x80 != 0
	n, b, err := readInt(b, 7)
	if err != nil {
		return nil, false, nil, err
	}
	if n > MaxHeaderBlock {
		return nil, false, nil, errFieldLength
	}
	if uint64(len(b)) < n {
		return nil, false, nil, errTruncated
	}
	return b[:n], huff, b[n:], nil
}

// decodeString is str as the field holds it: itself, or its Huffman
// decoding in s.
func decodeString(str []byte, huff bool, s *sink) ([]byte, error) {
	if !huff {
		return str, nil
	}
	s.b = s.b[:0]
	if _, err := hpack.HuffmanDecode(s, str); err != nil {
		return nil, err
	}
	return s.b, nil
}

// decodeBlock decodes a whole header block, updating the dynamic table
// and keeping the fields a request reports when keep is set.
func (d *Decoder) decodeBlock(b []byte, keep bool) error {
	t := &d.tab
	first := true
	for len(b) > 0 {
		c := b[0]
		if c&0xe0 == 0x20 { // dynamic table size update (§6.3)
			// Only at the start of a block (RFC 7541 §4.2), or, as
			// hpack (and so Go's servers) takes it, while the table is
			// empty.
			if !first && t.size > 0 {
				return errLateUpdate
			}
			v, rest, err := readInt(b, 5)
			if err != nil {
				return err
			}
			if v > MaxTableSize {
				return fmt.Errorf("%w: an update to %d bytes, more than %d", ErrTableSize, v, MaxTableSize)
			}
			t.setMax(uint32(v))
			b, first = rest, false
			continue
		}
		first = false
		var prefix uint = 4 // literal without indexing or never indexed (§6.2.2, §6.2.3)
		switch {
		case c&0x80 != 0: // indexed (§6.1)
			prefix = 7
		case c&0xc0 == 0x40: // literal with incremental indexing (§6.2.1)
			prefix = 6
		}
		idx, rest, err := readInt(b, prefix)
		if err != nil {
			return err
		}
		b = rest
		var name, value []byte
		if prefix == 7 {
			if name, value, err = d.indexed(int(idx)); err != nil {
				return err
			}
		} else {
			if idx == 0 { // both strings read before either is decoded, as hpack does
				var rawName, rawValue []byte
				var nameHuff, valueHuff bool
				if rawName, nameHuff, b, err = readRaw(b); err != nil {
					return err
				}
				if rawValue, valueHuff, b, err = readRaw(b); err != nil {
					return err
				}
				if name, err = decodeString(rawName, nameHuff, &d.name); err != nil {
					return err
				}
				if value, err = decodeString(rawValue, valueHuff, &d.val); err != nil {
					return err
				}
			} else {
				name, _, err = d.indexed(int(idx))
				if err == nil && prefix == 6 && idx > uint64(len(staticTable)) {
					// The table's own bytes: copied, since adding the
					// entry may evict the one they are in.
					d.name.b = d.name.b[:0]
					err = d.name.add(name, nil)
					name = d.name.b
				}
			}
			if err != nil {
				return err
			}
			if idx != 0 {
				if value, b, err = readString(b, &d.val); err != nil {
					return err
				}
			}
			if prefix == 6 {
				if err := t.add(d, name, value); err != nil {
					return err
				}
			}
		}
		if keep {
			if err := d.keep(name, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexed is the name and value of index i of the static then the
// dynamic table.
func (d *Decoder) indexed(i int) (name, value []byte, err error) {
	if i < 1 {
		return nil, nil, fmt.Errorf("%w %d", errIndex, i)
	}
	if i <= len(staticTable) {
		f := &staticBytes[i-1]
		return f[0], f[1], nil
	}
	e, ok := d.tab.at(i - len(staticTable))
	if !ok {
		return nil, nil, fmt.Errorf("%w %d", errIndex, i)
	}
	if name, err = d.tab.bytes(e.off, e.nameLen, &d.name); err != nil {
		return nil, nil, err
	}
	if value, err = d.tab.bytes((e.off+e.nameLen)%uint32(len(d.tab.data)), e.valLen, &d.val); err != nil {
		return nil, nil, err
	}
	return name, value, nil
}

// staticTable is RFC 7541 Appendix A.
var staticTable = [...][2]string{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"}, {":status", "200"},
	{":status", "204"}, {":status", "206"}, {":status", "304"}, {":status", "400"},
	{":status", "404"}, {":status", "500"}, {"accept-charset", ""}, {"accept-encoding", "gzip, deflate"},
	{"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""},
	{"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
	{"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
	{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
	{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""},
	{"from", ""}, {"host", ""}, {"if-match", ""}, {"if-modified-since", ""},
	{"if-none-match", ""}, {"if-range", ""}, {"if-unmodified-since", ""}, {"last-modified", ""},
	{"link", ""}, {"location", ""}, {"max-forwards", ""}, {"proxy-authenticate", ""},
	{"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
	{"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
	{"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""},
	{"www-authenticate", ""},
}

// staticBytes is staticTable as byte slices, for decoding without
// converting.
var staticBytes = func() (b [len(staticTable)][2][]byte) {
	for i, f := range staticTable {
		b[i] = [2][]byte{[]byte(f[0]), []byte(f[1])}
	}
	return b
}()
