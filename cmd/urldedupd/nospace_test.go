package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Creating a state on a file system too small for it fails with a clear
// error and leaves nothing behind that it made. Needs root to mount a 100 MiB tmpfs.
func TestCreateNoSpace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := mountFS(t, "tmpfs", "-o", "size=100m")
	dir := filepath.Join(mnt, "parent", "state")
	_, stderr, code := run(t, strings.NewReader("http://a/\n"), "--dir", dir, "filter")
	if code != 1 || !strings.Contains(stderr, "no space left to create the state") || !strings.Contains(stderr, dir+"/") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// Nothing is left: not a shard, nor the directory the failed creation
	// made (the old code left it, empty), nor its parent, made with it.
	if ents, _ := os.ReadDir(mnt); len(ents) != 0 {
		t.Fatalf("left behind %s", ents[0].Name())
	}
}
