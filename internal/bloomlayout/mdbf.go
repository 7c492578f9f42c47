package bloomlayout

import (
	"math"

	"github.com/urldedupd/urldedupd/internal/format"
)

// mdbf is the multi-dimensional Bloom filter: groups of a V1 (K − 1
// positions) and a V2 of 1/K of its bits (one position), end to end.
type mdbf struct {
	a          array
	groups     uint64
	k1         uint64
	n, n2      uint64 // bits of V1, of V2
	groupBits  uint64
	groupWords uint64
}

func newMDBF(a array, f format.Filter) *mdbf {
	return &mdbf{a: a, groups: uint64(f.Groups), k1: uint64(f.K - 1), n: f.V1Bits, n2: f.V1Bits / uint64(f.K),
		groupBits: f.GroupBits()}
}

// has reports whether all of sig's positions are set in group g: V2's
// (the stream's position K − 1) first, as it is the fuller vector.
func (m *mdbf) has(g uint64, st stream, v2 uint64) bool {
	base := g * m.groupBits
	if !m.a.get(base + m.n + v2) {
		return false
	}
	for i := range m.k1 {
		if !m.a.get(base + st.at(i, m.n)) {
			return false
		}
	}
	return true
}

func (m *mdbf) decide(sig uint64, dry bool) bool {
	st := newStream(sig)
	v2 := st.at(m.k1, m.n2)
	for g := range m.groups {
		if m.has(g, st, v2) {
			return true // present in some group: not inserted again
		}
	}
	if dry {
		return false
	}
	base := reduce(mix(sig^0x6d64626667726f75), m.groups) * m.groupBits
	m.a.set(base + m.n + v2)
	for i := range m.k1 {
		m.a.set(base + st.at(i, m.n))
	}
	return false
}

func (m *mdbf) report(r *Report) {
	r.Bits = m.groups * m.groupBits
	per := uint64(1) << m.a.shift
	for i := range r.Shards {
		r.Shards[i] = m.a.count(uint64(i)*per, per)
		r.BitsSet += r.Shards[i]
	}
	none := 1.0
	for g := range m.groups {
		base := g * m.groupBits
		f1 := float64(m.a.count(base, m.n)) / float64(m.n)
		f2 := float64(m.a.count(base+m.n, m.n2)) / float64(m.n2)
		none *= 1 - math.Pow(f1, float64(m.k1))*f2
		r.Distinct += estimate(m.n, m.k1, f1)
	}
	r.FalseDup = 1 - none
}

func (m *mdbf) array() array { return m.a }
