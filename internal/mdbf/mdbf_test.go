package mdbf_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/urldedupd/urldedupd/internal/racetest"

	"github.com/urldedupd/urldedupd/internal/mdbf"
)

func measure(t *testing.T, p mdbf.Params, n, q int) (rate float64, loaded uint64) {
	t.Helper()
	f, err := mdbf.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f.TestAndSet(mdbf.HashOf(fmt.Appendf(nil, "http://in%d.example/%d", i%997, i)))
	}
	for i := 0; i < n; i += 13 {
		if !f.Test(mdbf.HashOf(fmt.Appendf(nil, "http://in%d.example/%d", i%997, i))) {
			t.Fatalf("%+v: URL %d forgotten", p, i)
		}
	}
	fp := 0
	for i := range q {
		if f.Test(mdbf.HashOf(fmt.Appendf(nil, "http://out%d.example/%d", i%991, i))) {
			fp++
		}
	}
	return float64(fp) / float64(q), f.Loaded()
}

// The formula of the package doc against measured rates, and the paper's
// claim at its own k: the rate falls as S grows (at S times the memory).
func TestFalsePositiveFormula(t *testing.T) {
	racetest.SkipSequential(t)
	const n, q = 20_000, 200_000
	prev := 1.0
	for s := 1; s <= 4; s++ {
		p := mdbf.Params{S: s, N: 100_000, K: 4}
		got, loaded := measure(t, p, n, q)
		want := p.FalsePositive(loaded)
		sd := math.Sqrt(want * (1 - want) / q)
		t.Logf("S %d (%d bits): measured %.5f, formula %.5f", s, p.Bits(), got, want)
		if math.Abs(got-want) > 4*sd+3.0/q {
			t.Errorf("S %d: measured %.5f, formula %.5f ± %.5f", s, got, want, sd)
		}
		if want >= prev {
			t.Errorf("S %d: formula %.5f does not fall from %.5f", s, want, prev)
		}
		prev = want
	}
}

func TestParamsRefused(t *testing.T) {
	for _, p := range []mdbf.Params{{S: 0, N: 100, K: 4}, {S: 1, N: 100, K: 1}, {S: 1, N: 100, K: 4, K2: 4}, {S: 1, N: 2, K: 4}} {
		if _, err := mdbf.New(p); !errors.Is(err, mdbf.ErrParams) {
			t.Errorf("New(%+v) = %v, want ErrParams", p, err)
		}
	}
}
