package bloomlayout

import (
	"runtime/debug"
)

// Report is what a state of the Bloom family measures of itself.
type Report struct {
	// Bits are the filter bits (for DSBF, of every leaf, headers not
	// counted); BitsSet those set.
	Bits, BitsSet uint64
	// FalseDup is the chance that the next new URL is reported a
	// duplicate, by the layout's formula from the fills measured: fill^K
	// (Bloom); 1 − Π(1 − f1^(K−1)·f2) over groups (MDBF); along a URL's
	// path, 1 − Π(1 − fill^K) over the leaves it consults, averaged over
	// paths (DSBF).
	FalseDup float64
	// Distinct is the distinct URLs held: counted in the leaf headers
	// (DSBF), estimated from the fill (Bloom; MDBF, where it is the URLs
	// loaded into their own group: a new URL found in another group, a
	// false duplicate, is not inserted).
	Distinct float64
	// Shards are the bits set in each shard.
	Shards []uint64

	// DSBF only: the leaves of the tree (split or live), its height, the
	// live leaves past their bound that cannot split (their children
	// would be past leaf 255), the URLs in each live leaf, and the URLs
	// the tree holds within its bounds (Tree.Capacity).
	Leaves, Height, OverBound int
	LeafURLs                  []uint64
	Capacity                  uint64
}

// Report measures the state: it reads every shard.
func (s *Set) Report() (r Report, err error) {
	if s.fault != nil {
		defer s.catch(debug.SetPanicOnFault(true), &err)
	}
	r.Shards = make([]uint64, s.meta.Sizes.Shards)
	s.l.report(&r)
	return r, nil
}
