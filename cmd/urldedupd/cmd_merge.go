package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/state"
)

func newMergeCommand(g *globalOptions) *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "merge --into DST SRC...",
		Short: "OR the bitmaps of other states into one (e.g. two sensors' states)",
		Long: `Set in DST every bit that is set in any SRC, so that DST answers "dup" for
every URL any of them has seen. The states must have the same signature and
normalization; others are refused before anything is changed. DST is
created with the sources' format if it does not exist.

Safe while DST is in use by other processes: bits only go from 0 to 1, and
each 64-bit word is OR-ed atomically. The sources are opened read-only.`,
		Example: `  urldedupd merge --into /var/lib/urldedupd /backup/sensor-a /backup/sensor-b`,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if into == "" {
				return usageError(errors.New("--into DST is required"))
			}
			if g.backend != "" {
				return usageError(errLocalOnly)
			}
			return runMerge(cmd.Context(), into, args, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "the state to merge into")
	return cmd
}

func runMerge(ctx context.Context, into string, srcs []string, out io.Writer) (err error) {
	var dirs []*state.State
	defer func() {
		for _, d := range dirs {
			err = errors.Join(err, d.Close())
		}
	}()
	for _, p := range append([]string{into}, srcs...) {
		if state.IsRemote(p) {
			return usageError(fmt.Errorf("%s: %w", p, errLocalOnly))
		}
	}
	for _, p := range srcs {
		if filepath.Clean(p) == filepath.Clean(into) {
			return usageError(fmt.Errorf("%s is both source and destination", p))
		}
		d, err := state.Open(ctx, p, &state.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
		if err := d.Meta().Compatible(dirs[0].Meta()); err != nil {
			return fmt.Errorf("merge: %s against %s: %w", p, srcs[0], err)
		}
	}
	spec := dirs[0].Meta().Spec
	dst, err := state.Open(ctx, into, &state.Options{Create: true, Spec: &spec, Local: shardfile.Options{Warn: warnState}})
	if err == nil {
		dirs = append(dirs, dst)
		err = dst.Meta().Compatible(dirs[0].Meta())
	}
	if errors.Is(err, format.ErrMismatch) {
		return fmt.Errorf("merge: %s (%s) into %s: %w", strings.Join(srcs, ", "), spec, into, err)
	}
	if err != nil {
		return err
	}
	set := bitcheck.New(dst.Dir())
	for i, d := range dirs[:len(dirs)-1] {
		added, err := set.Merge(bitcheck.New(d.Dir()))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d bits added\n", srcs[i], added)
	}
	return dst.Sync()
}
