package keyed

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// A Result is the answer for one URL.
type Result uint8

const (
	// New means the URL was absent and is now stored (in a dry run: it was
	// absent and there is room for it).
	New Result = iota
	// Dup means the URL's fingerprint was found: a duplicate.
	Dup
	// Full means the URL was absent and both its buckets are full: it is
	// answered new but not stored, so a repeat will be answered new again.
	Full
)

// Seen reports whether r is a duplicate.
func (r Result) Seen() bool { return r == Dup }

func (r Result) String() string {
	switch r {
	case New:
		return "new"
	case Dup:
		return "dup"
	case Full:
		return "new (not stored: table full)"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Counts are the decisions a Table has made since it was made.
type Counts struct {
	New  uint64 // absent, now stored
	Dup  uint64 // found
	Full uint64 // absent and not stored: both buckets full ("not stored: table full")
}

type bucket = [SlotsPerBucket]uint32

// A Table decides URLs' fingerprints in 256 shards of memory, typically
// files mapped MAP_SHARED by many processes at once.
//
// A Table is safe for concurrent use by any number of goroutines and, over
// shared mappings, processes. Any bytes in the shards are a valid table
// (garbage is only fingerprints no URL has): nothing in them can make it
// panic.
type Table struct {
	geo      Geometry
	shards   [Shards][]bucket
	readOnly bool
	newN     atomic.Uint64
	dupN     atomic.Uint64
	fullN    atomic.Uint64
	touched  atomic.Uint32 // what DecideBatch's first loads read, kept so no compiler drops them
}

// NewTable returns a Table over shards: 256 slices of one power-of-two size
// from MinShardBytes to MaxShardBytes, 4-byte aligned (a mapping is). The
// Table uses the memory in place; it is valid as long as the memory is.
// A readOnly Table only answers dry runs.
func NewTable(shards [][]byte, readOnly bool) (*Table, error) {
	if len(shards) != Shards {
		return nil, fmt.Errorf("%w: %d, want %d", ErrShardCount, len(shards), Shards)
	}
	g, err := NewGeometry(int64(len(shards[0])))
	if err != nil {
		return nil, err
	}
	t := &Table{geo: g, readOnly: readOnly}
	for i, b := range shards {
		if int64(len(b)) != g.ShardBytes {
			return nil, fmt.Errorf("%w: shard %02x has %d bytes, shard 00 %d", ErrShardSize, i, len(b), g.ShardBytes)
		}
		p := unsafe.SliceData(b)
		if uintptr(unsafe.Pointer(p))%4 != 0 {
			return nil, fmt.Errorf("%w: shard %02x is not 4-byte aligned", ErrShardSize, i)
		}
		t.shards[i] = unsafe.Slice((*bucket)(unsafe.Pointer(p)), g.Buckets())
	}
	return t, nil
}

// Geometry returns the table's geometry.
func (t *Table) Geometry() Geometry { return t.geo }

// ReadOnly reports whether the table only answers dry runs.
func (t *Table) ReadOnly() bool { return t.readOnly }

// Counts returns the decisions made so far.
func (t *Table) Counts() Counts {
	return Counts{New: t.newN.Load(), Dup: t.dupN.Load(), Full: t.fullN.Load()}
}

// buckets returns l's two buckets. A Loc from elsewhere (a hostile caller)
// is masked into range, so it never panics.
func (t *Table) buckets(l Loc) (*bucket, *bucket) {
	s := t.shards[l.Shard]
	return &s[l.B1&t.geo.mask], &s[l.B2&t.geo.mask]
}

// Decide looks l's fingerprint up and, when absent, stores it in the first
// empty slot of b1 then b2 by one compare-and-swap. It panics on a
// read-only table (use Query).
func (t *Table) Decide(l Loc) Result {
	t.mustWrite()
	r := t.decide(l)
	t.count(r)
	return r
}

// Query looks l's fingerprint up without storing anything: Dup when found,
// New when absent with room, Full when absent and both buckets are full.
func (t *Table) Query(l Loc) Result {
	b1, b2 := t.buckets(l)
	fp := toSlot(l.FP)
	if r, done := query(b1, fp); done {
		return r
	}
	r, _ := query(b2, fp)
	return r
}

// query scans b up to its first empty slot: Dup if fp is there, New (done)
// at an empty slot, Full (not done) when b is full without fp.
func query(b *bucket, fp uint32) (Result, bool) {
	for i := range b {
		switch atomic.LoadUint32(&b[i]) {
		case fp:
			return Dup, true
		case 0:
			return New, true
		}
	}
	return Full, false
}

func (t *Table) decide(l Loc) Result {
	b1, b2 := t.buckets(l)
	fp := toSlot(l.FP)
	if r, done := insert(b1, fp); done {
		return r
	}
	r, _ := insert(b2, fp)
	return r
}

// insert scans b for fp; at the first empty slot it tries to store fp
// there. A failed CAS means another process filled that slot first: with
// fp (a duplicate) or another fingerprint (go on to the next slot).
func insert(b *bucket, fp uint32) (Result, bool) {
	for i := range b {
		v := atomic.LoadUint32(&b[i])
		if v == 0 {
			if atomic.CompareAndSwapUint32(&b[i], 0, fp) {
				return New, true
			}
			v = atomic.LoadUint32(&b[i])
		}
		if v == fp {
			return Dup, true
		}
	}
	return Full, false
}

// Forget marks l's fingerprint's slot Forgotten, so that its next
// sighting is new, and reports whether it was there. The slot stays used
// (see Forgotten): a state that forgets often fills sooner; the
// keyed-window layout reuses such slots.
func (t *Table) Forget(l Loc) bool {
	t.mustWrite()
	b1, b2 := t.buckets(l)
	fp := toSlot(l.FP)
	for _, b := range [2]*bucket{b1, b2} {
		for i := range b {
			switch atomic.LoadUint32(&b[i]) {
			case fp:
				if atomic.CompareAndSwapUint32(&b[i], fp, Forgotten) {
					return true
				}
				return false // forgotten by another process meanwhile
			case 0:
				return false // the bucket's entries end here
			}
		}
	}
	return false
}

func (t *Table) count(r Result) {
	switch r {
	case New:
		t.newN.Add(1)
	case Dup:
		t.dupN.Add(1)
	default:
		t.fullN.Add(1)
	}
}

func (t *Table) mustWrite() {
	if t.readOnly {
		panic(ErrReadOnly)
	}
}

// toSlot converts a fingerprint to its in-memory slot value: slots are
// little-endian on disk (and in Redis), so big-endian machines swap bytes.
func toSlot(fp uint32) uint32 {
	if bigEndian {
		return bits.ReverseBytes32(fp)
	}
	return fp
}

var bigEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}()
