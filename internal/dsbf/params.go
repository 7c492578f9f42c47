package dsbf

import (
	"errors"
	"fmt"
	"math"
)

// ErrParams is returned for parameters a tree cannot have.
var ErrParams = errors.New("dsbf: bad parameters")

// Params shape a tree.
type Params struct {
	C        int     // leaves of the first level, and children of a split (≥ 2)
	LeafBits uint64  // m: bits of each leaf (≥ 64)
	K        int     // hash functions of each leaf (1..32)
	FMax     float64 // bound on a query's false-positive rate, in (0, 1)
	Ratio    float64 // tightening r in (0, 1) of the split bounds with depth; 0 is ½
}

func (p Params) check() error {
	if p.C < 2 || p.C > 1<<16 || p.LeafBits < 64 || p.K < 1 || p.K > 32 || !(p.FMax > 0 && p.FMax < 1) || p.Ratio < 0 || p.Ratio >= 1 {
		return fmt.Errorf("%w: %+v", ErrParams, p)
	}
	return nil
}

func (p Params) ratio() float64 {
	if p.Ratio == 0 {
		return 0.5
	}
	return p.Ratio
}

// Bound is the false-positive rate at which a leaf at depth d ≥ 1 splits:
// FMax·(1−r)·r^(d−1). The bounds of depths 1, 2, … sum to FMax.
func (p Params) Bound(depth int) float64 {
	r := p.ratio()
	return p.FMax * (1 - r) * math.Pow(r, float64(depth-1))
}

// LeafCapacity is how many URLs a leaf at depth d takes before its rate
// (1 − e^(−kn/m))^k reaches Bound(d).
func (p Params) LeafCapacity(depth int) uint64 {
	return capacity(p.LeafBits, p.K, p.Bound(depth))
}

func capacity(m uint64, k int, f float64) uint64 {
	// (1 − e^(−kn/m))^k = f  ⇔  n = −(m/k)·ln(1 − f^(1/k))
	n := -float64(m) / float64(k) * math.Log1p(-math.Pow(f, 1/float64(k)))
	return uint64(math.Max(1, math.Floor(n)))
}

// Plan returns the paper's initial tree for an estimate of n URLs in leaves
// of m bits under the bound fmax (its formulas 4 to 6), with the first
// level's bound in place of fmax: each leaf holds u = m·(ln 2)²/ln(1/f)
// URLs with k = ln(1/f)/ln 2 hash functions (rounded), and c = ⌈n/u⌉
// leaves (at least 2).
func Plan(n, m uint64, fmax float64) (Params, error) {
	p := Params{C: 2, LeafBits: m, K: 1, FMax: fmax}
	if n == 0 {
		return p, fmt.Errorf("%w: an estimate of 0 URLs", ErrParams)
	}
	if err := p.check(); err != nil {
		return p, err
	}
	f := p.Bound(1)
	p.K = max(1, min(32, int(math.Round(math.Log(1/f)/math.Ln2))))
	u := capacity(m, p.K, f)
	p.C = max(2, int((n+u-1)/u))
	return p, p.check()
}
