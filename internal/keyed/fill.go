package keyed

import (
	"encoding/binary"
	"sync/atomic"
)

// Fill is the measured occupancy of a table: Hist[k] buckets hold k
// non-empty slots; Shard[i] slots of shard i are occupied.
type Fill struct {
	Hist    [SlotsPerBucket + 1]uint64
	Buckets uint64
	Shard   [Shards]uint64
}

// Fill counts the occupied slots of every bucket. It reads the whole table;
// concurrent deciders may add fingerprints while it runs, which it counts
// or not.
func (t *Table) Fill() Fill {
	var f Fill
	for si, s := range t.shards {
		for i := range s {
			n := 0
			for j := range s[i] {
				if atomic.LoadUint32(&s[i][j]) != 0 {
					n++
				}
			}
			f.Hist[n]++
			f.Shard[si] += uint64(n)
		}
		f.Buckets += uint64(len(s))
	}
	return f
}

// AddBytes counts the buckets in b, bytes of shard i as stored (in a file
// or a Redis key: whole buckets of little-endian slots), into f. Bytes past
// the last whole bucket are ignored; the caller passes whole shards or
// whole-bucket pieces of them.
func (f *Fill) AddBytes(i uint8, b []byte) {
	for ; len(b) >= BucketBytes; b = b[BucketBytes:] {
		n := 0
		for j := 0; j < BucketBytes; j += 4 {
			if binary.LittleEndian.Uint32(b[j:]) != 0 {
				n++
			}
		}
		f.Hist[n]++
		f.Shard[i] += uint64(n)
		f.Buckets++
	}
}

// Occupied returns the number of non-empty slots: the URLs stored.
func (f Fill) Occupied() uint64 {
	var n uint64
	for k, c := range f.Hist {
		n += uint64(k) * c
	}
	return n
}

// Ratio returns the fraction of slots occupied.
func (f Fill) Ratio() float64 {
	if f.Buckets == 0 {
		return 0
	}
	return float64(f.Occupied()) / float64(f.Buckets*SlotsPerBucket)
}

// Occupancy returns the measured distribution of buckets by occupancy, for
// the formulas of Occupancy (FalseDup, NotStored).
func (f Fill) Occupancy() Occupancy {
	var o Occupancy
	if f.Buckets == 0 {
		o.Frac[0] = 1
		return o
	}
	for k, c := range f.Hist {
		o.Frac[k] = float64(c) / float64(f.Buckets)
	}
	return o
}
