package redisstate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// Errors.
var (
	// ErrUnavailable wraps a failure to reach Redis or to run a batch
	// (it is layout.ErrUnavailable, which a layout's Redis code returns).
	ErrUnavailable = layout.ErrUnavailable
	// ErrBadURL is returned for a backend address that is none of
	// redis://host:port/db, rediss://…, redis-cluster://host:port,host:port,
	// rediss-cluster://… and unix:///path/redis.sock, or does not parse.
	ErrBadURL = errors.New("bad redis address")
)

// OnError says what a batch that Redis did not decide becomes.
type OnError int

const (
	// Fail returns the error: nothing is answered.
	Fail OnError = iota
	// AssumeNew answers every URL of the batch new, and counts it.
	AssumeNew
)

// Options configure Open. Zero fields take the defaults.
type Options struct {
	Prefix string // key prefix; default "urldedupd"
	Create bool   // write the metadata key when there is none
	// Spec, when set, is the format the caller requires (format.ErrMismatch
	// for a state of another), and the one Create makes.
	Spec *format.Spec
	// New, when set, is the metadata Create writes: layout, sizes, plan
	// and, for the Keyed layout, the key (New.Key, required then), which
	// a state in Redis keeps in its metadata key.
	New      *format.Meta
	OnError  OnError
	Timeout  time.Duration // per batch, retries included; default 10 s
	Attempts int           // connection attempts at Open; default 5
	// Replicas, when above 0, makes every batch wait (WAIT) until that
	// many replicas of each master it wrote to have acknowledged it; a
	// batch they do not acknowledge within Timeout fails. Without it, a
	// master that dies before its replica has a bit can lose the bit in
	// the failover, and the URL can be answered new a second time.
	Replicas int
	// Clock, when set, replaces time.Now for a windowed layout
	// (layout.Clocked).
	Clock func() time.Time
}

// Redis is a state in Redis: the transport (pipelines per node, retries,
// WAIT, cluster routing) under the layout's commands. It is safe for
// concurrent use.
type Redis struct {
	c        redis.UniversalClient
	prefix   string
	keys     [signature.Shards]string
	meta     format.Meta
	onError  OnError
	timeout  time.Duration
	replicas int
	cluster  *redis.ClusterClient // when c is a cluster
	scratch  sync.Pool            // *scratch
	assumed  atomic.Uint64
	remote   layout.Remote        // the layout's half: cmds or rounds
	cmds     layout.RedisCommands // the layout's commands, one per URL
	rounds   layout.RedisRounds   // the layout's own protocol (the DSBF's tree)
	full     atomic.Uint64        // answered new, not stored (layout.AnswerNotStored)
	decode   func(int64) int64    // the layout's replies to answers (layout.AnswerDecoder); nil: as they are
	clock    func() time.Time     // Options.Clock
}

