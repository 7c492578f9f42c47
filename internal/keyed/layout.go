package keyed

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func init() { layout.Register(keyedLayout{}) }

// keyedLayout is the keyed fingerprint table, format.Keyed, as package
// layout knows it.
type keyedLayout struct{}

func (keyedLayout) ID() format.Layout   { return format.Keyed }
func (keyedLayout) Name() string        { return format.Keyed.Name() }
func (keyedLayout) Merge() layout.Merge { return layout.MergeReinsert }

// Plan sizes the table for the plan (the smallest geometry that meets it,
// Plan) unless a size was asked, which it then checks.
func (keyedLayout) Plan(p layout.Plan, m *format.Meta) error {
	if p.Capacity == 0 {
		return nil // the size asked, or the smallest
	}
	g, err := Plan(p.Capacity, p.FalseDup)
	if err != nil {
		return fmt.Errorf("%w: %w", layout.ErrPlan, err)
	}
	if p.Size == 0 {
		m.Sizes.ShardBytes = g.ShardBytes
		return nil
	}
	if g.ShardBytes > m.Sizes.ShardBytes {
		return fmt.Errorf("%w: %d URLs at a false-duplicate chance of %g need %d MiB; %d MiB was asked",
			layout.ErrPlan, p.Capacity, p.FalseDup, g.StateBytes()>>20, p.Size>>20)
	}
	return nil
}

// Open returns a Set over a Table of d's shards.
func (keyedLayout) Open(d *shardfile.Dir) (layout.Local, error) {
	sh := make([][]byte, format.Shards)
	for i := range sh {
		sh[i] = d.Shard(i)
	}
	t, err := NewTable(sh, d.ReadOnly())
	if err != nil {
		return nil, err
	}
	return &local{Set: NewSet(t, d.Fault), dir: d}, nil
}

// local is a Set as a layout.Local; it is also the Inserter that merges
// into it (Set.Insert).
type local struct {
	*Set
	dir *shardfile.Dir
}

func (l *local) Report(_ context.Context, where string) (r layout.Report, err error) {
	defer func(restore bool) { // a shard truncated under us: an error, not SIGBUS
		debug.SetPanicOnFault(restore)
		if rec := recover(); rec != nil {
			if err = l.dir.Fault(rec); err == nil {
				panic(rec)
			}
		}
	}(debug.SetPanicOnFault(true))
	return Report(where, l.dir.Meta(), l.t.Fill()), nil
}

func (l *local) NotStored() uint64 { return l.t.Counts().Full }

// Forget forgets sigs (layout.Forgetter): each slot holding one becomes
// Forgotten.
func (l *local) Forget(_ context.Context, sigs []signature.Signature, was []bool) (err error) {
	defer layout.CatchFault(l.dir.Fault, debug.SetPanicOnFault(true), &err)
	g := l.t.geo
	for i, sig := range sigs {
		was[i] = l.t.Forget(g.Locate(uint64(sig)))
	}
	return nil
}
func (l *local) Close() error { return nil }

// Report is the report of a Keyed state of metadata m and fill f.
func Report(where string, m format.Meta, f Fill) layout.Report {
	r := layout.NewReport(where, m)
	o := f.Occupancy()
	used, full, notStored := f.Occupied(), o.FullFrac(), o.NotStored()
	distinct := float64(used)
	r.Slots, r.SlotsUsed, r.FillRatio = f.Buckets*SlotsPerBucket, &used, f.Ratio()
	r.EstimatedDistinct, r.FalseDupChance = &distinct, o.FalseDup()
	r.FullBuckets, r.NotStoredChance, r.Shards = &full, &notStored, f.Shard[:]
	if !r.Planned {
		if g, err := NewGeometry(m.Sizes.ShardBytes); err == nil {
			r.Capacity, r.CapacityMeans = g.Capacity(), "before the not-stored chance reaches 1e-4"
		}
	}
	r.Used(distinct)
	return r
}

var (
	_ Inserter         = (*local)(nil)
	_ layout.Forgetter = (*local)(nil)
)
