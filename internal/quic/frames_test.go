package quic

import (
	"bytes"
	"errors"
	"testing"
)

// Padding of every length around the word size, before, between and
// after CRYPTO frames, is skipped; a nonzero byte in it starts a frame.
func TestWalkFramesPadding(t *testing.T) {
	pad := func(n int) []byte { return make([]byte, n) }
	crypto := cryptoFrame(5, []byte("hello"))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 1100} {
		for _, tc := range []struct {
			name string
			p    []byte
			err  error
			got  int // CRYPTO frames reported
		}{
			{"padding only", pad(n), nil, 0},
			{"crypto then padding", append(append([]byte{}, crypto...), pad(n)...), nil, 1},
			{"padding then crypto", append(pad(n), crypto...), nil, 1},
			{"padding between", append(append(append(append([]byte{}, crypto...), pad(n)...), crypto...), pad(n)...), nil, 2},
			{"padding then a stream frame", append(pad(n), 0x08, 0, 0), errFrame, 0},
		} {
			var data [][]byte
			err := walkFrames(tc.p, func(off uint64, b []byte) {
				if off != 5 {
					t.Errorf("%s %d: offset %d", tc.name, n, off)
				}
				data = append(data, b)
			})
			if !errors.Is(err, tc.err) || len(data) != tc.got {
				t.Errorf("%s, %d bytes: %v, %d frames; want %v, %d", tc.name, n, err, len(data), tc.err, tc.got)
			}
			for _, b := range data {
				if !bytes.Equal(b, []byte("hello")) {
					t.Errorf("%s %d: data %q", tc.name, n, b)
				}
			}
		}
	}
}

func TestSkipZeros(t *testing.T) {
	for n := range 40 {
		for tail := range 3 {
			p := make([]byte, n+tail)
			for i := n; i < len(p); i++ {
				p[i] = byte(i + 1)
			}
			if got := skipZeros(p); len(got) != tail {
				t.Errorf("%d zeros then %d bytes: %d left", n, tail, len(got))
			}
		}
	}
}

// Every CRYPTO frame is handed over in order, as many as fit the noted
// ones and more (walked again), and none when a later frame is bad.
func TestWalkFramesMany(t *testing.T) {
	for _, n := range []int{1, maxFound - 1, maxFound, maxFound + 1, 3 * maxFound} {
		for _, bad := range []bool{false, true} {
			var p []byte
			for i := range n {
				p = append(p, cryptoFrame(10*i, []byte{byte(i), byte(i), byte(i)})...)
				p = append(p, framePing, framePadding)
			}
			if bad {
				p = append(p, 0x08) // STREAM
			}
			var offs []uint64
			err := walkFrames(p, func(off uint64, b []byte) {
				if len(b) != 3 || uint64(b[0])*10 != off {
					t.Errorf("%d frames: %d bytes %x at %d", n, len(b), b, off)
				}
				offs = append(offs, off)
			})
			want := n
			if bad {
				want = 0
			}
			if (err != nil) != bad || len(offs) != want {
				t.Fatalf("%d frames, bad %v: %v, %d handed over", n, bad, err, len(offs))
			}
			for i, off := range offs {
				if off != uint64(10*i) {
					t.Errorf("%d frames: frame %d at %d", n, i, off)
				}
			}
		}
	}
}
