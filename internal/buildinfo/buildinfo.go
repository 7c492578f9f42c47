// Package buildinfo says which build of urldedupd is running: the version
// the linker was given (make build sets it from git describe), else the
// one the Go toolchain stamped into the binary (go install, go build in a
// git checkout), and the toolchain and settings it was built with.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Dev is the version of a build that carries none: neither from the linker
// nor from version control.
const Dev = "dev"

// Version returns linked, the version set with -ldflags "-X main.version=…",
// unless it is empty or Dev; then the module version the toolchain stamped
// (v0.1.0 from go install …@v0.1.0, a pseudo-version such as
// v0.0.0-20261127085600-73fffdb1a2b3+dirty from a build in a checkout),
// else the version control revision, else Dev.
func Version(linked string) string {
	if linked != "" && linked != Dev {
		return linked
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Dev
	}
	return fromInfo(bi)
}

func fromInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Dev
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// Write writes what the version command prints: the version, the Go
// toolchain, the platform, and each build setting (version control
// revision and time, CGO_ENABLED, -ldflags, …) as "key value" lines.
func Write(w io.Writer, name, linked string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", name, Version(linked))
	fmt.Fprintf(&b, "go        %s\n", runtime.Version())
	fmt.Fprintf(&b, "platform  %s/%s\n", runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module    %s\n", bi.Main.Path)
		for _, s := range bi.Settings {
			fmt.Fprintf(&b, "build     %s=%s\n", s.Key, s.Value)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
