package bloomlayout

import (
	"context"
	"math"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

func init() {
	layout.Register(family{format.Bloom})
	layout.Register(family{format.MDBF})
	layout.Register(treeLayout{family{format.DSBF}}) // kept in Redis too (redis.go)
}

// family is one layout of the Bloom family (format.Bloom, format.MDBF,
// format.DSBF) as package layout knows it.
type family struct{ id format.Layout }

func (f family) ID() format.Layout { return f.id }
func (f family) Name() string      { return f.id.Name() }

// Merge is by OR for Bloom and MDBF (the union of two filters of the same
// parameters is the filter of the union); a DSBF is only copied whole into
// an empty state (ErrNoMerge).
func (f family) Merge() layout.Merge {
	if f.id == format.DSBF {
		return layout.MergeCopy
	}
	return layout.MergeOr
}

// Open returns a Set over d's shards, locking shard 00 for its batches.
func (family) Open(d *shardfile.Dir) (layout.Local, error) {
	sh := make([][]byte, format.Shards)
	for i := range sh {
		sh[i] = d.Shard(i)
	}
	opts := Options{ReadOnly: d.ReadOnly(), Fault: d.Fault}
	if !d.InMemory() { // in memory, no other process decides: the mutex is enough
		opts.LockPath = filepath.Join(d.Path(), format.ShardName(0))
	}
	s, err := New(d.Meta(), sh, opts)
	if err != nil {
		return nil, err
	}
	return local{s}, nil
}

// local is a Set as a layout.Local.
type local struct{ *Set }

func (l local) Report(_ context.Context, where string) (layout.Report, error) {
	f, err := l.Set.Report()
	if err != nil {
		return layout.Report{}, err
	}
	return StateReport(where, l.meta, f), nil
}

func (local) NotStored() uint64 { return 0 }

// StateReport is the state report (layout.Report) of a state of the Bloom
// family of metadata m and measures f.
func StateReport(where string, m format.Meta, f Report) layout.Report {
	r := layout.NewReport(where, m)
	fl := m.Filter
	set := f.BitsSet
	r.Filter, r.Bits, r.BitsSet, r.Shards = &fl, f.Bits, &set, f.Shards
	r.FillRatio, r.FalseDupChance = float64(f.BitsSet)/float64(f.Bits), f.FalseDup
	if !math.IsInf(f.Distinct, 0) {
		d := f.Distinct
		r.EstimatedDistinct, r.DistinctBy = &d, "estimated from the fill"
	}
	if m.Spec.Layout == format.DSBF {
		over := f.OverBound
		r.Leaves, r.Height, r.LiveLeaves, r.OverBoundLeaves = f.Leaves, f.Height, len(f.LeafURLs), &over
		for i, n := range f.LeafURLs {
			if i == 0 || n < r.LeafURLsMin {
				r.LeafURLsMin = n
			}
			r.LeafURLsMax = max(r.LeafURLsMax, n)
		}
		if r.EstimatedDistinct != nil {
			r.DistinctBy = "counted in the leaves"
		}
		if !r.Planned {
			r.Capacity = f.Capacity
			r.CapacityMeans = "within the tree's bounds (its leaves at each depth filled to their bound, down to the first that cannot split)"
		}
	}
	if r.EstimatedDistinct != nil {
		r.Used(*r.EstimatedDistinct)
	}
	return r
}

var (
	_ layout.Orer       = local{}
	_ layout.Exclusiver = local{}
)
