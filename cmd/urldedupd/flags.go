package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// usageError marks err as a usage mistake (exit code 2).
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

func flagError(_ *cobra.Command, err error) error { return usageError(err) }
