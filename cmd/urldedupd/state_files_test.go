package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sh runs the binary under a shell that sets the umask first.
func withUmask(t *testing.T, umask string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", "umask " + umask + "; exec \"$0\" \"$@\"", binary}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// Every file and directory the commands create follows the umask: the
// state made by init or filter, a snapshot, replay's -o file. The old code
// made the metadata 0644 and a snapshot directory 0755 under umask 077.
func TestModesFollowUmask(t *testing.T) {
	t.Parallel()
	capfile := filepath.Join("..", "..", "internal", "capture", "testdata", "captures", "http.pcap")
	for _, tc := range []struct {
		umask     string
		file, dir os.FileMode
	}{{"077", 0o600, 0o700}, {"022", 0o644, 0o755}} {
		tmp := t.TempDir()
		state, snap, urls := filepath.Join(tmp, "state"), filepath.Join(tmp, "snap"), filepath.Join(tmp, "urls.txt")
		for _, args := range [][]string{
			{"--dir", state, "init"},
			{"--dir", state, "snapshot", snap},
			{"--dir", filepath.Join(tmp, "by-replay"), "replay", "-o", urls, capfile},
		} {
			if out, code := withUmask(t, tc.umask, args...); code != 0 {
				t.Fatalf("umask %s %v: exit %d %s", tc.umask, args, code, out)
			}
		}
		want := map[string]os.FileMode{state: tc.dir, snap: tc.dir, urls: tc.file, filepath.Join(tmp, "by-replay"): tc.dir}
		for _, d := range []string{state, snap, filepath.Join(tmp, "by-replay")} {
			for _, name := range []string{"urldedupd.meta", "00", "ff"} {
				want[filepath.Join(d, name)] = tc.file
			}
		}
		for p, mode := range want {
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != mode {
				t.Errorf("umask %s: %s is %v (%v), want %v", tc.umask, p, fi.Mode().Perm(), err, mode)
			}
		}
	}
}

// A snapshot killed with SIGKILL leaves its hidden temporary directory;
// the next snapshot into the same parent removes it. Retried a bounded
// number of times to catch the first one mid-way.
func TestSnapshotRemovesStaleTempDir(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	state := filepath.Join(tmp, "state")
	if _, stderr, code := run(t, nil, "--dir", state, "init"); code != 0 {
		t.Fatal(stderr)
	}
	backups := filepath.Join(tmp, "backups")
	os.Mkdir(backups, 0o755)
	var stale []string
	for try := 0; try < 10 && len(stale) == 0; try++ {
		dst := filepath.Join(backups, fmt.Sprintf("killed-%d", try))
		cmd := exec.Command(binary, "--dir", state, "snapshot", dst)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ { // until a few shards are written, at most ~10 s
			m, _ := filepath.Glob(filepath.Join(backups, ".killed-*.snapshot-*", "0[3-9]"))
			if len(m) > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		stale, _ = filepath.Glob(filepath.Join(backups, ".killed-*.snapshot-*"))
		os.RemoveAll(dst) // in case it finished first
	}
	if len(stale) == 0 {
		t.Fatal("no snapshot was killed mid-way in 10 tries")
	}
	// A directory that only looks like one, holding a file of someone
	// else's, is left alone.
	foreign := filepath.Join(backups, ".mine.snapshot-keep")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("keep me"), 0o644)
	if out, stderr, code := run(t, nil, "--dir", state, "snapshot", filepath.Join(backups, "next")); code != 0 {
		t.Fatalf("next snapshot: exit %d %s %s", code, out, stderr)
	}
	left, _ := filepath.Glob(filepath.Join(backups, ".*"))
	if len(left) != 1 || left[0] != foreign {
		t.Fatalf("left after the next snapshot: %v; want only %s", left, foreign)
	}
	if _, err := os.Stat(filepath.Join(backups, "next", "urldedupd.meta")); err != nil {
		t.Fatal(err)
	}
	t.Logf("removed %s", strings.Join(stale, ", "))
}

// A state of sparse shards on a tmpfs too small to hold them: a command
// that records refuses it at open, exit 3, naming the shard, rather than
// dying of SIGBUS when a page cannot be allocated (the old code). Read-only
// commands still work. Needs root to mount the tmpfs.
func TestSparseStateOnFullTmpfs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir, in := sparseState(t, mountFS(t, "tmpfs", "-o", "size=1m"))
	_, stderr, code := runFor(t, 30*time.Second, in, "--dir", dir, "filter")
	if code != 3 || !strings.Contains(stderr, "sparse shard file, and its blocks could not be allocated") || !strings.Contains(stderr, dir+"/") {
		t.Fatalf("filter: exit %d, %q", code, stderr)
	}
	if out, stderr, code := run(t, nil, "--dir", dir, "check", "http://sparse.example/1"); code != 0 || out != "new\thttp://sparse.example/1\n" {
		t.Fatalf("check: exit %d %q %q", code, out, stderr)
	}
}
