package state

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// ErrPlan is returned by Init.Meta when a state cannot be made as asked: a
// size its layout cannot have, or a capacity and false-duplicate chance it
// cannot meet. The message says what can. It is layout.ErrPlan.
var ErrPlan = layout.ErrPlan

// Init is what a new state is asked to be: its spec, and either its size,
// or the distinct URLs it must hold (Capacity) with at most a FalseDup
// chance that the next new one is reported a duplicate, or both (the plan
// is then checked against the size). Neither: the smallest state, 512 MiB.
type Init struct {
	Spec     format.Spec
	Size     int64 // bytes of the whole state: 256 shards of a power of two from 2 MiB
	Capacity uint64
	FalseDup float64
	// Key is a keyed state's secret key (every layout but Bitmap); nil
	// makes a new one from crypto/rand.
	Key *signature.Key
	// Filter are the parameters asked of a layout of the Bloom family;
	// a zero field is chosen (see FilterPlan).
	Filter format.Filter
	// Window is the time window of a windowed layout (keyed-window,
	// bitmap-window), required for them and refused for the others; a
	// zero Epoch is the time of Meta's now. With it, Size is that of the
	// buckets of keyed-window (the 64-byte shard headers come on top),
	// and Capacity the URLs live in the window at once.
	Window window.Spec
}

// Meta returns the metadata of the state i asks for, with its key for the
// Keyed layout, for Options.New.
func (i Init) Meta(now time.Time) (format.Meta, error) {
	m := format.NewMeta(i.Spec, now)
	switch w := i.Spec.Layout.Windowed(); {
	case w && i.Window.Generations == 0:
		return m, fmt.Errorf("%w: layout %s needs a window (--window)", ErrPlan, i.Spec.Layout.Name())
	case !w && i.Window.Generations != 0:
		return m, fmt.Errorf("%w: layout %s has no window; --window takes keyed or bitmap", ErrPlan, i.Spec.Layout.Name())
	case w:
		m.Window = i.Window
		if m.Window.Epoch.IsZero() {
			m.Window.Epoch = now.UTC().Truncate(time.Millisecond)
		}
		if err := m.Window.Validate(); err != nil {
			return m, fmt.Errorf("%w: %w", ErrPlan, err)
		}
		if i.Spec.Layout == format.BitmapWindow {
			m.Sizes.ShardBytes = format.RingShardBytes(m.Window.Generations)
		}
	}
	if i.Capacity != 0 && !(i.FalseDup > 0 && i.FalseDup < 1) || i.Capacity == 0 && i.FalseDup != 0 {
		return m, fmt.Errorf("%w: a plan is a capacity of at least 1 URL and a false-duplicate chance between 0 and 1 (have %d and %g)", ErrPlan, i.Capacity, i.FalseDup)
	}
	if i.Size != 0 {
		if err := checkSize(i.Spec.Layout, i.Size); err != nil {
			return m, err
		}
		m.Sizes.ShardBytes = i.Size / format.Shards
		switch i.Spec.Layout {
		case format.KeyedWindow: // the size of the buckets
			m.Sizes.ShardBytes += format.WindowHeaderBytes
		case format.BitmapWindow: // one size, (G+1) bitmaps a shard
			if want := format.RingShardBytes(m.Window.Generations); m.Sizes.ShardBytes != want {
				return m, fmt.Errorf("%w: a bitmap window of %d generations is %d bytes, not %d", ErrPlan,
					m.Window.Generations, want*format.Shards, i.Size)
			}
		}
		if err := i.Spec.Layout.CheckSizes(m.Sizes); err != nil {
			return m, fmt.Errorf("%w: %d bytes: %w", ErrPlan, i.Size, err)
		}
	}
	m.Capacity, m.FalseDup = i.Capacity, i.FalseDup
	l, err := layout.Lookup(i.Spec.Layout)
	if err != nil {
		return m, fmt.Errorf("%w: layout %s", ErrPlan, i.Spec.Layout)
	}
	if err := l.Plan(layout.Plan{Size: i.Size, Capacity: i.Capacity, FalseDup: i.FalseDup, Key: i.Key, Filter: i.Filter}, &m); err != nil {
		return m, err
	}
	if !i.Spec.Layout.Keyed() {
		return m, nil
	}
	k := i.Key
	if k == nil {
		nk, err := keyed.NewKey()
		if err != nil {
			return m, err
		}
		k = &nk
	}
	m.Key, m.KeyID = k, format.KeyID(*k)
	return m, nil
}

// BitmapFalseDup is the chance that the next new URL is reported a
// duplicate by a bitmap holding n distinct URLs: the fraction of its 2^32
// bits set, 1 − (1 − 2^−32)^n.
func BitmapFalseDup(n uint64) float64 { return bitcheck.FalseDup(n) }

// checkSize returns ErrPlan, saying what would work, for a size the layout
// cannot take: not a power of two, or out of its range.
func checkSize(l format.Layout, size int64) error {
	if l == format.BitmapWindow {
		if size%format.Shards != 0 {
			return fmt.Errorf("%w: size %s is not 256 shards of a whole size", ErrPlan, format.FormatBytes(size))
		}
		return nil
	}
	lo, hi := l.SizeRange()
	if size >= lo && size <= hi && size&(size-1) == 0 {
		return nil
	}
	if lo == hi {
		return fmt.Errorf("%w: size %s: layout %s is always %s (leave the size out)", ErrPlan,
			format.FormatBytes(size), l.Name(), format.FormatBytes(lo))
	}
	why := "not a power of two"
	if size < lo || size > hi {
		why = "out of range"
	}
	near := ""
	if size > lo && size < hi && size&(size-1) != 0 {
		below := int64(1) << (63 - bits.LeadingZeros64(uint64(size)))
		near = fmt.Sprintf("; %s or %s would do", format.FormatBytes(below), format.FormatBytes(below*2))
	}
	return fmt.Errorf("%w: size %s is %s: layout %s takes a power of two from %s to %s (256 equal shards)%s", ErrPlan,
		format.FormatBytes(size), why, l.Name(), format.FormatBytes(lo), format.FormatBytes(hi), near)
}
