package linefilter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// BenchmarkFilter runs the whole filter loop (split, sign, decide, write)
// over 1M in-memory lines, ~30% repeats, on a warm state.
func BenchmarkFilter(b *testing.B) {
	var in bytes.Buffer
	for i := range 1_000_000 {
		id := i
		if i%10 < 3 {
			id = i / 2
		}
		fmt.Fprintf(&in, "http://site%d.example.com/products/%d.html?id=%d\n", id%5000, id, id*7)
	}
	data := in.Bytes()
	for _, mode := range []signature.Mode{signature.Safe, signature.None} {
		b.Run("normalize="+mode.String(), func(b *testing.B) {
			f := &linefilter.Filter{State: newSet(b), Signer: signature.NewSigner(signature.IEEE, mode)}
			f.Run(context.Background(), io.Discard, bytes.NewReader(data), "warm")
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				f.Run(context.Background(), io.Discard, bytes.NewReader(data), "x")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/line")
		})
	}
}
