package quic

import (
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/counter"
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

// StatsCounters describes Stats' counters, in the order the summaries show
// them (internal/counter). The metrics group them: the packets ignored and
// the connections given up are one metric each, by reason.
var StatsCounters = counter.Table[Stats]{
	{Name: "datagrams", Help: "UDP datagrams read as QUIC: a long header Initial of a version understood, or any long header to or from port 443", Text: "QUIC datagrams", Field: func(s *Stats) *uint64 { return &s.Datagrams }},
	{Name: "packets", Help: "long header packets in them (coalesced packets counted one by one)", Field: func(s *Stats) *uint64 { return &s.Packets }},
	{Name: "initials", Help: "Initial packets of a version understood, from clients and servers", Field: func(s *Stats) *uint64 { return &s.Initials }},
	{Name: "decrypted", Help: "client Initial packets decrypted and authenticated", Text: "Initials decrypted", Field: func(s *Stats) *uint64 { return &s.Decrypted }},
	{Name: "auth_failed", Help: "Initial packets that failed authentication (or too short to try): not trusted", Text: "failed authentication",
		Metric: "packets_ignored", Label: "reason=auth_failed", MetricHelp: "QUIC: long header packets ignored, by reason: auth_failed (an Initial that failed authentication, or too short to try), unknown_version (a version not understood), malformed (a truncated long header, or an authenticated Initial with a frame an Initial may not carry), late (an Initial of a connection already reported), from_server (an Initial from the server side)",
		Field: func(s *Stats) *uint64 { return &s.AuthFailed }},
	{Name: "unknown_version", Help: "long header packets of a QUIC version not understood (not decrypted)", Text: "unknown version", Metric: "packets_ignored", Label: "reason=unknown_version", Field: func(s *Stats) *uint64 { return &s.UnknownVersion }},
	{Name: "malformed", Help: "truncated long headers, and authenticated Initials with a frame an Initial may not carry: not trusted", Text: "malformed", Metric: "packets_ignored", Label: "reason=malformed", Field: func(s *Stats) *uint64 { return &s.Malformed }},
	{Name: "hellos", Help: "ClientHellos put together from CRYPTO frames", Text: "QUIC ClientHellos", Field: func(s *Stats) *uint64 { return &s.Hellos }},
	{Name: "not_hello", Help: "connections whose CRYPTO data was not a ClientHello of at most 16 KiB: given up", Text: "not a ClientHello",
		Metric: "connections_given_up", Label: "reason=not_hello", MetricHelp: "QUIC: connections given up before their ClientHello was recorded, by reason: not_hello (CRYPTO data that is not a ClientHello of at most 16 KiB), evicted (at the connection or memory cap), expired (no whole ClientHello within 10 s of packet time)",
		Field: func(s *Stats) *uint64 { return &s.NotHello }},
	{Name: "late", Help: "Initials of connections already reported (retransmissions, after a Retry or a version negotiation): ignored", Metric: "packets_ignored", Label: "reason=late", Field: func(s *Stats) *uint64 { return &s.Late }},
	{Name: "from_server", Help: "Initials from the server side of a connection followed: ignored", Metric: "packets_ignored", Label: "reason=from_server", Field: func(s *Stats) *uint64 { return &s.FromServer }},
	{Name: "connections", Help: "connections followed (their first Initial authenticated)", Text: "connections", Field: func(s *Stats) *uint64 { return &s.Conns }},
	{Name: "evicted", Help: "connections dropped at the connection or memory cap before their ClientHello was whole", Text: "evicted", Metric: "connections_given_up", Label: "reason=evicted", Field: func(s *Stats) *uint64 { return &s.Evicted }},
	{Name: "expired", Help: "connections dropped: no whole ClientHello within 10 s of packet time", Text: "expired", Metric: "connections_given_up", Label: "reason=expired", Field: func(s *Stats) *uint64 { return &s.Expired }},
	{Name: "crypto_dropped", Help: "CRYPTO frames dropped: more than 32 separate ranges pending", Metric: "crypto_frames_dropped", Field: func(s *Stats) *uint64 { return &s.CryptoDropped }},
}

// Add adds o's counts to s: the sum over several Trackers.
func (s *Stats) Add(o *Stats) { StatsCounters.Add(s, o) }
