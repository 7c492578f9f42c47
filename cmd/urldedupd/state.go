package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/redisstate"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// state is an open state, local (dir and set) or in Redis, with a decider
// and a signer matching its format.
type state struct {
	dir     *shardfile.Dir // local only
	set     *bitcheck.Set  // local only
	redis   *redisstate.Redis
	decider bitcheck.Decider
	signer  *signature.Signer
	meta    format.Meta
	where   string
	// inFlight is how many batches a front end keeps in flight: 0 for a
	// local state, which answers at once.
	inFlight int
}

// errLocalOnly is returned by commands that work on directories only.
var errLocalOnly = errors.New("this command works on local state directories, not on --backend (to move a state between a directory and Redis, use migrate)")

func openState(g *globalOptions, opts *shardfile.Options) (*state, error) {
	if g.backend != "" {
		return openRedis(g, opts)
	}
	withWarn := *opts
	withWarn.Warn = warnState
	d, err := shardfile.Open(g.dir, &withWarn)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) && !opts.ReadOnly {
			err = fmt.Errorf("%w (state %s is not writable by this user; commands that only read, like check and stats, can use it)", err, g.dir)
		}
		return nil, err
	}
	set := bitcheck.New(d)
	m := d.Meta()
	return &state{dir: d, set: set, decider: set, meta: m, where: g.dir,
		signer: m.Spec.Signer()}, nil
}

// warnState prints on stderr what opening a state accepted but a user
// should know (sparse shards on a file system without fallocate).
func warnState(err error) { fmt.Fprintln(os.Stderr, "urldedupd: warning:", err) }

func openRedis(g *globalOptions, opts *shardfile.Options) (*state, error) {
	onErr := redisstate.Fail
	switch g.onBackendError {
	case "fail":
	case "assume-new":
		onErr = redisstate.AssumeNew
	default:
		return nil, usageError(fmt.Errorf("--on-backend-error %q: want fail or assume-new", g.onBackendError))
	}
	r, err := redisstate.Open(context.Background(), g.backend, &redisstate.Options{
		Prefix: g.redisPrefix, Create: opts.Create, Spec: opts.Spec, OnError: onErr,
		Replicas: g.redisReplicas, Timeout: g.redisTimeout})
	if err != nil {
		return nil, err
	}
	if g.inFlight < 1 {
		r.Close()
		return nil, usageError(fmt.Errorf("--in-flight %d: want at least 1", g.inFlight))
	}
	m := r.Meta()
	st := &state{redis: r, decider: r, meta: m, where: r.String(), inFlight: g.inFlight,
		signer: m.Spec.Signer()}
	if g.localCache != "" {
		// The cache must read bits as Redis does: the same format.
		d, err := shardfile.Open(g.localCache, &shardfile.Options{Create: true, Spec: &m.Spec, Warn: warnState})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("--local-cache: %w", err)
		}
		st.dir = d
		st.decider = &redisstate.Cached{Local: bitcheck.New(d), Remote: r}
	}
	return st, nil
}

func (s *state) fill(ctx context.Context) (bitcheck.Fill, error) {
	if s.redis != nil {
		return s.redis.Fill(ctx)
	}
	return s.set.Fill()
}

func (s *state) Close() error {
	var err error
	if s.redis != nil {
		err = s.redis.Close()
	}
	if s.dir != nil {
		err = errors.Join(err, s.dir.Close())
	}
	return err
}

// The state is an api.Backend.

func (s *state) Decide(ctx context.Context, sigs []signature.Signature, seen []bool, dryRun bool) error {
	return s.decider.Decide(ctx, sigs, seen, dryRun)
}
func (s *state) Fill(ctx context.Context) (bitcheck.Fill, error) { return s.fill(ctx) }
func (s *state) Meta() format.Meta                               { return s.meta }
func (s *state) String() string                                  { return s.where }

// sync puts a local state (or a local cache) on disk.
func (s *state) sync() error {
	if s.dir == nil {
		return nil
	}
	return s.dir.Sync()
}

// warnAssumed says how many URLs were answered new without Redis deciding
// (--on-backend-error assume-new).
func (s *state) warnAssumed(stderr io.Writer) {
	if s.redis != nil {
		if n := s.redis.Assumed(); n > 0 {
			fmt.Fprintf(stderr, "urldedupd: %d URLs answered new without Redis deciding them (--on-backend-error assume-new)\n", n)
		}
	}
}
