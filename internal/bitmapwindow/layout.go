package bitmapwindow

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

func init() { layout.Register(bitmapWindow{}) }

// bitmapWindow is the windowed bitmap, format.BitmapWindow, as package
// layout knows it; now is the clock of the states it opens (nil:
// time.Now).
type bitmapWindow struct{ clock *clock }

// clock is a layout's clock, behind a pointer so that the layout stays
// comparable (package layout looks layouts up by value).
type clock struct{ now func() time.Time }

// now returns the clock's function, nil for time.Now.
func (l bitmapWindow) now() func() time.Time {
	if l.clock == nil {
		return nil
	}
	return l.clock.now
}

func (bitmapWindow) ID() format.Layout   { return format.BitmapWindow }
func (bitmapWindow) Name() string        { return format.BitmapWindow.Name() }
func (bitmapWindow) Merge() layout.Merge { return layout.MergeCopy }

func (l bitmapWindow) WithClock(now func() time.Time) layout.Layout { l.clock = &clock{now}; return l }

// Plan gives each shard its ring, one bitmap a generation and one more;
// a plan is checked against the chance that a new URL is set in one of
// the window's bitmaps when Capacity URLs are spread evenly over it.
func (bitmapWindow) Plan(p layout.Plan, m *format.Meta) error {
	if p.Key != nil {
		return fmt.Errorf("%w: layout %s has no key", layout.ErrPlan, format.BitmapWindow.Name())
	}
	want := format.RingShardBytes(m.Window.Generations)
	if p.Size != 0 && m.Sizes.ShardBytes != want {
		return fmt.Errorf("%w: a bitmap window of %d generations is %d MiB, not %d MiB", layout.ErrPlan,
			m.Window.Generations, want*format.Shards>>20, p.Size>>20)
	}
	m.Sizes.ShardBytes = want
	if p.Capacity != 0 {
		if f := FalseDup(p.Capacity, m.Window.Generations); f > p.FalseDup {
			return fmt.Errorf("%w: with %d URLs in the window the bitmap window reports a new URL a duplicate with chance %.3g, over %g; the keyed layout can",
				layout.ErrPlan, p.Capacity, f, p.FalseDup)
		}
	}
	return nil
}

// FalseDup is the chance that a new URL is reported a duplicate by a
// bitmap window holding n distinct URLs spread evenly over g generations:
// window.RingFalseDup of g bitmaps each holding n/g.
func FalseDup(n uint64, g int) float64 {
	f := -math.Expm1(float64(n) / float64(g) * math.Log1p(-1/float64(uint64(1)<<32)))
	fill := make([]float64, g)
	for i := range fill {
		fill[i] = f
	}
	return window.RingFalseDup(fill)
}

// Open returns the ring over d's shards, decided under the directory's
// lock file (keyedwindow.OpenLock).
func (l bitmapWindow) Open(d *shardfile.Dir) (layout.Local, error) {
	lock, closeLock, err := keyedwindow.OpenLock(d)
	if err != nil {
		return nil, err
	}
	sh := make([][]byte, format.Shards)
	for i := range sh {
		sh[i] = d.Shard(i)
	}
	t, err := NewTable(d.Meta().Window, sh, lock, Options{Clock: l.now(), ReadOnly: d.ReadOnly()})
	if err != nil {
		closeLock()
		return nil, err
	}
	return &local{t: t, dir: d, lock: lock, closeLock: closeLock}, nil
}

// local is a Table as a layout.Local.
type local struct {
	t         *Table
	dir       *shardfile.Dir
	lock      window.Locker
	closeLock func() error
}

func (l *local) Decide(_ context.Context, sigs []signature.Signature, seen []bool, dryRun bool) (err error) {
	defer layout.CatchFault(l.dir.Fault, debug.SetPanicOnFault(true), &err)
	if dryRun {
		l.t.Check(sigs, seen[:len(sigs)])
		return nil
	}
	return l.t.DecideBatch(sigs, seen[:len(sigs)], nil)
}

// Exclusive runs fn holding the lock of decisions (layout.Exclusiver).
func (l *local) Exclusive(fn func() error) (err error) {
	if lerr := window.Locked(l.lock, func() { err = fn() }); lerr != nil {
		return lerr
	}
	return err
}

func (l *local) Report(_ context.Context, where string) (r layout.Report, err error) {
	defer layout.CatchFault(l.dir.Fault, debug.SetPanicOnFault(true), &err)
	return LayoutReport(where, l.dir.Meta(), l.t.Report()), nil
}

func (l *local) NotStored() uint64 { return 0 }
func (l *local) Close() error      { return l.closeLock() }

// LayoutReport is the report of a windowed bitmap state of metadata m
// that measured br.
func LayoutReport(where string, m format.Meta, br Report) layout.Report {
	r := layout.NewReport(where, m)
	var set uint64
	for _, n := range br.BitsSet {
		set += n
	}
	bits := uint64(signature.Shards) * signature.BitsPerShard
	all := bits * uint64(len(br.BitsSet)) // the window's bitmaps
	r.Bits, r.BitsSet, r.FalseDupChance, r.Shards = all, &set, br.FalseDup, br.Shards
	r.FillRatio = float64(set) / float64(all)
	w := layout.NewWindowReport(m.Window, br.Generation)
	for age, n := range br.BitsSet {
		n := n
		if age < len(w.Ages) {
			w.Ages[age].BitsSet, w.Ages[age].Fill = &n, br.Fill[age]
		}
	}
	// Linear counting over the union of the live bitmaps: a URL is one bit
	// of it, in however many generations it is held.
	distinct := math.Inf(1) // every bit set: no estimate, as for the bitmap
	if br.Union < bits {
		distinct = -float64(bits) * math.Log1p(-float64(br.Union)/float64(bits))
		r.EstimatedDistinct, r.DistinctBy = &distinct, "linear counting over the union of the live generations"
	}
	r.Window = w
	r.Used(distinct)
	return r
}

var (
	_ layout.Exclusiver = (*local)(nil)
	_ layout.Clocked    = bitmapWindow{}
)

// Help is the windowed bitmap's paragraph in init's help (layout.Words).
func (bitmapWindow) Help() string {
	return `  bitmap-window (--layout bitmap --window D)
          the patent's bitmap with time: a ring of G+1 bitmaps a shard,
          one a generation, the one leaving the window cleared when the
          next generation starts; (G+1) x 512 MiB, n/2^32 false
          duplicates for n URLs in the window; it cannot forget one URL.
`
}

// Parameters: the window is said by init and stats themselves.
func (bitmapWindow) Parameters(format.Meta) string { return "" }

var _ layout.Words = bitmapWindow{}
