package keyedwindow

import (
	"sync/atomic"
	"time"
	"unsafe"

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
	Shards     []uint64 // URLs held, by shard
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
	cur := t.spec.Gen(t.now())
	for i := range t.shards {
		cur = max(cur, t.Generation(i))
	}
	r := t.newReport(cur)
	for i := range t.shards {
		t.countShard(i, cur, &r)
	}
	r.FalseDup = window.KeyedFalseDup(float64(r.Live()), float64(r.Slots))
	return r
}

// ReportFrom measures a windowed keyed state of shards of shardBytes
// bytes that is not mapped (a state in Redis), one shard in memory at a
// time: read(i, buf) fills buf with shard i's bytes, zeros past those it
// has. Each shard's ages are counted at the later of its W and now's
// generation.
func ReportFrom(spec window.Spec, shardBytes int64, now time.Time, read func(i int, buf []byte) error) (Report, error) {
	buf := aligned(shardBytes)
	sh := make([][]byte, keyed.Shards)
	for i := range sh {
		sh[i] = buf // every shard is buf, read in turn
	}
	t, err := NewTable(spec, sh, &window.MemoryLocker{}, Options{ReadOnly: true})
	if err != nil {
		return Report{}, err
	}
	r := t.newReport(spec.Gen(now))
	for i := range sh {
		clear(buf)
		if err := read(i, buf); err != nil {
			return Report{}, err
		}
		cur := spec.Current(t.Generation(i), now)
		r.Generation = max(r.Generation, cur)
		t.countShard(i, cur, &r)
	}
	r.FalseDup = window.KeyedFalseDup(float64(r.Live()), float64(r.Slots))
	return r, nil
}

// aligned returns n zero bytes, 8-byte aligned.
func aligned(n int64) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), n)
}

func (t *Table) newReport(cur int64) Report {
	return Report{Generation: cur, Held: make([]uint64, t.spec.Generations), Shards: make([]uint64, len(t.shards)),
		Slots: uint64(t.geo.Buckets()) * keyed.SlotsPerBucket * keyed.Shards}
}

// countShard counts shard i's slots into r, their ages at generation
// cur.
func (t *Table) countShard(i int, cur int64, r *Report) {
	g := t.spec.Generations
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
				r.Shards[i]++
			} else {
				r.Expired++
			}
		}
	}
}
