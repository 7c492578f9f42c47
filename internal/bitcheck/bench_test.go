package bitcheck_test

import (
	"math/rand/v2"
	"testing"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// benchSet opens a state with every page faulted in for writing, so the
// benchmarks measure the steady state, not first touches.
func benchSet(b *testing.B) (*bitcheck.Set, []signature.Signature) {
	s, d := open(b)
	for i := 0; i < format.Shards; i++ {
		sh := d.Shard(i)
		for j := 0; j < len(sh); j += 4096 {
			sh[j] = 0 // a write fault now, not in the timed loop
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	sigs := make([]signature.Signature, 1<<22)
	for i := range sigs {
		sigs[i] = signature.Signature(rng.Uint32())
	}
	b.ResetTimer()
	return s, sigs
}

func BenchmarkTestAndSet(b *testing.B) {
	s, sigs := benchSet(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.TestAndSet(sigs[i&(len(sigs)-1)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/URL")
}

func BenchmarkTestAndSetBatch(b *testing.B) {
	for _, size := range []int{64, 512, 4096} {
		b.Run("size="+itoa(size), func(b *testing.B) {
			s, sigs := benchSet(b)
			seen := make([]bool, size)
			b.ReportAllocs()
			off := 0
			for b.Loop() {
				if off+size > len(sigs) {
					off = 0
				}
				s.TestAndSetBatch(sigs[off:off+size], seen)
				off += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/URL")
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
