package quic

// maxSpans is how many separate ranges of CRYPTO data a connection holds
// before its first handshake message is whole: data that would make one
// more range is dropped (Stats.CryptoDropped). Browsers scatter a
// ClientHello over a dozen or so fragments, most of them adjacent.
const maxSpans = 32

// span is a range [lo, hi) of CRYPTO stream offsets received.
type span struct{ lo, hi uint32 }

// cryptoStream puts CRYPTO frame data back together by offset. Where
// fragments overlap, the first copy of a byte wins.
type cryptoStream struct {
	data  []byte // by offset; len is the highest end received
	spans [maxSpans]span
	n     int // spans in use, sorted, neither overlapping nor adjacent
}

// ready returns how many bytes from offset 0 are received.
func (c *cryptoStream) ready() int {
	if c.n == 0 || c.spans[0].lo != 0 {
		return 0
	}
	return int(c.spans[0].hi)
}

// reset forgets the data, keeping the buffer.
func (c *cryptoStream) reset() {
	c.data = c.data[:0]
	c.n = 0
}

// add copies b, the CRYPTO data at offset off, into the stream; the
// caller has made c.data's capacity reach off+len(b). It reports false,
// copying nothing, when b would make more than maxSpans ranges.
func (c *cryptoStream) add(off int, b []byte) bool {
	lo, hi := uint32(off), uint32(off+len(b))
	if lo == hi {
		return true
	}
	// The spans b touches or is adjacent to: [i, j).
	i := 0
	for i < c.n && c.spans[i].hi < lo {
		i++
	}
	j := i
	for j < c.n && c.spans[j].lo <= hi {
		j++
	}
	if i == j && c.n == maxSpans {
		return false
	}
	if int(hi) > len(c.data) {
		c.data = c.data[:hi]
	}
	// Copy the parts of b that no span covers: the gaps between spans
	// i..j-1 within [lo, hi).
	at := lo
	for k := i; k < j; k++ {
		s := c.spans[k]
		if s.lo > at {
			copy(c.data[at:s.lo], b[at-lo:])
		}
		at = max(at, s.hi)
	}
	if at < hi {
		copy(c.data[at:hi], b[at-lo:])
	}
	merged := span{lo, hi}
	if i < j {
		merged = span{min(lo, c.spans[i].lo), max(hi, c.spans[j-1].hi)}
	}
	// Replace spans i..j-1 with merged.
	switch d := 1 - (j - i); {
	case d > 0:
		copy(c.spans[i+1:c.n+1], c.spans[i:c.n])
	case d < 0:
		copy(c.spans[i+1:], c.spans[j:c.n])
	}
	c.n += 1 - (j - i)
	c.spans[i] = merged
	return true
}
