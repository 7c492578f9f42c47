package quic

import (
	"encoding/binary"
	"errors"
)

// Long header packet types (RFC 9000 §17.2), the same names in every
// version; the bits that encode them differ (RFC 9369 §3.2).
type packetType uint8

const (
	typeInitial packetType = iota
	type0RTT
	typeHandshake
	typeRetry
)

// maxCIDLen is the longest connection ID version 1 and 2 allow.
const maxCIDLen = 20

var (
	errShort     = errors.New("quic: packet truncated")
	errNotLong   = errors.New("quic: not a long header packet")
	errCIDLen    = errors.New("quic: connection ID longer than 20 bytes")
	errTooShort  = errors.New("quic: packet too short for header protection")
	errVarint    = errors.New("quic: truncated variable-length integer")
	errFrame     = errors.New("quic: frame not allowed in an Initial packet")
	errFrameData = errors.New("quic: malformed frame")
)

// header is a parsed long header. Its slices alias the datagram.
type header struct {
	version Version
	params  *versionParams // nil for a version not understood, and for Version Negotiation
	typ     packetType
	dcid    []byte
	scid    []byte
	pnOff   int // where the (protected) packet number starts
	end     int // where the packet ends: its Length, or the datagram's end
}

// parseLong reads the long header that starts d. For a version not
// understood (h.params nil) only the version and connection IDs are read,
// and h.end is len(d).
func parseLong(d []byte, h *header) error {
	if len(d) < 7 {
		if len(d) > 0 && d[0]&0x80 == 0 {
			return errNotLong
		}
		return errShort
	}
	if d[0]&0x80 == 0 {
		return errNotLong
	}
	h.version = Version(binary.BigEndian.Uint32(d[1:]))
	h.params = h.version.params()
	i := 5
	n := int(d[i])
	i++
	if len(d) < i+n+1 {
		return errShort
	}
	h.dcid = d[i : i+n]
	i += n
	n = int(d[i])
	i++
	if len(d) < i+n {
		return errShort
	}
	h.scid = d[i : i+n]
	i += n
	h.end = len(d)
	if h.params == nil {
		return nil
	}
	if len(h.dcid) > maxCIDLen || len(h.scid) > maxCIDLen {
		return errCIDLen
	}
	// The type bits, counted from the version's Initial, give the types
	// in version 1's order (RFC 9369 §3.2 rotates them by one).
	h.typ = packetType((d[0]>>4 - h.params.initialType) & 3)
	if h.typ == typeRetry {
		return nil // no Length: the rest of the datagram
	}
	if h.typ == typeInitial {
		tokenLen, w := varint(d[i:])
		if w == 0 {
			return errShort
		}
		i += w
		if uint64(len(d)-i) < tokenLen {
			return errShort
		}
		i += int(tokenLen)
	}
	length, w := varint(d[i:])
	if w == 0 {
		return errShort
	}
	i += w
	if uint64(len(d)-i) < length {
		return errShort
	}
	h.pnOff, h.end = i, i+int(length)
	return nil
}

// IsInitial reports whether datagram starts with a long header Initial
// packet of a version a Tracker decrypts: what a caller may check before
// handing a datagram to Tracker.Add. It reads only the header.
func IsInitial(datagram []byte) bool {
	var h header
	return parseLong(datagram, &h) == nil && h.params != nil && h.typ == typeInitial
}

// IsLongHeader reports whether datagram starts with a long header packet
// of any version (RFC 8999: the high bit set; the fixed bit too, which
// every version so far keeps; connection IDs of at most 20 bytes within
// the datagram) and returns its version: what a caller may check, besides
// IsInitial, to count the versions it sees that a Tracker does not
// decrypt.
func IsLongHeader(datagram []byte) (Version, bool) {
	d := datagram
	if len(d) < 7 || d[0]&0xc0 != 0xc0 {
		return 0, false
	}
	n := int(d[5])
	if n > maxCIDLen || len(d) < 7+n {
		return 0, false
	}
	if m := int(d[6+n]); m > maxCIDLen || len(d) < 7+n+m {
		return 0, false
	}
	return Version(binary.BigEndian.Uint32(d[1:])), true
}

// varint reads a QUIC variable-length integer (RFC 9000 §16) from the
// start of b. w is its length in bytes, 0 when b is too short.
func varint(b []byte) (v uint64, w int) {
	if len(b) == 0 {
		return 0, 0
	}
	w = 1 << (b[0] >> 6)
	if len(b) < w {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for _, c := range b[1:w] {
		v = v<<8 | uint64(c)
	}
	return v, w
}
