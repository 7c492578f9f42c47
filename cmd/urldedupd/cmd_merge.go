package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/state"
)

func newMergeCommand(g *globalOptions) *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "merge --into DST SRC...",
		Short: "Combine other states into one (e.g. two sensors' states)",
		Long: `Add to DST every URL any SRC holds, so that DST answers "dup" for every URL
any of them has seen. The states must have the same layout, signature,
normalization, size and (keyed layout) key; others are refused before
anything is changed. DST is created with the sources' format (and key) if
it does not exist.

bitmap layout: every bit set in a SRC is set in DST, each 64-bit word
OR-ed atomically.

keyed layout: slots hold fingerprints, so OR would be wrong. Each
fingerprint of SRC is re-inserted into DST by the ordinary decision (one
compare-and-swap). When a fingerprint's other bucket is full in SRC, its
first bucket cannot be told, so it is inserted in both orders (one extra
slot). Into a DST that merge creates, the first SRC is copied byte for
byte. Past DST's capacity some fingerprints find no room: they are counted
"not stored", and those URLs may be answered new again. States that are to
be merged must share one key: make them with init --key-file F.

Safe while DST is in use by other processes (except a DST that merge
creates): slots and bits only go from empty to set. The sources are opened
read-only.`,
		Example: `  urldedupd merge --into /var/lib/urldedupd /backup/sensor-a /backup/sensor-b
  # keyed states to be merged later share one key:
  urldedupd --dir /srv/a init --layout keyed --key-file /etc/urldedupd/fleet.key`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
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
		d, err := state.Open(ctx, p, &state.Options{ReadOnly: true, Clock: testClock()})
		if err != nil {
			return err
		}
		dirs = append(dirs, d)
		if err := d.Meta().Compatible(dirs[0].Meta()); err != nil {
			return fmt.Errorf("merge: %s against %s: %w", p, srcs[0], err)
		}
	}
	spec := dirs[0].Meta().Spec
	dst, err := state.Open(ctx, into, &state.Options{Create: true, Spec: &spec, New: dirs[0].Template(),
		Local: shardfile.Options{Warn: warnState}})
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
	for i, src := range dirs[:len(dirs)-1] {
		m, err := dst.Merge(ctx, src, nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %s\n", srcs[i], describeMerged(spec.Layout, m))
	}
	return nil
}

// describeMerged says what a merge did, in the words of the layout's way
// of merging (layout.Merge).
func describeMerged(l format.Layout, m state.Merged) string {
	switch mergeOf(l) {
	case layout.MergeCopy:
		what := "leaves"
		if l.Windowed() {
			what = "shards"
		}
		return fmt.Sprintf("%d %s copied, %d empty", m.Copied, what, m.Empty)
	case layout.MergeOr:
		return fmt.Sprintf("%d bits added", m.Bits)
	}
	c := m.Fingerprints
	return fmt.Sprintf("%d shards copied, %d URLs merged, %d already present, %d not stored (destination full), %d stored in both bucket orders",
		m.Copied, c.Merged, c.Present, c.NotStored, c.Ambiguous)
}

// mergeOf is how layout l merges; OR for a layout this build does not
// have (Open has refused it before anything is merged).
func mergeOf(l format.Layout) layout.Merge {
	if ly, err := layout.Lookup(l); err == nil {
		return ly.Merge()
	}
	return layout.MergeOr
}
