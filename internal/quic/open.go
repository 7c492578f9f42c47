package quic

import (
	"encoding/binary"
	"errors"
)

var errAuth = errors.New("quic: packet failed authentication")

// opener decrypts Initial packets into buffers of its own, made once: the
// datagram is never written to.
type opener struct {
	hdr   []byte // the header of the packet being opened, protection removed
	buf   []byte // its payload, decrypted
	mask  [16]byte
	nonce [12]byte
}

// open removes the header protection of the packet pkt (its header parsed
// into h) in a copy of its header, then decrypts and authenticates its
// payload with k. largest is the largest packet number of the connection
// so far (-1 for none), to expand the truncated one. The payload aliases
// o's buffer until the next call.
func (o *opener) open(k *keys, pkt []byte, h *header, largest int64) (payload []byte, pn int64, err error) {
	// The sample is the 16 bytes 4 past the packet number's start, as if
	// it were 4 bytes long (RFC 9001 §5.4.2).
	if len(pkt) < h.pnOff+4+16 {
		return nil, 0, errTooShort
	}
	if cap(o.buf) < len(pkt) {
		o.buf = make([]byte, max(len(pkt), 2048))
	}
	if cap(o.hdr) < h.pnOff+4 {
		o.hdr = make([]byte, max(h.pnOff+4, 64))
	}
	b := o.hdr[:h.pnOff+4] // the header and the longest packet number
	copy(b, pkt)
	k.hp.Encrypt(o.mask[:], pkt[h.pnOff+4:h.pnOff+20])
	b[0] ^= o.mask[0] & 0x0f
	pnLen := int(b[0]&3) + 1
	var truncated uint64
	for i := range pnLen {
		b[h.pnOff+i] ^= o.mask[1+i]
		truncated = truncated<<8 | uint64(b[h.pnOff+i])
	}
	pn = decodePacketNumber(largest, truncated, pnLen*8)
	o.nonce = k.iv
	binary.BigEndian.PutUint64(o.nonce[4:], binary.BigEndian.Uint64(o.nonce[4:])^uint64(pn))
	hdr := h.pnOff + pnLen
	payload, err = k.aead.Open(o.buf[:0], o.nonce[:], pkt[hdr:], b[:hdr])
	if err != nil {
		return nil, 0, errAuth
	}
	if b[0]&0x0c != 0 { // reserved bits, protected: nonzero is a protocol violation (RFC 9000 §17.2)
		return nil, 0, errFrameData
	}
	return payload, pn, nil
}

// decodePacketNumber expands a packet number truncated to bits bits, the
// one closest to the next expected (RFC 9000 §A.3).
func decodePacketNumber(largest int64, truncated uint64, bits int) int64 {
	expected := largest + 1
	win := int64(1) << bits
	hwin, mask := win/2, win-1
	candidate := expected&^mask | int64(truncated)
	switch {
	case candidate <= expected-hwin && candidate < 1<<62-win:
		return candidate + win
	case candidate > expected+hwin && candidate >= win:
		return candidate - win
	}
	return candidate
}
