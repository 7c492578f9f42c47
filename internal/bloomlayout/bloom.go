package bloomlayout

import (
	"math"

	"github.com/urldedupd/urldedupd/internal/format"
)

// bloom is a classic Bloom filter over the whole array.
type bloom struct {
	a array
	k uint64
	m uint64
}

func newBloom(a array, f format.Filter) *bloom {
	return &bloom{a: a, k: uint64(f.K), m: a.bits()}
}

func (b *bloom) decide(sig uint64, dry bool) bool {
	st := newStream(sig)
	seen := true
	for i := range b.k {
		p := st.at(i, b.m)
		if dry {
			if !b.a.get(p) {
				return false
			}
		} else if !b.a.set(p) {
			seen = false
		}
	}
	return seen
}

func (b *bloom) report(r *Report) {
	r.Bits = b.a.bits()
	per := uint64(1) << b.a.shift
	for i := range r.Shards {
		r.Shards[i] = b.a.count(uint64(i)*per, per)
		r.BitsSet += r.Shards[i]
	}
	fill := float64(r.BitsSet) / float64(r.Bits)
	r.FalseDup = math.Pow(fill, float64(b.k))
	r.Distinct = estimate(r.Bits, b.k, fill)
}

// estimate is the distinct URLs that set a fraction fill of m bits with k
// positions each: −(m/k)·ln(1 − fill) (Swamidass and Baldi, 2007). +Inf
// when every bit is set.
func estimate(m, k uint64, fill float64) float64 {
	return -float64(m) / float64(k) * math.Log1p(-fill)
}

func (b *bloom) array() array { return b.a }
