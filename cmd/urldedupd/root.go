package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/buildinfo"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/metrics"
	"github.com/urldedupd/urldedupd/internal/redisstate"
	"github.com/urldedupd/urldedupd/internal/shardfile"
)

// version is set at build time with -ldflags "-X main.version=…"; without
// it the version comes from the build information (buildinfo.Version).
var version = buildinfo.Dev

type globalOptions struct {
	dir            string
	backend        string
	redisPrefix    string
	onBackendError string
	localCache     string
	redisReplicas  int
	redisTimeout   time.Duration
	sync           bool
	inFlight       int
}

// defaultDir is $URLDEDUPD_DIR, else $XDG_STATE_HOME/urldedupd, else
// ~/.local/state/urldedupd.
func defaultDir() string {
	if d := os.Getenv("URLDEDUPD_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "urldedupd")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "urldedupd")
	}
	return "urldedupd-state"
}

func newRootCommand() *cobra.Command {
	version = buildinfo.Version(version)
	metrics.Version = version // urldedupd_build_info
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "urldedupd",
		Short: "Tell whether a URL has been seen before, at line rate and across restarts",
		Long: `urldedupd tells whether a URL has been seen before, at line rate and across
restarts. Each URL is normalized and signed, and the state records the
signature: 256 memory-mapped shard files in a directory, shared by any
number of local processes, or keys in Redis (--backend). Its layout, chosen
by init, decides how:
  bitmap         one bit per CRC32 signature, 512 MiB (patent CN102693315A;
                 the default): false duplicates grow as it fills
  keyed          a keyed hash table (SipHash): false duplicates rare (3e-9
                 when 74% full) and not forgeable; URLs can be forgotten
  bloom, mdbf,   the Bloom filters of the literature, for comparison
  dsbf           (bloom and mdbf in a directory only)
  keyed-window,  "seen in the last N days": generations that expire
  bitmap-window

URLs come as lines (filter, check), from capture files (replay), from a
network interface (capture, serve: HTTP/1.x requests, the server names of
TLS and QUIC ClientHellos, cleartext HTTP/2), or from crawlers over a local
HTTP API and the Redis protocol (serve).

The state directory is --dir, else $URLDEDUPD_DIR, else
$XDG_STATE_HOME/urldedupd, else ~/.local/state/urldedupd.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Runnable, so that an unknown command reaches RunE and is a
		// usage error (exit 2) rather than cobra's plain error (exit 1).
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if args[0] == "compare" { // moved out of the sensor's binary (issue 20)
				msg += " (compare is in the lab's binary: urldedupd-lab compare)"
			} else if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
			}
			return usageError(errors.New(msg))
		},
	}
	root.PersistentFlags().StringVarP(&g.dir, "dir", "d", defaultDir(),
		"state directory (default: $URLDEDUPD_DIR, $XDG_STATE_HOME/urldedupd or ~/.local/state/urldedupd)")
	pf := root.PersistentFlags()
	pf.StringVar(&g.backend, "backend", os.Getenv("URLDEDUPD_BACKEND"),
		"keep the state in Redis instead of --dir (layouts bitmap, keyed, dsbf, keyed-window, bitmap-window): redis://host:port/db, rediss://… (TLS), redis-cluster://host:port,host:port, rediss-cluster://… or unix:///path/redis.sock; anything else is refused (default: $URLDEDUPD_BACKEND)")
	pf.StringVar(&g.redisPrefix, "redis-prefix", "urldedupd", "key prefix in Redis: keys PREFIX:00 … PREFIX:ff and PREFIX:meta")
	pf.StringVar(&g.onBackendError, "on-backend-error", "fail", "when Redis cannot decide a batch: fail (exit with an error) or assume-new (answer every URL of it new)")
	pf.StringVar(&g.localCache, "local-cache", "", "with --backend: a local state dir answering known duplicates without asking Redis")
	pf.IntVar(&g.redisReplicas, "redis-replicas", 0, "with --backend: each batch waits until this many replicas of every master it wrote to have it (WAIT), so a failover cannot lose an answered bit")
	pf.BoolVar(&g.sync, "sync", false, "wait at exit until every bit set is on disk (msync), so that a power loss afterwards loses nothing; without it the kernel writes them within its writeback delay (30 s by default), and a power loss in that time makes those URLs new again (a process exit, even kill -9, loses nothing either way)")
	pf.DurationVar(&g.redisTimeout, "redis-timeout", 10*time.Second, "with --backend: time for one batch, retries of commands that provably did not run included")
	pf.IntVar(&g.inFlight, "in-flight", 4, "with --backend: batches in flight at once (answers keep their order)")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newInitCommand(g), newFilterCommand(g), newCheckCommand(g), newStatsCommand(g), newReplayCommand(g), newCaptureCommand(g), newMergeCommand(g), newSnapshotCommand(g), newServeCommand(g), newMigrateCommand(g), newForgetCommand(g), newProtocolCommand(g), newVersionCommand())
	return root
}

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitBadState = 3
	exitLocked   = 4
	exitBackend  = 5
	exitNoFrames = 6
	exitSignal   = 130
)

var errUsage = errors.New("usage")

func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitSignal
	case errors.Is(err, shardfile.ErrLocked):
		return exitLocked
	case errors.Is(err, errUsage), errors.Is(err, redisstate.ErrBadURL): // before the causes it may wrap
		return exitUsage
	case errors.Is(err, format.ErrNoState), errors.Is(err, shardfile.ErrNotDir),
		errors.Is(err, shardfile.ErrIncomplete), errors.Is(err, shardfile.ErrNotEmpty), errors.Is(err, format.ErrCorrupt),
		errors.Is(err, format.ErrVersion), errors.Is(err, format.ErrLayout),
		errors.Is(err, format.ErrMismatch), errors.Is(err, shardfile.ErrShardMissing),
		errors.Is(err, format.ErrShardSize), errors.Is(err, shardfile.ErrNotRegular),
		errors.Is(err, shardfile.ErrFault), errors.Is(err, shardfile.ErrSparse), errors.Is(err, format.ErrKey):
		return exitBadState
	case errors.Is(err, redisstate.ErrUnavailable):
		return exitBackend
	case errors.Is(err, capture.ErrNothingDecoded):
		return exitNoFrames
	}
	return exitError
}
