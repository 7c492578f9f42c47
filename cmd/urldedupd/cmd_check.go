package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func newCheckCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "check URL...",
		Short: "Tell whether each URL has been seen, without recording it",
		Long: `Print "new" or "dup", a tab and the URL, for each URL, without setting any
bit. The state is opened read-only, so check also works on a state the user
cannot write. A state that does not exist yet counts every URL as new.`,
		Example: `  urldedupd check https://example.com/ 'http://Example.com:80/a/../'`,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), g, args, cmd.OutOrStdout())
		},
	}
}

func runCheck(ctx context.Context, g *globalOptions, urls []string, out io.Writer) error {
	st, err := openState(ctx, g, state.Options{ReadOnly: true})
	if errors.Is(err, format.ErrNoState) {
		st = nil // nothing recorded yet: everything is new
	} else if err != nil {
		return err
	} else {
		defer st.Close()
	}
	sigs := make([]signature.Signature, 0, len(urls))
	if st != nil {
		signer := st.Signer()
		for _, u := range urls {
			sig, _ := signer.Sign([]byte(u))
			sigs = append(sigs, sig)
		}
	}
	seen := make([]bool, len(urls))
	if st != nil {
		if err := st.Decide(ctx, sigs, seen, true); err != nil {
			return err
		}
	}
	for i, u := range urls {
		verdict := "new"
		if seen[i] {
			verdict = "dup"
		}
		if _, err := fmt.Fprintf(out, "%s\t%s\n", verdict, u); err != nil {
			return err
		}
	}
	return nil
}
