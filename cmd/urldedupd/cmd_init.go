package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/signature"
	"github.com/urldedupd/urldedupd/pkg/state"
)

type initOptions struct {
	normalize string
	signature string
}

func (o *initOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.normalize, "normalize", "safe", "URL normalization: safe (RFC 3986 6.2.2-6.2.3) or none (raw bytes)")
	fs.StringVar(&o.signature, "signature", "crc32", "signature: crc32 (IEEE, as zlib) or crc32c (Castagnoli)")
}

func newInitCommand(g *globalOptions) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the state directory (256 shard files of 2 MiB and the metadata)",
		Long: `Create the state: 256 shard files 00..ff of exactly 2 MiB each, written as
real zeros, and urldedupd.meta recording the signature and normalization.
Both are fixed for the life of the state. Other commands create a state with
the defaults on first use; init is for choosing other settings, or for
paying the creation cost (writing 512 MiB) up front.

If the state exists already with the same settings, init says so and
succeeds; with other settings it fails.`,
		Example: `  urldedupd init
  urldedupd --dir /var/lib/urldedupd init --normalize none --signature crc32c`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(cmd.Context(), g, o, cmd.OutOrStdout())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runInit(ctx context.Context, g *globalOptions, o *initOptions, out io.Writer) error {
	mode, err := signature.ParseMode(o.normalize)
	if err != nil {
		return usageError(err)
	}
	alg, err := signature.ParseAlgorithm(o.signature)
	if err != nil {
		return usageError(err)
	}
	f := format.Spec{Algorithm: alg, Mode: mode}
	st, err := openState(ctx, g, state.Options{Create: true, Spec: &f})
	if err != nil {
		return err
	}
	if g.backend != "" {
		fmt.Fprintf(out, "ready %s (signature %s, normalize %s)\n", st, alg, mode)
		return st.Close()
	}
	verb := "exists"
	if st.Created() {
		verb = "created"
	}
	fmt.Fprintf(out, "%s %s (signature %s, normalize %s)\n", verb, g.dir, alg, mode)
	return st.Close()
}
