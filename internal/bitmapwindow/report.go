package bitmapwindow

import (
	"math/bits"
	"sync/atomic"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Report is what a windowed bitmap state holds now, generation by
// generation.
type Report struct {
	Generation int64     // the current generation (the clock's, or the highest used)
	BitsSet    []uint64  // bits set, by age: BitsSet[0] this generation's bitmaps, BitsSet[G−1] the oldest live
	Fill       []float64 // BitsSet over the 2^32 bits of a generation
	FalseDup   float64   // chance that the next new URL is answered duplicate (window.RingFalseDup)
}

// Report counts the bits of every live bitmap (it reads them all, taking
// no lock).
func (t *Table) Report() Report {
	g := t.spec.Generations
	cur := t.spec.Gen(t.now())
	for i := range t.shards {
		cur = max(cur, t.Generation(i))
	}
	r := Report{Generation: cur, BitsSet: make([]uint64, g), Fill: make([]float64, g)}
	for i := range t.shards {
		s := &t.shards[i]
		for age := range g {
			b := t.live(s, cur-int64(age))
			for j := range b {
				r.BitsSet[age] += uint64(bits.OnesCount32(atomic.LoadUint32(&b[j])))
			}
		}
	}
	for age := range g {
		r.Fill[age] = float64(r.BitsSet[age]) / float64(uint64(signature.Shards)*signature.BitsPerShard)
	}
	r.FalseDup = window.RingFalseDup(r.Fill)
	return r
}
