package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	// Every layout of this build registers itself with package layout.
	_ "github.com/urldedupd/urldedupd/internal/bitcheck"
	_ "github.com/urldedupd/urldedupd/internal/bitmapwindow"
	_ "github.com/urldedupd/urldedupd/internal/bloomlayout"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/journal"
	_ "github.com/urldedupd/urldedupd/internal/keyed"
	_ "github.com/urldedupd/urldedupd/internal/keyedwindow"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// Decider is what front ends decide against: batches of signatures, and
// how to ask for them.
type Decider interface {
	layout.Decider
	// InFlight is how many batches a front end keeps in flight: 0 when
	// the decider answers at once, in this process (decide each input as
	// it comes); n ≥ 1 when it answers over a network (keep n batches in
	// flight, answers in order).
	InFlight() int
}

// Options configure Open. A nil *Options is the zero Options: open an
// existing state, any format, read-write.
type Options struct {
	// Create makes a new state when there is none (a directory with its
	// parents; in Redis, the metadata key by SET NX). Without it, Open
	// returns format.ErrNoState.
	Create bool
	// Spec, when set, is the format required (format.ErrMismatch for a
	// state of another) and the one Create makes (nil: format.Default).
	Spec *format.Spec
	// New, when set, is the metadata Create gives a new state: layout,
	// sizes, plan and, for the Keyed layout, the key (New.Key, which a
	// directory keeps in its key file and Redis in its metadata). Nil is
	// format.NewMeta of Spec.
	New *format.Meta
	// ReadOnly opens a directory read-only, so that a state on read-only
	// storage can be tested and counted. Redis is never read-only.
	ReadOnly bool
	// Local is how a directory, or a remote state's local cache, is
	// opened: its LockTimeout, FlushInterval and Warn. Its Create, Spec
	// and ReadOnly are set from the fields above.
	Local shardfile.Options
	// Remote configures a state in Redis; it is ignored for a directory.
	Remote RemoteOptions
	// Checkpoint is how often a directory opened with a flush interval
	// (Local.FlushInterval) syncs its shards: between checkpoints each
	// flush writes and syncs only a journal of the URLs answered new
	// (package journal), which a writable open replays after a crash.
	// Zero is DefaultCheckpoint; negative keeps no journal, and every
	// flush then syncs the shards. The windowed layouts keep no journal.
	Checkpoint time.Duration
	// Clock, when set, replaces time.Now for the windowed layouts, which
	// count generations by it: tests cross generations in milliseconds.
	// Every process sharing a state must agree on the time.
	Clock func() time.Time
}

// RemoteOptions configure a state in Redis.
type RemoteOptions struct {
	Prefix   string             // key prefix; "" is redisstate's default, "urldedupd"
	OnError  redisstate.OnError // what a batch Redis did not decide becomes
	Replicas int                // replicas every batch waits for (WAIT); 0: none
	Timeout  time.Duration      // per batch, retries included; 0: redisstate's default
	// InFlight is how many batches front ends keep in flight; 0 means
	// DefaultInFlight.
	InFlight int
	// Cache, when set, is a local state directory that answers known
	// duplicates without asking Redis (Cached, in front of it). It is created
	// with the Redis state's format if it does not exist.
	Cache string
}

// DefaultInFlight is the batches in flight to a remote state when
// RemoteOptions.InFlight is zero.
const DefaultInFlight = 4

// State is an open state: one layout (package layout) over one backend, a
// directory, or Redis with or without a local cache (a directory in front
// of it). It is safe for concurrent use; Close must not race with its use.
type State struct {
	layout   layout.Layout
	dir      *shardfile.Dir // the directory, or the remote state's local cache
	local    layout.Local   // the layout over dir
	key      *signature.Key // the keyed layouts'
	redis    *redisstate.Redis
	decider  layout.Decider
	meta     format.Meta
	where    string
	inFlight int

	journal     *journal.Journal // a writable directory's, but for the windowed layouts
	writer      *journal.Writer  // this process's, when it flushes
	replayed    journal.Replayed
	noCloseSync bool
}

// RemoteForms are the prefixes of a Redis address: a where that starts
// with none of them is a directory.
var RemoteForms = []string{"redis://", "rediss://", "redis-cluster://", "rediss-cluster://", "unix://"}

// IsRemote reports whether where names a state in Redis (one of
// RemoteForms: redis://, rediss://, redis-cluster://, rediss-cluster://,
// unix:// for a Redis socket) rather than a directory.
func IsRemote(where string) bool {
	for _, p := range RemoteForms {
		if strings.HasPrefix(where, p) {
			return true
		}
	}
	return false
}

