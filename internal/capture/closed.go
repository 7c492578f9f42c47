package capture

import (
	"hash/maphash"
	"unsafe"
)

// closedHalf is what is remembered of a connection direction the
// assembler stopped tracking: the sequence numbers it covered, so that its
// late segments (retransmissions after FIN or RST, a SYN sent again) are
// recognised as its own and not taken for a new connection.
type closedHalf struct {
	start, end uint32 // the first stream byte seen, the byte after the last
	role       role
	ended      bool  // by FIN or RST: no new byte can follow; else expired or evicted: later bytes continue it
	at         int64 // packet time it was closed, ns
	gen        uint64
}

// closedRef is a closedTable entry in closing order.
type closedRef struct {
	key closedKey
	gen uint64
}

// closedKey is a 64-bit hash of a flowKey: an eighth of its size. Two
// directions with the same hash (one chance in 2^64 per pair) would only
// make a segment of the second in the first's sequence range be taken for
// a late one.
type closedKey uint64

var closedSeed = maphash.MakeSeed()

func closedKeyOf(k flowKey) closedKey { return closedKey(maphash.Comparable(closedSeed, k)) }

// closedTable remembers closed directions for ClosedLinger of packet time,
// at most MaxClosed of them, the oldest forgotten first. It grows to its
// cap as closes come and never shrinks below what it reached.
type closedTable struct {
	m    map[closedKey]closedHalf
	ring []closedRef // circular, oldest at head; refs whose gen no longer matches are stale
	head int
	n    int
	gen  uint64
	max  int
}

// closedCost bounds the bytes one remembered closed direction takes, so
// that MaxClosed × closedCost bounds the table: its map slot (a Go map
// under churn holds up to about 2.7 slots per entry; 4 are counted) and
// its place in the closing order (TestClosedMemory).
const closedCost = 4*int(unsafe.Sizeof(closedKey(0))+unsafe.Sizeof(closedHalf{})) + int(unsafe.Sizeof(closedRef{}))

func (t *closedTable) get(f flowKey) (closedHalf, bool) {
	if len(t.m) == 0 {
		return closedHalf{}, false
	}
	c, ok := t.m[closedKeyOf(f)]
	return c, ok
}

func (t *closedTable) forget(f flowKey) { delete(t.m, closedKeyOf(f)) }

// remember records c for f, forgetting the oldest entry at the cap.
func (t *closedTable) remember(f flowKey, c closedHalf) {
	k := closedKeyOf(f)
	if t.m == nil {
		t.m = make(map[closedKey]closedHalf)
	}
	if t.n == t.max {
		t.pop()
	}
	if t.n == len(t.ring) {
		t.grow()
	}
	t.gen++
	c.gen = t.gen
	t.m[k] = c
	t.ring[(t.head+t.n)%len(t.ring)] = closedRef{k, t.gen}
	t.n++
}

// pop drops the oldest ref, and its entry unless that was remembered again.
func (t *closedTable) pop() {
	r := t.ring[t.head]
	if c, ok := t.m[r.key]; ok && c.gen == r.gen {
		delete(t.m, r.key)
	}
	t.ring[t.head] = closedRef{}
	t.head = (t.head + 1) % len(t.ring)
	t.n--
}

func (t *closedTable) grow() {
	r := make([]closedRef, min(max(2*len(t.ring), 64), t.max))
	for i := range t.n {
		r[i] = t.ring[(t.head+i)%len(t.ring)]
	}
	t.ring, t.head = r, 0
}

// expire forgets the entries closed before now-linger, and stale refs.
func (t *closedTable) expire(now, linger int64) {
	for t.n > 0 {
		r := t.ring[t.head]
		if c, ok := t.m[r.key]; ok && c.gen == r.gen && now-c.at < linger {
			return
		}
		t.pop()
	}
}

// reset forgets everything, keeping the memory.
func (t *closedTable) reset() {
	clear(t.m)
	clear(t.ring)
	t.head, t.n = 0, 0
}

// len is the number of directions remembered.
func (t *closedTable) len() int { return len(t.m) }
