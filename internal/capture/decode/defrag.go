package decode

import (
	"time"
	"unsafe"
)

// Fragment reassembly (RFC 791, RFC 8200). Fragments are keyed by
// (source, destination, identification), for IPv4 protocol, and the
// encapsulation path outside the fragmented header (encap.go), so that
// tenants reusing addresses and identifications are kept apart. Their
// data is copied into a buffer per datagram in 8-byte blocks; where
// fragments overlap the first copy wins, as in the TCP reassembler. A
// datagram is dropped, and counted, when it is inconsistent (two different
// ends, data past the end, a fragment not a multiple of 8 bytes that is not
// the last, more than MaxDatagram bytes), when it is not complete within
// its timeout in packet time, or when it is the oldest in progress and a new
// one would go over MaxDatagrams or MaxBytes.

// DefragOptions bound IP fragment reassembly. Zero fields take the
// defaults.
type DefragOptions struct {
	MaxDatagrams int           // datagrams in progress; default 4096
	MaxBytes     int           // bytes of fragment data held; default 16 MiB
	Timeout4     time.Duration // IPv4, in packet time; default 30 s (Linux ipfrag_time)
	Timeout6     time.Duration // IPv6, in packet time; default 60 s (RFC 8200)
}

// Defaults of DefragOptions, and the largest datagram reassembled: the
// fragmentable part of an IP packet of at most 65,535 bytes.
const (
	DefaultDefragDatagrams = 4096
	DefaultDefragBytes     = 16 << 20
	DefaultDefragTimeout4  = 30 * time.Second
	DefaultDefragTimeout6  = 60 * time.Second
	MaxDatagram            = 65535
)

// DatagramCost is the fixed bytes a datagram in progress takes (its struct
// and its map entry, rounded up) besides its data, which MaxBytes counts;
// MaxDatagrams bounds it.
const DatagramCost = int(unsafe.Sizeof(fragDatagram{})+unsafe.Sizeof(fragKey{})) + 16

// maxFreeDatagrams is how many finished datagrams' buffers are kept for
// reuse.
const maxFreeDatagrams = 16

// FragStats count fragment reassembly (package capture reports them as
// DefragStats).
type FragStats struct {
	Reassembled uint64 // datagrams reassembled from fragments
	Timeouts    uint64 // datagrams dropped: not complete within their timeout
	Evicted     uint64 // datagrams dropped at MaxDatagrams or MaxBytes, oldest first
	Invalid     uint64 // datagrams dropped: inconsistent fragments or too long
}

type fragKey struct {
	src, dst [16]byte
	path     uint64 // the encapsulation path outside the fragmented header (encap.go)
	id       uint32
	proto    uint8 // IPv4's protocol; 0 for IPv6
	v6       bool
}

type fragDatagram struct {
	key        fragKey
	started    time.Time
	deadline   time.Time
	buf        []byte                            // len: the highest end seen
	end        int                               // total length, -1 until the last fragment is seen
	blocks     int                               // 8-byte blocks filled
	proto      uint8                             // IPv6: the next header of the offset-0 fragment
	have       [(MaxDatagram/8 + 64) / 64]uint64 // 8-byte blocks filled, a bit each
	prev, next *fragDatagram                     // in order of arrival, oldest first
}

// defragmenter reassembles IP fragments within DefragOptions' bounds.
type defragmenter struct {
	opts       DefragOptions
	m          map[fragKey]*fragDatagram
	head, tail *fragDatagram
	bytes      int // sum of cap(buf) of the datagrams in progress
	free       []*fragDatagram
	done       *fragDatagram // the last datagram completed: its buffer is lent out until the next add
	stats      FragStats
}

func newDefragmenter(o DefragOptions) *defragmenter {
	if o.MaxDatagrams <= 0 {
		o.MaxDatagrams = DefaultDefragDatagrams
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultDefragBytes
	}
	if o.Timeout4 <= 0 {
		o.Timeout4 = DefaultDefragTimeout4
	}
	if o.Timeout6 <= 0 {
		o.Timeout6 = DefaultDefragTimeout6
	}
	return &defragmenter{opts: o, m: make(map[fragKey]*fragDatagram)}
}

// inProgress is the number of datagrams being reassembled.
func (f *defragmenter) inProgress() int { return len(f.m) }