// Open opens the state at where: a directory, or a Redis address (see
// IsRemote). On any error it closes what it opened.
func Open(ctx context.Context, where string, opts *Options) (*State, error) {
	if opts == nil {
		opts = &Options{}
	}
	if IsRemote(where) {
		return openRemote(ctx, where, opts)
	}
	d, err := shardfile.Open(where, opts.dirOptions(opts.Spec, opts.New, opts.ReadOnly))
	if err != nil {
		return nil, err
	}
	s := &State{dir: d, meta: d.Meta(), where: where, key: d.Key(), noCloseSync: opts.Local.NoCloseSync}
	s.meta.Key = nil // the key file's key is s.key; Meta() never carries one
	if s.decider, err = s.open(d, opts.Clock); err != nil {
		d.Close()
		return nil, err
	}
	if err := s.openJournal(opts); err != nil {
		s.local.Close()
		d.Close()
		return nil, err
	}
	return s, nil
}

// Memory returns a state held in this process's memory only
// (shardfile.Memory): one layout over anonymous memory, of the format spec
// or of the metadata m (Init.Meta makes one for any layout), answering as
// the same state in a directory would. Nothing is written anywhere and it
// is gone at Close. It is for tests and experiments that do not test the
// files: making one costs nothing, where a directory writes its zeros.
func Memory(spec *format.Spec, m *format.Meta) (*State, error) {
	d, err := shardfile.Memory(spec, m)
	if err != nil {
		return nil, err
	}
	s := &State{dir: d, meta: d.Meta(), where: "memory", key: d.Key()}
	if s.decider, err = s.open(d, nil); err != nil {
		d.Close()
		return nil, err
	}
	return s, nil
}

// open opens the layout of the state's metadata over d, with clock when
// the layout counts time, and keeps it as s.local.
func (s *State) open(d *shardfile.Dir, clock func() time.Time) (layout.Decider, error) {
	l, err := layout.Lookup(d.Meta().Spec.Layout)
	if c, ok := l.(layout.Clocked); ok && err == nil && clock != nil {
		l = c.WithClock(clock)
	}
	if err == nil {
		s.layout = l
		s.local, err = l.Open(d)
	}
	if err != nil {
		return nil, fmt.Errorf("state: %s: %w", d.Path(), err)
	}
	return s.local, nil
}

func (o *Options) dirOptions(spec *format.Spec, meta *format.Meta, readOnly bool) *shardfile.Options {
	d := o.Local
	d.Create, d.Spec, d.New, d.ReadOnly = o.Create && !readOnly, spec, meta, readOnly
	return &d
}

func openRemote(ctx context.Context, addr string, opts *Options) (*State, error) {
	ro := opts.Remote
	r, err := redisstate.Open(ctx, addr, &redisstate.Options{
		Prefix: ro.Prefix, Create: opts.Create, Spec: opts.Spec, New: opts.New, OnError: ro.OnError,
		Replicas: ro.Replicas, Timeout: ro.Timeout, Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	s := &State{redis: r, decider: r, meta: r.Meta(), where: r.String(), inFlight: ro.InFlight, key: r.Meta().Key}
	s.meta.Key = nil // the State's key is s.key; Meta() never carries it
	if s.inFlight <= 0 {
		s.inFlight = DefaultInFlight
	}
	if s.layout, err = layout.Lookup(s.meta.Spec.Layout); err != nil {
		r.Close()
		return nil, fmt.Errorf("state: %s: %w", s.where, err)
	}
	// A windowed state forgets: a local cache would go on answering
	// duplicate what Redis has let go.
	if ro.Cache != "" && s.meta.Spec.Layout.Windowed() {
		r.Close()
		return nil, fmt.Errorf("state: local cache %s: %w: a windowed state lets URLs go when they leave the window, and a local cache would still hold them", ro.Cache, format.ErrLayout)
	}
	// A layout that can only be copied whole (a DSBF) cannot be mirrored
	// by setting locally what Redis has set.
	if ro.Cache != "" && s.layout.Merge() == layout.MergeCopy {
		r.Close()
		return nil, fmt.Errorf("state: local cache %s: %w: a DSBF's leaves split where their own URLs reach a bound, so a local tree cannot mirror Redis's", ro.Cache, format.ErrLayout)
	}
	if ro.Cache != "" {
		// The cache must read bits as Redis does: the same format, sizes
		// and key.
		spec, meta := s.meta.Spec, r.Meta()
		co := *opts
		co.Create = true
		d, err := shardfile.Open(ro.Cache, co.dirOptions(&spec, &meta, false))
		if err == nil {
			err = d.Meta().Compatible(meta)
			if err != nil {
				d.Close()
			}
		}
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("state: local cache %s: %w", ro.Cache, err)
		}
		local, err := s.open(d, opts.Clock)
		if err != nil {
			d.Close()
			r.Close()
			return nil, err
		}
		s.dir = d
		s.decider = &Cached{Local: local, Remote: r}
	}
	return s, nil
}

// Decide decides a batch; see layout.Decider.
func (s *State) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	return s.decider.Decide(ctx, sigs, seen, dryRun)
}

