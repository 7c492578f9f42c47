package window

import "sync/atomic"

// A windowed keyed slot is 32 bits: a 26-bit fingerprint over a 6-bit
// generation tag (the generation mod Tags). A used slot is never 0: a
// fingerprint of 0 becomes 1.
const (
	TagBits = 6
	Tags    = 1 << TagBits
	tagMask = Tags - 1
	// FingerprintBits is what is left of a slot for the fingerprint.
	FingerprintBits = 32 - TagBits
)

// Tag returns the tag of generation g.
func Tag(g int64) uint32 { return uint32(g) & tagMask }

// Slot packs the fingerprint bits of fp (its low 32 bits' top
// FingerprintBits, as the plain keyed layout's 32-bit fingerprint) with
// the tag of generation g. The fingerprint part is never 0.
func Slot(fp uint32, g int64) uint32 { return Fingerprint(fp)<<TagBits | Tag(g) }

// Fingerprint returns the FingerprintBits-bit fingerprint of a 32-bit
// keyed fingerprint: its top bits, 0 made 1.
func Fingerprint(fp uint32) uint32 {
	f := fp >> TagBits
	if f == 0 {
		f = 1
	}
	return f
}

// SlotFingerprint returns the fingerprint part of slot v (0: empty).
func SlotFingerprint(v uint32) uint32 { return v >> TagBits }

// SlotTag returns the tag part of slot v.
func SlotTag(v uint32) uint32 { return v & tagMask }

// TagLive reports whether a slot with tag t is live at generation cur:
// less than Generations generations old, counted mod Tags. It is right as
// long as no slot outlives Tags − 1 generations unswept (SweepHorizon).
func (s Spec) TagLive(cur int64, t uint32) bool {
	return (Tag(cur)-t)&tagMask < uint32(s.Generations)
}

// Dead is the value of a slot whose entry was swept or forgotten: not
// empty (a zero slot ends a bucket's entries, see Spec.Decide), holding no
// fingerprint (fingerprints are never 0), free for the next new URL.
const Dead uint32 = 1

// SlotLive reports whether slot v holds a live entry at generation cur,
// cur being the highest generation used on the state (see SlotLiveFrom).
func (s Spec) SlotLive(cur int64, v uint32) bool {
	return v>>TagBits != 0 && s.TagLive(cur, SlotTag(v))
}

// SlotLiveFrom reports whether slot v holds a live entry at generation cur
// ≥ w, w being the highest generation used on the state: a tag says an
// entry's age only modulo Tags, and only at w does the sweep guarantee that
// no entry is Tags or more generations old, so the age is counted at w and
// the generations since added. A reader that cannot sweep (a dry run)
// decides this way after any time asleep.
func (s Spec) SlotLiveFrom(w, cur int64, v uint32) bool {
	return v>>TagBits != 0 && int64((Tag(w)-SlotTag(v))&tagMask)+(cur-w) < int64(s.Generations)
}

// maxAge is the oldest an entry can be, unswept, while the sweep's
// schedule is kept (see SweepHorizon).
func (s Spec) maxAge() int64 { return 2*s.SweepHorizon() + int64(s.Generations) - 1 }

// JumpNeedsSweep reports whether a writer moving the state from generation
// w (the highest used) to cur must first sweep the whole table with
// SweepJump: after more than Tags − 1 − maxAge generations without a
// writer, an entry the schedule has not swept yet may have a tag that
// looks young again at cur.
func (s Spec) JumpNeedsSweep(w, cur int64) bool { return cur-w > s.JumpLimit() }

// JumpLimit returns the longest pause, in generations, after which a
// writer needs no whole sweep (JumpNeedsSweep).
func (s Spec) JumpLimit() int64 { return Tags - 1 - s.maxAge() }

// SweepJump marks Dead the slots of bucket b expired at generation cur,
// their ages counted at w (SlotLiveFrom), and returns how many. The caller holds
// the lock, sweeps every bucket so before deciding at cur, and starts a
// new pass at cur.
func (s Spec) SweepJump(b []uint32, w, cur int64) int {
	n := 0
	for i := range b {
		v := atomic.LoadUint32(&b[i])
		if v == 0 {
			break
		}
		if v != Dead && !s.SlotLiveFrom(w, cur, v) {
			atomic.StoreUint32(&b[i], Dead)
			n++
		}
	}
	return n
}

// SweepHorizon returns, in generations, how long one pass of the sweep
// over the whole table may take. An entry stamped h expires at h+G and
// would look live again at h+Tags; the pass that clears it is the first to
// start after it expired, which starts at most one pass after h+G−1 and
// ends one pass later: 2·horizon + G − 1 < Tags.
func (s Spec) SweepHorizon() int64 { return int64((Tags - s.Generations - 1) / 2) }

// SweepDue returns how far (0 to total) the sweep pass that started at
// generation passStart should have gone at generation cur, for a table of
// total buckets: evenly over half the horizon, so that a pass finishes
// with half of it to spare; total once the pass is overdue.
func (s Spec) SweepDue(total, passStart, cur int64) int64 {
	span := max(s.SweepHorizon()/2, 1)
	done := cur - passStart + 1 // generations into the pass, this one included
	if done >= span {
		return total
	}
	if done <= 0 {
		return 0
	}
	return total * done / span
}

// Overdue reports whether a sweep pass that started at passStart must be
// finished before anything is decided at generation cur.
func (s Spec) Overdue(passStart, cur int64) bool { return cur-passStart >= s.SweepHorizon() }

// SweepState is the sweep's progress, as a windowed state keeps it: the
// generation the current pass started at and the next bucket to sweep.
type SweepState struct{ PassStart, Cursor int64 }

// NextSweep returns the buckets [from, to) of a table of total buckets to
// sweep at generation cur, and the progress after them: those the schedule
// says are due in the current pass, and a pass that reaches the end starts
// the next one at cur. When the pass is overdue (nobody decided for a
// while: a state idle, a process asleep), the pass in progress may have
// swept an entry's bucket before the entry expired, and the pass that
// would have cleared it never ran: the whole table is swept again, at cur.
func (s Spec) NextSweep(st SweepState, total, cur int64) (from, to int64, next SweepState) {
	if s.Overdue(st.PassStart, cur) {
		return 0, total, SweepState{PassStart: cur}
	}
	due := min(s.SweepDue(total, st.PassStart, cur), total)
	from, to = st.Cursor, max(st.Cursor, due)
	next = SweepState{PassStart: st.PassStart, Cursor: to}
	if to >= total {
		next = SweepState{PassStart: cur}
	}
	return from, to, next
}
