package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/state"
)

func newSnapshotCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot DIR",
		Short: "Copy the state, even while it is in use, into a new directory",
		Long: `Copy the state (--dir) into DIR, which must not exist. The copy is built
beside DIR and renamed into place, so DIR is either absent or complete.

Taken while other processes set bits, the copy holds every bit that was set
when the snapshot started and only bits that were set by the time it ended.
Bits only go from 0 to 1, so that is a state the source really had (each
shard at some moment during the copy): no URL reported new before the
snapshot began is missing from it, and it never reports as seen a URL that
was not. The source is opened read-only.`,
		Example: `  urldedupd --dir /var/lib/urldedupd snapshot /backup/urldedupd-$(date +%F)`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshot(cmd.Context(), g, args[0], cmd.OutOrStdout())
		},
	}
}

func runSnapshot(ctx context.Context, g *globalOptions, dst string, out io.Writer) (err error) {
	if g.backend != "" {
		return usageError(errLocalOnly)
	}
	st, err := openState(ctx, g, state.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	if err := st.Dir().Snapshot(dst); err != nil {
		return err
	}
	fmt.Fprintf(out, "snapshot of %s written to %s\n", g.dir, dst)
	return nil
}
