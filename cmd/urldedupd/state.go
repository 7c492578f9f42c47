package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/state"
)

// errLocalOnly is returned by commands that work on directories only.
var errLocalOnly = errors.New("this command works on local state directories, not on --backend (to move a state between a directory and Redis, use migrate)")

// openState opens the state the global flags name: --backend (with its
// options) when given, else --dir. opts says how (Create, ReadOnly, Spec,
// Local.FlushInterval); the flags fill in the rest.
func openState(ctx context.Context, g *globalOptions, opts state.Options) (*state.State, error) {
	where := g.dir
	if g.backend != "" {
		if err := checkBackend(g.backend); err != nil {
			return nil, err
		}
		where = g.backend
		switch g.onBackendError {
		case "fail":
			opts.Remote.OnError = redisstate.Fail
		case "assume-new":
			opts.Remote.OnError = redisstate.AssumeNew
		default:
			return nil, usageError(fmt.Errorf("--on-backend-error %q: want fail or assume-new", g.onBackendError))
		}
		if g.inFlight < 1 {
			return nil, usageError(fmt.Errorf("--in-flight %d: want at least 1", g.inFlight))
		}
		opts.Remote.Prefix, opts.Remote.Replicas, opts.Remote.Timeout = g.redisPrefix, g.redisReplicas, g.redisTimeout
		opts.Remote.InFlight, opts.Remote.Cache = g.inFlight, g.localCache
	}
	opts.Local.Warn = warnState
	opts.Clock = testClock()
	// A command that flushes as it runs (serve) syncs at exit too; the
	// others wait at exit only when asked (--sync).
	opts.Local.NoCloseSync = !g.sync && opts.Local.FlushInterval == 0
	st, err := state.Open(ctx, where, &opts)
	if err != nil && g.backend == "" && errors.Is(err, fs.ErrPermission) && !opts.ReadOnly {
		err = fmt.Errorf("%w (state %s is not writable by this user; commands that only read, like check and stats, can use it)", err, g.dir)
	}
	if err != nil {
		return nil, err
	}
	if r := st.Replayed(); r.Sigs+r.Skipped > 0 {
		fmt.Fprintf(os.Stderr, "urldedupd: state %s: replayed the journals of %d processes that stopped: %d URLs decided again, %d older than a forget skipped\n",
			st, r.Writers, r.Sigs, r.Skipped)
	}
	return st, nil
}

// backendForms names the addresses --backend takes.
const backendForms = "redis://[user:password@]host:port/db, rediss://… (TLS), redis-cluster://host:port,host:port, rediss-cluster://… or unix:///path/to/redis.sock[?db=N]"

// checkBackend refuses a --backend (or $URLDEDUPD_BACKEND) that is not a
// Redis address: a typo must never become a local state directory, which
// is --dir's alone.
func checkBackend(addr string) error {
	if addr == "" || state.IsRemote(addr) {
		return nil
	}
	return usageError(fmt.Errorf("--backend %q (or $URLDEDUPD_BACKEND) is not a Redis address: want %s; a state directory is given with --dir",
		redactUser(addr), backendForms))
}

// redactUser hides what may be a password in an address that did not
// parse: anything between the first ':' and the last '@'.
func redactUser(addr string) string {
	at, colon := strings.LastIndex(addr, "@"), strings.Index(addr, ":")
	if at < 0 || colon < 0 || colon > at {
		return addr
	}
	return addr[:colon+1] + "…" + addr[at:]
}

// warnState prints on stderr what opening a state accepted but a user
// should know (sparse shards on a file system without fallocate).
func warnState(err error) { fmt.Fprintln(os.Stderr, "urldedupd: warning:", err) }

// warnAssumed says how many URLs were answered new without Redis deciding
// (--on-backend-error assume-new).
func warnAssumed(st *state.State, stderr io.Writer) {
	if n := st.Assumed(); n > 0 {
		fmt.Fprintf(stderr, "urldedupd: %d URLs answered new without Redis deciding them (--on-backend-error assume-new)\n", n)
	}
	if n := st.NotStored(); n > 0 {
		fmt.Fprintf(stderr, "urldedupd: %d URLs answered new but not stored: both their buckets are full, so their repeats will be answered new too (the keyed state is past its capacity; see stats)\n", n)
	}
}
