package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/compare"
	"github.com/urldedupd/urldedupd/internal/format"
)

type compareOptions struct {
	urls, heldOut       string
	synthetic, heldOutN int
	layouts, memory     string
	plot                string
	json                bool
}

func (o *compareOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.urls, "urls", "", "insert the URLs of this file, one per line (- for stdin)")
	fs.IntVar(&o.synthetic, "synthetic", 0, "insert this many synthetic distinct URLs instead")
	fs.StringVar(&o.heldOut, "held-out", "", "then query the URLs of this file (those inserted are left out)")
	fs.IntVar(&o.heldOutN, "held-out-synthetic", 0, "then query this many synthetic URLs distinct from the inserted ones (default: as many as --synthetic, at least 100,000)")
	fs.StringVar(&o.layouts, "layouts", strings.Join(compare.Layouts, ","), "layouts to compare, comma-separated")
	fs.StringVar(&o.memory, "memory", "512MiB", "memory of each layout where its rules allow (bitmap is always 512MiB; keyed takes 256 shards of a power of two)")
	fs.StringVar(&o.plot, "plot", "", "also draw the false-duplicate rate against URLs inserted, measured and by formula, log-log, to this .svg or .png file")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
}

func newCompareCommand() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Measure the layouts side by side on your URLs: false duplicates, speed, memory",
		Long: `Run every chosen layout on the same URLs, in temporary states, and print for
each: bytes per URL, insert and query URLs per second, the false-duplicate
rate measured on held-out URLs (which were never inserted, so every "dup" is
false) with a 95% confidence interval, the layout's own formula for it,
whether it persists, and how it stays exactly-once across processes.

Layouts, in real temporary state directories: bitmap, keyed, bloom (k best
for the URLs), mdbf (S = 4, k = 4) and dsbf (first leaves, 4 or up to 16,
of at most 2 MiB, that together fit --memory; fmax four times a classic
filter's rate at the URLs given, so it splits only past them);
the layouts' own sizes are powers of two (bloom, mdbf: 1 MiB to 512 MiB).
In memory: bloom-patent (the patent's comparison exactly: k <= 10 positions
from the words of CRC32, MD5 and SHA1), hashtable (Zheng et al.'s bitmap
indexed by a string hash) and exact (a set of the URLs: the truth). --plot draws each layout's measured rate (points, on up to 100,000
held-out URLs at ~6 points a decade) and formula (dashed) against the URLs
inserted. Progress goes to stderr.`,
		Example: `  urldedupd-lab compare --synthetic 1000000
  urldedupd-lab compare --urls crawl.txt --held-out later.txt --layouts bitmap,keyed,bloom
  urldedupd-lab compare --synthetic 10000000 --held-out-synthetic 10000000 --json > cmp.json
  urldedupd-lab compare --synthetic 1000000 --memory 1MiB --plot rates.svg
  urldedupd-lab compare --synthetic 1000000 --memory 1MiB --layouts bloom,bloom-patent,mdbf,dsbf,hashtable`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCompare(o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runCompare(o *compareOptions, stdin io.Reader, out, stderr io.Writer) error {
	opts := compare.Options{Synthetic: o.synthetic, HeldOutSynthetic: o.heldOutN, Progress: stderr, Curve: o.plot != ""}
	if ext := strings.ToLower(filepath.Ext(o.plot)); o.plot != "" && ext != ".svg" && ext != ".png" {
		return usageError(fmt.Errorf("--plot %s: want a .svg or .png file", o.plot))
	}
	if (o.urls == "") == (o.synthetic == 0) {
		return usageError(errors.New("give one of --urls FILE or --synthetic N"))
	}
	if o.heldOut != "" && o.heldOutN != 0 {
		return usageError(errors.New("give at most one of --held-out FILE and --held-out-synthetic M"))
	}
	if o.synthetic < 0 || o.heldOutN < 0 {
		return usageError(errors.New("--synthetic and --held-out-synthetic take a count of at least 1"))
	}
	var err error
	if opts.Memory, err = format.ParseBytes(o.memory); err != nil {
		return usageError(fmt.Errorf("--memory: %w", err))
	}
	for _, l := range strings.Split(o.layouts, ",") {
		if l = strings.TrimSpace(l); l != "" {
			opts.Layouts = append(opts.Layouts, l)
		}
	}
	if o.urls != "" {
		f, err := openInput(o.urls, stdin)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.URLFile = f
	}
	if o.heldOut != "" {
		f, err := openInput(o.heldOut, stdin)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.HeldOutFile = f
	} else if opts.HeldOutSynthetic == 0 {
		opts.HeldOutSynthetic = max(o.synthetic, 100_000)
	}
	res, err := compare.Run(opts)
	if errors.Is(err, compare.ErrLayout) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	if o.plot != "" {
		if err := compare.Plot(res, o.plot); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return compare.WriteTable(out, res)
}

// openInput opens a file, or stdin for "-".
func openInput(path string, stdin io.Reader) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(path)
}
