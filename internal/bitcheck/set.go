package bitcheck

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

const wordsPerShard = format.ShardBytes / 8

type shardWords = [wordsPerShard]uint64

// Set tests and sets signature bits in an open state.
//
// A Set is safe for concurrent use by any number of goroutines. It is valid
// until its Dir is closed.
type Set struct {
	dir      *shardfile.Dir
	words    [signature.Shards]*shardWords
	readOnly bool
	newN     atomic.Uint64
	dupN     atomic.Uint64
}

// Counts are the decisions a Set has made since it was created.
type Counts struct {
	New uint64 // bits that were clear and are now set
	Dup uint64 // bits that were already set
}

// New returns a Set over the shards of d.
func New(d *shardfile.Dir) *Set {
	s := &Set{dir: d, readOnly: d.ReadOnly()}
	for i := range s.words {
		b := d.Shard(i)
		s.words[i] = (*shardWords)(unsafe.Pointer(unsafe.SliceData(b)))
	}
	return s
}

// ReadOnly reports whether the Set can only test.
func (s *Set) ReadOnly() bool { return s.readOnly }

// Counts returns the decisions made so far.
func (s *Set) Counts() Counts { return Counts{New: s.newN.Load(), Dup: s.dupN.Load()} }

// word returns the word holding sig's bit and the bit's mask in it.
func (s *Set) word(sig signature.Signature) (*uint64, uint64) {
	b := sig.Bit()
	return &s.words[sig.Shard()][b>>6], 1 << ((b & 63) ^ bitSwizzle)
}

// Test reports whether sig's bit is set, without setting it.
func (s *Set) Test(sig signature.Signature) bool {
	w, m := s.word(sig)
	return atomic.LoadUint64(w)&m != 0
}

// TestAndSet sets sig's bit and reports whether it was already set: true
// means a duplicate, false means sig is new. It panics on a read-only Set.
//
// Test, TestAndSet and the batch forms do not catch a fault on the mapping
// (a shard truncated under the process): called directly, that is SIGBUS.
// Decide and Check do, and return shardfile.ErrFault.
func (s *Set) TestAndSet(sig signature.Signature) (seen bool) {
	s.mustWrite()
	w, m := s.word(sig)
	seen = atomic.LoadUint64(w)&m != 0 || atomic.OrUint64(w, m)&m != 0
	if seen {
		s.dupN.Add(1)
	} else {
		s.newN.Add(1)
	}
	return seen
}

// TestBatch sets seen[i] to whether sigs[i]'s bit is set, without setting
// anything. seen must be at least as long as sigs.
func (s *Set) TestBatch(sigs []signature.Signature, seen []bool) {
	seen = seen[:len(sigs)]
	for i, sig := range sigs {
		w, m := s.word(sig)
		seen[i] = atomic.LoadUint64(w)&m != 0
	}
}

// TestAndSetBatch sets the bit of every signature in sigs and sets seen[i]
// to whether sigs[i]'s bit was already set, as if TestAndSet were called on
// each in order: of repeated signatures within the batch, the first is new
// and the rest are duplicates. It returns the number of new signatures.
// seen must be at least as long as sigs. Batches of a few hundred to a few
// thousand signatures hide memory latency best.
func (s *Set) TestAndSetBatch(sigs []signature.Signature, seen []bool) (fresh int) {
	s.mustWrite()
	s.TestBatch(sigs, seen) // plain loads: the misses overlap
	seen = seen[:len(sigs)]
	for i, sig := range sigs {
		if seen[i] {
			continue
		}
		w, m := s.word(sig) // now in cache
		if atomic.OrUint64(w, m)&m != 0 {
			seen[i] = true
			continue
		}
		fresh++
	}
	s.newN.Add(uint64(fresh))
	s.dupN.Add(uint64(len(sigs) - fresh))
	return fresh
}

func (s *Set) mustWrite() {
	if s.readOnly {
		panic("bitcheck: set on a read-only state")
	}
}

// bitSwizzle maps a bit's offset within its 8 bytes on disk (LSB-first
// bytes in address order) to its position in the native uint64: the
// identity on little-endian machines, a byte swap on big-endian ones.
var bitSwizzle = func() uint32 {
	x := uint64(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return 0
	}
	return 56
}()

// Decide is TestAndSetBatch, or TestBatch when dryRun, in the form every
// backend shares. It fails only when a shard of the batch was truncated
// under the process: shardfile.ErrFault, naming the shard; bits of the
// batch in other shards may then be set, and nothing of it is answered.
func (s *Set) Decide(_ context.Context, sigs []signature.Signature, seen []bool, dryRun bool) (err error) {
	defer s.catch(guard(), nil, &err)
	if dryRun {
		s.TestBatch(sigs, seen)
	} else {
		s.TestAndSetBatch(sigs, seen)
	}
	return nil
}

// Check is Test, or TestAndSet unless dryRun, for one signature, returning
// shardfile.ErrFault instead of dying when its shard was truncated under
// the process. Prefer Decide on batches: Check costs a defer per call.
func (s *Set) Check(sig signature.Signature, dryRun bool) (seen bool, err error) {
	defer s.catch(guard(), nil, &err)
	if dryRun {
		return s.Test(sig), nil
	}
	return s.TestAndSet(sig), nil
}
