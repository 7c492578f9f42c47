package bitcheck

import (
	"context"
	"fmt"
	"math"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

func init() { layout.Register(bitmap{}) }

// bitmap is the patent's layout, format.Bitmap, as package layout knows
// it.
type bitmap struct{}

func (bitmap) ID() format.Layout   { return format.Bitmap }
func (bitmap) Name() string        { return format.Bitmap.Name() }
func (bitmap) Merge() layout.Merge { return layout.MergeOr }

// Plan keeps the bitmap's one size, and checks a plan against its
// false-duplicate chance.
func (bitmap) Plan(p layout.Plan, m *format.Meta) error {
	if p.Key != nil {
		return fmt.Errorf("%w: layout %s has no key", layout.ErrPlan, format.Bitmap.Name())
	}
	if p.Capacity != 0 {
		if f := FalseDup(p.Capacity); f > p.FalseDup {
			return fmt.Errorf("%w: after %d URLs the bitmap reports a new URL a duplicate with chance %.3g, over %g; the keyed layout can",
				layout.ErrPlan, p.Capacity, f, p.FalseDup)
		}
	}
	return nil
}

// Open returns a Set over d.
func (bitmap) Open(d *shardfile.Dir) (layout.Local, error) { return local{New(d)}, nil }

// local is a Set as a layout.Local.
type local struct{ *Set }

func (l local) Report(_ context.Context, where string) (layout.Report, error) {
	f, err := l.Fill()
	if err != nil {
		return layout.Report{}, err
	}
	return Report(where, l.dir.Meta(), f), nil
}

func (local) NotStored() uint64 { return 0 }
func (local) Close() error      { return nil }

// FalseDup is the chance that the next new URL is reported a duplicate by
// a bitmap holding n distinct URLs: the fraction of its 2^32 bits set,
// 1 − (1 − 2^−32)^n.
func FalseDup(n uint64) float64 {
	return -math.Expm1(float64(n) * math.Log1p(-1/float64(1<<32)))
}

// Report is the report of a Bitmap state of metadata m and fill f.
func Report(where string, m format.Meta, f Fill) layout.Report {
	r := layout.NewReport(where, m)
	set := f.Total()
	r.Bits, r.BitsSet, r.FillRatio, r.FalseDupChance, r.Shards = uint64(Bits), &set, f.Ratio(), f.Ratio(), f.Shard[:]
	e := f.Estimate()
	if !math.IsInf(e, 0) {
		r.EstimatedDistinct, r.DistinctBy = &e, "linear counting"
	}
	r.Used(e)
	return r
}

var _ layout.Orer = local{}
