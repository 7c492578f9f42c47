package compare_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/racetest"
)

// Every layout where rates are measurable (the in-memory ones in 64 KiB,
// the Bloom family's states in 1 MiB, their smallest): the measured
// false-duplicate rate on held-out URLs matches each layout's own formula
// within four standard deviations, the exact set has none, and the table
// names every layout.
func TestRunMatchesTheory(t *testing.T) {
	racetest.SkipSequential(t)
	runMatchesTheory(t, 50_000, 64<<10, "bloom-patent", "hashtable", "apbf", "exact")
	runMatchesTheory(t, 900_000, 1<<20, "bloom", "mdbf", "dsbf")
}

func runMatchesTheory(t *testing.T, n int, memory int64, layouts ...string) {
	const q = 100_000
	res, err := compare.Run(compare.Options{Synthetic: n, HeldOutSynthetic: q, Memory: memory,
		Layouts: layouts, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		p := r.Theory
		sd := math.Sqrt(p * (1 - p) / q)
		t.Logf("%s (%s): %d of %d, theory %.4f", r.Layout, r.Params, r.FalseDup.Hits, r.FalseDup.Trials, p)
		if r.Inserted != uint64(n) || r.FalseDup.Trials != q {
			t.Errorf("%s: %d inserted, %d queried", r.Layout, r.Inserted, r.FalseDup.Trials)
		}
		if math.Abs(r.FalseDup.Value()-p) > 4*sd+3.0/q {
			t.Errorf("%s: measured %.5f, theory %.5f ± %.5f", r.Layout, r.FalseDup.Value(), p, sd)
		}
		if r.Layout == "exact" && (r.FalseDup.Hits != 0 || r.InsertFalseDup.Hits != 0) {
			t.Errorf("exact set has false duplicates")
		}
	}
	var out bytes.Buffer
	if err := compare.WriteTable(&out, res); err != nil {
		t.Fatal(err)
	}
	for _, l := range append(layouts, "false dup [95% CI]") {
		if !strings.Contains(out.String(), l) {
			t.Errorf("table lacks %q:\n%s", l, out.String())
		}
	}
}

// The persistent layouts run in real temporary states: the keyed layout
// makes no false duplicate at this size, the bitmap's rate is its fill.
func TestRunStates(t *testing.T) {
	racetest.SkipSequential(t)
	res, err := compare.Run(compare.Options{Synthetic: 100_000, HeldOutSynthetic: 100_000, Layouts: []string{"bitmap", "keyed"}, TempDir: t.TempDir(), Curve: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Persistent || r.Bytes != 512<<20 || len(r.Curve) < 3 {
			t.Errorf("%s: %+v", r.Layout, r.Info)
		}
		if r.Layout == "keyed" && (r.FalseDup.Hits != 0 || r.InsertFalseDup.Hits != 0) {
			t.Errorf("keyed: %d false duplicates at 100k URLs", r.FalseDup.Hits)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := compare.Run(compare.Options{Synthetic: 10, HeldOutSynthetic: 10, Layouts: []string{"nope"}}); !errors.Is(err, compare.ErrLayout) {
		t.Errorf("unknown layout: %v", err)
	}
	if _, err := compare.Run(compare.Options{HeldOutSynthetic: 10}); !errors.Is(err, compare.ErrInput) {
		t.Errorf("no URLs: %v", err)
	}
	same := "http://a.example/\n"
	if _, err := compare.Run(compare.Options{URLFile: strings.NewReader(same), HeldOutFile: strings.NewReader(same)}); !errors.Is(err, compare.ErrInput) {
		t.Errorf("held-out all inserted: %v", err)
	}
}
