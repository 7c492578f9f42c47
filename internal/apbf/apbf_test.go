package apbf_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/urldedupd/urldedupd/internal/apbf"
)

// An element is found for l generations after the one it was inserted in,
// whatever else is inserted, and (but for false positives) not after.
func TestAge(t *testing.T) {
	for _, kl := range [][2]int{{1, 0}, {4, 3}, {10, 7}} {
		k, l := kl[0], kl[1]
		f, err := apbf.New(k, l, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, uint64(k)))
		x := rng.Uint64()
		f.Insert(x)
		for s := 0; s <= l; s++ {
			if !f.Query(x) {
				t.Fatalf("k=%d l=%d: lost after %d shifts", k, l, s)
			}
			for range 500 {
				f.Insert(rng.Uint64())
			}
			f.Shift()
		}
		if f.Query(x) {
			t.Fatalf("k=%d l=%d: still found after %d shifts", k, l, l+1)
		}
	}
}

// False positives stay within the union bound over the l + 1 places a run
// of k can start: Σ Π fill.
func TestFalsePositives(t *testing.T) {
	const k, l, m, g = 10, 7, 1 << 16, 4000
	f, err := apbf.New(k, l, m)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for range 3 * (k + l) { // steady state: every slice has been through the ring
		for range g {
			f.Insert(rng.Uint64())
		}
		f.Shift()
	}
	for range g / 2 {
		f.Insert(rng.Uint64())
	}
	bound := 0.0
	for s := 0; s <= l; s++ {
		p := 1.0
		for a := s; a < s+k; a++ {
			p *= f.Fill(a)
		}
		bound += p
	}
	const queries = 400_000
	fp := 0
	for range queries {
		if f.Query(rng.Uint64()) {
			fp++
		}
	}
	rate := float64(fp) / queries
	t.Logf("false positives %d of %d (%.2g), bound %.2g, fills %.2f..%.2f", fp, queries, rate, bound, f.Fill(0), f.Fill(k+l-1))
	if fp == 0 || rate > 1.5*bound+3/float64(queries) {
		t.Fatalf("false positive rate %g, bound %g", rate, bound)
	}
	if math.IsNaN(bound) {
		t.Fatal("bound")
	}
}

func TestNewErrors(t *testing.T) {
	for _, p := range [][3]int{{0, 1, 64}, {1, -1, 64}, {1, 1, 0}, {1000, 100, 64}} {
		if _, err := apbf.New(p[0], p[1], uint64(p[2])); err == nil {
			t.Errorf("New%v: no error", p)
		}
	}
}
