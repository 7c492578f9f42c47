package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// frames builds a journal of state id from frames of (epoch, sigs).
func frames(id uint64, fs ...[]uint64) []byte {
	b := header(id)
	for _, f := range fs {
		fr := make([]byte, FrameHeaderSize, FrameHeaderSize+8*len(f))
		binary.LittleEndian.PutUint64(fr[8:], f[0])
		for _, s := range f[1:] {
			fr = binary.LittleEndian.AppendUint64(fr, s)
		}
		binary.LittleEndian.PutUint32(fr, uint32(len(f)-1))
		binary.LittleEndian.PutUint32(fr[4:], frameCRC(fr[8:]))
		b = append(b, fr...)
	}
	return b
}

func TestScan(t *testing.T) {
	good := frames(testID, []uint64{0, 1, 2}, []uint64{3, 4})
	flip := func(b []byte, i int) []byte { b = bytes.Clone(b); b[i] ^= 0x40; return b }
	tests := []struct {
		name   string
		data   []byte
		sigs   int
		torn   int64
		err    error
		frames int
	}{
		{"empty file", nil, 0, 0, nil, 0},
		{"header only", header(testID), 0, 0, nil, 0},
		{"two frames", good, 3, 0, nil, 2},
		{"cut in a frame", good[:len(good)-3], 2, 21, nil, 1},
		{"cut in a frame header", good[:HeaderSize+32+5], 2, 5, nil, 1},
		{"zeros after", append(bytes.Clone(good), make([]byte, 5000)...), 3, 5000, nil, 2},
		{"last frame garbled", flip(good, len(good)-2), 2, 24, nil, 1},
		{"first frame garbled", flip(good, HeaderSize+20), 0, 0, ErrCorrupt, 0},
		{"count too big", func() []byte {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint32(b[HeaderSize:], MaxFrameSigs+1)
			return b
		}(), 0, 0, ErrCorrupt, 0},
		{"zeros then bytes", append(append(bytes.Clone(good), make([]byte, 20)...), 1), 3, 0, ErrCorrupt, 2},
		{"other state", frames(testID + 1), 0, 0, ErrOtherState, 0},
		{"not a journal", []byte("hello, this is not a journal at all!"), 0, 0, ErrCorrupt, 0},
		{"short header", header(testID)[:10], 0, 0, ErrCorrupt, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			tail, err := Scan(bytes.NewReader(tt.data), testID, func(_ uint64, s []signature.Signature) error {
				n += len(s)
				return nil
			})
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("Scan: %v, want %v", err, tt.err)
			}
			if n != tt.sigs || tail.Frames != tt.frames {
				t.Fatalf("%d signatures in %d frames, want %d in %d", n, tail.Frames, tt.sigs, tt.frames)
			}
			if err == nil && tail.Torn != tt.torn {
				t.Fatalf("Torn = %d, want %d", tail.Torn, tt.torn)
			}
		})
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Scan(bytes.NewReader(frames(testID, []uint64{0, 1}, []uint64{0, 2})), testID,
		func(uint64, []signature.Signature) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Scan = %v", err)
	}
}

func FuzzScan(f *testing.F) {
	f.Add(frames(testID, []uint64{0, 1, 2}, []uint64{3, 4}))
	f.Add(frames(testID, []uint64{9, 1})[:HeaderSize+20])
	f.Add(header(testID))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var sigs int
		tail, err := Scan(bytes.NewReader(data), testID, func(_ uint64, s []signature.Signature) error {
			if len(s) == 0 || len(s) > MaxFrameSigs {
				t.Fatalf("a frame of %d signatures", len(s))
			}
			sigs += len(s)
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrOtherState) {
				t.Fatalf("Scan: an error that is neither ErrCorrupt nor ErrOtherState: %v", err)
			}
			return
		}
		if tail.Sigs != sigs || tail.End+tail.Torn != int64(len(data)) && len(data) > 0 {
			t.Fatalf("tail %+v for %d bytes and %d signatures", tail, len(data), sigs)
		}
	})
}
