package bloomlayout

import (
	"math"

	"github.com/urldedupd/urldedupd/pkg/dsbf"
	"github.com/urldedupd/urldedupd/pkg/format"
)

// tree is the dynamic splittable Bloom filter: one leaf per shard.
type tree struct {
	a      array
	c      int
	k      uint64
	m      uint64 // filter bits of a leaf
	leaves int
	depth  []int    // of each leaf, by its number
	limit  []uint64 // URLs at which each leaf splits
}

const headerBits = format.LeafHeaderBytes * 8

func newDSBF(a array, f format.Filter) *tree {
	t := &tree{a: a, c: f.Children, k: uint64(f.K), m: uint64(1)<<a.shift - headerBits, leaves: len(a.shards)}
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

// children returns the number of leaf s's first child, and whether all of
// its children exist (are numbered under 256).
func (t *tree) children(s int) (int, bool) {
	first := t.c * (s + 1)
	return first, first+t.c <= t.leaves
}

func (t *tree) header(s int) (split, count *uint64) {
	h := t.a.shards[s]
	return &h[0], &h[1]
}

func (t *tree) isSplit(s int) bool {
	split, _ := t.header(s)
	return loadBE(split) != 0
}

// has reports whether all of sig's positions are set in leaf s; with set,
// it sets them, and reports whether they were all set before.
func (t *tree) has(s int, h1, h2 uint64, set bool) bool {
	base := uint64(s)<<t.a.shift + headerBits
	seen := true
	for i := range t.k {
		p := base + (h1+i*h2)%t.m
		if !set {
			if !t.a.get(p) {
				return false
			}
		} else if !t.a.set(p) {
			seen = false
		}
	}
	return seen
}

func (t *tree) decide(sig uint64, dry bool) bool {
	h1, h2 := pair(sig)
	s, d := loc(sig, 1, t.c), 1
	for t.isSplit(s) {
		if t.has(s, h1, h2, false) {
			return true
		}
		first, _ := t.children(s)
		d++
		s = first + loc(sig, d, t.c)
	}
	// A live leaf: only this process (holding the batch lock) can split
	// it, or write it.
	if dry {
		return t.has(s, h1, h2, false)
	}
	if t.has(s, h1, h2, true) {
		return true
	}
	split, count := t.header(s)
	n := loadBE(count) + 1
	storeBE(count, n)
	if _, ok := t.children(s); ok && n >= t.limit[s] {
		storeBE(split, 1) // after its last URL: from now on, queries go on down
	}
	return false
}

func (t *tree) report(r *Report) {
	r.Bits = uint64(t.leaves) * t.m
	per := uint64(1) << t.a.shift
	fill := make([]float64, t.leaves)
	exists := make([]bool, t.leaves)
	for s := range t.leaves {
		r.Shards[s] = t.a.count(uint64(s)*per+headerBits, t.m&^63) // the header is not filter
		r.BitsSet += r.Shards[s]
		fill[s] = float64(r.Shards[s]) / float64(t.m&^63)
		r.Capacity += t.limit[s]
	}
	for s := range min(t.c, t.leaves) {
		exists[s] = true
	}
	r.LeafURLs = r.LeafURLs[:0]
	for s := range t.leaves {
		if !exists[s] {
			continue
		}
		r.Leaves++
		r.Height = max(r.Height, t.depth[s])
		_, count := t.header(s)
		n := loadBE(count)
		r.Distinct += float64(n)
		if t.isSplit(s) {
			first, _ := t.children(s)
			for j := range t.c {
				exists[first+j] = true
			}
			continue
		}
		r.LeafURLs = append(r.LeafURLs, n)
		if n >= t.limit[s] {
			r.OverBound++
		}
	}
	// The chance a new URL is reported present: along its path, each leaf
	// it consults says present with chance fill^k.
	var rate func(s int) float64
	rate = func(s int) float64 {
		p := math.Pow(fill[s], float64(t.k))
		if !t.isSplit(s) {
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

func (t *tree) array() array { return t.a }
