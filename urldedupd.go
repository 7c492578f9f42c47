package urldedupd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Sentinel errors of Open, for errors.Is.
var (
	// ErrNoState is returned by Open when there is no state at the place
	// given and Options.Create is not set.
	ErrNoState = format.ErrNoState
	// ErrCorrupt is returned when a state's metadata cannot be read.
	ErrCorrupt = format.ErrCorrupt
	// ErrMismatch is returned when a state's files disagree with its
	// metadata or with each other.
	ErrMismatch = format.ErrMismatch
	// ErrReadOnly is returned by Decide on a state opened read-only.
	ErrReadOnly = errors.New("state opened read-only")
)

// Options configure Open. A nil *Options opens an existing state,
// read-write.
type Options struct {
	// Create makes a new state, in the default layout (the patent's
	// bitmap: 512 MiB, one bit per CRC32 signature), when there is none.
	// Other layouts are made with `urldedupd init`.
	Create bool
	// ReadOnly opens a directory read-only: Check works, Decide fails.
	ReadOnly bool
	// Prefix is the key prefix of a state in Redis; "" is "urldedupd".
	Prefix string
	// Timeout bounds one batch against Redis, retries included; 0 is the
	// default (10 s).
	Timeout time.Duration
	// Cache, for a state in Redis, is a local state directory that
	// answers known duplicates without asking Redis.
	Cache string
}

// State is an open state. It is safe for concurrent use; Close must not
// race with its use.
type State struct {
	st       *state.State
	readOnly bool
	pool     sync.Pool // of *scratch
}

// scratch is what one Decide or Check needs: a Signer (not safe for
// concurrent use) and the batch's signatures.
type scratch struct {
	signer *signature.Signer
	sigs   []signature.Signature
}

// Open opens the state at where: a directory, or a Redis address
// (redis://host:port/db, rediss://…, redis-cluster://host:port,…,
// rediss-cluster://…, unix:///path/to/redis.sock).
func Open(ctx context.Context, where string, opts *Options) (*State, error) {
	if opts == nil {
		opts = &Options{}
	}
	st, err := state.Open(ctx, where, &state.Options{
		Create:   opts.Create,
		ReadOnly: opts.ReadOnly,
		Remote:   state.RemoteOptions{Prefix: opts.Prefix, Timeout: opts.Timeout, Cache: opts.Cache},
	})
	if err != nil {
		return nil, fmt.Errorf("urldedupd: open %s: %w", where, err)
	}
	s := &State{st: st, readOnly: opts.ReadOnly}
	s.pool.New = func() any { return &scratch{signer: st.Signer()} }
	return s, nil
}

// Decide decides a batch of URLs: dup[i] is set to whether urls[i] was
// seen before, and every URL not seen before is recorded, so that it is
// answered new once across every process sharing the state. A URL twice in
// one batch is new the first time and a duplicate the second. dup must be
// as long as urls. On an error (Redis unreachable, a read-only state) no
// answer of the batch may be relied on.
func (s *State) Decide(ctx context.Context, urls []string, dup []bool) error {
	return s.decide(ctx, urls, dup, false)
}

// Check answers as Decide would, recording nothing.
func (s *State) Check(ctx context.Context, urls []string, dup []bool) error {
	return s.decide(ctx, urls, dup, true)
}

func (s *State) decide(ctx context.Context, urls []string, dup []bool, dryRun bool) error {
	if len(dup) != len(urls) {
		return fmt.Errorf("urldedupd: %d answers for %d URLs", len(dup), len(urls))
	}
	if !dryRun && s.readOnly {
		return fmt.Errorf("urldedupd: decide in %s: %w", s.st, ErrReadOnly)
	}
	if len(urls) == 0 {
		return nil
	}
	sc := s.pool.Get().(*scratch)
	defer s.pool.Put(sc)
	sc.sigs = sc.sigs[:0]
	for _, u := range urls {
		// A view of u's bytes, not a copy (which would allocate per URL):
		// Sign reads them and keeps nothing.
		sig, _ := sc.signer.Sign(unsafe.Slice(unsafe.StringData(u), len(u)))
		sc.sigs = append(sc.sigs, sig)
	}
	if err := s.st.Decide(ctx, sc.sigs, dup, dryRun); err != nil {
		return fmt.Errorf("urldedupd: %s: %w", s.st, err)
	}
	return nil
}

// Stats measures the state (reading all of it: every shard, or every key
// in Redis) and returns how full it is.
func (s *State) Stats(ctx context.Context) (Stats, error) {
	r, err := s.st.Report(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("urldedupd: stats of %s: %w", s.st, err)
	}
	st := Stats{
		Layout:         r.Layout,
		Bytes:          r.StateBytes,
		FillRatio:      r.FillRatio,
		Distinct:       -1,
		FalseDupChance: r.FalseDupChance,
		Capacity:       r.Capacity,
	}
	if r.EstimatedDistinct != nil {
		st.Distinct = *r.EstimatedDistinct
	}
	return st, nil
}

// Stats says how full a state is and what that means for its answers.
type Stats struct {
	// Layout is the layout's name, as `urldedupd init --layout` takes
	// it: "bitmap", "keyed", "bloom", "mdbf" or "dsbf".
	Layout string
	// Bytes is the size of the state's shards.
	Bytes int64
	// FillRatio is the fraction of bits set, or of slots occupied.
	FillRatio float64
	// Distinct is the distinct URLs the state holds, estimated (exact for
	// the keyed layout); -1 when it cannot be estimated (a full bitmap).
	Distinct float64
	// FalseDupChance is the chance that the next new URL is answered a
	// duplicate.
	FalseDupChance float64
	// Capacity is the distinct URLs the state was planned for; 0 when it
	// was not planned.
	Capacity uint64
}

// String says where the state is: its directory, or "redis PREFIX".
func (s *State) String() string { return s.st.String() }

// Close puts a directory's state on disk and closes it, or closes the
// connections to Redis.
func (s *State) Close() error {
	return s.st.Close()
}

// Sync puts a directory's state (or a Redis state's local cache) on disk
// now; Close does too. Redis keeps its own persistence.
func (s *State) Sync() error { return s.st.Sync() }
