package state_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// mix is splitmix64's finalizer: distinct counters to distinct, random-looking
// values. URLs that differ only in a decimal counter are not random inputs
// for CRC32, which is linear: on "…/%d/page" the bitmap measured 1.76× the
// formula's false duplicates (16,384 of 2M after 20M), so the formula is
// tested on URLs whose paths vary in every byte.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// The bitmap layout's formula against its measured false-duplicate rate:
// after n distinct URLs, 2M other URLs are reported duplicates at the rate
// BitmapFalseDup(n) predicts and Report computes from the fill, within
// four standard deviations (a tolerance a wrong formula, or a hash that is
// not uniform, fails). The plain pass only: one goroutine (racetest).
func TestBitmapFalseDupFormula(t *testing.T) {
	racetest.SkipSequential(t)
	if testing.Short() {
		t.Skip("inserts 20M URLs")
	}
	st, err := state.Open(context.Background(), filepath.Join(t.TempDir(), "s"), &state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const batch = 4096
	const n, q = 20_000_000, 2_000_000
	signer := st.Signer()
	sigs := make([]signature.Signature, batch)
	seen := make([]bool, batch)
	var buf []byte
	decide := func(from, to int, dry bool) (dups int) {
		for i := from; i < to; i += batch {
			m := min(batch, to-i)
			for j := range m {
				buf = fmt.Appendf(buf[:0], "http://formula.example/%x/page", mix(uint64(i+j)))
				sigs[j], _ = signer.Sign(buf)
			}
			if err := st.Decide(context.Background(), sigs[:m], seen[:m], dry); err != nil {
				t.Fatal(err)
			}
			for _, s := range seen[:m] {
				if s {
					dups++
				}
			}
		}
		return dups
	}
	decide(0, n, false)
	got := decide(n, n+q, true)
	p := state.BitmapFalseDup(uint64(n))
	mean, sd := p*float64(q), math.Sqrt(p*(1-p)*float64(q))
	if math.Abs(float64(got)-mean) > 4*sd {
		t.Errorf("false duplicates among %d new URLs after %d: %d, formula %.0f ± %.0f", q, n, got, mean, sd)
	}
	rep, err := st.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.FalseDupChance-p) > 4*math.Sqrt(p*(1-p)/float64(1<<32))*1e3 || math.Abs(rep.FalseDupChance-p)/p > 0.01 {
		t.Errorf("Report's false-duplicate chance %g, formula %g", rep.FalseDupChance, p)
	}
	t.Logf("measured %d/%d = %.5f, formula %.5f, report %.5f", got, q, float64(got)/float64(q), p, rep.FalseDupChance)
}
