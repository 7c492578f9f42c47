package window

import "sync/atomic"

// Result is a windowed keyed decision.
type Result uint8

const (
	// New: the URL was not live in its buckets, and is stored now.
	New Result = iota
	// Dup: the URL is live in its buckets (under LastSeen, re-stamped).
	Dup
	// Full: not live, and no slot of its buckets is free: answered new,
	// not stored (counted, as the plain keyed layout does).
	Full
)

// Pair is a URL's two candidate buckets of a windowed keyed table, as
// views of the shared mapping (sixteen slots each).
type Pair struct{ B1, B2 []uint32 }

func (p Pair) slot(i int) *uint32 {
	if i < len(p.B1) {
		return &p.B1[i]
	}
	return &p.B2[i-len(p.B1)]
}

func (p Pair) len() int { return len(p.B1) + len(p.B2) }

// Decide decides a URL of 32-bit keyed fingerprint fp at generation cur.
// The caller holds the state's lock (docs/windows.md): both buckets are
// scanned whole, a live slot with the fingerprint is a duplicate
// (re-stamped under LastSeen), and otherwise the URL goes into the first
// free slot, empty or expired. Every write is one aligned 32-bit store, so
// a process killed at any instant leaves whole slots.
func (s Spec) Decide(p Pair, fp uint32, cur int64) Result {
	f := Fingerprint(fp)
	ct, g := Tag(cur), uint32(s.Generations)
	var free *uint32
	for _, b := range [2][]uint32{p.B1, p.B2} {
		for i := range b {
			a := &b[i]
			v := atomic.LoadUint32(a)
			live := v != 0 && (ct-v)&tagMask < g
			if live && v>>TagBits == f {
				if s.Policy == LastSeen && v&tagMask != ct {
					atomic.StoreUint32(a, Slot(fp, cur))
				}
				return Dup
			}
			if !live && free == nil {
				free = a
			}
		}
	}
	if free == nil {
		return Full
	}
	atomic.StoreUint32(free, Slot(fp, cur))
	return New
}

// Check reports whether fp is live in its buckets at generation cur ≥ w,
// w being the highest generation used on the state, changing nothing: a
// dry run, which needs no lock and sweeps nothing (SlotLiveFrom).
func (s Spec) Check(p Pair, fp uint32, w, cur int64) bool {
	f := Fingerprint(fp)
	for i := range p.len() {
		if v := atomic.LoadUint32(p.slot(i)); s.SlotLiveFrom(w, cur, v) && SlotFingerprint(v) == f {
			return true
		}
	}
	return false
}

// Forget zeroes fp's slots, live or expired, so that its next sighting is
// new; it reports whether one was live. The caller holds the lock.
func (s Spec) Forget(p Pair, fp uint32, cur int64) bool {
	f := Fingerprint(fp)
	was := false
	for i := range p.len() {
		a := p.slot(i)
		if v := atomic.LoadUint32(a); v != 0 && SlotFingerprint(v) == f {
			was = was || s.SlotLive(cur, v)
			atomic.StoreUint32(a, 0)
		}
	}
	return was
}

// Sweep zeroes the expired slots of bucket b at generation cur, and
// returns how many it zeroed. The caller holds the lock.
func (s Spec) Sweep(b []uint32, cur int64) int {
	n := 0
	for i := range b {
		if v := atomic.LoadUint32(&b[i]); v != 0 && !s.SlotLive(cur, v) {
			atomic.StoreUint32(&b[i], 0)
			n++
		}
	}
	return n
}

// String returns "new", "dup" or "full".
func (r Result) String() string {
	switch r {
	case New:
		return "new"
	case Dup:
		return "dup"
	case Full:
		return "full"
	}
	return "result(?)"
}
