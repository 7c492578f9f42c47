package capture

import (
	"fmt"
	"testing"
)

// TestSeqWrap sends, at every wrap point of sequence space, a request
// followed by a segment 2^31, 2^31 ± 1, 2^32 - 1 or exactly 2^32 (the
// same number) past the next expected byte. The 2^31 pair once panicked the reassembler:
// seqDiff was an int32, and negating -2^31 gave -2^31 again.
func TestSeqWrap(t *testing.T) {
	r := req("/w")
	isns := []uint32{0, 1, 1<<31 - 2, 1<<31 - 1, 1 << 31, 1<<32 - 2, 1<<32 - 1}
	offsets := []uint64{1 << 31, 1<<31 - 1, 1<<31 + 1, 1 << 32, 1<<32 - 1, 1<<32 - uint64(len(r))}
	for _, isn := range isns {
		for _, off := range offsets {
			for _, withSYN := range []bool{true, false} {
				t.Run(fmt.Sprintf("isn=%d/off=%d/syn=%v", isn, off, withSYN), func(t *testing.T) {
					c := conn{cli, srv, isn}
					a, got := collect(nil)
					if withSYN {
						a.Add(t0, c.syn())
					}
					a.Add(t0, c.at(0, r))
					// off past the next expected byte: at 2^31 that is -2^31.
					far := c.at(len(r), "GET /far HTTP/1.1\r\nHost: h\r\n\r\n")
					far.Seq += uint32(off)
					a.Add(t0, far)
					a.Add(t0, c.at(len(r), req("/after")))
					a.Flush()
					if (*got)[0] != "GET http://h/w" {
						t.Fatalf("got %q", *got)
					}
					if a.Buffered() != 0 {
						t.Errorf("%d bytes still held after Flush", a.Buffered())
					}
				})
			}
		}
	}
}

// TestSeqDiff checks the arithmetic itself at the wrap points.
func TestSeqDiff(t *testing.T) {
	tests := []struct {
		a, b uint32
		want int64
	}{
		{0, 0, 0},
		{1, 0, 1},
		{0, 1, -1},
		{0, 1<<32 - 1, 1},
		{1<<32 - 1, 0, -1},
		{1 << 31, 0, -(1 << 31)},
		{0, 1 << 31, -(1 << 31)},
		{1<<31 - 1, 0, 1<<31 - 1},
		{5, 5 + 1<<31, -(1 << 31)},
	}
	for _, tt := range tests {
		got := seqDiff(tt.a, tt.b)
		if got != tt.want {
			t.Errorf("seqDiff(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got < 0 && -got <= 0 {
			t.Errorf("seqDiff(%d, %d) = %d: negation overflows", tt.a, tt.b, got)
		}
	}
}
