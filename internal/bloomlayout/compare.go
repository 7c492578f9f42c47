package bloomlayout

import (
	"fmt"
	"math"

	classic "github.com/urldedupd/urldedupd/internal/bloom"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// CompareState sizes a state of the family for compare
// (layout.Contender): the largest state that fits memory (a power of two
// from 1 MiB to 512 MiB), and the parameters its URLs n call for: bloom's
// best k; the MDBF paper's S and k (4 and 4); a DSBF whose first c leaves
// together fit memory (leaves of at most 2 MiB, its largest, so c is 4,
// or up to 16 where memory allows), k best for n/c URLs a leaf and fmax
// four times a classic filter's rate at n, so that it splits only when
// given more than that.
func (f family) CompareState(memory int64, n uint64) (format.Spec, int64, format.Filter) {
	spec := format.Spec{Layout: f.id, Algorithm: signature.SipHash, Mode: signature.Safe}
	size := int64(1) << 20
	for size*2 <= min(memory, 512<<20) {
		size *= 2
	}
	n = max(n, 1)
	bits := uint64(size) * 8
	switch f.id {
	case format.Bloom:
		return spec, size, format.Filter{K: max(1, min(10, int(math.Round(float64(bits)/float64(n)*math.Ln2))))}
	case format.MDBF:
		return spec, size, format.Filter{K: 4, Groups: 4}
	}
	leaf := int64(format.MinFilterShardBytes)
	for leaf*2 <= min(memory/4, format.ShardBytes) {
		leaf *= 2
	}
	c := int(max(4, min(format.MaxChildren, memory/leaf)))
	m := uint64(leaf)*8 - format.LeafHeaderBytes*8
	k := max(1, min(format.MaxK, int(math.Round(float64(m)/float64(max(n/uint64(c), 1))*math.Ln2))))
	bound := math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m*uint64(c))), float64(k))
	return spec, leaf * format.Shards, format.Filter{K: k, Children: c, FMax: math.Min(math.Max(4*bound, 1e-12), 0.5)}
}

// CompareInfo describes a state of the family for compare's table; a
// DSBF's bytes are the leaves in use (the state holds 256).
func (f family) CompareInfo(m format.Meta, report func() (layout.Report, error)) (string, int64, string) {
	p := m.Filter
	const how = "yes: an OFD lock per batch"
	switch f.id {
	case format.Bloom:
		return fmt.Sprintf("m=%d bits, k=%d (keyed SipHash-1-3)", m.Sizes.Bytes()*8, p.K), m.Sizes.Bytes(), how
	case format.MDBF:
		return fmt.Sprintf("S=%d, N=%d, k=%d", p.Groups, p.V1Bits, p.K), m.Sizes.Bytes(), how
	}
	rep, _ := report()
	return fmt.Sprintf("c=%d, m=%d bits/leaf, k=%d, fmax=%.2g; height %d, %d leaves", p.Children,
		m.Sizes.ShardBytes*8-format.LeafHeaderBytes*8, p.K, p.FMax, rep.Height, rep.Leaves), int64(rep.Leaves) * m.Sizes.ShardBytes, how
}

// Theory: bloom's formula from n; from the state measured for mdbf (the
// URLs loaded in their own group) and dsbf (the tree as it has grown).
func (f family) Theory(m format.Meta, n uint64, report func() (layout.Report, error)) float64 {
	if f.id == format.Bloom {
		return classic.FalseDup(uint64(m.Sizes.Bytes())*8, m.Filter.K, n)
	}
	rep, err := report()
	if err != nil {
		return math.NaN()
	}
	return rep.FalseDupChance
}

var _ layout.Contender = family{}
