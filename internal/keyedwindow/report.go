package keyedwindow

import (
	"sync/atomic"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Report is what a windowed keyed state holds now, generation by
// generation.
type Report struct {
	Generation int64    // the current generation (the clock's, or the highest used)
	Held       []uint64 // URLs held, by age: Held[0] stamped this generation, Held[G−1] the oldest live
	Expired    uint64   // slots whose URL has left the window or was forgotten (free for new URLs)
	Slots      uint64   // slots of the whole table
	FalseDup   float64  // chance that the next new URL is answered duplicate (window.KeyedFalseDup)
}

// Live returns the URLs held in the window.
func (r Report) Live() uint64 {
	var n uint64
	for _, h := range r.Held {
		n += h
	}
	return n
}

// Report counts every slot of the table (it reads the whole state, taking
// no lock).
func (t *Table) Report() Report {
	g := t.spec.Generations
	cur := t.spec.Gen(t.now())
	for i := range t.shards {
		cur = max(cur, t.Generation(i))
	}
	r := Report{Generation: cur, Held: make([]uint64, g), Slots: uint64(t.geo.Buckets()) * keyed.SlotsPerBucket * keyed.Shards}
	for i := range t.shards {
		s := &t.shards[i]
		w := t.Generation(i)
		for b := range s.buckets {
			for j := range s.buckets[b] {
				v := atomic.LoadUint32(&s.buckets[b][j])
				if v == 0 {
					break // the bucket's entries end here
				}
				if v>>window.TagBits == 0 { // dead: swept or forgotten
					r.Expired++
					continue
				}
				age := int64((window.Tag(w)-window.SlotTag(v))&(window.Tags-1)) + cur - w
				if age < int64(g) {
					r.Held[age]++
				} else {
					r.Expired++
				}
			}
		}
	}
	r.FalseDup = window.KeyedFalseDup(float64(r.Live()), float64(r.Slots))
	return r
}
