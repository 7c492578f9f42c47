package quic

import (
	"encoding/binary"
	"testing"

	"github.com/urldedupd/urldedupd/pkg/tlshello"
)

// sealInitial makes a client Initial packet of version v carrying payload
// (frames), protected as a client would (RFC 9001 §5), with a 4-byte
// packet number.
func sealInitial(v Version, dcid, scid []byte, pn uint32, payload []byte) []byte {
	p := v.params()
	var k keys
	deriveKeys(&k, p, dcid)
	hdr := []byte{0xc0 | p.initialType<<4 | 0x03}
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(v))
	hdr = append(hdr, byte(len(dcid)))
	hdr = append(hdr, dcid...)
	hdr = append(hdr, byte(len(scid)))
	hdr = append(hdr, scid...)
	hdr = append(hdr, 0) // no token
	hdr = binary.BigEndian.AppendUint16(hdr, 0x4000|uint16(4+len(payload)+16))
	pnOff := len(hdr)
	hdr = binary.BigEndian.AppendUint32(hdr, pn)
	var nonce [12]byte
	nonce = k.iv
	binary.BigEndian.PutUint64(nonce[4:], binary.BigEndian.Uint64(nonce[4:])^uint64(pn))
	pkt := k.aead.Seal(hdr, nonce[:], payload, hdr)
	var mask [16]byte
	k.hp.Encrypt(mask[:], pkt[pnOff+4:pnOff+20])
	pkt[0] ^= mask[0] & 0x0f
	for i := range 4 {
		pkt[pnOff+i] ^= mask[1+i]
	}
	return pkt
}

// cryptoFrame is a CRYPTO frame of data at off.
func cryptoFrame(off int, data []byte) []byte {
	b := []byte{frameCrypto}
	b = appendVarint(b, uint64(off))
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

// fakeHello is a handshake message of type 1 whose body is n bytes: all a
// Tracker looks at.
func fakeHello(n int) []byte {
	b := []byte{tlshello.TypeClientHello, byte(n >> 16), byte(n >> 8), byte(n)}
	for i := range n {
		b = append(b, byte(i))
	}
	return b
}

func TestSealInitialRoundTrip(t *testing.T) {
	for _, v := range []Version{Version1, Version2, Draft29, 0xff00001b} {
		msg := fakeHello(300)
		pkt := sealInitial(v, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9}, 0, cryptoFrame(0, msg))
		n := 0
		tr := NewTracker(nil, func(c *ClientHello) {
			n++
			if string(c.Message) != string(msg) || c.Version != v {
				t.Errorf("%v: reported %d bytes, version %v", v, len(c.Message), c.Version)
			}
		})
		tr.Add(testTime(0), testClient, testServer, pkt)
		if n != 1 {
			t.Errorf("%v: %d reported; %+v", v, n, tr.Stats)
		}
	}
}
