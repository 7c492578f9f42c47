package quic

import "unsafe"

// doneConn is what is remembered of a connection whose ClientHello was
// seen: enough to tell its later Initials from a new connection's.
type doneConn struct {
	scid    uint64
	version Version
	at      int64 // packet time, ns
	seq     uint64
}

// doneRef is a doneTable entry in the order they were remembered.
type doneRef struct {
	key flowKey
	seq uint64
}

// doneTable remembers finished connections for DoneLinger of packet time,
// at most MaxDone of them, the oldest forgotten first.
type doneTable struct {
	m    map[flowKey]doneConn
	ring []doneRef // circular, oldest at head; a ref whose seq no longer matches is stale
	head int
	n    int
	seq  uint64
	max  int
}

// DoneCost bounds the bytes one remembered connection takes: its map slot
// (a Go map under churn holds up to about 2.7 slots per entry; 4 are
// counted) and its place in the ring.
const DoneCost = 4*int(unsafe.Sizeof(flowKey{})+unsafe.Sizeof(doneConn{})) + int(unsafe.Sizeof(doneRef{}))

func (d *doneTable) get(k flowKey) (doneConn, bool) {
	if len(d.m) == 0 {
		return doneConn{}, false
	}
	c, ok := d.m[k]
	return c, ok
}

func (d *doneTable) forget(k flowKey) { delete(d.m, k) }

func (d *doneTable) len() int { return len(d.m) }

// remember records c for k, forgetting the oldest entry at the cap.
func (d *doneTable) remember(k flowKey, c doneConn) {
	if d.m == nil {
		d.m = make(map[flowKey]doneConn)
	}
	if d.n == d.max {
		d.pop()
	}
	if d.n == len(d.ring) {
		r := make([]doneRef, min(max(2*len(d.ring), 64), d.max))
		for i := range d.n {
			r[i] = d.ring[(d.head+i)%len(d.ring)]
		}
		d.ring, d.head = r, 0
	}
	d.seq++
	c.seq = d.seq
	d.m[k] = c
	d.ring[(d.head+d.n)%len(d.ring)] = doneRef{k, d.seq}
	d.n++
}

// pop drops the oldest ref, and its entry unless it was remembered again.
func (d *doneTable) pop() {
	r := d.ring[d.head]
	if c, ok := d.m[r.key]; ok && c.seq == r.seq {
		delete(d.m, r.key)
	}
	d.ring[d.head] = doneRef{}
	d.head = (d.head + 1) % len(d.ring)
	d.n--
}

// expire forgets the entries remembered before now-linger, and stale refs.
func (d *doneTable) expire(now, linger int64) {
	for d.n > 0 {
		r := d.ring[d.head]
		if c, ok := d.m[r.key]; ok && c.seq == r.seq && now-c.at < linger && c.at <= now {
			return
		}
		d.pop()
	}
	if len(d.m) == 0 && d.m != nil {
		d.m = nil // its memory back after a flood
	}
}
