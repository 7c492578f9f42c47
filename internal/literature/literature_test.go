package literature

import (
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/racetest"
)

// differ reports whether rates a and b differ by more than 4 standard
// deviations of their difference.
func differ(a, b compare.Rate) bool {
	pa, pb := a.Value(), b.Value()
	sd := math.Sqrt(pa*(1-pa)/float64(a.Trials) + pb*(1-pb)/float64(b.Trials))
	return math.Abs(pa-pb) > 4*sd
}

// The DSBF paper's Fig. 7: at equal total bits a DSBF of height 1 is a
// classic Bloom filter (the rates agree within 4 sd at every size), and
// with more leaves (more bits) it is better.
func TestDSBFAgainstBloom(t *testing.T) {
	racetest.SkipSequential(t)
	res, err := AgainstBloom(256<<10, 4, 8, 7, []uint64{400_000, 800_000, 1_200_000}, 200_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	bf, equal, more := res[0], res[1], res[2]
	for i := range bf.Curve {
		a, b, c := bf.Curve[i].Rate, equal.Curve[i].Rate, more.Curve[i].Rate
		t.Logf("n %d: %s %.5f (formula %.5f); %s %.5f (%.5f); %s %.5f (%.5f)", bf.Curve[i].Inserted,
			bf.Layout, a.Value(), bf.Curve[i].Theory, equal.Layout, b.Value(), equal.Curve[i].Theory, more.Layout, c.Value(), more.Curve[i].Theory)
		if differ(a, b) {
			t.Errorf("n %d: equal bits, but Bloom %.5f and DSBF %.5f differ", bf.Curve[i].Inserted, a.Value(), b.Value())
		}
		if a.Value() > 1e-3 && (!differ(a, c) || c.Value() >= a.Value()) {
			t.Errorf("n %d: more leaves, but DSBF %.5f is not below Bloom %.5f", bf.Curve[i].Inserted, c.Value(), a.Value())
		}
	}
}

// The DSBF paper's claim: planned for an estimate, the tree stays under
// fmax while the URLs grow tenfold past it, and its live leaves stay
// balanced.
func TestDSBFUnderFMaxPastEstimate(t *testing.T) {
	racetest.SkipSequential(t)
	const fmax = 0.01
	g, err := UnderFMax(64<<10, fmax, 50_000, Points(10_000, 500_000, 3), 100_000, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Result.Curve {
		v := p.Rate.Value()
		sd := math.Sqrt(fmax * (1 - fmax) / float64(p.Rate.Trials))
		t.Logf("n %d: measured %.5f, formula %.5f", p.Inserted, v, p.Theory)
		if p.Theory > fmax || v > fmax+4*sd {
			t.Errorf("n %d: measured %.5f, formula %.5f, over fmax %g", p.Inserted, v, p.Theory, fmax)
		}
	}
	lo, hi, cv := g.Balance()
	t.Logf("planned c %d, k %d for %d; at %d: height %d, %d leaves, %d live with %d..%d URLs (cv %.3f)",
		g.Params.C, g.Params.K, g.Estimate, g.Result.Curve[len(g.Result.Curve)-1].Inserted, g.Height, g.Leaves, len(g.Live), lo, hi, cv)
	if g.Height < 3 || g.Over != 0 || cv > 0.1 {
		t.Errorf("height %d, %d leaves past their bound, cv %.3f", g.Height, g.Over, cv)
	}
}

// The MDBF paper's claims, at its sizes (N = 150, k = 4, n = 30 URLs):
// the rate falls as S grows (its Fig. 2), and at the same k and N the MDBF
// is below a Bloom filter (its Figs. 3, 4) — but it holds S·(N + N/k)
// bits, and a Bloom filter given those bits is below it.
func TestMDBFClaims(t *testing.T) {
	racetest.SkipSequential(t)
	const n, trials, queries = 30, 3000, 100
	rate := func(c MDBFCase) compare.Rate {
		r, err := MDBFRate(c, n, trials, queries, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.5f (formula %.5f)", c.Name(), r.Value(), c.Theory(n))
		return r
	}
	var prev compare.Rate
	for s := 1; s <= 4; s++ {
		r := rate(MDBFCase{S: s, N: 150, K: 4})
		if s > 1 && (!differ(prev, r) || r.Value() >= prev.Value()) {
			t.Errorf("S %d: %.5f is not below S %d's %.5f", s, r.Value(), s-1, prev.Value())
		}
		prev = r
	}
	mdbf4 := prev
	sameN := rate(MDBFCase{M: 150, K: 4})
	sameBits := rate(MDBFCase{M: MDBFCase{S: 4, N: 150, K: 4}.Bits(), K: 4})
	if !differ(mdbf4, sameN) || mdbf4.Value() >= sameN.Value() {
		t.Errorf("same k and N: MDBF %.5f is not below Bloom %.5f", mdbf4.Value(), sameN.Value())
	}
	if !differ(mdbf4, sameBits) || sameBits.Value() >= mdbf4.Value() {
		t.Errorf("same bits: Bloom %.5f is not below MDBF %.5f", sameBits.Value(), mdbf4.Value())
	}
}
