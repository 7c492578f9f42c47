package keyedwindow

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

func init() { layout.Register(keyedWindow{}) }

// LockName is the lock file of a windowed state directory, beside its
// shards: the processes deciding on the state take it for a batch
// (window.FileLocker). It holds no data; a missing one is made again.
const LockName = "urldedupd.window.lock"

// keyedWindow is the windowed keyed table, format.KeyedWindow, as package
// layout knows it; now is the clock of the states it opens (nil:
// time.Now).
type keyedWindow struct{ clock *clock }

// clock is a layout's clock, behind a pointer so that the layout stays
// comparable (package layout looks layouts up by value).
type clock struct{ now func() time.Time }

// now returns the clock's function, nil for time.Now.
func (l keyedWindow) now() func() time.Time {
	if l.clock == nil {
		return nil
	}
	return l.clock.now
}

func (keyedWindow) ID() format.Layout   { return format.KeyedWindow }
func (keyedWindow) Name() string        { return format.KeyedWindow.Name() }
func (keyedWindow) Merge() layout.Merge { return layout.MergeCopy }

func (l keyedWindow) WithClock(now func() time.Time) layout.Layout { l.clock = &clock{now}; return l }

// Plan sizes the buckets: the size asked (of the buckets, without the
// headers), or the smallest power of two per shard in which Capacity URLs
// live in the window leave the next new one a duplicate with chance at
// most FalseDup (window.KeyedFalseDup: 26-bit fingerprints) and not
// stored with at most keyed.NegligibleNotStored.
func (keyedWindow) Plan(p layout.Plan, m *format.Meta) error {
	if p.Size == 0 {
		m.Sizes.ShardBytes = HeaderBytes + keyed.MinShardBytes
	}
	if p.Capacity == 0 {
		return nil
	}
	area, err := PlanArea(p.Capacity, p.FalseDup)
	if err != nil {
		return fmt.Errorf("%w: %w", layout.ErrPlan, err)
	}
	if p.Size == 0 {
		m.Sizes.ShardBytes = HeaderBytes + area
		return nil
	}
	if have := m.Sizes.ShardBytes - HeaderBytes; area > have {
		return fmt.Errorf("%w: %d URLs in the window at a false-duplicate chance of %g need %d MiB of buckets; %d MiB was asked",
			layout.ErrPlan, p.Capacity, p.FalseDup, area*format.Shards>>20, have*format.Shards>>20)
	}
	return nil
}

// PlanArea returns the smallest bucket area of a shard (a power of two
// from keyed.MinShardBytes to keyed.MaxShardBytes) for capacity URLs live
// in the window at a false-duplicate chance of at most falseDup and a
// not-stored chance of at most keyed.NegligibleNotStored.
func PlanArea(capacity uint64, falseDup float64) (int64, error) {
	if capacity == 0 || !(falseDup > 0 && falseDup < 1) {
		return 0, fmt.Errorf("capacity %d, false-duplicate chance %g", capacity, falseDup)
	}
	var fd, ns float64
	for area := int64(keyed.MinShardBytes); area <= keyed.MaxShardBytes; area *= 2 {
		slots := float64(area / 4 * format.Shards)
		buckets := slots / keyed.SlotsPerBucket
		fd = window.KeyedFalseDup(float64(capacity), slots)
		ns = keyed.Predict(float64(capacity) / buckets).NotStored()
		if fd <= falseDup && ns <= keyed.NegligibleNotStored {
			return area, nil
		}
	}
	return 0, fmt.Errorf("%d URLs in %d GiB give a false-duplicate chance of %.3g and a not-stored chance of %.3g, asked %g",
		capacity, int64(keyed.MaxShardBytes)*format.Shards>>30, fd, ns, falseDup)
}

// Open returns the table over d's shards, decided under the directory's
// lock file (a lock in memory for a state in memory).
func (l keyedWindow) Open(d *shardfile.Dir) (layout.Local, error) {
	m := d.Meta()
	lock, closeLock, err := OpenLock(d)
	if err != nil {
		return nil, err
	}
	sh := make([][]byte, format.Shards)
	for i := range sh {
		sh[i] = d.Shard(i)
	}
	t, err := NewTable(m.Window, sh, lock, Options{Clock: l.now(), ReadOnly: d.ReadOnly(), Hook: killHook()})
	if err != nil {
		closeLock()
		return nil, err
	}
	return &local{t: t, dir: d, lock: lock, closeLock: closeLock}, nil
}

// OpenLock returns the lock of a windowed state directory's decisions,
// and how to release it: its lock file (LockName, made when missing
// unless d is read-only), or a lock in memory for a state in memory or
// read-only (which decides nothing).
func OpenLock(d *shardfile.Dir) (window.Locker, func() error, error) {
	if d.InMemory() || d.ReadOnly() {
		return &window.MemoryLocker{}, func() error { return nil }, nil
	}
	fl, err := window.OpenFileLocker(filepath.Join(d.Path(), LockName), true)
	if err != nil {
		return nil, nil, fmt.Errorf("keyedwindow: %w", err)
	}
	return fl, fl.Close, nil
}

