package keyedwindow_test

import (
	"errors"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

// A plan of N URLs live in the window at a false-duplicate chance P gets
// the smallest power-of-two bucket area a shard that meets both P (26-bit
// fingerprints: window.KeyedFalseDup) and the not-stored bound; a size
// too small for the plan, or a plan no size meets, is refused.
func TestPlanArea(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		p    float64
		area int64 // 0: refused
	}{
		{10_000_000, 1e-8, 8 << 20},  // L ≤ 0.67 slots compared: 2 GiB, as docs/windows.md says
		{10_000_000, 1e-6, 2 << 20},  // the smallest
		{100_000_000, 1e-6, 4 << 20}, // the not-stored bound, not P, sets it
		{10_000_000_000, 1e-9, 0},    // more than 1 GiB a shard
	} {
		area, err := keyedwindow.PlanArea(tc.n, tc.p)
		switch {
		case tc.area == 0 && err == nil:
			t.Errorf("PlanArea(%d, %g) = %d, want refused", tc.n, tc.p, area)
		case tc.area != 0 && (err != nil || area != tc.area):
			t.Errorf("PlanArea(%d, %g) = %d, %v; want %d", tc.n, tc.p, area, err, tc.area)
		case tc.area != 0 && window.KeyedFalseDup(float64(tc.n), float64(area/4*format.Shards)) > tc.p:
			t.Errorf("PlanArea(%d, %g) = %d, whose false-dup chance is over the plan", tc.n, tc.p, area)
		}
	}
	spec := format.Spec{Layout: format.KeyedWindow, Algorithm: signature.SipHash, Mode: signature.Safe}
	w := window.Spec{Window: 30 * 24 * time.Hour, Generations: 6, Policy: window.FirstSeen}
	m, err := state.Init{Spec: spec, Window: w, Capacity: 10_000_000, FalseDup: 1e-8}.Meta(time.Now())
	if err != nil || m.Sizes.ShardBytes != keyedwindow.HeaderBytes+8<<20 {
		t.Fatalf("Init.Meta: %d-byte shards, %v", m.Sizes.ShardBytes, err)
	}
	_, err = state.Init{Spec: spec, Window: w, Capacity: 10_000_000, FalseDup: 1e-8, Size: 512 << 20}.Meta(time.Now())
	if !errors.Is(err, layout.ErrPlan) {
		t.Fatalf("a size too small for the plan: %v", err)
	}
}
