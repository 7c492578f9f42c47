package bitmapwindow

import (
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

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
	Shards     []uint64  // bits set in the live bitmaps, by shard
	// Union is the bits set in any live bitmap: a URL held in several
	// generations (a last-seen state re-stamps) counts once.
	Union uint64
}

// Report counts the bits of every live bitmap (it reads them all, taking
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
	t.finish(&r)
	return r
}

// ReportFrom measures a windowed bitmap state that is not mapped (a state
// in Redis), one shard in memory at a time: read(i, buf) fills buf with
// shard i's bytes, zeros past those it has. Each shard's ages are counted
// at the later of its W and now's generation.
func ReportFrom(spec window.Spec, now time.Time, read func(i int, buf []byte) error) (Report, error) {
	w := make([]uint64, ShardBytes(spec.Generations)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), ShardBytes(spec.Generations))
	sh := make([][]byte, signature.Shards)
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
	t.finish(&r)
	return r, nil
}

func (t *Table) newReport(cur int64) Report {
	g := t.spec.Generations
	return Report{Generation: cur, BitsSet: make([]uint64, g), Fill: make([]float64, g), Shards: make([]uint64, len(t.shards))}
}

// countShard counts shard i's live bits into r, their ages at
// generation cur, and their union.
func (t *Table) countShard(i int, cur int64, r *Report) {
	s := &t.shards[i]
	var live [window.Tags][]uint32
	g := t.spec.Generations
	words := 0
	for age := range g {
		live[age] = t.live(s, cur-int64(age))
		words = max(words, len(live[age]))
	}
	for j := range words {
		var union uint32
		for age, b := range live[:g] {
			if b == nil {
				continue
			}
			v := atomic.LoadUint32(&b[j])
			n := uint64(bits.OnesCount32(v))
			r.BitsSet[age] += n
			r.Shards[i] += n
			union |= v
		}
		r.Union += uint64(bits.OnesCount32(union))
	}
}

func (t *Table) finish(r *Report) {
	for age := range r.Fill {
		r.Fill[age] = float64(r.BitsSet[age]) / float64(uint64(signature.Shards)*signature.BitsPerShard)
	}
	r.FalseDup = window.RingFalseDup(r.Fill)
}
