package keyed

import (
	"fmt"
	"math/bits"
)

const (
	// Shards is the number of shards of every state, as in the bitmap layout.
	Shards = 256
	// SlotsPerBucket is the number of 32-bit slots in a 64-byte bucket.
	SlotsPerBucket = 16
	// BucketBytes is the size of a bucket: one cache line.
	BucketBytes = SlotsPerBucket * 4
	// MinShardBytes is the smallest shard of a state: 2 MiB, 2^15 buckets,
	// as in the bitmap layout. Plan never goes below it.
	MinShardBytes = 2 << 20
	// MinTableShardBytes is the smallest shard a Table or Geometry takes:
	// two buckets, for tests and simulations of a table reaching full.
	MinTableShardBytes = 2 * BucketBytes
	// MaxShardBytes is the largest shard the 64-bit hash can address: 24
	// bucket bits, 2^24 buckets, 1 GiB (a 256 GiB state).
	MaxShardBytes = 1 << 30
)

// Geometry is the shape of a keyed state: the size of each of its 256
// shards.
type Geometry struct {
	ShardBytes int64
	mask       uint32 // buckets per shard − 1
	fpMask     uint32 // 0 for 32-bit fingerprints; tests narrow them to measure the formula
}

// NewGeometry returns the geometry of 256 shards of shardBytes each, which
// must be a power of two from MinTableShardBytes to MaxShardBytes (a state
// on disk or in Redis takes at least MinShardBytes).
func NewGeometry(shardBytes int64) (Geometry, error) {
	if shardBytes < MinTableShardBytes || shardBytes > MaxShardBytes || bits.OnesCount64(uint64(shardBytes)) != 1 {
		return Geometry{}, fmt.Errorf("%w: %d bytes (a power of two from %d to %d)", ErrShardSize, shardBytes, MinTableShardBytes, MaxShardBytes)
	}
	return Geometry{ShardBytes: shardBytes, mask: uint32(shardBytes/BucketBytes) - 1}, nil
}

// Buckets returns the number of buckets per shard.
func (g Geometry) Buckets() uint32 { return g.mask + 1 }

// Slots returns the number of slots of the whole state.
func (g Geometry) Slots() uint64 { return uint64(g.Buckets()) * SlotsPerBucket * Shards }

// StateBytes returns the size of the whole state.
func (g Geometry) StateBytes() int64 { return g.ShardBytes * Shards }

// Forgotten is the slot value of a forgotten URL (Table.Forget): no
// fingerprint is 0 (an empty slot) or Forgotten, so a scan passes over it
// as over another URL's, and the slot is never used again: slots stay a
// prefix of their bucket, which the lock-free decision needs.
const Forgotten uint32 = 0xFFFFFFFF

// A Loc is where a URL's fingerprint lives: its shard, its two buckets in
// that shard, and the fingerprint (never 0 or Forgotten).
type Loc struct {
	Shard  uint8
	B1, B2 uint32
	FP     uint32
}

// Locate splits a keyed hash into its Loc.
func (g Geometry) Locate(h uint64) Loc {
	fp := uint32(h)
	if g.fpMask != 0 {
		fp &= g.fpMask
	}
	switch fp {
	case 0:
		fp = 1
	case Forgotten:
		fp = Forgotten - 1
	}
	b1 := uint32(h>>32) & g.mask
	return Loc{Shard: uint8(h >> 56), B1: b1, B2: g.alt(b1, fp), FP: fp}
}

// alt is the other bucket of fp given one of them: an involution, so either
// bucket gives the other, and never the same bucket.
func (g Geometry) alt(b, fp uint32) uint32 {
	return b ^ (uint32((uint64(fp)*0x9E3779B97F4A7C15)>>40)&g.mask | 1)
}

// Sum returns a keyed hash that Locate maps to l (l's buckets masked into
// the geometry; B2 is recomputed from B1 and FP): so a Loc, such as one
// MergeShard re-inserts, can be decided by anything that takes signatures.
func (g Geometry) Sum(l Loc) uint64 {
	return uint64(l.Shard)<<56 | uint64(l.B1&g.mask)<<32 | uint64(l.FP)
}
