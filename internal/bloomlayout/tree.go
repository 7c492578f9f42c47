package bloomlayout

import (
	"math"

	"github.com/urldedupd/urldedupd/internal/dsbf"
	"github.com/urldedupd/urldedupd/internal/format"
)

// Tree is the shape of a DSBF state: which leaf a URL goes to at each
// depth, when a leaf splits and where its children are. It is what a
// local state and a state in Redis (whose leaves are keys) share.
type Tree struct {
	c      int
	k      int
	m      uint64 // filter bits of a leaf
	leaves int
	depth  []int    // of each leaf, by its number
	limit  []uint64 // URLs at which each leaf splits
}

// NewTree returns the tree of a DSBF state of metadata m.
func NewTree(m format.Meta) *Tree {
	f := m.Filter
	t := &Tree{c: f.Children, k: f.K, m: uint64(m.Sizes.ShardBytes)*8 - headerBits, leaves: m.Sizes.Shards}
	p := dsbf.Params{C: f.Children, LeafBits: t.m, K: f.K, FMax: f.FMax, Ratio: 0.5}
	t.depth, t.limit = make([]int, t.leaves), make([]uint64, t.leaves)
	first, width := 0, t.c // leaves of depth d are first … first+width−1
	for d := 1; first < t.leaves; d++ {
		for s := first; s < min(first+width, t.leaves); s++ {
			t.depth[s], t.limit[s] = d, p.LeafCapacity(d)
		}
		first, width = first+width, width*t.c
	}
	return t
}

// K is the positions a URL sets in a leaf; LeafBits the filter bits of a
// leaf (its shard less the header).
func (t *Tree) K() int { return t.k }

// LeafBits returns the filter bits of a leaf.
func (t *Tree) LeafBits() uint64 { return t.m }

// First returns the first-level leaf of signature sig.
func (t *Tree) First(sig uint64) int { return loc(sig, 1, t.c) }

// Child returns the leaf sig goes to below leaf s, once s has split.
func (t *Tree) Child(s int, sig uint64) int {
	first, _ := t.children(s)
	return first + loc(sig, t.depth[s]+1, t.c)
}

// Limit returns the URLs at which leaf s splits, and whether it can (its
// children are numbered under 256).
func (t *Tree) Limit(s int) (uint64, bool) {
	_, ok := t.children(s)
	return t.limit[s], ok
}

// Positions appends sig's K positions in a leaf (0 ≤ p < LeafBits) to
// dst.
func (t *Tree) Positions(dst []uint64, sig uint64) []uint64 {
	st := newStream(sig)
	for i := range uint64(t.k) {
		dst = append(dst, st.at(i, t.m))
	}
	return dst
}

// Split reports whether leaf s counts as split when its header's flag is
// flag: a flag on a leaf that cannot split (a damaged or forged state)
// is ignored, so the leaf is read and written as a live one.
func (t *Tree) Split(s int, flag bool) bool {
	_, ok := t.children(s)
	return flag && ok
}

func (t *Tree) children(s int) (int, bool) {
	first := t.c * (s + 1)
	return first, first+t.c <= t.leaves
}

// Capacity returns the URLs the tree holds within its bounds, its URLs
// spread evenly by the location hashes: every leaf of each depth fills to
// its bound, down to the first depth with a leaf whose children would be
// past leaf 255 (which can only fill past its bound).
func (t *Tree) Capacity() uint64 {
	var n uint64
	first, width := 0, t.c
	for first < t.leaves {
		n += uint64(width) * t.limit[first]
		for s := first; s < first+width; s++ {
			if _, ok := t.children(s); !ok {
				return n
			}
		}
		first, width = first+width, width*t.c
	}
	return n
}

// Leaf is what a report needs to know of one leaf: whether it has split,
// the URLs stored in it (its header), and the bits set in its filter.
type Leaf struct {
	Split   bool
	URLs    uint64
	BitsSet uint64
}

// Report fills r's DSBF part from the leaves' headers and bit counts.
func (t *Tree) Report(r *Report, leaves []Leaf) {
	r.Bits = uint64(t.leaves) * t.m
	fill := make([]float64, t.leaves)
	exists := make([]bool, t.leaves)
	for s := range leaves {
		leaves[s].Split = t.Split(s, leaves[s].Split)
	}
	for s, l := range leaves {
		r.Shards[s] = l.BitsSet
		r.BitsSet += l.BitsSet
		fill[s] = float64(l.BitsSet) / float64(t.m)
	}
	r.Capacity = t.Capacity()
	for s := range min(t.c, t.leaves) {
		exists[s] = true
	}
	r.LeafURLs = r.LeafURLs[:0]
	for s, l := range leaves {
		if !exists[s] {
			continue
		}
		r.Leaves++
		r.Height = max(r.Height, t.depth[s])
		r.Distinct += float64(l.URLs)
		if l.Split {
			first, _ := t.children(s)
			for j := range t.c {
				exists[first+j] = true
			}
			continue
		}
		r.LeafURLs = append(r.LeafURLs, l.URLs)
		if l.URLs >= t.limit[s] {
			r.OverBound++
		}
	}
	// The chance a new URL is reported present: along its path, each leaf
	// it consults says present with chance fill^k.
	var rate func(s int) float64
	rate = func(s int) float64 {
		p := math.Pow(fill[s], float64(t.k))
		if !leaves[s].Split {
			return p
		}
		first, _ := t.children(s)
		var below float64
		for j := range t.c {
			below += rate(first + j)
		}
		return 1 - (1-p)*(1-below/float64(t.c))
	}
	for s := range min(t.c, t.leaves) {
		r.FalseDup += rate(s) / float64(t.c)
	}
}
