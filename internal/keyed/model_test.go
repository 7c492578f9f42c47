package keyed

import (
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// TestModelMatchesTable fills a table of 262,144 buckets (the tolerances
// follow the number of buckets; the plain pass only, racetest) and compares
// its measured occupancy and lost URLs with Predict at several loads.
func TestModelMatchesTable(t *testing.T) {
	racetest.SkipSequential(t)
	const shardBytes = 64 << 10
	g := mustGeometry(t, int64(shardBytes))
	tab := newHeapTable(t, shardBytes)
	buckets := float64(uint64(g.Buckets()) * Shards)
	done := 0
	for _, load := range []float64{4, 8, 10, 12, 14, 16, 20} {
		n := int(load * buckets)
		locs := testLocs(g, "m", done, n)
		res := make([]Result, len(locs))
		tab.DecideBatch(locs, res, false)
		done = n
		pred, f := Predict(load), tab.Fill()
		meas := f.Occupancy()
		for k := range meas.Frac {
			p := pred.Frac[k]
			tol := 6*math.Sqrt(p*(1-p)/buckets) + 1e-3
			if d := math.Abs(meas.Frac[k] - p); d > tol {
				t.Errorf("load %g: %d slots: measured %.5f of buckets, model %.5f (tolerance %.5f)", load, k, meas.Frac[k], p, tol)
			}
		}
		lost := float64(tab.Counts().Full) / float64(n)
		if d := math.Abs(lost - pred.Lost); d > 6*math.Sqrt(pred.Lost/float64(n))+2e-3*pred.Lost+1e-6 {
			t.Errorf("load %g: lost %.6f of URLs, model %.6f", load, lost, pred.Lost)
		}
		t.Logf("load %4.1f: full %.4f (model %.4f), lost %.6f (model %.6f), false dup %.3g (model %.3g)",
			load, meas.FullFrac(), pred.FullFrac(), lost, pred.Lost, meas.FalseDup(), pred.FalseDup())
	}
}

// TestFalseDupFormula measures the false-duplicate rate against the
// formula from the measured fill. With 32-bit fingerprints the rate (~1e-9)
// is beyond a test's reach, so the fingerprints are narrowed to 12 bits:
// the formula's 2^32 becomes 2^12 and everything else is the same code.
// The tolerance is 4.5 standard deviations of the binomial count.
func TestFalseDupFormula(t *testing.T) {
	racetest.SkipSequential(t)
	const shardBytes, queries = 4096, 200000
	g := mustGeometry(t, shardBytes)
	g.fpMask = 1<<12 - 1
	tab := newHeapTable(t, shardBytes)
	buckets := float64(uint64(g.Buckets()) * Shards)
	q := testLocs(g, "q", 0, queries) // never inserted: every dup is false
	res := make([]Result, queries)
	done := 0
	for _, load := range []float64{1, 4, 8, 12, 15} {
		n := int(load * buckets)
		locs := testLocs(g, "a", done, n)
		tab.DecideBatch(locs, make([]Result, len(locs)), false)
		done = n
		p := tab.Fill().Occupancy().falseDup(float64(g.fpMask))
		c := tab.DecideBatch(q, res, true)
		want := p * queries
		sd := math.Sqrt(queries * p * (1 - p))
		if math.Abs(float64(c.Dup)-want) > 4.5*sd {
			t.Errorf("load %g: %d false dups of %d, formula %.1f ± %.1f", load, c.Dup, queries, want, sd)
		}
		t.Logf("load %4.1f: %d false dups of %d (%.3g), formula %.3g", load, c.Dup, queries, float64(c.Dup)/queries, p)
	}
}

// TestCapacity: at Capacity the model's not-stored chance is the
// negligible one, and a little past it more; it scales with the state.
func TestCapacity(t *testing.T) {
	g, _ := NewGeometry(MinShardBytes)
	c := g.Capacity()
	load := func(n uint64) float64 { return float64(n) / float64(uint64(g.Buckets())*Shards) }
	if ns := Predict(load(c)).NotStored(); ns > NegligibleNotStored || ns < NegligibleNotStored*0.99 {
		t.Errorf("not stored at capacity %d: %g, want just under %g", c, ns, NegligibleNotStored)
	}
	if ns := Predict(load(c) * 1.05).NotStored(); ns <= NegligibleNotStored {
		t.Errorf("not stored 5%% past capacity: %g", ns)
	}
	g8, _ := NewGeometry(8 * MinShardBytes)
	if c8 := g8.Capacity(); c8 < 8*c-8 || c8 > 8*c+8 {
		t.Errorf("capacity of an 8× state %d, want 8 × %d", c8, c)
	}
	if c < 50_000_000 || c > 134_217_728 {
		t.Errorf("capacity of 512 MiB = %d, want between 50M and its 134M slots", c)
	}
}
