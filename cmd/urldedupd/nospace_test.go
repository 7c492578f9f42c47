package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Creating a state on a file system too small for it fails with a clear
// error and leaves nothing behind that it made. Needs root to mount a 100 MiB tmpfs.
func TestCreateNoSpace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=100m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
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