// Open connects to addr (redis://[user:pass@]host:port[/db] or
// redis-cluster://host:port,host:port,…; rediss:// for TLS; unix://path for
// a Unix socket, ?db=N), checks or
// creates the metadata key, and returns the backend.
func Open(ctx context.Context, addr string, opts *Options) (*Redis, error) {
	if opts == nil {
		opts = &Options{}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	c, err := newClient(addr, timeout)
	if err != nil {
		return nil, err
	}
	r := &Redis{c: c, prefix: opts.Prefix, onError: opts.OnError, timeout: timeout, replicas: opts.Replicas, clock: opts.Clock}
	r.cluster, _ = c.(*redis.ClusterClient)
	if r.prefix == "" {
		r.prefix = "urldedupd"
	}
	for i := range r.keys {
		r.keys[i] = r.prefix + ":" + format.ShardName(i)
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	if err := r.ping(ctx, attempts); err != nil {
		c.Close()
		return nil, err
	}
	if err := r.loadMeta(ctx, opts); err != nil {
		c.Close()
		return nil, err
	}
	if err := r.openLayout(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return r, nil
}

// openLayout readies the layout's half of the state (package layout):
// its commands, their script loaded so that the first batch need not
// learn of NOSCRIPT, or its own protocol.
func (r *Redis) openLayout(ctx context.Context) error {
	l, err := layout.Lookup(r.meta.Spec.Layout)
	if err != nil {
		return fmt.Errorf("redisstate: %s: %w", r.metaKey(), err)
	}
	if c, ok := l.(layout.Clocked); ok && r.clock != nil {
		l = c.WithClock(r.clock)
	}
	rl, ok := l.(layout.RedisLayout)
	if !ok {
		return fmt.Errorf("redisstate: %s: %w: layout %s has no Redis commands", r.metaKey(), format.ErrLayout, l.Name())
	}
	if r.remote, err = rl.OpenRedis(ctx, r.meta, transport{r}); err != nil {
		return fmt.Errorf("redisstate: %s: %w", r.metaKey(), err)
	}
	switch x := r.remote.(type) {
	case layout.RedisRounds:
		r.rounds = x
		return nil
	case layout.RedisCommands:
		r.cmds = x
		if d, ok := x.(layout.AnswerDecoder); ok {
			r.decode = d.Answer
		}
	default:
		return fmt.Errorf("redisstate: %s: %w: layout %s decides by neither commands nor rounds", r.metaKey(), format.ErrLayout, l.Name())
	}
	if err := r.cmds.Load(ctx, r.c); err != nil {
		return fmt.Errorf("redisstate: %w: %v", ErrUnavailable, err)
	}
	return nil
}

// Forgetter returns the layout's forgetting of URLs (layout.Forgetter),
// when it has one.
func (r *Redis) Forgetter() (layout.Forgetter, bool) {
	f, ok := r.remote.(layout.Forgetter)
	return f, ok
}

// newClient connects to addr. Reads may take as long as a batch may: a
// WAIT for replicas can take that long, and a read that times out leaves a
// batch that may have run without an answer.
func newClient(addr string, timeout time.Duration) (redis.UniversalClient, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("redisstate: %w: %q: %v", ErrBadURL, addr, err)
	}
	switch u.Scheme {
	case "redis", "rediss", "unix":
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("redisstate: %w: %v", ErrBadURL, err)
		}
		o.MaxRetries = -1 // never re-send a batch that may have run
		o.ReadTimeout, o.WriteTimeout = timeout+time.Second, timeout+time.Second
		return redis.NewClient(o), nil
	case "redis-cluster", "rediss-cluster":
		o := &redis.ClusterOptions{Addrs: strings.Split(u.Host, ","), MaxRetries: -1, MaxRedirects: 8,
			ReadTimeout: timeout + time.Second, WriteTimeout: timeout + time.Second}
		if u.User != nil {
			o.Username = u.User.Username()
			o.Password, _ = u.User.Password()
		}
		if u.Scheme == "rediss-cluster" {
			c, err := redis.ParseURL("rediss://" + strings.Split(u.Host, ",")[0])
			if err != nil {
				return nil, fmt.Errorf("redisstate: %w: %v", ErrBadURL, err)
			}
			o.TLSConfig = c.TLSConfig
		}
		return redis.NewClusterClient(o), nil
	}
	return nil, fmt.Errorf("redisstate: %w: %q (want redis://host:port/db, rediss://…, redis-cluster://host:port,…, rediss-cluster://… or unix:///path/redis.sock)", ErrBadURL, addr)
}

// ping connects, retrying with backoff: nothing has been sent yet.
func (r *Redis) ping(ctx context.Context, attempts int) error {
	var err error
	wait := 100 * time.Millisecond
	for i := 0; i < attempts; i++ {
		if err = r.c.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return fmt.Errorf("redisstate: %w: %v (after %d attempts)", ErrUnavailable, err, attempts)
}

func (r *Redis) metaKey() string { return r.prefix + ":meta" }

// loadMeta reads and validates the metadata key, creating it (SET NX) when
// asked; a concurrent creator's metadata wins and is validated.
func (r *Redis) loadMeta(ctx context.Context, opts *Options) error {
	data, err := r.c.Get(ctx, r.metaKey()).Bytes()
	if errors.Is(err, redis.Nil) {
		if !opts.Create {
			return fmt.Errorf("redisstate: %s: %w", r.metaKey(), format.ErrNoState)
		}
		m, merr := newMeta(opts)
		if merr != nil {
			return merr
		}
		text, _ := m.MarshalText()
		if err := r.c.SetNX(ctx, r.metaKey(), text, 0).Err(); err != nil {
			return fmt.Errorf("redisstate: create %s: %w: %v", r.metaKey(), ErrUnavailable, err)
		}
		data, err = r.c.Get(ctx, r.metaKey()).Bytes()
	}
	if err != nil {
		return fmt.Errorf("redisstate: read %s: %w: %v", r.metaKey(), ErrUnavailable, err)
	}
	if err := r.meta.UnmarshalText(data); err != nil {
		return fmt.Errorf("redisstate: %s: %w", r.metaKey(), err)
	}
	if err := inRedis(r.meta.Spec.Layout); err != nil {
		return fmt.Errorf("redisstate: %s: %w", r.metaKey(), err)
	}
	if opts.Spec != nil {
		if err := r.meta.Require(r.metaKey(), *opts.Spec); err != nil {
			return fmt.Errorf("redisstate: %w", err)
		}
	}
	return nil
}

// newMeta returns the metadata Create makes from opts.
func newMeta(opts *Options) (format.Meta, error) {
	m, err := format.Creating(opts.Spec, opts.New, time.Now())
	if err == nil {
		err = inRedis(m.Spec.Layout)
	}
	if err != nil {
		return m, fmt.Errorf("redisstate: %w", err)
	}
	return m, nil
}

// inRedis returns an error wrapping format.ErrLayout for a layout this
// build keeps only in state directories: one that is no
// layout.RedisLayout (bloom and mdbf, whose URLs' bits are spread over the
// whole state; a DSBF's are in one leaf, one key).
func inRedis(id format.Layout) error {
	l, err := layout.Lookup(id)
	if err != nil {
		return err
	}
	if _, ok := l.(layout.RedisLayout); ok {
		return nil
	}
	var names []string
	for _, l := range layout.All() {
		if _, ok := l.(layout.RedisLayout); ok {
			names = append(names, l.Name())
		}
	}
	in := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		in = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return fmt.Errorf("%w: layout %s is kept in a state directory only in this build (in Redis: %s)", format.ErrLayout, l.Name(), in)
}

// Meta returns the state's metadata; for the Keyed layout it carries the
// key (Meta.Key).
func (r *Redis) Meta() format.Meta { return r.meta }

// Client returns the Redis client, for tools and tests that read or write
// the state's keys themselves.
func (r *Redis) Client() redis.UniversalClient { return r.c }

// NotStored returns how many URLs were answered new without being stored
// (layout.AnswerNotStored: the keyed layout's URLs whose both buckets
// were full).
func (r *Redis) NotStored() uint64 { return r.full.Load() }

// Assumed returns how many URLs were answered new under AssumeNew.
func (r *Redis) Assumed() uint64 { return r.assumed.Load() }

// Remote returns the layout's half of the state (layout.Remote), for what
// a layout offers beyond deciding (as the keyed layout's Inserter).
func (r *Redis) Remote() layout.Remote { return r.remote }

// String names the backend for messages: its address without password.
func (r *Redis) String() string { return "redis " + r.prefix }

// Close gives back what the layout holds of the state (the room a DSBF
// process leased from its leaves and did not use), and closes the
// connections.
func (r *Redis) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	err := r.remote.Close(ctx)
	return errors.Join(err, r.c.Close())
}

// Report measures the state (reading every key) and returns its report,
// by its layout's formula; where names it.
func (r *Redis) Report(ctx context.Context, where string) (layout.Report, error) {
	return r.remote.Report(ctx, where)
}
