package bitcheck

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Fill counts the set bits of every shard.
type Fill struct {
	Shard [signature.Shards]uint64
}

// Fill counts the bits set now. It reads all 512 MiB; concurrent setters
// may add bits while it runs, which it counts or not. A shard truncated
// under the process makes it fail with shardfile.ErrFault.
func (s *Set) Fill() (f Fill, err error) {
	defer s.catch(guard(), nil, &err)
	for i, ws := range s.words {
		n := 0
		for j := range ws {
			n += bits.OnesCount64(atomic.LoadUint64(&ws[j]))
		}
		f.Shard[i] = uint64(n)
	}
	return f, nil
}

// Bits is the number of bits in the whole bitmap: 2^32.
const Bits = float64(signature.Shards) * signature.BitsPerShard

// Total returns the number of set bits.
func (f Fill) Total() uint64 {
	var t uint64
	for _, n := range f.Shard {
		t += n
	}
	return t
}

// Ratio returns the fraction of bits set. It is also the chance that the
// next new URL is wrongly reported as a duplicate: its signature's bit is
// already set by another URL.
func (f Fill) Ratio() float64 { return float64(f.Total()) / Bits }

// Estimate returns the estimated number of distinct URLs that set the bits,
// by linear counting: n ≈ −m·ln(1 − set/m). It is +Inf for a full bitmap.
func (f Fill) Estimate() float64 {
	r := f.Ratio()
	if r >= 1 {
		return math.Inf(1)
	}
	return -Bits * math.Log1p(-r)
}
