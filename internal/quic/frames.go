package quic

import "encoding/binary"

// Frame types an Initial packet may carry (RFC 9000 §12.4, Table 3).
const (
	framePadding   = 0x00
	framePing      = 0x01
	frameAck       = 0x02
	frameAckECN    = 0x03
	frameCrypto    = 0x06
	frameConnClose = 0x1c
)

// maxStreamOffset is the largest offset plus length of stream or CRYPTO
// data (RFC 9000 §19.6).
const maxStreamOffset = 1<<62 - 1

// cryptoFunc takes the data of a CRYPTO frame at its stream offset.
type cryptoFunc func(offset uint64, data []byte)

// walkFrames checks every frame of p, an Initial packet's plaintext, and
// then, only if all are allowed and well formed, calls fn with each CRYPTO
// frame's data: a packet with one bad frame is not trusted at all.
func walkFrames(p []byte, fn cryptoFunc) error {
	var found [maxFound]cryptoRef
	n, err := frames(p, &found, nil)
	if err != nil {
		return err
	}
	if n > maxFound {
		_, err = frames(p, nil, fn) // more than were noted: walked again
		return err
	}
	for _, r := range found[:n] {
		fn(r.off, p[r.lo:r.hi])
	}
	return nil
}

// maxFound is how many CRYPTO frames of a packet walkFrames notes while it
// checks the packet, to hand them over without walking it again.
const maxFound = 8

// cryptoRef is a CRYPTO frame: its stream offset and where its data is in
// the packet.
type cryptoRef struct {
	off    uint64
	lo, hi int
}

// frames walks the frames of p, noting its CRYPTO frames in found (when
// not nil; the first maxFound of them) and calling fn with each (when not
// nil). It returns how many CRYPTO frames there are.
func frames(p []byte, found *[maxFound]cryptoRef, fn cryptoFunc) (int, error) {
	n, size := 0, len(p)
	for len(p) > 0 {
		typ, w := varint(p)
		if w == 0 {
			return n, errVarint
		}
		p = p[w:]
		switch typ {
		case framePadding:
			p = skipZeros(p)
		case framePing:
		case frameAck, frameAckECN:
			var err error
			if p, err = ackFrame(p, typ == frameAckECN); err != nil {
				return n, err
			}
		case frameCrypto:
			off, w1 := varint(p)
			l, w2 := varint(p[w1:])
			if w1 == 0 || w2 == 0 {
				return n, errVarint
			}
			p = p[w1+w2:]
			if l > uint64(len(p)) || off+l > maxStreamOffset {
				return n, errFrameData
			}
			if found != nil && n < maxFound {
				at := size - len(p)
				found[n] = cryptoRef{off, at, at + int(l)}
			}
			if fn != nil {
				fn(off, p[:l])
			}
			n++
			p = p[l:]
		case frameConnClose:
			var reason uint64
			var err error
			if p, err = skipVarints(p, 2); err != nil { // error code, frame type
				return n, err
			}
			reason, w = varint(p)
			if w == 0 {
				return n, errVarint
			}
			if p = p[w:]; reason > uint64(len(p)) {
				return n, errFrameData
			}
			p = p[reason:]
		default:
			return n, errFrame
		}
	}
	return n, nil
}

// ackFrame reads an ACK frame's fields (RFC 9000 §19.3) after its type,
// checking that no range goes below packet number 0, and returns what
// follows it.
func ackFrame(p []byte, ecn bool) ([]byte, error) {
	var f [4]uint64 // largest acknowledged, ack delay, range count, first range
	for i := range f {
		v, w := varint(p)
		if w == 0 {
			return nil, errVarint
		}
		f[i], p = v, p[w:]
	}
	largest, count, first := f[0], f[2], f[3]
	if first > largest {
		return nil, errFrameData
	}
	smallest := largest - first
	// Each range takes at least 2 bytes: a count larger than what is left
	// is malformed, found before looping over it.
	if count > uint64(len(p))/2 {
		return nil, errFrameData
	}
	for range count {
		gap, w1 := varint(p)
		n, w2 := varint(p[w1:])
		if w1 == 0 || w2 == 0 {
			return nil, errVarint
		}
		p = p[w1+w2:]
		// The next range's largest is smallest - gap - 2, its smallest
		// that minus n: neither may be negative.
		if gap+2 > smallest || n > smallest-gap-2 {
			return nil, errFrameData
		}
		smallest = smallest - gap - 2 - n
	}
	if ecn {
		return skipVarints(p, 3)
	}
	return p, nil
}

// skipZeros returns p after its leading zero bytes (PADDING frames), read
// a word at a time: an Initial is mostly padding.
func skipZeros(p []byte) []byte {
	for len(p) >= 8 && binary.LittleEndian.Uint64(p) == 0 {
		p = p[8:]
	}
	for len(p) > 0 && p[0] == 0 {
		p = p[1:]
	}
	return p
}

func skipVarints(p []byte, n int) ([]byte, error) {
	for range n {
		_, w := varint(p)
		if w == 0 {
			return nil, errVarint
		}
		p = p[w:]
	}
	return p, nil
}
