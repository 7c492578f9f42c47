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

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/signature"
	"github.com/urldedupd/urldedupd/pkg/state"
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
		Short: "Show how full the bitmap is, how many URLs it holds, and the false-duplicate rate",
		Long: `Count the bits set in every shard (reading all 512 MiB) and print the total,
the fill ratio, the estimated number of distinct URLs (linear counting:
n = -m ln(1 - set/m), m = 2^32), and the chance that the next new URL is
wrongly reported as a duplicate, which is the fill ratio.

The grid shows the bits set in each shard: row "a", column "3" is shard a3.
Counts are compact (12k = 12,000; 3.4M = 3,400,000) out of 16.8M per shard.
The state is opened read-only.`,
		Example: `  urldedupd stats
  urldedupd stats --json | jq .fill_ratio`,
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
	fill, err := st.Fill(ctx)
	if err != nil {
		return err
	}
	m := st.Meta()
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(bitcheck.NewReport(st.String(), m, fill))
	}
	writeStats(out, st.String(), m, fill)
	return nil
}

func writeStats(out io.Writer, dir string, m format.Meta, fill bitcheck.Fill) {
	fmt.Fprintf(out, "state       %s\n", dir)
	fmt.Fprintf(out, "format      signature %s, normalize %s, created %s\n",
		m.Spec.Algorithm, m.Spec.Mode, m.Created.Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(out, "bits set    %s of %s (fill %s)\n", group(fill.Total()), group(uint64(bitcheck.Bits)), percent(fill.Ratio()))
	if e := fill.Estimate(); math.IsInf(e, 0) {
		fmt.Fprintf(out, "distinct    unknown: the bitmap is full\n")
	} else {
		fmt.Fprintf(out, "distinct    ~%s URLs (linear counting)\n", group(uint64(math.Round(e))))
	}
	fmt.Fprintf(out, "false dup   %s chance that the next new URL is reported as a duplicate\n", percent(fill.Ratio()))
	lo, hi := 0, 0
	for i, n := range fill.Shard {
		if n < fill.Shard[lo] {
			lo = i
		}
		if n > fill.Shard[hi] {
			hi = i
		}
	}
	fmt.Fprintf(out, "\nbits set per shard (of 16.8M each): min %s in %02x, max %s in %02x, mean %s\n\n",
		compact(fill.Shard[lo]), lo, compact(fill.Shard[hi]), hi, compact(fill.Total()/signature.Shards))
	var b strings.Builder
	b.WriteString(" ")
	for c := 0; c < 16; c++ {
		fmt.Fprintf(&b, " %4x", c)
	}
	b.WriteString("\n")
	for r := 0; r < 16; r++ {
		fmt.Fprintf(&b, "%x", r)
		for c := 0; c < 16; c++ {
			fmt.Fprintf(&b, " %4s", compact(fill.Shard[r*16+c]))
		}
		b.WriteString("\n")
	}
	io.WriteString(out, b.String())
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
