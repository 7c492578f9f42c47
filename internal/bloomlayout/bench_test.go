package bloomlayout

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
)

// BenchmarkDecide: a batch of 1024 new URLs on each layout of 512 MiB,
// with the batch lock (an OFD lock on a real file, taken and released per
// batch, as a state directory's Set does) and without; ns/op is per URL.
func BenchmarkDecide(b *testing.B) {
	layouts := []struct {
		name string
		l    format.Layout
		f    format.Filter
	}{
		{"bloom-k4", format.Bloom, format.Filter{K: 4}},
		{"mdbf-S4-k4", format.MDBF, format.Filter{K: 4, Groups: 4, V1Bits: 858_980_352}},
		{"dsbf-c3-fmax0.01", format.DSBF, format.Filter{K: 8, Children: 3, FMax: 0.01}},
	}
	for _, l := range layouts {
		for _, locked := range []bool{false, true} {
			name := l.name + "/nolock"
			if locked {
				name = l.name + "/lock"
			}
			b.Run(name, func(b *testing.B) {
				m, shards := heapState(b, l.l, format.ShardBytes, l.f)
				var opts Options
				if locked {
					opts.LockPath = filepath.Join(b.TempDir(), "00")
					if err := os.WriteFile(opts.LockPath, []byte{0}, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				s, err := New(m, shards, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				sigs := randomSigs(rand.New(rand.NewPCG(5, 5)), 1024)
				seen := make([]bool, len(sigs))
				b.ResetTimer()
				for i := 0; i < b.N; i += len(sigs) {
					for j := range sigs {
						sigs[j] += 0x9e3779b97f4a7c15 // new URLs each batch
					}
					if err := s.Decide(context.Background(), sigs, seen, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
