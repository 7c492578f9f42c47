package quic

import "encoding/binary"

// SealClientInitial makes a client Initial packet of version v (one a
// Tracker understands) carrying frames, protected as a client protects it
// (RFC 9001 §5): keys from dcid, a 4-byte packet number pn, no token. It
// is for tests and synthetic captures (scripts/quicbench); it allocates.
// The caller pads frames (PADDING, zeros) to make the datagram 1,200
// bytes, as clients do.
func SealClientInitial(v Version, dcid, scid []byte, pn uint32, frames []byte) []byte {
	p := v.params()
	var k keys
	new(kdf).deriveKeys(&k, p, dcid)
	hdr := []byte{0xc0 | p.initialType<<4 | 0x03}
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(v))
	hdr = append(hdr, byte(len(dcid)))
	hdr = append(hdr, dcid...)
	hdr = append(hdr, byte(len(scid)))
	hdr = append(hdr, scid...)
	hdr = append(hdr, 0) // no token
	hdr = binary.BigEndian.AppendUint16(hdr, 0x4000|uint16(4+len(frames)+16))
	pnOff := len(hdr)
	hdr = binary.BigEndian.AppendUint32(hdr, pn)
	nonce := k.iv
	binary.BigEndian.PutUint64(nonce[4:], binary.BigEndian.Uint64(nonce[4:])^uint64(pn))
	pkt := k.aead.Seal(hdr, nonce[:], frames, hdr)
	var mask [16]byte
	k.hp.Encrypt(mask[:], pkt[pnOff+4:pnOff+20])
	pkt[0] ^= mask[0] & 0x0f
	for i := range 4 {
		pkt[pnOff+i] ^= mask[1+i]
	}
	return pkt
}

// AppendCryptoFrame appends a CRYPTO frame carrying data at offset off of
// the handshake stream.
func AppendCryptoFrame(b []byte, off uint64, data []byte) []byte {
	b = append(b, frameCrypto)
	b = appendVarint(b, off)
	b = appendVarint(b, uint64(len(data)))
	return append(b, data...)
}

func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return binary.BigEndian.AppendUint16(b, uint16(v)|0x4000)
	case v < 1<<30:
		return binary.BigEndian.AppendUint32(b, uint32(v)|0x80000000)
	}
	return binary.BigEndian.AppendUint64(b, v|0xc0<<56)
}
