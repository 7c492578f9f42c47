package keyed

import (
	"testing"

	"github.com/dchest/siphash"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// BenchmarkHash: the keyed hash of a 55-byte URL already in normal form
// (Sum: with the normal-form check; SumNormalized: SipHash through the
// Hasher; siphash.Hash and Hash128: the module's functions called bare, to
// see the wrapper's cost and the 128-bit form's).
func BenchmarkHash(b *testing.B) {
	h := NewHasher(testKey, signature.Safe)
	url := testURL(nil, "a", 1234567)
	if len(url) != 55 {
		b.Fatalf("URL of %d bytes", len(url))
	}
	b.Run("Sum", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		b.ReportAllocs()
		var x uint64
		for b.Loop() {
			s, _ := h.Sum(url)
			x += s
		}
		sink = x
	})
	b.Run("SumNormalized", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		b.ReportAllocs()
		var x uint64
		for b.Loop() {
			x += h.SumNormalized(url)
		}
		sink = x
	})
	b.Run("siphash.Hash", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		var x uint64
		for b.Loop() {
			x += siphash.Hash(1, 2, url)
		}
		sink = x
	})
	b.Run("siphash.Hash128", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		var x uint64
		for b.Loop() {
			lo, hi := siphash.Hash128(1, 2, url)
			x += lo ^ hi
		}
		sink = x
	})
}

var sink uint64

// benchTable makes a 512 MiB table (2 MiB shards) in memory and stores 10M
// URLs, so the timed loops run on a warm state of realistic fill. (Memory,
// not a file mapping: a sparse file's first writes would be timed too;
// warm, both are the same page-cache pages.)
func benchTable(b *testing.B) (*Table, []Loc, [][]byte) {
	tab, err := NewTable(heapShards(MinShardBytes), false)
	if err != nil {
		b.Fatal(err)
	}
	g := tab.Geometry()
	h := NewHasher(testKey, signature.Safe)
	var buf []byte
	locs := make([]Loc, 1<<20)
	for i := range 10_000_000 {
		buf = testURL(buf[:0], "w", i)
		s, _ := h.Sum(buf)
		l := g.Locate(s)
		tab.Decide(l)
		if i < len(locs) {
			locs[i] = l // half of the decisions below are duplicates
		}
	}
	urls := make([][]byte, 1<<20)
	for i := range urls {
		idx := i
		if i%2 == 1 {
			idx = 20_000_000 + i // new URLs
		}
		urls[i] = testURL(nil, "w", idx)
		if i%2 == 1 {
			s, _ := h.Sum(urls[i])
			locs[i] = g.Locate(s)
		}
	}
	b.ResetTimer()
	return tab, locs, urls
}

func BenchmarkDecide(b *testing.B) {
	tab, locs, _ := benchTable(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tab.Decide(locs[i&(len(locs)-1)])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/URL")
}

func BenchmarkDecideBatch(b *testing.B) {
	tab, locs, urls := benchTable(b)
	for _, size := range []int{64, 512, 4096} {
		res := make([]Result, size)
		b.Run("size="+itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			off := 0
			for b.Loop() {
				if off+size > len(locs) {
					off = 0
				}
				tab.DecideBatch(locs[off:off+size], res, false)
				off += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/URL")
		})
		// hashing included: URLs in, answers out
		b.Run("urls/size="+itoa(size), func(b *testing.B) {
			h := NewHasher(testKey, signature.Safe)
			ls := make([]Loc, size)
			b.ReportAllocs()
			off := 0
			for b.Loop() {
				if off+size > len(urls) {
					off = 0
				}
				h.LocateBatch(tab.Geometry(), urls[off:off+size], ls)
				tab.DecideBatch(ls, res, false)
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
