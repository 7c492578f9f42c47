package keyed

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime/debug"
)

// An Inserter stores fingerprints at given places by the ordinary decision
// (look fp up in B1 then B2, store it in the first empty slot) and sets
// res[i] to locs[i]'s Result: New (stored now), Dup (already there) or Full
// (not stored). Set, Redis and redisstate's Redis are Inserters, so a merge
// into a live state is as safe as any decision on it.
type Inserter interface {
	Insert(ctx context.Context, locs []Loc, res []Result) error
}

// MergeCounts are what merging fingerprints into a table did, one count per
// fingerprint of the source.
type MergeCounts struct {
	Merged  uint64 // stored in the destination now
	Present uint64 // the destination had it already
	// NotStored were not stored: both buckets full in the destination.
	// Their URLs may now be answered new there.
	NotStored uint64
	// Ambiguous were inserted in both bucket orders because the source
	// cannot tell which bucket was their first (see MergeShard); each may
	// take one extra slot. They are counted in the three above as well.
	Ambiguous uint64
}

// Add adds o to c.
func (c *MergeCounts) Add(o MergeCounts) {
	c.Merged += o.Merged
	c.Present += o.Present
	c.NotStored += o.NotStored
	c.Ambiguous += o.Ambiguous
}

// Total returns the fingerprints counted.
func (c MergeCounts) Total() uint64 { return c.Merged + c.Present + c.NotStored }

// mergeBatch is how many Locs MergeShard hands an Inserter at once.
const mergeBatch = 4096

// MergeShard re-inserts every fingerprint of src, the bytes of shard i of
// a table of geometry g as stored (a file mapping, or a Redis key read
// whole: little-endian slots; bytes past len(src) are zeros), into dst.
// Merging tables by OR is wrong in this layout: slots hold fingerprints,
// and a lookup stops at the first empty slot of its first bucket.
//
// A fingerprint f in bucket b has buckets b and a = alt(b, f), but the
// bytes do not say which was its first. A lookup scans the first bucket,
// then the second, and stops at the first empty slot, so f must be
// re-inserted in its own order. f is put in its second bucket only when
// the first was full, and slots never clear: if a is not full in src, b
// is certainly the first, and f is inserted as Loc{b, a}. If a is full,
// either may be: f is inserted in both orders (Ambiguous), so that a
// lookup in either finds it, at the cost of an extra slot at most; below
// a table's capacity full buckets are rare. (Once the whole shard is
// merged, every bucket full in src is full in dst too, since each of its
// fingerprints was inserted with it first; the second order is what keeps
// f visible before that: to deciders during the merge, and after a merge
// stopped midway.) A fingerprint is NotStored
// when either of its inserts found both buckets full.
//
// Only slots before a bucket's first empty slot are read: nothing after it
// is visible to a lookup. Any bytes are valid input (a garbage slot is a
// fingerprint no URL has). src longer than a shard is an error.
func MergeShard(ctx context.Context, g Geometry, i uint8, src []byte, dst Inserter) (c MergeCounts, err error) {
	if int64(len(src)) > g.ShardBytes {
		return c, fmt.Errorf("%w: shard %02x: %d bytes to merge into shards of %d", ErrShardSize, i, len(src), g.ShardBytes)
	}
	m := merger{g: g, shard: i, src: src, dst: dst,
		locs: make([]Loc, 0, mergeBatch+1), twin: make([]bool, 0, mergeBatch+1), res: make([]Result, mergeBatch+1)}
	for b := uint32(0); int(b)*BucketBytes < len(src); b++ {
		for j := 0; j < SlotsPerBucket; j++ {
			f := m.slot(b, j)
			if f == 0 {
				break
			}
			if f == Forgotten {
				continue // a forgotten URL is not merged
			}
			a := g.alt(b, f)
			if !m.full(a) {
				m.add(Loc{Shard: i, B1: b, B2: a, FP: f}, false)
			} else {
				m.add(Loc{Shard: i, B1: b, B2: a, FP: f}, false)
				m.add(Loc{Shard: i, B1: a, B2: b, FP: f}, true)
			}
			if len(m.locs) >= mergeBatch {
				if err := m.flush(ctx); err != nil {
					return m.c, err
				}
			}
		}
	}
	err = m.flush(ctx)
	return m.c, err
}

type merger struct {
	g     Geometry
	shard uint8
	src   []byte
	dst   Inserter
	locs  []Loc
	twin  []bool // locs[i] is the second order of locs[i-1]'s fingerprint
	res   []Result
	c     MergeCounts
}

// slot returns slot j of bucket b of the source (0 past its end).
func (m *merger) slot(b uint32, j int) uint32 {
	off := int(b)*BucketBytes + j*4
	if off+4 > len(m.src) {
		return 0
	}
	return binary.LittleEndian.Uint32(m.src[off:])
}

// full reports whether bucket b of the source has no empty slot.
func (m *merger) full(b uint32) bool {
	for j := 0; j < SlotsPerBucket; j++ {
		if m.slot(b, j) == 0 {
			return false
		}
	}
	return true
}

func (m *merger) add(l Loc, twin bool) {
	m.locs = append(m.locs, l)
	m.twin = append(m.twin, twin)
}

// flush inserts the pending Locs and counts them per fingerprint: a pair
// of twins is NotStored if either was Full, else Merged if either was New.
func (m *merger) flush(ctx context.Context) error {
	if len(m.locs) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res := m.res[:len(m.locs)]
	if err := m.dst.Insert(ctx, m.locs, res); err != nil {
		return fmt.Errorf("keyed: merge shard %02x: %w", m.shard, err)
	}
	for k := 0; k < len(res); k++ {
		r := res[k]
		if k+1 < len(res) && m.twin[k+1] {
			k++
			m.c.Ambiguous++
			r = worse(r, res[k])
		}
		switch r {
		case New:
			m.c.Merged++
		case Dup:
			m.c.Present++
		default:
			m.c.NotStored++
		}
	}
	m.locs, m.twin = m.locs[:0], m.twin[:0]
	return nil
}

// worse combines the answers of a fingerprint's two inserts: Full if
// either was (its URL may be invisible), else New if either stored it.
func worse(a, b Result) Result {
	if a == Full || b == Full {
		return Full
	}
	if a == New || b == New {
		return New
	}
	return Dup
}

// Insert decides locs on the Set's table (Table.DecideBatch), for merging;
// see Inserter. It fails only on a fault in the shard memory.
func (s *Set) Insert(_ context.Context, locs []Loc, res []Result) (err error) {
	if s.fault != nil {
		defer s.catch(debug.SetPanicOnFault(true), &err)
	}
	s.t.DecideBatch(locs, res, false)
	return nil
}

// Insert decides locs in Redis (DecideBatch), for merging; see Inserter.
func (r *Redis) Insert(ctx context.Context, locs []Loc, res []Result) error {
	_, err := r.DecideBatch(ctx, locs, res, false)
	return err
}