// ErrNoForget is returned by Forget on a layout that shares bits among
// URLs (bitmap, bitmap-window, bloom, mdbf, dsbf): clearing a URL's bits
// would forget the URLs that share them too.
var ErrNoForget = errors.New("cannot forget a URL")

// Forget makes each URL of sigs new at its next sighting, touching no
// other URL, and reports in was which were held. Only the keyed layouts
// can; the others return an error wrapping ErrNoForget before changing
// anything. A state in Redis with a local cache forgets in both.
func (s *State) Forget(ctx context.Context, sigs []signature.Signature, was []bool) error {
	var f layout.Forgetter
	switch {
	case s.redis != nil:
		f, _ = s.redis.Forgetter()
	default:
		f, _ = s.local.(layout.Forgetter)
	}
	if f == nil {
		return fmt.Errorf("state: %s: %w: layout %s keeps a URL in bits other URLs share, so clearing them would forget those URLs too (only keyed and keyed-window states can forget)",
			s, ErrNoForget, s.meta.Spec.Layout.Name())
	}
	forget := func() error { return f.Forget(ctx, sigs, was) }
	var err error
	if s.redis == nil && s.journal != nil && len(sigs) > 0 {
		err = s.journal.Forget(forget, s.dir.Sync)
	} else {
		err = forget()
	}
	if err != nil {
		return err
	}
	if s.redis != nil && s.local != nil { // a local cache would still answer duplicate
		if lf, ok := s.local.(layout.Forgetter); ok {
			cached := make([]bool, len(sigs))
			if err := lf.Forget(ctx, sigs, cached); err != nil {
				return fmt.Errorf("state: local cache %s: %w", s.dir.Path(), err)
			}
		}
	}
	return nil
}

// InFlight is 0 for a directory, which answers at once, and the batches to
// keep in flight for Redis. It is the one place that says which.
func (s *State) InFlight() int { return s.inFlight }

// Meta is the state's metadata. It never carries the key (Meta.Key is
// nil).
func (s *State) Meta() format.Meta { return s.meta }

// Signer returns a new Signer for the state's format, with its key for the
// Keyed layout. A Signer is not safe for concurrent use: give each
// goroutine its own.
func (s *State) Signer() *signature.Signer {
	if s.key != nil {
		return signature.NewKeyedSigner(*s.key, s.meta.Spec.Mode)
	}
	return s.meta.Spec.Signer()
}

// Key returns a Keyed state's secret key, nil for other layouts. Keep it
// secret: whoever has it can forge collisions.
func (s *State) Key() *signature.Key { return s.key }

// NotStored returns how many URLs this process answered new without
// storing them, because both their buckets were full (Keyed layout past
// its capacity; see keyed.Full). Always 0 for Bitmap.
func (s *State) NotStored() uint64 {
	switch {
	case s.redis != nil:
		return s.redis.NotStored()
	case s.local != nil:
		return s.local.NotStored()
	}
	return 0
}

// String says where the state is, for messages: the directory, or "redis
// PREFIX".
func (s *State) String() string { return s.where }

// Dir returns the open directory of a local state, or nil for Redis.
func (s *State) Dir() *shardfile.Dir {
	if s.redis != nil {
		return nil
	}
	return s.dir
}

// Created reports whether Open created the state directory's state
// (always false for Redis, where creation is one SET NX).
func (s *State) Created() bool { return s.redis == nil && s.dir.Created() }

// Redis returns the Redis state, or nil for a directory.
func (s *State) Redis() *redisstate.Redis { return s.redis }

// Assumed returns how many URLs were answered new without Redis deciding
// them (redisstate.AssumeNew); 0 for a directory.
func (s *State) Assumed() uint64 {
	if s.redis == nil {
		return 0
	}
	return s.redis.Assumed()
}

// Sync puts a directory (or a local cache) on disk: its journal, when it
// keeps one, else its shards. Redis keeps its own.
func (s *State) Sync() error {
	switch {
	case s.dir == nil:
		return nil
	case s.writer != nil:
		return s.writer.Sync()
	}
	return s.dir.Sync()
}

// Close closes the connections and the directory, gathering their errors.
func (s *State) Close() error {
	var err error
	if s.redis != nil {
		err = s.redis.Close()
	}
	if s.local != nil {
		err = errors.Join(err, s.local.Close())
	}
	if s.dir != nil {
		derr := s.dir.Close()
		err = errors.Join(err, derr, s.closeJournal(derr))
	}
	return err
}

var _ Decider = (*State)(nil)
