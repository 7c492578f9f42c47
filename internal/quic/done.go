package quic

import (
	"hash/maphash"
	"unsafe"
)

// doneConn is what is remembered of a connection whose ClientHello was
// seen: enough to tell its later Initials from a new connection's.
type doneConn struct {
	version Version
	scid    uint64
	at      int64 // packet time, ns
}

// doneEntry is a remembered connection in the order they were remembered.
type doneEntry struct {
	key  flowKey
	live bool // not forgotten since
	doneConn
}

// doneTable remembers finished connections for DoneLinger of packet time,
// at most MaxDone of them, the oldest forgotten first. Every new
// connection is looked up in it (and its reverse, to tell a server's
// Initials), most often in vain: rather than a Go map, it is a ring of
// entries, oldest first, indexed by an open-addressing hash table of
// 8-byte slots at most half full (a lookup that finds nothing reads only
// the index, most often one slot), with backward-shift
// deletion (no tombstones). The hash is maphash's, seeded per table: a
// sender cannot choose addresses that collide.
type doneTable struct {
	ring  []doneEntry // circular, oldest at head
	head  int
	n     int // entries in the ring, forgotten ones included
	live  int
	index []uint64 // 0 empty, else the key's hash's low 32 bits << 32 | ring position + 1
	seed  maphash.Seed
	max   int
}

// DoneCost bounds the bytes one remembered connection takes: its place in
// the ring and its share of the index (at most four slots: twice the
// ring's size, rounded up to a power of two).
const DoneCost = int(unsafe.Sizeof(doneEntry{})) + 4*8

func (d *doneTable) len() int { return d.live }

func (d *doneTable) hash(k *flowKey) uint32 {
	return uint32(maphash.Bytes(d.seed, unsafe.Slice((*byte)(unsafe.Pointer(k)), unsafe.Sizeof(*k))))
}

// find returns the index slot holding k, or -1.
func (d *doneTable) find(k *flowKey) int {
	if d.live == 0 {
		return -1
	}
	h := d.hash(k)
	mask := len(d.index) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := d.index[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) == h && d.ring[uint32(s)-1].key == *k {
			return i
		}
	}
}

func (d *doneTable) get(k flowKey) (doneConn, bool) {
	i := d.find(&k)
	if i < 0 {
		return doneConn{}, false
	}
	return d.ring[uint32(d.index[i])-1].doneConn, true
}

func (d *doneTable) forget(k flowKey) {
	if i := d.find(&k); i >= 0 {
		d.ring[uint32(d.index[i])-1].live = false
		d.unindex(i)
	}
}

// remember records c for k, forgetting the oldest entry at the cap.
func (d *doneTable) remember(k flowKey, c doneConn) {
	if d.n == d.max {
		d.pop()
	}
	if d.n == len(d.ring) {
		d.grow()
	}
	pos := (d.head + d.n) % len(d.ring)
	d.ring[pos] = doneEntry{key: k, live: true, doneConn: c}
	d.n++
	d.live++
	h := d.hash(&k)
	mask := len(d.index) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := d.index[i]
		if s == 0 {
			d.index[i] = uint64(h)<<32 | uint64(pos+1)
			return
		}
		if old := &d.ring[uint32(s)-1]; uint32(s>>32) == h && old.key == k {
			// Remembered again: the new entry replaces the old.
			old.live = false
			d.live--
			d.index[i] = uint64(h)<<32 | uint64(pos+1)
			return
		}
	}
}

// grow doubles the ring (up to max entries), oldest first again, and
// makes an index of twice as many slots, a power of two.
func (d *doneTable) grow() {
	size := min(max(2*len(d.ring), 64), d.max)
	r := make([]doneEntry, size)
	for i := range d.n {
		r[i] = d.ring[(d.head+i)%len(d.ring)]
	}
	d.ring, d.head = r, 0
	slots := 1
	for slots < 2*size {
		slots *= 2
	}
	if d.live == 0 {
		d.seed = maphash.MakeSeed()
	}
	d.index = make([]uint64, slots)
	mask := slots - 1
	for pos := range d.n {
		if !r[pos].live {
			continue
		}
		h := d.hash(&r[pos].key)
		i := int(h) & mask
		for d.index[i] != 0 {
			i = (i + 1) & mask
		}
		d.index[i] = uint64(h)<<32 | uint64(pos+1)
	}
}

// unindex empties slot i, moving back the entries after it that would no
// longer be found (backward-shift deletion for linear probing).
func (d *doneTable) unindex(i int) {
	d.live--
	mask := len(d.index) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := d.index[j]
		if s == 0 {
			break
		}
		// s stays where it is if its home slot is cyclically in (i, j].
		home := int(uint32(s>>32)) & mask
		if (i < j && i < home && home <= j) || (j < i && (i < home || home <= j)) {
			continue
		}
		d.index[i] = s
		i = j
	}
	d.index[i] = 0
}

// pop drops the oldest entry.
func (d *doneTable) pop() {
	e := &d.ring[d.head]
	if e.live {
		d.forget(e.key)
	}
	*e = doneEntry{}
	d.head = (d.head + 1) % len(d.ring)
	d.n--
}

// expire forgets the entries remembered before now-linger (or after now:
// from before packet time went back), and those forgotten.
func (d *doneTable) expire(now, linger int64) {
	for d.n > 0 {
		e := &d.ring[d.head]
		if e.live && now-e.at < linger && e.at <= now {
			return
		}
		d.pop()
	}
	if d.ring != nil {
		d.ring, d.index, d.head = nil, nil, 0 // the memory back after a flood
	}
}
