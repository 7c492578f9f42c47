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

// Decide decides a URL of 32-bit keyed fingerprint fp at generation cur.
// The caller holds the state's lock (docs/windows.md). A bucket's entries
// are a prefix: a slot goes from empty (0) to used and never back (a swept
// or forgotten entry becomes Dead, not 0), and a URL goes into the first
// free slot (empty, expired or dead) of b1, then of b2. So the scan stops
// at the first empty slot: past it nothing was ever stored, and an empty
// slot in b1 means b1 never filled, so no URL of it went to b2. A live slot
// with the fingerprint is a duplicate (re-stamped under LastSeen);
// otherwise the URL goes into the first free slot seen, and is new. Every
// write is one aligned 32-bit store, so a process killed at any instant
// leaves whole slots.
func (s Spec) Decide(p Pair, fp uint32, cur int64) Result {
	f := Fingerprint(fp)
	ct, g := Tag(cur), uint32(s.Generations)
	var free *uint32
scan:
	for _, b := range [2][]uint32{p.B1, p.B2} {
		for i := range b {
			a := &b[i]
			v := atomic.LoadUint32(a)
			if v == 0 {
				if free == nil {
					free = a
				}
				break scan
			}
			// The fingerprint first: most slots passed hold another URL,
			// and once a free slot is found their age does not matter.
			if v>>TagBits == f && (ct-v)&tagMask < g {
				if s.Policy == LastSeen && v&tagMask != ct {
					atomic.StoreUint32(a, Slot(fp, cur))
				}
				return Dup
			}
			if free == nil && (v>>TagBits == 0 || (ct-v)&tagMask >= g) {
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
	for _, b := range [2][]uint32{p.B1, p.B2} {
		for i := range b {
			v := atomic.LoadUint32(&b[i])
			if v == 0 {
				return false
			}
			if s.SlotLiveFrom(w, cur, v) && SlotFingerprint(v) == f {
				return true
			}
		}
	}
	return false
}

// Forget marks fp's slots, live or expired, Dead, so that its next
// sighting is new; it reports whether one was live. The caller holds the
// lock.
func (s Spec) Forget(p Pair, fp uint32, cur int64) bool {
	f := Fingerprint(fp)
	was := false
	for _, b := range [2][]uint32{p.B1, p.B2} {
		for i := range b {
			v := atomic.LoadUint32(&b[i])
			if v == 0 {
				return was
			}
			if SlotFingerprint(v) == f {
				was = was || s.SlotLive(cur, v)
				atomic.StoreUint32(&b[i], Dead)
			}
		}
	}
	return was
}

// Sweep marks Dead the expired slots of bucket b at generation cur, and
// returns how many. The caller holds the lock.
func (s Spec) Sweep(b []uint32, cur int64) int {
	n := 0
	for i := range b {
		v := atomic.LoadUint32(&b[i])
		if v == 0 {
			break
		}
		if v != Dead && !s.SlotLive(cur, v) {
			atomic.StoreUint32(&b[i], Dead)
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
