package main

import (
	"github.com/spf13/cobra"

	"github.com/urldedupd/urldedupd/internal/buildinfo"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the Go toolchain and the build settings",
		Long: `Print the version of this binary and how it was built: the Go toolchain,
the platform, the module, and each build setting Go recorded (version
control revision and time, whether the checkout was modified, CGO_ENABLED,
-ldflags, …). --version prints the first line only.

The version is the one make build gives the linker (git describe), else the
one Go stamped into the binary (v0.1.0 from go install …@v0.1.0, a
pseudo-version from a build in a git checkout), else the revision.`,
		Example: `  urldedupd version
  urldedupd --version`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return buildinfo.Write(cmd.OutOrStdout(), "urldedupd", version)
		},
	}
}
