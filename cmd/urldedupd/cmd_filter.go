package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/internal/linefilter"
	"github.com/urldedupd/urldedupd/internal/state"
)

type filterOptions struct {
	dups    bool
	mark    bool
	dryRun  bool
	verbose bool
	maxLine int
}

func (o *filterOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.dups, "dups", false, "print the lines whose URL was seen before, instead of the new ones")
	fs.BoolVar(&o.mark, "mark", false, `print every line, prefixed by "new<TAB>" or "dup<TAB>"`)
	fs.BoolVar(&o.dryRun, "dry-run", false, "test without recording anything (repeats within the input all count as new)")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "print a summary (lines, new, dup, skipped) to stderr at the end")
	fs.IntVar(&o.maxLine, "max-line", linefilter.DefaultMaxLine, fmt.Sprintf("longest accepted line in bytes (at most %d); longer lines are reported and skipped", linefilter.MaxLineLimit))
}

func newFilterCommand(g *globalOptions) *cobra.Command {
	o := &filterOptions{}
	cmd := &cobra.Command{
		Use:   "filter [FILE...]",
		Short: "Print only the lines whose URL has not been seen before (a shared, persistent awk '!seen[$0]++')",
		Long: `Read URL lines from the files, or standard input when none is given (or for
"-"), and print, in input order, only the lines whose URL is new, recording
them. Any number of filter processes may share one state: each URL is
reported new by exactly one of them.

Blank lines are skipped and counted; a line over --max-line bytes is reported
on stderr with its file and line number and skipped. A line that is not a
valid URL is still de-duplicated, on its raw bytes, and counted as invalid.
The state is created with the defaults if it does not exist.`,
		Example: `  urldedupd filter urls.txt > new-urls.txt
  crawler | urldedupd filter --mark
  urldedupd filter --dups -v day1.txt day2.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.dups && o.mark {
				return usageError(errors.New("--dups and --mark cannot be combined"))
			}
			if o.maxLine < 1 || o.maxLine > linefilter.MaxLineLimit {
				return usageError(fmt.Errorf("--max-line %d: want 1 to %d bytes", o.maxLine, linefilter.MaxLineLimit))
			}
			return runFilter(cmd.Context(), g, o, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runFilter(ctx context.Context, g *globalOptions, o *filterOptions, files []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	st, err := openState(ctx, g, state.Options{Create: !o.dryRun, ReadOnly: o.dryRun})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	f := &linefilter.Filter{
		State: st, Signer: st.Signer(), DryRun: o.dryRun, MaxLine: o.maxLine,
		Warn: func(name string, line uint64, msg string) {
			fmt.Fprintf(stderr, "urldedupd: %s:%d: %s\n", name, line, msg)
		},
	}
	switch {
	case o.dups:
		f.Output = linefilter.Dups
	case o.mark:
		f.Output = linefilter.Mark
	}
	w := bufio.NewWriterSize(stdout, 256<<10)
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if err = filterFile(ctx, f, w, name, stdin); err != nil {
			break
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if o.verbose {
		s := f.Stats
		fmt.Fprintf(stderr, "lines %d  new %d  dup %d  skipped %d (empty %d, too long %d)  invalid %d\n",
			s.Lines, s.New, s.Dup, s.Empty+s.TooLong, s.Empty, s.TooLong, s.Invalid)
	}
	warnAssumed(st, stderr)
	return err
}

func filterFile(ctx context.Context, f *linefilter.Filter, w io.Writer, name string, stdin io.Reader) error {
	r := stdin
	if name != "-" {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		defer file.Close()
		r = file
	}
	return f.Run(ctx, w, r, name)
}
