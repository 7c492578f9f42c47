package layout

import (
	"fmt"
	"math"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
)

// Report is what `urldedupd stats --json` prints, /v1/stats returns and
// the metrics export: how full a state is, measured, and what that means
// for its answers, by its layout's own formula.
type Report struct {
	Dir        string `json:"dir"`
	Layout     string `json:"layout"`
	Signature  string `json:"signature"`
	Normalize  string `json:"normalize"`
	Created    string `json:"created"`
	StateBytes int64  `json:"state_bytes"`
	// FillRatio is the fraction of bits set (Bitmap) or of slots
	// occupied (Keyed).
	FillRatio float64 `json:"fill_ratio"`
	// EstimatedDistinct is the distinct URLs the state holds: by linear
	// counting for Bitmap (null when the bitmap is full), the occupied
	// slots for Keyed (exact: one slot per URL stored).
	EstimatedDistinct *float64 `json:"estimated_distinct"`
	// FalseDupChance is the chance that the next new URL is reported a
	// duplicate: the fill ratio for Bitmap; for Keyed, one minus the
	// chance that none of the fingerprints its scan compares equals its
	// own (keyed.Occupancy.FalseDup, from the measured bucket occupancy).
	FalseDupChance float64 `json:"false_duplicate_chance"`
	// Capacity is the distinct URLs the state was planned for (init
	// --capacity), or else, for Keyed, the URLs it holds before the chance
	// of not storing a new one reaches keyed.NegligibleNotStored. 0: a
	// Bitmap that was not planned, which has no capacity as such (its
	// false-duplicate chance grows with every URL).
	Capacity uint64 `json:"capacity"`
	// Planned reports whether Capacity is the plan of init.
	Planned bool `json:"planned"`
	// PlannedFalseDup is the false-duplicate chance planned at Capacity.
	PlannedFalseDup float64 `json:"planned_false_duplicate_chance,omitempty"`
	// CapacityUsed is EstimatedDistinct / Capacity: past 1 the plan no
	// longer holds.
	CapacityUsed *float64 `json:"capacity_used,omitempty"`

	// Bitmap only.
	Bits    uint64  `json:"bits,omitempty"`
	BitsSet *uint64 `json:"bits_set,omitempty"`

	// Keyed only.
	Slots     uint64  `json:"slots,omitempty"`
	SlotsUsed *uint64 `json:"slots_used,omitempty"`
	// FullBuckets is the fraction of buckets with no empty slot.
	FullBuckets *float64 `json:"full_buckets_ratio,omitempty"`
	// NotStoredChance is the chance that the next new URL finds both its
	// buckets full: it is answered new, but not stored, so its repeats
	// will be answered new too (keyed.Occupancy.NotStored).
	NotStoredChance *float64 `json:"not_stored_chance,omitempty"`

	// The Bloom family only: the parameters (K positions; MDBF's groups
	// and V1 bits; DSBF's children and fmax), and for DSBF the tree: its
	// leaves (split or live), height, live leaves past their bound that
	// cannot split, and the fewest and most URLs in a live leaf.
	Filter          *format.Filter `json:"filter,omitempty"`
	Leaves          int            `json:"leaves,omitempty"`
	Height          int            `json:"height,omitempty"`
	LiveLeaves      int            `json:"live_leaves,omitempty"`
	OverBoundLeaves *int           `json:"over_bound_leaves,omitempty"`
	LeafURLsMin     uint64         `json:"leaf_urls_min,omitempty"`
	LeafURLsMax     uint64         `json:"leaf_urls_max,omitempty"`

	// Window is the window of a windowed layout, generation by
	// generation; nil for the others.
	Window *WindowReport `json:"window,omitempty"`

	// Shards are the bits set (Bitmap, the Bloom family) or slots
	// occupied (Keyed) per shard.
	Shards []uint64 `json:"shards"`

	// The layout's words for stats, not in the JSON: how EstimatedDistinct
	// was found ("linear counting"), and what a Capacity not planned
	// means ("URLs before …"), each "" where it has none.
	DistinctBy    string `json:"-"`
	CapacityMeans string `json:"-"`
}

// NewReport returns the report of a state of metadata m at where, with
// what the metadata says; the layout fills in what it measures.
func NewReport(where string, m format.Meta) Report {
	r := Report{
		Dir: where, Layout: m.Spec.Layout.Name(), Signature: m.Spec.Algorithm.String(), Normalize: m.Spec.Mode.String(),
		Created: m.Created.Format(time.RFC3339), StateBytes: m.Sizes.Bytes(),
	}
	if m.Capacity != 0 {
		r.Capacity, r.Planned, r.PlannedFalseDup = m.Capacity, true, m.FalseDup
	}
	return r
}

// Used sets CapacityUsed from the distinct URLs held, when planned.
func (r *Report) Used(distinct float64) {
	if r.Capacity != 0 && !math.IsInf(distinct, 0) {
		u := distinct / float64(r.Capacity)
		r.CapacityUsed = &u
	}
}

// String is a one-line summary, for logs.
func (r Report) String() string {
	return fmt.Sprintf("%s %s: fill %.3g, false-duplicate chance %.3g", r.Dir, r.Layout, r.FillRatio, r.FalseDupChance)
}
