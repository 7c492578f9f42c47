// Command urldedupd-lab is the lab beside the sensor: it measures the
// layouts side by side on a user's URLs (compare), with plots and the
// literature's filters. It lives apart from urldedupd so that the sensor
// does not load or initialise the plotting and literature packages at every
// start (docs/dependencies.md, "Start-up").
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/buildinfo"
)

// version is set at build time with -ldflags "-X main.version=…"; without
// it the version comes from the build information (buildinfo.Version).
var version = buildinfo.Dev

// Exit codes, as urldedupd's.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "urldedupd-lab: %v\n", err)
	}
	switch {
	case err == nil:
		os.Exit(exitOK)
	case errors.Is(err, errUsage):
		os.Exit(exitUsage)
	}
	os.Exit(exitError)
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "urldedupd-lab",
		Short:         "The lab beside urldedupd: compare the layouts on your URLs",
		Version:       buildinfo.Version(version),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError(fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath()))
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(newCompareCommand())
	return root
}

// usageError marks err as a usage mistake: exit code 2.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errUsage, err)
}

// usageArgs wraps a cobra argument check so that its errors are usage
// errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error { return usageError(check(cmd, args)) }
}
