package literature

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/dsbf"
	"github.com/urldedupd/urldedupd/internal/format"
)

// AgainstBloom is the DSBF paper's Fig. 7: a DSBF of height 1 (c leaves
// of leafBytes each, fmax so high that it never splits) against a classic
// Bloom filter of the same total bits, and a DSBF of moreC leaves (more
// bits), all with k positions, measured on queries held-out URLs at each
// of points. The Bloom filter has 256 shards of c·leafBytes/256 bytes, so
// its bits equal the leaves' but for their 64-byte headers.
func AgainstBloom(leafBytes int64, c, moreC, k int, points []uint64, queries int, seed uint64) ([]compare.Result, error) {
	r := rand.New(rand.NewPCG(seed, 7))
	held := sigs(r, queries)
	bf, err := newFilter(format.Bloom, leafBytes*int64(c)/format.Shards, format.Filter{K: k})
	if err != nil {
		return nil, err
	}
	m := uint64(bf.meta.Sizes.Bytes()) * 8
	curve, err := bf.growth(r, points, held, func(_ *filter, n uint64) float64 { return classic(m, k, n) })
	if err != nil {
		return nil, err
	}
	out := []compare.Result{{Info: compare.Info{Layout: fmt.Sprintf("Bloom filter, %d bits", m), Bytes: int64(m / 8)}, Curve: curve}}
	for _, leaves := range []int{c, moreC} {
		f, err := newFilter(format.DSBF, leafBytes, format.Filter{K: k, Children: leaves, FMax: 0.999})
		if err != nil {
			return nil, err
		}
		curve, err := f.growth(r, points, held, reported)
		if err != nil {
			return nil, err
		}
		out = append(out, compare.Result{Info: compare.Info{Layout: fmt.Sprintf("DSBF H=1, c=%d leaves of %d bits", leaves, leafBytes*8-format.LeafHeaderBytes*8),
			Bytes: int64(leaves) * leafBytes}, Curve: curve})
	}
	return out, nil
}

// classic is a Bloom filter's false-positive rate: (1 − e^(−kn/m))^k.
func classic(m uint64, k int, n uint64) float64 {
	return math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m)), float64(k))
}

// Growth is the DSBF paper's claim that the tree stays under fmax as n
// grows past its estimate, with the tree's shape at the end.
type Growth struct {
	Params   dsbf.Params    // as planned for the estimate (the paper's formulas 4–6)
	Estimate uint64         // URLs planned for
	Result   compare.Result // the rate measured along the way, and the formula
	FMax     compare.Result // fmax, as a line
	Height   int            // of the tree at the end
	Leaves   int            // split or live
	Live     []uint64       // URLs in each live leaf at the end
	Depths   map[int]int    // live leaves per depth
	Over     int            // live leaves past their bound
}

// Balance returns the fewest and most URLs in a live leaf and their
// coefficient of variation (standard deviation over mean).
func (g Growth) Balance() (lo, hi uint64, cv float64) {
	if len(g.Live) == 0 {
		return 0, 0, 0
	}
	lo, hi = slices.Min(g.Live), slices.Max(g.Live)
	var sum, sq float64
	for _, n := range g.Live {
		sum += float64(n)
	}
	mean := sum / float64(len(g.Live))
	for _, n := range g.Live {
		sq += (float64(n) - mean) * (float64(n) - mean)
	}
	return lo, hi, math.Sqrt(sq/float64(len(g.Live))) / mean
}

// UnderFMax plans a DSBF for estimate URLs in leaves of leafBytes under
// fmax (dsbf.Plan: the paper's c and k), then inserts up to the last of
// points (10× the estimate, in the paper's claim), measuring the rate on
// queries held-out URLs at each point.
func UnderFMax(leafBytes int64, fmax float64, estimate uint64, points []uint64, queries int, seed uint64) (Growth, error) {
	m := uint64(leafBytes)*8 - format.LeafHeaderBytes*8
	p, err := dsbf.Plan(estimate, m, fmax)
	if err != nil {
		return Growth{}, err
	}
	g := Growth{Params: p, Estimate: estimate}
	f, err := newFilter(format.DSBF, leafBytes, format.Filter{K: p.K, Children: min(p.C, format.MaxChildren), FMax: fmax})
	if err != nil {
		return g, err
	}
	r := rand.New(rand.NewPCG(seed, 11))
	held := sigs(r, queries)
	curve, err := f.growth(r, points, held, reported)
	if err != nil {
		return g, err
	}
	g.Result = compare.Result{Info: compare.Info{Layout: fmt.Sprintf("DSBF c=%d, k=%d, planned for %d", p.C, p.K, estimate)}, Curve: curve}
	g.FMax = compare.Result{Info: compare.Info{Layout: fmt.Sprintf("fmax %g", fmax)}}
	for _, pt := range curve {
		g.FMax.Curve = append(g.FMax.Curve, compare.Point{Inserted: pt.Inserted, Theory: fmax})
	}
	rep, err := f.set.Report()
	if err != nil {
		return g, err
	}
	g.Height, g.Leaves, g.Live, g.Over = rep.Height, rep.Leaves, rep.LeafURLs, rep.OverBound
	return g, nil
}
