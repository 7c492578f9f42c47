package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

type statsOptions struct {
	json bool
}

func (o *statsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print the figures as one JSON object, with every shard's count")
}

func newStatsCommand(g *globalOptions) *cobra.Command {
	o := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show how full the state is, how many URLs it holds, and its false-duplicate and not-stored chances",
		Long: `Measure the state (reading all of it) and print how full it is, the URLs it
holds, and what that means for its answers, by its layout's own formula:

  bitmap  bits set of 2^32; distinct URLs by linear counting
          (n = -m ln(1 - set/m), m = 2^32); the chance that the next new URL
          is wrongly reported a duplicate is the fill ratio.
  keyed   slots occupied (one per URL stored, exact); the false-duplicate
          chance is 1 - (1 - 1/(2^32-1))^c, c the fingerprints a new URL's
          scan compares (mean bucket occupancy x (1 + full buckets)); the
          not-stored chance is (full buckets)^2: such a URL is answered new
          but not stored, so its repeats are answered new too.

"capacity" is the plan of init --capacity, or for keyed the URLs the state
holds before the not-stored chance reaches 1e-4; "used" is how far along it
the state is. The grid shows the bits set (bitmap) or slots occupied
(keyed) in each shard: row "a", column "3" is shard a3, in compact counts
(12k = 12,000; 3.4M = 3,400,000). The state is opened read-only.`,
		Example: `  urldedupd stats
  urldedupd stats --json | jq .false_duplicate_chance
  urldedupd --backend redis://127.0.0.1:6379/0 stats`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStats(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runStats(ctx context.Context, g *globalOptions, o *statsOptions, out io.Writer) error {
	st, err := openState(ctx, g, state.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	rep, err := st.Report(ctx)
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	writeStats(out, rep, st.Meta())
	return nil
}

func writeStats(out io.Writer, r state.Report, m format.Meta) {
	fmt.Fprintf(out, "state       %s\n", r.Dir)
	fmt.Fprintf(out, "format      layout %s, signature %s, normalize %s, %s, created %s\n",
		r.Layout, r.Signature, r.Normalize, sizeText(r.StateBytes), m.Created.Format("2006-01-02 15:04:05 MST"))
	unit, per := "bits set per shard", m.Sizes.ShardBytes*8
	switch m.Spec.Layout {
	case format.BitmapWindow:
		unit, per = "bits set per shard, in the window's bitmaps", int64(m.Window.Generations)*format.ShardBytes*8
	case format.KeyedWindow:
		unit, per = "URLs held per shard", (m.Sizes.ShardBytes-format.WindowHeaderBytes)/4
	}
	if r.SlotsUsed != nil {
		if m.Spec.Layout == format.Keyed {
			unit, per = "slots occupied per shard", m.Sizes.ShardBytes/4
		}
		fmt.Fprintf(out, "slots used  %s of %s (fill %s)\n", group(*r.SlotsUsed), group(r.Slots), percent(r.FillRatio))
		held := "stored"
		if r.Window != nil {
			held = "held in the window"
		}
		fmt.Fprintf(out, "distinct    %s URLs %s (one slot each)\n", group(*r.SlotsUsed), held)
	} else {
		fmt.Fprintf(out, "bits set    %s of %s (fill %s)\n", group(*r.BitsSet), group(r.Bits), percent(r.FillRatio))
		if r.EstimatedDistinct == nil {
			fmt.Fprintf(out, "distinct    unknown: every bit is set\n")
		} else {
			fmt.Fprintf(out, "distinct    ~%s URLs (%s)\n", group(uint64(math.Round(*r.EstimatedDistinct))), r.DistinctBy)
		}
	}
	if p := layout.Parameters(m); r.Filter != nil && p != "" {
		fmt.Fprintf(out, "filter      %s\n", p)
	}
	if r.OverBoundLeaves != nil {
		fmt.Fprintf(out, "tree        height %d, %d leaves (%d live, %s..%s URLs each), %d live leaves past their bound with no room to split\n",
			r.Height, r.Leaves, r.LiveLeaves, group(r.LeafURLsMin), group(r.LeafURLsMax), *r.OverBoundLeaves)
	}
	fmt.Fprintf(out, "false dup   %s chance that the next new URL is reported as a duplicate\n", chance(r.FalseDupChance))
	if w := r.Window; w != nil {
		writeWindow(out, w)
	}
	if r.NotStoredChance != nil {
		fmt.Fprintf(out, "not stored  %s chance that the next new URL finds both its buckets full (%s of buckets full): answered new, not stored\n",
			chance(*r.NotStoredChance), percent(*r.FullBuckets))
	}
	switch {
	case r.Planned:
		fmt.Fprintf(out, "capacity    %s URLs at a false-dup chance of at most %g (planned at init); used %s\n",
			group(r.Capacity), r.PlannedFalseDup, percent(*r.CapacityUsed))
	case r.Capacity != 0:
		used := ""
		if r.CapacityUsed != nil {
			used = "; used " + percent(*r.CapacityUsed)
		}
		fmt.Fprintf(out, "capacity    %s URLs %s%s\n", group(r.Capacity), r.CapacityMeans, used)
	default:
		fmt.Fprintf(out, "capacity    none planned: the false-dup chance grows with every URL (init --capacity plans one)\n")
	}
	lo, hi := 0, 0
	var total uint64
	for i, n := range r.Shards {
		total += n
		if n < r.Shards[lo] {
			lo = i
		}
		if n > r.Shards[hi] {
			hi = i
		}
	}
	fmt.Fprintf(out, "\n%s (of %s each): min %s in %02x, max %s in %02x, mean %s\n\n",
		unit, compact(uint64(per)), compact(r.Shards[lo]), lo, compact(r.Shards[hi]), hi, compact(total/signature.Shards))
	var b strings.Builder
	b.WriteString(" ")
	for c := 0; c < 16; c++ {
		fmt.Fprintf(&b, " %4x", c)
	}
	b.WriteString("\n")
	for row := 0; row < 16; row++ {
		fmt.Fprintf(&b, "%x", row)
		for c := 0; c < 16; c++ {
			fmt.Fprintf(&b, " %4s", compact(r.Shards[row*16+c]))
		}
		b.WriteString("\n")
	}
	io.WriteString(out, b.String())
}

// writeWindow prints a windowed state's window, generation by generation.
func writeWindow(out io.Writer, w *layout.WindowReport) {
	fmt.Fprintf(out, "window      %s in %d generations of %s, %s, from %s; now generation %d\n",
		w.Window, w.Generations, w.Length, w.Policy, w.Epoch, w.Generation)
	for i, a := range w.Ages {
		head := "            "
		if i == 0 {
			head = "generations "
		}
		held := ""
		switch {
		case a.URLs != nil:
			held = group(*a.URLs) + " URLs"
		case a.BitsSet != nil:
			held = group(*a.BitsSet) + " bits"
		}
		fmt.Fprintf(out, "%sage %d: generation %d, from %s, %s (fill %s)\n", head, a.Age, a.Generation, a.Started, held, percent(a.Fill))
	}
	if w.Expired != nil {
		fmt.Fprintf(out, "expired     %s slots of URLs that left the window or were forgotten, free for new ones\n", group(*w.Expired))
	}
}

// chance formats a probability: a percentage from 0.1%, else in
// scientific notation (2.8e-10), so small ones stay readable.
func chance(p float64) string {
	if p == 0 || p >= 1e-3 {
		return percent(p)
	}
	return fmt.Sprintf("%.2g", p)
}

// sizeText formats a state's size in MiB or GiB.
func sizeText(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// compact formats n in at most 4 characters: 999, 1.2k, 123k, 1.2M, 16M.
func compact(n uint64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 9950:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	case n < 999500:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n < 9950000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0fM", float64(n)/1e6)
}

// group formats n with thousands separators.
func group(n uint64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent formats a ratio as a percentage with three significant digits.
func percent(r float64) string {
	if r == 0 || r == 1 {
		return fmt.Sprintf("%g%%", r*100)
	}
	return fmt.Sprintf("%.3g%%", r*100)
}
