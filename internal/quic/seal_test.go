package quic

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// sealInitial and cryptoFrame are SealClientInitial and
// AppendCryptoFrame, shorter.
var sealInitial = SealClientInitial

func cryptoFrame(off int, data []byte) []byte { return AppendCryptoFrame(nil, uint64(off), data) }

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
