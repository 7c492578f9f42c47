package bitmapwindow

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Sizes of a shard.
const (
	HeaderBytes = 4096                       // W, then the generation of each bitmap of the ring
	BitmapBytes = signature.BitsPerShard / 8 // 2 MiB: a bit for each of the 2^24 signatures of a shard
)

// ShardBytes returns the size of a shard of a window of g generations.
func ShardBytes(g int) int64 { return HeaderBytes + int64(g+1)*BitmapBytes }

// ErrShard reports shards of the wrong number, size or alignment.
var ErrShard = errors.New("bitmapwindow: bad shard")

// ErrReadOnly is returned by Decide on a table opened read-only.
var ErrReadOnly = errors.New("bitmapwindow: read-only")

// Options are a Table's runtime settings.
type Options struct {
	Clock    func() time.Time // replaces time.Now
	ReadOnly bool
	// Hook, when set, is called at each step of advancing a shard.
	Hook func(at Step)
}

// Step is a point in advancing a shard.
type Step uint8

const (
	// StepZeroed: the current generation's bitmap half zeroed.
	StepZeroed Step = 1 + iota
	// StepMarked: the bitmap zeroed and marked, W not yet written.
	StepMarked
)

// Table decides signatures on a windowed bitmap state's 256 shards.
type Table struct {
	spec     window.Spec
	ring     int64
	shards   [signature.Shards]shard
	lock     window.Locker
	now      func() time.Time
	readOnly bool
	hook     func(Step)
	scratch  sync.Pool
}

type shard struct {
	w     *int64
	marks []int64    // generation + 1 of each bitmap of the ring; 0: none
	bits  [][]uint32 // the ring's bitmaps, as 32-bit words
}

// NewTable returns the table over shards (each ShardBytes(Generations), 8-
// byte aligned, as a mapping is), decided under lock.
func NewTable(spec window.Spec, shards [][]byte, lock window.Locker, opts Options) (*Table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if len(shards) != signature.Shards {
		return nil, fmt.Errorf("%w: %d shards, want %d", ErrShard, len(shards), signature.Shards)
	}
	t := &Table{spec: spec, ring: int64(spec.Generations + 1), lock: lock, now: opts.Clock, readOnly: opts.ReadOnly, hook: opts.Hook}
	if t.now == nil {
		t.now = time.Now
	}
	if t.hook == nil {
		t.hook = func(Step) {}
	}
	size := ShardBytes(spec.Generations)
	for i, b := range shards {
		if int64(len(b)) != size || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
			return nil, fmt.Errorf("%w: shard %02x: %d bytes (want %d, 8-byte aligned)", ErrShard, i, len(b), size)
		}
		s := &t.shards[i]
		s.w = (*int64)(unsafe.Pointer(&b[0]))
		s.marks = unsafe.Slice((*int64)(unsafe.Pointer(&b[8])), t.ring)
		for r := range t.ring {
			off := HeaderBytes + r*BitmapBytes
			s.bits = append(s.bits, unsafe.Slice((*uint32)(unsafe.Pointer(&b[off])), BitmapBytes/4))
		}
		if atomic.LoadInt64(s.w) < 0 {
			return nil, fmt.Errorf("%w: shard %02x: generation %d", ErrShard, i, atomic.LoadInt64(s.w))
		}
	}
	return t, nil
}

// Spec returns the window.
func (t *Table) Spec() window.Spec { return t.spec }

// Generation returns shard i's W, the highest generation used on it.
func (t *Table) Generation(i int) int64 { return atomic.LoadInt64(t.shards[i].w) }

// bit returns the word and mask of sig's bit, in Redis's SETBIT order:
// byte b/8, most significant bit first, in a little-endian 32-bit word.
func bit(sig signature.Signature) (word uint32, mask uint32) {
	b := sig.Bit()
	by := b / 8
	return by / 4, 1 << ((by%4)*8 + 7 - b%8)
}

// live returns the bitmap of generation h in shard s, or nil when no
// bitmap holds it.
func (t *Table) live(s *shard, h int64) []uint32 {
	if h < 0 {
		return nil
	}
	r := h % t.ring
	if atomic.LoadInt64(&s.marks[r]) != h+1 {
		return nil
	}
	return s.bits[r]
}

// DecideBatch decides sigs in order, seen[i] getting each answer (true: a
// duplicate) and, when gens is not nil, gens[i] the generation it was
// decided at. Repeats within the batch are duplicates of their first
// occurrence.
func (t *Table) DecideBatch(sigs []signature.Signature, seen []bool, gens []int64) error {
	if t.readOnly {
		return ErrReadOnly
	}
	sc, _ := t.scratch.Get().(*scratch)
	if sc == nil {
		sc = new(scratch)
	}
	defer t.scratch.Put(sc)
	sc.order = window.ByShard(sc.order, sigs, func(s signature.Signature) uint8 { return s.Shard() })
	return window.Locked(t.lock, func() {
		t.decideLocked(sigs, sc.order, seen, gens)
	})
}

func (t *Table) decideLocked(sigs []signature.Signature, order []int32, seen []bool, gens []int64) {
	for lo := 0; lo < len(order); {
		i := int(sigs[order[lo]].Shard())
		hi := lo + 1
		for hi < len(order) && int(sigs[order[hi]].Shard()) == i {
			hi++
		}
		cur := t.advance(i)
		s := &t.shards[i]
		for _, j := range order[lo:hi] {
			seen[j] = t.decide(s, sigs[j], cur)
			if gens != nil {
				gens[j] = cur
			}
		}
		lo = hi
	}
}

func (t *Table) decide(s *shard, sig signature.Signature, cur int64) bool {
	w, m := bit(sig)
	now := s.bits[cur%t.ring]
	for h := cur - 1; h > cur-int64(t.spec.Generations); h-- {
		if b := t.live(s, h); b != nil && atomic.LoadUint32(&b[w])&m != 0 {
			if t.spec.Policy == window.LastSeen {
				atomic.OrUint32(&now[w], m)
			}
			return true
		}
	}
	return atomic.OrUint32(&now[w], m)&m != 0
}

// advance moves shard i to the current generation, under its lock: the
// current generation's bitmap zeroed and marked if it holds another, then
// W. It returns the generation to decide with.
func (t *Table) advance(i int) int64 {
	s := &t.shards[i]
	w := atomic.LoadInt64(s.w)
	cur := t.spec.Current(w, t.now())
	r := cur % t.ring
	if atomic.LoadInt64(&s.marks[r]) != cur+1 {
		b := s.bits[r]
		half := len(b) / 2
		clear(b[:half])
		t.hook(StepZeroed)
		clear(b[half:])
		atomic.StoreInt64(&s.marks[r], cur+1)
		t.hook(StepMarked)
	}
	if cur != w {
		atomic.StoreInt64(s.w, cur)
	}
	return cur
}

// Check reports, for each signature, whether it is held now, taking no lock
// and writing nothing.
func (t *Table) Check(sigs []signature.Signature, seen []bool) {
	now := t.now()
	for j, sig := range sigs {
		s := &t.shards[sig.Shard()]
		cur := t.spec.Current(atomic.LoadInt64(s.w), now)
		w, m := bit(sig)
		seen[j] = false
		for h := cur; h > cur-int64(t.spec.Generations); h-- {
			if b := t.live(s, h); b != nil && atomic.LoadUint32(&b[w])&m != 0 {
				seen[j] = true
				break
			}
		}
	}
}

// scratch is one DecideBatch's working memory, reused.
type scratch struct{ order []int32 }
