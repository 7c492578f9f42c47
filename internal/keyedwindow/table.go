package keyedwindow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/window"
)

// HeaderBytes is the size of a shard's header, before its buckets.
const HeaderBytes = 64

// Header offsets, 8-byte aligned little-endian int64s.
const (
	offW         = 0  // the highest generation used on the shard
	offPassStart = 8  // the generation the sweep's current pass started
	offCursor    = 16 // the next bucket the sweep clears
)

// ErrShard reports a shard that is not a header and a power-of-two bucket
// area, or a header that cannot be.
var ErrShard = errors.New("keyedwindow: bad shard")

// ErrReadOnly is returned by Decide on a table opened read-only.
var ErrReadOnly = errors.New("keyedwindow: read-only")

// Table decides URLs on a windowed keyed state's 256 shards.
type Table struct {
	spec     window.Spec
	geo      keyed.Geometry // of a shard's bucket area
	shards   [keyed.Shards]shard
	lock     window.Locker
	now      func() time.Time
	readOnly bool
	hook     func(Step, bool)
	scratch  sync.Pool
	// idle is, for each shard, the header advance last found with nothing
	// to do (read and written under the lock).
	idle [keyed.Shards]idleShard
}

// idleShard is a shard's W and sweep progress at which nothing is due.
type idleShard struct {
	w  int64
	st window.SweepState
}

type shard struct {
	head    *[HeaderBytes / 8]int64
	buckets [][keyed.SlotsPerBucket]uint32
}

// Options are a Table's runtime settings, not kept in the state.
type Options struct {
	// Clock replaces time.Now: tests cross generations in milliseconds.
	Clock    func() time.Time
	ReadOnly bool
	// Hook, when set, is called at each step of advancing a shard (tests
	// kill the process there): first tells whether it is the batch's
	// first shard, before any of the batch's URLs is decided.
	Hook func(at Step, first bool)
}

// Step is a point in advancing a shard to the current generation.
type Step uint8

const (
	// StepJumpSweep: half way through the whole sweep after a pause.
	StepJumpSweep Step = 1 + iota
	// StepSwept: the sweeps done, the header not yet written.
	StepSwept
	// StepHeader: the sweep's progress written, W not yet.
	StepHeader
)

// ShardBytes returns the size of a shard whose bucket area is area bytes.
func ShardBytes(area int64) int64 { return HeaderBytes + area }

// NewTable returns the table over shards (each HeaderBytes plus a
// power-of-two bucket area, 8-byte aligned as a mapping is), decided
// under lock.
func NewTable(spec window.Spec, shards [][]byte, lock window.Locker, opts Options) (*Table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(shards) != keyed.Shards {
		return nil, fmt.Errorf("%w: %d shards, want %d", ErrShard, len(shards), keyed.Shards)
	}
	geo, err := keyed.NewGeometry(int64(len(shards[0])) - HeaderBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrShard, err)
	}
	t := &Table{spec: spec, geo: geo, lock: lock, now: opts.Clock, readOnly: opts.ReadOnly, hook: opts.Hook}
	if t.hook == nil {
		t.hook = func(Step, bool) {}
	}
	if t.now == nil {
		t.now = time.Now
	}
	for i := range t.idle {
		t.idle[i].w = -1 // no shard's W: the first batch asks NextSweep
	}
	for i, b := range shards {
		if int64(len(b)) != geo.ShardBytes+HeaderBytes || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
			return nil, fmt.Errorf("%w: shard %02x: %d bytes (want %d, 8-byte aligned)", ErrShard, i, len(b), geo.ShardBytes+HeaderBytes)
		}
		s := &t.shards[i]
		s.head = (*[HeaderBytes / 8]int64)(unsafe.Pointer(&b[0]))
		s.buckets = unsafe.Slice((*[keyed.SlotsPerBucket]uint32)(unsafe.Pointer(&b[HeaderBytes])), geo.Buckets())
		if w := atomic.LoadInt64(&s.head[offW/8]); w < 0 {
			return nil, fmt.Errorf("%w: shard %02x: generation %d", ErrShard, i, w)
		}
	}
	return t, nil
}

// Geometry returns the geometry of a shard's bucket area (keyed.Loc's B1
// and B2 index it).
func (t *Table) Geometry() keyed.Geometry { return t.geo }

// Spec returns the window.
func (t *Table) Spec() window.Spec { return t.spec }

func (t *Table) pair(l keyed.Loc) window.Pair {
	s := &t.shards[l.Shard]
	return window.Pair{B1: s.buckets[l.B1][:], B2: s.buckets[l.B2][:]}
}

// Generation returns shard i's W, the highest generation used on it.
func (t *Table) Generation(i int) int64 { return atomic.LoadInt64(&t.shards[i].head[offW/8]) }

// DecideBatch decides locs in order, res[i] getting each answer and, when
// gens is not nil, gens[i] the generation it was decided at (each shard is
// advanced to the current generation before the first of its URLs is
// decided). Repeats within the batch are duplicates of their first
// occurrence.
func (t *Table) DecideBatch(locs []keyed.Loc, res []window.Result, gens []int64) error {
	if t.readOnly {
		return ErrReadOnly
	}
	sc, _ := t.scratch.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer t.scratch.Put(sc)
	return window.Locked(t.lock, func() {
		t.decideLocked(locs, res, gens, sc)
	})
}

