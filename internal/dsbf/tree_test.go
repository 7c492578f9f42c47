package dsbf_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"

	"github.com/urldedupd/urldedupd/internal/dsbf"
)

func url(set string, i int) []byte {
	return fmt.Appendf(nil, "http://%s%d.example/p/%d", set, i%1009, i)
}

// The paper's initial tree: leaves of u = m(ln 2)²/ln(1/f) URLs with
// k = ln(1/f)/ln 2, and c = ⌈n/u⌉ of them, f being the first level's bound.
func TestPlan(t *testing.T) {
	p, err := dsbf.Plan(1_500_000, 1<<20, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Bound(1) // 0.005 with r = ½
	u := float64(p.LeafBits) * math.Ln2 * math.Ln2 / math.Log(1/f)
	if p.K != int(math.Round(math.Log(1/f)/math.Ln2)) || math.Abs(float64(p.C)-math.Ceil(1_500_000/u)) > 1 {
		t.Errorf("Plan = %+v; want k %.1f, c ⌈%.0f⌉", p, math.Log(1/f)/math.Ln2, 1_500_000/u)
	}
	if c := p.LeafCapacity(1); math.Abs(float64(c)-u)/u > 0.05 {
		t.Errorf("leaf capacity %d, paper's u %.0f", c, u)
	}
	sum := 0.0
	for d := 1; d < 60; d++ {
		sum += p.Bound(d)
	}
	if sum >= p.FMax || sum < 0.999*p.FMax {
		t.Errorf("bounds sum to %g, want just under %g", sum, p.FMax)
	}
	for _, bad := range []struct {
		n, m uint64
		f    float64
	}{{0, 1 << 20, 0.01}, {100, 32, 0.01}, {100, 1 << 20, 0}, {100, 1 << 20, 1}} {
		if _, err := dsbf.Plan(bad.n, bad.m, bad.f); !errors.Is(err, dsbf.ErrParams) {
			t.Errorf("Plan(%d, %d, %g) = %v, want ErrParams", bad.n, bad.m, bad.f, err)
		}
	}
}

// The DSBF's promise, measured: planned for 20,000 URLs, given 10× as
// many, it splits (the height grows), never forgets a URL, keeps its
// measured false-positive rate on 200,000 other URLs under FMax (and
// within the formula's confidence interval), and its live leaves stay
// balanced.
func TestStaysUnderFMax(t *testing.T) {
	racetest.SkipSequential(t)
	const est, n, q, fmax = 20_000, 200_000, 200_000, 0.01
	p, err := dsbf.Plan(est, 1<<16, fmax)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := dsbf.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if tr.TestAndSet(dsbf.HashOf(url("in", i))) && i < 10 {
			t.Fatalf("URL %d of a fresh tree answered held", i)
		}
	}
	for i := 0; i < n; i += 7 {
		if !tr.Test(dsbf.HashOf(url("in", i))) {
			t.Fatalf("URL %d forgotten", i)
		}
	}
	fp := 0
	for i := range q {
		if tr.Test(dsbf.HashOf(url("out", i))) {
			fp++
		}
	}
	rate, theory := float64(fp)/q, tr.FalsePositive()
	sd := math.Sqrt(theory * (1 - theory) / q)
	s := tr.Shape()
	t.Logf("%+v: height %d, %d live leaves, %d frozen; measured %.5f, formula %.5f, bound %g", p, s.Height, len(s.Live), s.Frozen, rate, theory, fmax)
	if s.Height < 2 || s.Frozen == 0 {
		t.Errorf("10× the estimate made no split: height %d", s.Height)
	}
	if theory >= fmax || rate >= fmax || math.Abs(rate-theory) > 4*sd {
		t.Errorf("false positives %.5f (formula %.5f ± %.5f), bound %g", rate, theory, sd, fmax)
	}
	// Balance: the live leaves of the deepest full level hold about the same.
	var lo, hi uint64 = math.MaxUint64, 0
	var sum uint64
	for _, c := range s.Live {
		lo, hi, sum = min(lo, c), max(hi, c), sum+c
	}
	if mean := float64(sum) / float64(len(s.Live)); float64(hi) > 3*mean+50 {
		t.Errorf("live leaves hold %d..%d URLs, mean %.0f", lo, hi, mean)
	}
}

// At equal total bits and before any split, a DSBF is a partitioned Bloom
// filter: its measured rate matches the classic filter's formula
// (1 − e^(−kn/(cm)))^k within four standard deviations (the paper's Fig. 7).
func TestEqualsClassicAtEqualBits(t *testing.T) {
	const n, q = 30_000, 200_000
	p := dsbf.Params{C: 4, LeafBits: 1 << 16, K: 4, FMax: 0.9} // a bound that never splits here
	tr, err := dsbf.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		tr.TestAndSet(dsbf.HashOf(url("in", i)))
	}
	fp := 0
	for i := range q {
		if tr.Test(dsbf.HashOf(url("out", i))) {
			fp++
		}
	}
	classic := math.Pow(-math.Expm1(-float64(p.K)*n/float64(uint64(p.C)*p.LeafBits)), float64(p.K))
	if sd := math.Sqrt(classic * (1 - classic) / q); math.Abs(float64(fp)/q-classic) > 4*sd || tr.Shape().Height != 1 {
		t.Errorf("DSBF %.5f, classic formula %.5f ± %.5f, height %d", float64(fp)/q, classic, sd, tr.Shape().Height)
	}
}
