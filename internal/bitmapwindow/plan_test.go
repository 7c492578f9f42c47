package bitmapwindow_test

import (
	"errors"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/window"
)

// A bitmap window has one size, (G+1) bitmaps a shard: any other size
// asked is refused, not quietly replaced; a plan past its false-duplicate
// chance is refused too.
func TestPlanSizes(t *testing.T) {
	spec := format.Spec{Layout: format.BitmapWindow, Algorithm: signature.IEEE, Mode: signature.Safe}
	w := window.Spec{Window: time.Hour, Generations: 2, Policy: window.FirstSeen}
	m, err := state.Init{Spec: spec, Window: w}.Meta(time.Now())
	if err != nil || m.Sizes.ShardBytes != format.RingShardBytes(2) {
		t.Fatalf("default: %d-byte shards, %v", m.Sizes.ShardBytes, err)
	}
	if _, err := (state.Init{Spec: spec, Window: w, Size: 3 * format.Shards * format.RingShardBytes(2)}).Meta(time.Now()); !errors.Is(err, layout.ErrPlan) {
		t.Errorf("another size: %v", err)
	}
	if _, err := (state.Init{Spec: spec, Window: w, Size: format.Shards * format.RingShardBytes(2)}).Meta(time.Now()); err != nil {
		t.Errorf("its own size: %v", err)
	}
	if _, err := (state.Init{Spec: spec, Window: w, Capacity: 100_000_000, FalseDup: 1e-6}).Meta(time.Now()); !errors.Is(err, layout.ErrPlan) {
		t.Errorf("a plan it cannot meet: %v", err)
	}
}
