package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A state whose every shard looks sparse, on a file system without
// fallocate (ramfs: EOPNOTSUPP, st_blocks 0 for a truncated file, as a
// fresh shard looks on ZFS with compression, where ZFS before 2.2 has no
// fallocate either): a command that records opens it, says so once on
// stderr, and records (issue 9 review: the old code refused every
// writable open, exit 3). Needs root to mount the ramfs.
func TestSparseStateWithoutFallocate(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a ramfs needs root")
	}
	mnt := mountFS(t, "ramfs")
	// The premise: this file system has no fallocate.
	probe := filepath.Join(mnt, "probe")
	if out, err := exec.Command("fallocate", "-l", "2M", probe).CombinedOutput(); err == nil || !strings.Contains(string(out), "not supported") {
		t.Fatalf("fallocate on ramfs: %v %s; want 'Operation not supported'", err, out)
	}
	os.Remove(probe)
	dir, in := sparseState(t, mnt)
	out, stderr, code := runFor(t, 30*time.Second, in, "--dir", dir, "filter")
	if code != 0 || out != in {
		t.Fatalf("filter: exit %d, %d bytes out of %d, %q", code, len(out), len(in), stderr)
	}
	if strings.Count(stderr, "urldedupd: warning:") != 1 || !strings.Contains(stderr, "sparse shards left unallocated") ||
		!strings.Contains(stderr, "256 of 256 shards (the first "+dir+"/00: 0 of 2097152 bytes allocated; fallocate: operation not supported)") {
		t.Fatalf("filter: stderr %q; want one warning naming 256 shards and the first", stderr)
	}
	out, stderr, code = runFor(t, 30*time.Second, in, "--dir", dir, "filter")
	if code != 0 || out != "" {
		t.Fatalf("second filter: exit %d, %d bytes out (want none: all seen), %q", code, len(out), stderr)
	}
	if out, stderr, code := run(t, nil, "--dir", dir, "check", "http://sparse.example/1"); code != 0 || strings.Contains(stderr, "warning") || !strings.HasPrefix(out, "dup") {
		t.Fatalf("check: exit %d %q %q", code, out, stderr)
	}
}

// mountFS mounts a new file system of type fs (and mount options opts) on
// a temporary directory, unmounted when the test ends.
func mountFS(t *testing.T, fs string, opts ...string) string {
	t.Helper()
	mnt := t.TempDir()
	args := append(append([]string{"-t", fs}, opts...), fs, mnt)
	if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt
}

// sparseState makes, under mnt, a state whose 256 shards are sparse
// (truncated to size, no block allocated), and returns it with 5,000 URL
// lines to filter into it.
func sparseState(t *testing.T, mnt string) (dir, input string) {
	t.Helper()
	real := filepath.Join(t.TempDir(), "real")
	if _, stderr, code := run(t, nil, "--dir", real, "init"); code != 0 {
		t.Fatal(stderr)
	}
	dir = filepath.Join(mnt, "state")
	os.Mkdir(dir, 0o755)
	meta, _ := os.ReadFile(filepath.Join(real, "urldedupd.meta"))
	os.WriteFile(filepath.Join(dir, "urldedupd.meta"), meta, 0o644)
	for i := range 256 {
		if out, err := exec.Command("truncate", "-s", "2M", filepath.Join(dir, fmt.Sprintf("%02x", i))).CombinedOutput(); err != nil {
			t.Fatalf("truncate: %v %s", err, out)
		}
	}
	var in strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&in, "http://sparse.example/%d\n", i)
	}
	return dir, in.String()
}
