package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func newForgetCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "forget URL... | forget -",
		Short: "Forget URLs of a keyed state, so that each is new at its next sighting",
		Long: `Remove each URL from the state, touching no other URL, and print
"forgotten" (it was held) or "absent" (it was not), a tab and the URL. With
"-", the URLs are read from standard input, one a line.

Only the keyed layouts (keyed, keyed-window) can forget: they keep each URL
in a slot of its own. The others keep a URL in bits that other URLs share,
and clearing them would forget those URLs too: forget refuses them (exit
2) and changes nothing. A URL forgotten while another process decides it
may be answered by that process either way, as if the forget came just
before or just after.`,
		Example: `  urldedupd forget https://example.com/page-to-fetch-again
  grep /news/ urls-to-refresh.txt | urldedupd forget -`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForget(cmd.Context(), g, args, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

// forgetBatch is how many URLs forget sends together.
const forgetBatch = 1024

func runForget(ctx context.Context, g *globalOptions, args []string, in io.Reader, out io.Writer) error {
	st, err := openState(ctx, g, state.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Forget(ctx, nil, nil); err != nil { // refuse before reading anything
		return usageError(err)
	}
	w := bufio.NewWriter(out)
	f := &forgetter{st: st, signer: st.Signer(), out: w}
	if len(args) == 1 && args[0] == "-" {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if err := f.add(ctx, sc.Text()); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("forget: standard input: %w", err)
		}
	} else {
		for _, u := range args {
			if err := f.add(ctx, u); err != nil {
				return err
			}
		}
	}
	if err := f.flush(ctx); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return st.Sync()
}

// forgetter forgets URLs in batches and prints what each was.
type forgetter struct {
	st     *state.State
	signer *signature.Signer
	out    *bufio.Writer
	urls   []string
	sigs   []signature.Signature
}

func (f *forgetter) add(ctx context.Context, u string) error {
	sig, _ := f.signer.Sign([]byte(u))
	f.urls, f.sigs = append(f.urls, u), append(f.sigs, sig)
	if len(f.urls) < forgetBatch {
		return nil
	}
	return f.flush(ctx)
}

func (f *forgetter) flush(ctx context.Context) error {
	if len(f.urls) == 0 {
		return nil
	}
	was := make([]bool, len(f.sigs))
	if err := f.st.Forget(ctx, f.sigs, was); err != nil {
		return err
	}
	for i, u := range f.urls {
		verdict := "absent"
		if was[i] {
			verdict = "forgotten"
		}
		if _, err := fmt.Fprintf(f.out, "%s\t%s\n", verdict, u); err != nil {
			return err
		}
	}
	f.urls, f.sigs = f.urls[:0], f.sigs[:0]
	return nil
}