// decideLocked decides locs in their order, in chunks of decideChunk:
// first asking for the chunk's first buckets together (touch), so that
// their misses overlap, then deciding them while their pages are still in
// the TLB. A shard is advanced to the current generation once a batch,
// before the first of its URLs is decided.
func (t *Table) decideLocked(locs []keyed.Loc, res []window.Result, gens []int64, sc *scratch) {
	gen := t.spec.Gen(t.now()) // once a batch: a batch is decided at one instant
	sc.advanced = [keyed.Shards / 64]uint64{}
	first := true
	for lo := 0; lo < len(locs); lo += decideChunk {
		chunk := locs[lo:min(lo+decideChunk, len(locs))]
		t.touch(chunk)
		for k, l := range chunk {
			i := l.Shard
			if bit := uint64(1) << (i % 64); sc.advanced[i/64]&bit == 0 {
				sc.cur[i] = t.advance(int(i), gen, first)
				sc.advanced[i/64] |= bit
				first = false
			}
			cur := sc.cur[i]
			res[lo+k] = t.spec.Decide(t.pair(l), l.FP, cur)
			if gens != nil {
				gens[lo+k] = cur
			}
		}
	}
}

// decideChunk is how many URLs decideLocked asks for at once
// (BenchmarkAgainstKeyed: 32, 64 and 128 within the noise, 46–49 ns a URL;
// 1,024 at once took 57–62, and prefetching 32 ahead of each decision
// 58–64).
const decideChunk = 64

// touch asks for the first slot of each Loc's first bucket (a chunk of a
// batch, or a dry run's batch), in one pass before any is looked at: the
// loads do not depend on each other, so their cache and TLB misses
// overlap (a decision's scan waits for its own), and the decisions then
// find the lines in the cache. The second bucket is read only when the
// first has no empty slot.
func (t *Table) touch(locs []keyed.Loc) {
	if keyed.HasPrefetch { // the CPU's prefetch: it returns at once, and many misses are in flight
		for _, l := range locs {
			keyed.Prefetch(&t.shards[l.Shard].buckets[l.B1][0])
		}
		return
	}
	var sum uint32
	for _, l := range locs {
		sum += atomic.LoadUint32(&t.shards[l.Shard].buckets[l.B1][0])
	}
	sink.Store(sum)
}

// sink keeps touch's loads from being optimised away.
var sink atomic.Uint32

// scratch is one DecideBatch's working memory, reused: each shard's
// current generation, and which shards the batch has advanced.
type scratch struct {
	cur      [keyed.Shards]int64
	advanced [keyed.Shards / 64]uint64
}

// advance moves shard i to the current generation, under its lock: a
// whole sweep with ages counted at the old W after a long pause, the
// scheduled part of the current pass otherwise, then W. It returns the
// generation to decide with.
func (t *Table) advance(i int, gen int64, first bool) int64 {
	s := &t.shards[i]
	w := atomic.LoadInt64(&s.head[offW/8])
	cur := max(w, gen) // a clock behind the state's W never takes it back (Spec.Current)
	st := window.SweepState{
		PassStart: atomic.LoadInt64(&s.head[offPassStart/8]),
		Cursor:    atomic.LoadInt64(&s.head[offCursor/8]),
	}
	if cur == w && t.idle[i] == (idleShard{w, st}) {
		return cur // as the last batch found it: nothing due
	}
	total := int64(len(s.buckets))
	if st.Cursor < 0 || st.Cursor > total || st.PassStart < 0 || st.PassStart > cur {
		st = window.SweepState{PassStart: -window.Tags} // damaged or forged: sweep it all now
	}
	if cur > w && t.spec.JumpNeedsSweep(w, cur) {
		for b := range s.buckets {
			t.spec.SweepJump(s.buckets[b][:], w, cur)
			if b == len(s.buckets)/2 {
				t.hook(StepJumpSweep, first)
			}
		}
		st = window.SweepState{PassStart: cur}
	}
	from, to, next := t.spec.NextSweep(st, total, cur)
	if cur == w && from == to && next == st {
		t.idle[i] = idleShard{w, st} // NextSweep is a function of these: the next batch need not ask again
		return cur                   // nothing due: the usual case within a generation, with no store to the shared header
	}
	for b := from; b < to; b++ {
		t.spec.Sweep(s.buckets[b][:], cur)
	}
	t.hook(StepSwept, first)
	atomic.StoreInt64(&s.head[offPassStart/8], next.PassStart)
	atomic.StoreInt64(&s.head[offCursor/8], next.Cursor)
	t.hook(StepHeader, first)
	atomic.StoreInt64(&s.head[offW/8], cur)
	return cur
}

// Check reports, for each Loc, whether its URL is held now, taking no
// lock and writing nothing.
func (t *Table) Check(locs []keyed.Loc, seen []bool) {
	t.touch(locs)
	now := t.now()
	for j, l := range locs {
		w := t.Generation(int(l.Shard))
		seen[j] = t.spec.Check(t.pair(l), l.FP, w, t.spec.Current(w, now))
	}
}

// Forget makes each Loc's URL new at its next sighting, under its shard's
// lock, and reports in was which of them were held.
func (t *Table) Forget(locs []keyed.Loc, was []bool) error {
	if t.readOnly {
		return ErrReadOnly
	}
	return window.Locked(t.lock, func() {
		for j, l := range locs {
			was[j] = t.spec.Forget(t.pair(l), l.FP, t.advance(int(l.Shard), t.spec.Gen(t.now()), false))
		}
	})
}
