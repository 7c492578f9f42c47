package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/redisstate"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
)

func newMigrateCommand(g *globalOptions) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "migrate --from SRC --to DST",
		Short: "Copy a state between a local directory and Redis (bitwise OR, idempotent, resumable)",
		Long: `OR every bit of SRC into DST, where one of them is a local state directory
and the other a Redis address (redis://… or redis-cluster://…; key prefix
--redis-prefix). DST is created with SRC's format if it has none; a DST of
another format is refused before anything changes.

Local to Redis: each shard that has bits is sent as one string and OR-ed in
with BITOP inside a transaction, so Redis can keep serving meanwhile. Done
shards are recorded in Redis, so an interrupted migrate resumes where it
stopped; OR is idempotent, so running it again changes nothing.

Redis to local: each key is read and OR-ed into the local shard word by
word, safe while other processes use the local state.`,
		Example: `  urldedupd migrate --from /var/lib/urldedupd --to redis://10.1.2.3:6379/0
  urldedupd migrate --from redis-cluster://h1:7000,h2:7000 --to /var/lib/urldedupd`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			isRedis := func(s string) bool { return strings.HasPrefix(s, "redis") && strings.Contains(s, "://") }
			switch {
			case from == "" || to == "":
				return usageError(errors.New("--from and --to are both required"))
			case isRedis(from) == isRedis(to):
				return usageError(errors.New("one of --from and --to must be a local directory and the other a Redis address (to combine local states, use merge)"))
			case isRedis(to):
				return runUpload(cmd.Context(), g, from, to, cmd.OutOrStdout())
			}
			return runDownload(cmd.Context(), g, from, to, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "source: a state directory or a Redis address")
	cmd.Flags().StringVar(&to, "to", "", "destination: a Redis address or a state directory")
	return cmd
}

func runUpload(ctx context.Context, g *globalOptions, dir, addr string, out io.Writer) (err error) {
	d, err := shardfile.Open(dir, &shardfile.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	// Reading the shards: a shard truncated under us is an error, not SIGBUS.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if err = d.Fault(r); err == nil {
				panic(r)
			}
		}
	}()
	f := d.Meta().Spec
	r, err := redisstate.Open(ctx, addr, &redisstate.Options{Prefix: g.redisPrefix, Create: true, Spec: &f})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	abs, _ := filepath.Abs(dir)
	id := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(abs+"|"+d.Meta().Created.String())))
	prog := r.Progress(id)
	sent, skipped, empty := 0, 0, 0
	for i := 0; i < format.Shards; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		done, err := prog.Done(ctx, i)
		if err != nil {
			return err
		}
		switch data := d.Shard(i); {
		case done:
			skipped++
		case allZero(data):
			empty++
		default:
			if err := r.OrShard(ctx, i, data); err != nil {
				return err
			}
			sent++
		}
		if err := prog.Mark(ctx, i); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "%s -> %s: %d shards sent, %d empty, %d already done\n", dir, addr, sent, empty, skipped)
	return nil
}

func runDownload(ctx context.Context, g *globalOptions, addr, dir string, out io.Writer) (err error) {
	r, err := redisstate.Open(ctx, addr, &redisstate.Options{Prefix: g.redisPrefix})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	f := r.Meta().Spec
	d, err := shardfile.Open(dir, &shardfile.Options{Create: true, Spec: &f, Warn: warnState})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	set := bitcheck.New(d)
	var added uint64
	for i := 0; i < format.Shards; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := r.Shard(ctx, i)
		if err != nil {
			return err
		}
		n, err := set.OrShard(i, data)
		if err != nil {
			return err
		}
		added += n
	}
	fmt.Fprintf(out, "%s -> %s: %d bits added\n", addr, dir, added)
	return d.Sync()
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
