package frontend_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/frontend"
)

// A fifth of the budget is kept in shares, one per connection: a request
// within its share fits even when the pool is taken; beyond it, requests
// share the pool.
func TestBudgetShares(t *testing.T) {
	bg := frontend.NewBudget(1000, 4) // shares of 50, a pool of 800
	if bg.Share() != 50 || bg.Pool() != 800 || bg.Most() != 850 || bg.Limit() != 1000 {
		t.Fatalf("share %d, pool %d, most %d, limit %d", bg.Share(), bg.Pool(), bg.Most(), bg.Limit())
	}
	steps := []struct {
		name       string
		held, n    int64
		take, want bool // take or give; whether a take fits
		used       int64
	}{
		{"a big request takes its share and the pool", 0, 850, true, true, 850},
		{"another, beyond its share, does not fit", 0, 51, true, false, 850},
		{"within its share it fits", 0, 50, true, true, 900},
		{"the big one gives back 100 of the pool", 850, 100, false, false, 800},
		{"now 51 fit", 0, 51, true, true, 851},
	}
	for _, s := range steps {
		if s.take {
			if got := bg.Take(s.held, s.n); got != s.want {
				t.Fatalf("%s: Take = %v", s.name, got)
			}
		} else {
			bg.Give(s.held, s.n)
		}
		if bg.Used() != s.used {
			t.Fatalf("%s: used %d, want %d", s.name, bg.Used(), s.used)
		}
	}
}
