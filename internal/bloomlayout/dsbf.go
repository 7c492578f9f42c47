package bloomlayout

import (
	"github.com/urldedupd/urldedupd/internal/format"
)

// tree is the dynamic splittable Bloom filter over the array: one leaf per
// shard, a header then the filter.
type tree struct {
	*Tree
	a array
}

const headerBits = format.LeafHeaderBytes * 8

func newDSBF(a array, m format.Meta) *tree { return &tree{Tree: NewTree(m), a: a} }

func (t *tree) header(s int) (split, count *uint64) {
	h := t.a.shards[s]
	return &h[0], &h[1]
}

func (t *tree) isSplit(s int) bool {
	split, _ := t.header(s)
	return t.Split(s, loadBE(split) != 0)
}

// has reports whether all of sig's positions are set in leaf s; with set,
// it sets them, and reports whether they were all set before.
func (t *tree) has(s int, st stream, set bool) bool {
	base := uint64(s)<<t.a.shift + headerBits
	seen := true
	for i := range uint64(t.k) {
		p := base + st.at(i, t.m)
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
	st := newStream(sig)
	s := t.First(sig)
	for t.isSplit(s) {
		if t.has(s, st, false) {
			return true
		}
		s = t.Child(s, sig)
	}
	// A live leaf: only this process (holding the batch lock) can split
	// it, or write it.
	if dry {
		return t.has(s, st, false)
	}
	if t.has(s, st, true) {
		return true
	}
	split, count := t.header(s)
	n := loadBE(count) + 1
	storeBE(count, n)
	if limit, ok := t.Limit(s); ok && n >= limit {
		storeBE(split, 1) // after its last URL: from now on, queries go on down
	}
	return false
}

func (t *tree) report(r *Report) {
	leaves := make([]Leaf, t.leaves)
	per := uint64(1) << t.a.shift
	for s := range leaves {
		_, count := t.header(s)
		leaves[s] = Leaf{Split: t.isSplit(s), URLs: loadBE(count), BitsSet: t.a.count(uint64(s)*per+headerBits, per-headerBits)}
	}
	t.Report(r, leaves)
}

func (t *tree) array() array { return t.a }
