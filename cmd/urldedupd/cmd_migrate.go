package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/state"
)

func newMigrateCommand(g *globalOptions) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "migrate --from SRC --to DST",
		Short: "Copy a state between a local directory and Redis (idempotent, resumable)",
		Long: `Add every URL of SRC to DST, where one of them is a local state directory
and the other a Redis address (redis://…, redis-cluster://… or another
form --backend takes; key prefix
--redis-prefix). DST is created with SRC's format, size and (keyed layout)
key if it has none: in Redis the key goes into the metadata key, in a
directory into its key file (mode 0600). A DST of another layout, format,
size or key is refused before anything changes.

bitmap layout, local to Redis: each shard that has bits is sent as one
string and OR-ed in with BITOP inside a transaction, so Redis can keep
serving meanwhile. Redis to local: each key is read and OR-ed into the
local shard word by word, safe while other processes use the local state.

keyed layout: slots hold fingerprints, so OR would be wrong. A shard whose
destination is empty is copied byte for byte (Redis: SET NX on a key that
does not exist; a directory: only one that this migrate creates). Into a
non-empty destination each fingerprint is re-inserted by the ordinary
decision, as merge does (see merge --help), safe while others decide on
DST.

Local to Redis, done shards are recorded in Redis, so an interrupted
migrate resumes where it stopped; running it again changes nothing.`,
		Example: `  urldedupd migrate --from /var/lib/urldedupd --to redis://10.1.2.3:6379/0
  urldedupd migrate --from redis-cluster://h1:7000,h2:7000 --to /var/lib/urldedupd`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A Redis address mistyped must not become a directory.
			notAddr := func(s string) bool { return strings.Contains(s, "://") && !state.IsRemote(s) }
			switch {
			case from == "" || to == "":
				return usageError(errors.New("--from and --to are both required"))
			case notAddr(from) || notAddr(to):
				return usageError(fmt.Errorf("--from and --to: an address with :// must be a Redis address (%s)", backendForms))
			case state.IsRemote(from) == state.IsRemote(to):
				return usageError(errors.New("one of --from and --to must be a local directory and the other a Redis address (to combine local states, use merge)"))
			}
			return runMigrate(cmd.Context(), g, from, to, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "source: a state directory or a Redis address")
	cmd.Flags().StringVar(&to, "to", "", "destination: a Redis address or a state directory")
	return cmd
}

// runMigrate adds the state at from to the state at to, one a directory
// and the other in Redis.
func runMigrate(ctx context.Context, g *globalOptions, from, to string, out io.Writer) (err error) {
	remote := state.RemoteOptions{Prefix: g.redisPrefix}
	src, err := state.Open(ctx, from, &state.Options{ReadOnly: true, Remote: remote})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	spec := src.Meta().Spec
	dst, err := state.Open(ctx, to, &state.Options{Create: true, Spec: &spec, New: src.Template(), Remote: remote,
		Local: shardfile.Options{Warn: warnState}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dst.Close()) }()
	if err := dst.Meta().Compatible(src.Meta()); err != nil {
		return fmt.Errorf("migrate: %s into %s: %w", src, dst, err)
	}
	var opts state.MergeOptions
	if state.IsRemote(to) {
		// Done shards are recorded under the source's identity, so that
		// an interrupted upload resumes.
		abs, _ := filepath.Abs(from)
		opts.Progress = fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(abs+"|"+src.Meta().Created.String())))
	}
	m, err := dst.Merge(ctx, src, &opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s -> %s: ", src, dst) // not from and to: a Redis address may hold a password
	switch {
	case mergeOf(spec.Layout) != layout.MergeOr:
		fmt.Fprintf(out, "%d shards sent, %d empty, %d already done; %s\n", m.Shards, m.Empty, m.Done, describeMerged(spec.Layout, m))
	case state.IsRemote(to):
		fmt.Fprintf(out, "%d shards sent, %d empty, %d already done\n", m.Shards, m.Empty, m.Done)
	default:
		fmt.Fprintf(out, "%d bits added\n", m.Bits)
	}
	return nil
}