// local is a Table as a layout.Local.
type local struct {
	t         *Table
	dir       *shardfile.Dir
	lock      window.Locker
	closeLock func() error
	full      atomic.Uint64
	pool      sync.Pool // *localScratch
}

type localScratch struct {
	locs []keyed.Loc
	res  []window.Result
}

func (l *local) scratch(n int) *localScratch {
	sc, _ := l.pool.Get().(*localScratch)
	if sc == nil {
		sc = &localScratch{}
	}
	if cap(sc.locs) < n {
		sc.locs, sc.res = make([]keyed.Loc, n), make([]window.Result, n)
	}
	sc.locs, sc.res = sc.locs[:n], sc.res[:n]
	return sc
}

func (l *local) locate(sc *localScratch, sigs []signature.Signature) {
	g := l.t.Geometry()
	for i, sig := range sigs {
		sc.locs[i] = g.Locate(uint64(sig))
	}
}

// Decide decides sigs (a dry run reads without the lock). A URL whose
// buckets have no free slot is answered new and counted (NotStored).
func (l *local) Decide(_ context.Context, sigs []signature.Signature, seen []bool, dryRun bool) (err error) {
	defer layout.CatchFault(l.dir.Fault, debug.SetPanicOnFault(true), &err)
	sc := l.scratch(len(sigs))
	defer l.pool.Put(sc)
	l.locate(sc, sigs)
	if dryRun {
		l.t.Check(sc.locs, seen[:len(sigs)])
		return nil
	}
	if err := l.t.DecideBatch(sc.locs, sc.res, nil); err != nil {
		return err
	}
	var full uint64
	for i, r := range sc.res {
		seen[i] = r == window.Dup
		if r == window.Full {
			full++
		}
	}
	if full != 0 {
		l.full.Add(full)
	}
	return nil
}

// Forget forgets sigs under the lock (layout.Forgetter).
func (l *local) Forget(_ context.Context, sigs []signature.Signature, was []bool) (err error) {
	defer layout.CatchFault(l.dir.Fault, debug.SetPanicOnFault(true), &err)
	sc := l.scratch(len(sigs))
	defer l.pool.Put(sc)
	l.locate(sc, sigs)
	return l.t.Forget(sc.locs, was[:len(sigs)])
}

// Exclusive runs fn holding the lock of decisions (layout.Exclusiver):
// a merge copies a whole state into an empty one meanwhile.
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

func (l *local) NotStored() uint64 { return l.full.Load() }
func (l *local) Close() error      { return l.closeLock() }

// LayoutReport is the report of a windowed keyed state of metadata m
// that measured kr.
func LayoutReport(where string, m format.Meta, kr Report) layout.Report {
	r := layout.NewReport(where, m)
	live := kr.Live()
	distinct := float64(live)
	r.Slots, r.SlotsUsed, r.FillRatio = kr.Slots, &live, distinct/math.Max(1, float64(kr.Slots))
	r.EstimatedDistinct, r.FalseDupChance, r.Shards = &distinct, kr.FalseDup, kr.Shards
	w := layout.NewWindowReport(m.Window, kr.Generation)
	w.Expired = &kr.Expired
	for age := range w.Ages {
		n := kr.Held[age]
		w.Ages[age].URLs = &n
		w.Ages[age].Fill = float64(n) / math.Max(1, float64(kr.Slots))
	}
	r.Window = w
	if !r.Planned {
		if g, err := keyed.NewGeometry(m.Sizes.ShardBytes - HeaderBytes); err == nil {
			r.Capacity, r.CapacityMeans = g.Capacity(), "live in the window before the not-stored chance reaches 1e-4"
		}
	}
	r.Used(distinct)
	return r
}

var (
	_ layout.Forgetter  = (*local)(nil)
	_ layout.Exclusiver = (*local)(nil)
	_ layout.Clocked    = keyedWindow{}
)

// Help is the windowed keyed layout's paragraph in init's help
// (layout.Words).
func (keyedWindow) Help() string {
	return `  keyed-window (--layout keyed --window D)
          keyed's table with time: each slot a 26-bit fingerprint and a
          6-bit generation tag, so a URL is a duplicate only while seen
          within the window (first-seen or last-seen). Expired and
          forgotten slots are reused in place; one lock a batch (a lock
          file) keeps it exactly once. About 64x keyed's false duplicates
          (8.9e-9 at 10M URLs in 2 GiB); forget works.
`
}

// Parameters: the window is said by init and stats themselves.
func (keyedWindow) Parameters(format.Meta) string { return "" }

var _ layout.Words = keyedWindow{}
