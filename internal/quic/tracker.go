package quic

import (
	"bytes"
	"errors"
	"hash/maphash"
	"net/netip"
	"time"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// ClientHello is what a Tracker reports: the first handshake message of a
// QUIC connection, with where it came from. Message aliases the Tracker's
// buffers: it is valid only during the call to emit.
type ClientHello struct {
	Client, Server netip.AddrPort
	Version        Version
	Message        []byte // the whole handshake message: type 1, 3-byte length, body
}

// conn is a client connection whose ClientHello is in progress.
type conn struct {
	key      flowKey
	scid     uint64 // hash of the client's Source Connection ID
	version  Version
	dcid     [maxCIDLen]byte // the Destination Connection ID the keys come from
	dcidLen  uint8
	rekeys   uint8 // keys derived again from a later packet's DCID (after a Retry)
	dropped  bool  // no longer tracked (given up, evicted, or finished)
	keys     keys
	largest  int64 // largest packet number that authenticated
	want     int   // the ClientHello's whole length, once its first 4 bytes are in; else 0
	started  int64 // packet time of its first Initial, ns
	lastSeen int64
	crypto   cryptoStream
}

// maxRekeys is how many times a connection's keys may be derived again
// from a later Initial's own DCID: once for a Retry, once more for a
// client that got two.
const maxRekeys = 2

// Buffers for CRYPTO data start at minBuf bytes (most ClientHellos fit);
// up to maxFree of them are kept for reuse.
const (
	minBuf  = 4096
	maxFree = 64
)

var cidSeed = maphash.MakeSeed()

// Tracker follows the client side of QUIC connections until their
// ClientHello is whole, and reports it. Time is packet time. A Tracker is
// not safe for concurrent use.
type Tracker struct {
	opts  Options
	emit  func(*ClientHello)
	conns map[flowKey]*conn
	done  doneTable
	free  [][]byte
	spare []*conn // dropped conns, for reuse: none is referred to once first is called
	// serverPorts has the bit of every port a connection was followed
	// to, ever: a datagram from a port not in it cannot be a server's,
	// and is not looked up the other way.
	serverPorts [1 << 16 / 64]uint64
	open        opener
	kdf         kdf
	cur         *conn
	onCrypto    cryptoFunc
	hello       ClientHello
	buffered    int
	peak        int
	now         int64
	swept       int64

	Stats Stats
}

// NewTracker returns a Tracker that calls emit with every ClientHello.
// opts may be nil.
func NewTracker(opts *Options, emit func(*ClientHello)) *Tracker {
	t := &Tracker{emit: emit, conns: make(map[flowKey]*conn)}
	if opts != nil {
		t.opts = *opts
	}
	t.opts.fill()
	t.done.max = t.opts.MaxDone
	t.onCrypto = t.crypto
	return t
}

// Conns returns the connections whose ClientHello is in progress.
func (t *Tracker) Conns() int { return len(t.conns) }

// Buffered returns the CRYPTO bytes held for them (buffer capacity): at
// most MaxBytes after Add returns.
func (t *Tracker) Buffered() int { return t.buffered }

// Done returns the connections remembered after their ClientHello.
func (t *Tracker) Done() int { return t.done.len() }

// Add takes one UDP datagram that client sent to server, captured at ts.
// Datagrams the server sent may be given too: they are recognised as such
// once the client's are tracked, and ignored.
func (t *Tracker) Add(ts time.Time, client, server netip.AddrPort, datagram []byte) {
	t.clock(ts.UnixNano())
	t.Stats.Datagrams++
	key := makeFlowKey(client, server)
	for d := datagram; len(d) > 0; {
		var h header
		if err := parseLong(d, &h); err != nil {
			// A short header packet ends the datagram (RFC 9000 §12.2),
			// as do the zeros some stacks pad it with.
			if !errors.Is(err, errNotLong) {
				t.Stats.Malformed++
			}
			return
		}
		t.Stats.Packets++
		pkt := d[:h.end]
		d = d[h.end:]
		switch {
		case h.version == 0:
			return // Version Negotiation, from a server
		case h.params == nil:
			t.Stats.UnknownVersion++
			return
		case h.typ == typeInitial:
			t.initial(key, &h, pkt)
		}
	}
}

// clock follows packet time, as the TCP assembler does: a step back of
// more than a minute (another capture's timeline) is followed.
func (t *Tracker) clock(now int64) {
	if now > t.now || t.now-now > int64(time.Minute) {
		if now < t.now {
			t.swept = now
		}
		t.now = now
	}
	if t.now-t.swept >= int64(time.Second) {
		t.sweep()
	}
}

func (t *Tracker) initial(key flowKey, h *header, pkt []byte) {
	t.Stats.Initials++
	scid := maphash.Bytes(cidSeed, h.scid)
	c := t.conns[key]
	if c != nil && (c.scid != scid || c.version != h.version) {
		// Another attempt from the same address and port: after a
		// version negotiation, or a new connection. The old one is given up.
		t.drop(c)
		c = nil
	}
	var payload []byte
	var pn int64
	var err error
	if c == nil {
		if d, ok := t.done.get(key); ok {
			// The same connection (its SCID), or its attempt in another
			// version after a version negotiation; a new SCID in the same
			// version is a new connection on the same socket.
			if d.scid == scid || d.version != h.version {
				t.Stats.Late++
				return
			}
			t.done.forget(key)
		} else if t.fromServer(key) {
			t.Stats.FromServer++
			return
		}
		if c, payload, pn, err = t.first(key, h, scid, pkt); c == nil {
			t.failed(err)
			return
		}
	} else if payload, pn, err = t.open.open(&c.keys, pkt, h, c.largest); errors.Is(err, errAuth) &&
		c.rekeys < maxRekeys && !bytes.Equal(h.dcid, c.dcid[:c.dcidLen]) {
		// After a Retry the client's keys come from the DCID the server
		// chose, which its Initials now carry. The CRYPTO stream goes on.
		c.rekeys++
		var k keys
		t.kdf.deriveKeys(&k, h.params, h.dcid)
		if payload, pn, err = t.open.open(&k, pkt, h, c.largest); err == nil {
			c.keys = k
			c.dcidLen = uint8(copy(c.dcid[:], h.dcid))
		}
	}
	if err != nil {
		t.failed(err)
		return
	}
	t.Stats.Decrypted++
	c.largest = max(c.largest, pn)
	c.lastSeen = t.now
	t.cur = c
	if err := walkFrames(payload, t.onCrypto); err != nil {
		t.Stats.Malformed++
		return
	}
	t.check(c)
}

// first decrypts the first Initial of a connection with keys derived from
// its DCID, and only if it authenticates starts tracking the connection.
func (t *Tracker) first(key flowKey, h *header, scid uint64, pkt []byte) (*conn, []byte, int64, error) {
	var c *conn
	if k := len(t.spare); k > 0 {
		c, t.spare = t.spare[k-1], t.spare[:k-1]
		*c = conn{}
	} else {
		c = new(conn)
	}
	c.key, c.scid, c.version, c.largest, c.started = key, scid, h.version, -1, t.now
	c.dcidLen = uint8(copy(c.dcid[:], h.dcid))
	t.kdf.deriveKeys(&c.keys, h.params, h.dcid)
	payload, pn, err := t.open.open(&c.keys, pkt, h, -1)
	if err != nil {
		c.keys = keys{}
		t.spare = append(t.spare, c) // taken from it, or new while it was short
		return nil, nil, 0, err
	}
	if len(t.conns) >= t.opts.MaxConns {
		t.evict(nil)
	}
	t.conns[key] = c
	t.serverPorts[key.sport/64] |= 1 << (key.sport % 64)
	t.peak = max(t.peak, len(t.conns))
	t.Stats.Conns++
	return c, payload, pn, nil
}

func (t *Tracker) failed(err error) {
	if errors.Is(err, errAuth) || errors.Is(err, errTooShort) {
		t.Stats.AuthFailed++
	} else {
		t.Stats.Malformed++
	}
}

// fromServer reports whether the datagrams of key go the other way of a
// connection tracked or remembered.
func (t *Tracker) fromServer(key flowKey) bool {
	if t.serverPorts[key.cport/64]&(1<<(key.cport%64)) == 0 {
		return false // no connection was followed to the sender's port
	}
	r := key.reverse()
	if t.conns[r] != nil {
		return true
	}
	_, ok := t.done.get(r)
	return ok
}

// crypto takes a CRYPTO frame of t.cur.
func (t *Tracker) crypto(off uint64, b []byte) {
	c := t.cur
	if c == nil {
		return // given up on within this packet
	}
	// Nothing past the ClientHello is needed, nor past MaxHello: a
	// message that claims more is given up on at check, and its claim
	// (up to 16 MiB) must not size a buffer first.
	limit := uint64(t.opts.MaxHello)
	if c.want > 0 {
		limit = uint64(min(c.want, t.opts.MaxHello))
	}
	if off >= limit {
		return // past the ClientHello: not needed
	}
	b = b[:min(uint64(len(b)), limit-off)]
	if need := int(off) + len(b); need > cap(c.crypto.data) && !t.grow(c, need) {
		t.Stats.Evicted++
		t.drop(c)
		return
	}
	if !c.crypto.add(int(off), b) {
		t.Stats.CryptoDropped++
		return
	}
	if c.want == 0 {
		if n, ok := tlshello.HandshakeLen(c.crypto.data[:c.crypto.ready()]); ok {
			c.want = n
		}
	}
}

// check reports c's ClientHello once it is whole, or gives c up when its
// CRYPTO data is not one.
func (t *Tracker) check(c *conn) {
	t.cur = nil
	if c.dropped || c.want == 0 {
		return
	}
	if c.crypto.data[0] != tlshello.TypeClientHello || c.want > t.opts.MaxHello {
		t.Stats.NotHello++
		t.finish(c)
		return
	}
	if c.crypto.ready() < c.want {
		return
	}
	client, server := c.key.addrs()
	t.hello = ClientHello{Client: client, Server: server, Version: c.version, Message: c.crypto.data[:c.want]}
	t.Stats.Hellos++
	t.emit(&t.hello)
	t.hello.Message = nil
	t.finish(c)
}

// grow makes c's buffer hold need bytes, within MaxBytes, dropping the
// connections quiet longest to make room. It reports false when it cannot.
func (t *Tracker) grow(c *conn, need int) bool {
	old := cap(c.crypto.data)
	size := max(need, minBuf, min(2*old, t.opts.MaxHello))
	if c.want > 0 {
		size = max(need, min(size, c.want))
	}
	for t.buffered+size-old > t.opts.MaxBytes {
		if !t.evict(c) {
			return false
		}
	}
	var b []byte
	if k := len(t.free); size == minBuf && k > 0 {
		b, t.free = t.free[k-1][:len(c.crypto.data)], t.free[:k-1]
	} else {
		b = make([]byte, len(c.crypto.data), size)
	}
	copy(b, c.crypto.data)
	t.release(c)
	c.crypto.data = b
	t.buffered += size
	return true
}

// release gives c's buffer back.
func (t *Tracker) release(c *conn) {
	b := c.crypto.data
	t.buffered -= cap(b)
	if cap(b) == minBuf && len(t.free) < maxFree {
		t.free = append(t.free, b[:0])
	}
	c.crypto.data = nil
}

// evictProbe is how many connections evict looks at.
const evictProbe = 64

// evict drops the connection quiet longest among a random sample (map
// iteration starts at a random place), other than keep; with keep set,
// only one that holds CRYPTO data. It reports false when there is none.
func (t *Tracker) evict(keep *conn) bool {
	var victim *conn
	n := 0
	for _, c := range t.conns {
		if c != keep && (keep == nil || cap(c.crypto.data) > 0) && (victim == nil || c.lastSeen < victim.lastSeen) {
			victim = c
		}
		if n++; n == evictProbe {
			break
		}
	}
	if victim == nil {
		return false
	}
	t.Stats.Evicted++
	t.drop(victim)
	return true
}

// drop forgets c without remembering it, and keeps it for reuse.
func (t *Tracker) drop(c *conn) {
	if c.dropped {
		return
	}
	c.dropped = true
	c.keys = keys{} // a spare conn pins no key schedule
	t.release(c)
	if len(t.spare) < maxFree {
		t.spare = append(t.spare, c)
	}
	delete(t.conns, c.key)
	if t.cur == c {
		t.cur = nil
	}
}

// finish forgets c and remembers that its ClientHello was seen.
func (t *Tracker) finish(c *conn) {
	t.drop(c)
	t.done.remember(c.key, doneConn{scid: c.scid, version: c.version, at: t.now})
}

// sweep drops connections past Timeout and forgets those done past
// DoneLinger, once a second of packet time.
func (t *Tracker) sweep() {
	t.swept = t.now
	timeout := t.opts.Timeout.Nanoseconds()
	for _, c := range t.conns {
		c.started = min(c.started, t.now) // from before packet time went back: taken as now
		if t.now-c.started >= timeout {
			t.Stats.Expired++
			t.drop(c)
		}
	}
	t.done.expire(t.now, t.opts.DoneLinger.Nanoseconds())
	// A Go map keeps its memory when entries are deleted: after a flood,
	// make a new one.
	if t.peak >= 1024 && len(t.conns) <= t.peak/4 {
		m := make(map[flowKey]*conn, len(t.conns))
		for k, c := range t.conns {
			m[k] = c
		}
		t.conns, t.peak = m, len(m)
	}
}
