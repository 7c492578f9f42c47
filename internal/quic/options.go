package quic

import (
	"time"
	"unsafe"
)

// Options bound a Tracker. Zero fields take the defaults.
type Options struct {
	// MaxConns caps the connections whose ClientHello is in progress. At
	// the cap, the one quiet longest in a sample of 64 is dropped
	// (Stats.Evicted) to make room. Each costs ConnCost bytes besides its
	// CRYPTO data.
	MaxConns int
	// MaxBytes caps the CRYPTO data held for all of them (buffer
	// capacity). At the cap, connections quiet longest are dropped as at
	// MaxConns; when none can be, the connection that needs more is.
	MaxBytes int
	// MaxHello is the largest ClientHello put together; a longer one is
	// counted (Stats.NotHello) and its connection given up.
	MaxHello int
	// Timeout is how long, in packet time from its first Initial, a
	// connection's ClientHello may take to be whole (Stats.Expired).
	Timeout time.Duration
	// MaxDone caps the connections remembered after their ClientHello was
	// reported, so that their later Initials do not report it again; the
	// oldest is forgotten first. Each costs DoneCost bytes; at most 1<<30.
	MaxDone int
	// DoneLinger is how long, in packet time, they are remembered.
	DoneLinger time.Duration
}

// DefaultOptions are the bounds a zero Options field takes.
var DefaultOptions = Options{
	MaxConns:   8192,
	MaxBytes:   32 << 20,
	MaxHello:   16 << 10,
	Timeout:    10 * time.Second,
	MaxDone:    64 << 10,
	DoneLinger: time.Minute,
}

func (o *Options) fill() {
	d := &DefaultOptions
	if o.MaxConns <= 0 {
		o.MaxConns = d.MaxConns
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = d.MaxBytes
	}
	if o.MaxHello <= 0 {
		o.MaxHello = d.MaxHello
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MaxDone <= 0 {
		o.MaxDone = d.MaxDone
	}
	o.MaxDone = min(o.MaxDone, 1<<30) // the done table's positions are 32-bit
	if o.DoneLinger <= 0 {
		o.DoneLinger = d.DoneLinger
	}
}

// ConnCost bounds the bytes a connection in progress takes besides its
// CRYPTO data: its struct, its map slot, and its keys (two AES key
// schedules and a GCM, about 1.2 KiB; TestConnCost measures the whole).
const ConnCost = int(unsafe.Sizeof(conn{})+unsafe.Sizeof(flowKey{})) + 1536

// Stats count what a Tracker has seen.
type Stats struct {
	Datagrams      uint64 // datagrams given to Add
	Packets        uint64 // long header packets in them
	Initials       uint64 // Initial packets of versions understood, from clients and servers
	Decrypted      uint64 // client Initial packets that authenticated
	AuthFailed     uint64 // Initial packets that failed authentication (or too short to try): not trusted
	UnknownVersion uint64 // long header packets of a version not understood (Version Negotiation excluded)
	Malformed      uint64 // truncated long headers; authenticated Initials with a frame not allowed or malformed: not trusted
	Hellos         uint64 // ClientHellos reported
	NotHello       uint64 // connections whose CRYPTO data did not start with a ClientHello of at most MaxHello bytes
	Late           uint64 // Initials of connections already reported (retransmissions, after a Retry or a version negotiation): ignored
	FromServer     uint64 // Initials from the server side of a connection tracked: ignored
	Conns          uint64 // connections tracked (their first Initial authenticated)
	Evicted        uint64 // connections dropped at MaxConns or MaxBytes before their ClientHello was whole
	Expired        uint64 // connections dropped: no whole ClientHello within Timeout
	CryptoDropped  uint64 // CRYPTO frames dropped: more than 32 separate ranges pending
}

// Add adds o's counts to s: the sum over several Trackers.
func (s *Stats) Add(o *Stats) {
	s.Datagrams += o.Datagrams
	s.Packets += o.Packets
	s.Initials += o.Initials
	s.Decrypted += o.Decrypted
	s.AuthFailed += o.AuthFailed
	s.UnknownVersion += o.UnknownVersion
	s.Malformed += o.Malformed
	s.Hellos += o.Hellos
	s.NotHello += o.NotHello
	s.Late += o.Late
	s.FromServer += o.FromServer
	s.Conns += o.Conns
	s.Evicted += o.Evicted
	s.Expired += o.Expired
	s.CryptoDropped += o.CryptoDropped
}
