package quic

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// FuzzInitial runs arbitrary datagrams through a Tracker with small caps
// (header parsing, header protection, authentication), then two Initial
// packets sealed with the right keys around arbitrary plaintext (frames,
// CRYPTO reassembly): never a panic, the caps held, and every message
// reported a whole ClientHello.
func FuzzInitial(f *testing.F) {
	for _, name := range []string{"rfc9001-a2-client-initial.hex", "rfc9369-a2-client-initial.hex"} {
		f.Add(readHex(f, name), []byte{}, []byte{})
	}
	for _, tc := range quicgoCases[:3] {
		for _, d := range readCapture(f, capturePath(tc.name))[:2] {
			f.Add(d.data, []byte{}, []byte{})
		}
	}
	msg := fakeHello(700)
	f.Add([]byte{}, cryptoFrame(300, msg[300:]), append([]byte{0, 0, 1}, cryptoFrame(0, msg[:400])...))
	f.Add([]byte{0xc0}, []byte{frameAck, 10, 0, 1, 2, 1, 3}, []byte{frameConnClose, 0, 0, 2, 'o', 'k'})
	f.Add([]byte{0x40}, cryptoFrame(0, []byte{1, 0, 0}), cryptoFrame(3, []byte{4, 1, 2, 3, 4}))
	f.Fuzz(func(t *testing.T, raw, plain1, plain2 []byte) {
		opts := &Options{MaxConns: 4, MaxBytes: 3 * minBuf, MaxHello: 2048, MaxDone: 4}
		tr := NewTracker(opts, func(c *ClientHello) {
			if n, ok := tlshello.HandshakeLen(c.Message); !ok || n != len(c.Message) || c.Message[0] != tlshello.TypeClientHello || n > opts.MaxHello {
				t.Fatalf("reported %d bytes %x", len(c.Message), c.Message[:min(8, len(c.Message))])
			}
		})
		check := func() {
			if tr.Buffered() > opts.MaxBytes || tr.Conns() > opts.MaxConns || tr.Done() > opts.MaxDone {
				t.Fatalf("over a cap: %d bytes, %d conns, %d done", tr.Buffered(), tr.Conns(), tr.Done())
			}
		}
		tr.Add(testTime(0), testClient, testServer, raw)
		check()
		_ = IsInitial(raw)
		dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		tr.Add(testTime(1), testClient, testServer, sealInitial(Version1, dcid, nil, 0, plain1))
		check()
		tr.Add(testTime(2), testClient, testServer, append(sealInitial(Version1, dcid, nil, 1, plain2), raw...))
		check()
	})
}