// add takes a fragment: data at byte offset off of the datagram key, more
// if more fragments follow, proto the IPv6 next header. When the fragment
// completes its datagram it returns the datagram and its protocol (for
// IPv6 that of the first fragment); the slice is valid until the next add.
func (f *defragmenter) add(now time.Time, key fragKey, off int, more bool, proto uint8, data []byte) ([]byte, uint8, bool) {
	if f.done != nil {
		f.recycle(f.done)
		f.done = nil
	}
	f.expire(now)
	d := f.m[key]
	if d == nil {
		d = f.start(now, key)
	}
	end := off + len(data)
	switch {
	case end > MaxDatagram,
		more && len(data)%8 != 0,
		more && len(data) == 0,
		d.end >= 0 && end > d.end,
		!more && d.end >= 0 && end != d.end,
		!more && end < len(d.buf):
		f.stats.Invalid++
		f.drop(d)
		return nil, 0, false
	}
	if !more {
		d.end = end
	}
	if off == 0 {
		d.proto = proto
	}
	if end > len(d.buf) {
		if end > cap(d.buf) {
			c := max(2*cap(d.buf), end, 1024)
			c = min(c, MaxDatagram)
			for f.bytes+c-cap(d.buf) > f.opts.MaxBytes && f.head != d {
				f.stats.Evicted++
				f.drop(f.head)
			}
			if f.bytes+c-cap(d.buf) > f.opts.MaxBytes {
				f.stats.Evicted++
				f.drop(d)
				return nil, 0, false
			}
			nb := make([]byte, len(d.buf), c)
			copy(nb, d.buf)
			f.bytes += c - cap(d.buf)
			d.buf = nb
		}
		d.buf = d.buf[:end]
	}
	for b := off / 8; b*8 < end; b++ { // first copy wins
		if d.have[b/64]&(1<<(b%64)) == 0 {
			d.have[b/64] |= 1 << (b % 64)
			d.blocks++
			copy(d.buf[b*8:min(b*8+8, end)], data[b*8-off:])
		}
	}
	if d.end < 0 || d.blocks < (d.end+7)/8 {
		return nil, 0, false
	}
	f.stats.Reassembled++
	f.unlink(d)
	f.done = d
	return d.buf[:d.end], d.proto, true
}

// start begins a datagram, dropping the oldest at MaxDatagrams.
func (f *defragmenter) start(now time.Time, key fragKey) *fragDatagram {
	for len(f.m) >= f.opts.MaxDatagrams {
		f.stats.Evicted++
		f.drop(f.head)
	}
	var d *fragDatagram
	if n := len(f.free); n > 0 {
		d, f.free = f.free[n-1], f.free[:n-1]
		f.bytes += cap(d.buf)
	} else {
		d = &fragDatagram{}
	}
	t := f.opts.Timeout4
	if key.v6 {
		t = f.opts.Timeout6
	}
	d.key, d.started, d.deadline, d.end, d.blocks, d.proto = key, now, now.Add(t), -1, 0, 0
	d.buf = d.buf[:0]
	clear(d.have[:])
	f.m[key] = d
	d.prev, d.next = f.tail, nil
	if f.tail != nil {
		f.tail.next = d
	} else {
		f.head = d
	}
	f.tail = d
	return d
}

// expire drops the datagrams past their deadline. Datagrams are in order
// of arrival, so the scan stops at the first one begun less than the
// shorter timeout ago: no later one can have expired.
func (f *defragmenter) expire(now time.Time) {
	shortest := min(f.opts.Timeout4, f.opts.Timeout6)
	for d := f.head; d != nil; {
		next := d.next
		if now.After(d.deadline) {
			f.stats.Timeouts++
			f.drop(d)
		} else if !now.After(d.started.Add(shortest)) {
			break
		}
		d = next
	}
}

func (f *defragmenter) unlink(d *fragDatagram) {
	delete(f.m, d.key)
	if d.prev != nil {
		d.prev.next = d.next
	} else {
		f.head = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		f.tail = d.prev
	}
	d.prev, d.next = nil, nil
	f.bytes -= cap(d.buf)
}

// drop ends a datagram in progress.
func (f *defragmenter) drop(d *fragDatagram) {
	f.unlink(d)
	f.recycle(d)
}

// recycle keeps an unlinked datagram's buffer on the bounded free list.
func (f *defragmenter) recycle(d *fragDatagram) {
	if len(f.free) < maxFreeDatagrams {
		f.free = append(f.free, d)
	}
}
