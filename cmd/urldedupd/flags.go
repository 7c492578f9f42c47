package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

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

// fileMode is a flag of file permissions, shown and read in octal as chmod
// takes them: 0660 (also 660 or 0o660).
type fileMode os.FileMode

func (m *fileMode) String() string { return fmt.Sprintf("%04o", uint32(*m)) }
func (m *fileMode) Type() string   { return "mode" }

func (m *fileMode) Set(s string) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O"), 8, 32)
	if err != nil || v > 0o777 {
		return fmt.Errorf("%q: not permissions in octal (0000 to 0777, e.g. 0660)", s)
	}
	*m = fileMode(v)
	return nil
}
